//! Webhook endpoints as the API shows them (never the secret but at creation and
//! rotation), queued messages and delivery attempts.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::timestamp;
use crate::domain::webhook::{Attempt, Endpoint, Message};

/// An endpoint as a read shows it: never the secret.
pub fn endpoint(endpoint: &Endpoint) -> Value {
    json!({
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "eventTypes": endpoint.event_types,
        "active": endpoint.active,
        "disabledReason": endpoint.disabled_reason,
        "failureCount": endpoint.failure_count,
        "lastDeliveryAt": endpoint.last_delivery_at.map(timestamp),
        "createdAt": timestamp(endpoint.created_at),
    })
}

/// An endpoint as the list shows it: the seven fields the service document
/// names for the list, and no other.
pub fn listed(endpoint: &Endpoint) -> Value {
    json!({
        "id": endpoint.id,
        "url": endpoint.url,
        "eventTypes": endpoint.event_types,
        "active": endpoint.active,
        "failureCount": endpoint.failure_count,
        "lastDeliveryAt": endpoint.last_delivery_at.map(timestamp),
        "createdAt": timestamp(endpoint.created_at),
    })
}

/// The answer to creation: the four fields of the service document, the secret
/// shown once.
pub fn created(endpoint: &Endpoint) -> Value {
    json!({
        "id": endpoint.id,
        "url": endpoint.url,
        "secret": endpoint.secret,
        "eventTypes": endpoint.event_types,
    })
}

/// The answer to rotate-secret: the new secret, shown once.
pub fn rotated(id: &str, secret: &str, at: DateTime<Utc>) -> Value {
    json!({"id": id, "secret": secret, "rotatedAt": timestamp(at)})
}

/// A delivery attempt queued by the test or redeliver operation.
pub fn queued(message: &Message, at: DateTime<Utc>) -> Value {
    json!({
        "messageId": message.id,
        "eventId": message.event_id,
        "eventType": message.event_type,
        "scheduledAt": timestamp(at),
    })
}

/// One delivery attempt of `message`, as the endpoint's delivery list shows it.
pub fn attempt(message: &Message, attempt: &Attempt) -> Value {
    json!({
        "id": attempt.id,
        "messageId": message.id,
        "eventId": message.event_id,
        "eventType": message.event_type,
        "attempt": attempt.attempt,
        "trigger": attempt.trigger.as_str(),
        "attemptedAt": timestamp(attempt.attempted_at),
        "outcome": if attempt.succeeded { "succeeded" } else { "failed" },
        "responseStatus": attempt.response_status,
        "error": attempt.error,
        "durationMs": attempt.duration_ms,
        "responseExcerpt": attempt.response_excerpt,
        "nextAttemptAt": attempt.next_attempt_at.map(timestamp),
    })
}
