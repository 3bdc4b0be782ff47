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
use crate::domain::generation::Status;
use crate::error::ApiError;
use crate::render::media;
use crate::state::AppState;
use crate::wire::generation::media_kind;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/outputs/{id}/{file}", get(get_output))
        .method_not_allowed_fallback(super::method_not_allowed)
}

async fn get_output(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
) -> Response {
    let missing = || ApiError::not_found("No such output file").into_response();
    let Ok(id) = uuid::Uuid::parse_str(&id) else {
        return missing();
    };
    let Some(generation) = state.store().generation(id).cloned() else {
        return missing();
    };
    let kind = media_kind(generation.media_type);
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
