//! The live journal of one world: an event for each request logged, generation
//! state change, ledger row, webhook message and delivery attempt, top-up and
//! invoice, outbox mail, fault applied and clock move, in the order they
//! happened, each numbered so that a reader can tell whether it missed any.
//!
//! The store writes what changed into its [`Journal`] while it holds its lock,
//! and the lock's guard publishes it on the world's [`Bus`] before letting go,
//! so the order of events is the order of changes. Nothing is written while
//! nobody listens. The control API's `stream_events` reads the bus: over HTTP
//! as Server-Sent Events (`control/events.rs`), and in Rust as
//! [`World::stream_events`](crate::World::stream_events).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use uuid::Uuid;

use crate::domain::UserId;

/// Events a reader may fall behind by before it misses some: at 1,000
/// requests a second, about two seconds of a busy world.
const CAPACITY: usize = 8192;

/// How long a world keeps its journal on after a reader that can resume (the
/// HTTP stream) has gone, so that it finds what it missed when it comes back
/// with `Last-Event-ID`.
const LINGER: Duration = Duration::from_secs(30);

/// One thing that happened in a world.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Event {
    /// 1 for the first event the world told (once it had a reader), then one
    /// more for each: a gap means events were missed. 0 for an event of the
    /// history ([`World::stream_events_with_history`](crate::World::stream_events_with_history)),
    /// told from the world's records to a reader that came after it.
    pub seq: u64,
    /// When it happened, on the mock's clock (to the millisecond in JSON).
    #[serde(with = "crate::wire::millis")]
    pub at: DateTime<Utc>,
    /// What happened, with the ids that tie it to the rest.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What an [`Event`] tells; in JSON, `type` names the variant in snake_case
/// and the other members are the variant's fields in camelCase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum EventKind {
    /// A request of the service was answered (or dropped) and logged.
    Request {
        /// `x-request-id` of the answer.
        request_id: String,
        /// The HTTP method.
        method: String,
        /// The path, without the query.
        path: String,
        /// The status the service decided on; `None` when a fault dropped the
        /// connection before the service acted.
        status: Option<u16>,
        /// The error envelope's `code`, when the answer is an error.
        error_code: Option<String>,
        /// The authenticated user.
        user_id: Option<UserId>,
        /// The `Idempotency-Key` sent.
        idempotency_key: Option<String>,
        /// The fault rule that applied.
        fault: Option<String>,
        /// How long the service took to answer, in real milliseconds, from
        /// the request's arrival to its answer's head (a `delay` fault's
        /// wait is not in it). Absent in the history, which does not keep it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// A fault rule applied to a request (its `request` event follows).
    Fault {
        /// The rule's id.
        fault_id: String,
        /// The request it applied to.
        request_id: String,
        /// The authenticated user.
        user_id: Option<UserId>,
        /// The request's method.
        method: String,
        /// The request's path.
        path: String,
        /// The status the service decided on; `None` for `drop`.
        status: Option<u16>,
    },
    /// A generation was created or changed state, or a worker attempt failed
    /// and will be tried again.
    Generation {
        /// The task.
        generation_id: Uuid,
        /// Its owner.
        user_id: UserId,
        /// `created`, `started`, `attempt_failed` (tried again), `ended` or
        /// `cancelled`.
        change: String,
        /// The status after the change.
        status: String,
        /// Worker attempts so far.
        attempts: u8,
        /// The model.
        model_slug: String,
        /// The cost reserved at creation.
        cost_rub: f64,
        /// What was returned to the balance, once refunded.
        refund_rub: Option<f64>,
        /// The failure code of a `FAILED` task.
        error_code: Option<String>,
        /// The prompt as the client sent it.
        prompt: String,
    },
    /// A row of the balance ledger.
    Ledger {
        /// The row.
        entry_id: Uuid,
        /// Whose balance.
        user_id: UserId,
        /// `TOPUP`, `ADJUSTMENT`, `GENERATION_CHARGE` or `GENERATION_REFUND`.
        kind: String,
        /// Signed: credits positive, debits negative.
        amount_rub: f64,
        /// The task of a charge or refund.
        generation_id: Option<Uuid>,
        /// Available right after the row.
        balance_rub: f64,
        /// Reserved right after the row.
        reserved_rub: f64,
    },
    /// A webhook message was queued, or dropped without an attempt.
    Message {
        /// The message (`webhook-id`).
        message_id: Uuid,
        /// The event's id in its body.
        event_id: String,
        /// `generation.succeeded`, …
        event_type: String,
        /// The endpoint it goes to.
        endpoint_id: String,
        /// The endpoint's owner.
        user_id: UserId,
        /// The task it tells of.
        generation_id: Option<Uuid>,
        /// `pending`, `delivered`, `exhausted` or `dropped`.
        state: String,
    },
    /// A delivery attempt of a webhook message ended.
    Attempt {
        /// The message.
        message_id: Uuid,
        /// The endpoint.
        endpoint_id: String,
        /// The endpoint's owner.
        user_id: UserId,
        /// 1 for the first attempt.
        attempt: u32,
        /// `scheduled` or `manual`.
        trigger: String,
        /// The receiver's status; `None` when no answer came.
        response_status: Option<u16>,
        /// Why no answer came (connection refused, timeout…).
        error: Option<String>,
        /// How long the attempt took, in real milliseconds.
        duration_ms: u64,
        /// The start of the receiver's answer.
        response_excerpt: Option<String>,
        /// When the next scheduled retry is due.
        #[serde(default, with = "crate::wire::millis::option")]
        next_attempt_at: Option<DateTime<Utc>>,
        /// The message's state after the attempt.
        state: String,
        /// Why the endpoint is disabled, when it is (`gone_410`, …).
        endpoint_disabled: Option<String>,
    },
    /// A top-up was created or settled.
    Topup {
        /// The top-up.
        topup_id: Uuid,
        /// Its user.
        user_id: UserId,
        /// Its amount.
        amount_rub: f64,
        /// `PENDING`, `SUCCEEDED` or `FAILED`.
        status: String,
    },
    /// An invoice was issued or paid.
    Invoice {
        /// The invoice.
        invoice_id: Uuid,
        /// Its user.
        user_id: UserId,
        /// Its number.
        number: String,
        /// Its amount.
        amount_rub: f64,
        /// `ISSUED` or `PAID`.
        status: String,
    },
    /// A magic-link mail went to the outbox.
    Mail {
        /// The address.
        to: String,
        /// The subject line.
        subject: String,
        /// The sign-in link.
        link: String,
    },
    /// The manual clock moved (or a snapshot set it); `at` is the new time.
    Clock {
        /// The time before.
        #[serde(with = "crate::wire::millis")]
        from: DateTime<Utc>,
    },
    /// The world was reset: what a reader showed is gone.
    Reset {},
    /// The verdict made a finding, or made one again (`count` tells how many
    /// times in all); `GET /_mock/verdict` lists them.
    #[serde(rename = "verdict.finding")]
    VerdictFinding {
        /// The rule's id, such as `create-retry-new-key`.
        rule: String,
        /// `violation` or `advice`.
        severity: crate::verdict::Severity,
        /// What happened, in words, the first time.
        message: String,
        /// The rule of the service document it rests on.
        document_rule: String,
        /// What a correct client does.
        advice: String,
        /// The first requests that show it (for a receiver's finding, its
        /// `message_ids` too, until the next release).
        request_ids: Vec<String>,
        /// For a receiver's finding: the webhook endpoint it is about.
        #[serde(skip_serializing_if = "Option::is_none")]
        endpoint: Option<crate::verdict::Endpoint>,
        /// For a receiver's finding: the `webhook-id`s of the deliveries
        /// that show it.
        #[serde(skip_serializing_if = "Option::is_none")]
        message_ids: Option<Vec<String>>,
        /// How many times it was made.
        count: u64,
    },
    /// The verdict was started over (`DELETE /_mock/verdict`): the findings a
    /// reader showed are gone.
    #[serde(rename = "verdict.reset")]
    VerdictReset {},
}

/// An event as the bus carries it: its JSON written once, by the first
/// stream that sends it, for every other.
pub(crate) struct Published {
    event: Event,
    json: OnceLock<String>,
}

impl Published {
    pub(crate) fn seq(&self) -> u64 {
        self.event.seq
    }

    pub(crate) fn json(&self) -> &str {
        // An event always serializes: its members are strings, numbers and times.
        self.json
            .get_or_init(|| serde_json::to_string(&self.event).unwrap_or_default())
    }
}

/// Events a reader missed by falling too far behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} events were missed: the reader fell too far behind")]
pub struct Missed(pub u64);

/// A reader of a world's events, from the moment it was made
/// ([`World::stream_events`](crate::World::stream_events)).
#[derive(Debug)]
pub struct EventStream {
    pub(crate) rx: broadcast::Receiver<Arc<Published>>,
}

impl EventStream {
    /// The next event, waiting for it; `Err` once when events were missed,
    /// then the events after them.
    pub async fn recv(&mut self) -> Result<Event, Missed> {
        loop {
            match self.rx.recv().await {
                Ok(published) => return Ok(published.event.clone()),
                Err(broadcast::error::RecvError::Lagged(n)) => return Err(Missed(n)),
                // The world holds the sender: it is gone only with the world.
                Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    }

    /// Every event published so far and not yet read, without waiting. What a
    /// request or a control call did is published before its answer, what a
    /// clock move made due before `advance` returns, and a delivery attempt
    /// before `deliveries_settled` returns. `Err` when events were missed; the
    /// next call reads on from the oldest event still kept, whose `seq` tells
    /// where the gap ends.
    pub fn drain(&mut self) -> Result<Vec<Event>, Missed> {
        let mut events = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(published) => events.push(published.event.clone()),
                Err(broadcast::error::TryRecvError::Lagged(n)) => return Err(Missed(n)),
                Err(_) => return Ok(events),
            }
        }
    }
}

/// Where a world's events go: numbered in the order they are published.
#[derive(Clone)]
pub(crate) struct Bus {
    inner: Arc<BusInner>,
}

struct BusInner {
    /// Made at the first reader: the channel holds its whole window from the
    /// start, and a world nobody watches (most of a thousand) needs none.
    tx: OnceLock<broadcast::Sender<Arc<Published>>>,
    /// The last number given and the last events; under the same lock as the
    /// send, so numbers reach every reader in order, and a reader that
    /// resumes gets each event once, from the kept ones or from the channel.
    seq: Mutex<Sequence>,
    /// Until when a reader that can resume may still come back.
    lingers_until: Mutex<Option<Instant>>,
}

#[derive(Default)]
struct Sequence {
    last: u64,
    /// The last [`CAPACITY`] events, for readers that resume.
    kept: VecDeque<Arc<Published>>,
}

/// A reader that resumes after the event it saw last: the kept events after
/// it, how many it missed beyond those, and the reader of what follows.
pub(crate) struct Resumed {
    pub(crate) missed: u64,
    pub(crate) replay: Vec<Arc<Published>>,
    pub(crate) stream: EventStream,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("listening", &self.listening())
            .finish_non_exhaustive()
    }
}

impl Default for Bus {
    fn default() -> Self {
        Self {
            inner: Arc::new(BusInner {
                tx: OnceLock::new(),
                seq: Mutex::new(Sequence::default()),
                lingers_until: Mutex::new(None),
            }),
        }
    }
}

impl Bus {
    /// Whether anyone reads: nothing is written for nobody.
    pub(crate) fn listening(&self) -> bool {
        self.inner.tx.get().is_some_and(|tx| {
            tx.receiver_count() > 0
                || lock(&self.inner.lingers_until).is_some_and(|until| Instant::now() < until)
        })
    }

    pub(crate) fn subscribe(&self) -> EventStream {
        let tx = self.inner.tx.get_or_init(|| broadcast::channel(CAPACITY).0);
        EventStream { rx: tx.subscribe() }
    }

    /// A reader from the event after `after` on: the kept ones, then the
    /// live ones, each once. Events older than the kept ones are counted as
    /// missed.
    pub(crate) fn resume(&self, after: u64) -> Resumed {
        let tx = self.inner.tx.get_or_init(|| broadcast::channel(CAPACITY).0);
        let sequence = lock(&self.inner.seq);
        let stream = EventStream { rx: tx.subscribe() };
        let first_kept = sequence
            .kept
            .front()
            .map_or(sequence.last + 1, |event| event.seq());
        Resumed {
            missed: first_kept.saturating_sub(after + 1),
            replay: sequence
                .kept
                .iter()
                .filter(|event| event.seq() > after)
                .cloned()
                .collect(),
            stream,
        }
    }

    /// A reader that can resume has gone: the journal stays on for
    /// [`LINGER`], so that what happens meanwhile is kept for it.
    pub(crate) fn linger(&self) {
        *lock(&self.inner.lingers_until) = Some(Instant::now() + LINGER);
    }

    pub(crate) fn publish(&self, at: DateTime<Utc>, kind: EventKind) {
        let Some(tx) = self.inner.tx.get() else {
            return;
        };
        let mut sequence = lock(&self.inner.seq);
        sequence.last += 1;
        let event = Arc::new(Published {
            event: Event {
                seq: sequence.last,
                at,
                kind,
            },
            json: OnceLock::new(),
        });
        if sequence.kept.len() == CAPACITY {
            sequence.kept.pop_front();
        }
        sequence.kept.push_back(Arc::clone(&event));
        // No reader now: kept for one that resumes.
        tx.send(event).ok();
    }
}

/// A lock that a panic elsewhere does not poison for the journal.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the store changed under its lock, kept until the lock's guard
/// publishes it; written only while someone listens.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    on: bool,
    pending: Vec<(DateTime<Utc>, EventKind)>,
}

impl Journal {
    pub(crate) fn set_on(&mut self, on: bool) {
        self.on = on;
    }

    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    pub(crate) fn push(&mut self, at: DateTime<Utc>, kind: EventKind) {
        if self.on {
            self.pending.push((at, kind));
        }
    }

    pub(crate) fn take(&mut self) -> Vec<(DateTime<Utc>, EventKind)> {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_numbered_from_the_first_reader_on_and_each_reader_gets_each() {
        let bus = Bus::default();
        bus.publish(Utc::now(), EventKind::Reset {});
        assert!(!bus.listening(), "no reader, no channel");

        let (mut a, mut b) = (bus.subscribe(), bus.subscribe());
        bus.publish(Utc::now(), EventKind::Reset {});
        bus.publish(Utc::now(), EventKind::Reset {});

        for reader in [&mut a, &mut b] {
            let seqs: Vec<u64> = reader.drain().unwrap().iter().map(|e| e.seq).collect();
            assert_eq!(seqs, [1, 2]);
        }
        drop((a, b));
        assert!(!bus.listening());
    }

    #[test]
    fn a_reader_that_resumes_gets_each_event_after_its_last_once() {
        let bus = Bus::default();
        let mut first = bus.subscribe();
        for _ in 0..5 {
            bus.publish(Utc::now(), EventKind::Reset {});
        }
        assert_eq!(first.drain().unwrap().len(), 5);
        // It saw up to 2, went away, and events went on meanwhile.
        drop(first);
        bus.linger();
        assert!(bus.listening(), "kept on for a reader that comes back");
        bus.publish(Utc::now(), EventKind::Reset {});
        let mut resumed = bus.resume(2);
        bus.publish(Utc::now(), EventKind::Reset {});
        assert_eq!(resumed.missed, 0);
        let replayed: Vec<u64> = resumed.replay.iter().map(|e| e.seq()).collect();
        assert_eq!(replayed, [3, 4, 5, 6]);
        let live: Vec<u64> = resumed
            .stream
            .drain()
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(live, [7]);
    }

    #[test]
    fn a_reader_that_resumes_after_the_kept_events_is_told_how_many_it_missed() {
        let bus = Bus::default();
        let _reader = bus.subscribe();
        for _ in 0..CAPACITY + 10 {
            bus.publish(Utc::now(), EventKind::Reset {});
        }
        let resumed = bus.resume(5);
        assert_eq!(resumed.missed, 5, "6 to 10 are no longer kept");
        assert_eq!(resumed.replay.first().map(|e| e.seq()), Some(11));
        assert_eq!(resumed.replay.len(), CAPACITY);
    }
}
