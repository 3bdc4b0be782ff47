//! What the store forgets: the oldest finished generations, ended webhook
//! messages and logged requests beyond the configured bounds (`--retain`), each
//! kind on its own, so that a day-long run stays flat in memory.
//!
//! Only what has ended is forgotten: active tasks, pending deliveries, users,
//! keys, endpoints, files and balances stay. A finished generation goes with
//! its place in its user's list and its settled charge; an `Idempotency-Key`
//! that named it then starts afresh, as a key past its 24 hours does. The
//! balance history forgets its oldest rows by the same bounds.

use std::collections::VecDeque;

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::{LoggedRequest, Store};
use crate::config::Retention;
use crate::domain::forget_oldest;
use crate::domain::webhook::MessageState;

/// Records that ended, oldest first, with when they ended.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub(super) struct Ended {
    generations: VecDeque<(Uuid, DateTime<Utc>)>,
    messages: VecDeque<(Uuid, DateTime<Utc>)>,
}

/// Whether a record that ended at `at` is past `retention` at `now`, with `len`
/// records of its kind kept.
fn past(retention: Retention, len: usize, at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    retention.count.is_some_and(|count| len > count)
        || retention
            .age_secs
            .is_some_and(|secs| now - at > Duration::milliseconds((secs * 1000.0) as i64))
}

/// The request log (`GET /_mock/requests`), oldest first. It has a lock of its
/// own: every request ends by writing to it, and need not wait for the store.
#[derive(Debug, Default)]
pub struct RequestLog {
    entries: VecDeque<LoggedRequest>,
}

impl RequestLog {
    /// Records a request, forgetting the oldest beyond `retention`.
    pub fn push(&mut self, entry: LoggedRequest, retention: Retention) {
        let now = entry.at;
        self.entries.push_back(entry);
        forget_oldest(
            &mut self.entries,
            |entry| entry.at,
            |len, at| past(retention, len, at, now),
            drop,
        );
    }

    /// The requests kept, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &LoggedRequest> {
        self.entries.iter()
    }
}

impl Store {
    /// Sets the bounds (from the configuration, at start and at reset).
    pub fn set_retention(&mut self, retention: Retention) {
        self.retention = retention;
    }

    /// A generation reached its final state at `at`.
    pub(super) fn generation_ended(&mut self, id: Uuid, at: DateTime<Utc>) {
        self.ended.generations.push_back((id, at));
    }

    /// A message left `Pending` at `at`: delivered, exhausted or dropped.
    pub(super) fn message_ended(&mut self, id: Uuid, at: DateTime<Utc>) {
        self.ended.messages.push_back((id, at));
    }

    /// Forgets finished generations and ended messages beyond the bounds.
    pub(super) fn forget_ended(&mut self, now: DateTime<Utc>) {
        let retention = self.retention;
        let past = |len, at| past(retention, len, at, now);
        let ended_at = |&(_, at): &(Uuid, DateTime<Utc>)| at;
        forget_oldest(&mut self.ended.generations, ended_at, past, |(id, _)| {
            self.ledger.forget_charge(id);
            if let Some(generation) = self.generations.remove(&id)
                && let Some(user) = self.users.get_mut(&generation.user_id)
                // The oldest finished task of a user sits near the front of its list.
                && let Some(place) = user.generations.iter().position(|g| *g == id)
            {
                user.generations.remove(place);
            }
        });
        let mut forgot_messages = false;
        forget_oldest(&mut self.ended.messages, ended_at, past, |(id, _)| {
            // A message redelivered by hand after it ended is still ended.
            if self
                .messages
                .get(&id)
                .is_some_and(|m| m.state != MessageState::Pending)
            {
                self.messages.remove(&id);
                forgot_messages = true;
            }
        });
        // The order list is compacted once it is mostly gaps, so forgetting one
        // message costs no scan of all of them.
        if forgot_messages && self.message_order.len() > 2 * self.messages.len() + 1024 {
            let messages = &self.messages;
            self.message_order.retain(|id| messages.contains_key(id));
        }
        self.ledger.forget_entries(past);
        self.idempotency.prune(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::money::Kopecks;
    use crate::store::tests::{at, run_due, with_user};

    fn bounded(count: Option<usize>, age_secs: Option<f64>) -> (Store, crate::store::NewUser) {
        let (mut store, user) = with_user(1_000.0);
        store.set_retention(Retention { count, age_secs });
        (store, user)
    }

    fn logged(secs: i64) -> LoggedRequest {
        LoggedRequest {
            request_id: format!("req_{secs}"),
            at: at(secs),
            method: "GET".into(),
            path: "/v1/models".into(),
            operation: None,
            status: Some(200),
            ip: "127.0.0.1".into(),
            user_id: None,
            idempotency_key: None,
            fault: None,
            error_code: None,
        }
    }

    #[test]
    fn the_request_log_keeps_the_newest_within_the_count_and_the_age() {
        let mut log = RequestLog::default();
        let by_count = Retention {
            count: Some(3),
            age_secs: None,
        };
        for secs in 0..5 {
            log.push(logged(secs), by_count);
        }
        let kept: Vec<_> = log.iter().map(|r| r.request_id.clone()).collect();
        assert_eq!(kept, ["req_2", "req_3", "req_4"]);

        let mut log = RequestLog::default();
        let by_age = Retention {
            count: None,
            age_secs: Some(60.0),
        };
        for secs in [0, 30, 70, 100] {
            log.push(logged(secs), by_age);
        }
        let kept: Vec<_> = log.iter().map(|r| r.request_id.clone()).collect();
        assert_eq!(kept, ["req_70", "req_100"], "older than 60 s at 100 s");
    }

    #[test]
    fn finished_generations_beyond_the_count_are_forgotten_and_active_ones_kept() {
        let (mut store, user) = bounded(Some(2), None);
        let request = |prompt: &str| crate::store::generations::tests::request(prompt, 1.0);
        let finished: Vec<Uuid> = (0..4)
            .map(|n| {
                let id = store
                    .create_generation(user.user_id, request(&format!("t{n}")), at(n), 0.0)
                    .unwrap()
                    .id;
                for secs in n..n + 60 {
                    run_due(&mut store, at(secs));
                }
                id
            })
            .collect();
        let active = store
            .create_generation(user.user_id, request("still running"), at(100), 60.0)
            .unwrap()
            .id;
        run_due(&mut store, at(101));

        let listed: Vec<Uuid> = store.generations_of(user.user_id).map(|g| g.id).collect();
        assert_eq!(listed, [active, finished[3], finished[2]], "newest first");
        assert!(store.generation(finished[0]).is_none());
        store.check_invariants().unwrap();
        assert_eq!(
            store.account(user.user_id).unwrap().reserved,
            Kopecks(100),
            "the ledger keeps every charge and the live reservation"
        );
    }

    #[test]
    fn a_key_whose_generation_was_forgotten_starts_afresh() {
        let (mut store, user) = bounded(Some(1), None);
        let request = |prompt: &str| crate::store::generations::tests::request(prompt, 1.0);
        assert_eq!(
            store.begin_keyed_create(user.user_id, "k1", at(0)),
            crate::domain::idempotency::Begin::Fresh
        );
        let first = store
            .create_generation(user.user_id, request("first"), at(0), 0.0)
            .unwrap()
            .id;
        store.end_keyed_create(user.user_id, "k1", Some(first), at(0));
        for n in 1..3 {
            store
                .create_generation(user.user_id, request(&format!("t{n}")), at(n), 0.0)
                .unwrap();
        }
        for secs in 0..120 {
            run_due(&mut store, at(secs));
        }
        assert!(store.generation(first).is_none());

        assert_eq!(
            store.begin_keyed_create(user.user_id, "k1", at(120)),
            crate::domain::idempotency::Begin::Fresh
        );
    }
}
