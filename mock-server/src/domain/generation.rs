//! A generation task and its lifecycle (service document, States and transitions).
//!
//! `PENDING` → `PROCESSING` when a worker takes it, then `SUCCEEDED` or `FAILED`.
//! A provider error is tried again by the worker, 3 attempts in all; errors about
//! the request itself fail at once, since the same input gives the same answer.
//! `CANCELLED` (the contract's design) is reached only from `PENDING`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::UserId;
use super::catalog::MediaType;
use super::money::Kopecks;

/// Worker attempts per task before a provider error is final.
pub const MAX_ATTEMPTS: u8 = 3;

/// Active tasks (`PENDING` plus `PROCESSING`) a user may have at once (Limits).
pub const MAX_ACTIVE: usize = 5;

/// Why a valid create was refused, by the rules of `POST /v1/generations` that
/// depend on the user's state; each message is the service's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CreateRefusal {
    /// Rule 5: 429 without `retry-after`.
    #[error("Maximum {MAX_ACTIVE} concurrent generations allowed")]
    TooManyActive,
    /// Rule 6: 402 with both amounts.
    #[error("Insufficient balance: {required} RUB required, {available} RUB available")]
    Insufficient {
        /// The cost of the request.
        required: Kopecks,
        /// What the balance has available.
        available: Kopecks,
    },
    /// Requests to the model are stopped after repeated safety refusals (409).
    #[error(
        "Requests to model {model_slug} are stopped after {streak} consecutive moderation rejections; change the material or the model"
    )]
    ModerationBlocked {
        /// The model.
        model_slug: String,
        /// Refusals in a row.
        streak: u32,
    },
}

/// Whether a task's reference (`image_url`) lies outside the mock served at
/// `base_url`. The mock fetches nothing from outside, so such a task fails with
/// `reference_fetch_failed` when a worker takes it, as one whose link cannot be
/// downloaded does.
pub fn reference_outside(params: &Map<String, Value>, base_url: &str) -> bool {
    params.get("image_url").is_some_and(|url| {
        !url.as_str().is_some_and(|u| {
            u.strip_prefix(base_url)
                .is_some_and(|path| path.starts_with('/'))
        })
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Pending,
    Processing,
    Succeeded,
    Failed,
    Cancelled,
}

impl Status {
    pub const ALL: [Self; 5] = [
        Self::Pending,
        Self::Processing,
        Self::Succeeded,
        Self::Failed,
        Self::Cancelled,
    ];

    /// `PENDING` and `PROCESSING` count against the limit of 5 active tasks.
    pub fn is_active(self) -> bool {
        matches!(self, Self::Pending | Self::Processing)
    }

    /// The name the API gives the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Processing => "PROCESSING",
            Self::Succeeded => "SUCCEEDED",
            Self::Failed => "FAILED",
            Self::Cancelled => "CANCELLED",
        }
    }
}

/// The `errorCode` of a failed task (service document, failure codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// The wording violates the model policy.
    ContentPolicy,
    /// The material was rejected by the safety check.
    ModerationRejected,
    /// The model rejected a piece of the request by its own rule.
    PromptRejected,
    /// The prompt is longer than the model accepts.
    PromptTooLong,
    /// A reference could not be downloaded from an external link.
    ReferenceFetchFailed,
    /// An uploaded input file could not be downloaded.
    InputFetchFailed,
    /// A parameter is outside the valid range for the model.
    InvalidInput,
    /// Intake on the model is stopped for now; the charge is cancelled.
    InsufficientCredit,
    /// Temporary provider failure.
    RateLimited,
    /// Temporary provider failure.
    Timeout,
    /// Temporary provider failure.
    ProviderUnavailable,
    /// Temporary provider failure.
    ProviderInternal,
}

impl FailureCode {
    /// Every code, in the order of the service document.
    pub const ALL: [Self; 12] = [
        Self::ContentPolicy,
        Self::ModerationRejected,
        Self::PromptRejected,
        Self::PromptTooLong,
        Self::ReferenceFetchFailed,
        Self::InputFetchFailed,
        Self::InvalidInput,
        Self::InsufficientCredit,
        Self::RateLimited,
        Self::Timeout,
        Self::ProviderUnavailable,
        Self::ProviderInternal,
    ];

    /// The code as the service writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ContentPolicy => "content_policy",
            Self::ModerationRejected => "moderation_rejected",
            Self::PromptRejected => "prompt_rejected",
            Self::PromptTooLong => "prompt_too_long",
            Self::ReferenceFetchFailed => "reference_fetch_failed",
            Self::InputFetchFailed => "input_fetch_failed",
            Self::InvalidInput => "invalid_input",
            Self::InsufficientCredit => "insufficient_credit",
            Self::RateLimited => "rate_limited",
            Self::Timeout => "timeout",
            Self::ProviderUnavailable => "provider_unavailable",
            Self::ProviderInternal => "provider_internal",
        }
    }

    /// The code written as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// Temporary provider failures, which the worker tries again (3 attempts in all).
    pub fn is_provider_error(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::Timeout | Self::ProviderUnavailable | Self::ProviderInternal
        )
    }

    /// The human-readable `errorMessage`, after the service document's table.
    pub fn message(self) -> &'static str {
        match self {
            Self::ContentPolicy => {
                "The wording of the request violates the model policy. Rewrite the prompt."
            }
            Self::ModerationRejected => {
                "The material was rejected by the safety check. The same input gives the same result."
            }
            Self::PromptRejected => {
                "The model rejected a part of the request by its own rule. The same text gives the same answer."
            }
            Self::PromptTooLong => "The prompt is longer than the model accepts.",
            Self::ReferenceFetchFailed => {
                "A reference could not be downloaded from its external link."
            }
            Self::InputFetchFailed => "An uploaded input file could not be downloaded.",
            Self::InvalidInput => "A parameter is outside the valid range for the model.",
            Self::InsufficientCredit => {
                "Intake on this model is stopped for now on the service side; the charge was cancelled."
            }
            Self::RateLimited => "The provider is rate limiting; a temporary failure.",
            Self::Timeout => "The provider did not answer in time; a temporary failure.",
            Self::ProviderUnavailable => "The provider is unavailable; a temporary failure.",
            Self::ProviderInternal => "The provider failed internally; a temporary failure.",
        }
    }
}

/// How a task will end, decided when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum Plan {
    Succeed,
    Fail(FailureCode),
}

/// What a create answers with (rule 1): the id, the status and the cost, and
/// nothing else, so a create copies nothing of the task it stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    pub id: Uuid,
    pub status: Status,
    #[serde(rename = "costRub")]
    pub cost: Kopecks,
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Generation {
    pub id: Uuid,
    pub user_id: UserId,
    pub model_slug: String,
    pub media_type: MediaType,
    pub prompt: String,
    pub params: Map<String, Value>,
    pub cost: Kopecks,
    pub status: Status,
    pub error_code: Option<FailureCode>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub attempts: u8,
    pub plan: Plan,
    /// Seconds one worker attempt takes.
    pub attempt_secs: f64,
    /// Number of output files (one for every media type in the mock).
    pub outputs: usize,
}

/// What the worker does next with a task after an attempt ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAttempt {
    Succeeded,
    TryAgain,
    Failed(FailureCode),
}

impl Generation {
    /// The answer to a create of this task, now or repeated with its key.
    pub fn accepted(&self) -> Accepted {
        Accepted {
            id: self.id,
            status: self.status,
            cost: self.cost,
        }
    }

    /// `PENDING` → `PROCESSING`; `false` when the task is no longer pending
    /// (cancelled meanwhile).
    pub fn start(&mut self, at: DateTime<Utc>) -> bool {
        if self.status != Status::Pending {
            return false;
        }
        self.status = Status::Processing;
        self.started_at = Some(at);
        self.attempts = 1;
        true
    }

    /// Ends the current attempt following the plan, and applies a final state.
    pub fn end_attempt(&mut self, at: DateTime<Utc>) -> Option<AfterAttempt> {
        if self.status != Status::Processing {
            return None;
        }
        let next = match self.plan {
            Plan::Succeed => AfterAttempt::Succeeded,
            Plan::Fail(code) if code.is_provider_error() && self.attempts < MAX_ATTEMPTS => {
                AfterAttempt::TryAgain
            }
            Plan::Fail(code) => AfterAttempt::Failed(code),
        };
        match next {
            AfterAttempt::Succeeded => {
                self.status = Status::Succeeded;
                self.finished_at = Some(at);
            }
            AfterAttempt::TryAgain => self.attempts += 1,
            AfterAttempt::Failed(code) => {
                self.status = Status::Failed;
                self.error_code = Some(code);
                self.finished_at = Some(at);
            }
        }
        Some(next)
    }

    /// `PENDING` → `CANCELLED`; `false` in any other state.
    pub fn cancel(&mut self, at: DateTime<Utc>) -> bool {
        if self.status != Status::Pending {
            return false;
        }
        self.status = Status::Cancelled;
        self.finished_at = Some(at);
        true
    }

    /// A stable number from the prompt, so the same prompt renders the same file.
    pub fn seed(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.prompt.hash(&mut h);
        self.model_slug.hash(&mut h);
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_reference_under_the_mocks_own_address_is_inside() {
        let base = "http://127.0.0.1:8080";
        let params = |url: Value| match serde_json::json!({ "image_url": url }) {
            Value::Object(map) => map,
            _ => unreachable!(),
        };
        assert!(!reference_outside(&Map::new(), base), "no reference");
        let inside = params("http://127.0.0.1:8080/outputs/1/0.png".into());
        assert!(!reference_outside(&inside, base));
        for outside in [
            "https://example.com/fox.png",
            "http://127.0.0.1:8080.example.com/x.png",
            "http://127.0.0.1:8080",
        ] {
            assert!(
                reference_outside(&params(outside.into()), base),
                "{outside}"
            );
        }
        assert!(reference_outside(&params(Value::Null), base), "not a link");
    }

    fn task(plan: Plan) -> Generation {
        Generation {
            id: Uuid::new_v4(),
            user_id: UserId::new_v4(),
            model_slug: "m".into(),
            media_type: MediaType::Image,
            prompt: "p".into(),
            params: Map::new(),
            cost: Kopecks(100),
            status: Status::Pending,
            error_code: None,
            created_at: Utc::now(),
            started_at: None,
            finished_at: None,
            attempts: 0,
            plan,
            attempt_secs: 1.0,
            outputs: 1,
        }
    }

    #[test]
    fn provider_error_uses_three_attempts_before_failing() {
        let mut g = task(Plan::Fail(FailureCode::Timeout));
        assert!(g.start(Utc::now()));
        assert_eq!(g.end_attempt(Utc::now()), Some(AfterAttempt::TryAgain));
        assert_eq!(g.end_attempt(Utc::now()), Some(AfterAttempt::TryAgain));
        assert_eq!(
            g.end_attempt(Utc::now()),
            Some(AfterAttempt::Failed(FailureCode::Timeout))
        );
        assert_eq!(
            (g.status, g.attempts, g.error_code),
            (Status::Failed, 3, Some(FailureCode::Timeout))
        );
        assert_eq!(
            g.end_attempt(Utc::now()),
            None,
            "a final task does not move"
        );
    }

    #[test]
    fn request_errors_fail_at_the_first_attempt() {
        let mut g = task(Plan::Fail(FailureCode::ContentPolicy));
        g.start(Utc::now());
        assert_eq!(
            g.end_attempt(Utc::now()),
            Some(AfterAttempt::Failed(FailureCode::ContentPolicy))
        );
        assert_eq!(g.attempts, 1);
    }

    #[test]
    fn only_a_pending_task_can_be_cancelled() {
        let mut g = task(Plan::Succeed);
        assert!(g.cancel(Utc::now()));
        assert!(!g.start(Utc::now()), "a cancelled task never starts");
        let mut running = task(Plan::Succeed);
        running.start(Utc::now());
        assert!(!running.cancel(Utc::now()));
    }

    #[test]
    fn every_failure_code_round_trips_through_its_name() {
        for code in FailureCode::ALL {
            assert_eq!(FailureCode::parse(code.as_str()), Some(code));
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(Value::from(code.as_str()))
            );
        }
    }
}
