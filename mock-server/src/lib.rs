#![doc = include_str!("../README.md")]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub mod clock;
pub mod config;
pub mod contract;
mod control;
mod delivery;
mod domain;
mod error;
mod render;
mod routes;
mod state;
mod store;
mod wire;
mod worker;

pub use config::{ClockMode, Config, Responses};
pub use domain::UserId;
pub use domain::auth::Scope;
pub use domain::catalog::ModelState;
pub use domain::fault::Fault;
pub use domain::generation::FailureCode;
pub use domain::money::Kopecks;
pub use domain::outcome::{ForcedOutcome, OutcomeKind};
pub use state::AppState;
pub use store::{LoggedRequest, NewUser, Store};
pub use worker::run_due_jobs;

/// The whole mock: the service's routes, the result files and the control API.
pub fn build_app(state: AppState) -> Router {
    let body_limit = state.config().body_limit_bytes;
    Router::new()
        .merge(routes::router(&state))
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
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            use axum::response::IntoResponse;
            error::ApiError::Internal(anyhow::anyhow!("a handler panicked")).into_response()
        }))
        .with_state(state)
}

/// Serves the mock on `listener` until `shutdown` resolves, then finishes the
/// requests in flight.
pub async fn run(
    state: AppState,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    state.set_base_url(format!("http://{}", reachable(addr)));
    let worker = tokio::spawn(worker::run(state.clone()));
    let app = build_app(state).into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    worker.abort();
    served
}

/// Binds `config.listen`, prints the address and the demo API key on stdout, and
/// serves until Ctrl-C or SIGTERM, then finishes the requests in flight. This is
/// the `mediagen-mock` binary and `mediagen mock`.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    use anyhow::Context;
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("while binding {}", config.listen))?;
    let addr = reachable(listener.local_addr()?);
    let state = AppState::new(config);
    println!("mediagen-mock listening on http://{addr}");
    println!("demo API key: {}", state.demo_api_key());
    println!(
        "try: curl -H 'Authorization: Bearer {}' http://{addr}/v1/generations",
        state.demo_api_key()
    );
    run(state, listener, shutdown_signal())
        .await
        .context("while serving")
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

/// A running mock server for tests: on 127.0.0.1 with a free port, stopped on drop.
///
/// By default its clock is manual, so a test decides when time passes:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mock = mediagen_mock_server::MockServer::start().await;
/// let user = mock.create_user(500.0);
/// assert!(user.api_key.starts_with("mg_live_"));
/// mock.advance(10.0); // ten seconds pass for every task, rate window and back-off
/// # }
/// ```
#[derive(Debug)]
pub struct MockServer {
    state: AppState,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

/// A fault rule injected with [`MockServer::inject`].
#[derive(Debug, Clone)]
pub struct FaultHandle {
    id: String,
    state: AppState,
}

impl FaultHandle {
    /// The rule's id, as `GET /_mock/faults` lists it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Uses left: 0 once used up or removed.
    pub fn remaining(&self) -> u32 {
        self.state.store().fault_remaining(&self.id).unwrap_or(0)
    }

    /// Removes the rule before it is used up.
    pub fn remove(&self) {
        self.state.store().remove_fault(&self.id);
    }
}

/// Options of a [`MockServer`] before it starts.
#[derive(Debug, Clone)]
pub struct MockServerBuilder {
    config: Config,
}

impl MockServerBuilder {
    /// A real clock running `scale` times faster than wall-clock time.
    pub fn real_clock(mut self, scale: f64) -> Self {
        self.config.clock = ClockMode::Real;
        self.config.time_scale = scale;
        self
    }

    /// Enforce the service's request limits (on by default).
    pub fn rate_limits(mut self, on: bool) -> Self {
        self.config.rate_limits = on;
        self
    }

    /// Seconds a new task waits in PENDING before a worker takes it.
    pub fn queue_seconds(mut self, seconds: f64) -> Self {
        self.config.queue_seconds = seconds;
        self
    }

    /// What answers and webhook bodies carry (`full` by default).
    pub fn responses(mut self, mode: Responses) -> Self {
        self.config.responses = mode;
        self
    }

    /// Any other setting.
    pub fn config(mut self, edit: impl FnOnce(&mut Config)) -> Self {
        edit(&mut self.config);
        self
    }

    /// Binds 127.0.0.1 on a free port and starts serving.
    pub async fn start(self) -> MockServer {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1:0 for the mock server");
        let addr = listener.local_addr().expect("a bound address");
        let state = AppState::new(self.config);
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(run(state.clone(), listener, async {
            rx.await.ok();
        }));
        MockServer {
            state,
            addr,
            shutdown: Some(tx),
            task: Some(task),
        }
    }
}

impl MockServer {
    /// Starts a mock with a manual clock and the service's limits.
    pub async fn start() -> Self {
        Self::builder().start().await
    }

    /// A builder, from a manual clock and the service's limits.
    pub fn builder() -> MockServerBuilder {
        MockServerBuilder {
            config: Config {
                clock: ClockMode::Manual,
                ..Config::default()
            },
        }
    }

    /// The base URL, such as `http://127.0.0.1:41234`.
    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.addr
    }

    /// The state, for checks beyond this handle's methods.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The API key of the demo user every mock starts with.
    pub fn demo_api_key(&self) -> &str {
        self.state.demo_api_key()
    }

    /// Creates a user with `balance_rub` roubles and a first API key.
    pub fn create_user(&self, balance_rub: f64) -> NewUser {
        self.state.create_user(Kopecks::from_rub(balance_rub), None)
    }

    /// Issues a further key for a user; `None` when the user does not exist.
    /// A [`Scope::ReadOnly`] key is refused (403) on writes.
    pub fn create_key(&self, user_id: UserId, scope: Scope) -> Option<String> {
        self.state
            .store()
            .issue_key(user_id, scope)
            .map(|key| key.full)
    }

    /// Moves the manual clock forward and applies what became due.
    ///
    /// # Panics
    /// When the mock runs a real clock, or `seconds` is negative: both are
    /// mistakes in the test.
    pub fn advance(&self, seconds: f64) {
        self.state
            .clock()
            .advance(seconds)
            .expect("advance a manual clock by a non-negative amount");
        run_due_jobs(&self.state);
    }

    /// The next `rule.count` matching tasks end as `rule` says.
    pub fn force_outcome(&self, rule: ForcedOutcome) {
        self.state.store().force_outcome(rule);
    }

    /// Makes the next requests that match `fault` misbehave, as
    /// `POST /_mock/faults` does; the handle tells how many uses are left.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{Fault, MockServer};
    ///
    /// let mock = MockServer::start().await;
    /// // The next two creates answer 503; the third goes through.
    /// let fault = mock.inject(Fault::error(503, "SERVICE_UNAVAILABLE").on("POST", "/v1/generations").times(2));
    /// assert_eq!(fault.remaining(), 2);
    /// # }
    /// ```
    ///
    /// # Panics
    /// When the rule cannot be applied (a status below 400, a delay of 0…):
    /// a mistake in the test, told with the reason.
    pub fn inject(&self, fault: Fault) -> FaultHandle {
        let fault = fault
            .checked()
            .unwrap_or_else(|why| panic!("the fault cannot be injected: {why}"));
        let view = self.state.store().inject_fault(fault);
        FaultHandle {
            id: view.id,
            state: self.state.clone(),
        }
    }

    /// Changes what answers and webhook bodies carry, as
    /// `PUT /_mock/settings {"responses"}` does.
    pub fn set_responses(&self, mode: Responses) {
        self.state.store().set_responses(mode);
    }

    /// Sets a model's state, as `POST /_mock/models/{slug}/state` does.
    pub fn set_model_state(&self, slug: &str, model_state: ModelState) {
        self.state.store().set_model_state(slug, model_state);
    }

    /// `(available, reserved)` balance of a user in roubles.
    pub fn balance(&self, user_id: UserId) -> Option<(f64, f64)> {
        self.state
            .store()
            .account(user_id)
            .map(|a| (a.available.rub(), a.reserved.rub()))
    }

    /// Checks the ledger's invariants: `available + reserved = credits − kept
    /// charges` per user, one charge and at most one refund per task, and the
    /// count of active tasks each user has.
    pub fn check_ledger(&self) -> Result<(), String> {
        self.state.store().check_invariants()
    }

    /// Waits until every webhook delivery attempt started so far has ended.
    /// Attempts that became due during [`advance`](Self::advance) have started
    /// by the time it returns, so `advance` then `deliveries_settled` sees them
    /// through (a receiver that hangs ends after its real time to answer,
    /// `Config::delivery_timeout_seconds`, 10 s unless set shorter).
    pub async fn deliveries_settled(&self) {
        self.state.deliverer().settled().await;
    }

    /// Makes `host` resolve to `addresses` for webhook URLs, as a DNS answer would.
    pub fn set_dns(&self, host: &str, addresses: Vec<std::net::IpAddr>) {
        self.state.deliverer().resolver.set(host, addresses);
    }

    /// Stops the server, letting requests in flight finish.
    pub async fn shutdown(mut self) {
        self.stop().await;
    }

    async fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            tx.send(()).ok();
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .ok();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            tx.send(()).ok();
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
