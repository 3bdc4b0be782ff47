//! The HTTP face of users, their keys and their balance.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;

use super::ops::users::{self, CreateUser, NewKey, UserView};
use super::{ControlBody, ControlJson};
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::error::Result;
use crate::extract::Path;
use crate::state::AppState;
use crate::store::NewUser;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/users", post(create_user))
        .route("/_mock/users/{user_id}", get(get_user))
        .route("/_mock/users/{user_id}/keys", post(create_key))
        .route("/_mock/users/{user_id}/balance", put(set_balance))
        .route("/_mock/keys/{public_part}", delete(revoke_key))
}

fn user_id(raw: &str) -> Result<UserId> {
    crate::extract::uuid_param(raw, "userId")
}

impl ControlBody for CreateUser {
    const SCHEMA: &'static str = "CreateUser";
}

async fn create_user(
    State(state): State<AppState>,
    ControlJson(body): ControlJson<CreateUser>,
) -> Result<(StatusCode, Json<NewUser>)> {
    Ok((StatusCode::CREATED, Json(users::create_user(&state, body)?)))
}

async fn get_user(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<UserView>> {
    Ok(Json(users::get_user(&state, user_id(&id)?)?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateKey {
    #[serde(default)]
    scope: Scope,
}

impl ControlBody for CreateKey {
    const SCHEMA: &'static str = "CreateKey";
}

async fn create_key(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ControlJson(body): ControlJson<CreateKey>,
) -> Result<(StatusCode, Json<NewKey>)> {
    let key = users::create_key(&state, user_id(&id)?, body.scope)?;
    Ok((StatusCode::CREATED, Json(key)))
}

async fn revoke_key(
    State(state): State<AppState>,
    Path(public): Path<String>,
) -> Result<StatusCode> {
    users::revoke_key(&state, &public)?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SetBalance {
    balance_rub: f64,
}

impl ControlBody for SetBalance {
    const SCHEMA: &'static str = "SetBalance";
}

async fn set_balance(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ControlJson(body): ControlJson<SetBalance>,
) -> Result<Json<UserView>> {
    Ok(Json(users::set_balance(
        &state,
        user_id(&id)?,
        body.balance_rub,
    )?))
}
