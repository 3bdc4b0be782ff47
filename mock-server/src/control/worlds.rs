//! The HTTP face of worlds, on the server's root: `POST` and `GET /_mock/worlds`
//! and `DELETE /_mock/worlds/{id}`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};

use super::ops::worlds::{self, NewWorld, WorldView};
use super::{ControlBody, ControlJson, List, list, require_admin_token};
use crate::error::Result;
use crate::extract::Path;
use crate::worlds::{WorldSettings, Worlds};

/// The routes of the worlds, behind the control API's guard.
pub(crate) fn router(worlds: &Worlds) -> Router {
    Router::new()
        .route("/_mock/worlds", post(create_world).get(list_worlds))
        .route("/_mock/worlds/{id}", delete(delete_world))
        .layer(axum::middleware::from_fn_with_state(
            worlds.root().clone(),
            require_admin_token,
        ))
        .with_state(worlds.clone())
}

impl ControlBody for WorldSettings {
    const SCHEMA: &'static str = "WorldSettings";
}

async fn create_world(
    State(worlds): State<Worlds>,
    ControlJson(settings): ControlJson<WorldSettings>,
) -> Result<(StatusCode, Json<NewWorld>)> {
    Ok((
        StatusCode::CREATED,
        Json(worlds::create_world(&worlds, settings)?),
    ))
}

async fn list_worlds(State(worlds): State<Worlds>) -> Json<List<WorldView>> {
    list(worlds::list_worlds(&worlds))
}

async fn delete_world(State(worlds): State<Worlds>, Path(id): Path<String>) -> Result<StatusCode> {
    worlds::delete_world(&worlds, &id)?;
    Ok(StatusCode::NO_CONTENT)
}
