//! The generation record: what the service says about one task, its status, its
//! kind of media and why it failed. The operations on generations are in
//! `areas/generations.rs`; errors (`error/`) carry these records, so they live
//! below both.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::open_enum::open_enum;

mediagen_openapi::generation_status_values! {
    open_enum! {
        /// State of a generation task.
        ///
        /// `PENDING` and `PROCESSING` are active: they count against the limit of 5
        /// concurrent tasks, and a client waiting on a task polls while it is in either.
        ///
        /// ```
        /// use mediagen::GenerationStatus;
        ///
        /// let status: GenerationStatus = serde_json::from_str(r#""PROCESSING""#)?;
        /// assert!(status.is_active());
        /// let newer: GenerationStatus = serde_json::from_str(r#""ARCHIVED""#)?;
        /// assert_eq!(newer, GenerationStatus::Other("ARCHIVED".into()));
        /// assert!(!newer.is_active());
        /// # Ok::<(), serde_json::Error>(())
        /// ```
        pub enum GenerationStatus
    }
}

impl GenerationStatus {
    /// `PENDING` or `PROCESSING`: the task may still change.
    ///
    /// ```
    /// assert!(mediagen::GenerationStatus::Pending.is_active());
    /// assert!(!mediagen::GenerationStatus::Succeeded.is_active());
    /// ```
    pub fn is_active(&self) -> bool {
        matches!(self, Self::Pending | Self::Processing)
    }
}

mediagen_openapi::media_type_values! {
    open_enum! {
        /// Kind of media a model produces.
        ///
        /// ```
        /// assert_eq!(mediagen::MediaType::from("VIDEO"), mediagen::MediaType::Video);
        /// ```
        pub enum MediaType
    }
}

mediagen_openapi::failure_code_values! {
    open_enum! {
        /// Why a generation failed (`errorCode` of a `FAILED` task; not an HTTP error).
        ///
        /// [`advice`](Self::advice) says what to do, after the service document's table.
        ///
        /// ```
        /// use mediagen::{FailureAdvice, FailureCode};
        ///
        /// assert_eq!(FailureCode::Timeout.advice(), FailureAdvice::Retry);
        /// assert_eq!(FailureCode::ContentPolicy.advice(), FailureAdvice::ChangeRequest);
        /// assert!(!FailureCode::from("something_new").is_retryable());
        /// ```
        pub enum FailureCode
    }
}

/// What to do about a failed generation (the service document's failure table).
///
/// ```
/// use mediagen::{FailureAdvice, FailureCode};
/// assert_eq!(FailureCode::InsufficientCredit.advice(), FailureAdvice::RetryLaterOrOtherModel);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureAdvice {
    /// A temporary provider failure: the same request, as a new generation, may succeed.
    Retry,
    /// Intake on the model is stopped for now: try later, or another model.
    RetryLaterOrOtherModel,
    /// An input could not be fetched: check the file or link, then try again.
    CheckInputs,
    /// The request itself must change (prompt, material or parameters): the same
    /// request fails the same way.
    ChangeRequest,
    /// A code this version does not know.
    Unknown,
}

impl FailureCode {
    /// What to do about a failure with this code.
    ///
    /// ```
    /// use mediagen::{FailureAdvice, FailureCode};
    /// assert_eq!(FailureCode::InputFetchFailed.advice(), FailureAdvice::CheckInputs);
    /// ```
    pub fn advice(&self) -> FailureAdvice {
        match self {
            Self::RateLimited
            | Self::Timeout
            | Self::ProviderUnavailable
            | Self::ProviderInternal => FailureAdvice::Retry,
            Self::InsufficientCredit => FailureAdvice::RetryLaterOrOtherModel,
            Self::ReferenceFetchFailed | Self::InputFetchFailed => FailureAdvice::CheckInputs,
            Self::ContentPolicy
            | Self::ModerationRejected
            | Self::PromptRejected
            | Self::PromptTooLong
            | Self::InvalidInput => FailureAdvice::ChangeRequest,
            Self::Other(_) => FailureAdvice::Unknown,
        }
    }

    /// Whether creating the same request again can succeed without changing it:
    /// the temporary provider failures, and a model whose intake is stopped for now.
    ///
    /// ```
    /// assert!(mediagen::FailureCode::ProviderUnavailable.is_retryable());
    /// assert!(!mediagen::FailureCode::PromptTooLong.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.advice(),
            FailureAdvice::Retry | FailureAdvice::RetryLaterOrOtherModel
        )
    }
}

/// A generation task (`GET /v1/generations/{id}`).
///
/// The service document guarantees `id`, `status` and `cost_rub`, with
/// `output_urls` when `SUCCEEDED` and `error_code` when `FAILED`; the other fields
/// are this toolkit's design of the record and may be absent (`None`), so code
/// that must run against the service relies only on the guaranteed ones. A status
/// or code this version does not know is kept as `Other`, as sent.
///
/// ```
/// // All the service promises for a finished task:
/// let generation: mediagen::Generation = serde_json::from_value(serde_json::json!({
///     "id": "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19", "status": "SUCCEEDED",
///     "costRub": 2.5, "outputUrls": ["https://cdn.example/0.png"]
/// }))?;
/// assert_eq!(generation.status, mediagen::GenerationStatus::Succeeded);
/// assert_eq!(generation.model_slug, None);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Generation {
    /// Identifier of the task.
    pub id: Uuid,
    /// Its state.
    pub status: GenerationStatus,
    /// Cost in roubles reserved for the task (returned if it failed or was cancelled).
    pub cost_rub: f64,
    /// Links to the result files: filled when `SUCCEEDED`, empty before.
    #[serde(default)]
    pub output_urls: Vec<String>,
    /// Why it failed: set when `FAILED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<FailureCode>,
    /// The model (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_slug: Option<String>,
    /// The kind of media (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<MediaType>,
    /// The prompt as sent (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The params as sent (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    /// Human-readable text of the failure, when `FAILED` (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Creation time (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    /// When a worker started the task (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    /// When it reached a final status (designed; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
}

impl Generation {
    /// A generation with what the service guarantees of every one, the rest
    /// unknown.
    pub(crate) fn new(id: Uuid, status: GenerationStatus, cost_rub: f64) -> Self {
        Self {
            id,
            status,
            cost_rub,
            output_urls: Vec::new(),
            error_code: None,
            model_slug: None,
            media_type: None,
            prompt: None,
            params: None,
            error_message: None,
            created_at: None,
            started_at: None,
            finished_at: None,
        }
    }
}

/// A `FAILED` generation, as an error: its code, its message and whether trying
/// again can help.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// use mediagen::{Error, FailureCode, GenerationRequest};
///
/// let request = GenerationRequest::new("flux-schnell", "mock:fail=content_policy a fox");
/// match client.generations().create_and_wait(request).await {
///     Err(Error::GenerationFailed(failure)) => {
///         assert_eq!(failure.code, FailureCode::ContentPolicy);
///         assert!(!failure.retryable()); // rewrite the prompt first
///     }
///     other => panic!("unexpected {other:?}"),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("generation {id} failed with {code}: {message}")]
#[non_exhaustive]
pub struct GenerationFailure {
    /// The generation.
    pub id: Uuid,
    /// `errorCode`, as sent (`Other("")` if the service sent none).
    pub code: FailureCode,
    /// `errorMessage`, or a generic text when the service sent none.
    pub message: String,
    /// The generation as last read.
    pub generation: Generation,
    /// The `Idempotency-Key` it was created with, when the failed call created it.
    pub idempotency_key: Option<String>,
}

impl GenerationFailure {
    pub(crate) fn new(generation: Generation) -> Self {
        Self {
            idempotency_key: None,
            id: generation.id,
            code: generation
                .error_code
                .clone()
                .unwrap_or_else(|| FailureCode::Other(String::new())),
            message: generation
                .error_message
                .clone()
                .unwrap_or_else(|| "the generation failed".to_owned()),
            generation,
        }
    }

    /// Whether creating the same request again can succeed.
    ///
    /// ```
    /// # fn check(failure: &mediagen::GenerationFailure) {
    /// if failure.retryable() {
    ///     // create the same request again, with a new Idempotency-Key
    /// }
    /// # }
    /// ```
    pub fn retryable(&self) -> bool {
        self.code.is_retryable()
    }

    /// What to do about it.
    ///
    /// ```
    /// # fn check(failure: &mediagen::GenerationFailure) {
    /// println!("{:?}", failure.advice());
    /// # }
    /// ```
    pub fn advice(&self) -> FailureAdvice {
        self.code.advice()
    }
}
