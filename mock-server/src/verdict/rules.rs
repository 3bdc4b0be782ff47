//! The rules a client is judged by: their ids (tests and users match on them),
//! how grave a breach is, the rule of the service document each rests on, and
//! what a correct client does instead.

use serde::{Deserialize, Serialize};

/// How grave a finding is: a violation spoils the verdict, advice does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The client breaks a rule of the document: it may pay twice, be limited,
    /// or take forged events as real.
    Violation,
    /// The client works, but not as the document recommends.
    Advice,
}

/// One rule of the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Rule {
    CreateRetryNewKey,
    CreateWithoutKey,
    RetryBeforeRetryAfter,
    RetryWithoutBackoff,
    TooManyAttempts,
    ConcurrencyRetryLoop,
    RepeatFinalError,
    UnsafeRepeat,
    ReadAfterFinal,
    PollRate,
    PollRateLimited,
    ReceiverFailed,
    ReceiverSlow,
    ReceiverAcceptsBadSignature,
    ReceiverAcceptsStaleTimestamp,
    ReceiverRefusesDuplicate,
}

impl Rule {
    /// Every rule, in the order the documentation lists them.
    pub(crate) const ALL: [Self; 16] = [
        Self::CreateRetryNewKey,
        Self::CreateWithoutKey,
        Self::RetryBeforeRetryAfter,
        Self::RetryWithoutBackoff,
        Self::TooManyAttempts,
        Self::ConcurrencyRetryLoop,
        Self::RepeatFinalError,
        Self::UnsafeRepeat,
        Self::ReadAfterFinal,
        Self::PollRate,
        Self::PollRateLimited,
        Self::ReceiverFailed,
        Self::ReceiverSlow,
        Self::ReceiverAcceptsBadSignature,
        Self::ReceiverAcceptsStaleTimestamp,
        Self::ReceiverRefusesDuplicate,
    ];

    /// The rule's id.
    pub(crate) fn id(self) -> &'static str {
        match self {
            Self::CreateRetryNewKey => "create-retry-new-key",
            Self::CreateWithoutKey => "create-without-key",
            Self::RetryBeforeRetryAfter => "retry-before-retry-after",
            Self::RetryWithoutBackoff => "retry-without-backoff",
            Self::TooManyAttempts => "too-many-attempts",
            Self::ConcurrencyRetryLoop => "concurrency-retry-loop",
            Self::RepeatFinalError => "repeat-final-error",
            Self::UnsafeRepeat => "unsafe-repeat",
            Self::ReadAfterFinal => "read-after-final",
            Self::PollRate => "poll-rate",
            Self::PollRateLimited => "poll-rate-limited",
            Self::ReceiverFailed => "receiver-failed",
            Self::ReceiverSlow => "receiver-slow",
            Self::ReceiverAcceptsBadSignature => "receiver-accepts-bad-signature",
            Self::ReceiverAcceptsStaleTimestamp => "receiver-accepts-stale-timestamp",
            Self::ReceiverRefusesDuplicate => "receiver-refuses-duplicate",
        }
    }

    pub(crate) fn severity(self) -> Severity {
        match self {
            Self::CreateWithoutKey | Self::ReadAfterFinal | Self::PollRate | Self::ReceiverSlow => {
                Severity::Advice
            }
            _ => Severity::Violation,
        }
    }

    /// The rule of the service document the finding rests on.
    pub(crate) fn document_rule(self) -> &'static str {
        match self {
            Self::CreateRetryNewKey => {
                "Generations, POST /v1/generations, rule 7; Errors, Client handling 2"
            }
            Self::CreateWithoutKey => "Generations, POST /v1/generations, headers and rule 7",
            Self::RetryBeforeRetryAfter => "Limits, rule 3; Errors, codes, RATE_LIMIT_ERROR",
            Self::RetryWithoutBackoff => "Errors, Client handling 2; Limits, rule 5",
            Self::TooManyAttempts => "Limits, rule 5 (stop after 5 attempts)",
            Self::ConcurrencyRetryLoop => {
                "Generations, POST /v1/generations, rule 5; Limits, rule 4"
            }
            Self::RepeatFinalError => "Errors, Client handling 3 and 4; Errors, HTTP statuses",
            Self::UnsafeRepeat => {
                "Errors, HTTP statuses (500, 502, 503) and Client handling; Endpoints: only POST /v1/generations takes an Idempotency-Key"
            }
            Self::ReadAfterFinal => "States and transitions, Generation",
            Self::PollRate => "Limits, general request rate and rule 1",
            Self::PollRateLimited => "Limits, general request rate, rules 1 and 3",
            Self::ReceiverFailed => "Events, Delivery and retries, rule 1",
            Self::ReceiverSlow => "Events, Signature, rule 4",
            Self::ReceiverAcceptsBadSignature => "Events, Signature, rules 1 and 2",
            Self::ReceiverAcceptsStaleTimestamp => "Events, Signature, rule 3",
            Self::ReceiverRefusesDuplicate => "Events, Signature, rule 4",
        }
    }

    /// What a correct client does instead.
    pub(crate) fn advice(self) -> &'static str {
        match self {
            Self::CreateRetryNewKey => "retry a create with the same Idempotency-Key",
            Self::CreateWithoutKey => {
                "send an Idempotency-Key with every create, so that a retry cannot charge twice"
            }
            Self::RetryBeforeRetryAfter => {
                "wait the seconds of retry-after before any request in the limit's scope"
            }
            Self::RetryWithoutBackoff => {
                "retry with exponential delay and jitter: waits drawn up to 1, 2, 4, 8 s, or longer"
            }
            Self::TooManyAttempts => {
                "stop after 5 attempts of one request and report the failure with its requestId"
            }
            Self::ConcurrencyRetryLoop => {
                "after the 429 of 5 active tasks, create again once one of them has ended, or back off between tries"
            }
            Self::RepeatFinalError => {
                "change the request (fix the parameters, choose another model, top up) before sending it again"
            }
            Self::UnsafeRepeat => {
                "read the resource to see whether the request took effect before sending it again"
            }
            Self::ReadAfterFinal => "stop reading a generation once it is SUCCEEDED or FAILED",
            Self::PollRate => {
                "poll each active generation at most once every n seconds for n active tasks, or use webhooks"
            }
            Self::PollRateLimited => {
                "poll each active generation at most once every n seconds for n active tasks, or use webhooks, so that the other calls of the address keep their share of 60 a minute"
            }
            Self::ReceiverFailed => {
                "answer a correctly signed delivery 2xx within 10 seconds (410 to unsubscribe)"
            }
            Self::ReceiverSlow => "answer 2xx at once and do the work after answering",
            Self::ReceiverAcceptsBadSignature => {
                "verify webhook-signature over '<webhook-id>.<webhook-timestamp>.<raw body>' and refuse a mismatch"
            }
            Self::ReceiverAcceptsStaleTimestamp => {
                "refuse a webhook-timestamp more than 5 minutes from the receiver's clock"
            }
            Self::ReceiverRefusesDuplicate => {
                "answer 2xx to a repeated webhook-id and skip its work"
            }
        }
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// The findings that fail a run beside every violation: advice rules an
/// integrator chose (`GET /_mock/verdict?strict=poll-rate,read-after-final`,
/// pytest's `mediagen_mock_verdict = strict:poll-rate`, `judge --strict=…`).
///
/// ```
/// use mediagen_mock_server::Strict;
///
/// let strict = Strict::parse("poll-rate, read-after-final").unwrap();
/// assert!(strict.chooses("poll-rate"));
/// assert!(!strict.chooses("create-without-key"));
/// assert!(Strict::parse("pol-rate").unwrap_err().to_string().contains("poll-rate"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strict {
    chosen: Vec<Rule>,
}

/// A rule id that no rule has, in a [`Strict`] list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no verdict rule is named {id:?}; the rules are: {}", known_ids().collect::<Vec<_>>().join(", "))]
pub struct UnknownRule {
    /// The id as given.
    pub id: String,
}

/// Old ids that still choose a rule, for one release: more than 5 attempts
/// was reported as `retry-without-backoff` until `too-many-attempts` was its own.
const ALIASES: [(&str, Rule); 1] = [("retry-without-backoff", Rule::TooManyAttempts)];

/// Every rule id, in the order the documentation lists them.
pub fn known_ids() -> impl Iterator<Item = &'static str> {
    Rule::ALL.iter().map(|rule| rule.id())
}

impl Strict {
    /// Violations only: what `strict` alone means.
    pub fn violations() -> Self {
        Self::default()
    }

    /// Violations and the rules listed, by id, separated by commas (spaces
    /// around them are ignored, an empty list chooses none).
    pub fn parse(list: &str) -> Result<Self, UnknownRule> {
        Self::of(list.split(',').map(str::trim).filter(|id| !id.is_empty()))
    }

    /// Violations and the rules named.
    pub fn of<'a>(ids: impl IntoIterator<Item = &'a str>) -> Result<Self, UnknownRule> {
        let mut chosen = Vec::new();
        for id in ids {
            let rules = Rule::ALL
                .iter()
                .copied()
                .filter(|rule| rule.id() == id)
                .chain(
                    ALIASES
                        .iter()
                        .filter(|(old, _)| *old == id)
                        .map(|(_, r)| *r),
                )
                .collect::<Vec<_>>();
            if rules.is_empty() {
                return Err(UnknownRule { id: id.to_owned() });
            }
            chosen.extend(rules);
        }
        Ok(Self { chosen })
    }

    /// Whether a finding of the rule `id` fails the run.
    pub fn chooses(&self, id: &str) -> bool {
        self.chosen.iter().any(|rule| rule.id() == id)
    }

    /// Whether a finding fails the run: a violation, or a chosen rule's.
    pub(crate) fn fails(&self, rule: &str, severity: Severity) -> bool {
        severity == Severity::Violation || self.chooses(rule)
    }
}
