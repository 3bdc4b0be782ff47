//! The control face of a running mock, for tests in Rust: what the control API
//! under `/_mock/` offers, as methods, with the mock's internals kept inside.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::clock::ClockView;
use crate::control::ops::billing::{Paid, TopupView};
use crate::control::ops::deliveries::Delivery;
use crate::control::ops::settings::{DnsSet, ModelStateSet, Settings, SettingsUpdate};
use crate::control::ops::users::{CreateUser, NewKey, UserView};
use crate::control::ops::{self, journal};
use crate::delivery::probe::ProbeReport;
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::domain::catalog::ModelState;
use crate::domain::fault::{Fault, FaultView};
use crate::domain::outcome::ForcedOutcome;
use crate::error::ControlError;
use crate::events::EventStream;
use crate::state::AppState;
use crate::store::{LoggedRequest, NewUser, OutboxMessage};
use crate::verdict::{Strict, Verdict};

/// A mock's state as a test drives and reads it: users and keys, the clock,
/// outcomes, faults, settings, and what the mock saw. Cheap to clone: every
/// clone is the same mock.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mock = mediagen_mock_server::MockServer::start().await;
/// let user = mock.create_user(500.0).expect("a balance of at least 0");
/// assert!(user.api_key.starts_with("mg_live_"));
/// mock.advance_clock(10.0).expect("a manual clock"); // ten seconds pass for every task, rate window and back-off
/// assert!(mock.list_requests().is_empty()); // the control face is not logged
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct World {
    pub(crate) state: AppState,
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

// Operations of the control contract, one method each, named by operationId.
// Each is the operation of `control::ops` the HTTP face calls too: the same
// checks, the same refusal (here a `ControlError`), the same answer (here the
// value the HTTP face serializes; a list is the HTTP answer's `data`).
impl World {
    /// The time on the world's clock, its mode and scale.
    pub fn get_clock(&self) -> ClockView {
        ops::clock::get_clock(&self.state)
    }

    /// Moves the manual clock forward by `seconds` (at least 0), applies what
    /// became due, and answers the new time. Refused when the world runs a
    /// real clock ([`ControlError::Conflict`]) or `seconds` is negative or past
    /// the clock's far-future limit ([`ControlError::Invalid`]).
    pub fn advance_clock(&self, seconds: f64) -> Result<ClockView, ControlError> {
        ops::clock::advance_clock(&self.state, seconds)
    }

    /// Sets a model's state; refused for a model the catalogue does not have.
    pub fn set_model_state(
        &self,
        slug: &str,
        model_state: ModelState,
    ) -> Result<ModelStateSet, ControlError> {
        ops::settings::set_model_state(&self.state, slug, model_state)
    }

    /// The next `rule.count` (at least 1) matching tasks end as `rule` says;
    /// refused for a model the catalogue does not have.
    pub fn force_outcome(&self, rule: ForcedOutcome) -> Result<ForcedOutcome, ControlError> {
        ops::settings::force_outcome(&self.state, rule)
    }

    /// The world's settings.
    pub fn get_settings(&self) -> Settings {
        ops::settings::get_settings(&self.state)
    }

    /// Changes the settings `update` gives (whole [`Settings`] change them
    /// all) and answers them all; seconds are from 0 to 3600, and a refused
    /// update changes nothing:
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{MockServer, Responses, SettingsUpdate};
    ///
    /// let mock = MockServer::start().await;
    /// let mut update = SettingsUpdate::default();
    /// update.responses = Some(Responses::Minimal); // only what the service document guarantees
    /// let settings = mock.update_settings(update).expect("a valid update");
    /// assert_eq!(settings.responses, Responses::Minimal);
    ///
    /// let mut update = SettingsUpdate::default();
    /// update.create_latency_seconds = Some(7200.0);
    /// assert!(mock.update_settings(update).is_err(), "an hour at most");
    /// # }
    /// ```
    pub fn update_settings(
        &self,
        update: impl Into<SettingsUpdate>,
    ) -> Result<Settings, ControlError> {
        ops::settings::update_settings(&self.state, update.into())
    }

    /// The requests the service received, oldest first.
    pub fn list_requests(&self) -> Vec<LoggedRequest> {
        journal::list_requests(&self.state)
    }

    /// Every webhook message the world queued, oldest first, with its attempts.
    pub fn list_deliveries(&self) -> Vec<Delivery> {
        ops::deliveries::list_deliveries(&self.state)
    }

    /// Queues `payload` (an event body whose `type` the contract defines) as a
    /// webhook message to an endpoint, sent through the mock's own delivery
    /// path: signed with the endpoint's secret, retried on schedule, in the
    /// journal and the verdict (`POST /_mock/deliveries`). An unknown endpoint
    /// is `NotFound`, a disabled one `Conflict`.
    pub fn create_delivery(
        &self,
        endpoint_id: &str,
        payload: serde_json::Value,
    ) -> Result<Delivery, ControlError> {
        ops::deliveries::create_delivery(&self.state, endpoint_id, payload)
    }

    /// Makes `host` resolve to `addresses` for webhook URLs, as a DNS answer
    /// would; refused for an empty host name.
    pub fn set_dns(
        &self,
        host: &str,
        addresses: Vec<std::net::IpAddr>,
    ) -> Result<DnsSet, ControlError> {
        ops::settings::set_dns(&self.state, host, addresses)
    }

    /// The e-mails the service would have sent (magic links), oldest first.
    pub fn list_outbox(&self) -> Vec<OutboxMessage> {
        journal::list_outbox(&self.state)
    }

    /// Forgets everything and starts again as at start: the demo user with the
    /// same key, the configured fault rules and settings, an empty request log.
    /// The clock keeps its time.
    pub fn reset(&self) {
        journal::reset(&self.state);
    }

    /// Creates a user and its first key: from a number of roubles (at least
    /// 0), or a [`CreateUser`] that also names its sign-in address.
    pub fn create_user(&self, user: impl Into<CreateUser>) -> Result<NewUser, ControlError> {
        ops::users::create_user(&self.state, user.into())
    }

    /// A user, with its balance, its generations and its keys.
    pub fn get_user(&self, user_id: UserId) -> Result<UserView, ControlError> {
        ops::users::get_user(&self.state, user_id)
    }

    /// Issues a further key for a user. A [`Scope::ReadOnly`] key is refused
    /// (403) on writes.
    pub fn create_key(&self, user_id: UserId, scope: Scope) -> Result<NewKey, ControlError> {
        ops::users::create_key(&self.state, user_id, scope)
    }

    /// Sets a user's available balance (at least 0 roubles); answers the user.
    pub fn set_balance(&self, user_id: UserId, balance_rub: f64) -> Result<UserView, ControlError> {
        ops::users::set_balance(&self.state, user_id, balance_rub)
    }

    /// Revokes the key whose public part (`mg_live_` and the part before the
    /// secret) is `public_part`.
    pub fn revoke_key(&self, public_part: &str) -> Result<(), ControlError> {
        ops::users::revoke_key(&self.state, public_part)
    }

    /// Makes the next requests that match `fault` misbehave; the handle tells
    /// how many uses are left. A rule that cannot be applied (a status below
    /// 400, a delay of 0…) is refused with the reason.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{Fault, MockServer};
    ///
    /// let mock = MockServer::start().await;
    /// // The next two creates answer 503; the third goes through.
    /// let fault = mock
    ///     .inject_fault(Fault::error(503, "SERVICE_UNAVAILABLE").on("POST", "/v1/generations").times(2))
    ///     .expect("a rule that applies");
    /// assert_eq!(fault.remaining(), 2);
    /// assert!(mock.inject_fault(Fault::error(200, "OK")).is_err(), "a fault is an error");
    /// # }
    /// ```
    pub fn inject_fault(&self, fault: Fault) -> Result<FaultHandle, ControlError> {
        let view = ops::faults::inject_fault(&self.state, fault)?;
        Ok(FaultHandle {
            view,
            world: self.clone(),
        })
    }

    /// The fault rules still active, oldest first.
    pub fn list_faults(&self) -> Vec<FaultView> {
        ops::faults::list_faults(&self.state)
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        ops::faults::clear_faults(&self.state);
    }

    /// Removes one fault rule before it is used up.
    pub fn remove_fault(&self, id: &str) -> Result<(), ControlError> {
        ops::faults::remove_fault(&self.state, id)
    }

    /// Pays an invoice that awaits payment, as the bank transfer would.
    pub fn pay_invoice(&self, id: Uuid) -> Result<Paid, ControlError> {
        ops::billing::pay_invoice(&self.state, id)
    }

    /// Completes a pending top-up's payment.
    pub fn pay_topup(&self, id: Uuid) -> Result<TopupView, ControlError> {
        ops::billing::settle_topup(&self.state, id, true)
    }

    /// Declines a pending top-up's payment.
    pub fn fail_topup(&self, id: Uuid) -> Result<TopupView, ControlError> {
        ops::billing::settle_topup(&self.state, id, false)
    }

    /// A reader of this world's events from now on: one per request logged,
    /// generation change, ledger row, webhook message and delivery attempt,
    /// top-up, invoice, mail, fault applied and clock move, in order.
    ///
    /// ```
    /// use mediagen_mock_server::{EventKind, MockServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = MockServer::start().await;
    /// let mut events = mock.stream_events();
    /// mock.advance_clock(5.0).expect("a manual clock");
    /// let event = events.recv().await.expect("nothing missed");
    /// assert!(matches!(event.kind, EventKind::Clock { .. }));
    /// assert_eq!(event.at, mock.now());
    /// # }
    /// ```
    pub fn stream_events(&self) -> EventStream {
        journal::stream_events(&self.state, false).1
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
    /// let user = mock.create_user(250.0).expect("a balance of at least 0");
    /// let world = mock.world().await;
    /// world.put_snapshot(mock.get_snapshot()).expect("a snapshot of this mock");
    /// assert_eq!(world.get_user(user.user_id).unwrap().balance_rub, 250.0);
    /// # }
    /// ```
    pub fn get_snapshot(&self) -> serde_json::Value {
        journal::get_snapshot(&self.state)
    }

    /// Replaces the world's state with `snapshot` and sets its clock to the
    /// snapshot's time. A snapshot of another version, or a broken one, is
    /// refused with the reason, and nothing changes.
    pub fn put_snapshot(&self, snapshot: serde_json::Value) -> Result<(), ControlError> {
        journal::put_snapshot(&self.state, snapshot)
    }
}

/// What a Rust test needs beyond the control API.
impl World {
    /// `stream_events` with `?history=true`: the same operation, so not marked as one.
    ///
    /// What the world's records tell of the time before this call (the
    /// history: each generation's steps, ledger rows, webhook messages and
    /// their attempts, top-ups, invoices and mails, oldest first, each with
    /// `seq` 0), and a reader of its events from then on: nothing lies
    /// between the two, and nothing is in both. `stream_events` with
    /// `?history=true` over HTTP. Requests are in
    /// [`World::list_requests`](crate::World::list_requests).
    ///
    /// ```
    /// use mediagen_mock_server::{EventKind, MockServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = MockServer::start().await;
    /// let (history, _events) = mock.stream_events_with_history();
    /// // The demo user's starting balance is its first ledger row.
    /// assert!(matches!(history[0].kind, EventKind::Ledger { .. }));
    /// assert_eq!(history[0].seq, 0);
    /// # }
    /// ```
    pub fn stream_events_with_history(&self) -> (Vec<crate::events::Event>, EventStream) {
        let (history, events) = journal::stream_events(&self.state, true);
        let history = history
            .into_iter()
            .map(|(at, kind)| crate::events::Event { seq: 0, at, kind })
            .collect();
        (history, events)
    }

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

/// A fault rule injected with [`World::inject_fault`]: the rule as
/// `POST /_mock/faults` answers it (and serializes so), and a handle on it.
#[derive(Debug, Clone)]
pub struct FaultHandle {
    view: FaultView,
    world: World,
}

impl Serialize for FaultHandle {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.view.serialize(serializer)
    }
}

impl FaultHandle {
    /// The rule's id, as `GET /_mock/faults` lists it.
    pub fn id(&self) -> &str {
        &self.view.id
    }

    /// The rule as it was injected, its uses then included.
    pub fn view(&self) -> &FaultView {
        &self.view
    }

    /// Uses left: 0 once used up or removed.
    pub fn remaining(&self) -> u32 {
        self.world
            .state
            .store()
            .fault_remaining(&self.view.id)
            .unwrap_or(0)
    }

    /// Removes the rule before it is used up.
    pub fn remove(&self) {
        self.world.state.store().remove_fault(&self.view.id);
    }
}

// Operations of the control contract, one method each, named by operationId.
impl World {
    /// The verdict on the world's client so far: every finding, and whether
    /// any is a violation.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = mediagen_mock_server::MockServer::start().await;
    /// let verdict = mock.get_verdict();
    /// assert!(verdict.clean && verdict.findings.is_empty());
    /// # }
    /// ```
    pub fn get_verdict(&self) -> Verdict {
        ops::verdict::get_verdict(&self.state, &Strict::violations())
    }

    /// Starts the verdict over, for a suite that shares a world between tests.
    pub fn reset_verdict(&self) {
        ops::verdict::reset_verdict(&self.state);
    }

    /// Sends three probes to the endpoint `endpoint_id` now (a wrong signature,
    /// a 10-minute-old timestamp, a repeat of its last acknowledged message)
    /// and returns how its receiver answered each, once all are answered or
    /// timed out; the findings go into the verdict. `NotFound` when there is
    /// no such endpoint.
    pub async fn probe_webhooks(&self, endpoint_id: &str) -> Result<ProbeReport, ControlError> {
        ops::verdict::probe_webhooks(&self.state, endpoint_id).await
    }
}

/// What a Rust test needs beyond the control API.
impl World {
    /// The verdict so far (the same as [`get_verdict`](Self::get_verdict)).
    pub fn verdict(&self) -> Verdict {
        self.get_verdict()
    }

    /// The verdict, failing on violations and on the advice rules `strict`
    /// chooses (`get_verdict` with `?strict=…`): such a finding has `fails`
    /// set and spoils `clean`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{MockServer, Strict};
    ///
    /// let mock = MockServer::start().await;
    /// let strict = Strict::parse("poll-rate,read-after-final").expect("known rules");
    /// assert!(mock.get_verdict_strict(&strict).clean);
    /// # }
    /// ```
    pub fn get_verdict_strict(&self, strict: &Strict) -> Verdict {
        ops::verdict::get_verdict(&self.state, strict)
    }

    /// Panics, with every finding in words, when the verdict has a violation;
    /// advice does not fail it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = mediagen_mock_server::MockServer::start().await;
    /// // … the client under test runs against mock.uri() …
    /// mock.assert_clean();
    /// # }
    /// ```
    ///
    /// # Panics
    /// When a finding is a violation.
    #[track_caller]
    pub fn assert_clean(&self) {
        self.assert_clean_strict(&Strict::violations());
    }

    /// Panics, with every finding in words, when the verdict has a violation
    /// or a finding of an advice rule `strict` chooses.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mediagen_mock_server::{MockServer, Strict};
    ///
    /// let mock = MockServer::start().await;
    /// // … the client under test runs against mock.uri() …
    /// mock.assert_clean_strict(&Strict::parse("poll-rate").expect("a known rule"));
    /// # }
    /// ```
    ///
    /// # Panics
    /// When a finding fails under `strict`.
    #[track_caller]
    pub fn assert_clean_strict(&self, strict: &Strict) {
        let verdict = self.get_verdict_strict(strict);
        if !verdict.clean {
            let failing: Vec<&str> = verdict
                .findings
                .iter()
                .filter(|f| f.fails)
                .map(|f| f.rule.as_str())
                .collect();
            panic!(
                "the mock's verdict on the client fails on {}: {verdict}",
                failing.join(", ")
            );
        }
    }
}
