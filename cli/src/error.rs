//! The command's own error: an exit code, and what to tell as the service's error
//! envelope (for scripts) or as one line and a hint (for people). What the SDK's
//! errors become is in `sdk_error.rs`; the hints chosen by topic are in `hint.rs`.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::cli::CommandId;
use crate::hint::{self, Topic};
use crate::output::{Output, RED, YELLOW};

/// One code per kind of outcome; `mediagen --help` lists them (cli::EXIT_CODES).
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
    /// What to do next, when it is given here rather than chosen by `topic`.
    pub hint: Option<String>,
    /// What went wrong, for the hint of `hint::TABLE` when none is given.
    pub topic: Option<Topic>,
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
            topic: None,
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

    /// The failure with the hint of its topic in `command`, unless it has one.
    pub fn hinted(mut self, command: CommandId) -> Self {
        if self.hint.is_none() {
            let chosen = self
                .topic
                .as_ref()
                .and_then(|topic| hint::hint(topic, command));
            self.hint = chosen.map(str::to_owned);
        }
        self
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
             --base-url and its demo key as --api-key",
        )
        .detail("id", id.to_string())
        .key(key)
    }

    /// The failure of a command run against the embedded mock, which starts afresh
    /// with every command: money added there is gone by the next one, so a balance
    /// too low is met with a mock that holds more.
    pub fn on_embedded_mock(mut self) -> Self {
        use mediagen::ErrorCode as E;
        let short_of_money = matches!(
            &self.topic,
            Some(Topic::Code(E::InsufficientBalance | E::DailyCapExceeded))
        );
        if self.hint.is_none() && short_of_money {
            self.hint = Some(hint::EMBEDDED_MOCK_BALANCE.to_owned());
        }
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

    /// The failure for people: `error: while …: CODE (status): message (facts)
    /// [request id]`, and the hint below. See "Errors" in cli/README.md.
    pub fn line(&self, out: &Output) -> String {
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
    use super::*;

    #[test]
    fn the_envelope_has_the_services_shape_and_a_hint() {
        let failure = Failure::new(Exit::Usage, "INVALID_REQUEST", "empty prompt").hint("add one");
        assert_eq!(
            failure.envelope(),
            json!({"error": {"code": "INVALID_REQUEST", "message": "empty prompt", "hint": "add one"}})
        );
    }

    #[test]
    fn a_balance_too_low_in_the_embedded_mock_is_not_told_to_top_up_there() {
        let short = Failure {
            topic: Some(Topic::Code(mediagen::ErrorCode::InsufficientBalance)),
            ..Failure::new(Exit::InsufficientBalance, "INSUFFICIENT_BALANCE", "short")
        };
        let told = short.clone().on_embedded_mock().hinted(CommandId::Generate);
        let told = told.hint.unwrap();
        assert!(told.contains("`mediagen mock --demo-balance-rub"), "{told}");
        assert!(!told.contains("topup"), "{told}");
        let elsewhere = short.hinted(CommandId::Generate).hint.unwrap();
        assert!(elsewhere.contains("`mediagen topup AMOUNT`"), "{elsewhere}");
    }

    #[test]
    fn a_hint_given_wins_over_the_hint_of_the_topic() {
        let refused = Failure::new(Exit::Usage, "VALIDATION_ERROR", "no")
            .hint("resume with `mediagen get ID --wait`");
        let refused = Failure {
            topic: Some(Topic::AnyAnswer),
            ..refused
        };
        let given = refused.clone().hinted(CommandId::Generate).hint;
        assert_eq!(
            given.as_deref(),
            Some("resume with `mediagen get ID --wait`")
        );
        let chosen = Failure {
            hint: None,
            ..refused
        }
        .hinted(CommandId::Generate)
        .hint;
        assert_eq!(
            chosen.as_deref(),
            hint::hint(&Topic::AnyAnswer, CommandId::Generate)
        );
    }
}
