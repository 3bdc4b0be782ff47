//! The control face of a running mock, for tests in Rust: what the control API
//! under `/_mock/` offers, as methods, with the mock's internals kept inside.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::config::Responses;
use crate::control::deliveries::{self, Delivery};
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::domain::catalog::ModelState;
use crate::domain::fault::Fault;
use crate::domain::money::Kopecks;
use crate::domain::outcome::ForcedOutcome;
use crate::state::AppState;
use crate::store::{LoggedRequest, NewUser, OutboxMessage};
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
/// mock.advance(10.0); // ten seconds pass for every task, rate window and back-off
/// assert!(mock.requests().is_empty()); // the control face is not logged
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

impl World {
    /// The base URL clients use, such as `http://127.0.0.1:41234`.
    pub fn uri(&self) -> String {
        self.state.base_url().to_owned()
    }

    /// The whole mock as a `tower` service, to drive it without a socket (each
    /// request is answered as one from an unknown address).
    pub fn router(&self) -> axum::Router {
        crate::build_app(self.state.clone())
    }

    /// The time on the mock's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.state.now()
    }

    /// The requests the service received, oldest first (`GET /_mock/requests`).
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.state.requests().iter().cloned().collect()
    }

    /// Every webhook message the mock queued, oldest first, with its attempts
    /// (`GET /_mock/deliveries`).
    pub fn deliveries(&self) -> Vec<Delivery> {
        deliveries::deliveries(&self.state)
    }

    /// The e-mails the service would have sent (magic links), oldest first
    /// (`GET /_mock/outbox`).
    pub fn outbox(&self) -> Vec<OutboxMessage> {
        self.state.store().outbox().to_vec()
    }

    /// Forgets everything and starts again as at start: the demo user with the
    /// same key, the configured fault rules and settings, an empty request log
    /// (`POST /_mock/reset`). The clock keeps its time.
    pub fn reset(&self) {
        self.state.reset();
    }

    /// A user, with its balance and generations (`GET /_mock/users/{id}`).
    pub fn user(&self, user_id: UserId) -> Option<UserView> {
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
            world: self.clone(),
        }
    }

    /// Removes every fault rule, as `DELETE /_mock/faults` does.
    pub fn clear_faults(&self) {
        self.state.store().clear_faults();
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

    /// Sets a user's available balance, as `PUT /_mock/users/{id}/balance`
    /// does; `false` when the user does not exist.
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
}

/// A fault rule injected with [`World::inject`].
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
