//! The crate's one error type; the service's error answers are read in `api.rs`.

mod api;

use std::path::PathBuf;

use http::StatusCode;

pub use api::{ApiError, ErrorCode, ErrorKind, FieldError};

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

use crate::model::generation::{Generation, GenerationFailure, GenerationStatus};
use crate::operation::OperationId;

/// Everything that can go wrong in a call of this crate.
///
/// The variant says what failed; for an answer of the service ([`Error::Api`]) the
/// [`ErrorKind`] says what to do about it, with the details typed.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let mock = mediagen_mock_server::MockServer::start().await;
/// # let user = mock.create_user(1.0).unwrap();
/// use mediagen::{Client, Error, ErrorKind, GenerationRequest};
///
/// let client = Client::new(&mock.uri(), &user.api_key)?;
/// let request = GenerationRequest::new("veo-3", "a lighthouse at dawn").param("duration", 8);
/// match client.generations().create(request).await {
///     Err(Error::Api(err)) => match err.kind {
///         ErrorKind::InsufficientBalance { required, available } => {
///             println!("top up: {required:?} RUB needed, {available:?} RUB available");
///             assert_eq!(err.status, 402);
///             assert!(err.request_id.as_deref().is_some_and(|id| id.starts_with("req_")));
///         }
///         other => panic!("unexpected {other:?}"),
///     },
///     other => panic!("unexpected {other:?}"),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service answered with an error (HTTP status 400 or above).
    #[error(transparent)]
    Api(Box<ApiError>),

    /// A middleware of the client's `reqwest-middleware` chain failed; whether
    /// the request reached the service is not known.
    #[error("a middleware of the HTTP client failed: {source}")]
    Middleware {
        /// The middleware's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// No answer came: the connection failed or timed out, on every attempt allowed.
    #[error("could not reach the service after {attempts} attempt(s): {source}")]
    Connection {
        /// Attempts made, retries included.
        attempts: u32,
        /// The last transport error.
        #[source]
        source: reqwest::Error,
    },

    /// A generation ended in `FAILED`; [`GenerationFailure::retryable`] says whether a new
    /// generation with the same request can help.
    #[error(transparent)]
    GenerationFailed(Box<GenerationFailure>),

    /// A generation ended in `CANCELLED` while it was awaited.
    #[error("generation {id} was cancelled")]
    GenerationCancelled {
        /// The generation.
        id: uuid::Uuid,
        /// The `Idempotency-Key` it was created with, when this call created it.
        idempotency_key: Option<String>,
    },

    /// Waiting reached its deadline before the generation ended. It goes on on the
    /// service: wait again with [`Generations::wait`](crate::areas::Generations::wait).
    #[error("generation {id} was still {status} at the deadline; wait on it again to resume")]
    WaitTimeout {
        /// The generation.
        id: uuid::Uuid,
        /// Its status when waiting stopped.
        status: GenerationStatus,
        /// The `Idempotency-Key` it was created with, when this call created it.
        idempotency_key: Option<String>,
    },

    /// A generation ended in a status this version does not know: the wait stops at
    /// any status other than `PENDING` and `PROCESSING`, and gives the generation back
    /// as it was read, its status as sent.
    #[error(
        "generation {} ended in status {}, which this version does not know",
        generation.id,
        generation.status
    )]
    UnknownGenerationStatus {
        /// The generation as last read.
        generation: Box<Generation>,
        /// The `Idempotency-Key` it was created with, when this call created it.
        idempotency_key: Option<String>,
    },

    /// Something failed after the service accepted a create (reading the status, the
    /// connection): the generation exists and its cost is reserved. Wait on it again
    /// with [`Generations::wait`](crate::areas::Generations::wait), or create again with the
    /// same `Idempotency-Key`, which returns it instead of a new one.
    #[error("generation {id} was created (idempotency key {idempotency_key}), then {source}")]
    AfterCreate {
        /// The generation.
        id: uuid::Uuid,
        /// The `Idempotency-Key` it was created with.
        idempotency_key: String,
        /// What failed.
        #[source]
        source: Box<Error>,
    },

    /// A request that may act (a top-up, an invoice, an endpoint, a secret rotation,
    /// a test event, a cancel, …) got no clear answer: a 5xx, a timeout or a broken
    /// connection. It was not sent again, since a second attempt could act twice;
    /// check whether it took effect before trying again, as `check` says.
    #[error("the outcome of {operation} is unknown, so it was not sent again: {source}; {check}")]
    OutcomeUnknown {
        /// The operation (`operationId` of the contract).
        operation: &'static str,
        /// How to tell whether it took effect.
        check: &'static str,
        /// The answer, or the failure, that left it unknown.
        #[source]
        source: Box<Error>,
    },

    /// A successful answer did not have the shape the contract gives.
    #[error("the answer to {operation} does not match the contract: {source}")]
    Decode {
        /// The operation (`operationId` of the contract).
        operation: &'static str,
        /// The body as received.
        body: bytes::Bytes,
        /// What did not match.
        #[source]
        source: serde_json::Error,
    },

    /// The service answered with a status the contract does not list for the operation.
    #[error("unexpected HTTP status {status} from {operation}")]
    UnexpectedStatus {
        /// The operation (`operationId` of the contract).
        operation: &'static str,
        /// The status.
        status: StatusCode,
    },

    /// The body of an answer could not be read.
    #[error("reading the answer failed: {0}")]
    Body(#[source] reqwest::Error),

    /// A request of a batch that was never started, and why (the batch stopped
    /// at a failure, or at its cost limit). Nothing was created or charged.
    #[error("not started: {reason}")]
    NotStarted {
        /// Why the batch stopped starting requests.
        reason: String,
    },

    /// A batch's journal could not be read or written. Nothing is created for a
    /// request whose create could not be written down first.
    #[error("the batch's journal failed: {0}")]
    Journal(#[source] Box<dyn std::error::Error + Send + Sync>),

    /// A create of this request was written down more than 24 hours ago and no
    /// answer to it was: its `Idempotency-Key` may have expired on the service,
    /// so it is not sent again, since that could pay twice. Look for the
    /// generation in the list (it may exist) before creating it anew.
    #[error(
        "a create with idempotency key {idempotency_key} got no recorded answer more than 24 hours ago; \
         look for its generation before creating it again"
    )]
    StaleCreate {
        /// The key it was sent with.
        idempotency_key: String,
    },

    /// The request was refused before sending: a value breaks a constraint of the
    /// contract (such as an empty prompt), or an argument is unusable.
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// The client could not be built: a bad base URL or API key, or an unset variable.
    #[error("invalid client configuration: {0}")]
    Config(String),

    /// The client could not be built: an environment variable it reads has a
    /// value it does not take. The caller can name the variable and what it
    /// takes without reading the message.
    ///
    /// ```
    /// let err = mediagen::Error::InvalidVariable {
    ///     variable: mediagen::ENV_SHARED_PACE,
    ///     value: "sometimes".into(),
    ///     expected: "on or off",
    /// };
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid client configuration: MEDIAGEN_SHARED_PACE=\"sometimes\": say on or off"
    /// );
    /// ```
    #[error("invalid client configuration: {variable}={value:?}: say {expected}")]
    InvalidVariable {
        /// The variable, one of the SDK's `ENV_*` names.
        variable: &'static str,
        /// Its value as read (lossily, when it is not UTF-8).
        value: String,
        /// The values it takes, and what it sets.
        expected: &'static str,
    },

    /// A webhook delivery failed verification: a wrong signature, a missing header or
    /// a timestamp out of tolerance. Answer such a delivery with 400.
    #[error("webhook verification failed: {0}")]
    WebhookVerification(#[from] webhook_verify::WebhookError),

    /// A verified webhook delivery whose body is not an event of the contract.
    #[error("webhook payload is not a valid event: {0}")]
    WebhookPayload(#[source] serde_json::Error),

    /// Reading or writing a local file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The service's error, when the service answered with one.
    ///
    /// ```
    /// let err = mediagen::Error::InvalidRequest("empty prompt".into());
    /// assert!(err.api().is_none());
    /// ```
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(err) => Some(err),
            Self::AfterCreate { source, .. } | Self::OutcomeUnknown { source, .. } => source.api(),
            _ => None,
        }
    }

    /// The operation of the contract the error names: the one whose outcome is
    /// unknown, whose answer had an unlisted status or could not be read.
    ///
    /// ```
    /// let err = mediagen::Error::OutcomeUnknown {
    ///     operation: "create_topup",
    ///     check: "list the balance operations",
    ///     source: Box::new(mediagen::Error::InvalidRequest("no answer".into())),
    /// };
    /// assert_eq!(err.operation_id(), Some(mediagen::OperationId::CreateTopup));
    /// ```
    pub fn operation_id(&self) -> Option<OperationId> {
        match self {
            Self::OutcomeUnknown { operation, .. }
            | Self::UnexpectedStatus { operation, .. }
            | Self::Decode { operation, .. } => OperationId::from_operation_id(operation),
            Self::AfterCreate { source, .. } => source.operation_id(),
            _ => None,
        }
    }

    /// The kind of the service's error, when the service answered with one.
    ///
    /// ```
    /// let err = mediagen::Error::InvalidRequest("empty prompt".into());
    /// assert!(err.kind().is_none());
    /// ```
    pub fn kind(&self) -> Option<&ErrorKind> {
        self.api().map(|err| &err.kind)
    }

    /// The HTTP status of the service's answer, when there was one.
    ///
    /// ```
    /// let err = mediagen::Error::InvalidRequest("empty prompt".into());
    /// assert_eq!(err.status(), None);
    /// ```
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Api(err) => Some(err.status),
            Self::UnexpectedStatus { status, .. } => Some(*status),
            Self::AfterCreate { source, .. } | Self::OutcomeUnknown { source, .. } => {
                source.status()
            }
            _ => None,
        }
    }

    /// The generation the error is about, when there is one: a failed, cancelled or
    /// timed-out wait, or anything that failed after a create was accepted. The
    /// generation exists and was paid for: keep this id.
    ///
    /// ```
    /// let id = uuid::Uuid::new_v4();
    /// let err = mediagen::Error::GenerationCancelled { id, idempotency_key: None };
    /// assert_eq!(err.generation_id(), Some(id));
    /// ```
    pub fn generation_id(&self) -> Option<uuid::Uuid> {
        match self {
            Self::GenerationFailed(failure) => Some(failure.id),
            Self::GenerationCancelled { id, .. }
            | Self::WaitTimeout { id, .. }
            | Self::AfterCreate { id, .. } => Some(*id),
            Self::UnknownGenerationStatus { generation, .. } => Some(generation.id),
            _ => None,
        }
    }

    /// The `Idempotency-Key` of the generation the error is about, when this call
    /// created it: creating again with it returns that generation.
    ///
    /// ```
    /// let err = mediagen::Error::GenerationCancelled {
    ///     id: uuid::Uuid::new_v4(),
    ///     idempotency_key: Some("order-17".into()),
    /// };
    /// assert_eq!(err.idempotency_key(), Some("order-17"));
    /// ```
    pub fn idempotency_key(&self) -> Option<&str> {
        match self {
            Self::GenerationFailed(failure) => failure.idempotency_key.as_deref(),
            Self::GenerationCancelled {
                idempotency_key, ..
            }
            | Self::WaitTimeout {
                idempotency_key, ..
            }
            | Self::UnknownGenerationStatus {
                idempotency_key, ..
            } => idempotency_key.as_deref(),
            Self::AfterCreate {
                idempotency_key, ..
            }
            | Self::StaleCreate { idempotency_key } => Some(idempotency_key),
            _ => None,
        }
    }

    /// The request id to quote to support (`error.requestId`, `req_…`).
    ///
    /// ```
    /// let err = mediagen::Error::InvalidRequest("empty prompt".into());
    /// assert_eq!(err.request_id(), None);
    /// ```
    pub fn request_id(&self) -> Option<&str> {
        self.api().and_then(|err| err.request_id.as_deref())
    }

    /// Whether trying the same thing again later can succeed.
    ///
    /// Transient failures were already retried by the client as its
    /// [`RetryPolicy`](crate::RetryPolicy) allows, so this is the answer for a caller
    /// deciding whether to try again after a longer pause: true for service errors of
    /// a temporary kind, connection failures, a concurrency limit that frees up when a
    /// task ends, a failed generation with a temporary cause, and a wait that timed out.
    /// Never for [`Error::OutcomeUnknown`]: check whether the request took effect first.
    ///
    /// ```
    /// let err = mediagen::Error::InvalidRequest("empty prompt".into());
    /// assert!(!err.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            // Trying again could act twice: check first.
            Self::OutcomeUnknown { .. } => false,
            Self::AfterCreate { source, .. } => source.is_retryable(),
            Self::Api(err) => {
                err.is_retryable() || matches!(err.kind, ErrorKind::ConcurrencyLimit { .. })
            }
            Self::Connection { .. } | Self::Body(_) | Self::WaitTimeout { .. } => true,
            Self::GenerationFailed(failure) => failure.retryable(),
            _ => false,
        }
    }
}

impl Error {
    /// The error of the last of `attempts` attempts.
    pub(crate) fn with_attempts(self, attempts: u32) -> Self {
        match self {
            Self::Api(mut err) => {
                err.attempts = attempts;
                Self::Api(err)
            }
            Self::Connection { source, .. } => Self::Connection { attempts, source },
            other => other,
        }
    }
}

impl From<ApiError> for Error {
    fn from(err: ApiError) -> Self {
        Self::Api(Box::new(err))
    }
}
