//! A fault rule's effect on one request (the rules themselves are in
//! `domain/fault.rs`): the service middleware applies them to the API, and
//! [`gate`] to the result files and the upload storage, which have no key.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::domain::fault::Effect;
use crate::error::ApiError;
use crate::state::AppState;

/// An answer that is never sent: its body fails before a byte of it is
/// written, so the server closes the connection and the client sees it end
/// without a status line.
pub fn dropped() -> Response {
    let failing = futures::stream::once(async {
        Err::<Bytes, _>(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "a fault rule dropped the connection",
        ))
    });
    Response::new(Body::from_stream(failing))
}

/// Waits `seconds` real seconds: a delay is what a client on the network
/// sees, whatever the mock's clock does.
pub async fn delay(seconds: f64) {
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
}

/// Faults for the routes outside the API (result files, upload storage):
/// they match on method and path only, since these routes take no key.
pub async fn gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let effect = state
        .store()
        .take_fault(request.method().as_str(), request.uri().path(), None)
        .map(|(_, effect)| effect);
    match effect {
        None => next.run(request).await,
        Some(Effect::Error(error)) => {
            axum::response::IntoResponse::into_response(ApiError::from(error))
        }
        Some(Effect::Drop) => dropped(),
        Some(Effect::DropAfter) => {
            // The answer is made, so its work is done, and then never sent.
            drop(next.run(request).await);
            dropped()
        }
        Some(Effect::Delay { seconds }) => {
            let response = next.run(request).await;
            delay(seconds).await;
            response
        }
    }
}
