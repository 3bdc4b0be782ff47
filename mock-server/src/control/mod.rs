//! The control API under `/_mock/`: users and keys, the clock, model states,
//! forced outcomes, faults, settings, payments, what the mock saw and sent, and
//! reset. Not part of the service: outside its rate limits, its faults and its
//! request log, and guarded by `--admin-token` when set.

mod billing;
pub(crate) mod deliveries;
mod faults;
mod users;
mod verdict;

use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use crate::clock::ClockError;
use crate::config::Responses;
use crate::contract::FieldError;
use crate::domain::UserId;
use crate::domain::catalog::ModelState;
use crate::domain::money::Kopecks;
use crate::domain::outcome::ForcedOutcome;
use crate::error::{ApiError, Result};
use crate::extract::Path;
use crate::state::AppState;
use crate::wire::timestamp;
use crate::worker::run_due_jobs;

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(users::router())
        .merge(faults::router())
        .merge(billing::router())
        .merge(verdict::router())
        .merge(crate::snapshot::router())
        .route("/_mock/clock", get(get_clock))
        .route("/_mock/clock/advance", post(advance_clock))
        .route("/_mock/models/{slug}/state", post(set_model_state))
        .route("/_mock/outcomes", post(force_outcome))
        .route("/_mock/settings", get(get_settings).put(update_settings))
        .route("/_mock/requests", get(list_requests))
        .route("/_mock/deliveries", get(deliveries::list_deliveries))
        .route("/_mock/dns", put(set_dns))
        .route("/_mock/outbox", get(list_outbox))
        .route("/_mock/reset", post(reset))
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
            "The control API needs 'Authorization: Bearer <admin token>'",
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

/// Whether `given` is the `--admin-token` (compared in constant time), or
/// none is set.
pub(crate) fn admin_token_given(state: &AppState, given: &str) -> bool {
    state
        .config()
        .admin_token
        .as_ref()
        .is_none_or(|token| bool::from(given.as_bytes().ct_eq(token.as_bytes())))
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
pub(crate) fn invalid(path: &str, keyword: &str, message: String) -> ApiError {
    ApiError::validation(
        message.clone(),
        vec![FieldError::new(path, keyword, message, json!({}))],
    )
}

fn user_id(raw: &str) -> Result<UserId> {
    crate::extract::uuid_param(raw, "userId")
}

fn rub(value: f64, name: &str) -> Result<Kopecks> {
    if value.is_finite() && value >= 0.0 {
        Ok(Kopecks::from_rub(value))
    } else {
        Err(invalid(
            &format!("/{name}"),
            "minimum",
            format!("{name} must be a number of at least 0"),
        ))
    }
}

pub(crate) fn clock_view(state: &AppState) -> Value {
    let clock = state.clock();
    json!({
        "now": timestamp(clock.now()),
        "mode": if clock.is_manual() { "manual" } else { "real" },
        "timeScale": clock.scale(),
    })
}

async fn get_clock(State(state): State<AppState>) -> Json<Value> {
    Json(clock_view(&state))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Advance {
    seconds: f64,
}

impl ControlBody for Advance {
    const SCHEMA: &'static str = "AdvanceClock";
}

/// Moves a manual clock and applies everything that became due before answering.
async fn advance_clock(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<Advance>,
) -> Result<Json<Value>> {
    state.clock().advance(body.seconds).map_err(|e| match e {
        ClockError::NotManual => ApiError::Conflict(e.to_string()),
        ClockError::BadAmount(_) | ClockError::OutOfRange(_) => {
            invalid("/seconds", "minimum", e.to_string())
        }
    })?;
    run_due_jobs(&state);
    Ok(Json(clock_view(&state)))
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
) -> Result<Json<Value>> {
    if state.catalog().get(&slug).is_none() {
        return Err(ApiError::not_found(format!("Model '{slug}' not found")));
    }
    state.store().set_model_state(&slug, body.state);
    Ok(Json(json!({"slug": slug, "state": body.state})))
}

async fn force_outcome(
    State(state): State<AppState>,
    ControlJson(rule): ControlJson<ForcedOutcome>,
) -> Result<(StatusCode, Json<Value>)> {
    if let Some(slug) = &rule.model_slug
        && state.catalog().get(slug).is_none()
    {
        return Err(ApiError::not_found(format!("Model '{slug}' not found")));
    }
    let answer = json!({
        "userId": rule.user_id,
        "modelSlug": rule.model_slug,
        "outcome": rule.outcome,
        "errorCode": rule.error_code,
        "count": rule.count,
    });
    state.store().force_outcome(rule);
    Ok((StatusCode::CREATED, Json(answer)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Settings {
    create_latency_seconds: Option<f64>,
    /// Absent: unchanged; `null`: new top-ups wait to be paid by hand.
    #[serde(default, deserialize_with = "present")]
    auto_pay_seconds: Option<Option<f64>>,
    responses: Option<Responses>,
}

impl ControlBody for Settings {
    const SCHEMA: &'static str = "UpdateSettings";
}

/// Reads a member that is present, `null` included, as `Some`: absent is `None`.
fn present<'de, D, T>(deserializer: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

async fn get_settings(State(state): State<AppState>) -> Json<crate::Settings> {
    Json(crate::Settings::of(&state.store()))
}

async fn update_settings(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<Settings>,
) -> Result<Json<crate::Settings>> {
    let seconds = |value: f64, name: &str| {
        if value.is_finite() && (0.0..=3600.0).contains(&value) {
            Ok(value)
        } else {
            Err(invalid(
                &format!("/{name}"),
                "maximum",
                format!("{name} must be from 0 to 3600"),
            ))
        }
    };
    let latency = body
        .create_latency_seconds
        .map(|s| seconds(s, "createLatencySeconds"))
        .transpose()?;
    let auto_pay = body
        .auto_pay_seconds
        .map(|s| s.map(|s| seconds(s, "autoPaySeconds")).transpose())
        .transpose()?;
    let mut store = state.store();
    if let Some(secs) = latency {
        store.set_create_latency_secs(secs);
    }
    if let Some(secs) = auto_pay {
        store.set_auto_pay_secs(secs);
    }
    if let Some(mode) = body.responses {
        store.set_responses(mode);
    }
    Ok(Json(crate::Settings::of(&store)))
}

async fn list_requests(State(state): State<AppState>) -> Json<Value> {
    let log = state.requests();
    Json(json!({"data": log.iter().collect::<Vec<_>>()}))
}

async fn reset(State(state): State<AppState>) -> StatusCode {
    state.reset();
    StatusCode::NO_CONTENT
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

/// Pins a host name to addresses for webhook URLs, at creation and at delivery.
async fn set_dns(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<SetDns>,
) -> Json<Value> {
    state
        .deliverer()
        .resolver
        .set(&body.host, body.addresses.clone());
    Json(json!({"host": body.host, "addresses": body.addresses}))
}

/// The e-mails the service would have sent (magic links), oldest first.
async fn list_outbox(State(state): State<AppState>) -> Json<Value> {
    Json(json!({"data": state.store().outbox()}))
}
