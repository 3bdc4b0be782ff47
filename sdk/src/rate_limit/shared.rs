//! The pace shared by the processes of one host.
//!
//! The service counts its general limit per IP address, and several keys
//! behind one address share it (Limits, rule 1): every process of the host
//! draws on one window. What the clients of a service know of it (each limit's
//! window, the requests in flight, the generations awaited) lives in one small
//! file, `pace-1.json`, in the user's runtime directory
//! (`$XDG_RUNTIME_DIR/mediagen`, else the cache directory's `mediagen`). A
//! client reads and writes it under an exclusive advisory lock, held only
//! while it counts a request or reads an answer; the OS drops the lock with
//! its process.
//!
//! What is under way is each process's own: the file keeps it per process,
//! under a slot, a file `pace-1.slot-N` the process holds locked for as long as
//! it lives. A slot whose lock can be taken has no process left, so what was
//! kept under it is dropped: a crashed process's reservations go within a
//! second of the next look.
//!
//! The file is read as this format or not at all: anything else (another
//! program's file, a torn write, a link) is replaced, and the client goes on
//! from what it knew itself.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{Table, Window};
use crate::limits::{LimitScope, RateLimit};

/// The format of the state file; another version of the SDK that writes
/// another format names its file after it, so the two never fight over one.
const FORMAT: &str = "mediagen-pace/1";
const STATE_FILE: &str = "pace-1.json";
/// At most this many processes share a pace; one more keeps its own.
const SLOTS: u32 = 256;
/// A state file this large was not written by a pace.
const MAX_BYTES: u64 = 1 << 20;
/// A shorter state is padded with spaces (which JSON allows) up to this many
/// bytes rather than the file cut: cutting a file costs a request more than
/// the rest of its bookkeeping on a journaling file system.
const MAX_PADDING: usize = 4096;
/// How long a process seen alive is taken to be, before its slot is looked at again.
const SEEN_ALIVE_FOR: Duration = Duration::from_secs(1);
/// The service's longest window is ten minutes: a reset further off than a
/// day is no answer of it.
const FARTHEST_RESET: Duration = Duration::from_secs(24 * 60 * 60);

/// Where the processes of this host keep their shared pace unless told
/// otherwise: `$XDG_RUNTIME_DIR/mediagen`, else the user's cache directory's
/// `mediagen`; `None` (said at debug level) when the environment names neither.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let dir = var_dir("XDG_RUNTIME_DIR")
        .or_else(cache_dir)
        .map(|dir| dir.join("mediagen"));
    if dir.is_none() {
        tracing::debug!(
            "the pace is this process's own: the environment names no runtime or cache directory"
        );
    }
    dir
}

fn var_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
}

fn cache_dir() -> Option<PathBuf> {
    if cfg!(windows) {
        var_dir("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var_dir("HOME").map(|home| home.join("Library/Caches"))
    } else {
        var_dir("XDG_CACHE_HOME").or_else(|| var_dir("HOME").map(|home| home.join(".cache")))
    }
}

/// What one process has under way against a service.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Counts {
    in_flight: HashMap<LimitScope, u32>,
    waiters: u32,
}

impl Counts {
    fn in_flight(&self, scope: LimitScope) -> u32 {
        self.in_flight.get(&scope).copied().unwrap_or(0)
    }

    fn add(&mut self, other: &Self) {
        for (scope, n) in &other.in_flight {
            let count = self.in_flight.entry(*scope).or_default();
            *count = count.saturating_add(*n);
        }
        self.waiters = self.waiters.saturating_add(other.waiters);
    }

    fn is_empty(&self) -> bool {
        self.waiters == 0 && self.in_flight.values().all(|n| *n == 0)
    }
}

/// This process's place among those sharing a directory: a file it holds
/// locked for as long as it lives. A process that reuses a dead one's slot has
/// another nonce, so the dead one's reservations are not taken for its own.
#[derive(Debug)]
pub(super) struct Slot {
    index: u32,
    nonce: u64,
    _held: File,
}

impl Slot {
    /// This process's slot in `dir`, claimed on first use and held until it exits.
    fn of_process(dir: &Path) -> io::Result<Arc<Self>> {
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
    pub(super) fn claim(dir: &Path) -> io::Result<Self> {
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
fn slot_held(dir: &Path, index: u32) -> bool {
    match File::open(slot_path(dir, index)) {
        Ok(file) => !matches!(file.try_lock(), Ok(())),
        Err(err) => err.kind() != io::ErrorKind::NotFound,
    }
}

/// Opens (or creates) the regular file at `path`, readable by its owner only.
/// Whatever else is there (a link, a pipe, a file this user may not read) is
/// removed first: it is never followed, read or trusted.
fn open_regular(path: &Path) -> io::Result<File> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => fs::remove_file(path)?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            fs::remove_file(path)?;
            options.open(path)
        }
        opened => opened,
    }
}

/// Reads the whole of `file` into `buffer`, up to [`MAX_BYTES`] and one more.
/// Two system calls when the file is no longer than what was read last time.
fn read_all(file: &File, buffer: &mut Vec<u8>) -> io::Result<()> {
    let mut len = 0;
    buffer.resize(buffer.capacity().max(4096), 0);
    loop {
        if len == buffer.len() {
            buffer.resize(len * 2, 0);
        }
        let read = read_at(file, &mut buffer[len..], len as u64)?;
        len += read;
        if read == 0 || len as u64 > MAX_BYTES {
            break;
        }
    }
    buffer.truncate(len);
    Ok(())
}

#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buffer, offset)
}

#[cfg(unix)]
fn write_all_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, 0)
}

#[cfg(not(unix))]
fn read_at(mut file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read(buffer)
}

#[cfg(not(unix))]
fn write_all_at_start(mut file: &File, bytes: &[u8]) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    file.seek(SeekFrom::Start(0))?;
    file.write_all(bytes)
}

/// The state file as written: one entry per service origin.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: String,
    origins: BTreeMap<String, Entry>,
}

impl Document {
    fn new() -> Self {
        Self {
            format: FORMAT.to_owned(),
            origins: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// By [`LimitScope::key`].
    windows: BTreeMap<String, WindowRecord>,
    owners: Vec<Owner>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WindowRecord {
    limit: u32,
    remaining: Option<u32>,
    /// Nanoseconds since the Unix epoch on the host's wall clock, the one
    /// clock its processes read alike.
    reset_at: Option<u64>,
    /// The latest `x-ratelimit-limit`, `-remaining` and `-reset`.
    last: Option<(u32, u32, u64)>,
}

/// What one process has under way, under its slot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Owner {
    slot: u32,
    nonce: u64,
    /// By [`LimitScope::key`].
    in_flight: BTreeMap<String, u32>,
    waiters: u32,
}

impl Owner {
    fn new(slot: &Slot, counts: &Counts) -> Self {
        Self {
            slot: slot.index,
            nonce: slot.nonce,
            in_flight: counts
                .in_flight
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(scope, n)| (scope.key().to_owned(), *n))
                .collect(),
            waiters: counts.waiters,
        }
    }

    fn counts(&self) -> Counts {
        Counts {
            in_flight: self
                .in_flight
                .iter()
                .filter_map(|(key, n)| Some((LimitScope::from_key(key)?, *n)))
                .collect(),
            waiters: self.waiters,
        }
    }
}

/// One moment on the client's clock and on the wall clock, to carry times
/// from one process to another.
#[derive(Debug, Clone, Copy)]
struct Now {
    instant: Instant,
    wall: u64,
}

impl Now {
    fn at(instant: Instant) -> Self {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, nanos);
        Self { instant, wall }
    }

    fn wall(self, at: Instant) -> u64 {
        if at >= self.instant {
            self.wall.saturating_add(nanos(at - self.instant))
        } else {
            self.wall.saturating_sub(nanos(self.instant - at))
        }
    }

    /// A time already past is now: all that matters of it is that it passed.
    fn instant(self, wall: u64) -> Instant {
        self.instant + Duration::from_nanos(wall.saturating_sub(self.wall))
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

fn record(window: &Window, now: Now) -> WindowRecord {
    WindowRecord {
        limit: window.limit,
        remaining: window.remaining,
        reset_at: window.reset_at.map(|at| now.wall(at)),
        last: window
            .last
            .map(|last| (last.limit, last.remaining, last.reset.as_secs())),
    }
}

fn window(scope: LimitScope, record: &WindowRecord, now: Now) -> Window {
    Window {
        limit: record.limit,
        remaining: record.remaining,
        reset_at: record.reset_at.map(|at| now.instant(at)),
        last: record.last.map(|(limit, remaining, reset)| RateLimit {
            limit,
            remaining,
            reset: Duration::from_secs(reset),
        }),
        ..Window::new(scope)
    }
}

/// The state file read as this format, or why it cannot be trusted.
fn parse(bytes: &[u8], now: Now) -> Result<Document, String> {
    if bytes.is_empty() {
        return Ok(Document::new());
    }
    let document: Document = serde_json::from_slice(bytes).map_err(|err| err.to_string())?;
    if document.format != FORMAT {
        return Err(format!("its format is {:?}", document.format));
    }
    let farthest = now.wall.saturating_add(nanos(FARTHEST_RESET));
    for entry in document.origins.values() {
        for (key, record) in &entry.windows {
            if LimitScope::from_key(key).is_none() {
                return Err(format!("it names a limit {key:?}"));
            }
            if record.reset_at.is_some_and(|at| at > farthest) {
                return Err(format!("the {key} window resets more than a day from now"));
            }
        }
        for owner in &entry.owners {
            if owner.slot >= SLOTS {
                return Err(format!("it names a slot {}", owner.slot));
            }
            if let Some(key) = owner
                .in_flight
                .keys()
                .find(|key| LimitScope::from_key(key).is_none())
            {
                return Err(format!("it names a limit {key:?}"));
            }
        }
    }
    Ok(document)
}

/// One service's pace in the host's state file.
#[derive(Debug)]
pub(super) struct Store {
    dir: PathBuf,
    path: PathBuf,
    origin: String,
    file: File,
    slot: Arc<Slot>,
    /// This process's own reservations: kept here, since the file may lose them.
    own: Counts,
    /// When the holder of each slot was last seen alive, by slot and nonce.
    seen: HashMap<(u32, u64), Instant>,
    /// The file as last read, kept for its allocation.
    buffer: Vec<u8>,
}

impl Store {
    /// The pace of `origin` shared through `dir`, with this process's slot there.
    pub(super) fn open(dir: &Path, origin: &str) -> io::Result<Self> {
        create_dir(dir)?;
        Self::open_as(dir, origin, Slot::of_process(dir)?)
    }

    /// [`open`](Self::open) under a given slot: a test's stand-in for another process.
    pub(super) fn open_as(dir: &Path, origin: &str, slot: Arc<Slot>) -> io::Result<Self> {
        let path = dir.join(STATE_FILE);
        let file = open_regular(&path)?;
        // A file system without locks shares nothing: better known now than at
        // the first request.
        file.lock()?;
        file.unlock()?;
        Ok(Self {
            dir: dir.to_owned(),
            path,
            origin: origin.to_owned(),
            file,
            slot,
            own: Counts::default(),
            seen: HashMap::new(),
            buffer: Vec::new(),
        })
    }

    /// Locks the state file and reads this service's pace into `table`: the
    /// windows it tells (or, when it cannot be trusted, those `table` knew), and
    /// what every live process has under way.
    pub(super) fn lock(&mut self, table: &mut Table, now: Instant) -> io::Result<Session<'_>> {
        self.file.lock()?;
        let mut session = Session {
            read: std::mem::take(&mut self.buffer),
            document: Document::new(),
            others: Vec::new(),
            others_counts: Counts::default(),
            now: Now::at(now),
            store: self,
        };
        session.load(table)?;
        Ok(session)
    }

    /// Whether the process of `owner` lives; looked at again once a second.
    fn alive(&mut self, owner: &Owner, now: Instant) -> bool {
        if owner.slot == self.slot.index {
            // This process, or a dead one that held the slot before it.
            return owner.nonce == self.slot.nonce;
        }
        if self.seen.len() > 64 {
            // Those that left since are not looked for again.
            self.seen
                .retain(|_, at| now.saturating_duration_since(*at) < SEEN_ALIVE_FOR);
        }
        let key = (owner.slot, owner.nonce);
        if self
            .seen
            .get(&key)
            .is_some_and(|at| now.saturating_duration_since(*at) < SEEN_ALIVE_FOR)
        {
            return true;
        }
        if slot_held(&self.dir, owner.slot) {
            self.seen.insert(key, now);
            true
        } else {
            self.seen.remove(&key);
            false
        }
    }

    /// Leaves `table` with this process's reservations only.
    pub(super) fn keep_own(self, table: &mut Table) {
        for (scope, window) in &mut table.windows {
            window.in_flight = self.own.in_flight(*scope);
        }
        table.waiters = self.own.waiters;
    }
}

/// The state directory, readable by its owner only.
fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// The state file, locked and read; [`commit`](Self::commit) writes it back.
/// Dropped, it unlocks the file.
#[derive(Debug)]
pub(super) struct Session<'a> {
    store: &'a mut Store,
    read: Vec<u8>,
    document: Document,
    /// The live processes' reservations but this one's.
    others: Vec<Owner>,
    others_counts: Counts,
    now: Now,
}

impl Session<'_> {
    fn load(&mut self, table: &mut Table) -> io::Result<()> {
        let file = &self.store.file;
        read_all(file, &mut self.read)?;
        let mut entry = match parse(&self.read, self.now) {
            Ok(mut document) => {
                let entry = document
                    .origins
                    .remove(&self.store.origin)
                    .unwrap_or_default();
                self.document = document;
                table.windows = entry
                    .windows
                    .iter()
                    .filter_map(|(key, record)| {
                        let scope = LimitScope::from_key(key)?;
                        Some((scope, window(scope, record, self.now)))
                    })
                    .collect();
                entry
            }
            Err(why) => {
                tracing::debug!(
                    path = %self.store.path.display(),
                    "the shared pace's state file cannot be trusted ({why}): it is replaced"
                );
                Entry::default()
            }
        };
        for owner in entry.owners.drain(..) {
            // This process's own are counted from `own`, not from the file.
            if owner.slot != self.store.slot.index && self.store.alive(&owner, self.now.instant) {
                self.others_counts.add(&owner.counts());
                self.others.push(owner);
            }
        }
        let mut everyone = self.store.own.clone();
        everyone.add(&self.others_counts);
        for (scope, window) in &mut table.windows {
            window.in_flight = everyone.in_flight(*scope);
        }
        for (scope, n) in &everyone.in_flight {
            table.window(*scope).in_flight = *n;
        }
        table.waiters = everyone.waiters;
        Ok(())
    }

    /// Writes `table` back: this process's reservations are what it counts
    /// beyond the others'.
    pub(super) fn commit(mut self, table: &Table) -> io::Result<()> {
        let own = &mut self.store.own;
        own.in_flight = table
            .windows
            .iter()
            .map(|(scope, window)| {
                let others = self.others_counts.in_flight(*scope);
                (*scope, window.in_flight.saturating_sub(others))
            })
            .collect();
        own.waiters = table.waiters.saturating_sub(self.others_counts.waiters);
        let mut owners = std::mem::take(&mut self.others);
        if !own.is_empty() {
            owners.push(Owner::new(&self.store.slot, own));
        }
        let entry = Entry {
            windows: table
                .windows
                .iter()
                .map(|(scope, window)| (scope.key().to_owned(), record(window, self.now)))
                .collect(),
            owners,
        };
        let mut document = std::mem::replace(&mut self.document, Document::new());
        document.origins.insert(self.store.origin.clone(), entry);
        self.prune(&mut document);
        let mut bytes = serde_json::to_vec(&document).map_err(io::Error::other)?;
        let shorter_by = self.read.len().saturating_sub(bytes.len());
        if shorter_by <= MAX_PADDING {
            bytes.resize(bytes.len() + shorter_by, b' ');
        }
        if bytes != self.read {
            let file = &self.store.file;
            write_all_at_start(file, &bytes)?;
            if bytes.len() < self.read.len() {
                file.set_len(bytes.len() as u64)?;
            }
        }
        Ok(())
    }

    /// Drops the services of which nothing is known any more: every window
    /// reset, and no live process with anything under way.
    fn prune(&mut self, document: &mut Document) {
        let wall = self.now.wall;
        let settled: Vec<String> = document
            .origins
            .iter()
            .filter(|(_, entry)| {
                entry
                    .windows
                    .values()
                    .all(|w| w.reset_at.is_none_or(|at| at <= wall))
            })
            .map(|(origin, _)| origin.clone())
            .collect();
        for origin in settled {
            let Some(entry) = document.origins.get_mut(&origin) else {
                continue;
            };
            let owners = std::mem::take(&mut entry.owners);
            entry.owners = owners
                .into_iter()
                .filter(|owner| self.store.alive(owner, self.now.instant))
                .collect();
            if entry.owners.is_empty() {
                document.origins.remove(&origin);
            }
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // Closing the file would unlock it too; the file stays open for the next request.
        let _ = self.store.file.unlock();
        self.store.buffer = std::mem::take(&mut self.read);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Arc;

    use super::*;
    use crate::rate_limit::tests::{Frozen, LONG, general, headers};
    use crate::rate_limit::{Pacer, Scopes};

    const ORIGIN: &str = "http://127.0.0.1:9";

    /// A client of another process of the host: a pacer with a slot of its own.
    fn process(dir: &Path) -> Arc<Pacer> {
        let slot = Arc::new(Slot::claim(dir).unwrap());
        let store = Store::open_as(dir, ORIGIN, slot).unwrap();
        Arc::new(Pacer::with_store(true, Some(store)))
    }

    /// The process dies: its files close and the OS drops their locks, while
    /// what it had under way stays written in the state file.
    fn kill(pacer: &Pacer) {
        drop(pacer.state.lock().unwrap().shared.take());
    }

    /// The general window as `pacer` reads it from the state file at `now`.
    fn general_window(pacer: &Pacer, now: Instant) -> Window {
        pacer.with(now, |table| table.window(LimitScope::General).clone())
    }

    fn state_file(dir: &Path) -> String {
        fs::read_to_string(dir.join(STATE_FILE)).unwrap()
    }

    #[tokio::test]
    async fn an_answer_read_in_one_process_holds_back_the_requests_of_another() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (process(dir.path()), process(dir.path()));
        let now = Instant::now();

        // A 429 carries the same headers: the window is used up for 30 s.
        let permit = a.acquire(general(), &Frozen(now), LONG).await;
        a.answered(permit, now, Some(&headers(60, 0, 30)));

        let wait = general_window(&b, now).wait(now);
        assert!(
            wait > Duration::from_millis(29_990) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(b.last_of(LimitScope::General).map(|l| l.remaining), Some(0));
    }

    #[tokio::test]
    async fn requests_in_flight_in_one_process_count_in_every_other() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (process(dir.path()), process(dir.path()));
        let now = Instant::now();

        let mut permits = Vec::new();
        for _ in 0..3 {
            permits.push(a.acquire(general(), &Frozen(now), LONG).await);
        }
        assert_eq!(general_window(&b, now).in_flight, 3);
        let first = permits.remove(0);
        a.answered(first, now, Some(&headers(60, 50, 30)));
        // 50 left as the service counted, less the 2 still in flight.
        let seen = general_window(&b, now);
        assert_eq!((seen.in_flight, seen.remaining), (2, Some(48)));

        drop(permits);
        assert_eq!(general_window(&b, now).in_flight, 0);
    }

    #[tokio::test]
    async fn before_any_answer_the_processes_together_send_at_most_the_documented_limit() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (process(dir.path()), process(dir.path()));
        let now = Instant::now();

        let mut permits = Vec::new();
        for _ in 0..60 {
            permits.push(a.acquire(general(), &Frozen(now), LONG).await);
        }

        assert!(!general_window(&b, now).wait(now).is_zero());
        drop(permits.pop());
        assert!(general_window(&b, now).wait(now).is_zero());
    }

    #[tokio::test]
    async fn polls_are_spread_over_the_generations_every_process_awaits() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (process(dir.path()), process(dir.path()));
        let now = Instant::now();
        let permit = a.acquire(general(), &Frozen(now), LONG).await;
        a.answered(permit, now, Some(&headers(60, 10, 50)));

        let awaited_by_a: Vec<_> = (0..3).map(|_| a.waiter()).collect();
        let awaited_by_b: Vec<_> = (0..2).map(|_| b.waiter()).collect();

        // 10 requests left for 50 seconds, 5 generations awaited on the host.
        let floor = b.poll_floor(now);
        assert!(
            floor > Duration::from_millis(24_990) && floor <= Duration::from_secs(25),
            "{floor:?}"
        );
        drop(awaited_by_a);
        assert!(b.poll_floor(now) <= Duration::from_secs(10));
        drop(awaited_by_b);
    }

    #[tokio::test]
    async fn a_dead_processs_reservations_are_dropped_at_the_next_look() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (process(dir.path()), process(dir.path()));
        let now = Instant::now();
        let mut permits = Vec::new();
        for _ in 0..5 {
            permits.push(a.acquire(general(), &Frozen(now), LONG).await);
        }
        let awaited = a.waiter();
        assert_eq!(general_window(&b, now).in_flight, 5);

        kill(&a);

        // The lock of its slot went with it: a second later, nothing of it counts.
        let later = now + SEEN_ALIVE_FOR;
        assert_eq!(general_window(&b, later).in_flight, 0);
        assert_eq!(b.with(later, |table| table.waiters), 0);
        assert!(!state_file(dir.path()).contains("owners\":[{"));
        drop((permits, awaited));
    }

    #[tokio::test]
    async fn a_slot_freed_by_a_dead_process_is_taken_by_the_next_without_its_reservations() {
        let dir = tempfile::tempdir().unwrap();
        let a = process(dir.path());
        let permit = a.acquire(general(), &Frozen(Instant::now()), LONG).await;
        kill(&a);

        let c = process(dir.path());
        let now = Instant::now();
        assert_eq!(general_window(&c, now).in_flight, 0);
        drop(permit);
    }

    #[tokio::test]
    async fn a_corrupt_or_foreign_state_file_is_replaced_and_never_trusted() {
        let now = Instant::now();
        let wall = Now::at(now).wall;
        let in_50_s = wall + 50_000_000_000;
        let used_up = |format: &str, extra: &str| {
            format!(
                r#"{{"format":"{format}","origins":{{"{ORIGIN}":{{"windows":{{"general":{{"limit":60,"remaining":0,"resetAt":{in_50_s},"last":null{extra}}}}},"owners":[]}}}}}}"#
            )
        };
        let untrusted = [
            b"\x00\xffnot json at all".to_vec(),
            br#"{"format":"mediagen-pace/1","origins":{"#.to_vec(),
            used_up("another-program/3", "").into_bytes(),
            used_up(FORMAT, r#","color":"red""#).into_bytes(),
            used_up(FORMAT, "")
                .replace(
                    &in_50_s.to_string(),
                    &(wall + 86_400_000_000_000 * 365).to_string(),
                )
                .into_bytes(),
        ];
        for content in untrusted {
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join(STATE_FILE), &content).unwrap();
            let pacer = process(dir.path());

            // Trusted, the file would hold the request back 50 s: Frozen never wakes it.
            let permit = pacer.acquire(general(), &Frozen(now), LONG).await;

            let written: serde_json::Value = serde_json::from_str(&state_file(dir.path())).unwrap();
            assert_eq!(
                written["format"],
                FORMAT,
                "{}",
                String::from_utf8_lossy(&content)
            );
            drop(permit);
        }
        // Trusted, the same window holds it back.
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(STATE_FILE), used_up(FORMAT, "")).unwrap();
        let wait = general_window(&process(dir.path()), now).wait(now);
        assert!(wait > Duration::from_secs(49), "{wait:?}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_state_file_that_is_a_link_is_replaced_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, "someone's file").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join(STATE_FILE)).unwrap();

        let pacer = process(dir.path());
        let permit = pacer
            .acquire(general(), &Frozen(Instant::now()), LONG)
            .await;

        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "someone's file");
        let meta = fs::symlink_metadata(dir.path().join(STATE_FILE)).unwrap();
        assert!(meta.is_file());
        assert!(state_file(dir.path()).contains(FORMAT));
        drop(permit);
    }

    #[test]
    fn where_the_directory_cannot_be_written_the_pace_is_the_processs_own_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        fs::write(&file, "").unwrap();
        let said = Said::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(said.clone())
            .finish();

        let pacer = tracing::subscriber::with_default(subscriber, || {
            Pacer::shared(&file.join("mediagen"), ORIGIN)
        });

        assert!(pacer.state.lock().unwrap().shared.is_none());
        let said = said.text();
        assert!(said.contains("DEBUG"), "{said}");
        assert!(said.contains("the pace is this process's own"), "{said}");
        // Still a pace: the process's own.
        let now = Instant::now();
        let permit = futures::executor::block_on(Arc::new(pacer).acquire(
            Scopes::of(None),
            &Frozen(now),
            LONG,
        ));
        drop(permit);
    }

    #[test]
    fn services_of_which_nothing_is_known_any_more_leave_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let wall = Now::at(Instant::now()).wall;
        let entry = |reset_at: u64, owners: &str| {
            format!(
                r#"{{"windows":{{"general":{{"limit":60,"remaining":3,"resetAt":{reset_at},"last":null}}}},"owners":[{owners}]}}"#
            )
        };
        let (past, future) = (wall - 1_000_000_000, wall + 30_000_000_000);
        let dead = r#"{"slot":200,"nonce":1,"inFlight":{"general":2},"waiters":0}"#;
        fs::write(
            dir.path().join(STATE_FILE),
            format!(
                r#"{{"format":"{FORMAT}","origins":{{"http://reset":{},"http://reset-dead-owner":{},"http://running":{}}}}}"#,
                entry(past, ""),
                entry(past, dead),
                entry(future, ""),
            ),
        )
        .unwrap();

        process(dir.path()).with(Instant::now(), |_| ());

        let written = state_file(dir.path());
        assert!(!written.contains("http://reset"), "{written}");
        assert!(written.contains("http://running"), "{written}");
    }

    #[test]
    fn a_time_carried_through_the_wall_clock_comes_back_the_same() {
        let now = Now::at(Instant::now());
        let at = now.instant + Duration::from_millis(1234);
        assert_eq!(now.instant(now.wall(at)), at);
        // A time past is now.
        let past = now.instant.checked_sub(Duration::from_secs(5)).unwrap();
        assert_eq!(now.instant(now.wall(past)), now.instant);
    }

    /// What a subscriber wrote.
    #[derive(Debug, Clone, Default)]
    struct Said(Arc<Mutex<Vec<u8>>>);

    impl Said {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    impl Write for Said {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Said {
        type Writer = Said;
        fn make_writer(&'a self) -> Said {
            self.clone()
        }
    }
}
