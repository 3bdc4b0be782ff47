//! The inbox's table and every statement on it. Times are Unix milliseconds.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::error::InboxError;
use crate::{Durability, InboxConfig, Message};

/// The schema's version, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// `seq` is the order of arrival, the order workers take messages in.
/// `deliveries` counts the deliveries of the message; `claims` the times a
/// worker took it, and is the token a completion must show. A message is
/// free to claim when `done_at` is null and `lease_until` has passed (0 for
/// a message never claimed). `seen_at` is its last delivery: retention runs
/// from there, since the service may send it again up to its horizon after
/// any failed attempt.
const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS inbox_messages (
        seq INTEGER PRIMARY KEY,
        webhook_id TEXT NOT NULL UNIQUE,
        event_type TEXT,
        body BLOB NOT NULL,
        webhook_timestamp INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        seen_at INTEGER NOT NULL,
        deliveries INTEGER NOT NULL,
        claims INTEGER NOT NULL DEFAULT 0,
        lease_until INTEGER NOT NULL DEFAULT 0,
        done_at INTEGER
    );
    CREATE INDEX IF NOT EXISTS inbox_pending ON inbox_messages (seq) WHERE done_at IS NULL;
    CREATE INDEX IF NOT EXISTS inbox_done ON inbox_messages (seen_at) WHERE done_at IS NOT NULL;
";

/// The clock of the store, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

pub(crate) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A connection to the inbox at `path`, its schema made, waiting at most
/// `lock_wait` for another connection's write lock.
pub(crate) fn connect(
    path: &Path,
    config: &InboxConfig,
    lock_wait: Duration,
) -> Result<Connection, InboxError> {
    let db = Connection::open(path)?;
    db.busy_timeout(lock_wait)?;
    // WAL: workers read while the writer writes. NORMAL syncs the log at
    // checkpoints only: a commit is in the operating system's hands (safe from
    // a crash of the process) when it returns; FULL syncs each commit to the
    // disk (safe from a power loss).
    db.pragma_update(None, "journal_mode", "WAL")?;
    let synchronous = match config.durability {
        Durability::ApplicationCrash => "NORMAL",
        Durability::PowerLoss => "FULL",
    };
    db.pragma_update(None, "synchronous", synchronous)?;
    let page_size: i64 = db.query_row("PRAGMA page_size", [], |row| row.get(0))?;
    let max_pages = i64::try_from(config.max_bytes).unwrap_or(i64::MAX) / page_size.max(1);
    db.pragma_update(None, "max_page_count", max_pages.max(1))?;
    let version: i64 = db.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version < SCHEMA_VERSION {
        db.execute_batch(SCHEMA)?;
        db.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    Ok(db)
}

/// A verified delivery on its way to the table.
#[derive(Debug)]
pub(crate) struct Incoming {
    pub webhook_id: String,
    pub event_type: Option<String>,
    pub body: Vec<u8>,
    pub timestamp: i64,
}

/// Stores each delivery in one transaction: `true` for a message new to the
/// inbox, `false` for one already stored (its delivery count and last
/// sighting updated). Nothing is stored unless all are.
pub(crate) fn store<'a>(
    db: &mut Connection,
    deliveries: impl Iterator<Item = &'a Incoming>,
    now: i64,
) -> Result<Vec<bool>, rusqlite::Error> {
    let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut fresh = Vec::new();
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO inbox_messages
                 (webhook_id, event_type, body, webhook_timestamp, received_at, seen_at, deliveries)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1)
             ON CONFLICT (webhook_id) DO UPDATE
                 SET deliveries = deliveries + 1, seen_at = excluded.seen_at
             RETURNING deliveries",
        )?;
        for delivery in deliveries {
            let deliveries: i64 = insert.query_row(
                params![
                    delivery.webhook_id,
                    delivery.event_type,
                    delivery.body,
                    delivery.timestamp,
                    now
                ],
                |row| row.get(0),
            )?;
            fresh.push(deliveries == 1);
        }
    }
    tx.commit()?;
    Ok(fresh)
}

/// Takes the oldest message free to claim, for `lease`.
pub(crate) fn claim(
    db: &Connection,
    now: i64,
    lease: Duration,
) -> Result<Option<(i64, i64, Message)>, rusqlite::Error> {
    db.prepare_cached(
        "UPDATE inbox_messages SET claims = claims + 1, lease_until = ?2
         WHERE seq = (SELECT seq FROM inbox_messages
                      WHERE done_at IS NULL AND lease_until <= ?1 ORDER BY seq LIMIT 1)
         RETURNING seq, claims, webhook_id, event_type, body, webhook_timestamp, received_at",
    )?
    .query_row(params![now, now.saturating_add(millis(lease))], |row| {
        Ok((
            row.get(0)?,
            row.get(1)?,
            Message {
                webhook_id: row.get(2)?,
                event_type: row.get(3)?,
                body: row.get(4)?,
                timestamp: row.get(5)?,
                received_at: UNIX_EPOCH
                    + Duration::from_millis(u64::try_from(row.get::<_, i64>(6)?).unwrap_or(0)),
                attempt: row.get::<_, u32>(1)?,
            },
        ))
    })
    .optional()
}

/// Marks a claimed message done, in `tx`; false when the claim is no longer
/// the message's latest, or the message is done already.
pub(crate) fn complete(
    tx: &Transaction<'_>,
    seq: i64,
    token: i64,
    now: i64,
) -> Result<bool, rusqlite::Error> {
    let changed = tx
        .prepare_cached(
            "UPDATE inbox_messages SET done_at = ?3, lease_until = 0
         WHERE seq = ?1 AND claims = ?2 AND done_at IS NULL",
        )?
        .execute(params![seq, token, now])?;
    Ok(changed == 1)
}

/// Frees a claimed message for another claim from `at`; false when the claim
/// is no longer the message's latest.
pub(crate) fn release(
    db: &Connection,
    seq: i64,
    token: i64,
    at: i64,
) -> Result<bool, rusqlite::Error> {
    let changed = db
        .prepare_cached(
            "UPDATE inbox_messages SET lease_until = ?3
             WHERE seq = ?1 AND claims = ?2 AND done_at IS NULL",
        )?
        .execute(params![seq, token, at])?;
    Ok(changed == 1)
}

/// Frees every claim: for a process that knows no other holds the inbox.
pub(crate) fn release_all(db: &Connection) -> Result<usize, rusqlite::Error> {
    db.execute(
        "UPDATE inbox_messages SET lease_until = 0 WHERE done_at IS NULL AND lease_until > 0",
        [],
    )
}

/// Deletes up to `limit` done messages last seen at `before` or earlier.
pub(crate) fn prune(db: &Connection, before: i64, limit: i64) -> Result<usize, rusqlite::Error> {
    db.prepare_cached(
        "DELETE FROM inbox_messages WHERE seq IN (
             SELECT seq FROM inbox_messages
             WHERE done_at IS NOT NULL AND seen_at <= ?1 LIMIT ?2)",
    )?
    .execute(params![before, limit])
}

/// Counts of the inbox's messages: `(waiting, done)`.
pub(crate) fn counts(db: &Connection) -> Result<(u64, u64), rusqlite::Error> {
    db.query_row(
        "SELECT count(*) FILTER (WHERE done_at IS NULL), count(*) FILTER (WHERE done_at IS NOT NULL)
         FROM inbox_messages",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}
