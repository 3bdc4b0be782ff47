//! A webhook receiver to copy: verify every delivery with `webhook-verify`, answer at
//! once, skip the retries of a message already handled, and do the work elsewhere.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use tokio::sync::mpsc;
use webhook_verify::{Webhook, WebhookError};

/// A verified event, handed to the worker.
#[derive(Debug, Clone)]
pub struct Event {
    /// `webhook-id`: the same on every retry of one message.
    pub webhook_id: String,
    /// `generation.completed`, `generation.failed`, or a type added later.
    pub event_type: String,
    /// The whole body, parsed.
    pub payload: serde_json::Value,
}

#[derive(Debug)]
struct Receiver {
    webhook: Webhook,
    // In production this is a table with a unique key on the webhook-id, kept for as
    // long as the service retries a message (3 days).
    seen: Mutex<HashSet<String>>,
    events: mpsc::UnboundedSender<Event>,
}

/// `POST /webhooks` verifying with `secret` (the endpoint's `whsec_…`) and sending
/// each new event to `events`.
pub fn router(secret: &str, events: mpsc::UnboundedSender<Event>) -> Result<Router, WebhookError> {
    let receiver = Receiver {
        webhook: Webhook::new(secret)?,
        seen: Mutex::new(HashSet::new()),
        events,
    };
    Ok(Router::new()
        .route("/webhooks", post(receive))
        .with_state(Arc::new(receiver)))
}

async fn receive(
    State(receiver): State<Arc<Receiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    // The raw body, byte for byte: parsing and re-serialising JSON would change it.
    if receiver.webhook.verify(&body, &headers).is_err() {
        return StatusCode::BAD_REQUEST;
    }
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let webhook_id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let first_time = receiver
        .seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(webhook_id.clone());
    if first_time {
        let event_type = payload["type"].as_str().unwrap_or_default().to_owned();
        // Queued, not processed here: the service waits at most 10 seconds for an answer.
        receiver
            .events
            .send(Event {
                webhook_id,
                event_type,
                payload,
            })
            .ok();
    }
    // A retry of a message already handled is acknowledged too, or it comes back.
    StatusCode::NO_CONTENT
}
