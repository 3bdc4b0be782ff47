//! An error answer of the service as a [`Failure`]: its code and message as sent,
//! the exit code of its kind, the facts its message leaves out, and the topic that
//! chooses its hint.

use mediagen::{ApiError, ErrorKind};
use serde_json::Value;

use crate::error::{Exit, Failure};
use crate::hint::Topic;

impl From<&ApiError> for Failure {
    fn from(api: &ApiError) -> Self {
        Self::answer_naming(api, |_| None)
    }
}

impl Failure {
    /// An error answer whose fields are told by the names the person typed them as
    /// (`/inn` as `--inn`), where `name` knows one.
    pub fn answer_naming(api: &ApiError, name: impl Fn(&str) -> Option<&'static str>) -> Self {
        let (exit, facts) = exit_and_facts(&api.kind, api.attempts, &api.message, &name);
        let mut failure = Self::new(exit, api.code.as_str(), api.message.clone());
        failure.topic = Some(topic(api));
        failure.facts = facts;
        failure.request_id = api.request_id.clone();
        failure.status = Some(api.status.to_string());
        failure.timestamp = api.timestamp.map(|t| t.to_rfc3339());
        failure.details = api.details.clone();
        failure
    }
}

/// The topic of an error answer: its code, with the concurrency limit told apart
/// from the windowed 429 it shares the code with, and a refused value of a closed
/// set or a refused webhook URL apart from other invalid requests.
fn topic(api: &ApiError) -> Topic {
    match &api.kind {
        ErrorKind::ConcurrencyLimit { .. } => Topic::ConcurrencyLimit,
        ErrorKind::Validation {
            fields,
            allowed_values,
            ..
        } => {
            if fields.iter().any(|field| field.path == "/url") {
                Topic::WebhookUrl
            } else if fields.iter().any(|field| field.path == "/requisites") {
                // The contract's refusal of an invoice before the requisites are set.
                Topic::NoRequisites
            } else if !allowed_values.is_empty() || fields.iter().any(|f| f.keyword == "enum") {
                Topic::RefusedValue
            } else {
                Topic::Code(api.code.clone())
            }
        }
        _ => Topic::Code(api.code.clone()),
    }
}

/// The exit code of a service error, and what its message leaves out: the fields
/// and values the service named, the amounts, the wait, the attempts made.
fn exit_and_facts(
    kind: &ErrorKind,
    attempts: u32,
    message: &str,
    name: &dyn Fn(&str) -> Option<&'static str>,
) -> (Exit, Vec<String>) {
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
                let path = name(&field.path).unwrap_or(&field.path);
                // A value outside a closed set is told with the set, which Ajv's
                // `enum` error keeps in `params.allowedValues`.
                // A message that names the set says all the field would.
                let allowed = allowed_of(field);
                if !allowed.is_empty() {
                    if !allowed.iter().all(|v| message.contains(v.as_str())) {
                        let set = allowed.join(", ");
                        tell(if field.keyword == "enum" {
                            format!("{path}: must be one of {set}")
                        } else {
                            format!("{path}: {}, one of {set}", field.message)
                        });
                    }
                    continue;
                }
                // The field's message is often the message itself: then its path alone.
                if message.contains(&field.message) {
                    if !path.is_empty() && !message.contains(path) {
                        tell(format!("field {path}"));
                    }
                } else if path.is_empty() {
                    tell(field.message.clone());
                } else {
                    tell(format!("{path}: {}", field.message));
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

/// The values of a closed set a field error names, as text.
fn allowed_of(field: &mediagen::FieldError) -> Vec<String> {
    let values = field.params.get("allowedValues").and_then(Value::as_array);
    values
        .into_iter()
        .flatten()
        .map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[cfg(test)]
pub mod tests {
    use clap::Parser;
    use mediagen::ErrorCode as E;
    use serde_json::{Value, json};

    use super::*;
    use crate::cli::{Cli, CommandId};
    use crate::hint::{self, Commands};
    use crate::output::Output;

    /// An answer of the service, as the SDK reads it.
    pub fn answered(status: u16, code: &str, message: &str, details: Value) -> ApiError {
        let body = json!({"error": {
            "code": code, "message": message, "requestId": "req_4f2a9c1b", "details": details
        }});
        ApiError::from_response(
            reqwest::StatusCode::from_u16(status).unwrap(),
            &reqwest::header::HeaderMap::new(),
            body.to_string().as_bytes(),
        )
    }

    /// An answer of each topic of the hint table that answers have, with the
    /// service's own messages.
    fn one_of_each_topic() -> Vec<(Topic, ApiError)> {
        vec![
            (
                Topic::Code(E::AuthenticationError),
                answered(
                    401,
                    "AUTHENTICATION_ERROR",
                    "Malformed API key; keys look like mg_live_<public>_<secret>",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::AuthorizationError),
                answered(
                    403,
                    "AUTHORIZATION_ERROR",
                    "The key has no right to this resource",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::ValidationError),
                answered(
                    400,
                    "VALIDATION_ERROR",
                    "Parameter aspect_ratio must be one of the model's ratios",
                    json!({"fields": [{"path": "/params/aspect_ratio", "keyword": "model",
                    "message": "7:3 is not a ratio of flux-schnell"}]}),
                ),
            ),
            (
                Topic::RefusedValue,
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
                Topic::WebhookUrl,
                answered(
                    400,
                    "VALIDATION_ERROR",
                    "Private IP addresses are not allowed",
                    json!({"fields": [{"path": "/url", "keyword": "format",
                    "message": "Private IP addresses are not allowed"}]}),
                ),
            ),
            (
                Topic::NoRequisites,
                answered(
                    400,
                    "VALIDATION_ERROR",
                    "Set the requisites of the legal entity first (PUT /v1/billing/requisites)",
                    json!({"fields": [{"path": "/requisites", "keyword": "required",
                    "message": "must have requisites", "params": {"missingProperty": "requisites"}}]}),
                ),
            ),
            (
                Topic::Code(E::NotFound),
                answered(
                    404,
                    "NOT_FOUND",
                    "Model 'nope' not found; GET /v1/catalog/ lists the models",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::ModelNotAvailable),
                answered(
                    403,
                    "MODEL_NOT_AVAILABLE",
                    "Model kling-2-1 is not available",
                    json!({"modelSlug": "kling-2-1"}),
                ),
            ),
            (
                Topic::Code(E::ModelUnavailable),
                answered(
                    410,
                    "MODEL_UNAVAILABLE",
                    "Model veo-2 was withdrawn by its provider",
                    json!({"modelSlug": "veo-2"}),
                ),
            ),
            (
                Topic::Code(E::InsufficientBalance),
                answered(
                    402,
                    "INSUFFICIENT_BALANCE",
                    "Insufficient balance: 2.50 RUB required, 1.00 RUB available",
                    json!({"required": 2.5, "available": 1.0}),
                ),
            ),
            (
                Topic::Code(E::MarginGuard),
                answered(
                    503,
                    "MARGIN_GUARD",
                    "Model price is below the allowed minimum",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::PaymentError),
                answered(502, "PAYMENT_ERROR", "Payment circuit failed", json!({})),
            ),
            (
                Topic::Code(E::ConflictError),
                answered(
                    409,
                    "CONFLICT_ERROR",
                    "Generation 7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47 is PROCESSING; only a PENDING \
                 generation can be cancelled",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::ReservationExpired),
                answered(
                    409,
                    "RESERVATION_EXPIRED",
                    "Reservation of funds expired",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::RateLimitError),
                answered(
                    429,
                    "RATE_LIMIT_ERROR",
                    "Too many requests",
                    json!({"retryAfter": 12}),
                ),
            ),
            (
                Topic::ConcurrencyLimit,
                answered(
                    429,
                    "RATE_LIMIT_ERROR",
                    "Maximum 5 concurrent generations allowed",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::DailyCapExceeded),
                answered(
                    429,
                    "DAILY_CAP_EXCEEDED",
                    "Daily top-up cap of 100000 RUB is used up",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::ModerationRepeatBlocked),
                answered(
                    409,
                    "MODERATION_REPEAT_BLOCKED",
                    "Requests to flux-schnell are blocked after 3 refusals in a row",
                    json!({"modelSlug": "flux-schnell", "streak": 3}),
                ),
            ),
            (
                Topic::Code(E::UpstreamCircuitOpen),
                answered(
                    503,
                    "UPSTREAM_CIRCUIT_OPEN",
                    "Intake on this model is paused",
                    json!({}),
                ),
            ),
            (
                Topic::Code(E::InternalError),
                answered(500, "INTERNAL_ERROR", "Internal error", json!({})),
            ),
            (
                Topic::AnyAnswer,
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

    /// The sample of `topic`, as a failure.
    fn sample(topic: &Topic) -> Failure {
        one_of_each_topic()
            .iter()
            .find(|(of, _)| of == topic)
            .map(|(_, api)| Failure::from(api))
            .unwrap_or_else(|| panic!("no sample answer for {topic:?}"))
    }

    #[test]
    fn every_hint_says_what_to_do_next_without_repeating_its_error_line() {
        let cli = Cli::try_parse_from(["mediagen", "--color", "never", "balance"]).unwrap();
        let out = Output::new(&cli.global);
        // A failed generation's message is the provider's, and the network's and the
        // settings' are this machine's: only the rows of answers have samples.
        let answers = hint::TABLE.iter().filter(|row| {
            matches!(
                row.topic,
                Topic::Code(_)
                    | Topic::ConcurrencyLimit
                    | Topic::RefusedValue
                    | Topic::WebhookUrl
                    | Topic::NoRequisites
                    | Topic::AnyAnswer
            )
        });
        for row in answers {
            let failure = sample(&row.topic);
            let command = match row.commands {
                Commands::Any => CommandId::Completions,
                Commands::Only(commands) => commands[0],
            };
            let chosen = failure.topic.as_ref().and_then(|t| hint::row(t, command));
            assert!(
                chosen.is_some_and(|chosen| std::ptr::eq(chosen, row)),
                "the sample of {:?} is not told this row's hint",
                row.topic
            );
            let line = failure.line(&out);
            let (numbers, runs) = facts_of(&line);
            let (hint_numbers, hint_runs) = facts_of(row.hint);
            for number in &hint_numbers {
                assert!(
                    !numbers.contains(number),
                    "{:?}: the hint repeats {number}: {line} / {}",
                    row.topic,
                    row.hint
                );
            }
            for run in &hint_runs {
                assert!(
                    !runs.contains(run),
                    "{:?}: the hint repeats \"{run}\": {line} / {}",
                    row.topic,
                    row.hint
                );
            }
        }
    }

    #[test]
    fn a_value_outside_a_closed_set_is_told_with_the_set() {
        let enum_field = |path: &str, allowed: Value| {
            json!({"fields": [{"path": path, "keyword": "enum",
                "message": "must be equal to one of the allowed values",
                "params": {"allowedValues": allowed}}]})
        };
        let status = answered(
            400,
            "VALIDATION_ERROR",
            "Query parameter status is invalid",
            enum_field(
                "/query/status",
                json!(["PENDING", "PROCESSING", "SUCCEEDED"]),
            ),
        );
        let failure = Failure::from(&status);
        assert_eq!(failure.topic, Some(Topic::RefusedValue));
        assert_eq!(
            failure.facts,
            ["/query/status: must be one of PENDING, PROCESSING, SUCCEEDED"]
        );
        let duration = answered(
            400,
            "VALIDATION_ERROR",
            "Parameters do not fit the model",
            enum_field("/params/duration", json!([5, 10])),
        );
        assert_eq!(
            Failure::from(&duration).facts,
            ["/params/duration: must be one of 5, 10"]
        );
        // A message that names the set already is not told it twice.
        let named = answered(
            400,
            "VALIDATION_ERROR",
            "status must be one of PENDING, PROCESSING, SUCCEEDED",
            enum_field(
                "/query/status",
                json!(["PENDING", "PROCESSING", "SUCCEEDED"]),
            ),
        );
        assert!(Failure::from(&named).facts.is_empty());
    }

    #[test]
    fn the_fields_of_an_answer_are_told_by_the_names_the_command_gave_them() {
        let refused = answered(
            400,
            "VALIDATION_ERROR",
            "Requisites are not valid",
            json!({"fields": [{"path": "/inn", "keyword": "checksum",
                "message": "INN check digit does not match", "params": {}}]}),
        );
        let failure = Failure::answer_naming(&refused, |path| (path == "/inn").then_some("--inn"));
        assert_eq!(failure.facts, ["--inn: INN check digit does not match"]);
        assert_eq!(
            failure.details["fields"][0]["path"], "/inn",
            "the envelope as sent"
        );
    }

    #[test]
    fn facts_the_message_gives_are_not_told_again() {
        assert!(
            sample(&Topic::Code(E::InsufficientBalance))
                .facts
                .is_empty()
        );
        let wait = sample(&Topic::Code(E::RateLimitError));
        assert_eq!(wait.facts, ["retry after 12 s"]);
        let private = sample(&Topic::WebhookUrl);
        assert_eq!(private.facts, ["field /url"]);
        let event = sample(&Topic::RefusedValue);
        assert!(event.facts.is_empty(), "{:?}", event.facts);
    }
}
