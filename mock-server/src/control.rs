//! The control API under `/_mock/`: users and keys, the clock, model states,
//! forced outcomes, the request log and reset. Not part of the service: outside
//! its rate limits and its request log, and guarded by `--admin-token` when set.

use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use crate::clock::ClockError;
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::domain::catalog::ModelState;
use crate::domain::money::Kopecks;
use crate::domain::outcome::ForcedOutcome;
use crate::error::{ApiError, Result};
use crate::routes::Path;
use crate::state::AppState;
use crate::wire::timestamp;
use crate::worker::run_due_jobs;

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/_mock/users", post(create_user))
        .route("/_mock/users/{user_id}", get(get_user))
        .route("/_mock/users/{user_id}/keys", post(create_key))
        .route("/_mock/users/{user_id}/balance", put(set_balance))
        .route("/_mock/keys/{public_part}", delete(revoke_key))
        .route("/_mock/clock", get(get_clock))
        .route("/_mock/clock/advance", post(advance_clock))
        .route("/_mock/models/{slug}/state", post(set_model_state))
        .route("/_mock/outcomes", post(force_outcome))
        .route("/_mock/settings", put(update_settings))
        .route("/_mock/requests", get(list_requests))
        .route("/_mock/deliveries", get(list_deliveries))
        .route("/_mock/dns", put(set_dns))
        .route("/_mock/outbox", get(list_outbox))
        .route("/_mock/invoices/{id}/pay", post(pay_invoice))
        .route("/_mock/reset", post(reset))
        .method_not_allowed_fallback(crate::routes::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_admin_token,
        ))
}

async fn require_admin_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(token) = &state.config().admin_token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
            return ApiError::Authentication(
                "The control API needs 'Authorization: Bearer <admin token>'",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// A JSON body for the control API; an empty body reads as `{}`.
struct ControlJson<T>(T);

impl<T: DeserializeOwned> FromRequest<AppState> for ControlJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self> {
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|e| {
                ApiError::validation(format!("Could not read the body: {e}"), Vec::new())
            })?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &bytes
        };
        serde_json::from_slice(text)
            .map(Self)
            .map_err(|e| ApiError::validation(format!("Invalid control request: {e}"), Vec::new()))
    }
}

fn user_id(raw: &str) -> Result<UserId> {
    crate::routes::uuid_param(raw, "userId")
}

fn rub(value: f64, name: &str) -> Result<Kopecks> {
    if value.is_finite() && value >= 0.0 {
        Ok(Kopecks::from_rub(value))
    } else {
        Err(ApiError::validation(
            format!("{name} must be a number of at least 0"),
            Vec::new(),
        ))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateUser {
    #[serde(default)]
    balance_rub: f64,
    email: Option<String>,
}

async fn create_user(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<CreateUser>,
) -> Result<(StatusCode, Json<Value>)> {
    let balance = rub(body.balance_rub, "balanceRub")?;
    let user = state.create_user(balance, body.email);
    Ok((
        StatusCode::CREATED,
        Json(
            json!({"userId": user.user_id, "apiKey": user.api_key, "email": user.email, "balanceRub": balance}),
        ),
    ))
}

fn user_snapshot(state: &AppState, id: UserId) -> Result<Value> {
    let store = state.store();
    let user = store
        .user(id)
        .ok_or_else(|| ApiError::not_found(format!("User {id} not found")))?;
    let account = store.account(id).unwrap_or_default();
    let keys = store.keys_of(id);
    Ok(json!({
        "userId": id,
        "email": user.email,
        "balanceRub": account.available,
        "reservedRub": account.reserved,
        "activeGenerations": store.active_count(id),
        "generations": user.generations.len(),
        "keys": keys,
        "createdAt": timestamp(user.created_at),
    }))
}

async fn get_user(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
    user_snapshot(&state, user_id(&id)?).map(Json)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateKey {
    #[serde(default)]
    scope: Scope,
}

async fn create_key(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ControlJson(body): ControlJson<CreateKey>,
) -> Result<(StatusCode, Json<Value>)> {
    let id = user_id(&id)?;
    let key = state
        .store()
        .issue_key(id, body.scope)
        .ok_or_else(|| ApiError::not_found(format!("User {id} not found")))?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"apiKey": key.full, "publicPart": key.public, "scope": body.scope})),
    ))
}

async fn revoke_key(
    State(state): State<AppState>,
    Path(public): Path<String>,
) -> Result<StatusCode> {
    if state.store().revoke_key(&public) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("No key with that public part"))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SetBalance {
    balance_rub: f64,
}

async fn set_balance(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ControlJson(body): ControlJson<SetBalance>,
) -> Result<Json<Value>> {
    let id = user_id(&id)?;
    let amount = rub(body.balance_rub, "balanceRub")?;
    let now = state.now();
    if !state.store().set_balance(id, amount, now) {
        return Err(ApiError::not_found(format!("User {id} not found")));
    }
    user_snapshot(&state, id).map(Json)
}

fn clock_view(state: &AppState) -> Value {
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

/// Moves a manual clock and applies everything that became due before answering.
async fn advance_clock(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<Advance>,
) -> Result<Json<Value>> {
    state.clock().advance(body.seconds).map_err(|e| match e {
        ClockError::NotManual => ApiError::Conflict(e.to_string()),
        ClockError::BadAmount(_) | ClockError::OutOfRange(_) => {
            ApiError::validation(e.to_string(), Vec::new())
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
}

async fn update_settings(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<Settings>,
) -> Result<Json<Value>> {
    let mut store = state.store();
    if let Some(secs) = body.create_latency_seconds {
        if !(secs.is_finite() && (0.0..=3600.0).contains(&secs)) {
            return Err(ApiError::validation(
                "createLatencySeconds must be from 0 to 3600",
                Vec::new(),
            ));
        }
        store.set_create_latency_secs(secs);
    }
    Ok(Json(
        json!({"createLatencySeconds": store.create_latency_secs()}),
    ))
}

async fn list_requests(State(state): State<AppState>) -> Json<Value> {
    let store = state.store();
    Json(json!({"data": store.requests().collect::<Vec<_>>()}))
}

async fn reset(State(state): State<AppState>) -> StatusCode {
    state.reset();
    StatusCode::NO_CONTENT
}

/// Every webhook message, oldest first, with its attempts.
async fn list_deliveries(State(state): State<AppState>) -> Json<Value> {
    let store = state.store();
    let data: Vec<Value> = store
        .messages()
        .map(|m| {
            json!({
                "messageId": m.id,
                "eventId": m.event_id,
                "eventType": m.event_type,
                "endpointId": m.endpoint_id,
                "userId": m.user_id,
                "state": m.state,
                "createdAt": timestamp(m.created_at),
                "payload": serde_json::from_slice::<Value>(&m.payload).unwrap_or(Value::Null),
                "attempts": m.attempts.iter().map(|a| json!({
                    "id": a.id,
                    "attempt": a.attempt,
                    "trigger": a.trigger,
                    "attemptedAt": timestamp(a.attempted_at),
                    "succeeded": a.succeeded,
                    "responseStatus": a.response_status,
                    "error": a.error,
                    "durationMs": a.duration_ms,
                    "responseExcerpt": a.response_excerpt,
                    "nextAttemptAt": a.next_attempt_at.map(timestamp),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Json(json!({ "data": data }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetDns {
    host: String,
    addresses: Vec<std::net::IpAddr>,
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

/// Marks an invoice paid, as the bank transfer arriving would: the balance is
/// credited and the closing act becomes available.
async fn pay_invoice(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let id = crate::routes::uuid_param(&id, "id")?;
    let now = state.now();
    let paid = state
        .store()
        .pay_invoice(id, now)
        .ok_or_else(|| ApiError::not_found(format!("Invoice {id} not found")))?
        .map_err(|invoice| {
            ApiError::Conflict(format!(
                "Invoice {} is not awaiting payment",
                invoice.number
            ))
        })?;
    Ok(Json(json!({
        "id": id,
        "number": paid.number,
        "status": "PAID",
        "paidAt": timestamp(now),
    })))
}
