//! Generations: create (with its `Idempotency-Key`), read, list, cancel, and the
//! lifecycle the worker moves them through, with the charge, the refund and the
//! event of each final state.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::Store;
use super::jobs::JobKind;
use crate::clock::seconds;
use crate::domain::UserId;
use crate::domain::catalog::Model;
use crate::domain::generation::{
    Accepted, CreateRefusal, FailureCode, Generation, MAX_ACTIVE, Plan, Status,
};
use crate::domain::idempotency::Begin;
use crate::domain::ledger::{Charge, ReserveError};
use crate::domain::money::Kopecks;
use crate::domain::outcome::MagicPrompt;

/// What a create request asks, once validated and priced; the model is the
/// catalogue's own, not a copy.
#[derive(Debug, Clone)]
pub struct CreateRequest<'m> {
    /// The model.
    pub model: &'m Model,
    /// The prompt.
    pub prompt: String,
    /// The model's params.
    pub params: Map<String, Value>,
    /// What it costs.
    pub cost: Kopecks,
    /// The directives of its prompt.
    pub magic: MagicPrompt,
    /// Whether its reference lies outside the mock
    /// ([`reference_outside`](crate::domain::generation::reference_outside)).
    pub reference_outside: bool,
}

impl Store {
    /// Tasks of a user in `PENDING` or `PROCESSING`.
    pub fn active_count(&self, user_id: UserId) -> usize {
        self.active.get(&user_id).copied().unwrap_or(0)
    }

    /// Task `id` of `user_id` left `PENDING`/`PROCESSING` for a final state at `at`.
    pub(super) fn finished(&mut self, user_id: UserId, id: Uuid, at: DateTime<Utc>) {
        if let Some(n) = self.active.get_mut(&user_id) {
            *n = n.saturating_sub(1);
        }
        self.generation_ended(id, at);
    }

    /// Creates a task: the concurrency limit (rule 5), the moderation block, the
    /// balance (rule 6), then the reservation (rule 2), all at once. The task
    /// leaves `PENDING` after `queue_seconds`.
    pub fn create_generation(
        &mut self,
        user_id: UserId,
        request: CreateRequest<'_>,
        now: DateTime<Utc>,
        queue_seconds: f64,
    ) -> Result<Accepted, CreateRefusal> {
        if self.active_count(user_id) >= MAX_ACTIVE {
            return Err(CreateRefusal::TooManyActive);
        }
        if let Some(streak) = self.moderation.blocked(user_id, &request.model.slug, now) {
            return Err(CreateRefusal::ModerationBlocked {
                model_slug: request.model.slug.clone(),
                streak,
            });
        }
        let id = Uuid::new_v4();
        match self.ledger.reserve(user_id, id, request.cost, now) {
            Ok(()) => {}
            Err(ReserveError::Insufficient(i)) => {
                return Err(CreateRefusal::Insufficient {
                    required: i.required,
                    available: i.available,
                });
            }
            // The user exists (it was authenticated), so its account does too.
            Err(ReserveError::Ledger(_)) => {
                return Err(CreateRefusal::Insufficient {
                    required: request.cost,
                    available: Kopecks::ZERO,
                });
            }
        }
        let magic = request.magic;
        let forced = self.outcomes.take(user_id, &request.model.slug);
        let plan = if request.reference_outside {
            Plan::Fail(FailureCode::ReferenceFetchFailed)
        } else if request.prompt.chars().count() > request.model.max_prompt_length {
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
        let accepted = generation.accepted();
        self.generations.insert(id, generation);
        *self.active.entry(user_id).or_default() += 1;
        if let Some(user) = self.users.get_mut(&user_id) {
            user.generations.push(id);
        }
        self.jobs
            .schedule(now + seconds(queue_seconds), id, JobKind::Start);
        self.note_generation(id, "created", now);
        Ok(accepted)
    }

    /// Where a create with `key` stands (rules 7 and 8): fresh, an existing
    /// generation to answer with, or one still being made.
    pub fn begin_keyed_create(&mut self, user_id: UserId, key: &str, now: DateTime<Utc>) -> Begin {
        match self.idempotency.begin(user_id, key, now) {
            // The generation it named was forgotten (retention): the key went with it.
            Begin::Existing(id) if !self.generations.contains_key(&id) => {
                self.idempotency.release_done(user_id, key);
                self.idempotency.begin(user_id, key, now)
            }
            begin => begin,
        }
    }

    /// A keyed create ended: with the generation it made, or refused (the key is
    /// then free for a retry).
    pub fn end_keyed_create(
        &mut self,
        user_id: UserId,
        key: &str,
        made: Option<Uuid>,
        now: DateTime<Utc>,
    ) {
        match made {
            Some(id) => self.idempotency.finish(user_id, key, id, now),
            None => self.idempotency.release(user_id, key),
        }
    }

    /// Any generation, by id (result files are served by id alone).
    pub fn generation(&self, id: Uuid) -> Option<&Generation> {
        self.generations.get(&id)
    }

    /// The caller's generation `id`; another user's is not found (Authentication, rule 6).
    pub fn own_generation(&self, user_id: UserId, id: Uuid) -> Option<&Generation> {
        self.generations.get(&id).filter(|g| g.user_id == user_id)
    }

    /// A user's generations, newest first.
    pub fn generations_of(&self, user_id: UserId) -> impl Iterator<Item = &Generation> {
        self.users
            .get(&user_id)
            .map(|u| u.generations.as_slice())
            .unwrap_or_default()
            .iter()
            .rev()
            .filter_map(|id| self.generations.get(id))
    }

    /// What the ledger holds for a task: reserved, kept or refunded.
    pub fn charge(&self, generation_id: Uuid) -> Option<Charge> {
        self.ledger.charge(generation_id)
    }

    /// Cancels the caller's task while it is `PENDING` and returns its reserve:
    /// `None` when there is no such task, `Err` with the task when it has moved on.
    pub fn cancel_generation(
        &mut self,
        user_id: UserId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Option<Result<Generation, Generation>> {
        let generation = self
            .generations
            .get_mut(&id)
            .filter(|g| g.user_id == user_id)?;
        if !generation.cancel(now) {
            return Some(Err(generation.clone()));
        }
        let generation = generation.clone();
        self.ledger.refund(id, now).ok();
        self.finished(user_id, id, now);
        self.note_generation(id, "cancelled", now);
        Some(Ok(generation))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::domain::catalog::Catalog;
    use crate::store::tests::{at, run_due, with_user};

    pub(crate) fn request(prompt: &str, rub: f64) -> CreateRequest<'static> {
        static CATALOG: std::sync::LazyLock<Catalog> =
            std::sync::LazyLock::new(Catalog::default_catalog);
        let model = CATALOG.get("flux-schnell").unwrap();
        CreateRequest {
            model,
            prompt: prompt.to_owned(),
            params: Map::new(),
            cost: Kopecks::from_rub(rub),
            magic: MagicPrompt::parse(prompt),
            reference_outside: false,
        }
    }

    #[test]
    fn a_create_reserves_the_cost_and_counts_as_active() {
        let (mut store, user) = with_user(10.0);

        let generation = store
            .create_generation(user.user_id, request("a fox", 2.5), at(0), 1.0)
            .unwrap();

        let account = store.account(user.user_id).unwrap();
        assert_eq!(
            (account.available, account.reserved),
            (Kopecks(750), Kopecks(250))
        );
        assert_eq!(store.active_count(user.user_id), 1);
        assert_eq!(
            store
                .own_generation(user.user_id, generation.id)
                .map(|g| g.status),
            Some(Status::Pending)
        );
        assert!(
            store
                .own_generation(UserId::new_v4(), generation.id)
                .is_none()
        );
        store.check_invariants().unwrap();
    }

    #[test]
    fn the_sixth_active_task_and_an_unaffordable_one_are_refused() {
        let (mut store, user) = with_user(100.0);
        for _ in 0..MAX_ACTIVE {
            store
                .create_generation(user.user_id, request("a fox", 1.0), at(0), 60.0)
                .unwrap();
        }
        assert_eq!(
            store
                .create_generation(user.user_id, request("a fox", 1.0), at(0), 60.0)
                .unwrap_err(),
            CreateRefusal::TooManyActive
        );
        assert_eq!(
            CreateRefusal::TooManyActive.to_string(),
            "Maximum 5 concurrent generations allowed"
        );

        let (mut poor, user) = with_user(0.5);
        let refused = poor
            .create_generation(user.user_id, request("a fox", 2.5), at(0), 1.0)
            .unwrap_err();
        assert_eq!(
            refused,
            CreateRefusal::Insufficient {
                required: Kopecks(250),
                available: Kopecks(50)
            }
        );
        assert_eq!(
            refused.to_string(),
            "Insufficient balance: 2.50 RUB required, 0.50 RUB available"
        );
    }

    #[test]
    fn a_task_runs_to_success_keeps_its_charge_and_frees_its_slot() {
        let (mut store, user) = with_user(10.0);
        let id = store
            .create_generation(user.user_id, request("a fox", 2.5), at(0), 1.0)
            .unwrap()
            .id;

        // Taken at 1 s, one attempt of the model's typical duration.
        let next = run_due(&mut store, at(1));
        assert_eq!(store.generation(id).unwrap().status, Status::Processing);
        run_due(&mut store, next.unwrap());

        assert_eq!(store.generation(id).unwrap().status, Status::Succeeded);
        assert!(matches!(store.charge(id), Some(Charge::Kept(_))));
        assert_eq!(store.active_count(user.user_id), 0);
        store.check_invariants().unwrap();
    }

    #[test]
    fn a_forced_failure_is_refunded() {
        let (mut store, user) = with_user(10.0);
        let id = store
            .create_generation(
                user.user_id,
                request("mock:fail=content_policy a fox", 2.5),
                at(0),
                0.0,
            )
            .unwrap()
            .id;
        for secs in 0..60 {
            run_due(&mut store, at(secs));
        }
        let generation = store.generation(id).unwrap();
        assert_eq!(
            (generation.status, generation.error_code),
            (Status::Failed, Some(FailureCode::ContentPolicy))
        );
        assert_eq!(
            store.account(user.user_id).unwrap().available,
            Kopecks(1000)
        );
        store.check_invariants().unwrap();
    }

    #[test]
    fn only_a_pending_task_of_the_caller_is_cancelled() {
        let (mut store, user) = with_user(10.0);
        let id = store
            .create_generation(user.user_id, request("a fox", 2.5), at(0), 5.0)
            .unwrap()
            .id;

        assert!(
            store
                .cancel_generation(UserId::new_v4(), id, at(1))
                .is_none()
        );
        let cancelled = store
            .cancel_generation(user.user_id, id, at(1))
            .unwrap()
            .unwrap();
        assert_eq!(cancelled.status, Status::Cancelled);
        assert_eq!(
            store.account(user.user_id).unwrap().available,
            Kopecks(1000)
        );
        assert!(
            store
                .cancel_generation(user.user_id, id, at(2))
                .unwrap()
                .is_err(),
            "not twice"
        );
        store.check_invariants().unwrap();
    }

    #[test]
    fn a_key_answers_with_its_generation_and_a_refused_create_frees_it() {
        let (mut store, user) = with_user(10.0);
        assert_eq!(
            store.begin_keyed_create(user.user_id, "k", at(0)),
            Begin::Fresh
        );
        assert_eq!(
            store.begin_keyed_create(user.user_id, "k", at(0)),
            Begin::InFlight
        );
        store.end_keyed_create(user.user_id, "k", None, at(0));
        assert_eq!(
            store.begin_keyed_create(user.user_id, "k", at(1)),
            Begin::Fresh
        );
        let id = store
            .create_generation(user.user_id, request("a fox", 1.0), at(1), 1.0)
            .unwrap()
            .id;
        store.end_keyed_create(user.user_id, "k", Some(id), at(1));
        assert_eq!(
            store.begin_keyed_create(user.user_id, "k", at(2)),
            Begin::Existing(id)
        );
    }

    #[test]
    fn a_task_whose_input_file_is_missing_fails_with_input_fetch_failed() {
        let (mut store, user) = with_user(10.0);
        let mut asked = request("a fox", 2.5);
        asked.params.insert(
            "image_file_id".into(),
            Value::from(Uuid::new_v4().to_string()),
        );
        let id = store
            .create_generation(user.user_id, asked, at(0), 0.0)
            .unwrap()
            .id;
        for secs in 0..60 {
            run_due(&mut store, at(secs));
        }
        assert_eq!(
            store.generation(id).unwrap().error_code,
            Some(FailureCode::InputFetchFailed)
        );
    }

    #[test]
    fn generations_are_listed_newest_first() {
        let (mut store, user) = with_user(10.0);
        let first = store
            .create_generation(user.user_id, request("one", 1.0), at(0), 9.0)
            .unwrap()
            .id;
        let second = store
            .create_generation(user.user_id, request("two", 1.0), at(1), 9.0)
            .unwrap()
            .id;
        let ids: Vec<Uuid> = store.generations_of(user.user_id).map(|g| g.id).collect();
        assert_eq!(ids, [second, first]);
    }
}
