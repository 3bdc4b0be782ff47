//! The result files of succeeded tasks: what `outputUrls` point at.
//!
//! Like files on a storage service, they need no API key and do not count
//! against the API's limits; an unguessable task id is the capability.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Path;
use crate::domain::catalog::MediaType;
use crate::domain::generation::{Generation, Status};
use crate::error::ApiError;
use crate::render::media::{self, MediaKind};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/outputs/{id}/{file}", get(get_output))
        .method_not_allowed_fallback(super::method_not_allowed)
}

fn kind(media_type: MediaType) -> MediaKind {
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
    let ext = kind(generation.media_type).extension();
    (0..generation.outputs)
        .map(|n| format!("{base_url}/outputs/{}/{n}.{ext}", generation.id))
        .collect()
}

async fn get_output(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
) -> Response {
    let missing = || ApiError::not_found("No such output file").into_response();
    let Ok(id) = uuid::Uuid::parse_str(&id) else {
        return missing();
    };
    let Some(generation) = state.store().generations.get(&id).cloned() else {
        return missing();
    };
    let kind = kind(generation.media_type);
    let Some(index) = file
        .strip_suffix(kind.extension())
        .and_then(|stem| stem.strip_suffix('.'))
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return missing();
    };
    if generation.status != Status::Succeeded || index >= generation.outputs {
        return missing();
    }
    let seconds = state
        .catalog()
        .get(&generation.model_slug)
        .map_or(3.0, |m| m.output_seconds(&generation.params));
    let bytes = media::render(kind, generation.seed(), seconds);
    ([(header::CONTENT_TYPE, kind.content_type())], bytes).into_response()
}
