//! The one error type of the service and the envelope every error answer has:
//! `{"error": {"code", "message", "requestId", "timestamp", "details"?}}`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use mediagen_openapi::operations::LimitScope;
use mediagen_openapi::sets::ErrorCode as Code;
use serde_json::{Value, json};

use crate::contract::FieldError;
use crate::domain::fault::InjectedError;
use crate::domain::money::Kopecks;

pub type Result<T, E = ApiError> = std::result::Result<T, E>;

/// The envelope's `code`, carried by an error answer's extensions for the
/// request log.
#[derive(Debug, Clone)]
pub(crate) struct ErrorCode(pub(crate) String);

/// The context of the request being answered: its id and the service time at
/// which it arrived. Set by the request middleware for the whole handler task,
/// so that an error built anywhere carries the request's id.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub request_id: String,
    pub received_at: DateTime<Utc>,
}

impl RequestContext {
    /// A fresh request id, for a request that arrived at `received_at`.
    pub fn at(received_at: DateTime<Utc>) -> Self {
        Self {
            request_id: new_request_id(),
            received_at,
        }
    }
}

tokio::task_local! {
    pub static REQUEST: RequestContext;
}

/// A fresh request id, `req_` and 24 hexadecimal digits.
pub fn new_request_id() -> String {
    // 24 hex digits of a v4 UUID, written into one buffer: every request makes one.
    let mut hex = [0u8; uuid::fmt::Simple::LENGTH];
    let hex = uuid::Uuid::new_v4().simple().encode_lower(&mut hex);
    let mut id = String::with_capacity(4 + 24);
    id.push_str("req_");
    id.push_str(&hex[..24]);
    id
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Authentication(&'static str),
    #[error("{0}")]
    Authorization(&'static str),
    #[error("{message}")]
    Validation {
        message: String,
        fields: Vec<FieldError>,
        details: Option<Value>,
    },
    #[error("{0}")]
    NotFound(String),
    #[error("Model {0} is not available to this account")]
    ModelNotAvailable(String),
    #[error("Model {0} was withdrawn by its provider")]
    ModelUnavailable(String),
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    #[error("Request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("{message}")]
    InsufficientBalance {
        message: String,
        required: Kopecks,
        available: Kopecks,
    },
    #[error(
        "The price of model {0} for this request is below the allowed minimum; try another model"
    )]
    MarginGuard(String),
    #[error("{message}")]
    RateLimited {
        message: String,
        /// Windowed limits only, with the limit that was hit; the concurrency
        /// limit has neither (rule 5).
        window: Option<Window>,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("{message}")]
    ModerationRepeatBlocked {
        message: String,
        model_slug: String,
        streak: u32,
    },
    #[error("Intake of generations on model {0} is stopped for now; choose another model or wait")]
    UpstreamCircuitOpen(String),
    #[error("{message}")]
    DailyCapExceeded { message: String, limit: Kopecks },
    #[error("internal error: {0:#}")]
    Internal(#[from] anyhow::Error),
    /// An answer a fault rule or a magic prompt asked for.
    #[error("{}", .0.message)]
    Injected(InjectedError),
}

/// A windowed limit that refused a request: which one, and the wait it tells.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The limit; an answer it refused carries it in its extensions, for the
    /// verdict.
    pub scope: LimitScope,
    /// Real seconds until it opens again.
    pub retry_after: u64,
}

/// The wait an injected `RATE_LIMIT_ERROR` tells, in seconds: it has no window
/// of its own, and the document gives every windowed 429 a `retry-after`.
const INJECTED_RETRY_AFTER: u64 = 1;

impl ApiError {
    pub fn validation(message: impl Into<String>, fields: Vec<FieldError>) -> Self {
        Self::Validation {
            message: message.into(),
            fields,
            details: None,
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound(what.into())
    }

    /// The contract's code of the refusal, or the injected answer, whose code is
    /// whatever the fault rule asked for.
    fn contract_code(&self) -> Result<Code, &InjectedError> {
        Ok(match self {
            Self::Authentication(_) => Code::AuthenticationError,
            Self::Authorization(_) => Code::AuthorizationError,
            Self::Validation { .. } => Code::ValidationError,
            Self::NotFound(_) => Code::NotFound,
            Self::ModelNotAvailable(_) => Code::ModelNotAvailable,
            Self::ModelUnavailable(_) => Code::ModelUnavailable,
            Self::UnsupportedMediaType => Code::UnsupportedMediaType,
            Self::PayloadTooLarge { .. } => Code::PayloadTooLarge,
            Self::InsufficientBalance { .. } => Code::InsufficientBalance,
            Self::MarginGuard(_) => Code::MarginGuard,
            Self::RateLimited { .. } => Code::RateLimitError,
            Self::Conflict(_) => Code::ConflictError,
            Self::ModerationRepeatBlocked { .. } => Code::ModerationRepeatBlocked,
            Self::UpstreamCircuitOpen(_) => Code::UpstreamCircuitOpen,
            Self::DailyCapExceeded { .. } => Code::DailyCapExceeded,
            Self::Internal(_) => Code::InternalError,
            Self::Injected(e) => return Err(e),
        })
    }

    /// The contract's status of the code (`x-http-status` in `openapi/openapi.json`).
    pub fn status(&self) -> StatusCode {
        match self.contract_code() {
            // The generator takes only 4xx and 5xx statuses into the table.
            Ok(code) => {
                StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
            Err(e) => StatusCode::from_u16(e.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
        }
    }

    pub fn code(&self) -> &str {
        match self.contract_code() {
            Ok(code) => code.as_str(),
            Err(e) => &e.code,
        }
    }

    /// The envelope's `message`. A refusal of a value outside a closed set
    /// names the set, as gh and cargo do, so that the person reading it needs
    /// no second request to find a value that works.
    fn message(&self) -> String {
        match self {
            Self::Validation {
                message, fields, ..
            } => match closed_set(fields) {
                Some((field, values)) if !values.iter().all(|v| message.contains(v.as_str())) => {
                    let path = if field.path.is_empty() {
                        "the value"
                    } else {
                        &field.path
                    };
                    format!("{message}: {path} must be one of {}", values.join(", "))
                }
                _ => message.clone(),
            },
            other => other.to_string(),
        }
    }

    /// `retry-after` and `details.retryAfter`, for a windowed 429.
    fn retry_after(&self) -> Option<u64> {
        match self {
            Self::RateLimited { window, .. } => window.map(|w| w.retry_after),
            Self::Injected(e) if Code::from_wire(&e.code) == Some(Code::RateLimitError) => {
                Some(INJECTED_RETRY_AFTER)
            }
            _ => None,
        }
    }

    fn details(&self) -> Option<Value> {
        match self {
            Self::Validation {
                fields,
                details,
                message,
            } => {
                let mut d = details.clone().unwrap_or_else(|| json!({}));
                if let Some((_, values)) = closed_set(fields)
                    && d.get("allowedValues").is_none()
                {
                    d["allowedValues"] = json!(values);
                }
                // The document promises `fields[]` with every VALIDATION_ERROR;
                // a refusal that names no field names the request as a whole.
                d["fields"] = if fields.is_empty() {
                    json!([FieldError::new("", "invalid", message.clone(), json!({}))])
                } else {
                    json!(fields)
                };
                Some(d)
            }
            Self::InsufficientBalance {
                required,
                available,
                ..
            } => Some(json!({"required": required, "available": available})),
            Self::RateLimited {
                window: Some(window),
                ..
            } => Some(json!({
                "retryAfter": window.retry_after,
                "limit": window.scope.default_limit(),
            })),
            Self::PayloadTooLarge { limit } => Some(json!({"maxSizeBytes": limit})),
            Self::DailyCapExceeded { limit, .. } => Some(json!({"limit": limit.0 / 100})),
            Self::ModerationRepeatBlocked {
                model_slug, streak, ..
            } => Some(json!({
                "modelSlug": model_slug,
                // Obsolete, kept for compatibility (the service document): the mock
                // has no internal ids, so it repeats the slug.
                "modelId": model_slug,
                "streak": streak,
            })),
            Self::ModelNotAvailable(slug)
            | Self::ModelUnavailable(slug)
            | Self::MarginGuard(slug)
            | Self::UpstreamCircuitOpen(slug) => Some(json!({"modelSlug": slug})),
            Self::Injected(e) => match Code::from_wire(&e.code)? {
                Code::ValidationError => Some(json!({"fields": [
                    FieldError::new("", "injected", e.message.clone(), json!({}))
                ]})),
                Code::RateLimitError => Some(json!({"retryAfter": INJECTED_RETRY_AFTER})),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The first violation of a closed set among `fields`, with its values.
fn closed_set(fields: &[FieldError]) -> Option<(&FieldError, Vec<String>)> {
    fields
        .iter()
        .find_map(|field| Some((field, field.allowed_values()?)))
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // Outside a world's requests (none reaches here today) the wall clock
        // is the only one there is.
        let ctx = REQUEST
            .try_with(Clone::clone)
            .unwrap_or_else(|_| RequestContext::at(Utc::now()));
        let message = match &self {
            Self::Internal(err) => {
                // 5xx hide internals: the cause goes to the log, keyed by request id.
                tracing::error!(request_id = %ctx.request_id, "internal error: {err:#}");
                "Internal error; quote the requestId to support".to_owned()
            }
            other => other.message(),
        };
        let mut error = json!({
            "code": self.code(),
            "message": message,
            "requestId": ctx.request_id,
            "timestamp": crate::wire::timestamp(ctx.received_at),
        });
        if let Some(details) = self.details() {
            error["details"] = details;
        }
        let mut response =
            (self.status(), crate::wire::Json(json!({ "error": error }))).into_response();
        // For the request log, which sees the answer and not the error.
        response
            .extensions_mut()
            .insert(ErrorCode(self.code().to_owned()));
        if let Self::RateLimited {
            window: Some(window),
            ..
        } = &self
        {
            response.extensions_mut().insert(window.scope);
        }
        if let Some(secs) = self.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// Why an operation of the control API was refused: the same refusal whichever
/// face asked. The Rust face ([`World`](crate::World)) returns it; the HTTP
/// face answers it in the service's envelope, converted once, here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ControlError {
    /// 400 `VALIDATION_ERROR`: an input the operation cannot take, with the
    /// members that are wrong (JSON pointers into the request's body, or the
    /// path parameter's name).
    #[error("{message}")]
    Invalid {
        /// What is wrong, for a person.
        message: String,
        /// One element per member that is wrong.
        fields: Vec<FieldError>,
    },
    /// 404 `NOT_FOUND`: the user, key, model, invoice, top-up, fault rule or
    /// world named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// 409 `CONFLICT_ERROR`: the operation cannot apply to the state it met
    /// (a real clock advanced, an invoice already paid, a top-up already settled).
    #[error("{0}")]
    Conflict(String),
    /// 429 `RATE_LIMIT_ERROR`: the server holds as many worlds as it may.
    #[error("{0}")]
    TooManyWorlds(String),
}

impl ControlError {
    /// The HTTP status the control API answers it with.
    pub fn status(&self) -> u16 {
        ApiError::from(self.clone()).status().as_u16()
    }

    /// The `code` of the envelope the control API answers it in.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => Code::ValidationError,
            Self::NotFound(_) => Code::NotFound,
            Self::Conflict(_) => Code::ConflictError,
            Self::TooManyWorlds(_) => Code::RateLimitError,
        }
        .as_str()
    }

    /// A 400 naming the one member at `path` that is wrong, refused by `keyword`.
    pub(crate) fn invalid(path: &str, keyword: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Invalid {
            fields: vec![FieldError::new(path, keyword, message.clone(), json!({}))],
            message,
        }
    }
}

impl From<ControlError> for ApiError {
    fn from(refusal: ControlError) -> Self {
        match refusal {
            ControlError::Invalid { message, fields } => Self::validation(message, fields),
            ControlError::NotFound(message) => Self::NotFound(message),
            ControlError::Conflict(message) => Self::Conflict(message),
            ControlError::TooManyWorlds(message) => Self::RateLimited {
                message,
                window: None,
            },
        }
    }
}
