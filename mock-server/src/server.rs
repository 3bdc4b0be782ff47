//! A mock server in a test's own process: on 127.0.0.1 with a free port,
//! stopped when dropped.

use std::net::SocketAddr;
use std::ops::Deref;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::config::{ClockMode, Config, Responses};
use crate::error::ControlError;
use crate::state::AppState;
use crate::world::World;
use crate::worlds::control::{self as ops, WorldView};
use crate::worlds::{WorldSettings, Worlds};

/// A running mock server for tests: on 127.0.0.1 with a free port, stopped on
/// drop. Its control methods are those of its [`World`].
///
/// By default its clock is manual, so a test decides when time passes:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mock = mediagen_mock_server::MockServer::start().await;
/// let user = mock.create_user(500.0).expect("a balance of at least 0");
/// assert!(user.api_key.starts_with("mg_live_"));
/// mock.advance_clock(10.0).expect("a manual clock"); // ten seconds pass for every task, rate window and back-off
/// # }
/// ```
#[derive(Debug)]
pub struct MockServer {
    world: World,
    worlds: Worlds,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
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
        // Known before the first request, so that `uri()` is right at once.
        state.set_base_url(format!("http://{addr}"));
        let worlds = Worlds::new(state.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(crate::run(worlds.clone(), listener, async {
            rx.await.ok();
        }));
        MockServer {
            world: World { state },
            worlds,
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

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.addr
    }

    /// The mock's state as a test drives it; a clone outlives this handle's
    /// borrow (a clock of the test's own, a task that reads the log).
    pub fn default_world(&self) -> &World {
        &self.world
    }

    /// A new world of this server, with the server's settings: isolated from
    /// every other (see [`create_world`](Self::create_world)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = mediagen_mock_server::MockServer::start().await;
    /// let (a, b) = (mock.world().await, mock.world().await);
    /// a.advance_clock(60.0).expect("a manual clock");
    /// assert_ne!(a.now(), b.now()); // one world's clock moves nothing in another
    /// assert!(a.uri().starts_with(&format!("{}/worlds/", mock.uri())));
    /// # }
    /// ```
    pub async fn world(&self) -> World {
        self.create_world(WorldSettings::default())
            .expect("a world within the limit")
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

impl Deref for MockServer {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

// Operations of the control contract, one method each, named by operationId.
// Each is the operation of `worlds::control` the HTTP face calls too.
impl MockServer {
    /// Makes a world with `settings` over the server's own; refused past the
    /// server's number of worlds (`Config::max_worlds`), or for a setting out
    /// of range. The world tells its id, base URL and demo key.
    pub fn create_world(&self, settings: WorldSettings) -> Result<World, ControlError> {
        let made = ops::create_world(&self.worlds, settings)?;
        Ok(World { state: made.state })
    }

    /// The worlds beside the root, oldest first.
    pub fn list_worlds(&self) -> Vec<WorldView> {
        ops::list_worlds(&self.worlds)
    }

    /// Ends a world and frees its memory.
    pub fn delete_world(&self, id: &str) -> Result<(), ControlError> {
        ops::delete_world(&self.worlds, id)
    }
}
