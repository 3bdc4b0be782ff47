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
    /// What the message leaves out (the failing fields, the amounts, the wait, that
    /// the generation goes on), told to people in brackets after it; the envelope
    /// has them in `details`.
    pub facts: Vec<String>,
}

/// The fact told after every failure that left an accepted generation running.
pub const GOES_ON: &str = "the generation goes on on the service";

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
            facts: Vec::new(),
        }
    }

    /// A fact the message leaves out.
    pub fn fact(mut self, fact: impl Into<String>) -> Self {
        self.facts.push(fact.into());
        self
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
    /// and is paid for, so the only next step is to resume (`resume`, else
    /// `mediagen get <id> --wait`), whatever the error was; the id and the key go
    /// to the envelope. The id is told once, in the resume command.
    pub fn created(self, id: uuid::Uuid, key: Option<&str>, resume: Option<&str>) -> Self {
        let default_resume = format!("mediagen get {id} --wait");
        let resume = resume.unwrap_or(&default_resume);
        self.hint(format!("resume with `{resume}`"))
            .detail("id", id.to_string())
            .key(key)
    }

    /// A failure after a create accepted by the embedded mock: the mock, and the
    /// generation with it, end with this command, so there is nothing to resume.
    pub fn created_on_embedded_mock(self, id: uuid::Uuid, key: Option<&str>) -> Self {
        self.hint(
            "the generation ends with the embedded mock when this command ends: run the \
             command again, or keep a mock running with `mediagen mock` and pass its URL as \
             --base-url",
        )
        .detail("id", id.to_string())
        .key(key)
    }

    /// A create that still had no clear answer after its retries, and may have
    /// acted (see `may_have_acted`): its `Idempotency-Key` finds it. `again` is how
    /// to send it again with that key.
    pub fn unanswered_create(err: &Error, key: &str, again: &str) -> Self {
        Self::from_sdk(err)
            .hint(format!(
                "it may have been created: {again}, which returns it instead of making another"
            ))
            .key(Some(key))
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
                let (exit, facts) = advice(&api.kind, api.attempts, &api.message);
                let mut failure = Self::new(exit, api.code.as_str(), api.message.clone())
                    .hint(crate::hint::for_error(&api.kind));
                failure.facts = facts;
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
            .fact(GOES_ON)
            .detail("status", status.to_string())
            .created(*id, idempotency_key.as_deref(), None),
            Error::AfterCreate {
                id,
                idempotency_key,
                source,
            } => Self::from_sdk(source)
                .fact(GOES_ON)
                .created(*id, Some(idempotency_key), None),
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
                    "check the base URL and the API key (--base-url and --api-key, \
                     MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY, or the profile; `mediagen config` \
                     shows them); --mock runs against a local mock instead",
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

/// Whether a failed request may have acted on the service: it got no answer, or a
/// 5xx. A refusal (4xx, a 429 included) made nothing, so nothing can exist to find.
pub fn may_have_acted(err: &Error) -> bool {
    match err {
        Error::Api(api) => api.status.is_server_error(),
        Error::Connection { .. } | Error::Body(_) => true,
        _ => false,
    }
}

/// The exit code of a service error, and what its message leaves out: the fields
/// and values the service named, the amounts, the wait, the attempts made.
fn advice(kind: &ErrorKind, attempts: u32, message: &str) -> (Exit, Vec<String>) {
    let mut facts = Vec::new();
    let mut tell = |fact: String| {
        if !message.contains(&fact) {
            facts.push(fact);
        }
    };
    let exit = match kind {
        ErrorKind::Authentication | ErrorKind::Authorization => Exit::Authentication,
        ErrorKind::Validation {
            fields,
            allowed_values,
            max_size_bytes,
        } => {
            // A message that lists the allowed values says all an `enum` field would.
            let lists_allowed =
                !allowed_values.is_empty() && allowed_values.iter().all(|v| message.contains(v));
            for field in fields {
                if lists_allowed && field.keyword == "enum" {
                    continue;
                }
                // The field's message is often the message itself: then its path alone.
                if message.contains(&field.message) {
                    if !field.path.is_empty() && !message.contains(&field.path) {
                        tell(format!("field {}", field.path));
                    }
                } else if field.path.is_empty() {
                    tell(field.message.clone());
                } else {
                    tell(format!("{}: {}", field.path, field.message));
                }
            }
            if !allowed_values.is_empty() && !lists_allowed {
                tell(format!("allowed: {}", allowed_values.join(", ")));
            }
            if let Some(max) = max_size_bytes {
                tell(format!("at most {max} bytes"));
            }
            Exit::Usage
        }
        ErrorKind::InsufficientBalance {
            required,
            available,
        } => {
            if let (Some(required), Some(available)) = (required, available) {
                let (required, available) = (format!("{required:.2}"), format!("{available:.2}"));
                // Told only when the message does not already give both amounts.
                if !(message.contains(&required) && message.contains(&available)) {
                    tell(format!(
                        "{required} RUB required, {available} RUB available"
                    ));
                }
            }
            Exit::InsufficientBalance
        }
        ErrorKind::RateLimited { retry_after, .. } => {
            if let Some(after) = retry_after {
                tell(format!("retry after {} s", after.as_secs()));
            }
            Exit::RateLimited
        }
        ErrorKind::ConcurrencyLimit { .. } | ErrorKind::DailyCapExceeded { .. } => {
            Exit::RateLimited
        }
        ErrorKind::MarginGuard | ErrorKind::UpstreamCircuitOpen => {
            tell("nothing was charged".to_owned());
            Exit::Other
        }
        _ => Exit::Other,
    };
    if attempts > 1 {
        facts.push(format!("{attempts} attempts were made"));
    }
    (exit, facts)
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
    /// The failure for people: `error: while …: CODE (status): message (facts)
    /// [request id]`, and the hint below. See "Errors" in cli/README.md.
    pub(crate) fn line(&self, out: &Output) -> String {
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
        if !self.facts.is_empty() {
            text.push_str(&format!(" ({})", self.facts.join("; ")));
        }
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
    use clap::Parser;

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

    /// An answer of the service, as the SDK reads it.
    fn answered(status: u16, code: &str, message: &str, details: Value) -> Error {
        let body = json!({"error": {
            "code": code, "message": message, "requestId": "req_4f2a9c1b", "details": details
        }});
        mediagen::ApiError::from_response(
            reqwest::StatusCode::from_u16(status).unwrap(),
            &reqwest::header::HeaderMap::new(),
            body.to_string().as_bytes(),
        )
        .into()
    }

    /// An answer of each topic of the hint table, with the service's own messages.
    fn one_of_each_topic() -> Vec<(&'static str, Error)> {
        vec![
            (
                "AUTHENTICATION_ERROR",
                answered(
                    401,
                    "AUTHENTICATION_ERROR",
                    "Malformed API key; keys look like mg_live_<public>_<secret>",
                    json!({}),
                ),
            ),
            (
                "AUTHORIZATION_ERROR",
                answered(
                    403,
                    "AUTHORIZATION_ERROR",
                    "The key has no right to this resource",
                    json!({}),
                ),
            ),
            (
                "VALIDATION_ERROR",
                answered(
                    400,
                    "VALIDATION_ERROR",
                    "Parameter aspect_ratio must be one of the model's ratios",
                    json!({"fields": [{"path": "/params/aspect_ratio", "keyword": "model",
                    "message": "7:3 is not a ratio of flux-schnell"}]}),
                ),
            ),
            (
                "VALIDATION_ERROR:enum",
                answered(
                    400,
                    "VALIDATION_ERROR",
                    "Unknown event type \"generation.started\"; allowed values: generation.completed, \
                 generation.failed, generation.*, *",
                    json!({"allowedValues": ["generation.completed", "generation.failed", "generation.*", "*"],
                    "fields": [{"path": "/eventTypes/0", "keyword": "enum",
                        "message": "must be equal to one of the allowed values"}]}),
                ),
            ),
            (
                "VALIDATION_ERROR:url",
                answered(
                    400,
                    "VALIDATION_ERROR",
                    "Private IP addresses are not allowed",
                    json!({"fields": [{"path": "/url", "keyword": "format",
                    "message": "Private IP addresses are not allowed"}]}),
                ),
            ),
            (
                "NOT_FOUND",
                answered(
                    404,
                    "NOT_FOUND",
                    "Model 'nope' not found; GET /v1/catalog/ lists the models",
                    json!({}),
                ),
            ),
            (
                "MODEL_NOT_AVAILABLE",
                answered(
                    403,
                    "MODEL_NOT_AVAILABLE",
                    "Model kling-2-1 is not available",
                    json!({"modelSlug": "kling-2-1"}),
                ),
            ),
            (
                "MODEL_UNAVAILABLE",
                answered(
                    410,
                    "MODEL_UNAVAILABLE",
                    "Model veo-2 was withdrawn by its provider",
                    json!({"modelSlug": "veo-2"}),
                ),
            ),
            (
                "INSUFFICIENT_BALANCE",
                answered(
                    402,
                    "INSUFFICIENT_BALANCE",
                    "Insufficient balance: 2.50 RUB required, 1.00 RUB available",
                    json!({"required": 2.5, "available": 1.0}),
                ),
            ),
            (
                "MARGIN_GUARD",
                answered(
                    503,
                    "MARGIN_GUARD",
                    "Model price is below the allowed minimum",
                    json!({}),
                ),
            ),
            (
                "PAYMENT_ERROR",
                answered(502, "PAYMENT_ERROR", "Payment circuit failed", json!({})),
            ),
            (
                "CONFLICT_ERROR",
                answered(
                    409,
                    "CONFLICT_ERROR",
                    "Generation 7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47 is PROCESSING; only a PENDING \
                 generation can be cancelled",
                    json!({}),
                ),
            ),
            (
                "RESERVATION_EXPIRED",
                answered(
                    409,
                    "RESERVATION_EXPIRED",
                    "Reservation of funds expired",
                    json!({}),
                ),
            ),
            (
                "RATE_LIMIT_ERROR",
                answered(
                    429,
                    "RATE_LIMIT_ERROR",
                    "Too many requests",
                    json!({"retryAfter": 12}),
                ),
            ),
            (
                "CONCURRENCY_LIMIT",
                answered(
                    429,
                    "RATE_LIMIT_ERROR",
                    "Maximum 5 concurrent generations allowed",
                    json!({}),
                ),
            ),
            (
                "DAILY_CAP_EXCEEDED",
                answered(
                    429,
                    "DAILY_CAP_EXCEEDED",
                    "Daily top-up cap of 100000 RUB is used up",
                    json!({}),
                ),
            ),
            (
                "MODERATION_REPEAT_BLOCKED",
                answered(
                    409,
                    "MODERATION_REPEAT_BLOCKED",
                    "Requests to flux-schnell are blocked after 3 refusals in a row",
                    json!({"modelSlug": "flux-schnell", "streak": 3}),
                ),
            ),
            (
                "UPSTREAM_CIRCUIT_OPEN",
                answered(
                    503,
                    "UPSTREAM_CIRCUIT_OPEN",
                    "Intake on this model is paused",
                    json!({}),
                ),
            ),
            (
                "INTERNAL_ERROR",
                answered(500, "INTERNAL_ERROR", "Internal error", json!({})),
            ),
            (
                "*",
                answered(
                    503,
                    "SERVICE_UNAVAILABLE",
                    "A dependency is unavailable",
                    json!({}),
                ),
            ),
        ]
    }

    /// Numbers, ids, and every run of three words of `text`, lower-case.
    fn facts_of(text: &str) -> (Vec<String>, Vec<String>) {
        let words: Vec<String> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
            .map(|word| word.trim_matches('.').to_lowercase())
            .filter(|word| !word.is_empty())
            .collect();
        let numbers = words
            .iter()
            .filter(|word| word.chars().any(|c| c.is_ascii_digit()))
            .cloned()
            .collect();
        let runs = words.windows(3).map(|run| run.join(" ")).collect();
        (numbers, runs)
    }

    #[test]
    fn every_hint_says_what_to_do_next_without_repeating_its_error_line() {
        let cli =
            crate::cli::Cli::try_parse_from(["mediagen", "--color", "never", "balance"]).unwrap();
        let out = Output::new(&cli.global);
        let samples = one_of_each_topic();
        for row in crate::hint::TABLE {
            let (_, err) = samples
                .iter()
                .find(|(topic, _)| *topic == row.topic)
                .unwrap_or_else(|| panic!("no sample error for {}", row.topic));
            if let (Error::Api(api), false) = (err, row.topic == "*") {
                assert_eq!(
                    crate::hint::topic(&api.kind),
                    row.topic,
                    "the sample of {}",
                    row.topic
                );
            }
            let failure = Failure::from_sdk(err);
            let line = Failure {
                hint: None,
                ..failure
            }
            .line(&out);
            let (numbers, runs) = facts_of(&line);
            let (hint_numbers, hint_runs) = facts_of(row.hint);
            for number in &hint_numbers {
                assert!(
                    !numbers.contains(number),
                    "{}: the hint repeats {number}: {line} / {}",
                    row.topic,
                    row.hint
                );
            }
            for run in &hint_runs {
                assert!(
                    !runs.contains(run),
                    "{}: the hint repeats \"{run}\": {line} / {}",
                    row.topic,
                    row.hint
                );
            }
        }
    }

    #[test]
    fn facts_the_message_gives_are_not_told_again() {
        let balance = one_of_each_topic().remove(8).1;
        assert!(Failure::from_sdk(&balance).facts.is_empty());
        let wait = Failure::from_sdk(&one_of_each_topic().remove(13).1);
        assert_eq!(wait.facts, ["retry after 12 s"]);
        let private = Failure::from_sdk(&one_of_each_topic().remove(4).1);
        assert_eq!(private.facts, ["field /url"]);
        let event = Failure::from_sdk(&one_of_each_topic().remove(3).1);
        assert!(event.facts.is_empty(), "{:?}", event.facts);
    }

    #[test]
    fn only_an_answer_that_may_have_acted_is_sent_again() {
        let refused = answered(
            429,
            "RATE_LIMIT_ERROR",
            "Too many requests",
            json!({"retryAfter": 3}),
        );
        assert!(!may_have_acted(&refused));
        let concurrency = answered(
            429,
            "RATE_LIMIT_ERROR",
            "Maximum 5 concurrent generations allowed",
            json!({}),
        );
        assert!(!may_have_acted(&concurrency));
        assert!(may_have_acted(&answered(
            502,
            "GATEWAY_TIMEOUT",
            "upstream",
            json!({})
        )));
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
