//! Webhook endpoints, the messages sent to them and every delivery attempt
//! (service document, Events and the webhook endpoint states).

use bytes::Bytes;
use chrono::{DateTime, Duration, Utc};
use mediagen_openapi::sets::{EventType, EventTypeFilter};
use serde::Serialize;
use uuid::Uuid;

use super::UserId;
use super::generation::{Generation, Status};

/// Endpoints per account.
pub const MAX_ENDPOINTS: usize = 5;
/// Retries after the first attempt of a message.
pub const MAX_RETRIES: u32 = 15;
/// A receiver that has not answered after this many real seconds has failed
/// the attempt (the default of `--delivery-timeout-seconds`).
pub const DELIVERY_TIMEOUT_SECS: f64 = 10.0;
/// Consecutive failures (30 × 24) that deactivate an endpoint.
pub const DEACTIVATE_AFTER: u32 = 720;
/// First and longest delays of the retry schedule.
const FIRST_RETRY_SECS: f64 = 5.0;
const LAST_RETRY_SECS: f64 = 3.0 * 24.0 * 3600.0;
/// Share of a delay that jitter may add or take away.
const JITTER: f64 = 0.2;

/// What `eventTypes` accepts: the contract's exact names, the group and everything.
pub const EVENT_FILTERS: &[&str] = &EventTypeFilter::NAMES;

/// The event a task that just reached a final state sends, if it sends one (a
/// cancelled task does not).
pub fn event_type(generation: &Generation) -> Option<&'static str> {
    match generation.status {
        Status::Succeeded => Some(EventType::GenerationCompleted.as_str()),
        Status::Failed => Some(EventType::GenerationFailed.as_str()),
        _ => None,
    }
}

/// A task that has just reached a final state, as the store hands it out: the
/// store keeps records and writes no JSON, so `wire/events.rs` writes the body
/// of its event, which the store then queues for each subscribed endpoint
/// ([`event_type`] says which event, if any). It names the task rather than
/// copying it: the event is queued under the same lock, and a task that ended
/// is kept at least until the worker's next pass.
#[derive(Debug, Clone, Copy)]
pub struct TaskEnded {
    /// The task.
    pub generation_id: Uuid,
    /// When it ended, on the mock's clock.
    pub at: DateTime<Utc>,
}

/// Why an endpoint cannot be added or changed as asked (the validation table of
/// `POST /v1/webhook-endpoints`; the address rules are in `address.rs`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EndpointRefusal {
    /// The account already has the most endpoints allowed.
    #[error("Maximum {MAX_ENDPOINTS} webhook endpoints allowed")]
    TooMany,
    /// Names `eventTypes` does not accept (`generation.succeeded` among them: the
    /// contract's design accepts only the documented names), with their positions.
    #[error(
        "Unknown event type {}; allowed values: {}",
        .0.iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>().join(", "),
        EVENT_FILTERS.join(", ")
    )]
    UnknownEvents(Vec<(usize, serde_json::Value)>),
}

/// The names of an `eventTypes` list, or the entries it does not accept.
pub fn event_types(list: &[serde_json::Value]) -> Result<Vec<String>, EndpointRefusal> {
    let unknown: Vec<(usize, serde_json::Value)> = list
        .iter()
        .enumerate()
        .filter(|(_, v)| v.as_str().is_none_or(|name| !EVENT_FILTERS.contains(&name)))
        .map(|(i, v)| (i, v.clone()))
        .collect();
    if !unknown.is_empty() {
        return Err(EndpointRefusal::UnknownEvents(unknown));
    }
    Ok(list
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisabledReason {
    /// The receiver answered 410 Gone.
    #[serde(rename = "gone_410")]
    Gone,
    ConsecutiveFailures,
    Manual,
}

#[derive(Clone, serde::Deserialize, serde::Serialize)]
pub struct Endpoint {
    pub id: String,
    pub user_id: UserId,
    pub url: String,
    pub description: Option<String>,
    pub event_types: Vec<String>,
    pub active: bool,
    pub disabled_reason: Option<DisabledReason>,
    /// Consecutive failed attempts since the last success.
    pub failure_count: u32,
    pub last_delivery_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// `whsec_…`; shown only at creation and rotation.
    pub secret: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("event_types", &self.event_types)
            .field("active", &self.active)
            .field("failure_count", &self.failure_count)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Whether this endpoint takes `event_type`: an empty list means all events.
    pub fn subscribed(&self, event_type: &str) -> bool {
        self.event_types.is_empty()
            || self.event_types.iter().any(|f| {
                f == "*"
                    || f == event_type
                    || (f == "generation.*" && event_type.starts_with("generation."))
            })
    }

    /// Records the end of an attempt and applies the endpoint rules: 410
    /// disables at once, 720 failures in a row deactivate, a success resets.
    pub fn record(&mut self, outcome: &AttemptOutcome, at: DateTime<Utc>) {
        self.last_delivery_at = Some(at);
        match outcome {
            AttemptOutcome::Delivered => self.failure_count = 0,
            AttemptOutcome::Gone => {
                self.failure_count += 1;
                self.disable(DisabledReason::Gone);
            }
            AttemptOutcome::Failed { .. } => {
                self.failure_count += 1;
                if self.failure_count >= DEACTIVATE_AFTER {
                    self.disable(DisabledReason::ConsecutiveFailures);
                }
            }
        }
    }

    pub fn disable(&mut self, reason: DisabledReason) {
        self.active = false;
        self.disabled_reason = Some(reason);
    }

    /// Turns a disabled or deactivated endpoint back on with a clean count.
    pub fn reactivate(&mut self) {
        self.active = true;
        self.disabled_reason = None;
        self.failure_count = 0;
    }
}

/// A fresh endpoint id, `we_` and 24 letters and digits.
pub fn new_endpoint_id() -> String {
    format!("we_{}", &Uuid::new_v4().simple().to_string()[..24])
}

/// A fresh event id, `evt_` and 24 letters and digits.
pub fn new_event_id() -> String {
    format!("evt_{}", &Uuid::new_v4().simple().to_string()[..24])
}

/// The delay before retry `retry` (1 to 15): geometric from 5 seconds to 3
/// days, scaled by `1 + 0.2 × jitter` with `jitter` in −1..=1 so that many
/// failing messages do not retry in lockstep.
pub fn retry_delay(retry: u32, jitter: f64) -> Duration {
    let step = f64::from(retry.clamp(1, MAX_RETRIES) - 1) / f64::from(MAX_RETRIES - 1);
    let base = FIRST_RETRY_SECS * (LAST_RETRY_SECS / FIRST_RETRY_SECS).powf(step);
    let jittered = base * (1.0 + JITTER * jitter.clamp(-1.0, 1.0));
    seconds(jittered.clamp(FIRST_RETRY_SECS, LAST_RETRY_SECS))
}

/// A receiver's `retry-after` is honoured when it asks for more time than the
/// schedule gives, up to the schedule's longest delay.
pub fn honour_retry_after(scheduled: Duration, retry_after_secs: Option<u64>) -> Duration {
    match retry_after_secs {
        Some(secs) => scheduled.max(seconds((secs as f64).min(LAST_RETRY_SECS))),
        None => scheduled,
    }
}

fn seconds(secs: f64) -> Duration {
    Duration::milliseconds((secs * 1000.0) as i64)
}

/// How one attempt ended, judged as the service document says: 2xx (and any
/// status below 400) delivers; 410 disables; 400 and above, a transport error
/// or no answer within 10 seconds fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    Gone,
    Failed { retry_after_secs: Option<u64> },
}

impl AttemptOutcome {
    pub fn from_status(status: u16, retry_after_secs: Option<u64>) -> Self {
        match status {
            410 => Self::Gone,
            s if s >= 400 => Self::Failed { retry_after_secs },
            _ => Self::Delivered,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum Trigger {
    Scheduled,
    Manual,
}

impl Trigger {
    /// The name the mock's lists give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Manual => "manual",
        }
    }
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Attempt {
    pub id: String,
    pub attempt: u32,
    pub trigger: Trigger,
    pub attempted_at: DateTime<Utc>,
    pub succeeded: bool,
    pub response_status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
    pub response_excerpt: Option<String>,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum MessageState {
    Pending,
    Delivered,
    /// Every retry failed.
    Exhausted,
    /// The endpoint was disabled or deleted before delivery.
    Dropped,
}

impl MessageState {
    /// The name the mock's lists give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Exhausted => "exhausted",
            Self::Dropped => "dropped",
        }
    }
}

/// One event for one endpoint. Its id is the `webhook-id` header, the same on
/// every attempt; its body is fixed at creation.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Message {
    pub id: Uuid,
    pub event_id: String,
    /// Always one of the contract's event types, borrowed from its table.
    pub event_type: std::borrow::Cow<'static, str>,
    pub endpoint_id: String,
    pub user_id: UserId,
    #[serde(with = "super::persist::text_bytes")]
    pub payload: Bytes,
    pub created_at: DateTime<Utc>,
    pub state: MessageState,
    /// Scheduled attempts made so far (manual ones do not use up retries).
    pub scheduled_attempts: u32,
    pub attempts: Vec<Attempt>,
}

/// Bytes of a receiver's answer kept with an attempt.
pub const EXCERPT_BYTES: usize = 1024;

/// The first 1 KiB of an answer, as text.
pub fn excerpt(body: &[u8]) -> Option<String> {
    (!body.is_empty())
        .then(|| String::from_utf8_lossy(&body[..body.len().min(EXCERPT_BYTES)]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(filters: &[&str]) -> Endpoint {
        Endpoint {
            id: new_endpoint_id(),
            user_id: UserId::new_v4(),
            url: "https://hooks.example.com".into(),
            description: None,
            event_types: filters.iter().map(|s| (*s).to_owned()).collect(),
            active: true,
            disabled_reason: None,
            failure_count: 0,
            last_delivery_at: None,
            created_at: Utc::now(),
            secret: "whsec_x".into(),
        }
    }

    #[test]
    fn subscriptions_take_exact_names_the_group_all_and_empty() {
        assert!(endpoint(&[]).subscribed("generation.failed"));
        assert!(endpoint(&["*"]).subscribed("generation.failed"));
        assert!(endpoint(&["generation.*"]).subscribed("generation.completed"));
        assert!(endpoint(&["generation.completed"]).subscribed("generation.completed"));
        assert!(!endpoint(&["generation.completed"]).subscribed("generation.failed"));
    }

    #[test]
    fn unknown_event_names_are_reported_and_succeeded_is_not_accepted() {
        let given = [
            serde_json::json!("generation.completed"),
            serde_json::json!("generation.succeeded"),
            serde_json::json!(7),
        ];
        let refused = event_types(&given).unwrap_err();
        assert_eq!(
            refused,
            EndpointRefusal::UnknownEvents(vec![
                (1, serde_json::json!("generation.succeeded")),
                (2, serde_json::json!(7))
            ])
        );
        assert!(refused.to_string().starts_with(
            "Unknown event type \"generation.succeeded\", 7; allowed values: generation.completed"
        ));
        assert_eq!(event_types(&given[..1]).unwrap(), ["generation.completed"]);
    }

    #[test]
    fn retry_schedule_grows_from_five_seconds_to_three_days() {
        assert_eq!(retry_delay(1, 0.0), Duration::seconds(5));
        assert_eq!(retry_delay(15, 0.0), Duration::days(3));
        for retry in 2..=15 {
            assert!(retry_delay(retry, 0.0) > retry_delay(retry - 1, 0.0));
        }
    }

    #[test]
    fn jitter_stays_within_a_fifth_and_inside_the_bounds() {
        for retry in 1..=15 {
            let base = retry_delay(retry, 0.0).num_milliseconds() as f64;
            for jitter in [-1.0, -0.5, 0.5, 1.0, 7.0] {
                let d = retry_delay(retry, jitter);
                assert!(d >= Duration::seconds(5) && d <= Duration::days(3));
                assert!((d.num_milliseconds() as f64 - base).abs() <= base * 0.2 + 1.0);
            }
        }
    }

    #[test]
    fn retry_after_lengthens_a_delay_but_never_past_three_days() {
        let five = Duration::seconds(5);
        assert_eq!(honour_retry_after(five, Some(60)), Duration::seconds(60));
        assert_eq!(honour_retry_after(five, Some(1)), five);
        assert_eq!(honour_retry_after(five, Some(u64::MAX)), Duration::days(3));
    }

    #[test]
    fn status_410_disables_and_720_failures_in_a_row_deactivate() {
        let mut gone = endpoint(&[]);
        gone.record(&AttemptOutcome::from_status(410, None), Utc::now());
        assert_eq!(
            (gone.active, gone.disabled_reason),
            (false, Some(DisabledReason::Gone))
        );

        let mut failing = endpoint(&[]);
        for _ in 0..719 {
            failing.record(&AttemptOutcome::from_status(500, None), Utc::now());
        }
        assert!(failing.active);
        failing.record(&AttemptOutcome::Delivered, Utc::now());
        assert_eq!(failing.failure_count, 0, "a success resets the count");
        for _ in 0..720 {
            failing.record(&AttemptOutcome::from_status(503, None), Utc::now());
        }
        assert_eq!(
            failing.disabled_reason,
            Some(DisabledReason::ConsecutiveFailures)
        );
        failing.reactivate();
        assert!(failing.active && failing.failure_count == 0);
    }
}
