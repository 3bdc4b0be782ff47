//! The HTTP face of fault rules: `POST /_mock/faults`, `GET /_mock/faults`,
//! `DELETE /_mock/faults` and `DELETE /_mock/faults/{id}`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};

use super::ops::faults;
use super::{ControlJson, List, list};
use crate::domain::fault::{FaultRequest, FaultView};
use crate::error::Result;
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
) -> Result<(StatusCode, Json<FaultView>)> {
    let fault = faults::read_fault(request)?;
    Ok((
        StatusCode::CREATED,
        Json(faults::inject_fault(&state, fault)?),
    ))
}

async fn list_faults(State(state): State<AppState>) -> Json<List<FaultView>> {
    list(faults::list_faults(&state))
}

async fn remove_fault(State(state): State<AppState>, Path(id): Path<String>) -> Result<StatusCode> {
    faults::remove_fault(&state, &id)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn clear_faults(State(state): State<AppState>) -> StatusCode {
    faults::clear_faults(&state);
    StatusCode::NO_CONTENT
}
