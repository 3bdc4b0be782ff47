//! The webhook receiver made durable with `webhook-inbox`: each delivery is stored
//! in an SQLite file before it is answered, and a worker records each event in the
//! same file, in the transaction that marks its message done. Killed at any moment
//! and restarted, it records every event exactly once.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use mediagen::WebhookEvent;
use webhook_inbox::rusqlite;
use webhook_inbox::{Claim, Inbox, InboxError};

/// The events processed, in the order they were: the program's own table, beside the
/// inbox's. The unique `webhook_id` is a second guard: a repeat could not insert.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS processed_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL UNIQUE,
    type TEXT,
    generation_id TEXT
)";

/// Opens the inbox at `path` and makes the program's table in it.
pub fn open(path: &Path) -> anyhow::Result<Inbox> {
    let inbox = Inbox::open(path).with_context(|| format!("while opening {}", path.display()))?;
    inbox
        .with_connection(|db| db.execute_batch(SCHEMA))
        .context("while making the table of processed events")?;
    Ok(inbox)
}

/// The worker, on a thread of its own (claims and commits block): takes each stored
/// message, records it and completes it in one transaction, then prints a line. Once
/// `stop` is set it finishes the messages stored so far and returns.
pub fn spawn_worker(inbox: Inbox, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        loop {
            let stopping = stop.load(Ordering::SeqCst);
            let wait = if stopping {
                Duration::ZERO
            } else {
                Duration::from_millis(200)
            };
            match inbox.wait_claim(wait) {
                Ok(Some(claim)) => match process(&inbox, &claim) {
                    // Printed after the commit: the line is an effect outside the
                    // database, so a crash right before it loses the line, never
                    // the record.
                    Ok(line) => println!("{line}"),
                    Err(err) => {
                        eprintln!("{}: not processed: {err:#}", claim.message.webhook_id);
                        // Taken again in a second, rather than when the lease ends;
                        // if even this fails, the lease's end frees it.
                        let _ = inbox.release(&claim, Duration::from_secs(1));
                    }
                },
                Ok(None) if stopping => return,
                Ok(None) => {}
                Err(err) => {
                    // The database is busy or failing: the messages wait in it.
                    eprintln!("the inbox cannot be read: {err:#}");
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    })
}

/// Records one message in the transaction that completes it; the line to print.
fn process(inbox: &Inbox, claim: &Claim) -> Result<String, InboxError> {
    let message = &claim.message;
    // A body the SDK cannot read as an event still verified, so the service sent
    // it: it is recorded by its raw `type`, like an event this program does not know.
    let event = WebhookEvent::parse(&message.body).ok();
    let event_type = event
        .as_ref()
        .map(|event| event.event_type().to_owned())
        .or_else(|| message.event_type.clone());
    let generation_id = event.as_ref().and_then(WebhookEvent::generation_id);
    inbox.complete_with(claim, |tx| {
        tx.execute(
            "INSERT INTO processed_events (webhook_id, type, generation_id) VALUES (?1, ?2, ?3)",
            (
                &message.webhook_id,
                &event_type,
                generation_id.map(|id| id.to_string()),
            ),
        )?;
        Ok::<_, InboxError>(())
    })?;
    Ok(match &event {
        Some(event) => crate::receiver::describe(event),
        None => format!(
            "{} ignored",
            event_type.as_deref().unwrap_or("an event without a type")
        ),
    })
}

/// Processes the messages stored and not yet processed (those a receiver killed at
/// the wrong moment left, say), without printing; then one JSON line per processed
/// event, in the order they were processed:
/// `{"webhookId": "…", "type": "generation.completed", "generationId": "…"}`.
///
/// A receiver running on the same file meanwhile is no trouble: each message is
/// claimed by one of them and recorded in the transaction that completes it.
pub fn dump(path: &Path) -> anyhow::Result<Vec<String>> {
    let inbox = open(path)?;
    while let Some(claim) = inbox.claim()? {
        process(&inbox, &claim)
            .with_context(|| format!("while processing {}", claim.message.webhook_id))?;
    }
    inbox.with_connection(|db| processed(db))
}

fn processed(db: &rusqlite::Connection) -> anyhow::Result<Vec<String>> {
    let mut rows =
        db.prepare("SELECT webhook_id, type, generation_id FROM processed_events ORDER BY seq")?;
    let lines = rows.query_map([], |row| {
        let webhook_id: String = row.get(0)?;
        let event_type: Option<String> = row.get(1)?;
        let generation_id: Option<String> = row.get(2)?;
        Ok(format!(
            r#"{{"webhookId": {}, "type": {}, "generationId": {}}}"#,
            serde_json::Value::from(webhook_id),
            serde_json::Value::from(event_type),
            serde_json::Value::from(generation_id),
        ))
    })?;
    Ok(lines.collect::<Result<_, _>>()?)
}
