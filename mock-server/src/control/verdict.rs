//! The verdict on a world's client (`GET` and `DELETE /_mock/verdict`) and the
//! receiver probes (`POST /_mock/probes/webhooks`): the HTTP face of
//! `control::ops::verdict`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::ops::verdict;
use super::{ControlBody, ControlJson};
use crate::delivery::probe::ProbeReport;
use crate::error::ControlError;
use crate::error::Result;
use crate::extract::Query;
use crate::state::AppState;
use crate::verdict::{Strict, Verdict};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/verdict", get(get_verdict).delete(reset_verdict))
        .route("/_mock/probes/webhooks", post(probe_webhooks))
}

/// The query of `GET /_mock/verdict`.
#[derive(Deserialize)]
struct VerdictQuery {
    /// Rule ids, separated by commas, whose findings fail beside violations.
    strict: Option<String>,
}

async fn get_verdict(
    State(state): State<AppState>,
    Query(query): Query<VerdictQuery>,
) -> Result<Json<Verdict>> {
    let strict = match query.strict.as_deref() {
        Some(list) => Strict::parse(list).map_err(ControlError::from)?,
        None => Strict::violations(),
    };
    Ok(Json(verdict::get_verdict(&state, &strict)))
}

async fn reset_verdict(State(state): State<AppState>) -> StatusCode {
    verdict::reset_verdict(&state);
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProbeWebhooks {
    endpoint_id: String,
}

impl ControlBody for ProbeWebhooks {
    const SCHEMA: &'static str = "ProbeWebhooks";
}

async fn probe_webhooks(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<ProbeWebhooks>,
) -> Result<Json<ProbeReport>> {
    Ok(Json(
        verdict::probe_webhooks(&state, &body.endpoint_id).await?,
    ))
}
