//! The bodies of `generation.completed` and `generation.failed`, in the
//! snake_case shape of the service document (Events, Payload shape).

use bytes::Bytes;
use chrono::{DateTime, Utc};
use mediagen_openapi::sets::EventType;
use serde_json::{Value, json};

use super::generation::output_urls;
use super::timestamp;
use crate::config::Responses;
use crate::contract::shape::shapes;
use crate::domain::catalog::MediaType;
use crate::domain::generation::{FailureCode, Generation, Status};

/// The writer of the events of tasks' ends that the store hands out: bodies
/// shaped by the response mode, links under the mock's base URL.
#[derive(Debug)]
pub struct Writer<'a> {
    base_url: &'a str,
    mode: Responses,
}

impl<'a> Writer<'a> {
    pub fn new(base_url: &'a str, mode: Responses) -> Self {
        Self { base_url, mode }
    }

    /// The body of the event `event_id` that tells of `generation`, which
    /// ended `at`.
    pub fn ended(&self, generation: &Generation, at: DateTime<Utc>, event_id: &str) -> Bytes {
        let body = for_generation(generation, self.base_url, event_id, at);
        Bytes::from(body_bytes(&body, self.mode))
    }
}

/// The body of the event of a task that just reached a final state (see
/// [`event_type`](crate::domain::webhook::event_type)).
fn for_generation(
    generation: &Generation,
    base_url: &str,
    event_id: &str,
    at: DateTime<Utc>,
) -> Value {
    if generation.status == Status::Succeeded {
        return completed(
            event_id,
            at,
            json!({
                "id": generation.id,
                "status": "SUCCEEDED",
                "media_type": generation.media_type,
                "output_urls": output_urls(base_url, generation),
                "cost_rub": generation.cost,
                "completed_at": timestamp(generation.finished_at.unwrap_or(at)),
            }),
        );
    }
    let code = generation
        .error_code
        .unwrap_or(FailureCode::ProviderInternal);
    failed(
        event_id,
        at,
        generation.id,
        code,
        generation.finished_at.unwrap_or(at),
    )
}

fn completed(event_id: &str, at: DateTime<Utc>, generation: Value) -> Value {
    json!({
        "id": event_id,
        "type": EventType::GenerationCompleted.as_str(),
        "created_at": timestamp(at),
        "data": {"generation": generation},
    })
}

fn failed(
    event_id: &str,
    at: DateTime<Utc>,
    id: uuid::Uuid,
    code: FailureCode,
    failed_at: DateTime<Utc>,
) -> Value {
    json!({
        "id": event_id,
        "type": EventType::GenerationFailed.as_str(),
        "created_at": timestamp(at),
        "data": {"generation": {
            "id": id,
            "status": "FAILED",
            "error_code": code,
            "error_message": code.message(),
            "failed_at": timestamp(failed_at),
        }},
    })
}

/// The bytes of an event body as the response mode sends it: webhooks follow
/// the same mode as the answers.
pub fn body_bytes(body: &Value, mode: Responses) -> Vec<u8> {
    let schema = match body["type"].as_str().and_then(EventType::from_wire) {
        Some(EventType::GenerationFailed) => "GenerationFailedEvent",
        Some(EventType::GenerationCompleted) | None => "GenerationCompletedEvent",
    };
    let shaped = match mode {
        Responses::Full => None,
        Responses::Minimal => Some(shapes().minimal(schema, body)),
        Responses::Extra => Some(shapes().extra(schema, body)),
    };
    serde_json::to_vec(shaped.as_ref().unwrap_or(body)).unwrap_or_default()
}

/// A sample event of `event_type` for `POST /v1/webhook-endpoints/{id}/test`.
pub fn sample(event_type: EventType, base_url: &str, event_id: &str, at: DateTime<Utc>) -> Value {
    let id = uuid::Uuid::new_v4();
    match event_type {
        EventType::GenerationFailed => {
            failed(event_id, at, id, FailureCode::ProviderUnavailable, at)
        }
        EventType::GenerationCompleted => completed(
            event_id,
            at,
            json!({
                "id": id,
                "status": "SUCCEEDED",
                "media_type": MediaType::Image,
                "output_urls": [format!("{base_url}/outputs/{id}/0.png")],
                "cost_rub": 2.5,
                "completed_at": timestamp(at),
            }),
        ),
    }
}
