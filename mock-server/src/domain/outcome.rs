//! Deciding how a task ends: forced outcomes from the control API, magic
//! prompts a person can type, and otherwise success.

use serde::Deserialize;

use super::UserId;
use super::fault::InjectedError;
use super::generation::{FailureCode, Plan};

/// A rule from `POST /_mock/outcomes`: the next `count` matching tasks end this way.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForcedOutcome {
    /// Only tasks of this user (any user when absent).
    pub user_id: Option<UserId>,
    /// Only tasks of this model (any model when absent).
    pub model_slug: Option<String>,
    /// How the tasks end.
    pub outcome: OutcomeKind,
    /// The failure code, for `fail` (a provider error when absent).
    pub error_code: Option<FailureCode>,
    /// How many tasks the rule applies to (default 1).
    #[serde(default = "one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

/// How a forced task ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// `SUCCEEDED`.
    Succeed,
    /// `FAILED`.
    Fail,
}

impl ForcedOutcome {
    /// The plan this rule gives; a failure without a code is a provider error.
    pub fn plan(&self) -> Plan {
        match self.outcome {
            OutcomeKind::Succeed => Plan::Succeed,
            OutcomeKind::Fail => {
                Plan::Fail(self.error_code.unwrap_or(FailureCode::ProviderInternal))
            }
        }
    }

    fn matches(&self, user_id: UserId, model_slug: &str) -> bool {
        self.user_id.is_none_or(|u| u == user_id)
            && self.model_slug.as_deref().is_none_or(|m| m == model_slug)
    }
}

/// Forced outcomes waiting for their tasks, first come first served.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Outcomes {
    queue: Vec<ForcedOutcome>,
}

impl Outcomes {
    pub fn push(&mut self, rule: ForcedOutcome) {
        if rule.count > 0 {
            self.queue.push(rule);
        }
    }

    /// Takes one use of the first rule matching a new task.
    pub fn take(&mut self, user_id: UserId, model_slug: &str) -> Option<Plan> {
        let index = self
            .queue
            .iter()
            .position(|r| r.matches(user_id, model_slug))?;
        let rule = &mut self.queue[index];
        let plan = rule.plan();
        rule.count -= 1;
        if rule.count == 0 {
            self.queue.remove(index);
        }
        Some(plan)
    }
}

/// Directives a person can type into a prompt, for terminal demos and for
/// clients that cannot reach the control API:
///
/// - `mock:fail=<errorCode>` ends the task with that failure code;
/// - `mock:succeed` ends it well (overriding a forced outcome);
/// - `mock:delay=<seconds>` makes each worker attempt take that long;
/// - `mock:http=<status>:<CODE>` answers the create with that error instead
///   of creating anything (`mock:http=503`, `mock:http=502:PAYMENT_ERROR`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MagicPrompt {
    pub plan: Option<Plan>,
    pub delay_secs: Option<f64>,
    pub http: Option<InjectedError>,
}

impl MagicPrompt {
    pub fn parse(prompt: &str) -> Self {
        let mut magic = Self::default();
        for word in prompt.split_whitespace() {
            let Some(directive) = word.strip_prefix("mock:") else {
                continue;
            };
            let (name, value) = directive.split_once('=').unwrap_or((directive, ""));
            match name {
                "fail" => {
                    magic.plan = Some(Plan::Fail(
                        FailureCode::parse(value).unwrap_or(FailureCode::ProviderInternal),
                    ));
                }
                "succeed" => magic.plan = Some(Plan::Succeed),
                "http" => {
                    let (status, code) = value.split_once(':').unwrap_or((value, ""));
                    // A directive that cannot be an error answer is just a word.
                    magic.http = status.parse::<u16>().ok().and_then(|status| {
                        InjectedError::new(Some(status), Some(code).filter(|c| !c.is_empty()), None)
                            .ok()
                    });
                }
                "delay" => {
                    magic.delay_secs = value
                        .parse::<f64>()
                        .ok()
                        .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 86_400.0);
                }
                _ => {}
            }
        }
        magic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(user: Option<UserId>, model: Option<&str>, count: u32) -> ForcedOutcome {
        ForcedOutcome {
            user_id: user,
            model_slug: model.map(str::to_owned),
            outcome: OutcomeKind::Fail,
            error_code: Some(FailureCode::ContentPolicy),
            count,
        }
    }

    #[test]
    fn a_rule_applies_to_the_next_count_matching_tasks_only() {
        let mut outcomes = Outcomes::default();
        let user = UserId::new_v4();
        outcomes.push(rule(Some(user), Some("a"), 2));
        assert_eq!(outcomes.take(UserId::new_v4(), "a"), None);
        assert_eq!(outcomes.take(user, "b"), None);
        assert_eq!(
            outcomes.take(user, "a"),
            Some(Plan::Fail(FailureCode::ContentPolicy))
        );
        assert_eq!(
            outcomes.take(user, "a"),
            Some(Plan::Fail(FailureCode::ContentPolicy))
        );
        assert_eq!(outcomes.take(user, "a"), None);
    }

    #[test]
    fn magic_prompt_directives_are_read_anywhere_in_the_prompt() {
        let magic =
            MagicPrompt::parse("a lighthouse mock:fail=content_policy at dusk mock:delay=2.5");
        assert_eq!(magic.plan, Some(Plan::Fail(FailureCode::ContentPolicy)));
        assert_eq!(magic.delay_secs, Some(2.5));
        assert_eq!(MagicPrompt::parse("a lighthouse"), MagicPrompt::default());
        assert_eq!(
            MagicPrompt::parse("mock:delay=-1 mock:delay=NaN").delay_secs,
            None
        );
    }

    #[test]
    fn an_http_directive_names_a_status_and_optionally_a_code() {
        let both = MagicPrompt::parse("x mock:http=502:PAYMENT_ERROR")
            .http
            .expect("an error");
        assert_eq!((both.status, both.code.as_str()), (502, "PAYMENT_ERROR"));
        let status = MagicPrompt::parse("mock:http=503").http.expect("an error");
        assert_eq!(status.code, "SERVICE_UNAVAILABLE");
        for not_an_error in [
            "mock:http=200",
            "mock:http=abc",
            "mock:http=500:lower",
            "mock:http=",
        ] {
            assert_eq!(
                MagicPrompt::parse(not_an_error).http,
                None,
                "{not_an_error}"
            );
        }
    }
}
