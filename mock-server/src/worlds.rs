//! Worlds: many isolated mocks in one server, so that tests running in
//! parallel against one process cannot disturb each other.
//!
//! The server's root is the default world. `POST /_mock/worlds` makes another
//! and answers its `baseUrl`, `{root}/worlds/{id}`: under it the world serves
//! the whole service and its own control API. Each world has its own users
//! and keys, balances and ledger, generations and worker, webhook endpoints
//! and delivery queue, faults, settings, DNS pins, outbox, request log and
//! clock; a key of one world is unknown in every other.

pub(crate) mod control;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use tower::ServiceExt;

use crate::config::{ClockMode, Responses};
use crate::domain::refusal::Missing;
use crate::error::{ApiError, ControlError};
use crate::state::AppState;

/// The settings a world starts with (`POST /_mock/worlds`); what is not given
/// is the server's own.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorldSettings {
    /// `manual` (moved by the control API) or `real`.
    pub clock: Option<ClockMode>,
    /// How many times faster than real time a real clock runs.
    pub time_scale: Option<f64>,
    /// What answers and webhook bodies carry.
    pub responses: Option<Responses>,
    /// Whether the service's request limits refuse requests.
    pub rate_limits: Option<bool>,
    /// Whether the world starts with a demo user (default yes).
    pub demo_user: Option<bool>,
    /// The demo user's balance in roubles.
    pub demo_balance_rub: Option<f64>,
}

/// The worlds of one server, its root included; cheap to clone.
#[derive(Clone)]
pub(crate) struct Worlds {
    inner: Arc<Registry>,
}

impl std::fmt::Debug for Worlds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worlds")
            .field("worlds", &self.entries().len())
            .finish_non_exhaustive()
    }
}

struct Registry {
    root: AppState,
    worlds: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    state: AppState,
    app: Router,
    worker: tokio::task::AbortHandle,
    created_at: DateTime<Utc>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.worker.abort();
    }
}

impl Worlds {
    pub(crate) fn new(root: AppState) -> Self {
        Self {
            inner: Arc::new(Registry {
                root,
                worlds: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The default world: the server's root.
    pub(crate) fn root(&self) -> &AppState {
        &self.inner.root
    }

    fn entries(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.inner.worlds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes a world with `settings` over the root's configuration, its worker
    /// running; refused past the configured number of worlds.
    pub(crate) fn create(
        &self,
        settings: WorldSettings,
    ) -> Result<(String, AppState), ControlError> {
        let root = &self.inner.root;
        let limit = root.config().max_worlds;
        let mut config = root.config().clone();
        if let Some(clock) = settings.clock {
            config.clock = clock;
        }
        if let Some(scale) = settings.time_scale {
            config.time_scale = scale;
        }
        if let Some(responses) = settings.responses {
            config.responses = responses;
        }
        if let Some(on) = settings.rate_limits {
            config.rate_limits = on;
        }
        if let Some(on) = settings.demo_user {
            config.demo_user = on;
        }
        if let Some(rub) = settings.demo_balance_rub {
            config.demo_balance_rub = rub;
        }
        // Every world has a key of its own, never the root's.
        config.demo_api_key = None;
        let id = format!("w_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
        let state = AppState::new(config);
        state.set_base_url(format!("{}/worlds/{id}", root.base_url()));
        if root.config().admin_token.is_some() {
            // 122 random bits: as hard to guess as the admin token ought to be.
            state.set_world_token(format!("mwt_{}", uuid::Uuid::new_v4().simple()));
        }
        let mut worlds = self.entries();
        if worlds.len() >= limit {
            return Err(ControlError::TooManyWorlds(format!(
                "Maximum {limit} worlds; delete one with DELETE /_mock/worlds/{{id}}"
            )));
        }
        let worker = tokio::spawn(crate::worker::run(state.clone())).abort_handle();
        worlds.insert(
            id.clone(),
            Entry {
                app: crate::build_app(state.clone()),
                state: state.clone(),
                worker,
                created_at: state.now(),
            },
        );
        Ok((id, state))
    }

    /// Ends a world: its worker stops and its memory goes once the requests
    /// in flight in it end.
    pub(crate) fn delete(&self, id: &str) -> bool {
        self.entries().remove(id).is_some()
    }

    /// Every world beside the root, oldest first: its id, base URL and birth.
    pub(crate) fn listed(&self) -> Vec<(String, String, DateTime<Utc>)> {
        let mut worlds: Vec<_> = self
            .entries()
            .iter()
            .map(|(id, entry)| {
                (
                    id.clone(),
                    entry.state.base_url().to_owned(),
                    entry.created_at,
                )
            })
            .collect();
        worlds.sort_by_key(|(_, _, created_at)| *created_at);
        worlds
    }

    fn app(&self, id: &str) -> Option<Router> {
        self.entries().get(id).map(|entry| entry.app.clone())
    }

    /// The routes of the root that reach the other worlds: `/worlds/{id}/…`.
    pub(crate) fn router(&self) -> Router {
        Router::new()
            .route("/worlds/{id}", any(enter))
            .route("/worlds/{id}/{*rest}", any(enter))
            // The root's clock, for what the root answers here (a world that
            // is not there); a world's own app sets its own.
            .layer(crate::routes::RequestScope::new(self.inner.root.clone()))
            .with_state(self.clone())
    }
}

/// A request to a world: the world's own app answers it, with the world's
/// prefix taken off its path.
async fn enter(State(worlds): State<Worlds>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path();
    let rest = path.strip_prefix("/worlds/").unwrap_or(path);
    let (id, inner) = rest.split_once('/').unwrap_or((rest, ""));
    let id = id.to_owned();
    let inner = match parts.uri.query() {
        Some(query) => format!("/{inner}?{query}"),
        None => format!("/{inner}"),
    };
    let (Some(app), Ok(uri)) = (worlds.app(&id), inner.parse::<Uri>()) else {
        return ApiError::from(Missing::World(id)).into_response();
    };
    // A fresh request, not the outer one re-addressed: the outer route's path
    // parameters (`{id}`, `{*rest}`) live in its extensions, and the world's
    // routes would read them as their own. Only the caller's address goes in.
    let mut inner = Request::new(body);
    *inner.method_mut() = parts.method;
    *inner.uri_mut() = uri;
    *inner.version_mut() = parts.version;
    *inner.headers_mut() = parts.headers;
    if let Some(peer) = parts.extensions.get::<ConnectInfo<SocketAddr>>() {
        inner.extensions_mut().insert(*peer);
    }
    match app.oneshot(inner).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}
