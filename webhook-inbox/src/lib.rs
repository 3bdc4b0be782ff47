#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "axum")]
mod axum;
mod error;
mod store;
mod writer;

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use http::HeaderMap;
pub use rusqlite;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use webhook_verify::{HEADER_WEBHOOK_ID, HEADER_WEBHOOK_TIMESTAMP, Webhook};

pub use crate::error::{AcceptError, InboxError};
use crate::store::Incoming;
use crate::writer::Queue;

/// How long a message stays known after its last delivery, unless
/// [`InboxConfig::retention`] says otherwise: 7 days. The service retries a
/// message up to 15 times, its delays growing from 5 seconds to 3 days; the
/// whole schedule spans about 5.6 days (6.1 with the 20 % jitter a sender
/// may add), so a retry can come that long after an attempt whose 2xx was
/// lost. Seven days cover it with a margin.
///
/// ```
/// assert_eq!(webhook_inbox::DEFAULT_RETENTION.as_secs(), 7 * 24 * 3600);
/// ```
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a committed delivery survives.
///
/// ```
/// use webhook_inbox::{Durability, InboxConfig};
///
/// let config = InboxConfig::default().durability(Durability::PowerLoss);
/// # drop(config);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// A stored delivery survives a crash or kill of the application (SQLite's
    /// WAL with `synchronous = NORMAL`: the commit is written to the operating
    /// system before the 2xx, not synced to the disk). A power loss or kernel
    /// crash may lose the last deliveries answered; the service's retries do
    /// not bring them back, since it was told they arrived. The default.
    #[default]
    ApplicationCrash,
    /// A stored delivery survives a power loss too (`synchronous = FULL`: each
    /// commit is synced to the disk before the 2xx). Slower by an fsync per
    /// group of deliveries.
    PowerLoss,
}

/// How an [`Inbox`] stores and hands out messages.
///
/// ```
/// use std::time::Duration;
/// use webhook_inbox::InboxConfig;
///
/// let config = InboxConfig::default()
///     .retention(Duration::from_secs(10 * 24 * 3600))
///     .max_bytes(256 << 20)
///     .lease(Duration::from_secs(120));
/// # drop(config);
/// ```
#[derive(Debug, Clone)]
pub struct InboxConfig {
    durability: Durability,
    retention: Duration,
    max_bytes: u64,
    lock_wait: Duration,
    lease: Duration,
    queue: usize,
}

impl Default for InboxConfig {
    fn default() -> Self {
        Self {
            durability: Durability::default(),
            retention: DEFAULT_RETENTION,
            max_bytes: 1 << 30,
            lock_wait: Duration::from_secs(2),
            lease: Duration::from_secs(60),
            queue: 16_384,
        }
    }
}

impl InboxConfig {
    /// What a stored delivery survives; [`Durability::ApplicationCrash`] unless set.
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// How long a processed message is kept after its last delivery, so that a
    /// retry of it is known as one; [`DEFAULT_RETENTION`] unless set. Shorter
    /// than the service's retry horizon, a late retry is handled twice.
    /// Messages not yet processed are never deleted.
    #[must_use]
    pub fn retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }

    /// The most the database file may grow to (1 GiB unless set). A full
    /// inbox answers 503 until processed messages pass their retention.
    #[must_use]
    pub fn max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// How long a delivery waits for another connection's write lock before it
    /// is answered 503 (2 seconds unless set): well under the service's 10
    /// seconds for an answer.
    #[must_use]
    pub fn lock_wait(mut self, lock_wait: Duration) -> Self {
        self.lock_wait = lock_wait;
        self
    }

    /// How long a claim holds its message (60 seconds unless set): a claim
    /// neither completed nor released by then may be taken by another worker.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Deliveries that may wait for the writer at once (16,384 unless set);
    /// beyond it a delivery is answered 503 at once.
    #[must_use]
    pub fn queue(mut self, queue: usize) -> Self {
        self.queue = queue.max(1);
        self
    }
}

/// What became of an accepted delivery. Both are answered 2xx.
///
/// ```
/// assert_ne!(webhook_inbox::Accepted::Stored, webhook_inbox::Accepted::Duplicate);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Accepted {
    /// A message new to the inbox, now stored; a worker will take it.
    Stored,
    /// A message already stored (a retry, or a duplicate sent at the same
    /// time): nothing new was stored.
    Duplicate,
}

/// A stored message, as a worker gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Message {
    /// `webhook-id`: the same on every retry of one message. Key any effect
    /// outside the inbox's database on it, to make a repeat harmless.
    pub webhook_id: String,
    /// The body's `type`, as sent: whatever the application knows of it.
    /// `None` for a body without a string `type` (it is still handed over).
    pub event_type: Option<String>,
    /// The body, byte for byte as it was verified.
    pub body: Vec<u8>,
    /// `webhook-timestamp`, Unix seconds.
    pub timestamp: i64,
    /// When the inbox first stored it.
    pub received_at: SystemTime,
    /// The how-manieth claim of the message this is, from 1: more than 1
    /// after a crash, a lost lease or a release.
    pub attempt: u32,
}

/// A message a worker has taken: [`complete`](Inbox::complete) it,
/// or [`release`](Inbox::release) it for a later try. Dropped without either,
/// it is taken again when its lease runs out, or when the inbox is next opened
/// by a process alone.
#[derive(Debug)]
#[non_exhaustive]
pub struct Claim {
    /// The message.
    pub message: Message,
    seq: i64,
    token: i64,
}

/// Counts of the messages in an inbox.
///
/// ```
/// # fn demo(inbox: &webhook_inbox::Inbox) -> Result<(), webhook_inbox::InboxError> {
/// let stats = inbox.stats()?;
/// println!("{} waiting, {} done", stats.waiting, stats.done);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Stored and not yet completed.
    pub waiting: u64,
    /// Completed, kept for their retention.
    pub done: u64,
}

/// Wakes workers waiting for a message when one is stored or released.
#[derive(Debug, Default)]
pub(crate) struct Wake {
    count: Mutex<u64>,
    changed: Condvar,
}

impl Wake {
    fn count(&self) -> MutexGuard<'_, u64> {
        self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn stored(&self) {
        *self.count() += 1;
        self.changed.notify_all();
    }

    fn wait(&self, seen: u64, at_most: Duration) {
        let count = self.count();
        let _ = self
            .changed
            .wait_timeout_while(count, at_most, |count| *count == seen);
    }
}

/// A claim whose lease ran out is seen by a waiting worker within this time.
const LEASE_POLL: Duration = Duration::from_secs(1);
/// A worker's statements wait this long for the writer's lock: workers are
/// not answering the service, so they wait rather than fail.
const WORKER_LOCK_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    queue: Queue,
    worker: Mutex<Connection>,
    wake: Arc<Wake>,
    lease: Duration,
    retention: Duration,
    /// Held shared while the inbox is open, so that a process that opens it
    /// alone knows every claim in it was left by a process that is gone.
    _lock: File,
}

/// A durable inbox of webhook messages in an SQLite file: deliveries are
/// verified, stored once under their `webhook-id`, then answered; workers
/// claim, process and complete them. Cheap to clone; clones share the
/// database, its writer and its workers' connection.
///
/// ```no_run
/// use webhook_inbox::Inbox;
///
/// let inbox = Inbox::open("webhooks.db")?;
/// while let Some(claim) = inbox.wait_claim(std::time::Duration::from_secs(30))? {
///     println!("{:?}", claim.message.event_type);
///     inbox.complete(&claim)?;
/// }
/// # Ok::<(), webhook_inbox::InboxError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Inbox {
    shared: Arc<Shared>,
}

impl Inbox {
    /// Opens the inbox at `path` (made if missing) with the default
    /// [`InboxConfig`].
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let inbox = webhook_inbox::Inbox::open(dir.path().join("inbox.db"))?;
    /// assert_eq!(inbox.stats()?.waiting, 0);
    /// # Ok::<(), webhook_inbox::InboxError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, InboxError> {
        Self::open_with(path, InboxConfig::default())
    }

    /// Opens the inbox at `path` with `config`. A process that opens it while
    /// no other has it open frees the claims left in it (their workers are
    /// gone), so that they are taken again at once; the lock that tells is a
    /// file beside it, `<path>-lock`.
    ///
    /// ```
    /// use webhook_inbox::{Inbox, InboxConfig};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let config = InboxConfig::default().max_bytes(64 << 20);
    /// let inbox = Inbox::open_with(dir.path().join("inbox.db"), config)?;
    /// # drop(inbox);
    /// # Ok::<(), webhook_inbox::InboxError>(())
    /// ```
    pub fn open_with(path: impl AsRef<Path>, config: InboxConfig) -> Result<Self, InboxError> {
        let path = path.as_ref().to_owned();
        let mut lock_path = path.clone().into_os_string();
        lock_path.push("-lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path)
            .map_err(lock_failed)?;
        let worker = store::connect(&path, &config, WORKER_LOCK_WAIT)?;
        match lock.try_lock() {
            Ok(()) => {
                match store::release_all(&worker).map_err(InboxError::from) {
                    // A read-only inbox still opens: each delivery is then
                    // answered 503, and the service keeps it until the file
                    // can be written again.
                    Ok(_) | Err(InboxError::ReadOnly) => {}
                    Err(err) => return Err(err),
                }
                lock.unlock().map_err(lock_failed)?;
            }
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(err)) => return Err(lock_failed(err)),
        }
        lock.lock_shared().map_err(lock_failed)?;

        let db = store::connect(&path, &config, config.lock_wait)?;
        let wake = Arc::new(Wake::default());
        let (sender, jobs) = sync_channel(config.queue);
        let writer_wake = Arc::clone(&wake);
        let retention = config.retention;
        std::thread::Builder::new()
            .name("webhook-inbox-writer".into())
            .spawn(move || writer::run(db, jobs, &writer_wake, retention))
            .map_err(lock_failed)?;
        Ok(Self {
            shared: Arc::new(Shared {
                path,
                queue: Queue(sender),
                worker: Mutex::new(worker),
                wake,
                lease: config.lease,
                retention,
                _lock: lock,
            }),
        })
    }

    /// The database file.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox) {
    /// println!("inbox at {}", inbox.path().display());
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Verifies a delivery (the raw body, byte for byte, and its headers),
    /// then stores it under its `webhook-id`, waiting for the commit. Answer
    /// 2xx for any `Ok`, and [`AcceptError::status`] otherwise.
    ///
    /// Blocks the thread: from async code call [`accept_async`](Self::accept_async).
    ///
    /// ```
    /// use webhook_inbox::{AcceptError, Inbox};
    /// use webhook_verify::Webhook;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let inbox = Inbox::open(dir.path().join("inbox.db"))?;
    /// let webhook = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    /// let refused = inbox.accept(&webhook, &http::HeaderMap::new(), b"{}").unwrap_err();
    /// assert_eq!(refused.status(), 400);
    /// assert_eq!(inbox.stats()?.waiting, 0);
    /// # Ok::<(), webhook_inbox::InboxError>(())
    /// ```
    pub fn accept(
        &self,
        webhook: &Webhook,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Accepted, AcceptError> {
        let answered = self
            .shared
            .queue
            .submit(verified(webhook, headers, body)?)?;
        Ok(answered.blocking_recv().map_err(|_| InboxError::Closed)??)
    }

    /// [`accept`](Self::accept) for async code: the commit is awaited, not
    /// blocked on.
    ///
    /// ```
    /// # async fn demo(inbox: webhook_inbox::Inbox, webhook: webhook_verify::Webhook,
    /// #     headers: http::HeaderMap, body: &[u8]) -> u16 {
    /// match inbox.accept_async(&webhook, &headers, body).await {
    ///     Ok(_) => 204,
    ///     Err(err) => err.status(),
    /// }
    /// # }
    /// ```
    pub async fn accept_async(
        &self,
        webhook: &Webhook,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Accepted, AcceptError> {
        let incoming = verified(webhook, headers, body)?;
        Ok(self.store_verified(incoming).await?)
    }

    /// Stores a delivery the caller has verified itself (with another
    /// verifier than `webhook-verify`'s `Webhook`, say), under `webhook_id`.
    ///
    /// ```
    /// # async fn demo(inbox: webhook_inbox::Inbox) -> Result<(), webhook_inbox::InboxError> {
    /// // After verifying the signature of `msg_1`, sent at 1700000000:
    /// inbox.accept_verified("msg_1", 1_700_000_000, br#"{"type":"x"}"#).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn accept_verified(
        &self,
        webhook_id: &str,
        timestamp: i64,
        body: &[u8],
    ) -> Result<Accepted, InboxError> {
        self.store_verified(Incoming {
            webhook_id: webhook_id.to_owned(),
            event_type: event_type(body),
            body: body.to_vec(),
            timestamp,
        })
        .await
    }

    async fn store_verified(&self, incoming: Incoming) -> Result<Accepted, InboxError> {
        let answered = self.shared.queue.submit(incoming)?;
        answered.await.map_err(|_| InboxError::Closed)?
    }

    fn worker(&self) -> MutexGuard<'_, Connection> {
        self.shared
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the oldest message that is neither done nor claimed, for the
    /// configured [lease](InboxConfig::lease); `None` when there is none.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox) -> Result<(), webhook_inbox::InboxError> {
    /// if let Some(claim) = inbox.claim()? {
    ///     inbox.complete(&claim)?;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> Result<Option<Claim>, InboxError> {
        let claimed = store::claim(&self.worker(), store::now_ms(), self.shared.lease)?;
        Ok(claimed.map(|(seq, token, message)| Claim {
            message,
            seq,
            token,
        }))
    }

    /// [`claim`](Self::claim), waiting up to `max_wait` for a message to be
    /// stored, released, or freed by the end of a lease. Blocks the thread:
    /// run workers on threads of their own (or `spawn_blocking`).
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox) -> Result<(), webhook_inbox::InboxError> {
    /// while let Some(claim) = inbox.wait_claim(std::time::Duration::from_secs(60))? {
    ///     inbox.complete(&claim)?;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn wait_claim(&self, max_wait: Duration) -> Result<Option<Claim>, InboxError> {
        let deadline = Instant::now() + max_wait;
        loop {
            let seen = *self.shared.wake.count();
            if let Some(claim) = self.claim()? {
                return Ok(Some(claim));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.shared
                .wake
                .wait(seen, (deadline - now).min(LEASE_POLL));
        }
    }

    /// Marks a claimed message done. Fails with [`InboxError::ClaimLost`]
    /// when its lease ran out and another worker took it.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox, claim: webhook_inbox::Claim) -> Result<(), webhook_inbox::InboxError> {
    /// inbox.complete(&claim)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn complete(&self, claim: &Claim) -> Result<(), InboxError> {
        self.complete_with(claim, |_| Ok::<_, InboxError>(()))
    }

    /// Runs `work` in the transaction that marks a claimed message done, and
    /// commits both or neither: what `work` writes to this database happens
    /// exactly once per message. An `Err` from `work`, or a lost claim
    /// ([`InboxError::ClaimLost`]), rolls everything back and leaves the
    /// message claimed until its lease ends (or [`release`](Self::release) it).
    ///
    /// Effects outside the database (an e-mail, a call to another service)
    /// happen at least once: a crash after them and before the commit repeats
    /// them. Key them on [`Message::webhook_id`].
    ///
    /// ```
    /// use webhook_inbox::{Inbox, InboxError};
    ///
    /// fn record(inbox: &Inbox) -> Result<(), InboxError> {
    ///     let Some(claim) = inbox.claim()? else { return Ok(()) };
    ///     inbox.complete_with(&claim, |tx| {
    ///         tx.execute(
    ///             "INSERT INTO seen (webhook_id) VALUES (?1)",
    ///             [&claim.message.webhook_id],
    ///         )?;
    ///         Ok::<_, InboxError>(())
    ///     })
    /// }
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let inbox = Inbox::open(dir.path().join("inbox.db"))?;
    /// # inbox.with_connection(|db| db.execute_batch("CREATE TABLE seen (webhook_id TEXT)"))?;
    /// # record(&inbox)?;
    /// # Ok::<(), InboxError>(())
    /// ```
    pub fn complete_with<T, E>(
        &self,
        claim: &Claim,
        work: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<InboxError>,
    {
        let mut db = self.worker();
        let tx = db
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(InboxError::from)?;
        if !store::complete(&tx, claim.seq, claim.token, store::now_ms())
            .map_err(InboxError::from)?
        {
            return Err(InboxError::ClaimLost.into());
        }
        let done = work(&tx)?;
        tx.commit().map_err(InboxError::from)?;
        Ok(done)
    }

    /// Gives a claimed message back, to be claimed again `after` from now
    /// (`Duration::ZERO`: at once). Fails with [`InboxError::ClaimLost`] when
    /// another worker has it already.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox, claim: webhook_inbox::Claim) -> Result<(), webhook_inbox::InboxError> {
    /// // The database the work needs is down: try again in a minute.
    /// inbox.release(&claim, std::time::Duration::from_secs(60))?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn release(&self, claim: &Claim, after: Duration) -> Result<(), InboxError> {
        let at = store::now_ms().saturating_add(store::millis(after));
        if !store::release(&self.worker(), claim.seq, claim.token, at)? {
            return Err(InboxError::ClaimLost);
        }
        self.shared.wake.stored();
        Ok(())
    }

    /// Deletes the processed messages last delivered longer ago than the
    /// [retention](InboxConfig::retention); returns how many. The writer does
    /// this by itself every minute while deliveries come; call it to do it now.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox) -> Result<(), webhook_inbox::InboxError> {
    /// let deleted = inbox.prune()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn prune(&self) -> Result<usize, InboxError> {
        let before = store::now_ms().saturating_sub(store::millis(self.shared.retention));
        Ok(store::prune(&self.worker(), before, i64::MAX)?)
    }

    /// How many messages wait and how many are done.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox) -> Result<(), webhook_inbox::InboxError> {
    /// assert_eq!(inbox.stats()?.waiting, 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stats(&self) -> Result<Stats, InboxError> {
        let (waiting, done) = store::counts(&self.worker())?;
        Ok(Stats { waiting, done })
    }

    /// Runs `f` on the workers' connection to the database: to make the
    /// application's own tables beside the inbox's, or read them.
    ///
    /// ```
    /// # fn demo(inbox: &webhook_inbox::Inbox) -> Result<(), webhook_inbox::rusqlite::Error> {
    /// inbox.with_connection(|db| {
    ///     db.execute_batch("CREATE TABLE IF NOT EXISTS orders (webhook_id TEXT PRIMARY KEY)")
    /// })?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_connection<T>(&self, f: impl FnOnce(&mut Connection) -> T) -> T {
        f(&mut self.worker())
    }
}

fn lock_failed(err: std::io::Error) -> InboxError {
    InboxError::LockFile(Arc::new(err))
}

/// A delivery that verified, ready to store.
fn verified(webhook: &Webhook, headers: &HeaderMap, body: &[u8]) -> Result<Incoming, AcceptError> {
    webhook.verify(body, headers)?;
    // Both are present and readable: verification read them.
    let header = |name| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    };
    Ok(Incoming {
        webhook_id: header(HEADER_WEBHOOK_ID).to_owned(),
        event_type: event_type(body),
        body: body.to_vec(),
        timestamp: header(HEADER_WEBHOOK_TIMESTAMP).trim().parse().unwrap_or(0),
    })
}

/// The body's `type`, if it is a JSON object with a string `type`. A body
/// that has none is still stored: it verified, so the service sent it, and a
/// refusal would only bring it back for days.
fn event_type(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "type")]
        event_type: Option<String>,
    }
    serde_json::from_slice::<Head>(body)
        .ok()
        .and_then(|head| head.event_type)
}
