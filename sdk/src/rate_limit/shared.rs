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

mod file;
mod format;
mod slot;

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use self::file::{create_dir, open_regular, read_all, write_all_at_start};
use self::format::{Counts, Document, Entry, Now, Owner, STATE_FILE, parse, record, window};
use self::slot::{Slot, slot_held};
use super::window::Table;
use crate::limits::LimitScope;

pub(crate) use self::file::default_dir;

/// A shorter state is padded with spaces (which JSON allows) up to this many
/// bytes rather than the file cut: cutting a file costs a request more than
/// the rest of its bookkeeping on a journaling file system.
const MAX_PADDING: usize = 4096;
/// How long a process seen alive is taken to be, before its slot is looked at again.
const SEEN_ALIVE_FOR: Duration = Duration::from_secs(1);

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
                        let scope = LimitScope::from_wire(key)?;
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
                .map(|(scope, window)| (scope.as_str().to_owned(), record(window, self.now)))
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
    use std::fs;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::format::FORMAT;
    use super::*;
    use crate::rate_limit::tests::{Frozen, LONG, general, headers};
    use crate::rate_limit::window::Window;
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
