//! `GET /_mock/events`: a world's live journal as Server-Sent Events, one
//! `data:` line of JSON per event with its `seq` as the SSE `id`; a reader that
//! fell behind gets `{"type":"lagged","missed":N}` where the events it missed
//! were.

use std::convert::Infallible;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::control::{admin_token_given, bearer};
use crate::error::ApiError;
use crate::state::AppState;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/events", get(stream_events))
        .method_not_allowed_fallback(crate::routes::method_not_allowed)
}

/// Whether a request of the stream or the page carries the admin token, when
/// one is set: as the control API takes it, or as `?token=`, since a browser
/// cannot send a header when it opens a page or an `EventSource`. Neither
/// acts: every control action still needs the header.
pub(crate) fn admitted(state: &AppState, request: &Request) -> bool {
    let header = bearer(request.headers());
    if !header.is_empty() {
        return admin_token_given(state, header);
    }
    let query = request.uri().query().unwrap_or_default();
    let token = url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "token")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    admin_token_given(state, &token)
}

async fn stream_events(State(state): State<AppState>, request: Request) -> Response {
    if !admitted(&state, &request) {
        return ApiError::Authentication(
            "The event stream needs 'Authorization: Bearer <admin token>' or '?token=<admin token>'",
        )
        .into_response();
    }
    let events = state.events().subscribe();
    let stream = futures::stream::unfold(events.rx, |mut rx| async move {
        let message = match rx.recv().await {
            Ok(event) => SseEvent::default()
                .id(event.seq().to_string())
                .data(event.json()),
            Err(RecvError::Lagged(missed)) => {
                SseEvent::default().data(json!({"type": "lagged", "missed": missed}).to_string())
            }
            Err(RecvError::Closed) => return None,
        };
        Some((Ok::<_, Infallible>(message), rx))
    });
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            // A proxy in front must pass each event on at once.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Sse::new(stream).keep_alive(KeepAlive::default()),
    )
        .into_response()
}
