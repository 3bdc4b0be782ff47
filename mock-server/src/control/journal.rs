//! The HTTP face of what a world saw and holds: its request log, deliveries
//! and outbox, its snapshot, and reset.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;

use super::ops::deliveries::Delivery;
use super::ops::{self, journal};
use super::{List, invalid, list};
use crate::error::Result;
use crate::snapshot::BODY_LIMIT;
use crate::state::AppState;
use crate::store::{LoggedRequest, OutboxMessage};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/requests", get(list_requests))
        .route(
            "/_mock/deliveries",
            get(list_deliveries).post(create_delivery),
        )
        .route("/_mock/outbox", get(list_outbox))
        .route("/_mock/reset", post(reset))
        .route(
            "/_mock/snapshot",
            get(get_snapshot)
                .put(put_snapshot)
                .layer(DefaultBodyLimit::max(BODY_LIMIT)),
        )
}

async fn list_requests(State(state): State<AppState>) -> Json<List<LoggedRequest>> {
    list(journal::list_requests(&state))
}

async fn list_deliveries(State(state): State<AppState>) -> Json<List<Delivery>> {
    list(ops::deliveries::list_deliveries(&state))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateDelivery {
    endpoint_id: String,
    payload: Value,
}

impl super::ControlBody for CreateDelivery {
    const SCHEMA: &'static str = "CreateDelivery";
}

async fn create_delivery(
    State(state): State<AppState>,
    super::ControlJson(body): super::ControlJson<CreateDelivery>,
) -> Result<(StatusCode, Json<Delivery>)> {
    let delivery = ops::deliveries::create_delivery(&state, &body.endpoint_id, body.payload)?;
    Ok((StatusCode::CREATED, Json(delivery)))
}

async fn list_outbox(State(state): State<AppState>) -> Json<List<OutboxMessage>> {
    list(journal::list_outbox(&state))
}

async fn reset(State(state): State<AppState>) -> StatusCode {
    journal::reset(&state);
    StatusCode::NO_CONTENT
}

async fn get_snapshot(State(state): State<AppState>) -> Json<Value> {
    Json(journal::get_snapshot(&state))
}

async fn put_snapshot(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<StatusCode> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| invalid("", "json", format!("The snapshot is not JSON: {e}")))?;
    journal::put_snapshot(&state, value)?;
    Ok(StatusCode::NO_CONTENT)
}
