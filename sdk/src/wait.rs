//! Waiting for a generation to end: polling with a growing interval, paced to
//! the rate limit, with an optional deadline, reporting each status change.

use std::collections::HashMap;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt, stream};
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::call::within;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::events::WebhookEvent;
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

/// What a wait knows of its generation before the first read, to time its
/// reads: the model, when its create was answered, and its cost.
#[derive(Debug, Clone, Default)]
pub(crate) struct Known {
    pub(crate) model: Option<String>,
    pub(crate) since: Option<Instant>,
    pub(crate) cost_rub: Option<f64>,
}

impl Known {
    /// What a create that was just answered tells.
    pub(crate) fn created(
        request: &GenerationRequest,
        created: &CreatedGeneration,
        now: Instant,
    ) -> Self {
        Self {
            model: Some(request.model_slug().to_owned()),
            since: Some(now),
            cost_rub: Some(created.cost_rub),
        }
    }
}

/// The shortest pause between two reads of a running generation.
const MIN_STEP: Duration = Duration::from_millis(500);

/// The state of one watch.
struct Watch<'a> {
    client: &'a Client,
    id: Uuid,
    options: WaitOptions,
    known: Known,
    /// The model's typical time, once asked for (`None` inside: unknown).
    expected: Option<Option<Duration>>,
    /// The generation's event, when a receiver hands events to this client.
    event: Option<oneshot::Receiver<WebhookEvent>>,
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
    known: Known,
) -> impl Stream<Item = Result<Generation>> + Send + Unpin + 'a {
    let shared = client.shared();
    let deadline = options.timeout.map(|t| shared.clock.now() + t);
    let state = Watch {
        client,
        id,
        options,
        known,
        expected: None,
        event: shared.hub.subscribe(id),
        deadline,
        last: None,
        reads: 0,
        done: false,
        _waiter: shared.host.pacer.waiter(),
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
    /// Reads (or hears of, by webhook) the generation until its status differs
    /// from the last one seen.
    async fn next_change(&mut self) -> Result<Generation> {
        let shared = self.client.shared();
        loop {
            let now = shared.clock.now();
            let mut pause = self.pause(now).await;
            if let Some(deadline) = self.deadline {
                if self.reads > 0 && now >= deadline {
                    return Err(Error::WaitTimeout {
                        id: self.id,
                        status: self.last.clone().unwrap_or(GenerationStatus::Pending),
                        idempotency_key: None,
                    });
                }
                // One last read at the deadline.
                pause = pause.min(deadline.saturating_duration_since(now));
            }
            if !pause.is_zero() {
                tracing::debug!(
                    generation_id = %self.id,
                    delay_ms = pause.as_millis() as u64,
                    reason = if self.event.is_some() {
                        "waiting for the generation's webhook"
                    } else {
                        "the generation is still running"
                    },
                    "waiting before the next read"
                );
            }
            if let Some(event) = self.event.as_mut() {
                tokio::select! {
                    heard = event => match heard {
                        Ok(event) => {
                            self.event = None;
                            if let Some(generation) = self.ended(event) {
                                return Ok(self.seen(generation));
                            }
                            // An end the event cannot tell whole: read it.
                            continue;
                        }
                        // The receiver is gone: reads alone, from now on.
                        Err(_) => self.event = None,
                    },
                    () = shared.clock.sleep(pause) => {}
                }
            } else {
                shared.clock.sleep(pause).await;
            }
            let generation = self.client.generations().get(self.id).await?;
            self.reads += 1;
            if self.known.model.is_none() {
                self.known.model.clone_from(&generation.model_slug);
            }
            if self.last.as_ref() != Some(&generation.status) {
                return Ok(self.seen(generation));
            }
        }
    }

    /// Notes a status seen, and the time a task took once it ended.
    fn seen(&mut self, generation: Generation) -> Generation {
        self.last = Some(generation.status.clone());
        if !generation.status.is_active()
            && let (Some(model), Some(since)) = (&self.known.model, self.known.since)
        {
            let took = self
                .client
                .shared()
                .clock
                .now()
                .saturating_duration_since(since);
            self.client.shared().host.timing.observe(model, took);
        }
        generation
    }

    /// The model's typical time, read once per wait (the catalogue once per
    /// process).
    async fn expected(&mut self) -> Option<Duration> {
        if let Some(expected) = self.expected {
            return expected;
        }
        let model = self.known.model.clone()?;
        let client = self.client;
        let timing = &client.shared().host.timing;
        if self.event.is_some() {
            // The event ends the wait, the reads are a safety net: not worth a
            // request to the catalogue, which polling waits need.
            let seen = timing.observed_median(&model);
            self.expected = Some(seen);
            return seen;
        }
        let expected = timing
            .expected(&model, || async move {
                let Ok(catalog) = client.catalog().get().await else {
                    return HashMap::new();
                };
                catalog
                    .models
                    .into_iter()
                    .filter_map(|m| {
                        let secs = m.average_duration_seconds?;
                        Duration::try_from_secs_f64(secs).ok().map(|d| (m.slug, d))
                    })
                    .collect()
            })
            .await;
        self.expected = Some(expected);
        expected
    }

    /// How long to wait before the next read.
    ///
    /// Polling, the first read comes when the task is expected to have ended
    /// (its model's typical time after the create), then every tenth of that
    /// time (at least 0.5 s), so that a wait ends within that of the task's
    /// end; a task running past twice its time is read on the growing schedule
    /// of [`WaitOptions`], and without a typical time that schedule is all
    /// there is. With a webhook receiver the reads are only a safety net: at
    /// twice the typical time, then ever more rarely. Every pause after the
    /// first read is at least the client's share of what is left of the
    /// rate-limit window.
    async fn pause(&mut self, now: Instant) -> Duration {
        let expected = self.expected().await;
        let since = self.known.since.unwrap_or(now);
        let elapsed = now.saturating_duration_since(since);
        let growing = self.options.interval_after(self.reads.saturating_sub(1));
        let pause = match (expected, self.event.is_some()) {
            (Some(expected), true) => {
                let first = (expected * 2).max(MIN_STEP);
                let due = first * 2u32.saturating_pow(self.reads.min(16));
                due.saturating_sub(elapsed)
                    .min(self.options.max_interval.max(first))
            }
            (None, true) => growing.max(self.options.max_interval),
            (Some(expected), false) if self.reads == 0 => {
                // A twentieth more, so the read finds the task ended.
                (expected + expected / 20).saturating_sub(elapsed)
            }
            (Some(expected), false) => {
                let step = (expected / 10).max(MIN_STEP);
                if elapsed > expected * 2 {
                    growing.max(step)
                } else {
                    step
                }
            }
            (None, false) if self.reads == 0 => Duration::ZERO,
            (None, false) => growing,
        };
        if self.reads == 0 {
            return pause;
        }
        pause.max(self.client.shared().host.pacer.poll_floor(now))
    }

    /// The generation an event tells of, when it tells it whole: a success
    /// carries all the service guarantees; a failure carries no cost, which
    /// the create told.
    fn ended(&self, event: WebhookEvent) -> Option<Generation> {
        let mut generation = match event {
            WebhookEvent::GenerationCompleted { generation, .. } => {
                let mut ended =
                    Generation::new(generation.id, generation.status, generation.cost_rub);
                ended.output_urls = generation.output_urls;
                ended.media_type = Some(generation.media_type);
                ended.finished_at = Some(generation.completed_at);
                ended
            }
            WebhookEvent::GenerationFailed { generation, .. } => {
                let mut ended = Generation::new(
                    generation.id,
                    generation.status.unwrap_or(GenerationStatus::Failed),
                    self.known.cost_rub?,
                );
                ended.error_code = Some(generation.error_code);
                ended.error_message = Some(generation.error_message);
                ended.finished_at = Some(generation.failed_at);
                ended
            }
            _ => return None,
        };
        generation.model_slug.clone_from(&self.known.model);
        Some(generation)
    }
}

/// The end of a wait: `Ok` for `SUCCEEDED`, a typed error for any other status
/// (the wait stops at every status but `PENDING` and `PROCESSING`).
pub(crate) fn outcome(generation: Generation) -> Result<Generation> {
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
    known: Known,
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
            known: Known::default(),
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
            known,
            options,
            mut on_status,
            request_options: _,
        } = self;
        follow(client, id, options, known, |generation| {
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
    known: Known,
    mut on_change: impl FnMut(&Generation),
) -> Result<Generation> {
    let mut changes = watch(client, id, options, known);
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
            let created = wait.client.generations().create(request.clone()).await?;
            wait.id = created.id;
            let now = wait.client.shared().clock.now();
            wait.known = Known::created(&request, &created, now);
            wait.run().await.map_err(|err| after_create(err, &created))
        }))
    }
}
