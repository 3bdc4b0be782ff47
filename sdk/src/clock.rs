//! The one source of time behind every delay of the client: retry back-off,
//! rate-limit pacing and polling.
//!
//! Production code never touches this module: the default is [`TokioClock`]. Tests
//! and simulations give the builder a clock of their own, so that back-off and
//! polling run without real waiting (see [`ClientBuilder::clock`]).
//!
//! [`ClientBuilder::clock`]: crate::ClientBuilder::clock

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// A future that completes after a [`Clock::sleep`].
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Where the client reads the time and how it waits.
///
/// Implement it to run the client on simulated time: the integration tests of this
/// crate use a clock that moves the mock server's manual clock instead of sleeping.
///
/// ```
/// use std::time::{Duration, Instant};
/// use mediagen::{Clock, Sleep};
///
/// /// A clock on which every wait ends at once (for tests of retry logic).
/// #[derive(Debug)]
/// struct Instantly(Instant);
///
/// impl Clock for Instantly {
///     fn now(&self) -> Instant {
///         self.0
///     }
///     fn sleep(&self, _duration: Duration) -> Sleep {
///         Box::pin(async {})
///     }
/// }
///
/// let client = mediagen::Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .api_key("mg_live_demo_secret")
///     .clock(Instantly(Instant::now()))
///     .build()?;
/// # drop(client);
/// # Ok::<(), mediagen::Error>(())
/// ```
pub trait Clock: fmt::Debug + Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Instant;

    /// Completes once `duration` has passed on this clock.
    fn sleep(&self, duration: Duration) -> Sleep;

    /// A request is on its way: called as each attempt is sent, to the service
    /// or to a storage URL, and followed by [`request_ended`](Self::request_ended)
    /// once its answer's head arrives or it fails (or its call is dropped). A
    /// simulated clock keeps time still in between, as nothing stops a real
    /// one while a request travels. The default does nothing.
    fn request_started(&self) {}

    /// The request [`request_started`](Self::request_started) announced has its
    /// answer's head, or failed. The default does nothing.
    fn request_ended(&self) {}
}

/// Tokio's clock: real time, or paused time in tests that pause it.
///
/// ```
/// use mediagen::{Clock, TokioClock};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let before = TokioClock.now();
/// TokioClock.sleep(std::time::Duration::from_millis(1)).await;
/// assert!(TokioClock.now() > before);
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(duration))
    }
}
