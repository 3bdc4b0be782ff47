//! The shared handle every route, the worker and the deliverer hold: the
//! configuration, the clock, the compiled contract, and the one [`Store`] behind
//! one lock.
//!
//! The lock is never held across an `.await`, so every operation of the store is
//! atomic: 100 parallel creates see the concurrency limit and the idempotency
//! keys exactly as a sequential run would.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use chrono::{DateTime, Utc};
use tokio::sync::Notify;

use crate::clock::Clock;
use crate::config::{ClockMode, Config};
use crate::contract::ContractSchemas;
use crate::delivery::lanes::Deliverer;
use crate::domain::UserId;
use crate::domain::auth::{self, Scope};
use crate::domain::catalog::Catalog;
use crate::domain::money::Kopecks;
use crate::events::{Bus, EventKind};
use crate::store::{LoggedRequest, NewUser, RequestLog, Store};
use crate::verdict::Judge;

/// The mock's state, cheap to clone: every clone shares it.
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
    schemas: &'static ContractSchemas,
    store: Mutex<Store>,
    /// The request log and the verdict's bookkeeping. The judge asks the
    /// store while judging, so this lock is taken before the store's, never
    /// while holding it.
    ledger: Mutex<Ledger>,
    /// Wakes the worker when a job is scheduled earlier than it expected.
    worker: Notify,
    deliverer: Deliverer,
    /// The address clients reach the mock at, for the URLs of output files.
    base_url: OnceLock<String>,
    /// A world's own control token, beside the admin token (`POST /_mock/worlds`
    /// makes one when the mock has an admin token); the root has none.
    world_token: OnceLock<String>,
    /// The demo user's key, kept so that a reset restores the same key.
    demo_api_key: String,
    /// Signs presigned upload URLs; fresh at every start.
    upload_key: [u8; 32],
    /// The live journal's readers (`GET /_mock/events`).
    events: Bus,
}

/// What a world keeps of its requests, behind one lock that each request
/// takes once: the log, and the verdict's bookkeeping (`GET /_mock/verdict`).
#[derive(Debug)]
pub(crate) struct Ledger {
    pub(crate) log: RequestLog,
    pub(crate) judge: Judge,
}

/// The demo user's sign-in address.
const DEMO_EMAIL: &str = "demo@mediagen.test";

impl AppState {
    /// The state of a mock with `config`, holding only the demo user.
    pub fn new(config: Config) -> Self {
        let clock = match config.clock {
            ClockMode::Real => Clock::real(config.time_scale),
            ClockMode::Manual => Clock::manual(Utc::now()),
        };
        let events = Bus::default();
        clock.publish_moves(events.clone());
        let demo_api_key = config
            .demo_api_key
            .clone()
            .unwrap_or_else(|| auth::issue(UserId::nil(), Scope::Full).full);
        let judge = Judge::new(config.retention.count);
        let state = Self {
            inner: Arc::new(Shared {
                config,
                clock,
                schemas: ContractSchemas::shared(),
                store: Mutex::new(Store::default()),
                ledger: Mutex::new(Ledger {
                    log: RequestLog::default(),
                    judge,
                }),
                worker: Notify::new(),
                deliverer: Deliverer::new(),
                base_url: OnceLock::new(),
                world_token: OnceLock::new(),
                demo_api_key,
                upload_key: rand::random(),
                events,
            }),
        };
        state.seed();
        state
    }

    /// What the configuration gives at start: the demo user, the fault rules,
    /// the auto-pay time, the response mode and the retention bounds.
    fn seed(&self) {
        let config = &self.inner.config;
        let balance = Kopecks::from_rub(config.demo_balance_rub);
        let now = self.now();
        let mut store = self.store();
        if config.demo_user {
            store.create_user_with_key(&self.inner.demo_api_key, DEMO_EMAIL.into(), balance, now);
        }
        for fault in &config.faults {
            store.inject_fault(fault.clone());
        }
        store.set_auto_pay_secs(config.auto_pay_seconds);
        store.set_responses(config.responses);
        store.set_retention(config.retention);
    }

    /// The configuration it was started with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The mock's clock.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// The catalogue of models.
    pub fn catalog(&self) -> &Catalog {
        &self.inner.config.catalog
    }

    /// The contract's schemas, compiled.
    pub fn schemas(&self) -> &ContractSchemas {
        self.inner.schemas
    }

    /// The time on the mock's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }

    /// The demo user's API key.
    pub fn demo_api_key(&self) -> &str {
        &self.inner.demo_api_key
    }

    /// The key presigned upload URLs are signed with.
    pub fn upload_key(&self) -> &[u8] {
        &self.inner.upload_key
    }

    /// Locks the store. Never hold the guard across an `.await`.
    pub fn store(&self) -> StoreGuard<'_> {
        let mut store = lock(&self.inner.store);
        store.listen(self.inner.events.listening());
        StoreGuard {
            store,
            events: &self.inner.events,
        }
    }

    /// The world's live journal.
    pub(crate) fn events(&self) -> &Bus {
        &self.inner.events
    }

    /// Records a request in `log` (the [`ledger`](Self::ledger)'s), within
    /// the retention bounds, and tells the journal's readers (the fault that
    /// applied to it first).
    pub(crate) fn log_request(
        &self,
        log: &mut RequestLog,
        entry: LoggedRequest,
        duration_ms: Option<u64>,
    ) {
        let retention = self.inner.config.retention;
        // Under the ledger's lock, so that the journal tells requests in the
        // log's order.
        if self.inner.events.listening() {
            if let Some(fault_id) = &entry.fault {
                self.inner.events.publish(
                    entry.at,
                    EventKind::Fault {
                        fault_id: fault_id.clone(),
                        request_id: entry.request_id.clone(),
                        user_id: entry.user_id,
                        method: entry.method.clone(),
                        path: entry.path.clone(),
                        status: entry.status,
                    },
                );
            }
            self.inner.events.publish(
                entry.at,
                EventKind::Request {
                    request_id: entry.request_id.clone(),
                    method: entry.method.clone(),
                    path: entry.path.clone(),
                    status: entry.status,
                    error_code: entry.error_code.clone(),
                    user_id: entry.user_id,
                    idempotency_key: entry.idempotency_key.clone(),
                    fault: entry.fault.clone(),
                    duration_ms,
                },
            );
        }
        log.push(entry, retention);
    }

    /// The request log and the verdict's bookkeeping, locked. Never take it
    /// while holding the store's lock, nor hold it across an `.await`.
    pub(crate) fn ledger(&self) -> MutexGuard<'_, Ledger> {
        lock(&self.inner.ledger)
    }

    /// Sets the address clients reach the mock at (once, when it starts serving).
    pub fn set_base_url(&self, url: String) {
        self.inner.base_url.set(url).ok();
    }

    /// The address clients reach the mock at.
    pub fn base_url(&self) -> &str {
        self.inner
            .base_url
            .get()
            .map_or("http://127.0.0.1", String::as_str)
    }

    /// Gives a world its own control token (once, when it is made).
    pub(crate) fn set_world_token(&self, token: String) {
        self.inner.world_token.set(token).ok();
    }

    /// The world's own control token, if it has one.
    pub(crate) fn world_token(&self) -> Option<&str> {
        self.inner.world_token.get().map(String::as_str)
    }

    /// Wakes the worker, for a job due sooner than it expected.
    pub fn worker_notify(&self) -> &Notify {
        &self.inner.worker
    }

    /// The HTTP side of webhook delivery.
    pub fn deliverer(&self) -> &Deliverer {
        &self.inner.deliverer
    }

    /// Creates a user with a balance and a first key.
    pub fn create_user(&self, balance: Kopecks, email: Option<String>) -> NewUser {
        let now = self.now();
        self.store().create_user(balance, email, now)
    }

    /// Empties the store and seeds it again as at start: the demo user with the
    /// same key, the configured fault rules, auto-pay and response mode.
    pub fn reset(&self) {
        *self.store() = Store::default();
        {
            let mut ledger = self.ledger();
            ledger.log = RequestLog::default();
            ledger.judge.reset();
        }
        self.inner.events.publish(self.now(), EventKind::Reset {});
        self.seed();
    }
}

/// The store, locked: what the operation changed is published on the live
/// journal when the lock is let go, still in the order of changes.
pub struct StoreGuard<'a> {
    store: MutexGuard<'a, Store>,
    events: &'a Bus,
}

impl std::ops::Deref for StoreGuard<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

impl std::ops::DerefMut for StoreGuard<'_> {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.store
    }
}

impl Drop for StoreGuard<'_> {
    fn drop(&mut self) {
        // Before the lock is let go: the next operation's events come after.
        for (at, kind) in self.store.take_journal() {
            self.events.publish(at, kind);
        }
    }
}

/// Locks `mutex`. A panic while holding it cannot leave a half-applied change
/// that matters more than refusing every later request, so the data is recovered.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
