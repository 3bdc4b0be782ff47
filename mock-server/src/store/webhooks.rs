//! Webhook endpoints and their messages: the endpoint cap, changes, secret
//! rotation, the messages queued for delivery and every attempt's record.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use super::jobs::JobKind;
use crate::config::Responses;
use crate::domain::UserId;
use crate::domain::generation::Generation;
use crate::domain::webhook::{
    self, Attempt, AttemptOutcome, DisabledReason, Endpoint, EndpointRefusal, MAX_ENDPOINTS,
    MAX_RETRIES, Message, MessageState, TaskEnded, Trigger,
};

/// A change to an endpoint (`PATCH /v1/webhook-endpoints/{id}`): only what is given.
#[derive(Debug, Clone, Default)]
pub struct EndpointChange {
    /// A new address (already checked).
    pub url: Option<String>,
    /// New subscriptions.
    pub event_types: Option<Vec<String>>,
    /// A new description; `Some(None)` clears it.
    pub description: Option<Option<String>>,
    /// `true` reactivates (and resets the failure count), `false` disables.
    pub active: Option<bool>,
}

/// What one delivery attempt needs, copied out so that no lock is held while it
/// is sent.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The endpoint's address.
    pub url: String,
    /// The endpoint's id, which names its signer.
    pub endpoint_id: String,
    /// Its current secret: a rotation takes effect at the next attempt.
    pub secret: String,
    /// The message's body, fixed at creation; shared, not copied, per attempt.
    pub payload: Bytes,
    /// Whether the response mode is `extra`, which adds a header no receiver knows.
    pub extra_header: bool,
}

/// How an attempt went, as the deliverer saw it.
#[derive(Debug, Clone, Default)]
pub struct AttemptReport {
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Its `retry-after`, turned into seconds of the mock's clock.
    pub retry_after_secs: Option<u64>,
    /// Why there was no answer.
    pub error: Option<String>,
    /// The start of its answer.
    pub body: Vec<u8>,
}

impl Store {
    /// Endpoints a user has.
    pub fn endpoint_count(&self, user_id: UserId) -> usize {
        self.endpoints_by_user.get(&user_id).map_or(0, Vec::len)
    }

    /// Adds an endpoint, within the cap of the account (counted under the lock, so
    /// parallel creates cannot pass it together).
    pub fn add_endpoint(&mut self, endpoint: Endpoint) -> Result<(), EndpointRefusal> {
        if self.endpoint_count(endpoint.user_id) >= MAX_ENDPOINTS {
            return Err(EndpointRefusal::TooMany);
        }
        self.endpoints_by_user
            .entry(endpoint.user_id)
            .or_default()
            .push(endpoint.id.clone());
        self.endpoints.insert(endpoint.id.clone(), endpoint);
        Ok(())
    }

    /// The caller's endpoint `id`; another user's is not found.
    pub fn own_endpoint(&self, user_id: UserId, id: &str) -> Option<&Endpoint> {
        self.endpoints.get(id).filter(|e| e.user_id == user_id)
    }

    /// A user's endpoints, oldest first (the order they were added in).
    pub fn endpoints_of(&self, user_id: UserId) -> Vec<&Endpoint> {
        self.endpoints_by_user
            .get(&user_id)
            .into_iter()
            .flatten()
            .filter_map(|id| self.endpoints.get(id))
            .collect()
    }

    /// Applies `change` to the caller's endpoint; the endpoint as it is after.
    pub fn update_endpoint(
        &mut self,
        user_id: UserId,
        id: &str,
        change: EndpointChange,
    ) -> Option<Endpoint> {
        let endpoint = self
            .endpoints
            .get_mut(id)
            .filter(|e| e.user_id == user_id)?;
        if let Some(url) = change.url {
            endpoint.url = url;
        }
        if let Some(event_types) = change.event_types {
            endpoint.event_types = event_types;
        }
        if let Some(description) = change.description {
            endpoint.description = description;
        }
        match change.active {
            Some(true) => endpoint.reactivate(),
            Some(false) => endpoint.disable(DisabledReason::Manual),
            None => {}
        }
        Some(endpoint.clone())
    }

    /// Removes the caller's endpoint; false when there is none.
    pub fn remove_endpoint(&mut self, user_id: UserId, id: &str) -> bool {
        if self.own_endpoint(user_id, id).is_none() {
            return false;
        }
        if let Some(ids) = self.endpoints_by_user.get_mut(&user_id) {
            ids.retain(|own| own != id);
        }
        self.endpoints.remove(id).is_some()
    }

    /// Gives the caller's endpoint a new secret; the old one stops at once, since
    /// deliveries sign when they are sent. False when there is no such endpoint.
    pub fn rotate_secret(&mut self, user_id: UserId, id: &str, secret: String) -> bool {
        match self.endpoints.get_mut(id).filter(|e| e.user_id == user_id) {
            Some(endpoint) => {
                endpoint.secret = secret;
                true
            }
            None => false,
        }
    }

    /// Queues the event of a task that has just ended, one message per active
    /// endpoint of its owner subscribed to it, first attempts due at once; `body`
    /// writes the event with the id it is given, and is called only when
    /// someone is to be told (most tasks have nobody to tell).
    pub fn queue_event(
        &mut self,
        ended: &TaskEnded,
        body: impl FnOnce(&Generation, &str) -> Bytes,
    ) {
        let Some(generation) = self.generations.get(&ended.generation_id) else {
            return;
        };
        let Some(event_type) = webhook::event_type(generation) else {
            return;
        };
        let targets: Vec<Endpoint> = self
            .endpoints_of(generation.user_id)
            .into_iter()
            .filter(|e| e.active && e.subscribed(event_type))
            .cloned()
            .collect();
        if targets.is_empty() {
            return;
        }
        let event_id = webhook::new_event_id();
        let bytes = body(generation, &event_id);
        for endpoint in &targets {
            let id = self.enqueue_message(
                endpoint,
                event_type,
                event_id.clone(),
                bytes.clone(),
                ended.at,
            );
            self.note_message_state(id, Some(ended.generation_id), ended.at);
        }
    }

    fn note_message_state(&mut self, id: Uuid, generation_id: Option<Uuid>, at: DateTime<Utc>) {
        if self.journal.is_on()
            && let Some(message) = self.messages.get(&id).cloned()
        {
            self.note_message(&message, generation_id, at);
        }
    }

    /// Queues a message for an endpoint, its first attempt due at `at`.
    pub fn enqueue_message(
        &mut self,
        endpoint: &Endpoint,
        event_type: &'static str,
        event_id: String,
        payload: Bytes,
        at: DateTime<Utc>,
    ) -> Uuid {
        let id = Uuid::new_v4();
        self.messages.insert(
            id,
            Message {
                id,
                event_id,
                event_type: event_type.into(),
                endpoint_id: endpoint.id.clone(),
                user_id: endpoint.user_id,
                payload,
                created_at: at,
                state: MessageState::Pending,
                scheduled_attempts: 0,
                attempts: Vec::new(),
            },
        );
        self.message_order.push(id);
        self.jobs.schedule(at, id, JobKind::Deliver);
        id
    }

    /// An endpoint of any user, if it exists.
    pub fn endpoint(&self, id: &str) -> Option<&Endpoint> {
        self.endpoints.get(id)
    }

    /// A message, if it exists.
    pub fn message(&self, id: Uuid) -> Option<&Message> {
        self.messages.get(&id)
    }

    /// Every message, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.message_order
            .iter()
            .filter_map(|id| self.messages.get(id))
    }

    /// The messages of one endpoint, oldest first.
    pub fn messages_of(&self, endpoint_id: &str) -> impl Iterator<Item = &Message> {
        self.messages()
            .filter(move |m| m.endpoint_id == endpoint_id)
    }

    /// What an attempt of `message_id` sends, or `None` when there is nothing left
    /// to send: a scheduled retry of a message delivered meanwhile (by a manual
    /// redelivery), or of one whose endpoint is disabled or gone (then dropped).
    pub fn outgoing(&mut self, message_id: Uuid, trigger: Trigger) -> Option<Outgoing> {
        let message = self.messages.get(&message_id)?;
        let pending = message.state == MessageState::Pending;
        match self.endpoints.get(&message.endpoint_id) {
            Some(endpoint) if endpoint.active && (pending || trigger == Trigger::Manual) => {
                Some(Outgoing {
                    endpoint_id: endpoint.id.clone(),
                    url: endpoint.url.clone(),
                    secret: endpoint.secret.clone(),
                    payload: message.payload.clone(),
                    extra_header: self.responses == Responses::Extra,
                })
            }
            _ => {
                if let Some(message) = self.messages.get_mut(&message_id)
                    && message.state == MessageState::Pending
                {
                    message.state = MessageState::Dropped;
                    // No attempt is made, so its creation stands for when it ended.
                    let created_at = message.created_at;
                    self.message_ended(message_id, created_at);
                    self.note_message_state(message_id, None, created_at);
                }
                None
            }
        }
    }

    /// Records an attempt: the endpoint's failure count and state (410 disables,
    /// 720 failures in a row deactivate), the message's state, and the next
    /// scheduled retry, whose time is returned.
    pub fn record_attempt(
        &mut self,
        message_id: Uuid,
        trigger: Trigger,
        at: DateTime<Utc>,
        duration_ms: u64,
        report: AttemptReport,
    ) -> Option<DateTime<Utc>> {
        let outcome = match report.status {
            Some(status) => AttemptOutcome::from_status(status, report.retry_after_secs),
            None => AttemptOutcome::Failed {
                retry_after_secs: None,
            },
        };
        let endpoint_id = self.messages.get(&message_id)?.endpoint_id.clone();
        if let Some(endpoint) = self.endpoints.get_mut(&endpoint_id) {
            endpoint.record(&outcome, at);
        }
        let endpoint_active = self.endpoints.get(&endpoint_id).is_some_and(|e| e.active);
        let message = self.messages.get_mut(&message_id)?;
        let was_pending = message.state == MessageState::Pending;
        if trigger == Trigger::Scheduled {
            message.scheduled_attempts += 1;
        }
        let mut next_attempt_at = None;
        match &outcome {
            AttemptOutcome::Delivered => message.state = MessageState::Delivered,
            AttemptOutcome::Gone => message.state = MessageState::Dropped,
            AttemptOutcome::Failed { retry_after_secs } => {
                // Manual attempts stand apart: they neither use up nor schedule retries.
                if trigger == Trigger::Scheduled && message.state == MessageState::Pending {
                    let retry = message.scheduled_attempts;
                    if retry > MAX_RETRIES {
                        message.state = MessageState::Exhausted;
                    } else if !endpoint_active {
                        message.state = MessageState::Dropped;
                    } else {
                        let jitter = rand::random::<f64>() * 2.0 - 1.0;
                        let delay = webhook::honour_retry_after(
                            webhook::retry_delay(retry, jitter),
                            *retry_after_secs,
                        );
                        next_attempt_at = Some(at + delay);
                    }
                }
            }
        }
        message.attempts.push(Attempt {
            id: format!("att_{}", &Uuid::new_v4().simple().to_string()[..24]),
            attempt: u32::try_from(message.attempts.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1),
            trigger,
            attempted_at: at,
            succeeded: outcome == AttemptOutcome::Delivered,
            response_status: report.status,
            error: report.error,
            duration_ms,
            response_excerpt: webhook::excerpt(&report.body),
            next_attempt_at,
        });
        let ended = was_pending && message.state != MessageState::Pending;
        if self.journal.is_on()
            && let Some(message) = self.messages.get(&message_id).cloned()
            && let Some(attempt) = message.attempts.last()
        {
            self.note_attempt(&message, attempt);
        }
        if ended {
            self.message_ended(message_id, at);
        }
        if let Some(due) = next_attempt_at {
            self.jobs.schedule(due, message_id, JobKind::Deliver);
        }
        next_attempt_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{at, with_user};

    fn endpoint(user_id: UserId) -> Endpoint {
        Endpoint {
            id: webhook::new_endpoint_id(),
            user_id,
            url: "https://hooks.example.com/x".into(),
            description: None,
            event_types: Vec::new(),
            active: true,
            disabled_reason: None,
            failure_count: 0,
            last_delivery_at: None,
            created_at: at(0),
            secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into(),
        }
    }

    #[test]
    fn the_stores_debug_output_shows_neither_a_key_nor_a_webhook_secret() {
        let (mut store, user) = with_user(0.0);
        let endpoint = endpoint(user.user_id);
        let webhook_key = endpoint.secret.trim_start_matches("whsec_").to_owned();
        store.add_endpoint(endpoint).unwrap();
        let key_secret = user.api_key.rsplit('_').next().unwrap();
        let shown = format!("{store:?}");
        assert!(!shown.contains(key_secret), "the API key leaks: {shown}");
        assert!(!shown.contains(&webhook_key), "the webhook secret leaks");
    }

    #[test]
    fn an_account_has_at_most_five_endpoints() {
        let (mut store, user) = with_user(0.0);
        for _ in 0..MAX_ENDPOINTS {
            store.add_endpoint(endpoint(user.user_id)).unwrap();
        }
        let refused = store.add_endpoint(endpoint(user.user_id)).unwrap_err();
        assert_eq!(refused.to_string(), "Maximum 5 webhook endpoints allowed");
        assert_eq!(store.endpoints_of(user.user_id).len(), MAX_ENDPOINTS);
        // Another account has its own five.
        store.add_endpoint(endpoint(UserId::new_v4())).unwrap();
    }

    #[test]
    fn another_users_endpoint_is_neither_read_changed_rotated_nor_removed() {
        let (mut store, user) = with_user(0.0);
        let mine = endpoint(user.user_id);
        let id = mine.id.clone();
        store.add_endpoint(mine).unwrap();
        let stranger = UserId::new_v4();

        assert!(store.own_endpoint(stranger, &id).is_none());
        assert!(
            store
                .update_endpoint(stranger, &id, EndpointChange::default())
                .is_none()
        );
        assert!(!store.rotate_secret(stranger, &id, "whsec_other".into()));
        assert!(!store.remove_endpoint(stranger, &id));
        assert!(store.remove_endpoint(user.user_id, &id));
    }

    #[test]
    fn a_change_applies_only_what_is_given_and_reactivation_resets_failures() {
        let (mut store, user) = with_user(0.0);
        let mut mine = endpoint(user.user_id);
        mine.description = Some("prod".into());
        mine.disable(DisabledReason::ConsecutiveFailures);
        mine.failure_count = 720;
        let id = mine.id.clone();
        store.add_endpoint(mine).unwrap();

        let changed = store
            .update_endpoint(
                user.user_id,
                &id,
                EndpointChange {
                    active: Some(true),
                    ..EndpointChange::default()
                },
            )
            .unwrap();

        assert!(changed.active);
        assert_eq!(changed.failure_count, 0);
        assert_eq!(changed.description.as_deref(), Some("prod"));
    }

    #[test]
    fn a_failed_attempt_schedules_a_retry_and_a_success_ends_the_message() {
        let (mut store, user) = with_user(0.0);
        let mine = endpoint(user.user_id);
        store.add_endpoint(mine.clone()).unwrap();
        let id = store.enqueue_message(
            &mine,
            "generation.completed",
            "evt_1".into(),
            Bytes::from_static(b"{}"),
            at(0),
        );
        assert!(store.outgoing(id, Trigger::Scheduled).is_some());

        let failed = AttemptReport {
            status: Some(503),
            ..AttemptReport::default()
        };
        let retry = store
            .record_attempt(id, Trigger::Scheduled, at(0), 5, failed)
            .unwrap();
        assert!(retry > at(0));
        let delivered = AttemptReport {
            status: Some(204),
            ..AttemptReport::default()
        };
        assert_eq!(
            store.record_attempt(id, Trigger::Scheduled, retry, 5, delivered),
            None
        );

        let message = store.message(id).unwrap();
        assert_eq!(
            (message.state, message.attempts.len()),
            (MessageState::Delivered, 2)
        );
        assert!(
            store.outgoing(id, Trigger::Scheduled).is_none(),
            "nothing left to send"
        );
    }

    #[test]
    fn a_410_drops_the_message_and_disables_the_endpoint() {
        let (mut store, user) = with_user(0.0);
        let mine = endpoint(user.user_id);
        store.add_endpoint(mine.clone()).unwrap();
        let id = store.enqueue_message(
            &mine,
            "generation.failed",
            "evt_2".into(),
            Bytes::from_static(b"{}"),
            at(0),
        );

        let gone = AttemptReport {
            status: Some(410),
            ..AttemptReport::default()
        };
        assert_eq!(
            store.record_attempt(id, Trigger::Scheduled, at(0), 5, gone),
            None
        );

        assert_eq!(store.message(id).unwrap().state, MessageState::Dropped);
        assert!(!store.own_endpoint(user.user_id, &mine.id).unwrap().active);
    }

    /// Runs a task of `user` to its end; the ended task the store hands out.
    fn ended_task(store: &mut Store, user: UserId, prompt: &str) -> TaskEnded {
        let request = crate::store::generations::tests::request(prompt, 1.0);
        let id = store
            .create_generation(user, request, at(0), 0.0)
            .unwrap()
            .id;
        let ended: Vec<TaskEnded> = (0..60)
            .flat_map(|secs| store.run_due(at(secs)).ended)
            .collect();
        assert_eq!(ended.len(), 1, "one end, handed out once");
        assert_eq!(ended[0].generation_id, id);
        ended.into_iter().next().unwrap()
    }

    #[test]
    fn an_ended_task_is_told_to_each_active_endpoint_subscribed_to_its_event() {
        let (mut store, user) = with_user(10.0);
        let (every, mut failed_only, mut disabled, also) = (
            endpoint(user.user_id),
            endpoint(user.user_id),
            endpoint(user.user_id),
            endpoint(user.user_id),
        );
        failed_only.event_types = vec!["generation.failed".into()];
        disabled.disable(DisabledReason::Manual);
        for e in [&every, &failed_only, &disabled, &also] {
            store.add_endpoint(e.clone()).unwrap();
        }
        let ended = ended_task(&mut store, user.user_id, "a fox");
        assert_eq!(
            store.messages().count(),
            0,
            "nothing queued before the event"
        );

        let mut written = Vec::new();
        store.queue_event(&ended, |_, event_id| {
            written.push(event_id.to_owned());
            Bytes::from_static(b"{\"type\":\"generation.completed\"}")
        });

        assert_eq!(written.len(), 1, "one body, shared by every endpoint");
        let queued: Vec<(&str, &str, &str)> = store
            .messages()
            .map(|m| (m.endpoint_id.as_str(), m.event_id.as_str(), &*m.event_type))
            .collect();
        assert_eq!(
            queued,
            [
                (
                    every.id.as_str(),
                    written[0].as_str(),
                    "generation.completed"
                ),
                (
                    also.id.as_str(),
                    written[0].as_str(),
                    "generation.completed"
                ),
            ]
        );
        let ids: Vec<Uuid> = store.messages().map(|m| m.id).collect();
        assert_eq!(
            store.run_due(ended.at).deliveries,
            ids,
            "first attempts are due at once"
        );
    }

    /// The worker's loop: passes until no task ends, each ended task told of
    /// under the same lock, as `worker::run_due_jobs` does.
    #[test]
    fn tasks_that_end_together_are_each_told_of_though_retention_keeps_one() {
        let (mut store, user) = with_user(10.0);
        store.set_retention(crate::store::Retention {
            count: Some(1),
            age_secs: None,
        });
        store.add_endpoint(endpoint(user.user_id)).unwrap();
        let created: Vec<Uuid> = ["a fox", "an owl", "a hare"]
            .into_iter()
            .map(|prompt| {
                let request = crate::store::generations::tests::request(prompt, 1.0);
                store
                    .create_generation(user.user_id, request, at(0), 0.0)
                    .unwrap()
                    .id
            })
            .collect();

        let mut told = Vec::new();
        loop {
            let due = store.run_due(at(60));
            if due.ended.is_empty() {
                break;
            }
            for ended in &due.ended {
                store.queue_event(ended, |generation, _| {
                    told.push(generation.id);
                    Bytes::from_static(b"{}")
                });
            }
        }

        assert_eq!(told, created, "every end is told of, in order");
        assert_eq!(store.messages().count(), 3);
        assert_eq!(
            store.generations_of(user.user_id).count(),
            1,
            "and only then are the older ones forgotten"
        );
    }

    #[test]
    fn a_task_nobody_listens_to_has_no_event_written() {
        let (mut store, user) = with_user(10.0);
        let ended = ended_task(&mut store, user.user_id, "a fox");

        store.queue_event(&ended, |_, _| panic!("a body written for nobody"));

        assert_eq!(store.messages().count(), 0);
    }
}
