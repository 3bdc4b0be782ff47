//! The generation object, the answer to a create, the estimate, and the URLs of a
//! task's result files.

use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::timestamp;
use crate::domain::catalog::{MediaType, Model};
use crate::domain::generation::{FailureCode, Generation, Status};
use crate::domain::money::Kopecks;
use crate::render::media::MediaKind;

/// The generation object of the contract.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationView {
    id: Uuid,
    status: Status,
    model_slug: String,
    media_type: MediaType,
    prompt: String,
    params: Map<String, Value>,
    cost_rub: Kopecks,
    output_urls: Vec<String>,
    error_code: Option<FailureCode>,
    error_message: Option<&'static str>,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
}

impl GenerationView {
    /// The view of `generation`, its result files under `base_url`.
    pub fn new(generation: &Generation, base_url: &str) -> Self {
        Self {
            id: generation.id,
            status: generation.status,
            model_slug: generation.model_slug.clone(),
            media_type: generation.media_type,
            prompt: generation.prompt.clone(),
            params: generation.params.clone(),
            cost_rub: generation.cost,
            output_urls: output_urls(base_url, generation),
            error_code: generation.error_code,
            error_message: generation.error_code.map(FailureCode::message),
            created_at: timestamp(generation.created_at),
            started_at: generation.started_at.map(timestamp),
            finished_at: generation.finished_at.map(timestamp),
        }
    }
}

/// Rule 1 of `POST /v1/generations`: exactly `{id, status, costRub}`.
pub fn created(generation: &Generation) -> Value {
    json!({"id": generation.id, "status": generation.status, "costRub": generation.cost})
}

/// The price of a would-be generation and whether the balance covers it.
pub fn estimate(model: &Model, cost: Kopecks, available: Kopecks) -> Value {
    json!({
        "modelSlug": model.slug,
        "mediaType": model.media_type,
        "costRub": cost,
        "currency": "RUB",
        "availableRub": available,
        "sufficient": available >= cost,
    })
}

/// The kind of file a model of `media_type` produces.
pub fn media_kind(media_type: MediaType) -> MediaKind {
    match media_type {
        MediaType::Image => MediaKind::Image,
        MediaType::Video => MediaKind::Video,
        MediaType::Voice | MediaType::Music => MediaKind::Audio,
    }
}

/// The URLs of a task's result files, filled once it succeeded.
pub fn output_urls(base_url: &str, generation: &Generation) -> Vec<String> {
    if generation.status != Status::Succeeded {
        return Vec::new();
    }
    let ext = media_kind(generation.media_type).extension();
    (0..generation.outputs)
        .map(|n| format!("{base_url}/outputs/{}/{n}.{ext}", generation.id))
        .collect()
}
