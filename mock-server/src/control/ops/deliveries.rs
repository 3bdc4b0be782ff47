//! `list_deliveries`: what the mock sent, every webhook message with its attempts;
//! `create_delivery`: a message of the caller's body, sent through the same path.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use mediagen_openapi::sets::EventType;

use crate::domain::UserId;
use crate::domain::webhook::{self, Attempt, Message};
use crate::error::ControlError;
use crate::state::AppState;

/// A webhook message the mock queued for one endpoint, with its attempts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Delivery {
    /// The message's id: the `webhook-id` header of every attempt.
    pub message_id: Uuid,
    /// The event's id, the same for every endpoint told of it.
    pub event_id: String,
    /// `generation.completed` or `generation.failed`.
    pub event_type: String,
    /// The endpoint it goes to.
    pub endpoint_id: String,
    /// The endpoint's owner.
    pub user_id: UserId,
    /// `pending`, `delivered`, `exhausted` (every retry failed) or `dropped`
    /// (the endpoint was disabled or deleted first).
    pub state: &'static str,
    /// When it was queued, on the mock's clock.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub created_at: DateTime<Utc>,
    /// The body every attempt sends.
    pub payload: Value,
    /// Its attempts, oldest first.
    pub attempts: Vec<DeliveryAttempt>,
}

/// One attempt to deliver a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DeliveryAttempt {
    /// The attempt's id.
    pub id: String,
    /// Its number, from 1.
    pub attempt: u32,
    /// `scheduled`, or `manual` for a redelivery asked through the API.
    pub trigger: &'static str,
    /// When it was sent, on the mock's clock.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub attempted_at: DateTime<Utc>,
    /// Whether the receiver answered with a 2xx.
    pub succeeded: bool,
    /// The receiver's status, if it answered.
    pub response_status: Option<u16>,
    /// Why there was no answer.
    pub error: Option<String>,
    /// Real milliseconds the receiver took.
    pub duration_ms: u64,
    /// The start of the receiver's answer.
    pub response_excerpt: Option<String>,
    /// When the next attempt is due, if one is scheduled.
    #[serde(serialize_with = "crate::wire::millis::option::serialize")]
    pub next_attempt_at: Option<DateTime<Utc>>,
}

impl Delivery {
    fn of(message: &Message) -> Self {
        Self {
            message_id: message.id,
            event_id: message.event_id.clone(),
            event_type: message.event_type.to_string(),
            endpoint_id: message.endpoint_id.clone(),
            user_id: message.user_id,
            state: message.state.as_str(),
            created_at: message.created_at,
            payload: serde_json::from_slice(&message.payload).unwrap_or(Value::Null),
            attempts: message.attempts.iter().map(DeliveryAttempt::of).collect(),
        }
    }
}

impl DeliveryAttempt {
    fn of(attempt: &Attempt) -> Self {
        Self {
            id: attempt.id.clone(),
            attempt: attempt.attempt,
            trigger: attempt.trigger.as_str(),
            attempted_at: attempt.attempted_at,
            succeeded: attempt.succeeded,
            response_status: attempt.response_status,
            error: attempt.error.clone(),
            duration_ms: attempt.duration_ms,
            response_excerpt: attempt.response_excerpt.clone(),
            next_attempt_at: attempt.next_attempt_at,
        }
    }
}

/// Queues `payload` as a webhook message to the endpoint `endpoint_id`, as the
/// service queues an event: signed with the endpoint's secret when sent, tried
/// on the retry schedule, in the journal and the verdict. The payload's `type`
/// must be an event type of the contract; its `id` is the event's id (a new
/// one when it has none). An endpoint that is not active takes none.
pub(crate) fn create_delivery(
    state: &AppState,
    endpoint_id: &str,
    payload: Value,
) -> Result<Delivery, ControlError> {
    let Some(event_type) = payload["type"].as_str().and_then(EventType::from_wire) else {
        return Err(ControlError::invalid(
            "/payload/type",
            "enum",
            format!(
                "payload.type must be an event type of the contract ({})",
                EventType::ALL.map(EventType::as_str).join(", ")
            ),
        ));
    };
    let event_id = payload["id"]
        .as_str()
        .map_or_else(webhook::new_event_id, str::to_owned);
    let bytes = serde_json::to_vec(&payload).unwrap_or_default();
    let now = state.now();
    let mut store = state.store();
    let endpoint = store.endpoint(endpoint_id).cloned().ok_or_else(|| {
        ControlError::NotFound(format!("Webhook endpoint {endpoint_id} not found"))
    })?;
    if !endpoint.active {
        return Err(ControlError::Conflict(format!(
            "Webhook endpoint {endpoint_id} is disabled: it takes no deliveries"
        )));
    }
    let id = store.enqueue_message(&endpoint, event_type.as_str(), event_id, bytes.into(), now);
    let delivery = store.message(id).map(Delivery::of);
    let wake = store.worker_wake_needed();
    drop(store);
    if wake {
        state.worker_notify().notify_one();
    }
    delivery.ok_or_else(|| ControlError::NotFound(format!("message {id} vanished")))
}

/// Every message the mock queued, oldest first.
pub(crate) fn list_deliveries(state: &AppState) -> Vec<Delivery> {
    state.store().messages().map(Delivery::of).collect()
}
