//! Users, their keys and their balance.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ControlJson, rub, user_id};
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::error::{ApiError, Result};
use crate::extract::Path;
use crate::state::AppState;
use crate::wire::timestamp;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/users", post(create_user))
        .route("/_mock/users/{user_id}", get(get_user))
        .route("/_mock/users/{user_id}/keys", post(create_key))
        .route("/_mock/users/{user_id}/balance", put(set_balance))
        .route("/_mock/keys/{public_part}", delete(revoke_key))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateUser {
    #[serde(default)]
    balance_rub: f64,
    email: Option<String>,
}

impl super::ControlBody for CreateUser {
    const SCHEMA: &'static str = "CreateUser";
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

impl super::ControlBody for CreateKey {
    const SCHEMA: &'static str = "CreateKey";
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

impl super::ControlBody for SetBalance {
    const SCHEMA: &'static str = "SetBalance";
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
