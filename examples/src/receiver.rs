//! A webhook receiver to copy: verify every delivery with `webhook-verify`, answer at
//! once, skip the retries of a message already handled, and do the work elsewhere.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use mediagen::WebhookEvent;
use tokio::sync::mpsc;
use webhook_verify::{Webhook, WebhookError};

/// A verified delivery, handed to the worker.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// `webhook-id`: the same on every retry of one message.
    pub webhook_id: String,
    /// The event, typed: `generation.completed`, `generation.failed`, or one added later.
    pub event: WebhookEvent,
}

#[derive(Debug)]
struct Receiver {
    webhook: Webhook,
    // In production this is a table with a unique key on the webhook-id, kept for as
    // long as the service retries a message (3 days).
    seen: Mutex<HashSet<String>>,
    work: mpsc::UnboundedSender<Delivery>,
}

/// `POST /webhooks`, verifying with `secret` (the endpoint's `whsec_…`) and sending
/// each new delivery to `work`.
pub fn router(secret: &str, work: mpsc::UnboundedSender<Delivery>) -> Result<Router, WebhookError> {
    let receiver = Receiver {
        webhook: Webhook::new(secret)?,
        seen: Mutex::new(HashSet::new()),
        work,
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
    // The raw body, byte for byte: the signature covers it, and parsing then
    // re-serialising the JSON would change it. `verify` also refuses a timestamp more
    // than 5 minutes away, so a captured delivery cannot be replayed later.
    if receiver.webhook.verify(&body, &headers).is_err() {
        return StatusCode::BAD_REQUEST;
    }
    let Ok(event) = WebhookEvent::parse(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    // Present, since the signature covers it.
    let webhook_id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();

    let mut seen = receiver.seen.lock().unwrap_or_else(PoisonError::into_inner);
    if seen.insert(webhook_id.clone()) {
        // Queued, not done here: the service counts an answer after 10 seconds as a
        // failure and sends the message again.
        let delivery = Delivery {
            webhook_id: webhook_id.clone(),
            event,
        };
        if receiver.work.send(delivery).is_err() {
            // Nobody is left to do the work: forget the message, so that the
            // service's retry is handled rather than skipped.
            seen.remove(&webhook_id);
            return StatusCode::SERVICE_UNAVAILABLE;
        }
    }
    // A retry of a message already handled is acknowledged too, or it keeps coming.
    StatusCode::NO_CONTENT
}

/// The line the example receivers print for an event they handled.
pub fn describe(event: &WebhookEvent) -> String {
    match event {
        WebhookEvent::GenerationCompleted { generation, .. } => format!(
            "{} completed: {}",
            generation.id,
            generation.output_urls.join(" ")
        ),
        WebhookEvent::GenerationFailed { generation, .. } => format!(
            "{} failed with {} (its cost is back on the balance)",
            generation.id, generation.error_code
        ),
        // Events added after this program was written: acknowledged, ignored.
        other => format!("{} ignored", other.event_type()),
    }
}
