//! The control API under `/_mock/`: users and keys, the clock, model states,
//! forced outcomes, faults, settings, payments, what the mock saw and sent,
//! snapshots, worlds and reset. Not part of the service: outside its rate
//! limits, its faults and its request log, and guarded by `--admin-token` when
//! set.
//!
//! Each operation is written once in [`ops`]; the handlers of this folder are
//! its HTTP face: they read the path and the body (checked against its schema
//! of the control contract), call the operation, and answer its value or its
//! [`ControlError`](crate::error::ControlError) in the service's envelope.

mod billing;
pub(crate) mod events;
mod faults;
mod journal;
pub(crate) mod ops;
mod settings;
mod users;
mod verdict;

use axum::extract::{FromRequest, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use crate::contract::FieldError;
use crate::domain::outcome::ForcedOutcome;
use crate::error::{ApiError, Result};
use crate::state::AppState;

/// The control API of one world.
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(users::router())
        .merge(faults::router())
        .merge(billing::router())
        .merge(settings::router())
        .merge(journal::router())
        .merge(verdict::router())
        .method_not_allowed_fallback(crate::routes::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_admin_token,
        ))
}

pub(crate) async fn require_admin_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if !admin_token_given(&state, bearer(request.headers())) {
        return ApiError::Authentication(
            "The control API needs 'Authorization: Bearer <admin token>' (or, in a world, the world's controlToken)",
        )
        .into_response();
    }
    next.run(request).await
}

/// The token of an `Authorization: Bearer` header, empty when there is none.
pub(crate) fn bearer(headers: &axum::http::HeaderMap) -> &str {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
}

/// Whether `given` is the `--admin-token` or the world's own token (compared
/// in constant time), or no admin token is set.
pub(crate) fn admin_token_given(state: &AppState, given: &str) -> bool {
    let Some(admin) = &state.config().admin_token else {
        return true;
    };
    let is = |token: &str| bool::from(given.as_bytes().ct_eq(token.as_bytes()));
    is(admin) || state.world_token().is_some_and(is)
}

/// A request body of the control API: the name of its schema in the control
/// contract (`openapi/mock-control.json`).
pub(crate) trait ControlBody: DeserializeOwned {
    const SCHEMA: &'static str;
}

/// A JSON body for the control API, checked against its schema of the control
/// contract, as the service's bodies are against theirs; an empty body reads
/// as `{}`.
pub(crate) struct ControlJson<T>(pub(crate) T);

impl<T: ControlBody, S: Send + Sync> FromRequest<S> for ControlJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self> {
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|e| invalid("", "body", format!("Could not read the body: {e}")))?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &bytes
        };
        let value: Value = serde_json::from_slice(text)
            .map_err(|e| invalid("", "json", format!("Invalid control request: {e}")))?;
        crate::contract::ContractSchemas::control()
            .validate(T::SCHEMA, &value)
            .map_err(|fields| {
                ApiError::validation(
                    "Control request does not match the control contract",
                    fields,
                )
            })?;
        serde_json::from_value(value)
            .map(Self)
            .map_err(|e| invalid("", "type", format!("Invalid control request: {e}")))
    }
}

impl ControlBody for ForcedOutcome {
    const SCHEMA: &'static str = "ForcedOutcome";
}

impl ControlBody for crate::domain::fault::FaultRequest {
    const SCHEMA: &'static str = "Fault";
}

/// A 400 of the control API naming the one member at `path` that is wrong.
fn invalid(path: &str, keyword: &str, message: String) -> ApiError {
    ApiError::validation(
        message.clone(),
        vec![FieldError::new(path, keyword, message, json!({}))],
    )
}

/// The answer of a list operation: its items under `data`, as every list of
/// the contract.
#[derive(Serialize)]
pub(crate) struct List<T> {
    data: Vec<T>,
}

pub(crate) fn list<T: Serialize>(data: Vec<T>) -> Json<List<T>> {
    Json(List { data })
}
