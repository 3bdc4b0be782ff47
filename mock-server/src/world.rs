//! The control face of a running mock, for tests in Rust: what the control API
//! under `/_mock/` offers, as methods, with the mock's internals kept inside.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::config::{ClockMode, Responses};
use crate::control::deliveries::{self, Delivery};
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::domain::catalog::ModelState;
use crate::domain::fault::{Fault, FaultView};
use crate::domain::money::Kopecks;
use crate::domain::outcome::ForcedOutcome;
use crate::snapshot::Snapshot;
use crate::state::AppState;
use crate::store::{LoggedRequest, NewUser, OutboxMessage, Store};
use crate::worker::run_due_jobs;

/// A mock's state as a test drives and reads it: users and keys, the clock,
/// outcomes, faults, settings, and what the mock saw. Cheap to clone: every
/// clone is the same mock.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mock = mediagen_mock_server::MockServer::start().await;
/// let user = mock.create_user(500.0);
/// assert!(user.api_key.starts_with("mg_live_"));
/// mock.advance_clock(10.0); // ten seconds pass for every task, rate window and back-off
/// assert!(mock.list_requests().is_empty()); // the control face is not logged
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct World {
    pub(crate) state: AppState,
}

/// A user as the mock knows it (`GET /_mock/users/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UserView {
    /// The user's id.
    pub user_id: UserId,
    /// The sign-in address.
    pub email: String,
    /// Roubles available for new tasks.
    pub balance_rub: f64,
    /// Roubles reserved by active tasks.
    pub reserved_rub: f64,
    /// Tasks in `PENDING` or `PROCESSING`.
    pub active_generations: usize,
    /// Every generation the user made, oldest first.
    pub generations: Vec<Uuid>,
    /// When the user was made, on the mock's clock.
    pub created_at: DateTime<Utc>,
}

/// A generation as the mock's worker sees it: beyond what the service tells
/// a client, how many worker attempts it took.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GenerationRecord {
    /// Its id.
    pub id: Uuid,
    /// Its owner.
    pub user_id: UserId,
    /// The model.
    pub model_slug: String,
    /// `PENDING`, `PROCESSING`, `SUCCEEDED`, `FAILED` or `CANCELLED`.
    pub status: &'static str,
    /// Worker attempts so far (a final failure after three).
    pub attempts: u8,
    /// The cost reserved.
    pub cost_rub: f64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it reached a final state.
    pub finished_at: Option<DateTime<Utc>>,
}

/// The time on a world's clock, its mode and scale (`GET /_mock/clock`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClockView {
    /// Now, on the world's clock.
    pub now: DateTime<Utc>,
    /// `manual` (moved by [`World::advance_clock`]) or `real`.
    pub mode: ClockMode,
    /// How many times faster than real time a real clock runs.
    pub time_scale: f64,
}

/// A world's settings (`GET` and `PUT /_mock/settings`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Settings {
    /// Virtual seconds a create with an `Idempotency-Key` takes, so that a test
    /// can see the 409 of a repeat while the first is executing.
    pub create_latency_seconds: f64,
    /// Virtual seconds after which a new top-up pays itself; `None`: paid by hand.
    pub auto_pay_seconds: Option<f64>,
    /// What answers and webhook bodies carry.
    pub responses: Responses,
}

impl Settings {
    /// The settings the store holds, as `GET /_mock/settings` answers them.
    pub(crate) fn of(store: &Store) -> Self {
        Self {
            create_latency_seconds: store.create_latency_secs(),
            auto_pay_seconds: store.auto_pay_secs(),
            responses: store.responses(),
        }
    }
}

// Operations of the control contract, one method each, named by operationId.
impl World {
    /// The time on the world's clock, its mode and scale.
    pub fn get_clock(&self) -> ClockView {
        let clock = self.state.clock();
        ClockView {
            now: clock.now(),
            mode: if clock.is_manual() {
                ClockMode::Manual
            } else {
                ClockMode::Real
            },
            time_scale: clock.scale(),
        }
    }

    /// Moves the manual clock forward and applies what became due.
    ///
    /// # Panics
    /// When the world runs a real clock, or `seconds` is negative: both are
    /// mistakes in the test.
    pub fn advance_clock(&self, seconds: f64) {
        self.state
            .clock()
            .advance(seconds)
            .expect("advance a manual clock by a non-negative amount");
        run_due_jobs(&self.state);
    }

    /// Sets a model's state.
    pub fn set_model_state(&self, slug: &str, model_state: ModelState) {
        self.state.store().set_model_state(slug, model_state);
    }

    /// The next `rule.count` matching tasks end as `rule` says.
    pub fn force_outcome(&self, rule: ForcedOutcome) {
        self.state.store().force_outcome(rule);
    }

    /// The world's settings.
    pub fn get_settings(&self) -> Settings {
        Settings::of(&self.state.store())
    }

    /// Changes the world's settings to `settings`:
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{MockServer, Responses};
    ///
    /// let mock = MockServer::start().await;
    /// let mut settings = mock.get_settings();
    /// settings.responses = Responses::Minimal; // only what the service document guarantees
    /// mock.update_settings(settings);
    /// # }
    /// ```
    ///
    /// # Panics
    /// When a number of seconds is negative or not a number: a mistake in the test.
    pub fn update_settings(&self, settings: Settings) {
        let seconds = [
            Some(settings.create_latency_seconds),
            settings.auto_pay_seconds,
        ];
        assert!(
            seconds
                .into_iter()
                .flatten()
                .all(|s| s.is_finite() && s >= 0.0),
            "seconds are numbers of at least 0: {settings:?}"
        );
        let mut store = self.state.store();
        store.set_create_latency_secs(settings.create_latency_seconds);
        store.set_auto_pay_secs(settings.auto_pay_seconds);
        store.set_responses(settings.responses);
    }

    /// The requests the service received, oldest first.
    pub fn list_requests(&self) -> Vec<LoggedRequest> {
        self.state.requests().iter().cloned().collect()
    }

    /// Every webhook message the world queued, oldest first, with its attempts.
    pub fn list_deliveries(&self) -> Vec<Delivery> {
        deliveries::deliveries(&self.state)
    }

    /// Makes `host` resolve to `addresses` for webhook URLs, as a DNS answer would.
    pub fn set_dns(&self, host: &str, addresses: Vec<std::net::IpAddr>) {
        self.state.deliverer().resolver.set(host, addresses);
    }

    /// The e-mails the service would have sent (magic links), oldest first.
    pub fn list_outbox(&self) -> Vec<OutboxMessage> {
        self.state.store().outbox().to_vec()
    }

    /// Forgets everything and starts again as at start: the demo user with the
    /// same key, the configured fault rules and settings, an empty request log.
    /// The clock keeps its time.
    pub fn reset(&self) {
        self.state.reset();
    }

    /// Creates a user with `balance_rub` roubles and a first API key.
    pub fn create_user(&self, balance_rub: f64) -> NewUser {
        self.state.create_user(Kopecks::from_rub(balance_rub), None)
    }

    /// A user, with its balance and generations.
    pub fn get_user(&self, user_id: UserId) -> Option<UserView> {
        let store = self.state.store();
        let user = store.user(user_id)?;
        let account = store.account(user_id).unwrap_or_default();
        Some(UserView {
            user_id,
            email: user.email.clone(),
            balance_rub: account.available.rub(),
            reserved_rub: account.reserved.rub(),
            active_generations: store.active_count(user_id),
            generations: user.generations.clone(),
            created_at: user.created_at,
        })
    }

    /// Issues a further key for a user; `None` when the user does not exist.
    /// A [`Scope::ReadOnly`] key is refused (403) on writes.
    pub fn create_key(&self, user_id: UserId, scope: Scope) -> Option<String> {
        self.state
            .store()
            .issue_key(user_id, scope)
            .map(|key| key.full)
    }

    /// Sets a user's available balance; `false` when the user does not exist.
    ///
    /// # Panics
    /// When `balance_rub` is negative or not a number: a mistake in the test.
    pub fn set_balance(&self, user_id: UserId, balance_rub: f64) -> bool {
        assert!(
            balance_rub.is_finite() && balance_rub >= 0.0,
            "a balance is a number of at least 0, not {balance_rub}"
        );
        let now = self.state.now();
        self.state
            .store()
            .set_balance(user_id, Kopecks::from_rub(balance_rub), now)
    }

    /// Revokes the key whose public part (`mg_live_` and the part before the
    /// secret) is `public_part`; false when there is none.
    pub fn revoke_key(&self, public_part: &str) -> bool {
        self.state.store().revoke_key(public_part)
    }

    /// Makes the next requests that match `fault` misbehave; the handle tells
    /// how many uses are left.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{Fault, MockServer};
    ///
    /// let mock = MockServer::start().await;
    /// // The next two creates answer 503; the third goes through.
    /// let fault = mock.inject_fault(Fault::error(503, "SERVICE_UNAVAILABLE").on("POST", "/v1/generations").times(2));
    /// assert_eq!(fault.remaining(), 2);
    /// # }
    /// ```
    ///
    /// # Panics
    /// When the rule cannot be applied (a status below 400, a delay of 0…):
    /// a mistake in the test, told with the reason.
    pub fn inject_fault(&self, fault: Fault) -> FaultHandle {
        let fault = fault
            .checked()
            .unwrap_or_else(|why| panic!("the fault cannot be injected: {why}"));
        let view = self.state.store().inject_fault(fault);
        FaultHandle {
            id: view.id,
            world: self.clone(),
        }
    }

    /// The fault rules still active, oldest first.
    pub fn list_faults(&self) -> Vec<FaultView> {
        self.state.store().faults()
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.state.store().clear_faults();
    }

    /// Removes one fault rule before it is used up; false when there is none.
    pub fn remove_fault(&self, id: &str) -> bool {
        self.state.store().remove_fault(id)
    }

    /// Pays an invoice that awaits payment, as the bank transfer would; false
    /// when there is no such invoice or it is not awaiting payment.
    pub fn pay_invoice(&self, id: Uuid) -> bool {
        let now = self.state.now();
        matches!(self.state.store().pay_invoice(id, now), Some(Ok(_)))
    }

    /// Completes a pending top-up's payment; false when there is no pending
    /// top-up by that id.
    pub fn pay_topup(&self, id: Uuid) -> bool {
        let now = self.state.now();
        matches!(self.state.store().settle_topup(id, true, now), Some(Ok(_)))
    }

    /// Declines a pending top-up's payment; false when there is no pending
    /// top-up by that id.
    pub fn fail_topup(&self, id: Uuid) -> bool {
        let now = self.state.now();
        matches!(self.state.store().settle_topup(id, false, now), Some(Ok(_)))
    }

    /// The world's whole state as one JSON document: users, keys, balances,
    /// ledger, generations with their schedule, files, endpoints and secrets,
    /// messages with their attempts, invoices, top-ups, settings and the clock.
    /// A fixture, to [`put_snapshot`](Self::put_snapshot) into another world:
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = mediagen_mock_server::MockServer::start().await;
    /// let user = mock.create_user(250.0);
    /// let world = mock.world().await;
    /// world.put_snapshot(mock.get_snapshot()).expect("a snapshot of this mock");
    /// assert_eq!(world.get_user(user.user_id).unwrap().balance_rub, 250.0);
    /// # }
    /// ```
    pub fn get_snapshot(&self) -> serde_json::Value {
        self.state.take_snapshot()
    }

    /// Replaces the world's state with `snapshot` and sets its clock to the
    /// snapshot's time. A snapshot of another version, or a broken one, is
    /// refused with the reason, and nothing changes.
    pub fn put_snapshot(&self, snapshot: serde_json::Value) -> Result<(), String> {
        let snapshot = Snapshot::read(snapshot).map_err(|e| e.to_string())?;
        self.state.restore(snapshot);
        Ok(())
    }
}

/// What a Rust test needs beyond the control API.
impl World {
    /// The base URL clients use, such as `http://127.0.0.1:41234`.
    pub fn uri(&self) -> String {
        self.state.base_url().to_owned()
    }

    /// The whole world as a `tower` service, to drive it without a socket
    /// (each request is answered as one from an unknown address).
    pub fn router(&self) -> axum::Router {
        crate::build_app(self.state.clone())
    }

    /// The world's id, for [`MockServer::delete_world`](crate::MockServer::delete_world);
    /// `None` for the server's root, the default world.
    pub fn id(&self) -> Option<&str> {
        let base = self.state.base_url();
        base.rfind("/worlds/")
            .map(|at| &base[at + "/worlds/".len()..])
    }

    /// The time on the world's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.state.now()
    }

    /// The API key of the demo user every world starts with.
    pub fn demo_api_key(&self) -> &str {
        self.state.demo_api_key()
    }

    /// A generation as the worker sees it.
    pub fn generation(&self, id: Uuid) -> Option<GenerationRecord> {
        let store = self.state.store();
        let generation = store.generation(id)?;
        Some(GenerationRecord {
            id,
            user_id: generation.user_id,
            model_slug: generation.model_slug.clone(),
            status: generation.status.as_str(),
            attempts: generation.attempts,
            cost_rub: generation.cost.rub(),
            created_at: generation.created_at,
            finished_at: generation.finished_at,
        })
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
    /// Attempts that became due during [`advance_clock`](Self::advance_clock)
    /// have started by the time it returns, so `advance_clock` then
    /// `deliveries_settled` sees them through (a receiver that hangs ends after
    /// its real time to answer, `Config::delivery_timeout_seconds`, 10 s unless
    /// set shorter).
    pub async fn deliveries_settled(&self) {
        self.state.deliverer().settled().await;
    }
}

/// A fault rule injected with [`World::inject_fault`].
#[derive(Debug, Clone)]
pub struct FaultHandle {
    id: String,
    world: World,
}

impl FaultHandle {
    /// The rule's id, as `GET /_mock/faults` lists it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Uses left: 0 once used up or removed.
    pub fn remaining(&self) -> u32 {
        self.world
            .state
            .store()
            .fault_remaining(&self.id)
            .unwrap_or(0)
    }

    /// Removes the rule before it is used up.
    pub fn remove(&self) {
        self.world.state.store().remove_fault(&self.id);
    }
}
