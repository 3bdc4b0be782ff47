//! Many generations at once, within the service's concurrency limit.
//!
//! The service allows 5 active (PENDING or PROCESSING) tasks per user and answers
//! a sixth create with a 429 that no blind retry fixes (Limits, rule 4). A batch
//! keeps at most `max_active` of its requests active, starts the next one as soon
//! as one ends, and gives the results in the order of the requests.

use std::future::{Future, IntoFuture};
use std::pin::Pin;

use futures::StreamExt;
use futures::channel::mpsc;
use futures::stream::FuturesUnordered;
use uuid::Uuid;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::generation::{Generation, GenerationStatus};
use crate::generations::GenerationRequest;
use crate::wait::{WaitOptions, after_create, follow};

/// What happened to one request of a batch.
///
/// ```
/// use mediagen::BatchEvent;
///
/// let event = BatchEvent::Created { id: uuid::Uuid::nil() };
/// assert!(matches!(event, BatchEvent::Created { .. }));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BatchEvent {
    /// The generation was created.
    Created {
        /// Its id.
        id: Uuid,
    },
    /// Its status was read for the first time, or changed.
    Status {
        /// Its id.
        id: Uuid,
        /// The new status.
        status: GenerationStatus,
    },
    /// It ended in `SUCCEEDED`.
    Succeeded {
        /// Its id.
        id: Uuid,
    },
    /// It ended otherwise, or could not be created; the error is in the results.
    Failed {
        /// Its id, if it was created.
        id: Option<Uuid>,
    },
}

/// The state of a batch when one of its requests moves on.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// let requests = vec![mediagen::GenerationRequest::new("flux-schnell", "a fox")];
/// client
///     .generations()
///     .batch(requests)
///     .on_progress(|p| println!("{}/{} done, {} active: #{} {:?}", p.finished, p.total, p.active, p.index, p.event))
///     .await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BatchProgress {
    /// The request that moved on: its position in the input.
    pub index: usize,
    /// What happened to it.
    pub event: BatchEvent,
    /// Requests in the batch.
    pub total: usize,
    /// Requests started and not ended.
    pub active: usize,
    /// Requests ended, either way.
    pub finished: usize,
    /// Requests ended in `SUCCEEDED`.
    pub succeeded: usize,
    /// Requests ended otherwise.
    pub failed: usize,
}

type ProgressCallback<'a> = Box<dyn FnMut(&BatchProgress) + Send + 'a>;

/// Runs many requests with at most 5 active at once (configurable): each starts as
/// soon as a slot frees, and the results come back in input order, one per
/// request. Made by [`Generations::batch`](crate::Generations::batch); await it.
///
/// Each request gets an `Idempotency-Key` (its own, or a UUID v4), kept across the
/// retries of its create. When the user already has other active tasks, a create
/// answered with the concurrency limit waits (on the wait schedule) and tries again
/// with the same key.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// use mediagen::{GenerationRequest, WaitOptions};
///
/// let prompts = ["a fox", "a hare", "an owl", "a lynx", "a stoat", "a wolf", "a bear"];
/// let results = client
///     .generations()
///     .batch(prompts.iter().map(|p| GenerationRequest::new("flux-schnell", *p)))
///     .max_active(3)
///     .options(WaitOptions::default().timeout(std::time::Duration::from_secs(600)))
///     .await;
/// assert_eq!(results.len(), prompts.len());
/// for (prompt, result) in prompts.iter().zip(&results) {
///     let generation = result.as_ref().expect("generated");
///     assert_eq!(generation.prompt.as_deref(), Some(*prompt));
/// }
/// # Ok(())
/// # }
/// ```
#[must_use = "a batch does nothing until it is awaited"]
pub struct Batch<'a> {
    client: &'a Client,
    requests: Vec<GenerationRequest>,
    max_active: usize,
    options: WaitOptions,
    on_progress: Option<ProgressCallback<'a>>,
}

impl std::fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("requests", &self.requests.len())
            .field("max_active", &self.max_active)
            .field("options", &self.options)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

/// The service's limit of active generations per user.
const DEFAULT_MAX_ACTIVE: usize = 5;

impl<'a> Batch<'a> {
    pub(crate) fn new(client: &'a Client, requests: Vec<GenerationRequest>) -> Self {
        Self {
            client,
            requests,
            max_active: DEFAULT_MAX_ACTIVE,
            options: WaitOptions::default(),
            on_progress: None,
        }
    }

    /// Requests active at once (default 5, the service's limit; at least 1). Lower
    /// it when the same user runs other generations at the same time.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let batch = client.generations().batch(Vec::new()).max_active(2);
    /// # drop(batch);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn max_active(mut self, max: usize) -> Self {
        self.max_active = max.max(1);
        self
    }

    /// How each generation is awaited; a timeout applies to each request, from its
    /// first create attempt.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let batch = client.generations().batch(Vec::new()).options(mediagen::WaitOptions::default());
    /// # drop(batch);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn options(mut self, options: WaitOptions) -> Self {
        self.options = options;
        self
    }

    /// Called each time a request is created, changes status or ends.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let batch = client.generations().batch(Vec::new()).on_progress(|p| eprintln!("{}/{}", p.finished, p.total));
    /// # drop(batch);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn on_progress(mut self, callback: impl FnMut(&BatchProgress) + Send + 'a) -> Self {
        self.on_progress = Some(Box::new(callback));
        self
    }

    async fn run(self) -> Vec<Result<Generation>> {
        let Self {
            client,
            requests,
            max_active,
            options,
            mut on_progress,
        } = self;
        let total = requests.len();
        let mut results: Vec<Option<Result<Generation>>> = (0..total).map(|_| None).collect();
        let (events, mut received) = mpsc::unbounded();
        let mut queued = requests.into_iter().enumerate();
        let mut running = FuturesUnordered::new();
        let mut tally = BatchProgress {
            index: 0,
            event: BatchEvent::Failed { id: None },
            total,
            active: 0,
            finished: 0,
            succeeded: 0,
            failed: 0,
        };
        let mut report = |tally: &mut BatchProgress, index, event, active| {
            tally.index = index;
            tally.event = event;
            tally.active = active;
            if let Some(callback) = on_progress.as_mut() {
                callback(tally);
            }
        };
        for (index, request) in queued.by_ref().take(max_active) {
            running.push(run_one(
                client,
                index,
                request,
                options.clone(),
                events.clone(),
            ));
        }
        while !running.is_empty() {
            tokio::select! {
                // Events an item sent before it ended are reported before its end.
                biased;
                Some((index, event)) = received.next() => {
                    let active = running.len();
                    report(&mut tally, index, event, active);
                }
                Some((index, id, result)) = running.next() => {
                    if let Some((next, request)) = queued.next() {
                        running.push(run_one(client, next, request, options.clone(), events.clone()));
                    }
                    while let Ok((index, event)) = received.try_recv() {
                        let active = running.len();
                        report(&mut tally, index, event, active);
                    }
                    tally.finished += 1;
                    let event = match &result {
                        Ok(generation) => {
                            tally.succeeded += 1;
                            BatchEvent::Succeeded { id: generation.id }
                        }
                        Err(_) => {
                            tally.failed += 1;
                            BatchEvent::Failed { id }
                        }
                    };
                    if let Some(slot) = results.get_mut(index) {
                        *slot = Some(result);
                    }
                    let active = running.len();
                    report(&mut tally, index, event, active);
                }
                else => break,
            }
        }
        results
            .into_iter()
            .map(|result| {
                result.unwrap_or_else(|| {
                    Err(Error::InvalidRequest("the batch item did not run".into()))
                })
            })
            .collect()
    }
}

/// One request of a batch, from its create to its end.
async fn run_one(
    client: &Client,
    index: usize,
    mut request: GenerationRequest,
    mut options: WaitOptions,
    events: mpsc::UnboundedSender<(usize, BatchEvent)>,
) -> (usize, Option<Uuid>, Result<Generation>) {
    request.ensure_key();
    let clock = &client.shared().clock;
    let deadline = options.timeout.map(|timeout| clock.now() + timeout);
    let mut refusals = 0;
    let created = loop {
        match client.generations().create(request.clone()).await {
            Err(Error::Api(err)) if matches!(err.kind, ErrorKind::ConcurrencyLimit { .. }) => {
                // Limits rule 4: the user's other tasks hold the slots; wait for one to end.
                let pause = options.interval_after(refusals);
                refusals += 1;
                if deadline.is_some_and(|deadline| clock.now() + pause > deadline) {
                    return (index, None, Err(Error::Api(err)));
                }
                tracing::debug!(
                    index,
                    pause_ms = pause.as_millis() as u64,
                    "concurrency limit; waiting for a slot"
                );
                clock.sleep(pause).await;
            }
            other => break other,
        }
    };
    let created = match created {
        Ok(created) => created,
        Err(err) => return (index, None, Err(err)),
    };
    let id = created.id;
    let _ = events.unbounded_send((index, BatchEvent::Created { id }));
    if let Some(deadline) = deadline {
        options = options.timeout(deadline.saturating_duration_since(clock.now()));
    }
    let result = follow(client, id, options, |generation| {
        let _ = events.unbounded_send((
            index,
            BatchEvent::Status {
                id,
                status: generation.status.clone(),
            },
        ));
    })
    .await;
    (
        index,
        Some(id),
        result.map_err(|err| after_create(err, &created)),
    )
}

impl<'a> IntoFuture for Batch<'a> {
    type Output = Vec<Result<Generation>>;
    type IntoFuture = Pin<Box<dyn Future<Output = Vec<Result<Generation>>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
