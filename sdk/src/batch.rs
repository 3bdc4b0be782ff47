//! Many generations at once, within the service's concurrency limit.
//!
//! The service allows 5 active (PENDING or PROCESSING) tasks per user and answers
//! a sixth create with a 429 that no blind retry fixes (Limits, rule 4). A batch
//! keeps at most `max_active` of its requests active, starts the next one as soon
//! as one ends, and gives the results in the order of the requests, or each
//! outcome as it ends; it can stop at the first failure or at a cost limit.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures::channel::mpsc;
use futures::stream::{self, FuturesUnordered};
use futures::{Stream, StreamExt};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::generation_request::{CreatedGeneration, GenerationRequest};
use crate::journal::{self, Journal, JournalEntry, item_names};
use crate::model::generation::{Generation, GenerationStatus};
use crate::options::{RequestOptions, request_options};
use crate::side_channel;
use crate::wait::{Known, WaitOptions, after_create, follow};

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
    /// The journal says an earlier run created it: it is followed, not created.
    Resumed {
        /// Its id.
        id: Uuid,
    },
    /// The journal says it ended in an earlier run: its outcome is the one
    /// recorded, and nothing is sent for it.
    Recorded {
        /// Its id.
        id: Uuid,
    },
}

/// The state of a batch when its counts change: a request was created (or resumed
/// from the journal) or ended; and when the journal says a request ended in an
/// earlier run. A status read that changes no count is not told.
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
///     .on_progress(|p| println!("{}/{} done, {} active", p.finished, p.total, p.active))
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
    /// Requests created on the service (or resumed) and not ended.
    pub active: usize,
    /// Requests ended, either way.
    pub finished: usize,
    /// Requests ended in `SUCCEEDED`.
    pub succeeded: usize,
    /// Requests ended otherwise.
    pub failed: usize,
}

type ProgressCallback<'a> = Box<dyn FnMut(&BatchProgress) + Send + 'a>;

/// One request of a batch that ended, as [`Batch::stream`] yields it.
#[derive(Debug)]
#[non_exhaustive]
pub struct BatchOutcome {
    /// Its position in the input.
    pub index: usize,
    /// The generation, or why it did not succeed (with its id and key when it
    /// was created; [`Error::NotStarted`] when the batch stopped before it).
    pub result: Result<Generation>,
}

/// Runs many requests with at most 5 active at once (configurable): each starts as
/// soon as a slot frees. Made by [`Generations::batch`](crate::areas::Generations::batch).
/// Await it for the results in input order, one per request, or take
/// [`stream`](Self::stream) for each outcome as it ends.
///
/// Each request gets an `Idempotency-Key` (its own, or a UUID v4), kept across the
/// retries of its create. When the user already has other active tasks, a create
/// answered with the concurrency limit waits (on the wait schedule, or until one of
/// the batch's own tasks ends and frees a slot, whichever comes first) and tries
/// again with the same key.
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
    fail_fast: bool,
    max_total_cost_rub: Option<f64>,
    journal: Option<Box<dyn Journal + 'a>>,
    stop: Option<Stop<'a>>,
    request_options: RequestOptions,
}

/// A future whose end stops a batch from starting requests.
type Stop<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

impl std::fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("requests", &self.requests.len())
            .field("max_active", &self.max_active)
            .field("options", &self.options)
            .field("on_progress", &self.on_progress.is_some())
            .field("fail_fast", &self.fail_fast)
            .field("max_total_cost_rub", &self.max_total_cost_rub)
            .field("journal", &self.journal.is_some())
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
            fail_fast: false,
            max_total_cost_rub: None,
            journal: None,
            stop: None,
            request_options: RequestOptions::default(),
        }
    }

    request_options!(request_options);

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

    /// Stop starting requests once one fails (default off). Those already
    /// started go on to their end, since they are paid for and their ids must
    /// not be lost; those not started end in [`Error::NotStarted`].
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let batch = client.generations().batch(Vec::new()).fail_fast(true);
    /// # drop(batch);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn fail_fast(mut self, on: bool) -> Self {
        self.fail_fast = on;
        self
    }

    /// Stop creating once the reserved total would pass `rub`: each request is
    /// priced (`POST /v1/generations/estimate`, nothing created) before it is
    /// created, and the costs of those created add up; the first that would pass
    /// the limit, and every one after it, ends in [`Error::NotStarted`].
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let batch = client.generations().batch(Vec::new()).max_total_cost_rub(500.0);
    /// # drop(batch);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn max_total_cost_rub(mut self, rub: f64) -> Self {
        self.max_total_cost_rub = Some(rub);
        self
    }

    /// Writes down each create before it is sent, and each generation's id and
    /// end, in `journal`; a batch started again with the same journal pays for
    /// nothing twice (see [`Journal`]). Each request is an item named by
    /// [`item_names`]: give requests a [`label`](GenerationRequest::label) when
    /// their text may change between runs but they stay the same request.
    ///
    #[cfg_attr(feature = "journal", doc = "```")]
    #[cfg_attr(not(feature = "journal"), doc = "```ignore")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// # let dir = tempfile::tempdir()?;
    /// use mediagen::{GenerationRequest, SqliteJournal};
    ///
    /// let requests = || ["a fox", "a hare"].map(|p| GenerationRequest::new("flux-schnell", p));
    /// let path = dir.path().join("animals.journal");
    /// let first = client.generations().batch(requests())
    ///     .journal(SqliteJournal::open(&path)?)
    ///     .await;
    /// // Again, with the same journal: nothing is created; the outcomes are the same.
    /// let again = client.generations().batch(requests())
    ///     .journal(SqliteJournal::open(&path)?)
    ///     .await;
    /// assert_eq!(first[0].as_ref().unwrap().id, again[0].as_ref().unwrap().id);
    /// # Ok(())
    /// # }
    /// ```
    pub fn journal(mut self, journal: impl Journal + 'a) -> Self {
        self.journal = Some(Box::new(journal));
        self
    }

    /// Stops starting requests once `signal` resolves (a first Ctrl-C, say):
    /// those already started are followed to their end, since they are paid
    /// for; the others end in [`Error::NotStarted`].
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let batch = client.generations().batch(Vec::new()).stop_on(async {
    ///     let _ = stopped.await;
    /// });
    /// # drop((batch, stop));
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn stop_on(mut self, signal: impl Future<Output = ()> + Send + 'a) -> Self {
        self.stop = Some(Box::pin(signal));
        self
    }

    /// Each outcome as it ends, in the order they end; the stream ends when
    /// every request has ended or was not started.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use futures::StreamExt;
    /// use mediagen::GenerationRequest;
    ///
    /// let requests = ["a fox", "a hare"].map(|p| GenerationRequest::new("flux-schnell", p));
    /// let mut outcomes = client.generations().batch(requests).fail_fast(true).stream();
    /// while let Some(outcome) = outcomes.next().await {
    ///     println!("#{} {}", outcome.index, if outcome.result.is_ok() { "done" } else { "failed" });
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream(self) -> impl Stream<Item = BatchOutcome> + Send + Unpin + 'a {
        let options = self.request_options.clone();
        Box::pin(stream::unfold(Runner::new(self), move |mut runner| {
            let options = options.clone();
            async move {
                side_channel::with_options(options, runner.next())
                    .await
                    .map(|outcome| (outcome, runner))
            }
        }))
    }

    async fn run(self) -> Vec<Result<Generation>> {
        let total = self.requests.len();
        let mut results: Vec<Option<Result<Generation>>> = (0..total).map(|_| None).collect();
        let mut outcomes = self.stream();
        while let Some(outcome) = outcomes.next().await {
            if let Some(slot) = results.get_mut(outcome.index) {
                *slot = Some(outcome.result);
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

/// Why the batch stopped starting requests, and what it has reserved.
#[derive(Debug, Default)]
struct Budget {
    /// Roubles reserved by the requests created so far.
    reserved: f64,
    /// Why no more requests start, once that is so.
    stopped: Option<String>,
}

type Running<'a> =
    Pin<Box<dyn Future<Output = (usize, Option<Uuid>, Result<Generation>)> + Send + 'a>>;

/// A batch's journal, shared by the requests that run at once.
type SharedJournal<'a> = Arc<Mutex<Box<dyn Journal + 'a>>>;

/// One request of a batch, with its name in the journal and what the journal
/// recorded of it in an earlier run.
struct Item {
    index: usize,
    request: GenerationRequest,
    name: String,
    recorded: Option<JournalEntry>,
}

/// The state of a batch between two outcomes.
struct Runner<'a> {
    client: &'a Client,
    queued: std::vec::IntoIter<Item>,
    journal: Option<SharedJournal<'a>>,
    running: FuturesUnordered<Running<'a>>,
    events: mpsc::UnboundedSender<(usize, BatchEvent)>,
    received: mpsc::UnboundedReceiver<(usize, BatchEvent)>,
    options: WaitOptions,
    on_progress: Option<ProgressCallback<'a>>,
    tally: BatchProgress,
    /// The requests created (or resumed) and not ended: the tally's `active`.
    live: std::collections::HashSet<usize>,
    /// The counts last told, so that the callback fires on a change only.
    told: Option<(usize, usize, usize, usize)>,
    fail_fast: bool,
    max_total_cost_rub: Option<f64>,
    budget: Arc<Mutex<Budget>>,
    stop: Option<Stop<'a>>,
    /// Told when a task of the batch ends, and so frees one of the user's
    /// slots: a create the concurrency limit refused tries again at once.
    slot_freed: Arc<Notify>,
}

impl<'a> Runner<'a> {
    fn new(mut batch: Batch<'a>) -> Self {
        let (events, received) = mpsc::unbounded();
        let total = batch.requests.len();
        // A header that cannot be one stops the batch before anything starts,
        // and so does a journal that cannot be read.
        let mut stopped = batch
            .request_options
            .check()
            .err()
            .map(|err| err.to_string());
        let mut recorded = match batch.journal.as_mut().map(|journal| journal.entries()) {
            Some(Ok(entries)) => entries.into_iter().map(|e| (e.item.clone(), e)).collect(),
            Some(Err(err)) => {
                stopped.get_or_insert_with(|| err.to_string());
                std::collections::HashMap::new()
            }
            None => std::collections::HashMap::new(),
        };
        let names = item_names(&batch.requests);
        let items: Vec<Item> = batch
            .requests
            .into_iter()
            .zip(names)
            .enumerate()
            .map(|(index, (request, name))| Item {
                index,
                // A generation that failed for a reason a new one may escape
                // (a temporary provider failure) is no outcome to keep: the
                // item is created anew, with a new key, since the old one
                // would return the failure.
                recorded: recorded.remove(&name).filter(|entry| {
                    !entry.ended.as_ref().is_some_and(|g| {
                        g.status == GenerationStatus::Failed
                            && g.error_code.as_ref().is_some_and(|c| c.is_retryable())
                    })
                }),
                request,
                name,
            })
            .collect();
        // What earlier runs reserved counts against the batch's cost limit.
        let reserved = items
            .iter()
            .filter_map(|item| item.recorded.as_ref())
            .filter(|entry| {
                entry.ended.as_ref().is_none_or(|g| {
                    !matches!(
                        g.status,
                        GenerationStatus::Failed | GenerationStatus::Cancelled
                    )
                })
            })
            .filter_map(|entry| entry.cost_rub)
            .sum();
        let mut runner = Self {
            client: batch.client,
            queued: items.into_iter(),
            journal: batch.journal.map(|journal| Arc::new(Mutex::new(journal))),
            running: FuturesUnordered::new(),
            events,
            received,
            options: batch.options,
            on_progress: batch.on_progress,
            tally: BatchProgress {
                index: 0,
                event: BatchEvent::Failed { id: None },
                total,
                active: 0,
                finished: 0,
                succeeded: 0,
                failed: 0,
            },
            live: std::collections::HashSet::new(),
            told: None,
            fail_fast: batch.fail_fast,
            max_total_cost_rub: batch.max_total_cost_rub,
            budget: Arc::new(Mutex::new(Budget { reserved, stopped })),
            stop: batch.stop,
            slot_freed: Arc::new(Notify::new()),
        };
        for _ in 0..batch.max_active {
            if !runner.start_next() {
                break;
            }
        }
        runner
    }

    fn stopped(&self) -> bool {
        self.budget
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stopped
            .is_some()
    }

    /// Starts the next queued request, unless the batch has stopped starting
    /// them; one the journal says ended in an earlier run ends at once.
    fn start_next(&mut self) -> bool {
        if self.stopped() {
            return false;
        }
        let Some(item) = self.queued.next() else {
            return false;
        };
        if let Some(ended) = item.recorded.as_ref().and_then(|e| e.ended.clone()) {
            let (index, id) = (item.index, ended.id);
            let _ = self
                .events
                .unbounded_send((index, BatchEvent::Recorded { id }));
            self.running.push(Box::pin(async move {
                (index, Some(id), crate::wait::outcome(ended))
            }));
            return true;
        }
        self.running.push(Box::pin(run_one(
            self.client,
            item,
            self.options.clone(),
            self.events.clone(),
            self.max_total_cost_rub
                .map(|limit| (limit, Arc::clone(&self.budget))),
            self.journal.clone(),
            Arc::clone(&self.slot_freed),
        )));
        true
    }

    fn report(&mut self, index: usize, event: BatchEvent) {
        match event {
            BatchEvent::Created { .. } | BatchEvent::Resumed { .. } => {
                self.live.insert(index);
            }
            BatchEvent::Succeeded { .. } | BatchEvent::Failed { .. } => {
                self.live.remove(&index);
            }
            BatchEvent::Recorded { .. } => {}
        }
        let counts = (
            self.live.len(),
            self.tally.finished,
            self.tally.succeeded,
            self.tally.failed,
        );
        // A request recorded as ended changes no count yet, but is news to a reader.
        let news = matches!(event, BatchEvent::Recorded { .. });
        if self.told == Some(counts) && !news {
            return;
        }
        self.told = Some(counts);
        self.tally.index = index;
        self.tally.event = event;
        self.tally.active = counts.0;
        if let Some(callback) = self.on_progress.as_mut() {
            callback(&self.tally);
        }
    }

    /// The next request to end; then the requests never started, one by one.
    async fn next(&mut self) -> Option<BatchOutcome> {
        while !self.running.is_empty() {
            tokio::select! {
                // Events an item sent before it ended are reported before its end.
                biased;
                Some((index, event)) = self.received.next() => self.report(index, event),
                () = async {
                    match self.stop.as_mut() {
                        Some(stop) => stop.await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.stop = None;
                    let mut budget = self.budget.lock().unwrap_or_else(|p| p.into_inner());
                    budget.stopped.get_or_insert_with(|| "the batch was stopped".into());
                }
                Some((index, id, result)) = self.running.next() => {
                    while let Ok((index, event)) = self.received.try_recv() {
                        self.report(index, event);
                    }
                    if result.is_err() && self.fail_fast {
                        let mut budget = self.budget.lock().unwrap_or_else(|p| p.into_inner());
                        budget.stopped.get_or_insert_with(|| {
                            format!("request #{index} failed and the batch stops at the first failure")
                        });
                    }
                    self.start_next();
                    self.tally.finished += 1;
                    let event = match &result {
                        Ok(generation) => {
                            self.tally.succeeded += 1;
                            BatchEvent::Succeeded { id: generation.id }
                        }
                        Err(_) => {
                            self.tally.failed += 1;
                            BatchEvent::Failed { id }
                        }
                    };
                    self.report(index, event);
                    return Some(BatchOutcome { index, result });
                }
                else => break,
            }
        }
        // Nothing runs: what is left was never started.
        let Item { index, .. } = self.queued.next()?;
        let reason = self
            .budget
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stopped
            .clone()
            .unwrap_or_else(|| "the batch stopped".into());
        self.tally.finished += 1;
        self.tally.failed += 1;
        self.report(index, BatchEvent::Failed { id: None });
        Some(BatchOutcome {
            index,
            result: Err(Error::NotStarted { reason }),
        })
    }
}

/// One request of a batch, from its create (or, when the journal says an
/// earlier run created it, from its id) to its end.
async fn run_one(
    client: &Client,
    item: Item,
    options: WaitOptions,
    events: mpsc::UnboundedSender<(usize, BatchEvent)>,
    budget: Option<(f64, Arc<Mutex<Budget>>)>,
    journal: Option<SharedJournal<'_>>,
    slot_freed: Arc<Notify>,
) -> (usize, Option<Uuid>, Result<Generation>) {
    let Item {
        index,
        mut request,
        name,
        recorded,
    } = item;
    let clock = &client.shared().clock;
    let deadline = options.timeout.map(|timeout| clock.now() + timeout);
    let created = match recorded {
        Some(JournalEntry {
            id: Some(id),
            idempotency_key,
            cost_rub,
            ..
        }) => {
            let _ = events.unbounded_send((index, BatchEvent::Resumed { id }));
            CreatedGeneration {
                id,
                status: GenerationStatus::Pending,
                cost_rub: cost_rub.unwrap_or_default(),
                idempotency_key,
            }
        }
        recorded => {
            if let Some(entry) = recorded {
                // A create sent before, unanswered: again with its key, which
                // returns its generation, while the service keeps the key.
                if chrono::Utc::now() - entry.planned_at >= journal::KEY_LIFETIME {
                    return (
                        index,
                        None,
                        Err(Error::StaleCreate {
                            idempotency_key: entry.idempotency_key,
                        }),
                    );
                }
                request = request.idempotency_key(entry.idempotency_key);
            }
            match create(
                client,
                index,
                &mut request,
                &name,
                &options,
                deadline,
                budget,
                journal.as_ref(),
                &slot_freed,
            )
            .await
            {
                Ok(created) => {
                    let _ = events.unbounded_send((index, BatchEvent::Created { id: created.id }));
                    created
                }
                Err(err) => return (index, None, Err(err)),
            }
        }
    };
    let id = created.id;
    let mut options = options;
    if let Some(deadline) = deadline {
        options = options.timeout(deadline.saturating_duration_since(clock.now()));
    }
    let known = Known::created(&request, &created, clock.now());
    let result = follow(client, id, options, known, |_| {}).await;
    if matches!(
        result,
        Ok(_) | Err(Error::GenerationFailed(_) | Error::GenerationCancelled { .. })
    ) {
        // Its slot is free: creates waiting for one need not wait out their pause.
        slot_freed.notify_waiters();
    }
    if let (Some(journal), Some(ended)) = (&journal, ended(&result, &created)) {
        let written = journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .ended(&name, &ended);
        // The generation ended all the same; a run that finds it unrecorded
        // reads it again.
        if let Err(err) = written {
            tracing::warn!(index, generation_id = %id, error = %err, "the journal missed an end");
        }
    }
    (
        index,
        Some(id),
        result.map_err(|err| after_create(err, &created)),
    )
}

/// The generation a wait's result says ended, if it ended.
fn ended(result: &Result<Generation>, created: &CreatedGeneration) -> Option<Generation> {
    match result {
        Ok(generation) => Some(generation.clone()),
        Err(Error::GenerationFailed(failure)) => Some(failure.generation.clone()),
        Err(Error::GenerationCancelled { id, .. }) => Some(Generation::new(
            *id,
            GenerationStatus::Cancelled,
            created.cost_rub,
        )),
        Err(Error::UnknownGenerationStatus { generation, .. }) => Some((**generation).clone()),
        Err(_) => None,
    }
}

/// Creates one request of a batch within its budget, written down in the
/// journal before it is sent; waits for a slot when the user's other tasks
/// hold every one.
#[allow(clippy::too_many_arguments)]
async fn create(
    client: &Client,
    index: usize,
    request: &mut GenerationRequest,
    name: &str,
    options: &WaitOptions,
    deadline: Option<std::time::Instant>,
    budget: Option<(f64, Arc<Mutex<Budget>>)>,
    journal: Option<&SharedJournal<'_>>,
    slot_freed: &Notify,
) -> Result<CreatedGeneration> {
    let key = request.ensure_key().to_owned();
    let mut priced = None;
    if let Some((limit, budget)) = &budget {
        let cost = client.generations().estimate(request).await?.cost_rub;
        let mut budget = budget.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reason) = &budget.stopped {
            return Err(Error::NotStarted {
                reason: reason.clone(),
            });
        }
        if budget.reserved + cost > *limit {
            let reason = format!(
                "request #{index} ({cost} RUB) would take the reserved total past the batch's \
                 limit of {limit} RUB ({} RUB reserved)",
                budget.reserved
            );
            budget.stopped = Some(reason.clone());
            return Err(Error::NotStarted { reason });
        }
        // Held while the create runs, so that parallel requests see it.
        budget.reserved += cost;
        priced = Some(cost);
    }
    let release = |created: Option<&CreatedGeneration>| {
        if let (Some((_, budget)), Some(estimate)) = (&budget, priced) {
            let mut budget = budget.lock().unwrap_or_else(|p| p.into_inner());
            // The create's own cost replaces the estimate; nothing is reserved
            // if it failed.
            budget.reserved += created.map_or(0.0, |c| c.cost_rub) - estimate;
        }
    };
    if let Some(journal) = journal {
        // Never pay for what is not written down: no record, no create.
        let planned = journal.lock().unwrap_or_else(|p| p.into_inner()).planned(
            name,
            &key,
            chrono::Utc::now(),
        );
        if let Err(err) = planned {
            release(None);
            return Err(err);
        }
    }
    let clock = &client.shared().clock;
    let mut refusals = 0;
    let created = loop {
        match client.generations().create(request.clone()).await {
            Err(Error::Api(err)) if matches!(err.kind, ErrorKind::ConcurrencyLimit { .. }) => {
                // Limits rule 4: the user's other tasks hold the slots; wait for one
                // to end. The pause is for tasks the batch cannot see; one of its
                // own that ends frees a slot it knows of, and the wait ends then.
                let freed = slot_freed.notified();
                let pause = options.interval_after(refusals);
                refusals += 1;
                if deadline.is_some_and(|deadline| clock.now() + pause > deadline) {
                    break Err(Error::Api(err));
                }
                tracing::debug!(
                    index,
                    delay_ms = pause.as_millis() as u64,
                    reason = "the user's other tasks hold every slot (concurrency limit)",
                    "waiting for a slot"
                );
                tokio::select! {
                    () = clock.sleep(pause) => {}
                    () = freed => {}
                }
            }
            other => break other,
        }
    };
    release(created.as_ref().ok());
    let created = created?;
    if let Some(journal) = journal {
        let written = journal.lock().unwrap_or_else(|p| p.into_inner()).created(
            name,
            created.id,
            created.cost_rub,
        );
        // The generation exists and is paid for: keep following it. A run
        // that finds it unrecorded creates it again with its key, which
        // returns it.
        if let Err(err) = written {
            tracing::warn!(index, generation_id = %created.id, error = %err, "the journal missed a create");
        }
    }
    Ok(created)
}

impl<'a> IntoFuture for Batch<'a> {
    type Output = Vec<Result<Generation>>;
    type IntoFuture = Pin<Box<dyn Future<Output = Vec<Result<Generation>>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
