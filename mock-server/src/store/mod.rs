//! Everything the mock remembers, behind one type with private fields: users and
//! keys, generations, the ledger, webhook endpoints and messages, files, billing,
//! the rate windows and the request log. Routes, the control API, the worker and
//! the deliverer change it only through the operations here, one per thing the
//! service does, each applying the rules of `domain/` atomically under the one
//! lock `AppState` holds.
//!
//! The operations are split by area: `generations.rs`, `webhooks.rs`,
//! `billing.rs`, `files.rs`; the job queue the worker runs is `jobs.rs`.

mod billing;
mod files;
mod generations;
mod history;
mod jobs;
mod journal;
mod retention;
mod webhooks;

use chrono::{DateTime, Utc};
use mediagen_openapi::operations::OperationId;
use serde::Serialize;
use uuid::Uuid;

pub use generations::CreateRequest;
pub use retention::RequestLog;
pub use webhooks::{AttemptReport, EndpointChange, Outgoing};

use crate::config::{Responses, Retention};
use crate::domain::auth::{self, IssuedKey, Scope, StoredKey};
use crate::domain::billing::{Invoice, Topup};
use crate::domain::catalog::ModelState;
use crate::domain::fault::{Effect, Fault, FaultView, Faults};
use crate::domain::file::StoredFile;
use crate::domain::generation::Generation;
use crate::domain::idempotency::Idempotency;
use crate::domain::ledger::{Account, Ledger};
use crate::domain::moderation::Moderation;
use crate::domain::money::Kopecks;
use crate::domain::outcome::{ForcedOutcome, Outcomes};
use crate::domain::rate_limit::{Decision, RateLimiter};
use crate::domain::requisites::Requisites;
use crate::domain::user::User;
use crate::domain::webhook::{Endpoint, Message};
use crate::domain::{FastMap, UserId};
use jobs::Jobs;

/// The new user and the one-time value of its key.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewUser {
    /// The user's id.
    pub user_id: UserId,
    /// The full API key, shown once.
    pub api_key: String,
    /// The sign-in address.
    pub email: String,
    /// Roubles available.
    pub balance_rub: f64,
}

/// One request as the log keeps it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedRequest {
    /// `x-request-id` of the answer.
    pub request_id: String,
    /// When it arrived, on the mock's clock (to the millisecond in JSON).
    #[serde(with = "crate::wire::millis")]
    pub at: DateTime<Utc>,
    /// The HTTP method.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The operation of the contract it is (`operationId`), looked up once
    /// from the route it matched; `None` for a path the contract lacks.
    #[serde(rename = "operationId", serialize_with = "operation_id")]
    pub operation: Option<OperationId>,
    /// The status the service answered with; `None` when a fault dropped the
    /// connection before the service acted.
    pub status: Option<u16>,
    /// The caller's address.
    pub ip: String,
    /// The authenticated user, if any.
    pub user_id: Option<UserId>,
    /// The `Idempotency-Key` sent, if any.
    pub idempotency_key: Option<String>,
    /// The fault rule that applied to it, if any.
    pub fault: Option<String>,
    /// The error envelope's `code`, when the answer is an error.
    #[serde(default)]
    pub error_code: Option<String>,
}

/// An operation as its `operationId`.
fn operation_id<S: serde::Serializer>(
    op: &Option<OperationId>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    op.map(OperationId::as_str).serialize(serializer)
}

/// A message the service would send by e-mail.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OutboxMessage {
    /// The address.
    pub to: String,
    /// The subject line.
    pub subject: String,
    /// The sign-in link it carries.
    pub link: String,
    /// When it was sent.
    pub sent_at: DateTime<Utc>,
}

/// Who a key belongs to, as the authentication rules read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCheck {
    /// A valid key.
    Valid {
        /// Its user.
        user_id: UserId,
        /// What it may do.
        scope: Scope,
    },
    /// The right key, revoked.
    Revoked,
    /// No such key.
    Unknown,
}

/// A key as the control API shows it: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    /// The public part, which names the key.
    pub public_part: String,
    /// What it may do.
    pub scope: Scope,
    /// Whether it was revoked.
    pub revoked: bool,
}

/// The mock's whole state. Its fields are private: every change is an
/// operation of this type.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Store {
    users: FastMap<UserId, User>,
    keys: FastMap<String, StoredKey>,
    generations: FastMap<Uuid, Generation>,
    /// Active tasks per user, kept current on every transition so that the
    /// concurrency check does not scan a user's history.
    active: FastMap<UserId, usize>,
    ledger: Ledger,
    idempotency: Idempotency,
    /// The rate windows: of the moment, not of a snapshot.
    #[serde(skip)]
    rate: RateLimiter,
    outcomes: Outcomes,
    faults: Faults,
    moderation: Moderation,
    model_states: FastMap<String, ModelState>,
    endpoints: FastMap<String, Endpoint>,
    /// Endpoint ids per user, oldest first: a task's end finds whom to tell
    /// without looking at every endpoint.
    endpoints_by_user: FastMap<UserId, Vec<String>>,
    messages: FastMap<Uuid, Message>,
    /// Message ids, oldest first.
    message_order: Vec<Uuid>,
    files: FastMap<Uuid, StoredFile>,
    topups: Vec<Topup>,
    invoices: Vec<Invoice>,
    /// Requisites of each user's legal entity, with the time they were set.
    requisites: FastMap<UserId, (Requisites, DateTime<Utc>)>,
    /// Magic-link messages the mock would have sent, oldest first.
    outbox: Vec<OutboxMessage>,
    /// Virtual seconds a create with an `Idempotency-Key` takes (control API),
    /// so that tests can observe rule 8 (409 while the first is executing).
    create_latency_secs: f64,
    /// Virtual seconds after which a new top-up pays itself, when set.
    auto_pay_secs: Option<f64>,
    /// What answers and webhook bodies carry.
    responses: Responses,
    jobs: Jobs,
    /// How much of what ended is remembered, and what ended, oldest first.
    retention: Retention,
    ended: retention::Ended,
    /// What changed under the current lock, for the live journal.
    #[serde(skip)]
    journal: crate::events::Journal,
}

impl Store {
    /// Adds a user with `balance` and a first key of full scope.
    pub fn create_user(
        &mut self,
        balance: Kopecks,
        email: Option<String>,
        now: DateTime<Utc>,
    ) -> NewUser {
        let id = UserId::new_v4();
        let email = email
            .unwrap_or_else(|| format!("user-{}@mediagen.test", &id.simple().to_string()[..8]));
        self.add_user(id, email.clone(), balance, now);
        let key = auth::issue(id, Scope::Full);
        self.keys.insert(key.public, key.stored);
        NewUser {
            user_id: id,
            api_key: key.full,
            email,
            balance_rub: balance.rub(),
        }
    }

    /// Adds a user whose key is given (the demo user, whose key survives a reset).
    pub fn create_user_with_key(
        &mut self,
        key: &str,
        email: String,
        balance: Kopecks,
        now: DateTime<Utc>,
    ) -> UserId {
        let id = UserId::new_v4();
        self.add_user(id, email, balance, now);
        if let Some((public, stored)) = auth::adopt(key, id) {
            self.keys.insert(public, stored);
        }
        id
    }

    fn add_user(&mut self, id: UserId, email: String, balance: Kopecks, now: DateTime<Utc>) {
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
        // A user just opened always has an account to credit.
        self.ledger.top_up(id, balance, now).ok();
    }

    /// A user, if it exists.
    pub fn user(&self, id: UserId) -> Option<&User> {
        self.users.get(&id)
    }

    /// Issues a further key for a user; `None` when the user does not exist.
    pub fn issue_key(&mut self, user_id: UserId, scope: Scope) -> Option<IssuedKey> {
        if !self.users.contains_key(&user_id) {
            return None;
        }
        let key = auth::issue(user_id, scope);
        self.keys.insert(key.public.clone(), key.stored.clone());
        Some(key)
    }

    /// Revokes the key whose public part is `public`; false when there is none.
    pub fn revoke_key(&mut self, public: &str) -> bool {
        match self.keys.get_mut(public) {
            Some(key) => {
                key.revoked = true;
                true
            }
            None => false,
        }
    }

    /// The keys of a user, without their secrets.
    pub fn keys_of(&self, user_id: UserId) -> Vec<KeyView> {
        let mut keys: Vec<KeyView> = self
            .keys
            .iter()
            .filter(|(_, k)| k.user_id == user_id)
            .map(|(public, k)| KeyView {
                public_part: public.clone(),
                scope: k.scope,
                revoked: k.revoked,
            })
            .collect();
        keys.sort_by(|a, b| a.public_part.cmp(&b.public_part));
        keys
    }

    /// Whose key `public`/`secret` is (Authentication, rules 4 and 5); the secret
    /// is compared in constant time.
    pub fn check_key(&self, public: &str, secret: &str) -> KeyCheck {
        match self.keys.get(public) {
            Some(stored) if stored.matches(secret) && !stored.revoked => KeyCheck::Valid {
                user_id: stored.user_id,
                scope: stored.scope,
            },
            Some(stored) if stored.matches(secret) => KeyCheck::Revoked,
            _ => KeyCheck::Unknown,
        }
    }

    /// A user's balance: available and reserved.
    pub fn account(&self, user_id: UserId) -> Option<Account> {
        self.ledger.account(user_id)
    }

    /// Sets what a user has available (control API); false when there is no such user.
    pub fn set_balance(&mut self, user_id: UserId, amount: Kopecks, now: DateTime<Utc>) -> bool {
        self.ledger.set_available(user_id, amount, now).is_ok()
    }

    /// The state the control API set for a model (available by default).
    pub fn model_state(&self, slug: &str) -> ModelState {
        self.model_states.get(slug).copied().unwrap_or_default()
    }

    /// Sets a model's state (control API).
    pub fn set_model_state(&mut self, slug: &str, state: ModelState) {
        self.model_states.insert(slug.to_owned(), state);
    }

    /// The next `rule.count` matching tasks end as `rule` says.
    pub fn force_outcome(&mut self, rule: ForcedOutcome) {
        self.outcomes.push(rule);
    }

    /// Adds a fault rule (already checked); its view, with its id.
    pub fn inject_fault(&mut self, fault: Fault) -> FaultView {
        self.faults.add(fault)
    }

    /// The active fault rules, oldest first.
    pub fn faults(&self) -> Vec<FaultView> {
        self.faults.list()
    }

    /// Removes a fault rule; false when there is none with that id.
    pub fn remove_fault(&mut self, id: &str) -> bool {
        self.faults.remove(id)
    }

    /// Removes every fault rule.
    pub fn clear_faults(&mut self) {
        self.faults.clear();
    }

    /// Uses a fault rule has left; `None` once used up or removed.
    pub fn fault_remaining(&self, id: &str) -> Option<u32> {
        self.faults.remaining(id)
    }

    /// Takes one use of the first fault rule matching a request.
    pub fn take_fault(
        &mut self,
        method: &str,
        path: &str,
        user_id: Option<UserId>,
    ) -> Option<(String, Effect)> {
        self.faults.take(method, path, user_id)
    }

    /// What answers and webhook bodies carry now.
    pub fn responses(&self) -> Responses {
        self.responses
    }

    /// Changes what answers and webhook bodies carry, from the next one on.
    pub fn set_responses(&mut self, mode: Responses) {
        self.responses = mode;
    }

    /// Takes the records of `snapshot` in place of its own, keeping its own
    /// settings: what answers carry, the keyed-create latency, auto-pay and
    /// the retention bounds. A snapshot brings an account's state; the
    /// settings stay the world's (mock-server/README.md, Snapshots).
    pub fn restore(&mut self, snapshot: Self) {
        let settings = (
            self.responses,
            self.create_latency_secs,
            self.auto_pay_secs,
            self.retention,
        );
        *self = snapshot;
        (
            self.responses,
            self.create_latency_secs,
            self.auto_pay_secs,
            self.retention,
        ) = settings;
    }

    /// Seconds a keyed create takes before it is applied (0 by default).
    pub fn create_latency_secs(&self) -> f64 {
        self.create_latency_secs
    }

    /// Sets how long a keyed create takes (control API).
    pub fn set_create_latency_secs(&mut self, secs: f64) {
        self.create_latency_secs = secs;
    }

    /// The general limit of `ip` as it stands, without counting a request.
    pub fn rate_standing(&self, ip: &str, now: DateTime<Utc>) -> Decision {
        self.rate.standing(ip, now)
    }

    /// Counts a request of the service against the limits of `ip`.
    pub fn admit(&mut self, op: Option<OperationId>, ip: &str, now: DateTime<Utc>) -> Decision {
        self.rate.admit(op, ip, now)
    }

    /// A sign-in link for `email`, kept in the outbox when an account has that
    /// address; the answer does not depend on it, so nothing tells the caller.
    pub fn send_magic_link(&mut self, email: &str, link: String, now: DateTime<Utc>) {
        let email = email.trim().to_lowercase();
        if self.users.values().any(|u| u.email.to_lowercase() == email) {
            let mail = OutboxMessage {
                to: email,
                subject: "Your sign-in link".into(),
                link,
                sent_at: now,
            };
            self.journal.push(
                now,
                crate::events::EventKind::Mail {
                    to: mail.to.clone(),
                    subject: mail.subject.clone(),
                    link: mail.link.clone(),
                },
            );
            self.outbox.push(mail);
        }
    }

    /// The e-mails the service would have sent, oldest first.
    pub fn outbox(&self) -> &[OutboxMessage] {
        &self.outbox
    }

    /// The ledger's invariants, and the active-task counts against the tasks
    /// themselves. Every key, task and endpoint belongs to a user that exists, which a
    /// snapshot written by hand may break.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.ledger.check()?;
        let owners = self
            .keys
            .iter()
            .map(|(public, k)| (format!("key {public}"), k.user_id))
            .chain(
                self.generations
                    .values()
                    .map(|g| (format!("generation {}", g.id), g.user_id)),
            )
            .chain(
                self.endpoints
                    .values()
                    .map(|e| (format!("endpoint {}", e.id), e.user_id)),
            );
        for (what, user_id) in owners {
            if !self.users.contains_key(&user_id) {
                return Err(format!(
                    "{what} belongs to user {user_id}, who does not exist"
                ));
            }
        }
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
}

#[cfg(test)]
pub(crate) mod tests {
    use chrono::TimeZone;

    use super::*;

    pub(crate) fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    /// Runs the jobs due at `now`; when the next job is due. The users of these
    /// tests have no endpoints, so no task's end has an event to queue.
    pub(crate) fn run_due(store: &mut Store, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        store.run_due(now).next
    }

    /// A store with one user holding `rub` roubles.
    pub(crate) fn with_user(rub: f64) -> (Store, NewUser) {
        let mut store = Store::default();
        let user = store.create_user(Kopecks::from_rub(rub), None, at(0));
        (store, user)
    }

    #[test]
    fn a_new_user_has_its_balance_and_a_key_that_authenticates() {
        let (store, user) = with_user(12.5);
        let (public, secret) = auth::parse(&user.api_key).unwrap();

        assert_eq!(
            store.account(user.user_id).map(|a| a.available),
            Some(Kopecks(1250))
        );
        assert_eq!(
            store.check_key(public, secret),
            KeyCheck::Valid {
                user_id: user.user_id,
                scope: Scope::Full
            }
        );
        assert_eq!(store.check_key(public, "wrong"), KeyCheck::Unknown);
    }

    #[test]
    fn a_revoked_key_is_told_apart_from_an_unknown_one() {
        let (mut store, user) = with_user(0.0);
        let (public, secret) = auth::parse(&user.api_key).unwrap();
        let (public, secret) = (public.to_owned(), secret.to_owned());

        assert!(store.revoke_key(&public));
        assert!(!store.revoke_key("nope"));
        assert_eq!(store.check_key(&public, &secret), KeyCheck::Revoked);
    }

    #[test]
    fn keys_are_issued_only_to_users_that_exist_and_listed_without_secrets() {
        let (mut store, user) = with_user(0.0);
        assert!(store.issue_key(UserId::new_v4(), Scope::Full).is_none());
        let read_only = store.issue_key(user.user_id, Scope::ReadOnly).unwrap();

        let keys = store.keys_of(user.user_id);
        assert_eq!(keys.len(), 2);
        assert!(
            keys.iter()
                .any(|k| k.public_part == read_only.public && k.scope == Scope::ReadOnly)
        );
        assert!(!format!("{keys:?}").contains(read_only.full.rsplit('_').next().unwrap()));
    }

    #[test]
    fn a_magic_link_goes_to_the_outbox_only_for_an_account() {
        let (mut store, user) = with_user(0.0);
        store.send_magic_link(&user.email.to_uppercase(), "https://x/1".into(), at(1));
        store.send_magic_link("stranger@example.com", "https://x/2".into(), at(2));

        assert_eq!(store.outbox().len(), 1);
        assert_eq!(store.outbox()[0].to, user.email);
    }

    #[test]
    fn a_model_state_set_by_the_control_api_is_read_back() {
        let mut store = Store::default();
        assert_eq!(store.model_state("flux-schnell"), ModelState::Available);
        store.set_model_state("flux-schnell", ModelState::CircuitOpen);
        assert_eq!(store.model_state("flux-schnell"), ModelState::CircuitOpen);
    }

    #[test]
    fn the_balance_can_be_set_for_users_that_exist_only() {
        let (mut store, user) = with_user(1.0);
        assert!(store.set_balance(user.user_id, Kopecks(700), at(1)));
        assert!(!store.set_balance(UserId::new_v4(), Kopecks(700), at(1)));
        assert_eq!(store.account(user.user_id).unwrap().available, Kopecks(700));
        store.check_invariants().unwrap();
    }
}
