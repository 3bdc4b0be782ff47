//! The shared state of the mock: one store behind one lock, the clock, the
//! catalogue and the compiled contract schemas.
//!
//! The store's lock is never held across an `.await`, so every operation on it
//! is atomic: 100 parallel creates see the concurrency limit and the
//! idempotency keys exactly as a sequential run would.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::clock::Clock;
use crate::config::{ClockMode, Config};
use crate::contract::ContractSchemas;
use crate::delivery::{Deliverer, payload};
use crate::domain::UserId;
use crate::domain::auth::{self, Scope, StoredKey};
use crate::domain::billing::{Invoice, Topup};
use crate::domain::catalog::{Catalog, Model};
use crate::domain::file::{FileStatus, StoredFile};
use crate::domain::generation::{AfterAttempt, FailureCode, Generation, Plan, Status};
use crate::domain::idempotency::Idempotency;
use crate::domain::ledger::Ledger;
use crate::domain::moderation::Moderation;
use crate::domain::money::Kopecks;
use crate::domain::outcome::{MagicPrompt, Outcomes};
use crate::domain::rate_limit::RateLimiter;
use crate::domain::requisites::Requisites;
use crate::domain::webhook::{self, Endpoint, Message, MessageState, Trigger};

/// Active tasks allowed per user (service document, Limits).
pub const MAX_ACTIVE_GENERATIONS: usize = 5;
/// Requests kept in the log that `GET /_mock/requests` shows.
const REQUEST_LOG_LEN: usize = 10_000;

#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.inner.config)
            .field("clock", &self.inner.clock)
            .finish_non_exhaustive()
    }
}

struct Shared {
    config: Config,
    clock: Clock,
    schemas: ContractSchemas,
    store: Mutex<Store>,
    /// Wakes the worker when a job is scheduled earlier than it expected.
    worker: Notify,
    deliverer: Deliverer,
    /// The address clients reach the mock at, for the URLs of output files.
    base_url: OnceLock<String>,
    /// The demo user's key, kept so that a reset restores the same key.
    demo_api_key: String,
    /// Signs presigned upload URLs; fresh at every start.
    upload_key: [u8; 32],
}

/// The state of a model as the control API sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    #[default]
    Available,
    Disabled,
    Withdrawn,
    CircuitOpen,
    MarginGuard,
    PricingMissing,
}

#[derive(Debug, Clone)]
pub struct User {
    pub id: UserId,
    pub email: String,
    pub created_at: DateTime<Utc>,
    /// Generation ids, oldest first.
    pub generations: Vec<Uuid>,
}

/// One request as the log keeps it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedRequest {
    pub request_id: String,
    pub at: DateTime<Utc>,
    pub method: String,
    pub path: String,
    pub status: u16,
    pub ip: String,
    pub user_id: Option<UserId>,
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum JobKind {
    /// A task leaves PENDING.
    Start,
    /// A worker attempt of a task ends.
    EndAttempt,
    /// A scheduled delivery attempt of a webhook message.
    Deliver,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Job {
    due: DateTime<Utc>,
    seq: u64,
    /// The generation, or the message for `Deliver`.
    target: Uuid,
    kind: JobKind,
}

#[derive(Debug, Default)]
pub struct Store {
    pub users: HashMap<UserId, User>,
    pub keys: HashMap<String, StoredKey>,
    pub generations: HashMap<Uuid, Generation>,
    pub ledger: Ledger,
    pub idempotency: Idempotency,
    pub rate: RateLimiter,
    pub outcomes: Outcomes,
    pub moderation: Moderation,
    pub model_states: HashMap<String, ModelState>,
    pub requests: VecDeque<LoggedRequest>,
    pub endpoints: HashMap<String, Endpoint>,
    pub messages: HashMap<Uuid, Message>,
    /// Message ids, oldest first.
    pub message_order: Vec<Uuid>,
    pub files: HashMap<Uuid, StoredFile>,
    pub topups: Vec<Topup>,
    pub invoices: Vec<Invoice>,
    /// Requisites of each user's legal entity, with the time they were set.
    pub requisites: HashMap<UserId, (Requisites, DateTime<Utc>)>,
    /// Magic-link messages the mock would have sent, oldest first.
    pub outbox: Vec<OutboxMessage>,
    /// Active tasks per user, kept current on every transition so that the
    /// concurrency check does not scan a user's history.
    active: HashMap<UserId, usize>,
    /// Virtual seconds a create with an `Idempotency-Key` takes (control API),
    /// so that tests can observe rule 8 (409 while the first is executing).
    pub create_latency_secs: f64,
    jobs: BinaryHeap<Reverse<Job>>,
    next_seq: u64,
}

/// A message the service would send by e-mail.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxMessage {
    pub to: String,
    pub subject: String,
    pub link: String,
    pub sent_at: DateTime<Utc>,
}

/// The new user and the one-time value of its key.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewUser {
    pub user_id: UserId,
    pub api_key: String,
    pub email: String,
}

impl AppState {
    pub fn new(config: Config) -> Self {
        let clock = match config.clock {
            ClockMode::Real => Clock::real(config.time_scale),
            ClockMode::Manual => Clock::manual(Utc::now()),
        };
        let demo_api_key = config
            .demo_api_key
            .clone()
            .unwrap_or_else(|| auth::issue(UserId::nil(), Scope::Full).full);
        let state = Self {
            inner: Arc::new(Shared {
                config,
                clock,
                schemas: ContractSchemas::load(),
                store: Mutex::new(Store::default()),
                worker: Notify::new(),
                deliverer: Deliverer::new(),
                base_url: OnceLock::new(),
                demo_api_key,
                upload_key: rand::random(),
            }),
        };
        state.seed_demo_user();
        state
    }

    fn seed_demo_user(&self) {
        let now = self.now();
        let mut store = self.store();
        let id = UserId::new_v4();
        store.add_user(id, "demo@mediagen.test".into(), now);
        if let Some((public, stored)) = auth::adopt(&self.inner.demo_api_key, id) {
            store.keys.insert(public, stored);
        }
        let balance = Kopecks::from_rub(self.inner.config.demo_balance_rub);
        store.ledger.top_up(id, balance, now).ok();
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    pub fn catalog(&self) -> &Catalog {
        &self.inner.config.catalog
    }

    pub fn schemas(&self) -> &ContractSchemas {
        &self.inner.schemas
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }

    pub fn demo_api_key(&self) -> &str {
        &self.inner.demo_api_key
    }

    pub fn upload_key(&self) -> &[u8] {
        &self.inner.upload_key
    }

    /// Locks the store. Never hold the guard across an `.await`.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock cannot leave a half-applied change that
        // matters more than refusing every later request, so recover the data.
        self.inner.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_base_url(&self, url: String) {
        self.inner.base_url.set(url).ok();
    }

    pub fn base_url(&self) -> &str {
        self.inner
            .base_url
            .get()
            .map_or("http://127.0.0.1", String::as_str)
    }

    pub fn worker_notify(&self) -> &Notify {
        &self.inner.worker
    }

    pub fn deliverer(&self) -> &Deliverer {
        &self.inner.deliverer
    }

    /// Creates a user with a balance and a first key.
    pub fn create_user(&self, balance: Kopecks, email: Option<String>) -> NewUser {
        let now = self.now();
        let id = UserId::new_v4();
        let email = email
            .unwrap_or_else(|| format!("user-{}@mediagen.test", &id.simple().to_string()[..8]));
        let key = auth::issue(id, Scope::Full);
        let mut store = self.store();
        store.add_user(id, email.clone(), now);
        store.keys.insert(key.public, key.stored);
        store.ledger.top_up(id, balance, now).ok();
        NewUser {
            user_id: id,
            api_key: key.full,
            email,
        }
    }

    /// Empties the store and creates the demo user again, with the same key.
    pub fn reset(&self) {
        *self.store() = Store::default();
        self.seed_demo_user();
    }

    /// Applies every job due by now: the heart of the worker. The control API
    /// calls it right after advancing a manual clock, so a test sees the
    /// effects of the advance as soon as the call returns.
    pub fn run_due_jobs(&self) -> Option<DateTime<Utc>> {
        let now = self.now();
        let mut deliveries = Vec::new();
        let next = {
            let mut store = self.store();
            loop {
                match store.jobs.peek().copied() {
                    Some(Reverse(job)) if job.due <= now => {
                        store.jobs.pop();
                        match job.kind {
                            JobKind::Deliver => deliveries.push(job.target),
                            JobKind::Start | JobKind::EndAttempt => {
                                store.apply(job, self.base_url())
                            }
                        }
                    }
                    other => break other.map(|Reverse(job)| job.due),
                }
            }
        };
        // Sent outside the lock, each in its own task.
        for message_id in deliveries {
            crate::delivery::spawn_attempt(self, message_id, Trigger::Scheduled);
        }
        next
    }

    /// The time of the next job, if any.
    pub fn next_job_due(&self) -> Option<DateTime<Utc>> {
        self.store().jobs.peek().map(|Reverse(j)| j.due)
    }
}

/// What a create request asks, once validated.
#[derive(Debug, Clone)]
pub struct CreateRequest {
    pub model: Model,
    pub prompt: String,
    pub params: Map<String, Value>,
    pub cost: Kopecks,
}

/// Why a create was refused after validation.
#[derive(Debug, Clone, PartialEq)]
pub enum CreateRefusal {
    TooManyActive,
    Insufficient {
        required: Kopecks,
        available: Kopecks,
    },
    ModerationBlocked {
        streak: u32,
    },
}

impl Store {
    fn add_user(&mut self, id: UserId, email: String, now: DateTime<Utc>) {
        self.users.insert(
            id,
            User {
                id,
                email,
                created_at: now,
                generations: Vec::new(),
            },
        );
        self.ledger.open(id);
    }

    pub fn model_state(&self, slug: &str) -> ModelState {
        self.model_states.get(slug).copied().unwrap_or_default()
    }

    pub fn active_count(&self, user_id: UserId) -> usize {
        self.active.get(&user_id).copied().unwrap_or(0)
    }

    /// A task of `user_id` left `PENDING`/`PROCESSING` for a final state.
    fn finished(&mut self, user_id: UserId) {
        if let Some(n) = self.active.get_mut(&user_id) {
            *n = n.saturating_sub(1);
        }
    }

    fn schedule(&mut self, due: DateTime<Utc>, target: Uuid, kind: JobKind) {
        self.next_seq += 1;
        self.jobs.push(Reverse(Job {
            due,
            seq: self.next_seq,
            target,
            kind,
        }));
    }

    /// A scheduled delivery attempt of `message_id` at `due`.
    pub fn schedule_delivery(&mut self, due: DateTime<Utc>, message_id: Uuid) {
        self.schedule(due, message_id, JobKind::Deliver);
    }

    /// Queues a message for an endpoint, to be sent at `at`.
    pub fn enqueue_message(
        &mut self,
        endpoint: &Endpoint,
        event_type: &'static str,
        event_id: String,
        payload: Vec<u8>,
        at: DateTime<Utc>,
    ) -> Uuid {
        let id = Uuid::new_v4();
        self.messages.insert(
            id,
            Message {
                id,
                event_id,
                event_type,
                endpoint_id: endpoint.id.clone(),
                user_id: endpoint.user_id,
                payload,
                created_at: at,
                state: MessageState::Pending,
                scheduled_attempts: 0,
                attempts: Vec::new(),
            },
        );
        self.message_order.push(id);
        self.schedule_delivery(at, id);
        id
    }

    /// One message per subscribed active endpoint of the task's owner, for a
    /// task that just reached a final state.
    fn emit(&mut self, generation: &Generation, base_url: &str, at: DateTime<Utc>) {
        let event_id = webhook::new_event_id();
        let Some((event_type, body)) = payload::for_generation(generation, base_url, &event_id, at)
        else {
            return;
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let targets: Vec<Endpoint> = self
            .endpoints
            .values()
            .filter(|e| e.user_id == generation.user_id && e.active && e.subscribed(event_type))
            .cloned()
            .collect();
        for endpoint in &targets {
            self.enqueue_message(endpoint, event_type, event_id.clone(), bytes.clone(), at);
        }
    }

    /// Creates a task: the concurrency limit (rule 5), the moderation block,
    /// the balance (rule 6), then the reservation (rule 2), all at once.
    pub fn create_generation(
        &mut self,
        user_id: UserId,
        request: CreateRequest,
        now: DateTime<Utc>,
        queue_seconds: f64,
    ) -> Result<Generation, CreateRefusal> {
        if self.active_count(user_id) >= MAX_ACTIVE_GENERATIONS {
            return Err(CreateRefusal::TooManyActive);
        }
        if let Some(streak) = self.moderation.blocked(user_id, &request.model.slug, now) {
            return Err(CreateRefusal::ModerationBlocked { streak });
        }
        let id = Uuid::new_v4();
        match self.ledger.reserve(user_id, id, request.cost, now) {
            Ok(()) => {}
            Err(crate::domain::ledger::ReserveError::Insufficient(i)) => {
                return Err(CreateRefusal::Insufficient {
                    required: i.required,
                    available: i.available,
                });
            }
            // The user exists (it was authenticated), so its account does too.
            Err(crate::domain::ledger::ReserveError::Ledger(_)) => {
                return Err(CreateRefusal::Insufficient {
                    required: request.cost,
                    available: Kopecks::ZERO,
                });
            }
        }
        let magic = MagicPrompt::parse(&request.prompt);
        let forced = self.outcomes.take(user_id, &request.model.slug);
        let plan = if request.prompt.chars().count() > request.model.max_prompt_length {
            Plan::Fail(FailureCode::PromptTooLong)
        } else {
            magic.plan.or(forced).unwrap_or(Plan::Succeed)
        };
        let generation = Generation {
            id,
            user_id,
            model_slug: request.model.slug.clone(),
            media_type: request.model.media_type,
            prompt: request.prompt,
            params: request.params,
            cost: request.cost,
            status: Status::Pending,
            error_code: None,
            created_at: now,
            started_at: None,
            finished_at: None,
            attempts: 0,
            plan,
            attempt_secs: magic
                .delay_secs
                .unwrap_or(request.model.average_duration_seconds),
            outputs: 1,
        };
        self.generations.insert(id, generation.clone());
        *self.active.entry(user_id).or_default() += 1;
        if let Some(user) = self.users.get_mut(&user_id) {
            user.generations.push(id);
        }
        self.schedule(now + seconds(queue_seconds), id, JobKind::Start);
        Ok(generation)
    }

    /// Cancels a pending task and returns its reserve.
    pub fn cancel_generation(&mut self, id: Uuid, now: DateTime<Utc>) -> Option<Generation> {
        let generation = self.generations.get_mut(&id)?;
        if !generation.cancel(now) {
            return None;
        }
        let generation = generation.clone();
        self.ledger.refund(id, now).ok();
        self.finished(generation.user_id);
        Some(generation)
    }

    fn apply(&mut self, job: Job, base_url: &str) {
        let Some(generation) = self.generations.get_mut(&job.target) else {
            return;
        };
        let attempt = match job.kind {
            JobKind::Start => {
                if let Some(code) = input_failure(generation, &self.files, base_url) {
                    // The worker fetches inputs when it takes the task: a file deleted
                    // or never uploaded by then fails it, like a provider would.
                    generation.plan = Plan::Fail(code);
                }
                if generation.start(job.due) {
                    let due = job.due + seconds(generation.attempt_secs);
                    self.schedule(due, job.target, JobKind::EndAttempt);
                }
                return;
            }
            JobKind::EndAttempt => generation.end_attempt(job.due),
            JobKind::Deliver => return,
        };
        let (user_id, slug, attempt_secs) = (
            generation.user_id,
            generation.model_slug.clone(),
            generation.attempt_secs,
        );
        match attempt {
            Some(AfterAttempt::TryAgain) => {
                self.schedule(
                    job.due + seconds(attempt_secs),
                    job.target,
                    JobKind::EndAttempt,
                );
                return;
            }
            Some(AfterAttempt::Succeeded) => {
                self.finished(user_id);
                self.ledger.keep(job.target).ok();
                self.moderation.succeeded(user_id, &slug);
            }
            Some(AfterAttempt::Failed(code)) => {
                self.finished(user_id);
                self.ledger.refund(job.target, job.due).ok();
                if code == FailureCode::ModerationRejected {
                    self.moderation.rejected(user_id, &slug, job.due);
                }
            }
            None => return,
        }
        // After the ledger: a failure's refund is done before its event is queued
        // (service document: funds are already returned when it is sent).
        if let Some(generation) = self.generations.get(&job.target).cloned() {
            self.emit(&generation, base_url, job.due);
        }
    }

    /// The ledger's invariants, and the active-task counts against the tasks themselves.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.ledger.check()?;
        for user in self.users.values() {
            let scanned = user
                .generations
                .iter()
                .filter_map(|id| self.generations.get(id))
                .filter(|g| g.status.is_active())
                .count();
            if scanned != self.active_count(user.id) {
                return Err(format!(
                    "user {}: {scanned} active tasks but the count says {}",
                    user.id,
                    self.active_count(user.id)
                ));
            }
        }
        Ok(())
    }

    /// Records a request in the log, keeping the newest ones.
    pub fn log_request(&mut self, entry: LoggedRequest) {
        if self.requests.len() >= REQUEST_LOG_LEN {
            self.requests.pop_front();
        }
        self.requests.push_back(entry);
    }
}

/// Why a task's inputs cannot be fetched: an uploaded file (`image_file_id`)
/// missing, deleted, not uploaded or another user's; a reference
/// (`image_url`) outside this mock, which fetches nothing from outside.
fn input_failure(
    generation: &Generation,
    files: &HashMap<Uuid, StoredFile>,
    base_url: &str,
) -> Option<FailureCode> {
    if let Some(raw) = generation.params.get("image_file_id") {
        let usable = raw
            .as_str()
            .and_then(|id| Uuid::parse_str(id).ok())
            .and_then(|id| files.get(&id))
            .is_some_and(|f| f.user_id == generation.user_id && f.status == FileStatus::Uploaded);
        if !usable {
            return Some(FailureCode::InputFetchFailed);
        }
    }
    if let Some(url) = generation.params.get("image_url") {
        let local = url
            .as_str()
            .is_some_and(|u| u.starts_with(&format!("{base_url}/")));
        if !local {
            return Some(FailureCode::ReferenceFetchFailed);
        }
    }
    None
}

/// A duration of `secs` seconds (fractions kept to the microsecond).
pub fn seconds(secs: f64) -> Duration {
    Duration::microseconds((secs.clamp(0.0, 1e10) * 1e6) as i64)
}
