//! The HTTP face of the clock, the settings, models' states, forced outcomes
//! and DNS pins.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;

use super::ops;
use super::ops::settings::{DnsSet, ModelStateSet, Settings, SettingsUpdate};
use super::{ControlBody, ControlJson};
use crate::clock::ClockView;
use crate::domain::catalog::ModelState;
use crate::domain::outcome::ForcedOutcome;
use crate::error::Result;
use crate::extract::Path;
use crate::state::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/clock", get(get_clock))
        .route("/_mock/clock/advance", post(advance_clock))
        .route("/_mock/models/{slug}/state", post(set_model_state))
        .route("/_mock/outcomes", post(force_outcome))
        .route("/_mock/settings", get(get_settings).put(update_settings))
        .route("/_mock/dns", put(set_dns))
}

async fn get_clock(State(state): State<AppState>) -> Json<ClockView> {
    Json(ops::clock::get_clock(&state))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Advance {
    seconds: f64,
}

impl ControlBody for Advance {
    const SCHEMA: &'static str = "AdvanceClock";
}

async fn advance_clock(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<Advance>,
) -> Result<Json<ClockView>> {
    Ok(Json(ops::clock::advance_clock(&state, body.seconds)?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetModelState {
    state: ModelState,
}

impl ControlBody for SetModelState {
    const SCHEMA: &'static str = "SetModelState";
}

async fn set_model_state(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    ControlJson(body): ControlJson<SetModelState>,
) -> Result<Json<ModelStateSet>> {
    Ok(Json(ops::settings::set_model_state(
        &state, &slug, body.state,
    )?))
}

async fn force_outcome(
    State(state): State<AppState>,
    ControlJson(rule): ControlJson<ForcedOutcome>,
) -> Result<(StatusCode, Json<ForcedOutcome>)> {
    let rule = ops::settings::force_outcome(&state, rule)?;
    Ok((StatusCode::CREATED, Json(rule)))
}

impl ControlBody for SettingsUpdate {
    const SCHEMA: &'static str = "UpdateSettings";
}

async fn get_settings(State(state): State<AppState>) -> Json<Settings> {
    Json(ops::settings::get_settings(&state))
}

async fn update_settings(
    State(state): State<AppState>,
    ControlJson(update): ControlJson<SettingsUpdate>,
) -> Result<Json<Settings>> {
    Ok(Json(ops::settings::update_settings(&state, update)?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetDns {
    host: String,
    addresses: Vec<std::net::IpAddr>,
}

impl ControlBody for SetDns {
    const SCHEMA: &'static str = "SetDns";
}

async fn set_dns(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<SetDns>,
) -> Result<Json<DnsSet>> {
    Ok(Json(ops::settings::set_dns(
        &state,
        &body.host,
        body.addresses,
    )?))
}
