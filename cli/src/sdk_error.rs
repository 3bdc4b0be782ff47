//! What each error of the SDK tells the user: the [`Failure`] it becomes, with its
//! exit code, what the command knows of the generation it concerns, and the topic
//! that chooses its hint. An error answer of the service is read in
//! `error_answer.rs`.

use mediagen::Error;

use crate::error::{Exit, Failure, GOES_ON};
use crate::hint::{self, Topic};

impl From<&Error> for Failure {
    fn from(err: &Error) -> Self {
        match err {
            Error::Api(api) => Self::from(api.as_ref()),
            Error::GenerationFailed(failed) => {
                // The code as it came, known or not.
                let code = match failed.code.as_str() {
                    "" => "no error code",
                    code => code,
                };
                let failure = Self::new(
                    Exit::GenerationFailed,
                    "GENERATION_FAILED",
                    format!(
                        "generation {} failed: {} ({code})",
                        failed.id, failed.message
                    ),
                );
                Self {
                    topic: Some(Topic::Failed(failed.code.clone())),
                    ..failure
                }
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
            } => {
                Self::from(source.as_ref())
                    .fact(GOES_ON)
                    .created(*id, Some(idempotency_key), None)
            }
            Error::OutcomeUnknown {
                operation,
                check,
                source,
            } => {
                let cause = Self::from(source.as_ref());
                let mut failure = Self::new(
                    Exit::Other,
                    "OUTCOME_UNKNOWN",
                    format!(
                        "the outcome of {operation} is unknown ({}: {}); it was not sent again, \
                         since it may have taken effect",
                        cause.code, cause.message
                    ),
                )
                .hint(match err.operation_id().and_then(hint::check_command) {
                    Some(command) => format!("{check}: `{command}`"),
                    None => check.to_string(),
                })
                .detail("operation", *operation)
                .detail("cause", cause.code);
                failure.request_id = cause.request_id;
                failure.status = cause.status;
                failure
            }
            Error::Connection { attempts, source } => Self {
                topic: Some(Topic::Unreachable),
                ..Self::new(
                    Exit::Other,
                    "CONNECTION_ERROR",
                    format!(
                        "could not reach the service ({attempts} attempt(s)): {}",
                        causes(source)
                    ),
                )
            },
            Error::Config(message) => Self {
                topic: Some(Topic::Misconfigured),
                ..Self::new(Exit::Authentication, "CONFIGURATION_ERROR", message.clone())
            },
            // A bad value in the environment is the user's mistake, not the key's.
            Error::InvalidVariable { variable, .. } => Self {
                topic: Some(Topic::Variable(variable)),
                ..Self::new(Exit::Usage, "CONFIGURATION_ERROR", err.to_string())
            },
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

impl Failure {
    /// The failure an error tells of (ours, the SDK's, or any other with exit 1), with
    /// the steps of context above it.
    pub fn of(err: &anyhow::Error) -> Self {
        let mut steps = Vec::new();
        for cause in err.chain() {
            let failure = match (cause.downcast_ref::<Self>(), cause.downcast_ref::<Error>()) {
                (Some(failure), _) => failure.clone(),
                (None, Some(sdk)) => Self::from(sdk),
                (None, None) => {
                    steps.push(cause.to_string());
                    continue;
                }
            };
            return Self { steps, ..failure };
        }
        Self::new(Exit::Other, "CLI_ERROR", format!("{err:#}"))
    }

    /// A create that still had no clear answer after its retries, and may have
    /// acted (see [`may_have_acted`]): its `Idempotency-Key` finds it. `again` is how
    /// to send it again with that key.
    pub fn unanswered_create(err: &Error, key: &str, again: &str) -> Self {
        Self::from(err)
            .hint(format!(
                "it may have been created: {again}, which returns it instead of making another"
            ))
            .key(Some(key))
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

/// An error and the errors under it, as one line: `a: b: c`.
fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(err), |cause| cause.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error_answer::tests::answered;

    #[test]
    fn a_failure_inside_context_keeps_its_exit_code() {
        let err = anyhow::Error::new(Failure::new(Exit::Timeout, "WAIT_TIMEOUT", "late"))
            .context("while waiting");
        let failure = Failure::of(&err);
        assert_eq!(failure.exit, Exit::Timeout);
        assert_eq!(failure.steps, ["while waiting"]);
    }

    #[test]
    fn an_unknown_outcome_points_at_the_command_that_shows_whether_it_acted() {
        let err = Error::OutcomeUnknown {
            operation: "create_topup",
            check: "list the balance operations",
            source: Box::new(Error::InvalidRequest("no answer".into())),
        };
        let failure = Failure::from(&err);
        assert_eq!(
            failure.hint.as_deref(),
            Some("list the balance operations: `mediagen history --type TOPUP`")
        );
    }

    #[test]
    fn only_an_answer_that_may_have_acted_is_sent_again() {
        let answer = |status, code, message, details| -> Error {
            answered(status, code, message, details).into()
        };
        let refused = answer(
            429,
            "RATE_LIMIT_ERROR",
            "Too many requests",
            json!({"retryAfter": 3}),
        );
        assert!(!may_have_acted(&refused));
        let concurrency = answer(
            429,
            "RATE_LIMIT_ERROR",
            "Maximum 5 concurrent generations allowed",
            json!({}),
        );
        assert!(!may_have_acted(&concurrency));
        assert!(may_have_acted(&answer(
            502,
            "GATEWAY_TIMEOUT",
            "upstream",
            json!({})
        )));
    }
}
