//! The server's own control API, over its worlds: `create_world`,
//! `list_worlds` and `delete_world`, each written once for the HTTP face
//! (`POST` and `GET /_mock/worlds`, `DELETE /_mock/worlds/{id}`, behind the
//! control API's guard) and the Rust face ([`MockServer`](crate::MockServer)).
//! Above the worlds it makes, so above the control API of each.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{delete, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{WorldSettings, Worlds};
use crate::control::{ControlBody, ControlJson, List, list};
use crate::error::{ControlError, Result};
use crate::extract::Path;
use crate::state::AppState;

/// The routes of the worlds, behind the control API's guard.
pub(crate) fn router(worlds: &Worlds) -> Router {
    Router::new()
        .route("/_mock/worlds", post(post_world).get(get_worlds))
        .route("/_mock/worlds/{id}", delete(end_world))
        .method_not_allowed_fallback(crate::routes::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(worlds.clone(), guard))
        // The root's clock, for what the root answers here.
        .layer(crate::routes::RequestScope::new(worlds.root().clone()))
        .with_state(worlds.clone())
}

/// The worlds' control routes take the admin token; a world's own token
/// also ends that world (`DELETE /_mock/worlds/{id}`), so that a job of a
/// fleet can clean up after itself and no other's.
async fn guard(
    State(worlds): State<Worlds>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let given = crate::control::bearer(request.headers());
    let own_world = request.method() == axum::http::Method::DELETE
        && request
            .uri()
            .path()
            .strip_prefix("/_mock/worlds/")
            .and_then(|id| worlds.entries().get(id).map(|e| e.state.clone()))
            .is_some_and(|world| {
                world.world_token().is_some() && crate::control::admin_token_given(&world, given)
            });
    if own_world {
        return next.run(request).await;
    }
    crate::control::require_admin_token(State(worlds.root().clone()), request, next).await
}

impl ControlBody for WorldSettings {
    const SCHEMA: &'static str = "WorldSettings";
}

async fn post_world(
    State(worlds): State<Worlds>,
    ControlJson(settings): ControlJson<WorldSettings>,
) -> Result<(StatusCode, Json<NewWorld>)> {
    Ok((StatusCode::CREATED, Json(create_world(&worlds, settings)?)))
}

async fn get_worlds(State(worlds): State<Worlds>) -> Json<List<WorldView>> {
    list(list_worlds(&worlds))
}

async fn end_world(State(worlds): State<Worlds>, Path(id): Path<String>) -> Result<StatusCode> {
    delete_world(&worlds, &id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// A world just made (`POST /_mock/worlds`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewWorld {
    pub(crate) id: String,
    pub(crate) base_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) demo_api_key: Option<String>,
    /// The world's own control token, where the mock has an admin token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) control_token: Option<String>,
    /// The world itself, for the Rust face to hand out.
    #[serde(skip)]
    pub(crate) state: AppState,
}

/// A world beside the root (`GET /_mock/worlds`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WorldView {
    /// Its id, for `DELETE /_mock/worlds/{id}`.
    pub id: String,
    /// Where it serves: `{root}/worlds/{id}`.
    pub base_url: String,
    /// When it was made, on the root's wall clock.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub created_at: DateTime<Utc>,
}

/// Makes a world with `settings` over the server's own.
pub(crate) fn create_world(
    worlds: &Worlds,
    settings: WorldSettings,
) -> Result<NewWorld, ControlError> {
    if settings
        .time_scale
        .is_some_and(|s| !(s.is_finite() && s > 0.0))
    {
        return Err(ControlError::invalid(
            "/timeScale",
            "exclusiveMinimum",
            "timeScale must be a number above 0",
        ));
    }
    if settings
        .demo_balance_rub
        .is_some_and(|rub| !(rub.is_finite() && rub >= 0.0))
    {
        return Err(ControlError::invalid(
            "/demoBalanceRub",
            "minimum",
            "demoBalanceRub must be a number of at least 0",
        ));
    }
    let (id, state) = worlds.create(settings)?;
    Ok(NewWorld {
        id,
        base_url: state.base_url().to_owned(),
        demo_api_key: state
            .config()
            .demo_user
            .then(|| state.demo_api_key().to_owned()),
        control_token: state.world_token().map(str::to_owned),
        state,
    })
}

/// Every world beside the root, oldest first.
pub(crate) fn list_worlds(worlds: &Worlds) -> Vec<WorldView> {
    worlds
        .listed()
        .into_iter()
        .map(|(id, base_url, created_at)| WorldView {
            id,
            base_url,
            created_at,
        })
        .collect()
}

/// Ends a world and frees its memory.
pub(crate) fn delete_world(worlds: &Worlds, id: &str) -> Result<(), ControlError> {
    if worlds.delete(id) {
        Ok(())
    } else {
        Err(ControlError::NotFound(
            crate::domain::refusal::Missing::World(id.to_owned()).to_string(),
        ))
    }
}
