//! Receiver probes (`POST /_mock/probes/webhooks`): three deliveries a
//! receiver that verifies refuses or takes as it should, judged by the verdict.
//!
//! They are sent beside the endpoint's queue, not through it: a probe is no
//! message of the world, so it never counts towards the endpoint's failures,
//! never disables it and is not listed among its deliveries.

use std::time::Instant;

use chrono::Utc;
use serde::Serialize;
use uuid::Uuid;
use webhook_verify::Webhook;

use super::post;
use crate::domain::webhook;
use crate::state::AppState;
use crate::store::{AttemptReport, Outgoing};
use crate::verdict::{DeliverySeen, Endpoint, Probe};
use crate::wire::events;
use mediagen_openapi::sets::EventType;

/// How old the stale probe's `webhook-timestamp` is: twice the receiver's
/// 5 minutes of tolerance.
const STALE_SECS: i64 = 600;

/// What the probes of one endpoint showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProbeReport {
    /// The endpoint probed.
    pub endpoint_id: String,
    /// The `webhook-id` of the acknowledged message the duplicate repeats;
    /// `None` when the endpoint acknowledged none, not even the test-like
    /// message sent first.
    pub repeated_message_id: Option<String>,
    /// The three probes, in the order sent: `bad_signature`,
    /// `stale_timestamp`, `duplicate`.
    pub probes: Vec<ProbeOutcome>,
}

/// How the receiver answered one probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProbeOutcome {
    /// `bad_signature`, `stale_timestamp` or `duplicate`.
    pub probe: String,
    /// The `webhook-id` it carried.
    pub webhook_id: String,
    /// The receiver's status; `None` when no answer came (or the probe was
    /// not sent).
    pub status: Option<u16>,
    /// Why no answer came.
    pub error: Option<String>,
    /// Real milliseconds to the answer.
    pub duration_ms: u64,
    /// Whether the receiver did as a correct one does: refused the first two,
    /// took the duplicate.
    pub passed: bool,
}

/// What a probe sends, once the endpoint was read.
struct Target {
    outgoing: Outgoing,
    acknowledged: Option<(Uuid, bytes::Bytes)>,
}

fn target(state: &AppState, endpoint_id: &str) -> Option<Target> {
    let store = state.store();
    let endpoint = store.endpoint(endpoint_id)?;
    let acknowledged = store
        .messages_of(endpoint_id)
        .filter(|m| m.attempts.iter().any(|a| a.succeeded))
        .last()
        .map(|m| (m.id, m.payload.clone()));
    Some(Target {
        outgoing: Outgoing {
            url: endpoint.url.clone(),
            endpoint_id: endpoint.id.clone(),
            secret: endpoint.secret.clone(),
            payload: bytes::Bytes::new(),
            extra_header: store.responses() == crate::config::Responses::Extra,
        },
        acknowledged,
    })
}

/// A body of the kind a test delivery sends.
fn sample(state: &AppState) -> bytes::Bytes {
    let body = events::sample(
        EventType::GenerationCompleted,
        state.base_url(),
        &webhook::new_event_id(),
        state.now(),
    );
    events::body_bytes(&body, state.store().responses()).into()
}

/// Sends one delivery signed by `signer` at `timestamp`, and judges it.
async fn send(
    state: &AppState,
    outgoing: &Outgoing,
    id: Uuid,
    signer: &Webhook,
    timestamp: i64,
    probe: Option<Probe>,
) -> (AttemptReport, u64) {
    let at = state.now();
    let started = Instant::now();
    let id = id.to_string();
    let report = match signer.sign(&id, timestamp, &outgoing.payload) {
        Ok(signature) => post(state, outgoing, &id, timestamp, signature).await,
        Err(_) => super::failed("signing failed".into()),
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    crate::judged::delivery(
        state,
        &DeliverySeen {
            message_id: id,
            endpoint: Endpoint {
                id: outgoing.endpoint_id.clone(),
                url: outgoing.url.clone(),
            },
            at,
            status: report.status,
            timed_out: super::timed_out(&report),
            duration_ms,
            probe,
        },
    );
    (report, duration_ms)
}

fn outcome(probe: Probe, id: Uuid, (report, duration_ms): (AttemptReport, u64)) -> ProbeOutcome {
    let ok = report.status.is_some_and(|s| (200..300).contains(&s));
    let refused = report.status.is_some_and(|s| s >= 400);
    ProbeOutcome {
        probe: probe.name().to_owned(),
        webhook_id: id.to_string(),
        status: report.status,
        error: report.error,
        duration_ms,
        passed: match probe {
            Probe::BadSignature | Probe::StaleTimestamp => !ok,
            Probe::Duplicate => !refused,
        },
    }
}

/// Probes the endpoint `endpoint_id` of any user; `None` when there is none.
/// Answers once the three probes are answered or timed out.
pub(crate) async fn probe_webhooks(state: &AppState, endpoint_id: &str) -> Option<ProbeReport> {
    let Target {
        mut outgoing,
        mut acknowledged,
    } = target(state, endpoint_id)?;
    let Some(signer) = state
        .deliverer()
        .signer(&outgoing.endpoint_id, &outgoing.secret)
    else {
        let failed = |probe: Probe| ProbeOutcome {
            probe: probe.name().to_owned(),
            webhook_id: String::new(),
            status: None,
            error: Some("the endpoint's secret cannot sign".into()),
            duration_ms: 0,
            passed: true,
        };
        return Some(ProbeReport {
            endpoint_id: endpoint_id.to_owned(),
            repeated_message_id: None,
            probes: Probe::ALL.into_iter().map(failed).collect(),
        });
    };
    if acknowledged.is_none() {
        // A message to repeat: the kind a test delivery sends, judged as a
        // delivery of the world's own.
        outgoing.payload = sample(state);
        let id = Uuid::new_v4();
        let (report, _) = send(state, &outgoing, id, &signer, Utc::now().timestamp(), None).await;
        if report.status.is_some_and(|s| (200..300).contains(&s)) {
            acknowledged = Some((id, outgoing.payload.clone()));
        }
    }
    let forger = Webhook::new(&Webhook::generate_secret()).ok()?;
    let now = Utc::now().timestamp();
    let fresh = Outgoing {
        payload: sample(state),
        ..outgoing.clone()
    };
    let (bad_id, stale_id) = (Uuid::new_v4(), Uuid::new_v4());
    let bad = send(
        state,
        &fresh,
        bad_id,
        &forger,
        now,
        Some(Probe::BadSignature),
    );
    let stale = send(
        state,
        &fresh,
        stale_id,
        &signer,
        now - STALE_SECS,
        Some(Probe::StaleTimestamp),
    );
    let duplicate = async {
        let (id, payload) = acknowledged.clone()?;
        let repeat = Outgoing {
            payload,
            ..outgoing.clone()
        };
        let sent = send(state, &repeat, id, &signer, now, Some(Probe::Duplicate)).await;
        Some(outcome(Probe::Duplicate, id, sent))
    };
    let (bad, stale, duplicate) = futures::join!(bad, stale, duplicate);
    let mut probes = vec![
        outcome(Probe::BadSignature, bad_id, bad),
        outcome(Probe::StaleTimestamp, stale_id, stale),
    ];
    probes.push(duplicate.unwrap_or_else(|| ProbeOutcome {
        probe: Probe::Duplicate.name().to_owned(),
        webhook_id: String::new(),
        status: None,
        error: Some("not sent: the endpoint acknowledged no message to repeat".into()),
        duration_ms: 0,
        passed: true,
    }));
    Some(ProbeReport {
        endpoint_id: endpoint_id.to_owned(),
        repeated_message_id: acknowledged.map(|(id, _)| id.to_string()),
        probes,
    })
}
