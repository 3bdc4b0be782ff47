//! What to do next after a service error: one table from the error's code and the
//! command to a hint. The error line already tells what happened (the message and
//! the facts in brackets); a hint tells only the next step, so it never repeats
//! them. The table is the one place to read or change a hint.

use std::sync::OnceLock;

use mediagen::ErrorKind;

/// The command being run, as `Command::name` gives it (`generate`, `webhooks create`).
static COMMAND: OnceLock<&'static str> = OnceLock::new();

/// Names the command the hints are for; set once, before anything can fail.
pub fn set_command(name: &'static str) {
    // A second call would be a bug of main; the first name stays.
    let _ = COMMAND.set(name);
}

fn command() -> &'static str {
    COMMAND.get().copied().unwrap_or("")
}

/// A row: the error's topic, the commands it is for (`*`: any), the hint.
pub struct Row {
    pub topic: &'static str,
    pub commands: &'static [&'static str],
    pub hint: &'static str,
}

const WEBHOOK_URL: &str = "give an https URL that the service can reach from the internet (a \
     tunnel to this machine will do); a mock started with --allow-private-webhooks also takes \
     private and loopback addresses";
const MODELS: &str = "check the model slug: `mediagen models` lists them";
const MODEL_PARAMETERS: &str = "fix the prompt or the parameters: `mediagen models SLUG` lists a model's parameters and \
     their values";
const TOP_UP: &str = "top up with `mediagen topup AMOUNT`, or ask for an invoice with `mediagen invoices create AMOUNT`";
const LATER: &str = "try again later";

/// The first row whose topic and command match wins: specific commands first.
pub static TABLE: &[Row] = &[
    Row {
        topic: "AUTHENTICATION_ERROR",
        commands: &["login"],
        hint: "check the key you typed or piped in; keys are issued in the account dashboard",
    },
    Row {
        topic: "AUTHENTICATION_ERROR",
        commands: &["*"],
        hint: "check the API key (MEDIAGEN_API_KEY, --api-key or the profile's api_key); keys \
               are issued in the account dashboard",
    },
    Row {
        topic: "AUTHORIZATION_ERROR",
        commands: &["*"],
        hint: "use another key; keys and what they may do are managed in the account dashboard",
    },
    Row {
        topic: "VALIDATION_ERROR",
        commands: &["generate", "batch"],
        hint: MODEL_PARAMETERS,
    },
    Row {
        topic: "VALIDATION_ERROR:enum",
        commands: &["generate", "batch"],
        hint: MODEL_PARAMETERS,
    },
    Row {
        topic: "VALIDATION_ERROR:url",
        commands: &["webhooks create", "webhooks update", "webhooks listen"],
        hint: WEBHOOK_URL,
    },
    Row {
        topic: "VALIDATION_ERROR:enum",
        commands: &[
            "webhooks create",
            "webhooks update",
            "webhooks listen",
            "webhooks test",
        ],
        hint: "pass --event with one of the values that `mediagen webhooks create --help` shows",
    },
    Row {
        topic: "VALIDATION_ERROR:enum",
        commands: &["list"],
        hint: "pass --status with one of the values that `mediagen list --help` shows",
    },
    Row {
        topic: "VALIDATION_ERROR:enum",
        commands: &["history"],
        hint: "pass --type with one of the values that `mediagen history --help` shows",
    },
    Row {
        topic: "VALIDATION_ERROR:enum",
        commands: &["*"],
        hint: "choose one of the values the service accepts, then run the command again",
    },
    Row {
        topic: "VALIDATION_ERROR",
        commands: &["files upload"],
        hint: "upload an image, audio or video file below the size limit",
    },
    Row {
        topic: "VALIDATION_ERROR",
        commands: &["topup", "invoices create"],
        hint: "give an amount of roubles the service accepts",
    },
    Row {
        topic: "VALIDATION_ERROR",
        commands: &["api"],
        hint: "fix the body or the query by the fields named; --field KEY=VALUE sets one",
    },
    Row {
        topic: "VALIDATION_ERROR",
        commands: &["*"],
        hint: "fix the request by the fields named, then run the command again",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["generate", "batch"],
        hint: MODELS,
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["models"],
        hint: "`mediagen models` lists the slugs",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["get", "cancel"],
        hint: "check the id: `mediagen list` shows your generations (another account's are not \
               found)",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["files get", "files delete"],
        hint: "check the id; an uploaded file is kept for a limited time",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &[
            "webhooks get",
            "webhooks update",
            "webhooks rotate",
            "webhooks delete",
            "webhooks test",
            "webhooks deliveries",
            "webhooks redeliver",
        ],
        hint: "check the id: `mediagen webhooks list` shows your endpoints",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["invoices pdf", "invoices act"],
        hint: "check the id: `mediagen invoices list` shows your invoices",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["api"],
        hint: "check the path, and the id in it: the service may have no such path, and \
               another account's resources are not found either",
    },
    Row {
        topic: "NOT_FOUND",
        commands: &["*"],
        hint: "check the id; another account's resources are not found either",
    },
    Row {
        topic: "MODEL_NOT_AVAILABLE",
        commands: &["*"],
        hint: "choose another model: `mediagen models`",
    },
    Row {
        topic: "MODEL_UNAVAILABLE",
        commands: &["*"],
        hint: "choose another model: `mediagen models`",
    },
    Row {
        topic: "INSUFFICIENT_BALANCE",
        commands: &["batch"],
        hint: "top up with `mediagen topup AMOUNT`, then run the same command again: the \
               journal pays for nothing twice",
    },
    Row {
        topic: "INSUFFICIENT_BALANCE",
        commands: &["*"],
        hint: TOP_UP,
    },
    Row {
        topic: "MARGIN_GUARD",
        commands: &["*"],
        hint: "choose another model or other parameters; retrying does not help",
    },
    Row {
        topic: "PAYMENT_ERROR",
        commands: &["*"],
        hint: "try again later; `mediagen history --type TOPUP` shows whether money moved",
    },
    Row {
        topic: "CONFLICT_ERROR",
        commands: &["cancel"],
        hint: "it can no longer be cancelled: `mediagen get ID --wait` follows it to its end",
    },
    Row {
        topic: "CONFLICT_ERROR",
        commands: &["*"],
        hint: "look at its current state, then run the command again if it still applies",
    },
    Row {
        topic: "RESERVATION_EXPIRED",
        commands: &["*"],
        hint: "run the command again: the funds are reserved anew",
    },
    Row {
        topic: "RATE_LIMIT_ERROR",
        commands: &["*"],
        hint: "wait that long, then run the command again",
    },
    Row {
        topic: "CONCURRENCY_LIMIT",
        commands: &["*"],
        hint: "wait for one of your active generations to end (`mediagen list --status \
               PROCESSING`) or cancel a PENDING one, then run the command again",
    },
    Row {
        topic: "DAILY_CAP_EXCEEDED",
        commands: &["*"],
        hint: "top up again after 00:00 UTC, or pay by invoice: `mediagen invoices create AMOUNT`",
    },
    Row {
        topic: "MODERATION_REPEAT_BLOCKED",
        commands: &["*"],
        hint: "change the material, or choose another model (`mediagen models`)",
    },
    Row {
        topic: "UPSTREAM_CIRCUIT_OPEN",
        commands: &["*"],
        hint: "choose another model (`mediagen models`), or try again later",
    },
    Row {
        topic: "INTERNAL_ERROR",
        commands: &["*"],
        hint: "try again later; if it stays, quote the request id to support",
    },
    Row {
        topic: "*",
        commands: &["*"],
        hint: LATER,
    },
];

/// The topic of a service error: its code, with the concurrency limit told apart
/// from the windowed 429 it shares the code with, and a refused value of a closed
/// set or a refused webhook URL apart from other invalid requests.
pub fn topic(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ConcurrencyLimit { .. } => "CONCURRENCY_LIMIT",
        ErrorKind::Validation {
            fields,
            allowed_values,
            ..
        } => {
            if fields.iter().any(|field| field.path == "/url") {
                "VALIDATION_ERROR:url"
            } else if !allowed_values.is_empty() || fields.iter().any(|f| f.keyword == "enum") {
                "VALIDATION_ERROR:enum"
            } else {
                "VALIDATION_ERROR"
            }
        }
        kind => kind.code().unwrap_or("*"),
    }
}

/// The row for `topic` in `command`: of the topic, else of its code
/// (`VALIDATION_ERROR:url` falls back to `VALIDATION_ERROR`), else of any.
pub fn row(topic: &str, command: &str) -> &'static Row {
    let fits = |row: &&Row, topic_of_row: &str| {
        row.topic == topic_of_row && row.commands.iter().any(|c| *c == "*" || *c == command)
    };
    let code = topic.split(':').next().unwrap_or(topic);
    [topic, code, "*"]
        .into_iter()
        .find_map(|topic| TABLE.iter().find(|row| fits(row, topic)))
        .expect("the table ends with a row for any topic and command")
}

/// The hint for a service error in the command being run.
pub fn for_error(kind: &ErrorKind) -> &'static str {
    row(topic(kind), command()).hint
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_reached_by_its_topic_and_commands() {
        for (index, row) in TABLE.iter().enumerate() {
            for command in row.commands {
                let command = if *command == "*" {
                    "completions"
                } else {
                    command
                };
                assert!(
                    std::ptr::eq(super::row(row.topic, command), row),
                    "row {index} ({} for {command}) is shadowed by an earlier one",
                    row.topic
                );
            }
        }
    }

    #[test]
    fn a_refused_login_does_not_point_at_what_login_does_not_read() {
        let hint = row("AUTHENTICATION_ERROR", "login").hint;
        assert!(!hint.contains("MEDIAGEN_API_KEY") && !hint.contains("--api-key"));
    }

    #[test]
    fn a_webhook_url_refusal_names_the_mocks_switch_and_no_model_parameters() {
        for command in ["webhooks create", "webhooks update", "webhooks listen"] {
            let hint = row("VALIDATION_ERROR:url", command).hint;
            assert!(hint.contains("--allow-private-webhooks"), "{hint}");
            assert!(!hint.contains("mediagen models"), "{hint}");
        }
        assert!(!row("VALIDATION_ERROR:enum", "list").hint.contains("models"));
        assert!(
            row("VALIDATION_ERROR:url", "api")
                .hint
                .contains("fields named")
        );
    }

    #[test]
    fn a_missing_path_of_api_is_not_blamed_on_a_model_slug() {
        let hint = row("NOT_FOUND", "api").hint;
        assert!(hint.contains("path") && !hint.contains("slug"), "{hint}");
    }
}
