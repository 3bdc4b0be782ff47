#![doc = include_str!("../README.md")]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::net::TcpListener;

use crate::state::AppState;
use crate::worlds::Worlds;

mod clock;
pub mod config;
pub mod contract;
mod control;
mod delivery;
mod deprecated;
mod domain;
mod error;
mod events;
mod extract;
pub mod judge;
mod judged;
mod refusal;
mod render;
mod routes;
mod server;
mod snapshot;
mod state;
mod store;
mod tls;
mod ui;
mod verdict;
mod wire;
mod worker;
mod world;
mod worlds;

pub use clock::ClockView;
pub use config::{ClockMode, Config, Responses};
pub use control::ops::billing::{Paid, TopupView};
pub use control::ops::deliveries::{Delivery, DeliveryAttempt};
pub use control::ops::settings::{DnsSet, ModelStateSet, Settings, SettingsUpdate};
pub use control::ops::users::{CreateUser, NewKey, UserView};
pub use delivery::probe::{ProbeOutcome, ProbeReport};
pub use domain::UserId;
pub use domain::auth::Scope;
pub use domain::catalog::ModelState;
pub use domain::fault::{Fault, FaultView};
pub use domain::generation::FailureCode;
pub use domain::money::Kopecks;
pub use domain::outcome::{ForcedOutcome, OutcomeKind};
pub use error::ControlError;
pub use events::{Event, EventKind, EventStream, Missed};
/// The contract's operations, which the request log names ([`LoggedRequest::operation`]).
pub use mediagen_openapi::operations::OperationId;
pub use server::{MockServer, MockServerBuilder};
pub use store::{KeyView, LoggedRequest, NewUser, OutboxMessage};
pub use verdict::{Checked, Endpoint, Finding, Severity, Strict, UnknownRule, Verdict, known_ids};
pub use world::{FaultHandle, GenerationRecord, World};
pub use worlds::WorldSettings;
pub use worlds::control::WorldView;

/// The whole mock: the service's routes, the result files and the control API.
pub(crate) fn build_app(state: AppState) -> Router {
    let service = routes::around(
        routes::router(),
        &state,
        routes::ServiceLayer(state.clone()),
    );
    let rest = Router::new()
        .merge(
            routes::outputs::router()
                .merge(
                    routes::files::storage_router()
                        // Uploads are larger than API bodies: up to the largest file type.
                        .layer(DefaultBodyLimit::max(100 * 1024 * 1024)),
                )
                .layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    routes::faults::gate,
                )),
        )
        .merge(control::router(&state))
        .merge(control::events::router())
        .merge(ui::router())
        // Every route of the mock answers a method it lacks in the envelope.
        .method_not_allowed_fallback(routes::method_not_allowed);
    Router::new()
        .merge(service)
        .merge(routes::around(
            rest,
            &state,
            tower::layer::util::Identity::new(),
        ))
        .with_state(state)
}

/// Serves the mock on `listener` until `shutdown` resolves, then finishes the
/// requests in flight: the default world at the root, the others under
/// `/worlds/{id}`.
pub(crate) async fn run(
    worlds: Worlds,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let root = worlds.root().clone();
    let addr = listener.local_addr()?;
    root.set_base_url(format!("http://{}", reachable(addr)));
    let worker = tokio::spawn(worker::run(root.clone()));
    let app = build_app(root)
        .merge(worlds.router())
        .merge(worlds::control::router(&worlds))
        .into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    worker.abort();
    served
}

/// How long a stop waits for the requests in flight.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Binds `config.listen`, prints the address and the demo API key on stdout, and
/// serves until Ctrl-C or SIGTERM, then finishes the requests in flight. This is
/// the `mediagen-mock` binary and `mediagen mock`.
///
/// Refused before binding when the control API would be open to the network
/// ([`Config::check_exposure`]).
pub async fn serve(mut config: Config) -> anyhow::Result<()> {
    use anyhow::Context;
    config.check_exposure()?;
    let state_file = config.state_file.clone().map(snapshot::StateFile::new);
    let kept = match &state_file {
        Some(file) => file.load()?,
        None => None,
    };
    if let Some(key) = kept.as_ref().and_then(|k| k.demo_api_key()) {
        // The demo key a client of the last run holds stays valid.
        config.demo_api_key = Some(key.to_owned());
    }
    let interval = Duration::from_secs_f64(config.state_interval_seconds);
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("while binding {}", config.listen))?;
    let bound = listener.local_addr()?;
    let addr = reachable(bound);
    let open_to_network = !bound.ip().is_loopback();
    let state = AppState::new(config);
    // The first two lines are read by programs (the Python and Node faces,
    // scripts): the address as bound, then the key. What follows is for people.
    println!("mediagen-mock listening on http://{bound}");
    println!("demo API key: {}", state.demo_api_key());
    if addr != bound {
        println!(
            "  from this machine: http://{addr}; from others: this host's addresses, port {}",
            bound.port()
        );
    }
    // Beyond loopback, whether the control API is open is told, whichever it is.
    if open_to_network {
        if state.config().admin_token.is_some() {
            println!("  control API (/_mock/): the admin token is required (--admin-token)");
        } else {
            println!(
                "  control API (/_mock/): open to anyone who reaches {bound} (--open-control); \
                 set MEDIAGEN_MOCK_ADMIN_TOKEN or --admin-token to require a token"
            );
        }
    }
    if let (Some(file), Some(kept)) = (&state_file, kept) {
        println!(
            "state loaded from {}: the world goes on from {} on its clock",
            file.path().display(),
            wire::timestamp(kept.clock_now())
        );
        state.restore(kept);
    } else if let Some(file) = &state_file {
        println!(
            "state file {} does not exist yet: a fresh start, kept there from now on",
            file.path().display()
        );
    }
    println!(
        "try: curl -H 'Authorization: Bearer {}' http://{addr}/v1/generations",
        state.demo_api_key()
    );
    // An interval of 0 writes the file at shutdown only.
    let keeper = state_file
        .clone()
        .filter(|_| !interval.is_zero())
        .map(|file| tokio::spawn(file.keep(state.clone(), interval)));
    // A stop waits for the requests in flight, but not for ever: a live
    // journal's stream (`/_mock/events`) or a held-back answer never ends by
    // itself, and a container runtime kills the process 10 s after SIGTERM,
    // before the state file below would be written.
    let (stopping, stopped) = tokio::sync::oneshot::channel();
    let signal = async move {
        shutdown_signal().await;
        let _ = stopping.send(());
    };
    let grace_over = async move {
        if stopped.await.is_ok() {
            tokio::time::sleep(STOP_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let served = tokio::select! {
        served = run(Worlds::new(state.clone()), listener, signal) => served,
        () = grace_over => {
            println!(
                "stopping: requests still open {} s after the signal are cut off",
                STOP_GRACE.as_secs()
            );
            Ok(())
        }
    };
    if let Some(keeper) = keeper {
        keeper.abort();
    }
    if let Some(file) = state_file
        && file.save_logged(&state).await
    {
        println!("state saved to {}", file.path().display());
    }
    served.context("while serving")
}

/// `mediagen-mock health`: whether the mock listening on `listen` (a wildcard
/// address is asked on loopback) answers `GET /health` with 200 within two
/// seconds. A container's health check runs it, with no shell or curl in the
/// image; it reads `MEDIAGEN_MOCK_LISTEN` as the server does, so the image
/// names its port once.
pub async fn check_health(listen: SocketAddr) -> anyhow::Result<()> {
    use anyhow::Context;
    let url = format!("http://{}/health", reachable(listen));
    // Plain HTTP on loopback, asked every few seconds: no TLS roots are read.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .no_proxy()
        .tls_certs_only([])
        .build()?;
    let response = client
        .get(&url)
        .send()
        .await
        // reqwest's error names the URL and why it got no answer.
        .context("no mock answered the health check")?;
    anyhow::ensure!(
        response.status() == reqwest::StatusCode::OK,
        "GET {url} answered {}",
        response.status()
    );
    Ok(())
}

/// Resolves at Ctrl-C or SIGTERM, the signals a terminal or a supervisor sends to
/// ask for a clean stop.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

/// An address clients can connect to: a wildcard bind is reached on loopback.
fn reachable(addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        let ip: std::net::IpAddr = if addr.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        };
        SocketAddr::new(ip, addr.port())
    } else {
        addr
    }
}
