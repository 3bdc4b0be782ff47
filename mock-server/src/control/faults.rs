//! Fault rules: `POST /_mock/faults`, `GET /_mock/faults`, `DELETE /_mock/faults`
//! and `DELETE /_mock/faults/{id}`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::ControlJson;
use crate::domain::fault::{Fault, FaultRequest};
use crate::error::{ApiError, Result};
use crate::extract::Path;
use crate::state::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/_mock/faults",
            post(inject_fault).get(list_faults).delete(clear_faults),
        )
        .route("/_mock/faults/{id}", delete(remove_fault))
}

/// Adds a rule; 201 with it, its id and its uses left.
async fn inject_fault(
    State(state): State<AppState>,
    ControlJson(request): ControlJson<FaultRequest>,
) -> Result<(StatusCode, Json<Value>)> {
    let fault = Fault::from_request(request)
        .map_err(|refusal| super::invalid(refusal.field(), "invalid", refusal.to_string()))?;
    let view = state.store().inject_fault(fault);
    Ok((StatusCode::CREATED, Json(json!(view))))
}

/// The active rules, oldest first, with their uses left.
async fn list_faults(State(state): State<AppState>) -> Json<Value> {
    Json(json!({"data": state.store().faults()}))
}

/// Removes one rule.
async fn remove_fault(State(state): State<AppState>, Path(id): Path<String>) -> Result<StatusCode> {
    if state.store().remove_fault(&id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "No active fault {id}; it may have been used up"
        )))
    }
}

/// Removes every rule.
async fn clear_faults(State(state): State<AppState>) -> StatusCode {
    state.store().clear_faults();
    StatusCode::NO_CONTENT
}
