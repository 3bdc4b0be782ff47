//! Faults on demand (the mock's own lever): the next requests that match a
//! rule are answered with an error, answered late, or lose their connection
//! before or after the service acts, the way a real service misbehaves.
//!
//! A rule is the same whether it comes from `POST /_mock/faults`, the library
//! ([`Fault`]), a `[[fault]]` table of the configuration or a `--fault` flag.

use mediagen_openapi::sets::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::UserId;

/// Uses of one rule at most, so that a typo cannot make an endless fault.
pub const MAX_COUNT: u32 = 1_000_000;
/// The longest delay a rule may ask, in real seconds.
pub const MAX_DELAY_SECS: f64 = 600.0;

/// What happens to a request a rule matches.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub enum Effect {
    /// The error envelope with this status and code, instead of acting.
    Error(InjectedError),
    /// The service acts at once and answers after this many real seconds.
    Delay {
        /// Real seconds, however the mock's clock runs.
        seconds: f64,
    },
    /// The connection closes before the service acts: nothing changes.
    Drop,
    /// The service acts, then the connection closes without an answer.
    DropAfter,
}

impl Effect {
    /// The effect's name in the control API.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Error(_) => "error",
            Self::Delay { .. } => "delay",
            Self::Drop => "drop",
            Self::DropAfter => "drop_after",
        }
    }
}

/// An error answer that no rule of the service caused: a status, a code and a
/// message, in the service's envelope.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct InjectedError {
    /// The HTTP status, 400 to 599.
    pub status: u16,
    /// `error.code`, as given: codes the document does not list are allowed.
    pub code: String,
    /// `error.message`.
    pub message: String,
}

impl InjectedError {
    /// An error of `status` and `code`; either may be missing, and is then
    /// taken from the other by the document's table of codes (neither: 503
    /// `SERVICE_UNAVAILABLE`).
    pub fn new(
        status: Option<u16>,
        code: Option<&str>,
        message: Option<&str>,
    ) -> Result<Self, FaultRefusal> {
        let code = match (code, status) {
            (Some(code), _) => code.to_owned(),
            (None, Some(status)) => code_of(status).as_str().to_owned(),
            (None, None) => ErrorCode::ServiceUnavailable.as_str().to_owned(),
        };
        if code.is_empty()
            || code.len() > 64
            || !code
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(FaultRefusal::BadCode(code));
        }
        if let Some(real) = REAL_ONLY.iter().find(|(c, _)| c.as_str() == code) {
            return Err(FaultRefusal::RealOnly(real.0.as_str(), real.1));
        }
        let status = status.unwrap_or_else(|| status_of(&code));
        if !(400..=599).contains(&status) {
            return Err(FaultRefusal::BadStatus(status));
        }
        let message = match message {
            Some(text) if !text.trim().is_empty() => text.to_owned(),
            _ => format!("Injected fault: {code}"),
        };
        Ok(Self {
            status,
            code,
            message,
        })
    }
}

/// Codes whose details the document prescribes from real state, so the mock
/// makes them for real rather than inventing the details.
const REAL_ONLY: &[(ErrorCode, &str)] = &[
    (
        ErrorCode::InsufficientBalance,
        "set the balance below the cost (PUT /_mock/users/{id}/balance) and create",
    ),
    (
        ErrorCode::ModerationRepeatBlocked,
        "fail three tasks of one model with moderation_rejected and create again",
    ),
];

/// The status of a code: the contract's (`x-http-status`); 502 for the other
/// members of the `GATEWAY_*` and `BILLING_*` families and for codes it does
/// not name.
fn status_of(code: &str) -> u16 {
    ErrorCode::from_wire(code).map_or(502, ErrorCode::status)
}

/// The usual code of a status.
fn code_of(status: u16) -> ErrorCode {
    match status {
        400 => ErrorCode::ValidationError,
        401 => ErrorCode::AuthenticationError,
        402 => ErrorCode::InsufficientBalance,
        403 => ErrorCode::AuthorizationError,
        404 => ErrorCode::NotFound,
        409 => ErrorCode::ConflictError,
        410 => ErrorCode::ModelUnavailable,
        413 => ErrorCode::PayloadTooLarge,
        415 => ErrorCode::UnsupportedMediaType,
        429 => ErrorCode::RateLimitError,
        502 => ErrorCode::ProviderError,
        503 => ErrorCode::ServiceUnavailable,
        _ => ErrorCode::InternalError,
    }
}

/// Why a rule was refused; each message is the one answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FaultRefusal {
    /// Not an effect the mock knows.
    #[error("effect must be one of error, delay, drop, drop_after; got '{0}'")]
    BadEffect(String),
    /// A status outside 400..=599.
    #[error("status must be from 400 to 599 (every error has a status of 400 or above); got {0}")]
    BadStatus(u16),
    /// A code that is not upper-case letters, digits and `_`.
    #[error("code must be upper-case letters, digits and '_', at most 64 characters; got '{0}'")]
    BadCode(String),
    /// A code the mock produces from real state only.
    #[error("{0} carries details from real state; to see it, {1}")]
    RealOnly(&'static str, &'static str),
    /// `delay` without a usable `delaySeconds`.
    #[error("delaySeconds must be a number above 0 and at most {MAX_DELAY_SECS}")]
    BadDelay,
    /// `count` out of range.
    #[error("count must be from 1 to {MAX_COUNT}")]
    BadCount,
    /// A path that is not a path.
    #[error("path must start with '/'; got '{0}'")]
    BadPath(String),
    /// A method that is not an HTTP method name.
    #[error("method must be an HTTP method such as GET or POST; got '{0}'")]
    BadMethod(String),
    /// A field that belongs to another effect, or that no rule has.
    #[error("{0}")]
    Unexpected(String),
}

impl FaultRefusal {
    /// The member of the rule that is wrong, as a JSON pointer.
    pub fn field(&self) -> &'static str {
        match self {
            Self::BadEffect(_) => "/effect",
            Self::BadStatus(_) => "/status",
            Self::BadCode(_) | Self::RealOnly(..) => "/code",
            Self::BadDelay => "/delaySeconds",
            Self::BadCount => "/count",
            Self::BadPath(_) => "/path",
            Self::BadMethod(_) => "/method",
            Self::Unexpected(_) => "",
        }
    }
}

/// A rule as the control API, the configuration and the flag write it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultRequest {
    /// Only this method (any when absent).
    pub method: Option<String>,
    /// Only this route path; `*` matches one segment (any path when absent).
    pub path: Option<String>,
    /// Only requests authenticated as this user.
    #[serde(alias = "user-id")]
    pub user_id: Option<UserId>,
    /// How many matching requests it applies to (default 1).
    pub count: Option<u32>,
    /// `error`, `delay`, `drop` or `drop_after`.
    pub effect: String,
    /// `error`: the status.
    pub status: Option<u16>,
    /// `error`: the code.
    pub code: Option<String>,
    /// `error`: the message.
    pub message: Option<String>,
    /// `delay`: real seconds.
    #[serde(alias = "delay-seconds")]
    pub delay_seconds: Option<f64>,
}

impl FaultRequest {
    /// Reads the `--fault` flag: a JSON object, or `key=value` pairs separated
    /// by commas with the same keys (`effect=error,status=503,path=/v1/generations`).
    pub fn parse_flag(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.starts_with('{') {
            return serde_json::from_str(text).map_err(|e| e.to_string());
        }
        let mut object = Map::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("'{pair}' is not key=value"))?;
            let key = key.trim();
            let value = value.trim();
            let number = || {
                value
                    .parse::<f64>()
                    .map_err(|_| format!("{key} must be a number, got '{value}'"))
            };
            let value = match key {
                "count" | "status" => Value::from(number()? as i64),
                "delaySeconds" | "delay-seconds" => Value::from(number()?),
                _ => Value::from(value),
            };
            object.insert(key.to_owned(), value);
        }
        serde_json::from_value(Value::Object(object)).map_err(|e| e.to_string())
    }
}

/// A rule: which requests, what happens to them, how many times.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct Fault {
    method: Option<String>,
    path: Option<String>,
    user_id: Option<UserId>,
    count: u32,
    effect: Effect,
}

impl Fault {
    /// Answers the error envelope with `status` and `code`, instead of acting.
    pub fn error(status: u16, code: &str) -> Self {
        Self::with_effect(Effect::Error(InjectedError {
            status,
            code: code.to_owned(),
            message: format!("Injected fault: {code}"),
        }))
    }

    /// Acts at once and answers after `seconds` real seconds.
    pub fn delay(seconds: f64) -> Self {
        Self::with_effect(Effect::Delay { seconds })
    }

    /// Closes the connection before acting: nothing changes.
    pub fn drop_connection() -> Self {
        Self::with_effect(Effect::Drop)
    }

    /// Acts, then closes the connection without answering: the case an
    /// `Idempotency-Key` exists for.
    pub fn drop_after() -> Self {
        Self::with_effect(Effect::DropAfter)
    }

    fn with_effect(effect: Effect) -> Self {
        Self {
            method: None,
            path: None,
            user_id: None,
            count: 1,
            effect,
        }
    }

    /// Only requests with this method and a path matching `path`, where `*`
    /// matches one segment (`/v1/generations/*`).
    pub fn on(self, method: &str, path: &str) -> Self {
        self.method(method).path(path)
    }

    /// Only requests with this method.
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_owned());
        self
    }

    /// Only requests whose path matches `path`, where `*` matches one segment.
    pub fn path(mut self, path: &str) -> Self {
        self.path = Some(path.to_owned());
        self
    }

    /// Only requests authenticated as `user_id`.
    pub fn for_user(mut self, user_id: UserId) -> Self {
        self.user_id = Some(user_id);
        self
    }

    /// The next `count` matching requests (1 by default).
    pub fn times(mut self, count: u32) -> Self {
        self.count = count;
        self
    }

    /// The message of an `error` fault.
    pub fn message(mut self, text: &str) -> Self {
        if let Effect::Error(error) = &mut self.effect {
            error.message = text.to_owned();
        }
        self
    }

    /// The rule `request` describes, checked.
    pub fn from_request(request: FaultRequest) -> Result<Self, FaultRefusal> {
        let misplaced = |name: &str, effect: &str| {
            FaultRefusal::Unexpected(format!("{name} does not apply to the {effect} effect"))
        };
        let effect = match request.effect.as_str() {
            "error" => {
                if request.delay_seconds.is_some() {
                    return Err(misplaced("delaySeconds", "error"));
                }
                Effect::Error(InjectedError::new(
                    request.status,
                    request.code.as_deref(),
                    request.message.as_deref(),
                )?)
            }
            other => {
                for (given, name) in [
                    (request.status.is_some(), "status"),
                    (request.code.is_some(), "code"),
                    (request.message.is_some(), "message"),
                ] {
                    if given {
                        return Err(misplaced(name, other));
                    }
                }
                match other {
                    "delay" => Effect::Delay {
                        seconds: request.delay_seconds.ok_or(FaultRefusal::BadDelay)?,
                    },
                    "drop" | "drop_after" if request.delay_seconds.is_some() => {
                        return Err(misplaced("delaySeconds", other));
                    }
                    "drop" => Effect::Drop,
                    "drop_after" => Effect::DropAfter,
                    _ => return Err(FaultRefusal::BadEffect(other.to_owned())),
                }
            }
        };
        Self {
            method: request.method,
            path: request.path,
            user_id: request.user_id,
            count: request.count.unwrap_or(1),
            effect,
        }
        .checked()
    }

    /// The rule, if every part of it can be applied.
    pub fn checked(mut self) -> Result<Self, FaultRefusal> {
        if !(1..=MAX_COUNT).contains(&self.count) {
            return Err(FaultRefusal::BadCount);
        }
        if let Some(method) = &mut self.method {
            if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(FaultRefusal::BadMethod(method.clone()));
            }
            method.make_ascii_uppercase();
        }
        if let Some(path) = &self.path
            && !path.starts_with('/')
        {
            return Err(FaultRefusal::BadPath(path.clone()));
        }
        match &self.effect {
            Effect::Delay { seconds } if !(*seconds > 0.0 && *seconds <= MAX_DELAY_SECS) => {
                Err(FaultRefusal::BadDelay)
            }
            Effect::Error(error) => {
                // The builder's status and code go through the same checks.
                let checked = InjectedError::new(
                    Some(error.status),
                    Some(&error.code),
                    Some(&error.message),
                )?;
                self.effect = Effect::Error(checked);
                Ok(self)
            }
            _ => Ok(self),
        }
    }

    fn matches(&self, method: &str, path: &str, user_id: Option<UserId>) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && self.path.as_deref().is_none_or(|p| path_matches(p, path))
            && self.user_id.is_none_or(|u| Some(u) == user_id)
    }
}

/// Whether `path` matches `pattern`, segment by segment, `*` matching any one
/// segment; a trailing `/` is not a segment (`/v1/catalog/` is `/v1/catalog`).
fn path_matches(pattern: &str, path: &str) -> bool {
    let segments = |p: &str| {
        p.trim_end_matches('/')
            .split('/')
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let (pattern, path) = (segments(pattern), segments(path));
    pattern.len() == path.len()
        && pattern
            .iter()
            .zip(&path)
            .all(|(want, got)| (want == "*" && !got.is_empty()) || want == got)
}

/// An active rule as `GET /_mock/faults` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultView {
    /// `flt_` and 16 hexadecimal digits.
    pub id: String,
    /// The method it matches, if only one.
    pub method: Option<String>,
    /// The path pattern it matches, if only one.
    pub path: Option<String>,
    /// The user it matches, if only one.
    pub user_id: Option<UserId>,
    /// `error`, `delay`, `drop` or `drop_after`.
    pub effect: &'static str,
    /// `error`: the status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `error`: the code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// `error`: the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `delay`: real seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<f64>,
    /// Uses it was given.
    pub count: u32,
    /// Uses left.
    pub remaining: u32,
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
struct Active {
    id: String,
    fault: Fault,
    remaining: u32,
}

impl Active {
    fn view(&self) -> FaultView {
        let f = &self.fault;
        let (status, code, message, delay_seconds) = match &f.effect {
            Effect::Error(e) => (
                Some(e.status),
                Some(e.code.clone()),
                Some(e.message.clone()),
                None,
            ),
            Effect::Delay { seconds } => (None, None, None, Some(*seconds)),
            Effect::Drop | Effect::DropAfter => (None, None, None, None),
        };
        FaultView {
            id: self.id.clone(),
            method: f.method.clone(),
            path: f.path.clone(),
            user_id: f.user_id,
            effect: f.effect.name(),
            status,
            code,
            message,
            delay_seconds,
            count: f.count,
            remaining: self.remaining,
        }
    }
}

/// The active rules, oldest first: a request takes one use of the first that
/// matches it.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Faults {
    active: Vec<Active>,
}

impl Faults {
    /// Adds a checked rule; its view, with its new id.
    pub fn add(&mut self, fault: Fault) -> FaultView {
        let active = Active {
            id: format!("flt_{:016x}", rand::random::<u64>()),
            remaining: fault.count,
            fault,
        };
        let view = active.view();
        self.active.push(active);
        view
    }

    /// Every active rule.
    pub fn list(&self) -> Vec<FaultView> {
        self.active.iter().map(Active::view).collect()
    }

    /// Removes a rule; false when there is none with that id.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.active.len();
        self.active.retain(|a| a.id != id);
        self.active.len() < before
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.active.clear();
    }

    /// The uses a rule has left: `None` once it is used up or removed.
    pub fn remaining(&self, id: &str) -> Option<u32> {
        self.active.iter().find(|a| a.id == id).map(|a| a.remaining)
    }

    /// Takes one use of the first rule matching the request: its id and effect.
    pub fn take(
        &mut self,
        method: &str,
        path: &str,
        user_id: Option<UserId>,
    ) -> Option<(String, Effect)> {
        if self.active.is_empty() {
            return None;
        }
        let index = self
            .active
            .iter()
            .position(|a| a.fault.matches(method, path, user_id))?;
        let rule = &mut self.active[index];
        rule.remaining -= 1;
        let taken = (rule.id.clone(), rule.fault.effect.clone());
        if rule.remaining == 0 {
            self.active.remove(index);
        }
        Some(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: Value) -> Result<Fault, FaultRefusal> {
        Fault::from_request(serde_json::from_value(json).expect("a request"))
    }

    #[test]
    fn a_rule_applies_to_its_next_count_matching_requests_then_is_gone() {
        let mut faults = Faults::default();
        let view = faults.add(Fault::error(503, "SERVICE_UNAVAILABLE").times(2));
        assert!(view.id.starts_with("flt_") && view.remaining == 2);
        assert!(faults.take("GET", "/health", None).is_some());
        assert_eq!(faults.remaining(&view.id), Some(1));
        assert!(faults.take("POST", "/v1/generations", None).is_some());
        assert_eq!(faults.remaining(&view.id), None);
        assert!(faults.take("GET", "/health", None).is_none());
    }

    #[test]
    fn method_path_and_user_narrow_a_rule() {
        let user = UserId::new_v4();
        let mut faults = Faults::default();
        faults.add(
            Fault::drop_after()
                .on("post", "/v1/generations/*/cancel")
                .for_user(user)
                .checked()
                .expect("valid"),
        );
        let id = "/v1/generations/6f1c0f4e-0000-4000-8000-000000000000/cancel";
        assert!(faults.take("GET", id, Some(user)).is_none(), "method");
        assert!(faults.take("POST", id, None).is_none(), "no user");
        assert!(
            faults.take("POST", id, Some(UserId::new_v4())).is_none(),
            "another user"
        );
        assert!(
            faults
                .take("POST", "/v1/generations//cancel", Some(user))
                .is_none()
        );
        assert!(
            faults
                .take("POST", "/v1/generations/x/y/cancel", Some(user))
                .is_none()
        );
        assert_eq!(
            faults.take("POST", id, Some(user)).map(|(_, e)| e),
            Some(Effect::DropAfter)
        );
    }

    #[test]
    fn a_trailing_slash_is_not_a_segment() {
        assert!(path_matches("/v1/catalog", "/v1/catalog/"));
        assert!(path_matches("/v1/catalog/", "/v1/catalog"));
        assert!(!path_matches("/v1/*", "/v1"));
    }

    #[test]
    fn status_and_code_complete_each_other_from_the_documents_table() {
        let only_code = InjectedError::new(None, Some("PAYMENT_ERROR"), None).expect("valid");
        assert_eq!(
            (only_code.status, only_code.message.as_str()),
            (502, "Injected fault: PAYMENT_ERROR")
        );
        assert_eq!(
            InjectedError::new(None, Some("RESERVATION_EXPIRED"), None)
                .expect("valid")
                .status,
            409
        );
        assert_eq!(
            InjectedError::new(None, Some("BILLING_LEDGER_DOWN"), None)
                .expect("valid")
                .status,
            502
        );
        assert_eq!(
            InjectedError::new(Some(500), None, None)
                .expect("valid")
                .code,
            "INTERNAL_ERROR"
        );
        let neither = InjectedError::new(None, None, Some("maintenance")).expect("valid");
        assert_eq!(
            (
                neither.status,
                neither.code.as_str(),
                neither.message.as_str()
            ),
            (503, "SERVICE_UNAVAILABLE", "maintenance")
        );
    }

    #[test]
    fn impossible_rules_are_refused_with_a_reason() {
        let cases = [
            (
                serde_json::json!({"effect": "explode"}),
                "effect must be one of",
            ),
            (
                serde_json::json!({"effect": "error", "status": 200}),
                "from 400 to 599",
            ),
            (
                serde_json::json!({"effect": "error", "code": "oops"}),
                "upper-case",
            ),
            (
                serde_json::json!({"effect": "error", "code": "INSUFFICIENT_BALANCE"}),
                "real state",
            ),
            (serde_json::json!({"effect": "delay"}), "delaySeconds"),
            (
                serde_json::json!({"effect": "delay", "delaySeconds": 0}),
                "delaySeconds",
            ),
            (
                serde_json::json!({"effect": "delay", "delaySeconds": 5, "status": 500}),
                "status does not apply",
            ),
            (serde_json::json!({"effect": "drop", "count": 0}), "count"),
            (
                serde_json::json!({"effect": "drop", "path": "v1/x"}),
                "path must start",
            ),
            (
                serde_json::json!({"effect": "drop", "method": "GE T"}),
                "HTTP method",
            ),
        ];
        for (json, expected) in cases {
            let refusal = request(json.clone()).expect_err("refused");
            assert!(refusal.to_string().contains(expected), "{json}: {refusal}");
        }
        assert!(
            Fault::error(200, "OK").checked().is_err(),
            "the builder too"
        );
    }

    #[test]
    fn the_flag_reads_pairs_or_json_with_the_same_keys() {
        let pairs = FaultRequest::parse_flag(
            "effect=error, status=503, code=GATEWAY_TIMEOUT, method=POST, path=/v1/generations, count=2",
        )
        .expect("pairs");
        let json = FaultRequest::parse_flag(
            r#"{"effect":"error","status":503,"code":"GATEWAY_TIMEOUT","method":"POST","path":"/v1/generations","count":2}"#,
        )
        .expect("json");
        assert_eq!(
            Fault::from_request(pairs).expect("valid"),
            Fault::from_request(json).expect("valid")
        );
        let delay = FaultRequest::parse_flag("effect=delay,delay-seconds=1.5").expect("kebab");
        assert_eq!(delay.delay_seconds, Some(1.5));
        assert!(FaultRequest::parse_flag("effect").is_err());
        assert!(FaultRequest::parse_flag("effect=drop,colour=red").is_err());
        assert!(FaultRequest::parse_flag("effect=drop,count=many").is_err());
    }
}
