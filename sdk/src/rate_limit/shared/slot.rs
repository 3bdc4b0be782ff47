//! The slots: which processes of the host are alive. Each holds one file
//! locked for as long as it lives, and the OS drops the lock with its process.

use std::collections::HashMap;
use std::fs::{File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use super::file::open_regular;

/// At most this many processes share a pace; one more keeps its own.
pub(super) const SLOTS: u32 = 256;

/// This process's place among those sharing a directory: a file it holds
/// locked for as long as it lives. A process that reuses a dead one's slot has
/// another nonce, so the dead one's reservations are not taken for its own.
#[derive(Debug)]
pub(in crate::rate_limit) struct Slot {
    pub(super) index: u32,
    pub(super) nonce: u64,
    _held: File,
}

impl Slot {
    /// This process's slot in `dir`, claimed on first use and held until it exits.
    pub(super) fn of_process(dir: &Path) -> io::Result<Arc<Self>> {
        static SLOTS_HELD: LazyLock<Mutex<HashMap<PathBuf, Arc<Slot>>>> =
            LazyLock::new(Mutex::default);
        let mut held = SLOTS_HELD.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = held.get(dir) {
            return Ok(Arc::clone(slot));
        }
        let slot = Arc::new(Self::claim(dir)?);
        held.insert(dir.to_owned(), Arc::clone(&slot));
        Ok(slot)
    }

    /// The first slot of `dir` no live process holds.
    pub(in crate::rate_limit) fn claim(dir: &Path) -> io::Result<Self> {
        for index in 0..SLOTS {
            let file = open_regular(&slot_path(dir, index))?;
            match file.try_lock() {
                Ok(()) => {
                    return Ok(Self {
                        index,
                        nonce: rand::random(),
                        _held: file,
                    });
                }
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(err)) => return Err(err),
            }
        }
        Err(io::Error::other(format!("all {SLOTS} slots are held")))
    }
}

fn slot_path(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("pace-1.slot-{index}"))
}

/// Whether a process holds slot `index` of `dir`. When in doubt, yes: counting
/// a dead process's request a little longer costs a little pace; forgetting a
/// live one's may cost a 429.
pub(super) fn slot_held(dir: &Path, index: u32) -> bool {
    match File::open(slot_path(dir, index)) {
        Ok(file) => !matches!(file.try_lock(), Ok(())),
        Err(err) => err.kind() != io::ErrorKind::NotFound,
    }
}
