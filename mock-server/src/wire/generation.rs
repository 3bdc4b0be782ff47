//! The generation object, the answer to a create, the estimate, and the URLs of a
//! task's result files.

use std::fmt::Write;

use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::timestamp;
use crate::domain::catalog::{MediaType, Model};
use crate::domain::generation::{FailureCode, Generation, Status};
use crate::domain::money::Kopecks;
use crate::render::media::MediaKind;

/// The generation object of the contract, borrowing from the stored task so that
/// an answer is written without copying its prompt and parameters.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationView<'a> {
    id: Uuid,
    status: Status,
    model_slug: &'a str,
    media_type: MediaType,
    prompt: &'a str,
    params: &'a Map<String, Value>,
    cost_rub: Kopecks,
    output_urls: Vec<String>,
    error_code: Option<FailureCode>,
    error_message: Option<&'static str>,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
}

impl<'a> GenerationView<'a> {
    /// The view of `generation`, its result files under `base_url`.
    pub fn new(generation: &'a Generation, base_url: &str) -> Self {
        Self {
            id: generation.id,
            status: generation.status,
            model_slug: &generation.model_slug,
            media_type: generation.media_type,
            prompt: &generation.prompt,
            params: &generation.params,
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
    // Pushed piece by piece rather than `format!`ed: every read of a finished
    // generation writes these, and `format!` costs some 2,000 instructions.
    let mut id = Uuid::encode_buffer();
    let id = generation.id.hyphenated().encode_lower(&mut id);
    (0..generation.outputs)
        .map(|n| {
            let mut url = String::with_capacity(base_url.len() + 64);
            for piece in [base_url, "/outputs/", id, "/"] {
                url.push_str(piece);
            }
            write!(url, "{n}.{ext}").expect("a String takes any text");
            url
        })
        .collect()
}
