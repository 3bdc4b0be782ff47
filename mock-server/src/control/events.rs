//! The HTTP face of `stream_events`, `GET /_mock/events`: a world's live
//! journal (`crate::events`) as Server-Sent Events, one
//! `data:` line of JSON per event with its `seq` as the SSE `id`; a reader that
//! fell behind gets `{"type":"lagged","missed":N}` where the events it missed
//! were. With `?history=true` the stream starts with what the world's records
//! tell of the time before it opened (`store/history.rs`), each event with
//! `seq` 0 and no SSE `id`, and a comment `: end of history`, then goes on
//! live with nothing lost or told twice. A reader that comes back with
//! `Last-Event-ID` (as every SSE client does) gets what happened since its
//! last event first, or `lagged` for what is no longer kept.

use std::convert::Infallible;
use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::ops::journal;
use super::{admin_token_given, bearer, invalid};
use crate::error::{ApiError, Result};
use crate::events::{Bus, Event, EventKind, EventStream, Published};
use crate::state::AppState;

/// An idle stream sends a comment this often.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long the first event of a burst waits for the rest.
const GATHER: Duration = Duration::from_millis(5);
/// Events written at most in one frame.
const MAX_FRAME: usize = 1024;

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
    admin_token_given(state, &query_value(request, "token").unwrap_or_default())
}

/// The value of the query parameter `name`, when given.
fn query_value(request: &Request, name: &str) -> Option<String> {
    let query = request.uri().query().unwrap_or_default();
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// Whether the reader asked for the history (`?history=true`).
fn history_wanted(request: &Request) -> Result<bool> {
    match query_value(request, "history").as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(invalid(
            "history",
            "type",
            format!("history must be true or false, not '{other}'"),
        )),
    }
}

/// The `seq` of the last event a returning reader saw (`Last-Event-ID`).
fn last_event_id(request: &Request) -> Result<Option<u64>> {
    let Some(value) = request.headers().get("last-event-id") else {
        return Ok(None);
    };
    match value.to_str().ok().and_then(|v| v.trim().parse().ok()) {
        Some(seq) => Ok(Some(seq)),
        None => Err(invalid(
            "Last-Event-ID",
            "type",
            "Last-Event-ID must be the seq of an event (a whole number)".to_owned(),
        )),
    }
}

/// The history's events as SSE messages without an `id`: they were told
/// before this reader came, so they have no place in the numbering. A comment
/// marks where the history ends, for a reader that wants only the past.
fn history_frame(history: Vec<(chrono::DateTime<chrono::Utc>, EventKind)>) -> String {
    let mut frame = String::new();
    for (at, kind) in history {
        let event = Event { seq: 0, at, kind };
        // An event always serializes: its members are strings, numbers and times.
        let json = serde_json::to_string(&event).unwrap_or_default();
        let _ = write!(frame, "data: {json}\n\n");
    }
    frame.push_str(": end of history\n\n");
    frame
}

/// A returning reader's first frame: `lagged` for the events no longer kept,
/// then the kept ones after its last.
fn resumed_frame(missed: u64, replay: &[Arc<Published>]) -> String {
    let mut frame = String::new();
    if missed > 0 {
        write(&mut frame, Err(RecvError::Lagged(missed)));
    }
    for event in replay {
        write(&mut frame, Ok(Arc::clone(event)));
    }
    frame
}

/// The live reader of an HTTP stream: when the client goes, the world keeps
/// its journal on a while, so that a client that comes back with
/// `Last-Event-ID` finds what it missed.
struct Following {
    events: EventStream,
    bus: Bus,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.bus.linger();
    }
}

/// An SSE message: `id` (the event's `seq`) and `data` (its JSON, one line);
/// in place of missed events, `{"type":"lagged","missed":N}` without an id.
fn write(frame: &mut String, received: Result<Arc<Published>, RecvError>) {
    match received {
        Ok(event) => {
            // JSON written by serde has no raw line break: one `data` line.
            let _ = write!(frame, "id: {}\ndata: {}\n\n", event.seq(), event.json());
        }
        Err(RecvError::Lagged(missed)) => {
            let _ = write!(
                frame,
                "data: {{\"type\":\"lagged\",\"missed\":{missed}}}\n\n"
            );
        }
        Err(RecvError::Closed) => {}
    }
}

async fn stream_events(State(state): State<AppState>, request: Request) -> Response {
    if !admitted(&state, &request) {
        return ApiError::Authentication(
            "The event stream needs 'Authorization: Bearer <admin token>' or '?token=<admin token>'",
        )
        .into_response();
    }
    let (history, after) = match (history_wanted(&request), last_event_id(&request)) {
        (Ok(history), Ok(after)) => (history, after),
        (Err(error), _) | (_, Err(error)) => return error.into_response(),
    };
    // A returning reader resumes where it was; the history was told to it before.
    let (first, events) = match after {
        Some(after) => {
            let resumed = journal::resume_events(&state, after);
            (
                resumed_frame(resumed.missed, &resumed.replay),
                resumed.stream,
            )
        }
        None if history => {
            let (history, events) = journal::stream_events(&state, true);
            (history_frame(history), events)
        }
        None => (String::new(), journal::stream_events(&state, false).1),
    };
    let first =
        futures::stream::iter((!first.is_empty()).then(|| Ok::<_, Infallible>(Bytes::from(first))));
    let following = Following {
        events,
        bus: state.events().clone(),
    };
    let live = futures::stream::unfold(following, |mut following| async move {
        let rx = &mut following.events.rx;
        let mut frame = String::new();
        match tokio::time::timeout(KEEP_ALIVE, rx.recv()).await {
            // A comment line, so that proxies and clients keep an idle stream open.
            Err(_) => frame.push_str(":\n\n"),
            Ok(Err(RecvError::Closed)) => return None,
            Ok(first) => {
                write(&mut frame, first);
                // One write and one wake-up for what comes in a burst, rather
                // than one per event: under load the readers cost the
                // requests little.
                tokio::time::sleep(GATHER).await;
                for _ in 1..MAX_FRAME {
                    match rx.try_recv() {
                        Ok(event) => write(&mut frame, Ok(event)),
                        Err(TryRecvError::Lagged(missed)) => {
                            write(&mut frame, Err(RecvError::Lagged(missed)));
                        }
                        Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                    }
                }
            }
        }
        Some((Ok::<_, Infallible>(Bytes::from(frame)), following))
    });
    let stream = futures::StreamExt::chain(first, live);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-store"),
            // A proxy in front must pass each event on at once.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}
