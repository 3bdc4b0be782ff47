//! Waiting for a generation to end: polling with a growing interval, paced to
//! the rate limit, with an optional deadline, reporting each status change.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt, stream};
use uuid::Uuid;

use crate::call::within;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::generation_request::{CreatedGeneration, GenerationRequest};
use crate::model::generation::{Generation, GenerationFailure, GenerationStatus};
use crate::options::{RequestOptions, request_options};
use crate::rate_limit::WaiterGuard;

/// How a wait polls: the first interval, how it grows, its ceiling, and a deadline.
///
/// The interval between two reads of one generation starts at `initial_interval`
/// and is multiplied by `multiplier` after each read, up to `max_interval`. The
/// client also keeps its waiters, together, inside the rate limit: with `remaining`
/// requests left for `reset` seconds and `n` generations awaited, each waits at
/// least `reset × n / remaining` between reads.
///
/// ```
/// use std::time::Duration;
/// use mediagen::WaitOptions;
///
/// let options = WaitOptions::default()
///     .initial_interval(Duration::from_secs(2))
///     .max_interval(Duration::from_secs(30))
///     .timeout(Duration::from_secs(600));
/// assert_eq!(options.interval_after(0), Duration::from_secs(2));
/// assert_eq!(options.interval_after(1), Duration::from_secs(3));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct WaitOptions {
    initial_interval: Duration,
    max_interval: Duration,
    multiplier: f64,
    pub(crate) timeout: Option<Duration>,
}

impl Default for WaitOptions {
    fn default() -> Self {
        Self {
            initial_interval: Duration::from_secs(1),
            max_interval: Duration::from_secs(15),
            multiplier: 1.5,
            timeout: None,
        }
    }
}

impl WaitOptions {
    /// The wait before the second read (default 1 s).
    ///
    /// ```
    /// let options = mediagen::WaitOptions::default().initial_interval(std::time::Duration::from_millis(500));
    /// # drop(options);
    /// ```
    pub fn initial_interval(mut self, interval: Duration) -> Self {
        self.initial_interval = interval;
        self
    }

    /// The longest wait between two reads (default 15 s).
    ///
    /// ```
    /// let options = mediagen::WaitOptions::default().max_interval(std::time::Duration::from_secs(60));
    /// # drop(options);
    /// ```
    pub fn max_interval(mut self, interval: Duration) -> Self {
        self.max_interval = interval;
        self
    }

    /// How much the interval grows after each read (default 1.5; at least 1).
    ///
    /// ```
    /// let options = mediagen::WaitOptions::default().multiplier(2.0);
    /// assert_eq!(options.interval_after(3).as_secs(), 8);
    /// ```
    pub fn multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = if multiplier.is_finite() {
            multiplier.max(1.0)
        } else {
            1.0
        };
        self
    }

    /// Gives up after this long with [`Error::WaitTimeout`] (default: never). The
    /// generation goes on; wait on it again to resume.
    ///
    /// ```
    /// let options = mediagen::WaitOptions::default().timeout(std::time::Duration::from_secs(300));
    /// # drop(options);
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The interval after `reads` reads beyond the first (before pacing).
    ///
    /// ```
    /// let options = mediagen::WaitOptions::default();
    /// assert_eq!(options.interval_after(100), std::time::Duration::from_secs(15));
    /// ```
    pub fn interval_after(&self, reads: u32) -> Duration {
        let factor = self
            .multiplier
            .powi(i32::try_from(reads).unwrap_or(i32::MAX));
        let secs = self.initial_interval.as_secs_f64() * factor;
        if !secs.is_finite() || secs >= self.max_interval.as_secs_f64() {
            self.max_interval
        } else {
            Duration::from_secs_f64(secs).max(self.initial_interval.min(self.max_interval))
        }
    }
}

/// The state of one watch.
struct Watch<'a> {
    client: &'a Client,
    id: Uuid,
    options: WaitOptions,
    deadline: Option<Instant>,
    last: Option<GenerationStatus>,
    reads: u32,
    done: bool,
    _waiter: WaiterGuard,
}

/// The statuses of a generation as a stream (see [`Generations::watch`]).
///
/// [`Generations::watch`]: crate::areas::Generations::watch
pub(crate) fn watch<'a>(
    client: &'a Client,
    id: Uuid,
    options: WaitOptions,
) -> impl Stream<Item = Result<Generation>> + Send + Unpin + 'a {
    let shared = client.shared();
    let deadline = options.timeout.map(|t| shared.clock.now() + t);
    let state = Watch {
        client,
        id,
        options,
        deadline,
        last: None,
        reads: 0,
        done: false,
        _waiter: shared.pacer.waiter(),
    };
    Box::pin(stream::unfold(state, |mut state| async move {
        if state.done {
            return None;
        }
        let item = state.next_change().await;
        if !matches!(&item, Ok(generation) if generation.status.is_active()) {
            state.done = true;
        }
        Some((item, state))
    }))
}

impl Watch<'_> {
    /// Polls until the status differs from the last one seen.
    async fn next_change(&mut self) -> Result<Generation> {
        let shared = self.client.shared();
        loop {
            if self.reads > 0 {
                let now = shared.clock.now();
                let mut pause = self
                    .options
                    .interval_after(self.reads - 1)
                    .max(shared.pacer.poll_floor(now));
                if let Some(deadline) = self.deadline {
                    if now >= deadline {
                        return Err(Error::WaitTimeout {
                            id: self.id,
                            status: self.last.clone().unwrap_or(GenerationStatus::Pending),
                            idempotency_key: None,
                        });
                    }
                    // One last read at the deadline.
                    pause = pause.min(deadline - now);
                }
                tracing::debug!(
                    generation_id = %self.id,
                    delay_ms = pause.as_millis() as u64,
                    reason = "the generation is still running",
                    "waiting before the next read"
                );
                shared.clock.sleep(pause).await;
            }
            let generation = self.client.generations().get(self.id).await?;
            self.reads += 1;
            if self.last.as_ref() != Some(&generation.status) {
                self.last = Some(generation.status.clone());
                return Ok(generation);
            }
        }
    }
}

/// The end of a wait: `Ok` for `SUCCEEDED`, a typed error for any other status
/// (the wait stops at every status but `PENDING` and `PROCESSING`).
fn outcome(generation: Generation) -> Result<Generation> {
    match generation.status {
        GenerationStatus::Succeeded => Ok(generation),
        GenerationStatus::Failed => Err(Error::GenerationFailed(Box::new(GenerationFailure::new(
            generation,
        )))),
        GenerationStatus::Cancelled => Err(Error::GenerationCancelled {
            id: generation.id,
            idempotency_key: None,
        }),
        _ => Err(Error::UnknownGenerationStatus {
            generation: Box::new(generation),
            idempotency_key: None,
        }),
    }
}

/// An error that came after `created` was accepted, made to carry its id and
/// `Idempotency-Key`: the generation exists and is paid for, so its caller must be
/// able to find it again.
pub(crate) fn after_create(err: Error, created: &CreatedGeneration) -> Error {
    let key = Some(created.idempotency_key.clone());
    match err {
        Error::GenerationFailed(mut failure) => {
            failure.idempotency_key = key;
            Error::GenerationFailed(failure)
        }
        Error::GenerationCancelled { id, .. } => Error::GenerationCancelled {
            id,
            idempotency_key: key,
        },
        Error::WaitTimeout { id, status, .. } => Error::WaitTimeout {
            id,
            status,
            idempotency_key: key,
        },
        Error::UnknownGenerationStatus { generation, .. } => Error::UnknownGenerationStatus {
            generation,
            idempotency_key: key,
        },
        other => Error::AfterCreate {
            id: created.id,
            idempotency_key: created.idempotency_key.clone(),
            source: Box::new(other),
        },
    }
}

type StatusCallback<'a> = Box<dyn FnMut(&Generation) + Send + 'a>;

/// Waits until a generation ends: `SUCCEEDED` gives the generation, `FAILED` a
/// [`GenerationFailure`] with its code and whether trying again can help,
/// `CANCELLED` [`Error::GenerationCancelled`], a deadline [`Error::WaitTimeout`].
///
/// Made by [`Generations::wait`](crate::areas::Generations::wait); await it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// # let id = client.generations().create(mediagen::GenerationRequest::new("flux-schnell", "a fox")).await?.id;
/// use mediagen::WaitOptions;
///
/// let mut changes = Vec::new();
/// let generation = client
///     .generations()
///     .wait(id)
///     .options(WaitOptions::default().max_interval(std::time::Duration::from_secs(5)))
///     .on_status(|g| changes.push(g.status.clone()))
///     .await?;
/// assert_eq!(changes.last(), Some(&generation.status));
/// # Ok(())
/// # }
/// ```
#[must_use = "a wait does nothing until it is awaited"]
pub struct Wait<'a> {
    client: &'a Client,
    id: Uuid,
    options: WaitOptions,
    on_status: Option<StatusCallback<'a>>,
    request_options: RequestOptions,
}

impl std::fmt::Debug for Wait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wait")
            .field("id", &self.id)
            .field("options", &self.options)
            .field("on_status", &self.on_status.is_some())
            .finish()
    }
}

impl<'a> Wait<'a> {
    pub(crate) fn new(client: &'a Client, id: Uuid) -> Self {
        Self {
            client,
            id,
            options: WaitOptions::default(),
            on_status: None,
            request_options: RequestOptions::default(),
        }
    }

    request_options!(request_options);

    /// Polling intervals and deadline.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// # let id = uuid::Uuid::nil();
    /// let wait = client.generations().wait(id).options(mediagen::WaitOptions::default());
    /// # drop(wait);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn options(mut self, options: WaitOptions) -> Self {
        self.options = options;
        self
    }

    /// Gives up after `timeout` with [`Error::WaitTimeout`].
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// # let id = uuid::Uuid::nil();
    /// let wait = client.generations().wait(id).timeout(std::time::Duration::from_secs(60));
    /// # drop(wait);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options = self.options.timeout(timeout);
        self
    }

    /// Called with the generation at the first read and at each change of status.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// # let id = uuid::Uuid::nil();
    /// let wait = client.generations().wait(id).on_status(|g| eprintln!("{}: {}", g.id, g.status));
    /// # drop(wait);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn on_status(mut self, callback: impl FnMut(&Generation) + Send + 'a) -> Self {
        self.on_status = Some(Box::new(callback));
        self
    }

    async fn run(self) -> Result<Generation> {
        let Self {
            client,
            id,
            options,
            mut on_status,
            request_options: _,
        } = self;
        follow(client, id, options, |generation| {
            if let Some(callback) = on_status.as_mut() {
                callback(generation);
            }
        })
        .await
    }
}

/// Polls a generation until it ends, calling `on_change` with it at the first read
/// and at each change of status; the end as [`outcome`] tells it.
pub(crate) async fn follow(
    client: &Client,
    id: Uuid,
    options: WaitOptions,
    mut on_change: impl FnMut(&Generation),
) -> Result<Generation> {
    let mut changes = watch(client, id, options);
    let mut last = None;
    while let Some(item) = changes.next().await {
        let generation = item?;
        on_change(&generation);
        last = Some(generation);
    }
    match last {
        Some(generation) => outcome(generation),
        // The stream always yields at least one item or an error.
        None => Err(Error::WaitTimeout {
            id,
            status: GenerationStatus::Pending,
            idempotency_key: None,
        }),
    }
}

impl<'a> IntoFuture for Wait<'a> {
    type Output = Result<Generation>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Generation>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        let options = self.request_options.clone();
        Box::pin(within(options, self.run()))
    }
}

/// Creates a generation and waits until it ends, in one call. Await it.
///
/// Once the create is accepted, every error carries the generation's id and
/// `Idempotency-Key` ([`Error::generation_id`], [`Error::idempotency_key`]): a wait
/// cut short ([`Error::WaitTimeout`], a lost connection in [`Error::AfterCreate`])
/// leaves the task going on, and [`Generations::wait`](crate::areas::Generations::wait)
/// resumes it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// use std::time::Duration;
/// use mediagen::GenerationRequest;
///
/// let done = client
///     .generations()
///     .create_and_wait(GenerationRequest::new("flux-schnell", "a red fox"))
///     .timeout(Duration::from_secs(300))
///     .on_status(|g| println!("{}", g.status))
///     .await?;
/// assert_eq!(done.status, mediagen::GenerationStatus::Succeeded);
/// # Ok(())
/// # }
/// ```
#[must_use = "nothing is created until it is awaited"]
pub struct CreateAndWait<'a> {
    request: GenerationRequest,
    wait: Wait<'a>,
}

impl std::fmt::Debug for CreateAndWait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateAndWait")
            .field("request", &self.request)
            .field("wait", &self.wait)
            .finish()
    }
}

impl<'a> CreateAndWait<'a> {
    pub(crate) fn new(client: &'a Client, request: GenerationRequest) -> Self {
        Self {
            request,
            wait: Wait::new(client, Uuid::nil()),
        }
    }

    /// Polling intervals and deadline of the wait.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let call = client
    ///     .generations()
    ///     .create_and_wait(mediagen::GenerationRequest::new("flux-schnell", "a fox"))
    ///     .options(mediagen::WaitOptions::default());
    /// # drop(call);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn options(mut self, options: WaitOptions) -> Self {
        self.wait = self.wait.options(options);
        self
    }

    /// The time-out of each request (the create and each read), instead of the client's.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.wait = self.wait.request_timeout(timeout);
        self
    }

    /// Attempts at most for each request (1: never repeated).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.wait = self.wait.max_attempts(attempts);
        self
    }

    /// A header sent with each request to the service.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        self.wait = self.wait.header(name, value);
        self
    }

    /// Gives up waiting after `timeout` (the create is not undone).
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let call = client
    ///     .generations()
    ///     .create_and_wait(mediagen::GenerationRequest::new("flux-schnell", "a fox"))
    ///     .timeout(std::time::Duration::from_secs(60));
    /// # drop(call);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.wait = self.wait.timeout(timeout);
        self
    }

    /// Called at the first read and at each change of status.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let call = client
    ///     .generations()
    ///     .create_and_wait(mediagen::GenerationRequest::new("flux-schnell", "a fox"))
    ///     .on_status(|g| println!("{}", g.status));
    /// # drop(call);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn on_status(mut self, callback: impl FnMut(&Generation) + Send + 'a) -> Self {
        self.wait = self.wait.on_status(callback);
        self
    }
}

impl<'a> IntoFuture for CreateAndWait<'a> {
    type Output = Result<Generation>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Generation>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        let options = self.wait.request_options.clone();
        Box::pin(within(options, async move {
            let Self { request, mut wait } = self;
            let created = wait.client.generations().create(request).await?;
            wait.id = created.id;
            wait.run().await.map_err(|err| after_create(err, &created))
        }))
    }
}
