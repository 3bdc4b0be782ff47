//! The service's error envelope read into [`ApiError`]: its code, kept as sent,
//! and what the code means, with its details typed ([`ErrorKind`]).
//!
//! Error bodies are parsed here, from the raw bytes, rather than through the
//! generated `types::Error`: the service may send codes the contract does not
//! list (any `GATEWAY_*` or `BILLING_*`). An unknown code is kept as text;
//! nothing here panics on what the server sends.

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use mediagen_openapi::policy::Retry;

use crate::limits::{RateLimit, header_str, retry_after};
use crate::open_enum::open_enum;

mediagen_openapi::error_code_values! {
    open_enum! {
        /// `error.code` of the service's error envelope, as sent. [`ErrorKind`] says what
        /// it means and carries its details; a code this version does not know, such as
        /// a new member of the `GATEWAY_*` or `BILLING_*` families, is kept as `Other`.
        ///
        /// ```
        /// use mediagen::ErrorCode;
        /// assert_eq!(ErrorCode::from("NOT_FOUND"), ErrorCode::NotFound);
        /// assert_eq!(ErrorCode::from("GATEWAY_EXPLODED").to_string(), "GATEWAY_EXPLODED");
        /// ```
        pub enum ErrorCode
    }
}

/// An error answer of the service: the envelope `{"error": {code, message, requestId,
/// timestamp, details}}`, its HTTP status and its rate-limit headers.
///
/// ```
/// use mediagen::{ApiError, ErrorKind};
///
/// let body = br#"{"error": {"code": "INSUFFICIENT_BALANCE", "message": "Insufficient balance",
///     "requestId": "req_1", "timestamp": "2026-11-22T10:15:30.123Z",
///     "details": {"required": 45.5, "available": 12}}}"#;
/// let err = ApiError::from_response(http::StatusCode::PAYMENT_REQUIRED, &http::HeaderMap::new(), body);
/// assert_eq!(err.kind, ErrorKind::InsufficientBalance { required: Some(45.5), available: Some(12.0) });
/// assert_eq!(err.request_id.as_deref(), Some("req_1"));
/// assert!(!err.is_retryable());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApiError {
    /// What went wrong, with its details typed.
    pub kind: ErrorKind,
    /// `error.code` as sent, known or not; `Other("")` when the body was not the
    /// service's envelope (a proxy's error page, say).
    pub code: ErrorCode,
    /// `error.message`, or the start of the body when it was not the envelope.
    pub message: String,
    /// `error.requestId` (or the `x-request-id` header): quote it to support.
    pub request_id: Option<String>,
    /// The HTTP status.
    pub status: StatusCode,
    /// `error.timestamp`.
    pub timestamp: Option<DateTime<Utc>>,
    /// `error.details` as sent, for members this crate does not type.
    pub details: Map<String, Value>,
    /// The `x-ratelimit-*` headers of the answer.
    pub rate_limit: Option<RateLimit>,
    /// Attempts made, retries included (1 when the error was not retried).
    pub attempts: u32,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = match self.code.as_str() {
            "" => "HTTP error",
            code => code,
        };
        write!(f, "{code} ({}): {}", self.status, self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " [request {id}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

/// What an error answer means, one kind per `error.code` of the service, with the
/// details a caller needs to act.
///
/// ```
/// use std::time::Duration;
/// use mediagen::ErrorKind;
///
/// let kind = ErrorKind::RateLimited { retry_after: Some(Duration::from_secs(17)), limit: Some(60) };
/// assert_eq!(kind.code(), Some("RATE_LIMIT_ERROR"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `AUTHENTICATION_ERROR` (401): the API key is absent, invalid or revoked.
    Authentication,
    /// `AUTHORIZATION_ERROR` (403): the key is valid but has no right to the resource.
    Authorization,
    /// `VALIDATION_ERROR` (400): fix the request by `fields`.
    Validation {
        /// One element per violation.
        fields: Vec<FieldError>,
        /// For an unknown webhook event name: the accepted values.
        allowed_values: Vec<String>,
        /// For a file that is too large: the limit in bytes.
        max_size_bytes: Option<u64>,
    },
    /// `NOT_FOUND` (404): missing, another user's, or an unknown `modelSlug`.
    NotFound,
    /// `MODEL_NOT_AVAILABLE` (403): the model is switched off or not available to the
    /// account; choose another model.
    ModelNotAvailable {
        /// The model, when the service names it.
        model_slug: Option<String>,
    },
    /// `MODEL_UNAVAILABLE` (410): the provider withdrew the model; choose another.
    ModelUnavailable {
        /// The model, when the service names it.
        model_slug: Option<String>,
    },
    /// `UNSUPPORTED_MEDIA_TYPE` (415).
    UnsupportedMediaType,
    /// `PAYLOAD_TOO_LARGE` (413).
    PayloadTooLarge {
        /// The limit in bytes, when given.
        max_size_bytes: Option<u64>,
    },
    /// `INSUFFICIENT_BALANCE` (402): top up the balance. Amounts in roubles.
    InsufficientBalance {
        /// Cost of the request.
        required: Option<f64>,
        /// Balance available now.
        available: Option<f64>,
    },
    /// `MARGIN_GUARD` (503): the model's price for this request is below the allowed
    /// minimum; no money was taken, and retrying does not help.
    MarginGuard,
    /// `PAYMENT_ERROR` (502): the payment circuit failed.
    PaymentError,
    /// `RESERVATION_EXPIRED` (409): the reservation of funds expired.
    ReservationExpired,
    /// `RATE_LIMIT_ERROR` (429) of a windowed limit: wait `retry_after`.
    RateLimited {
        /// The `retry-after` header (or `details.retryAfter`).
        retry_after: Option<Duration>,
        /// The limit that was hit, requests per window.
        limit: Option<u32>,
    },
    /// `RATE_LIMIT_ERROR` (429) without `retry-after`: the user already has the
    /// maximum of active generations (5). Wait for one of them to finish; a blind
    /// retry does not help.
    ConcurrencyLimit {
        /// The number of active generations allowed, when given.
        limit: Option<u32>,
    },
    /// `DAILY_CAP_EXCEEDED` (429): the daily top-up cap is used up (until 00:00 UTC).
    DailyCapExceeded {
        /// The cap in roubles, when given.
        limit: Option<f64>,
    },
    /// `CONFLICT_ERROR` (409): a state conflict, such as cancelling a task that runs.
    Conflict,
    /// `MODERATION_REPEAT_BLOCKED` (409): requests to the model are stopped after
    /// repeated safety refusals; change the material or the model.
    ModerationRepeatBlocked {
        /// The model (`details.modelSlug`).
        model_slug: Option<String>,
        /// Length of the series of refusals (`details.streak`).
        streak: Option<u32>,
    },
    /// `PROVIDER_ERROR` (502): a general model provider error.
    ProviderError,
    /// `UPSTREAM_CIRCUIT_OPEN` (503): intake on the model is stopped for now; no money
    /// was taken. Choose another model or wait.
    UpstreamCircuitOpen,
    /// `SERVICE_UNAVAILABLE` (503): a dependency is temporarily unavailable.
    ServiceUnavailable,
    /// `OUTPUT_FETCH_FAILED` (502): a result file could not be fetched from storage.
    OutputFetchFailed,
    /// `GATEWAY_CLIENT_ERROR` (502): an internal integration failure.
    GatewayClientError,
    /// Any other `GATEWAY_*` code (502 or 503): an internal integration failure; the
    /// code is in [`ApiError::code`].
    Gateway,
    /// Any `BILLING_*` code (502 or 503): an internal integration failure; the code is
    /// in [`ApiError::code`].
    Billing,
    /// `WEBHOOK_DELIVERY_ERROR` (502).
    WebhookDeliveryError,
    /// `MESSENGER_NOT_CONFIGURED` (409).
    MessengerNotConfigured,
    /// `INTERNAL_ERROR` (500): quote the request id to support.
    Internal,
    /// A code this version does not know (in [`ApiError::code`]), or a body that was
    /// not the service's envelope.
    Unknown,
}

impl ErrorKind {
    /// The `error.code` of this kind; `None` for the families and unknown codes, whose
    /// code is only in [`ApiError::code`].
    ///
    /// ```
    /// assert_eq!(mediagen::ErrorKind::NotFound.code(), Some("NOT_FOUND"));
    /// assert_eq!(mediagen::ErrorKind::Gateway.code(), None);
    /// ```
    pub fn code(&self) -> Option<&'static str> {
        use mediagen_openapi::sets::ErrorCode as C;
        Some(
            match self {
                Self::Authentication => C::AuthenticationError,
                Self::Authorization => C::AuthorizationError,
                Self::Validation { .. } => C::ValidationError,
                Self::NotFound => C::NotFound,
                Self::ModelNotAvailable { .. } => C::ModelNotAvailable,
                Self::ModelUnavailable { .. } => C::ModelUnavailable,
                Self::UnsupportedMediaType => C::UnsupportedMediaType,
                Self::PayloadTooLarge { .. } => C::PayloadTooLarge,
                Self::InsufficientBalance { .. } => C::InsufficientBalance,
                Self::MarginGuard => C::MarginGuard,
                Self::PaymentError => C::PaymentError,
                Self::ReservationExpired => C::ReservationExpired,
                Self::RateLimited { .. } | Self::ConcurrencyLimit { .. } => C::RateLimitError,
                Self::DailyCapExceeded { .. } => C::DailyCapExceeded,
                Self::Conflict => C::ConflictError,
                Self::ModerationRepeatBlocked { .. } => C::ModerationRepeatBlocked,
                Self::ProviderError => C::ProviderError,
                Self::UpstreamCircuitOpen => C::UpstreamCircuitOpen,
                Self::ServiceUnavailable => C::ServiceUnavailable,
                Self::OutputFetchFailed => C::OutputFetchFailed,
                Self::GatewayClientError => C::GatewayClientError,
                Self::WebhookDeliveryError => C::WebhookDeliveryError,
                Self::MessengerNotConfigured => C::MessengerNotConfigured,
                Self::Internal => C::InternalError,
                Self::Gateway | Self::Billing | Self::Unknown => return None,
            }
            .as_str(),
        )
    }
}

/// One violation of a `VALIDATION_ERROR` (`error.details.fields[]`).
///
/// ```
/// let field: mediagen::FieldError = serde_json::from_str(
///     r#"{"path": "", "keyword": "required", "message": "must have required property 'prompt'",
///         "params": {"missingProperty": "prompt"}}"#,
/// )?;
/// assert_eq!(field.params["missingProperty"], "prompt");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldError {
    /// JSON pointer to the offending value, `""` for the root.
    #[serde(default)]
    pub path: String,
    /// The JSON Schema keyword that failed (`required`, `enum`, `checksum`, …).
    #[serde(default)]
    pub keyword: String,
    /// Human-readable text.
    #[serde(default)]
    pub message: String,
    /// Keyword arguments, such as `{"missingProperty": "prompt"}`.
    #[serde(default)]
    pub params: Map<String, Value>,
}

impl ApiError {
    /// Reads an error answer: its status, headers and raw body. Never fails: a body
    /// that is not the service's envelope gives [`ErrorKind::Unknown`] with the start
    /// of the body as the message.
    ///
    /// ```
    /// use mediagen::{ApiError, ErrorKind};
    ///
    /// let err = ApiError::from_response(
    ///     http::StatusCode::BAD_GATEWAY,
    ///     &http::HeaderMap::new(),
    ///     br#"{"error": {"code": "GATEWAY_EXPLODED", "message": "boom", "requestId": "req_9"}}"#,
    /// );
    /// assert_eq!((&err.kind, err.code.as_str()), (&ErrorKind::Gateway, "GATEWAY_EXPLODED"));
    /// assert!(!err.code.is_known());
    /// assert!(err.is_retryable());
    ///
    /// let page = ApiError::from_response(http::StatusCode::BAD_GATEWAY, &http::HeaderMap::new(), b"<html>");
    /// assert_eq!((page.kind, page.message.as_str()), (ErrorKind::Unknown, "<html>"));
    /// ```
    pub fn from_response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        let envelope = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|mut value| match value.get_mut("error").map(Value::take) {
                Some(Value::Object(error)) => Some(error),
                _ => None,
            });
        let rate_limit = RateLimit::from_headers(headers);
        let header_request_id = header_str(headers, "x-request-id").map(str::to_owned);
        let Some(mut error) = envelope else {
            let text = String::from_utf8_lossy(body);
            let message = truncate(text.trim(), 512);
            let kind = if status == StatusCode::TOO_MANY_REQUESTS {
                ErrorKind::RateLimited {
                    retry_after: retry_after(headers),
                    limit: None,
                }
            } else {
                ErrorKind::Unknown
            };
            return Self {
                kind,
                code: ErrorCode::Other(String::new()),
                message,
                request_id: header_request_id,
                status,
                timestamp: None,
                details: Map::new(),
                rate_limit,
                attempts: 1,
            };
        };
        let text = |error: &Map<String, Value>, name: &str| {
            error.get(name).and_then(Value::as_str).map(str::to_owned)
        };
        let code = ErrorCode::from(text(&error, "code").unwrap_or_default().as_str());
        let message = text(&error, "message").unwrap_or_default();
        let request_id = text(&error, "requestId").or(header_request_id);
        let timestamp = text(&error, "timestamp")
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&Utc));
        let details = match error.remove("details") {
            Some(Value::Object(details)) => details,
            _ => Map::new(),
        };
        let kind = kind_of(&code, &details, headers);
        Self {
            kind,
            code,
            message,
            request_id,
            status,
            timestamp,
            details,
            rate_limit,
            attempts: 1,
        }
    }

    /// Whether the error is of a temporary kind, which the client retries by itself
    /// (within its [`RetryPolicy`](crate::RetryPolicy)) for a request that repeating
    /// cannot make act twice. The contract gives each code its class (`x-retry`):
    /// windowed rate limits, 5xx answers and the `GATEWAY_*` and `BILLING_*`
    /// families are; validation, balance, not-found, conflict, model,
    /// margin-guard and moderation errors and the concurrency limit are not (a
    /// keyed create's 409 is its own rule, in the retry loop). A code the
    /// contract does not name is judged by its family, then by its status.
    ///
    /// ```
    /// use mediagen::ApiError;
    ///
    /// let margin = ApiError::from_response(
    ///     http::StatusCode::SERVICE_UNAVAILABLE,
    ///     &http::HeaderMap::new(),
    ///     br#"{"error": {"code": "MARGIN_GUARD", "message": "price below minimum"}}"#,
    /// );
    /// assert!(!margin.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        // 501 and 505 say the server cannot do this at all.
        if matches!(
            self.status,
            StatusCode::NOT_IMPLEMENTED | StatusCode::HTTP_VERSION_NOT_SUPPORTED
        ) {
            return false;
        }
        // The contract's class of the code (`x-retry`), or its family's; any
        // other code is judged by its status.
        match Retry::of_code(self.code.as_str()) {
            Some(Retry::Backoff) => true,
            // A windowed limit; the concurrency limit's 429 has no `retry-after`.
            Some(Retry::AfterRetryAfter) => self.retry_after().is_some(),
            Some(Retry::Never) => false,
            None => self.status.is_server_error() || self.status == StatusCode::REQUEST_TIMEOUT,
        }
    }

    /// How long the service asks to wait before trying again (`retry-after`).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("retry-after", "17".parse().unwrap());
    /// let err = mediagen::ApiError::from_response(
    ///     http::StatusCode::TOO_MANY_REQUESTS,
    ///     &headers,
    ///     br#"{"error": {"code": "RATE_LIMIT_ERROR", "message": "slow down", "details": {"retryAfter": 17}}}"#,
    /// );
    /// assert_eq!(err.retry_after(), Some(Duration::from_secs(17)));
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self.kind {
            ErrorKind::RateLimited { retry_after, .. } => retry_after,
            _ => None,
        }
    }
}

/// What a code means. The match names every code of the contract, so a code the
/// contract gains does not compile until it has a kind here.
fn kind_of(code: &ErrorCode, details: &Map<String, Value>, headers: &HeaderMap) -> ErrorKind {
    let string = |name: &str| details.get(name).and_then(Value::as_str).map(str::to_owned);
    let number = |name: &str| details.get(name).and_then(Value::as_f64);
    let unsigned = |name: &str| details.get(name).and_then(Value::as_u64);
    let small = |name: &str| unsigned(name).and_then(|n| u32::try_from(n).ok());
    match code {
        ErrorCode::AuthenticationError => ErrorKind::Authentication,
        ErrorCode::AuthorizationError => ErrorKind::Authorization,
        ErrorCode::ValidationError => ErrorKind::Validation {
            fields: details
                .get("fields")
                .and_then(Value::as_array)
                .map(|fields| {
                    fields
                        .iter()
                        .filter_map(|f| serde_json::from_value(f.clone()).ok())
                        .collect()
                })
                .unwrap_or_default(),
            allowed_values: details
                .get("allowedValues")
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            max_size_bytes: unsigned("maxSizeBytes"),
        },
        ErrorCode::NotFound => ErrorKind::NotFound,
        ErrorCode::ModelNotAvailable => ErrorKind::ModelNotAvailable {
            model_slug: string("modelSlug"),
        },
        ErrorCode::ModelUnavailable => ErrorKind::ModelUnavailable {
            model_slug: string("modelSlug"),
        },
        ErrorCode::UnsupportedMediaType => ErrorKind::UnsupportedMediaType,
        ErrorCode::PayloadTooLarge => ErrorKind::PayloadTooLarge {
            max_size_bytes: unsigned("maxSizeBytes"),
        },
        ErrorCode::InsufficientBalance => ErrorKind::InsufficientBalance {
            required: number("required"),
            available: number("available"),
        },
        ErrorCode::MarginGuard => ErrorKind::MarginGuard,
        ErrorCode::PaymentError => ErrorKind::PaymentError,
        ErrorCode::ReservationExpired => ErrorKind::ReservationExpired,
        // Limits rules 3 and 4: a windowed limit sends `retry-after` (and
        // `details.retryAfter`); the concurrency limit sends neither.
        ErrorCode::RateLimitError => {
            let retry_after =
                retry_after(headers).or_else(|| unsigned("retryAfter").map(Duration::from_secs));
            match retry_after {
                Some(_) => ErrorKind::RateLimited {
                    retry_after,
                    limit: small("limit"),
                },
                None => ErrorKind::ConcurrencyLimit {
                    limit: small("limit"),
                },
            }
        }
        ErrorCode::DailyCapExceeded => ErrorKind::DailyCapExceeded {
            limit: number("limit"),
        },
        ErrorCode::ConflictError => ErrorKind::Conflict,
        ErrorCode::ModerationRepeatBlocked => ErrorKind::ModerationRepeatBlocked {
            model_slug: string("modelSlug").or_else(|| string("modelId")),
            streak: small("streak"),
        },
        ErrorCode::ProviderError => ErrorKind::ProviderError,
        ErrorCode::UpstreamCircuitOpen => ErrorKind::UpstreamCircuitOpen,
        ErrorCode::ServiceUnavailable => ErrorKind::ServiceUnavailable,
        ErrorCode::OutputFetchFailed => ErrorKind::OutputFetchFailed,
        ErrorCode::GatewayClientError => ErrorKind::GatewayClientError,
        ErrorCode::WebhookDeliveryError => ErrorKind::WebhookDeliveryError,
        ErrorCode::MessengerNotConfigured => ErrorKind::MessengerNotConfigured,
        ErrorCode::InternalError => ErrorKind::Internal,
        ErrorCode::GatewayTimeout | ErrorCode::GatewayUnavailable => ErrorKind::Gateway,
        ErrorCode::BillingUnavailable | ErrorCode::BillingTimeout => ErrorKind::Billing,
        // The families' other members (the contract: any code starting `GATEWAY_` or
        // `BILLING_` is an internal integration failure).
        ErrorCode::Other(family) if family.starts_with("GATEWAY_") => ErrorKind::Gateway,
        ErrorCode::Other(family) if family.starts_with("BILLING_") => ErrorKind::Billing,
        ErrorCode::Other(_) => ErrorKind::Unknown,
    }
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(status: u16, headers: &[(&str, &str)], body: &str) -> ApiError {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        ApiError::from_response(StatusCode::from_u16(status).unwrap(), &map, body.as_bytes())
    }

    #[test]
    fn a_windowed_rate_limit_carries_its_retry_after() {
        let err = parse(
            429,
            &[
                ("retry-after", "17"),
                ("x-ratelimit-limit", "60"),
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "17"),
            ],
            r#"{"error":{"code":"RATE_LIMIT_ERROR","message":"slow","requestId":"req_1","details":{"retryAfter":17,"limit":60}}}"#,
        );
        assert_eq!(
            err.kind,
            ErrorKind::RateLimited {
                retry_after: Some(Duration::from_secs(17)),
                limit: Some(60)
            }
        );
        assert_eq!(err.rate_limit.map(|r| r.remaining), Some(0));
        assert!(err.is_retryable());
    }

    #[test]
    fn a_rate_limit_without_retry_after_is_the_concurrency_limit() {
        let err = parse(
            429,
            &[],
            r#"{"error":{"code":"RATE_LIMIT_ERROR","message":"Maximum 5 concurrent generations allowed","requestId":"req_1"}}"#,
        );
        assert_eq!(err.kind, ErrorKind::ConcurrencyLimit { limit: None });
        assert!(!err.is_retryable());
    }

    #[test]
    fn validation_fields_are_typed() {
        let err = parse(
            400,
            &[],
            r#"{"error":{"code":"VALIDATION_ERROR","message":"bad","requestId":"req_1",
                "details":{"fields":[{"path":"/params/aspect_ratio","keyword":"enum","message":"must be one of","params":{"allowedValues":["1:1"]}}]}}}"#,
        );
        let ErrorKind::Validation { fields, .. } = &err.kind else {
            panic!("{err:?}")
        };
        assert_eq!(fields[0].path, "/params/aspect_ratio");
        assert_eq!(fields[0].keyword, "enum");
    }

    #[test]
    fn moderation_repeat_blocked_names_the_model_and_the_streak() {
        let err = parse(
            409,
            &[],
            r#"{"error":{"code":"MODERATION_REPEAT_BLOCKED","message":"stop","requestId":"req_1",
                "details":{"modelSlug":"flux-schnell","modelId":"x","streak":3}}}"#,
        );
        assert_eq!(
            err.kind,
            ErrorKind::ModerationRepeatBlocked {
                model_slug: Some("flux-schnell".into()),
                streak: Some(3)
            }
        );
    }

    #[test]
    fn unknown_codes_are_kept_as_text_and_families_are_recognised() {
        for (code, kind, retryable) in [
            ("GATEWAY_TIMEOUT", ErrorKind::Gateway, true),
            ("BILLING_SOMETHING_NEW", ErrorKind::Billing, true),
            ("BRAND_NEW_CODE", ErrorKind::Unknown, true),
        ] {
            let err = parse(
                503,
                &[],
                &format!(r#"{{"error":{{"code":"{code}","message":"m","requestId":"req_1"}}}}"#),
            );
            assert_eq!(
                (&err.kind, err.code.as_str(), err.is_retryable()),
                (&kind, code, retryable)
            );
        }
    }

    #[test]
    fn bodies_that_are_not_the_envelope_never_panic() {
        for body in [
            "",
            "null",
            "[]",
            r#"{"error": 5}"#,
            r#"{"error": {"code": 5}}"#,
            "\u{0}\u{ff}",
        ] {
            let err = parse(500, &[("x-request-id", "req_h")], body);
            assert!(err.is_retryable());
            assert!(err.request_id.is_some() || body.contains("error"));
        }
    }

    #[test]
    fn not_implemented_is_never_retried_whatever_its_code() {
        let err = parse(
            501,
            &[],
            r#"{"error":{"code":"SERVICE_UNAVAILABLE","message":"not in this version","requestId":"req_1"}}"#,
        );
        assert!(!err.is_retryable());
    }
}
