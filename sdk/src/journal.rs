//! A batch's journal: what it is about to pay for, written down before it
//! pays (see [`Journal`]).

use chrono::{DateTime, Utc};
use uuid::Uuid;

#[cfg(feature = "journal")]
use crate::error::Error;
use crate::error::Result;
use crate::generation_request::GenerationRequest;
use crate::model::generation::Generation;

/// What a journal recorded of one item of a batch.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JournalEntry {
    /// The item: a name that stays the same for the same request across runs
    /// (see [`item_names`]).
    pub item: String,
    /// The `Idempotency-Key` its create was sent with.
    pub idempotency_key: String,
    /// When the create was written down, on the wall clock.
    pub planned_at: DateTime<Utc>,
    /// The generation, once the create was answered.
    pub id: Option<Uuid>,
    /// The cost reserved for it.
    pub cost_rub: Option<f64>,
    /// The generation as last read, once it ended.
    pub ended: Option<Generation>,
}

impl JournalEntry {
    /// A create of `item` written down at `planned_at`, not answered yet: for
    /// a [`Journal`] of one's own to give back what it read.
    pub fn new(
        item: impl Into<String>,
        idempotency_key: impl Into<String>,
        planned_at: DateTime<Utc>,
    ) -> Self {
        Self {
            item: item.into(),
            idempotency_key: idempotency_key.into(),
            planned_at,
            id: None,
            cost_rub: None,
            ended: None,
        }
    }
}

/// A batch's journal: what it is about to pay for, written down before it
/// pays, so that a batch started again after a crash, a `kill -9` or a reboot
/// sends nothing twice, skips what ended, and follows what still runs.
///
/// Before each create, the request's item and its `Idempotency-Key` are
/// written and made durable; after it, the generation's id; when it ends, the
/// generation as last read. A batch started again with the same journal:
///
/// - an item that ended is not sent: its recorded generation is its outcome,
///   unless it failed for a reason a new generation may escape (a temporary
///   provider failure, see [`FailureCode::is_retryable`](crate::FailureCode::is_retryable)):
///   such an item is created anew, with a new key, and its entry starts again;
/// - an item with an id is followed to its end, not created;
/// - an item written down without an id (the crash came between the two) is
///   created again with the same key, which returns the first generation
///   instead of a second one (rule 7 of `POST /v1/generations`), as long as
///   the key is younger than the 24 hours the service keeps it; an older one
///   is not sent ([`Error::StaleCreate`](crate::Error::StaleCreate)): it may have been paid for.
///
/// The embedded journal, `SqliteJournal` (feature `journal`), is an SQLite
/// file: each step is one transaction, and the one before a create is synced
/// to disk before the create is sent, so a crash at any moment leaves a journal
/// that says either "about to create with key K" or "created as id I", never
/// half of it; and the same
/// file answers the questions `mediagen batch status` asks of it. An
/// append-only file synced per line would survive as well, but would leave
/// every reader to fold its history and to cope with a torn last line.
///
/// [`planned`](Journal::planned) returns once what it wrote survives a power
/// loss; [`created`](Journal::created) and [`ended`](Journal::ended) may return
/// once it survives the process (a `kill -9`), since losing them costs a
/// question, not a payment: the create is sent again with its key, which
/// returns the generation, or the generation is read again. An error stops
/// the item concerned, with [`Error::Journal`](crate::Error::Journal): a create that could not be
/// written down first is not sent.
pub trait Journal: Send {
    /// Every item written down so far.
    fn entries(&mut self) -> Result<Vec<JournalEntry>>;
    /// A create of `item` is about to be sent with `idempotency_key`. An item
    /// written down before keeps its key, unless its generation ended: then the
    /// create is a new one, and the entry starts again with the new key.
    fn planned(&mut self, item: &str, idempotency_key: &str, at: DateTime<Utc>) -> Result<()>;
    /// The create of `item` was answered: generation `id`, `cost_rub` reserved.
    fn created(&mut self, item: &str, id: Uuid, cost_rub: f64) -> Result<()>;
    /// The generation of `item` ended, as `generation` says.
    fn ended(&mut self, item: &str, generation: &Generation) -> Result<()>;
}

/// The item names of `requests`, in their order: each request's label (see
/// [`GenerationRequest::label`]), or else a digest of its model, prompt and
/// params; then `#n` for the n-th request with that name, so that two equal
/// requests are two items, and a request changed in any way is a new item.
///
/// ```
/// use mediagen::GenerationRequest;
///
/// let names = mediagen::item_names(&[
///     GenerationRequest::new("flux-schnell", "a fox"),
///     GenerationRequest::new("flux-schnell", "a fox"),
///     GenerationRequest::new("flux-schnell", "a fox").label("cover"),
/// ]);
/// assert!(names[0].ends_with("#1") && names[1].ends_with("#2"));
/// assert_eq!(names[0].trim_end_matches("#1"), names[1].trim_end_matches("#2"));
/// assert_eq!(names[2], "cover#1");
/// ```
pub fn item_names(requests: &[GenerationRequest]) -> Vec<String> {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    requests
        .iter()
        .map(|request| {
            let name = request.label_or_digest();
            let count = seen.entry(name.clone()).or_default();
            *count += 1;
            format!("{name}#{count}")
        })
        .collect()
}

/// The service keeps an `Idempotency-Key` for 24 hours.
pub(crate) const KEY_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// A journal's error as the crate's.
#[cfg(feature = "journal")]
fn failed(err: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Journal(Box::new(err))
}

#[cfg(feature = "journal")]
pub use sqlite::SqliteJournal;

#[cfg(feature = "journal")]
mod sqlite {
    use std::path::Path;

    use chrono::{DateTime, Utc};
    use rusqlite::{Connection, OptionalExtension, params};
    use uuid::Uuid;

    use super::{Journal, JournalEntry, failed};
    use crate::error::Result;
    use crate::model::generation::Generation;

    /// A journal in an SQLite file (feature `journal`): one row per item, each
    /// step a transaction; a create's record is synced to disk before it
    /// returns, and an id's or an end's with the next create's (one sync per
    /// generation, not three).
    ///
    /// ```
    /// use mediagen::{Journal, SqliteJournal};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let mut journal = SqliteJournal::open(dir.path().join("batch.journal"))?;
    /// journal.planned("cover#1", "key-1", chrono::Utc::now())?;
    /// assert_eq!(journal.entries()?[0].idempotency_key, "key-1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[derive(Debug)]
    pub struct SqliteJournal {
        db: Connection,
    }

    impl SqliteJournal {
        /// Opens the journal at `path`, or makes it.
        pub fn open(path: impl AsRef<Path>) -> Result<Self> {
            let db = Connection::open(path).map_err(failed)?;
            // WAL: a commit is written before it returns, so it survives the
            // process; synced (`durable`) only when it must survive the host.
            db.execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 CREATE TABLE IF NOT EXISTS items (
                     item TEXT PRIMARY KEY,
                     idempotency_key TEXT NOT NULL,
                     planned_at TEXT NOT NULL,
                     generation_id TEXT,
                     cost_rub REAL,
                     ended TEXT
                 );",
            )
            .map_err(failed)?;
            Ok(Self { db })
        }

        /// Whether the next commits are synced to disk before they return
        /// (`FULL`; a sync of the write-ahead log takes the commits before it
        /// along), or only written (`NORMAL`).
        fn durable(&self, synced: bool) -> Result<()> {
            let mode = if synced { "FULL" } else { "NORMAL" };
            self.db
                .execute_batch(&format!("PRAGMA synchronous = {mode};"))
                .map_err(failed)
        }
    }

    impl Journal for SqliteJournal {
        fn entries(&mut self) -> Result<Vec<JournalEntry>> {
            let mut statement = self
                .db
                .prepare(
                    "SELECT item, idempotency_key, planned_at, generation_id, cost_rub, ended
                     FROM items ORDER BY rowid",
                )
                .map_err(failed)?;
            let rows = statement
                .query_map([], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, Option<String>>(3)?,
                        row.get::<_, Option<f64>>(4)?,
                        row.get::<_, Option<String>>(5)?,
                    ))
                })
                .map_err(failed)?;
            let mut entries = Vec::new();
            for row in rows {
                let (item, idempotency_key, planned_at, id, cost_rub, ended) =
                    row.map_err(failed)?;
                entries.push(JournalEntry {
                    item,
                    idempotency_key,
                    planned_at: DateTime::parse_from_rfc3339(&planned_at)
                        .map_err(failed)?
                        .with_timezone(&Utc),
                    id: id
                        .map(|id| Uuid::parse_str(&id))
                        .transpose()
                        .map_err(failed)?,
                    cost_rub,
                    ended: ended
                        .map(|json| serde_json::from_str::<Generation>(&json))
                        .transpose()
                        .map_err(failed)?,
                });
            }
            Ok(entries)
        }

        fn planned(&mut self, item: &str, idempotency_key: &str, at: DateTime<Utc>) -> Result<()> {
            // A create written down before keeps its key: the key is what
            // makes a repeat return the first generation. One whose generation
            // ended is created anew, under a new key.
            let ended: Option<bool> = self
                .db
                .query_row(
                    "SELECT ended IS NOT NULL FROM items WHERE item = ?1",
                    [item],
                    |row| row.get(0),
                )
                .optional()
                .map_err(failed)?;
            // Never pay for what a power loss could take back.
            self.durable(true)?;
            let statement = match ended {
                None => "INSERT INTO items (item, idempotency_key, planned_at) VALUES (?1, ?2, ?3)",
                Some(true) => {
                    "UPDATE items SET idempotency_key = ?2, planned_at = ?3, generation_id = NULL, \
                     cost_rub = NULL, ended = NULL WHERE item = ?1"
                }
                Some(false) => return Ok(()),
            };
            self.db
                .execute(statement, params![item, idempotency_key, at.to_rfc3339()])
                .map_err(failed)?;
            Ok(())
        }

        fn created(&mut self, item: &str, id: Uuid, cost_rub: f64) -> Result<()> {
            self.durable(false)?;
            self.db
                .execute(
                    "UPDATE items SET generation_id = ?2, cost_rub = ?3 WHERE item = ?1",
                    params![item, id.to_string(), cost_rub],
                )
                .map_err(failed)?;
            Ok(())
        }

        fn ended(&mut self, item: &str, generation: &Generation) -> Result<()> {
            let json = serde_json::to_string(generation).map_err(failed)?;
            self.durable(false)?;
            self.db
                .execute(
                    "UPDATE items SET ended = ?2 WHERE item = ?1",
                    params![item, json],
                )
                .map_err(failed)?;
            Ok(())
        }
    }
}
