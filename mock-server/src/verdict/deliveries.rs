//! The receiver's side: how it answered the world's deliveries and the probes
//! (`POST /_mock/probes/webhooks`).

use chrono::{DateTime, Utc};

use super::Endpoint;
use super::findings::{Findings, Made, Places, Subject};
use super::rules::Rule;

/// A receiver's answer slower than this, though 2xx, earns advice (the
/// document: "answers 2xx quickly").
pub(crate) const SLOW_MS: u64 = 2000;

/// A delivery the receiver cannot be trusted to take: each probe tests one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Signed with another key.
    BadSignature,
    /// Correctly signed, with a `webhook-timestamp` 10 minutes old.
    StaleTimestamp,
    /// An acknowledged message again: same `webhook-id`, fresh timestamp and signature.
    Duplicate,
}

impl Probe {
    /// The probes, in the order they are listed.
    pub(crate) const ALL: [Self; 3] = [Self::BadSignature, Self::StaleTimestamp, Self::Duplicate];

    /// The probe's name in the control API.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::BadSignature => "bad_signature",
            Self::StaleTimestamp => "stale_timestamp",
            Self::Duplicate => "duplicate",
        }
    }
}

/// One delivery attempt as the receiver answered it.
#[derive(Debug, Clone)]
pub(crate) struct DeliverySeen {
    /// The `webhook-id`.
    pub message_id: String,
    /// The endpoint it went to.
    pub endpoint: Endpoint,
    /// When it started, on the world's clock.
    pub at: DateTime<Utc>,
    /// The receiver's status; `None` when no answer came.
    pub status: Option<u16>,
    /// No answer within the delivery time-out (10 s), the connection open.
    pub timed_out: bool,
    /// Real milliseconds to the answer.
    pub duration_ms: u64,
    /// `None` for a delivery of the world's own messages.
    pub probe: Option<Probe>,
}

pub(super) fn judge(seen: &DeliverySeen, findings: &mut Findings) -> Places {
    let ok = seen.status.is_some_and(|s| (200..300).contains(&s));
    let refused = seen.status.is_some_and(|s| s >= 400);
    let answer = match seen.status {
        Some(status) => format!("answered {status}"),
        None if seen.timed_out => "not answered within 10 s".to_owned(),
        None => "not answered".to_owned(),
    };
    let verdict = match seen.probe {
        None if seen.timed_out || refused && seen.status != Some(410) => Some((
            Rule::ReceiverFailed,
            format!(
                "a correctly signed delivery of message {} was {answer}: the service counts a failure and retries it",
                seen.message_id
            ),
        )),
        None if ok && seen.duration_ms > SLOW_MS => Some((
            Rule::ReceiverSlow,
            format!(
                "a delivery of message {} was answered {} after {:.1} s, more than {} s",
                seen.message_id,
                seen.status.unwrap_or_default(),
                seen.duration_ms as f64 / 1000.0,
                SLOW_MS / 1000
            ),
        )),
        Some(Probe::BadSignature) if ok => Some((
            Rule::ReceiverAcceptsBadSignature,
            format!(
                "a delivery with a wrong webhook-signature was {answer}: a forged event would be taken as real"
            ),
        )),
        Some(Probe::StaleTimestamp) if ok => Some((
            Rule::ReceiverAcceptsStaleTimestamp,
            format!(
                "a correctly signed delivery whose webhook-timestamp was 10 minutes old was {answer}: a replayed event would be taken as new"
            ),
        )),
        Some(Probe::Duplicate) if refused => Some((
            Rule::ReceiverRefusesDuplicate,
            format!(
                "a repeat of acknowledged message {} (same webhook-id, fresh signature) was {answer}: the service would retry it as failed",
                seen.message_id
            ),
        )),
        _ => None,
    };
    verdict
        .map(|(rule, message)| {
            findings.make(Made {
                rule,
                subject: Subject::Text(format!("endpoint {}", seen.endpoint.id)),
                at: seen.at,
                ids: &[seen.message_id.as_str()],
                endpoint: Some(&seen.endpoint),
                message: &|| message.clone(),
            })
        })
        .into_iter()
        .collect()
}
