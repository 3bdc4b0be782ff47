//! Exit codes, and errors told as the service's error envelope with what to do next.

use std::fmt;

use mediagen::{Error, ErrorKind, FailureAdvice};
use serde_json::{Map, Value, json};

use crate::output::{Output, RED, YELLOW};

/// One code per kind of outcome; the list is in `mediagen --help` (cli::EXIT_CODES).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Other = 1,
    Usage = 2,
    Authentication = 3,
    InsufficientBalance = 4,
    RateLimited = 5,
    GenerationFailed = 6,
    Timeout = 7,
    Interrupted = 130,
}

/// An error of the command itself, or a service error made ready to tell: the code
/// and message of the envelope, the exit code, and a hint of what to do next.
#[derive(Debug, Clone)]
pub struct Failure {
    pub exit: Exit,
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
    pub request_id: Option<String>,
    /// The HTTP status of the service's answer, such as `404 Not Found`.
    pub status: Option<String>,
    pub timestamp: Option<String>,
    pub details: Map<String, Value>,
    /// What the command was doing (`while starting the generation`), outermost first:
    /// told to people before the message, and kept out of the envelope.
    pub steps: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl Failure {
    pub fn new(exit: Exit, code: &str, message: impl Into<String>) -> Self {
        Self {
            exit,
            code: code.to_owned(),
            message: message.into(),
            hint: None,
            request_id: None,
            status: None,
            timestamp: None,
            details: Map::new(),
            steps: Vec::new(),
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// `details.idempotencyKey`, when there is one.
    pub fn key(self, key: Option<&str>) -> Self {
        match key {
            Some(key) => self.detail("idempotencyKey", key),
            None => self,
        }
    }

    /// A failure that came after the service accepted generation `id`: it exists
    /// and is paid for, so the id and the key are told, and how to resume (`resume`,
    /// else `mediagen get <id> --wait`).
    pub fn created(self, id: uuid::Uuid, key: Option<&str>, resume: Option<&str>) -> Self {
        let default_resume = format!("mediagen get {id} --wait");
        let resume = resume.unwrap_or(&default_resume);
        let known = match key {
            Some(key) => format!("generation {id} (idempotency key {key})"),
            None => format!("generation {id}"),
        };
        self.also(format!(
            "{known} goes on on the service: resume with `{resume}`"
        ))
        .detail("id", id.to_string())
        .key(key)
    }

    /// A create that still had no clear answer after its retries: it may exist, and
    /// its `Idempotency-Key` finds it. `again` is how to send it again with that key.
    pub fn unanswered_create(err: &Error, key: &str, again: &str) -> Self {
        Self::from_sdk(err)
            .also(format!(
                "it may have been created: {again}, which returns it instead of making another"
            ))
            .key(Some(key))
    }

    /// `text` after the hint there is, or as the hint.
    pub fn also(mut self, text: String) -> Self {
        self.hint = Some(match self.hint.take() {
            Some(hint) => format!("{hint}; {text}"),
            None => text,
        });
        self
    }

    /// The service's envelope: `{"error": {code, message, requestId, timestamp,
    /// details}}`, with `hint` added for the reader.
    pub fn envelope(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), json!(self.code));
        error.insert("message".into(), json!(self.message));
        if let Some(id) = &self.request_id {
            error.insert("requestId".into(), json!(id));
        }
        if let Some(at) = &self.timestamp {
            error.insert("timestamp".into(), json!(at));
        }
        if !self.details.is_empty() {
            error.insert("details".into(), Value::Object(self.details.clone()));
        }
        if let Some(hint) = &self.hint {
            error.insert("hint".into(), json!(hint));
        }
        json!({ "error": error })
    }

    pub fn from_sdk(err: &Error) -> Self {
        match err {
            Error::Api(api) => {
                let (exit, hint) = advice(&api.kind, api.attempts);
                let mut failure = Self::new(exit, api.code.as_str(), api.message.clone());
                failure.hint = hint;
                failure.request_id = api.request_id.clone();
                failure.status = Some(api.status.to_string());
                failure.timestamp = api.timestamp.map(|t| t.to_rfc3339());
                failure.details = api.details.clone();
                failure
            }
            Error::GenerationFailed(failed) => {
                let hint = match failed.advice() {
                    FailureAdvice::Retry => {
                        "a temporary provider failure, and the funds were returned: run the same \
                         command again without --idempotency-key to start a new generation"
                    }
                    FailureAdvice::RetryLaterOrOtherModel => {
                        "intake on this model is stopped for now, and the funds were returned: try \
                         later, or choose another model (`mediagen models`)"
                    }
                    FailureAdvice::CheckInputs => {
                        "an input could not be fetched, and the funds were returned: check the file \
                         or link, then try again"
                    }
                    FailureAdvice::ChangeRequest => {
                        "the same request fails the same way: change the prompt, the material or \
                         the parameters; the funds were returned"
                    }
                    _ => "the funds were returned; the message tells the cause",
                };
                // The code as it came, known or not.
                let code = match failed.code.as_str() {
                    "" => "no error code",
                    code => code,
                };
                Self::new(
                    Exit::GenerationFailed,
                    "GENERATION_FAILED",
                    format!(
                        "generation {} failed: {} ({code})",
                        failed.id, failed.message
                    ),
                )
                .hint(hint)
                .detail("id", failed.id.to_string())
                .detail("errorCode", failed.code.to_string())
                .detail("retryable", failed.retryable())
                .key(failed.idempotency_key.as_deref())
            }
            Error::GenerationCancelled {
                id,
                idempotency_key,
            } => Self::new(
                Exit::GenerationFailed,
                "GENERATION_CANCELLED",
                format!("generation {id} was cancelled"),
            )
            .detail("id", id.to_string())
            .key(idempotency_key.as_deref()),
            Error::UnknownGenerationStatus {
                generation,
                idempotency_key,
            } => Self::new(
                Exit::Other,
                "UNKNOWN_STATUS",
                format!(
                    "generation {} ended in status {}, which this version of mediagen does not \
                     know",
                    generation.id, generation.status
                ),
            )
            .hint(format!(
                "`mediagen get {}` shows it as the service sends it; a newer mediagen may know \
                 the status",
                generation.id
            ))
            .detail("id", generation.id.to_string())
            .detail("status", generation.status.to_string())
            .detail(
                "generation",
                serde_json::to_value(generation.as_ref()).unwrap_or_default(),
            )
            .key(idempotency_key.as_deref()),
            Error::WaitTimeout {
                id,
                status,
                idempotency_key,
            } => Self::new(
                Exit::Timeout,
                "WAIT_TIMEOUT",
                format!("generation {id} was still {status} at the deadline"),
            )
            .hint(format!(
                "it goes on on the service; resume with `mediagen get {id} --wait`"
            ))
            .detail("id", id.to_string())
            .detail("status", status.to_string())
            .key(idempotency_key.as_deref()),
            Error::AfterCreate {
                id,
                idempotency_key,
                source,
            } => Self::from_sdk(source).created(*id, Some(idempotency_key), None),
            Error::OutcomeUnknown {
                operation,
                check,
                source,
            } => {
                let cause = Self::from_sdk(source);
                let mut failure = Self::new(
                    Exit::Other,
                    "OUTCOME_UNKNOWN",
                    format!(
                        "the outcome of {operation} is unknown ({}: {}); it was not sent again, \
                         since it may have taken effect",
                        cause.code, cause.message
                    ),
                )
                .hint(match how_to_check(operation) {
                    Some(command) => format!("{check}: `{command}`"),
                    None => check.to_string(),
                })
                .detail("operation", *operation)
                .detail("cause", cause.code);
                failure.request_id = cause.request_id;
                failure.status = cause.status;
                failure
            }
            Error::Connection { attempts, source } => Self::new(
                Exit::Other,
                "CONNECTION_ERROR",
                format!(
                    "could not reach the service ({attempts} attempt(s)): {}",
                    causes(source)
                ),
            )
            .hint(
                "check the network and --base-url (MEDIAGEN_BASE_URL); `mediagen config` shows it",
            ),
            Error::Config(message) => {
                Self::new(Exit::Authentication, "CONFIGURATION_ERROR", message.clone()).hint(
                    "set MEDIAGEN_API_KEY, pass --api-key, or add a profile to the config file \
                     (`mediagen config` shows where); --mock runs against a local mock instead",
                )
            }
            Error::InvalidRequest(message) => {
                Self::new(Exit::Usage, "INVALID_REQUEST", message.clone())
            }
            Error::Io { path, source } => Self::new(
                Exit::Other,
                "IO_ERROR",
                format!("{}: {source}", path.display()),
            ),
            other => Self::new(Exit::Other, "CLIENT_ERROR", other.to_string()),
        }
    }
}

/// The exit code and the hint for a service error, after the document's client
/// handling: retry the temporary ones, fix by fields, choose another model, top up.
fn advice(kind: &ErrorKind, attempts: u32) -> (Exit, Option<String>) {
    let retried = if attempts > 1 {
        format!(" ({attempts} attempts were made)")
    } else {
        String::new()
    };
    let (exit, hint) = match kind {
        ErrorKind::Authentication => (
            Exit::Authentication,
            "check the API key (MEDIAGEN_API_KEY, --api-key or the profile); keys are issued in \
             the account dashboard"
                .to_owned(),
        ),
        ErrorKind::Authorization => (
            Exit::Authentication,
            "the key has no right to this; use a key with more rights".to_owned(),
        ),
        ErrorKind::Validation {
            fields,
            allowed_values,
            max_size_bytes,
        } => {
            let mut hint = String::from("fix the request");
            for field in fields {
                hint.push_str(&format!("; {}: {}", field.path, field.message));
            }
            if !allowed_values.is_empty() {
                hint.push_str(&format!("; allowed values: {}", allowed_values.join(", ")));
            }
            if let Some(max) = max_size_bytes {
                hint.push_str(&format!("; the largest file allowed is {max} bytes"));
            }
            hint.push_str(". `mediagen models SLUG` lists a model's parameters");
            (Exit::Usage, hint)
        }
        ErrorKind::NotFound => (
            Exit::Other,
            "check the id or the model slug (`mediagen models`); another account's resources \
             are not found either"
                .to_owned(),
        ),
        ErrorKind::ModelNotAvailable { .. } | ErrorKind::ModelUnavailable { .. } => (
            Exit::Other,
            "choose another model: `mediagen models`".to_owned(),
        ),
        ErrorKind::InsufficientBalance {
            required,
            available,
        } => {
            let need = match (required, available) {
                (Some(required), Some(available)) => {
                    format!(" ({required:.2} RUB needed, {available:.2} RUB available)")
                }
                _ => String::new(),
            };
            (
                Exit::InsufficientBalance,
                format!(
                    "top up the balance{need}: `mediagen topup AMOUNT`, or an invoice with \
                     `mediagen invoices create AMOUNT`"
                ),
            )
        }
        ErrorKind::RateLimited { retry_after, .. } => (
            Exit::RateLimited,
            match retry_after {
                Some(after) => format!(
                    "too many requests; try again in {} s{retried}",
                    after.as_secs()
                ),
                None => format!("too many requests; try again shortly{retried}"),
            },
        ),
        ErrorKind::ConcurrencyLimit { .. } => (
            Exit::RateLimited,
            "5 generations are already active; wait for one to finish \
             (`mediagen list --status PROCESSING`) or cancel a pending one"
                .to_owned(),
        ),
        ErrorKind::DailyCapExceeded { .. } => (
            Exit::RateLimited,
            "the daily top-up cap is used up; it resets at 00:00 UTC, or pay by invoice".to_owned(),
        ),
        ErrorKind::MarginGuard => (
            Exit::Other,
            "nothing was charged, and retrying does not help; choose another model or parameters"
                .to_owned(),
        ),
        ErrorKind::ModerationRepeatBlocked { .. } => (
            Exit::Other,
            "requests to this model are stopped after repeated safety refusals; change the \
             material or the model"
                .to_owned(),
        ),
        ErrorKind::UpstreamCircuitOpen => (
            Exit::Other,
            "intake on this model is paused and nothing was charged; choose another model or try \
             later"
                .to_owned(),
        ),
        ErrorKind::Conflict | ErrorKind::ReservationExpired => (
            Exit::Other,
            "the resource is not in a state that allows this; `mediagen get ID` shows it"
                .to_owned(),
        ),
        ErrorKind::Internal => (
            Exit::Other,
            "an internal error of the service; quote the request id to support".to_owned(),
        ),
        _ => (
            Exit::Other,
            format!("a temporary failure of the service; try again later{retried}"),
        ),
    };
    (exit, Some(hint))
}

/// The command that shows whether an operation whose outcome is unknown took effect.
fn how_to_check(operation: &str) -> Option<&'static str> {
    Some(match operation {
        "create_topup" => "mediagen history --type TOPUP",
        "create_invoice" => "mediagen invoices list",
        "create_webhook_endpoint" | "update_webhook_endpoint" => "mediagen webhooks list",
        "rotate_webhook_endpoint_secret" => "mediagen webhooks rotate ID",
        "send_test_webhook" | "redeliver_webhook_message" => "mediagen webhooks deliveries ID",
        "cancel_generation" => "mediagen get ID",
        _ => return None,
    })
}

/// An error and the errors under it, as one line: `a: b: c`.
fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(err), |cause| cause.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

impl Failure {
    /// The failure an error tells of (ours, the SDK's, or any other with exit 1), with
    /// the steps of context above it.
    pub fn of(err: &anyhow::Error) -> Self {
        let mut steps = Vec::new();
        for cause in err.chain() {
            let failure = match (cause.downcast_ref::<Self>(), cause.downcast_ref::<Error>()) {
                (Some(failure), _) => failure.clone(),
                (None, Some(sdk)) => Self::from_sdk(sdk),
                (None, None) => {
                    steps.push(cause.to_string());
                    continue;
                }
            };
            return Self { steps, ..failure };
        }
        Self::new(Exit::Other, "CLI_ERROR", format!("{err:#}"))
    }
}

/// Whether the error is stdout closed by its reader (`mediagen list | head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(|json| json.io_error_kind())
                == Some(std::io::ErrorKind::BrokenPipe)
    })
}

/// Tells the error: the envelope on stdout for scripts, and for people on stderr one
/// line that says each thing once (what was being done, the code, the HTTP status,
/// the message, the request id), then the hint.
pub fn report(out: &Output, err: &anyhow::Error) -> Exit {
    let failure = Failure::of(err);
    if out.is_json() {
        // A reader that has gone cannot be told.
        let _ = out.json_line(&failure.envelope());
    }
    out.note(failure.line(out));
    failure.exit
}

impl Failure {
    /// The failure for people: `error: while …: CODE (status): message [request id]`,
    /// and the hint below.
    fn line(&self, out: &Output) -> String {
        let mut text = format!("{} ", out.paint_err(RED, "error:"));
        for step in &self.steps {
            text.push_str(&format!("{step}: "));
        }
        // Our own catch-all codes say nothing the message does not.
        if !matches!(self.code.as_str(), "CLI_ERROR" | "CLIENT_ERROR") {
            text.push_str(&self.code);
            if let Some(status) = &self.status {
                text.push_str(&format!(" ({status})"));
            }
            text.push_str(": ");
        }
        text.push_str(&self.message);
        if let Some(id) = &self.request_id {
            text.push_str(&format!(" [request {id}]"));
        }
        if let Some(hint) = &self.hint {
            text.push_str(&format!("\n  {} {hint}", out.paint_err(YELLOW, "hint:")));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_inside_context_keeps_its_exit_code() {
        let err = anyhow::Error::new(Failure::new(Exit::Timeout, "WAIT_TIMEOUT", "late"))
            .context("while waiting");
        let failure = Failure::of(&err);
        assert_eq!(failure.exit, Exit::Timeout);
        assert_eq!(failure.steps, ["while waiting"]);
    }

    #[test]
    fn broken_pipe_is_found_through_json_and_context() {
        let io = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let err = anyhow::Error::new(serde_json::Error::io(io)).context("while printing");
        assert!(is_broken_pipe(&err));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }

    #[test]
    fn the_envelope_has_the_services_shape_and_a_hint() {
        let failure = Failure::new(Exit::Usage, "INVALID_REQUEST", "empty prompt").hint("add one");
        assert_eq!(
            failure.envelope(),
            json!({"error": {"code": "INVALID_REQUEST", "message": "empty prompt", "hint": "add one"}})
        );
    }
}
