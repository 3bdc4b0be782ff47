//! Signed webhook delivery: one task per attempt, so one slow or dead receiver
//! never delays the others; retries are scheduled on the mock's clock, while
//! the receiver's time to answer and its `retry-after` are real seconds, as
//! the receiver lives them.

pub mod lanes;
pub(crate) mod probe;
pub mod resolve;

use std::time::{Duration, Instant};

use chrono::Utc;
use uuid::Uuid;

use crate::contract::shape;
use crate::domain::address;
use crate::domain::webhook::Trigger;
use crate::state::AppState;
use crate::store::{AttemptReport, Outgoing};
use crate::verdict::{DeliverySeen, Endpoint};
use lanes::client_builder;

/// Bytes of an answer read at most; the rest is not needed for the excerpt.
const READ_LIMIT: usize = 64 * 1024;

/// Starts one attempt of `message_id` in its own task.
pub fn spawn_attempt(state: &AppState, message_id: Uuid, trigger: Trigger) {
    state.deliverer().begin();
    let state = state.clone();
    tokio::spawn(async move {
        attempt(&state, message_id, trigger).await;
        state.deliverer().end();
    });
}

async fn attempt(state: &AppState, message_id: Uuid, trigger: Trigger) {
    let Some(endpoint_id) = state
        .store()
        .message(message_id)
        .map(|m| m.endpoint_id.clone())
    else {
        return;
    };
    let lane = state.deliverer().lane(&endpoint_id);
    let Ok(_permit) = lane.acquire().await else {
        return;
    };
    let Some(outgoing) = state.store().outgoing(message_id, trigger) else {
        return;
    };
    let host = state.deliverer().host_lane(&outgoing.url);
    let Ok(_host_permit) = host.acquire().await else {
        return;
    };
    // The attempt, and its time to answer, start once it may send.
    let started_at = state.now();
    let clock_started = Instant::now();
    let report = send(state, message_id, &outgoing).await;
    let duration_ms = u64::try_from(clock_started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let judged = DeliverySeen {
        message_id: message_id.to_string(),
        endpoint: Endpoint {
            id: outgoing.endpoint_id.clone(),
            url: outgoing.url.clone(),
        },
        at: started_at,
        status: report.status,
        timed_out: timed_out(&report),
        duration_ms,
        probe: None,
    };
    let wake = {
        let mut store = state.store();
        store.record_attempt(message_id, trigger, started_at, duration_ms, report);
        store.worker_wake_needed()
    };
    if wake {
        state.worker_notify().notify_one();
    }
    crate::judged::delivery(state, &judged);
}

/// The error of an attempt the receiver did not answer in time.
const NO_ANSWER: &str = "no answer within";

/// Whether the receiver took the connection but did not answer in time.
pub(crate) fn timed_out(report: &AttemptReport) -> bool {
    report
        .error
        .as_deref()
        .is_some_and(|e| e.starts_with(NO_ANSWER))
}

fn failed(error: String) -> AttemptReport {
    AttemptReport {
        status: None,
        retry_after_secs: None,
        error: Some(error),
        body: Vec::new(),
    }
}

async fn send(state: &AppState, message_id: Uuid, outgoing: &Outgoing) -> AttemptReport {
    let Some(signer) = state
        .deliverer()
        .signer(&outgoing.endpoint_id, &outgoing.secret)
    else {
        return failed("the endpoint's secret cannot sign".into());
    };
    // Receivers check the timestamp against their own clock, so it is wall-clock
    // time even when the mock's clock is manual or scaled.
    let timestamp = Utc::now().timestamp();
    let id = message_id.to_string();
    let Ok(signature) = signer.sign(&id, timestamp, &outgoing.payload) else {
        return failed("signing failed".into());
    };
    post(state, outgoing, &id, timestamp, signature).await
}

/// POSTs `outgoing` with the `webhook-*` headers given, and waits for the
/// answer within the delivery time-out.
pub(crate) async fn post(
    state: &AppState,
    outgoing: &Outgoing,
    id: &str,
    timestamp: i64,
    signature: String,
) -> AttemptReport {
    // The address is checked again at delivery: a name may have come to
    // resolve to a private address since the endpoint was created.
    let deliverer = state.deliverer();
    let allow_private = state.config().allow_private_webhooks;
    let (url, pinned) =
        match address::check_webhook_url(&outgoing.url, deliverer.resolver.as_ref(), allow_private)
            .await
        {
            Ok(checked) => checked,
            Err(refused) => return failed(format!("address refused: {refused}")),
        };
    let client = match pinned {
        // Connect to the address that was checked, not to a fresh lookup.
        Some((host, addr)) => match client_builder().resolve(&host, addr).build() {
            Ok(client) => client,
            Err(err) => return failed(format!("client: {err}")),
        },
        None => match deliverer.client() {
            Ok(client) => client.clone(),
            Err(err) => return failed(format!("client: {err}")),
        },
    };
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header(webhook_verify::HEADER_WEBHOOK_ID, id)
        .header(
            webhook_verify::HEADER_WEBHOOK_TIMESTAMP,
            timestamp.to_string(),
        )
        .header(webhook_verify::HEADER_WEBHOOK_SIGNATURE, signature)
        .body(outgoing.payload.clone());
    if outgoing.extra_header {
        request = request.header(shape::EXTRA_HEADER, shape::EXTRA_HEADER_VALUE);
    }
    let exchange = async {
        let mut response = request.send().await?;
        let status = response.status().as_u16();
        // The receiver counts in real seconds; the schedule runs on the mock's clock.
        let retry_after_secs = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|real| (real as f64 * state.clock().edge_scale()).ceil() as u64);
        let mut body = Vec::new();
        while body.len() < READ_LIMIT {
            match response.chunk().await? {
                Some(chunk) => body.extend_from_slice(&chunk),
                None => break,
            }
        }
        Ok::<_, reqwest::Error>(AttemptReport {
            status: Some(status),
            retry_after_secs,
            error: None,
            body,
        })
    };
    // The time to answer is real: a receiver answering in 1.5 s answers in
    // time whatever the mock's clock does.
    let limit = state.config().delivery_timeout_seconds;
    match tokio::time::timeout(Duration::from_secs_f64(limit), exchange).await {
        Ok(answer) => answer.unwrap_or_else(|err| failed(transport_error(&err))),
        Err(_) => failed(format!("{NO_ANSWER} {limit} s")),
    }
}

fn transport_error(err: &reqwest::Error) -> String {
    if err.is_connect() {
        "connection failed".into()
    } else if err.is_timeout() {
        "timed out".into()
    } else {
        // The chain names the cause (reset, closed) without the URL twice.
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            text = format!("{text}: {cause}");
            source = cause.source();
        }
        text
    }
}
