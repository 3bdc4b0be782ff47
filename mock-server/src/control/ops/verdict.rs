//! `get_verdict`, `reset_verdict` and `probe_webhooks`: the verdict on a
//! world's client and the probes of its webhook receiver.

use crate::contract::FieldError;
use crate::delivery::probe::{self, ProbeReport};
use crate::error::ControlError;
use crate::events::EventKind;
use crate::state::AppState;
use crate::verdict::{Strict, UnknownRule, Verdict, known_ids};

/// A rule id no rule has, in a `strict` list: 400, with the known ids.
impl From<UnknownRule> for ControlError {
    fn from(unknown: UnknownRule) -> Self {
        Self::Invalid {
            message: unknown.to_string(),
            fields: vec![FieldError::new(
                "/query/strict",
                "enum",
                unknown.to_string(),
                serde_json::json!({ "allowedValues": known_ids().collect::<Vec<_>>() }),
            )],
        }
    }
}

/// The verdict on the world's client so far, failing on violations and the
/// rules `strict` chooses.
pub(crate) fn get_verdict(state: &AppState, strict: &Strict) -> Verdict {
    state.ledger().judge.verdict(strict)
}

/// Starts the verdict over, and tells the journal's readers.
pub(crate) fn reset_verdict(state: &AppState) {
    // Under the ledger's lock, so that no finding made before the reset is
    // told after it.
    let mut ledger = state.ledger();
    ledger.judge.reset();
    state
        .events()
        .publish(state.now(), EventKind::VerdictReset {});
}

/// Sends the three probes to the endpoint and waits for their answers.
pub(crate) async fn probe_webhooks(
    state: &AppState,
    endpoint_id: &str,
) -> Result<ProbeReport, ControlError> {
    probe::probe_webhooks(state, endpoint_id)
        .await
        .ok_or_else(|| ControlError::NotFound(format!("Webhook endpoint {endpoint_id} not found")))
}
