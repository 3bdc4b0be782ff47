//! Signed webhook delivery: one task per attempt, so one slow or dead receiver
//! never delays the others; retries are scheduled on the mock's clock.

pub mod payload;
pub mod resolve;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, Semaphore};
use uuid::Uuid;
use webhook_verify::Webhook;

use crate::domain::address;
use crate::domain::webhook::{
    self, Attempt, AttemptOutcome, DELIVERY_TIMEOUT_SECS, MAX_RETRIES, MessageState, Trigger,
};
use crate::state::{AppState, seconds};
use resolve::{OverrideResolver, SystemResolver};

/// Bytes of an answer read at most; the rest is not needed for the excerpt.
const READ_LIMIT: usize = 64 * 1024;
/// Attempts under way at once per endpoint. A burst then reuses a few kept-alive
/// connections instead of opening one per message, and a slow endpoint only
/// queues its own messages.
const PER_ENDPOINT: usize = 16;
/// Attempts under way at once per destination (scheme, host and port), across its
/// endpoints. Thousands of endpoints on one receiver would otherwise each open
/// connections at once, and the connection pool's bookkeeping grows with the
/// square of the requests waiting on one host.
const PER_HOST: usize = 64;

/// The HTTP side of delivery, shared by every attempt.
#[derive(Debug)]
pub struct Deliverer {
    client: reqwest::Client,
    /// Host names the control API pinned to addresses, over the system resolver.
    pub resolver: Arc<OverrideResolver>,
    in_flight: AtomicUsize,
    idle: Notify,
    lanes: Mutex<HashMap<String, Arc<Semaphore>>>,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Default for Deliverer {
    fn default() -> Self {
        Self::new()
    }
}

impl Deliverer {
    pub fn new() -> Self {
        Self {
            client: client_builder()
                .user_agent(concat!(
                    "mediagen-mock-webhooks/",
                    env!("CARGO_PKG_VERSION")
                ))
                .build()
                .unwrap_or_default(),
            resolver: Arc::new(OverrideResolver::new(Arc::new(SystemResolver))),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            lanes: Mutex::new(HashMap::new()),
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// The semaphore that bounds the attempts under way for one endpoint.
    fn lane(&self, endpoint_id: &str) -> Arc<Semaphore> {
        semaphore(&self.lanes, endpoint_id, PER_ENDPOINT)
    }

    /// The semaphore that bounds the attempts under way to one destination.
    fn host_lane(&self, url: &str) -> Arc<Semaphore> {
        let origin = reqwest::Url::parse(url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        semaphore(&self.hosts, &origin, PER_HOST)
    }

    /// Waits until no attempt is running. Attempts due on the clock start
    /// before `advance` returns, so this settles everything an advance caused.
    pub async fn settled(&self) {
        loop {
            let idle = self.idle.notified();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

fn semaphore(
    map: &Mutex<HashMap<String, Arc<Semaphore>>>,
    key: &str,
    permits: usize,
) -> Arc<Semaphore> {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(key.to_owned())
        .or_insert_with(|| Arc::new(Semaphore::new(permits)))
        .clone()
}

/// Every delivery client: no redirects, since following one would reach an
/// address that was never checked, and no proxy.
fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .pool_max_idle_per_host(PER_HOST)
}

/// Starts one attempt of `message_id` in its own task.
pub fn spawn_attempt(state: &AppState, message_id: Uuid, trigger: Trigger) {
    let deliverer = state.deliverer();
    deliverer.in_flight.fetch_add(1, Ordering::SeqCst);
    let state = state.clone();
    tokio::spawn(async move {
        attempt(&state, message_id, trigger).await;
        let deliverer = state.deliverer();
        if deliverer.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            deliverer.idle.notify_waiters();
        }
    });
}

/// What an attempt needs, copied out of the store so no lock is held while sending.
struct Outgoing {
    url: String,
    secret: String,
    payload: Vec<u8>,
}

/// What came back.
struct Answer {
    status: Option<u16>,
    retry_after_secs: Option<u64>,
    error: Option<String>,
    body: Vec<u8>,
}

async fn attempt(state: &AppState, message_id: Uuid, trigger: Trigger) {
    let Some(endpoint_id) = state
        .store()
        .messages
        .get(&message_id)
        .map(|m| m.endpoint_id.clone())
    else {
        return;
    };
    let lane = state.deliverer().lane(&endpoint_id);
    let Ok(_permit) = lane.acquire().await else {
        return;
    };
    let outgoing = {
        let mut store = state.store();
        let Some(message) = store.messages.get(&message_id) else {
            return;
        };
        let endpoint_id = message.endpoint_id.clone();
        let payload = message.payload.clone();
        let pending = message.state == MessageState::Pending;
        match store.endpoints.get(&endpoint_id) {
            // A scheduled retry of a message delivered meanwhile (by a manual
            // redelivery) or dropped has nothing left to do.
            Some(endpoint) if endpoint.active && (pending || trigger == Trigger::Manual) => {
                Outgoing {
                    url: endpoint.url.clone(),
                    secret: endpoint.secret.clone(),
                    payload,
                }
            }
            _ => {
                if let Some(message) = store.messages.get_mut(&message_id)
                    && message.state == MessageState::Pending
                {
                    message.state = MessageState::Dropped;
                }
                return;
            }
        }
    };
    let host = state.deliverer().host_lane(&outgoing.url);
    let Ok(_host_permit) = host.acquire().await else {
        return;
    };
    // The clock of the attempt, and its 10 seconds, start once it may send.
    let started_at = state.now();
    let clock_started = Instant::now();
    let answer = send(state, message_id, &outgoing, started_at).await;
    let duration_ms = u64::try_from(clock_started.elapsed().as_millis()).unwrap_or(u64::MAX);
    finish(state, message_id, trigger, started_at, duration_ms, answer);
}

async fn send(
    state: &AppState,
    message_id: Uuid,
    outgoing: &Outgoing,
    started_at: DateTime<Utc>,
) -> Answer {
    let failed = |error: String| Answer {
        status: None,
        retry_after_secs: None,
        error: Some(error),
        body: Vec::new(),
    };
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
    let Ok(signer) = Webhook::new(&outgoing.secret) else {
        return failed("the endpoint's secret cannot sign".into());
    };
    // Receivers check the timestamp against their own clock, so it is wall-clock
    // time even when the mock's clock is manual or scaled.
    let timestamp = Utc::now().timestamp();
    let id = message_id.to_string();
    let Ok(signature) = signer.sign(&id, timestamp, &outgoing.payload) else {
        return failed("signing failed".into());
    };
    let client = match pinned {
        // Connect to the address that was checked, not to a fresh lookup.
        Some((host, addr)) => match client_builder().resolve(&host, addr).build() {
            Ok(client) => client,
            Err(err) => return failed(format!("client: {err}")),
        },
        None => deliverer.client.clone(),
    };
    let request = client
        .post(url)
        .header("content-type", "application/json")
        .header(webhook_verify::HEADER_WEBHOOK_ID, &id)
        .header(
            webhook_verify::HEADER_WEBHOOK_TIMESTAMP,
            timestamp.to_string(),
        )
        .header(webhook_verify::HEADER_WEBHOOK_SIGNATURE, signature)
        .body(outgoing.payload.clone());
    let exchange = async {
        let mut response = request.send().await?;
        let status = response.status().as_u16();
        let retry_after_secs = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let mut body = Vec::new();
        while body.len() < READ_LIMIT {
            match response.chunk().await? {
                Some(chunk) => body.extend_from_slice(&chunk),
                None => break,
            }
        }
        Ok::<_, reqwest::Error>(Answer {
            status: Some(status),
            retry_after_secs,
            error: None,
            body,
        })
    };
    // The 10-second limit runs on the mock's clock, so a test can make a
    // receiver time out by advancing it.
    let deadline = started_at + seconds(DELIVERY_TIMEOUT_SECS);
    tokio::select! {
        answer = exchange => answer.unwrap_or_else(|err| failed(transport_error(&err))),
        () = state.clock().sleep_until(deadline) => failed(format!("no answer within {DELIVERY_TIMEOUT_SECS} s")),
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

fn finish(
    state: &AppState,
    message_id: Uuid,
    trigger: Trigger,
    at: DateTime<Utc>,
    duration_ms: u64,
    answer: Answer,
) {
    let outcome = match answer.status {
        Some(status) => AttemptOutcome::from_status(status, answer.retry_after_secs),
        None => AttemptOutcome::Failed {
            retry_after_secs: None,
        },
    };
    let mut store = state.store();
    let Some(message) = store.messages.get(&message_id) else {
        return;
    };
    let endpoint_id = message.endpoint_id.clone();
    if let Some(endpoint) = store.endpoints.get_mut(&endpoint_id) {
        endpoint.record(&outcome, at);
    }
    let endpoint_active = store.endpoints.get(&endpoint_id).is_some_and(|e| e.active);
    let Some(message) = store.messages.get_mut(&message_id) else {
        return;
    };
    if trigger == Trigger::Scheduled {
        message.scheduled_attempts += 1;
    }
    let mut next_attempt_at = None;
    match &outcome {
        AttemptOutcome::Delivered => message.state = MessageState::Delivered,
        AttemptOutcome::Gone => message.state = MessageState::Dropped,
        AttemptOutcome::Failed { retry_after_secs } => {
            // Manual attempts stand apart: they neither use up nor schedule retries.
            if trigger == Trigger::Scheduled && message.state == MessageState::Pending {
                let retry = message.scheduled_attempts;
                if retry > MAX_RETRIES {
                    message.state = MessageState::Exhausted;
                } else if !endpoint_active {
                    message.state = MessageState::Dropped;
                } else {
                    let jitter = rand::random::<f64>() * 2.0 - 1.0;
                    let delay = webhook::honour_retry_after(
                        webhook::retry_delay(retry, jitter),
                        *retry_after_secs,
                    );
                    next_attempt_at = Some(at + delay);
                }
            }
        }
    }
    message.attempts.push(Attempt {
        id: format!("att_{}", &Uuid::new_v4().simple().to_string()[..24]),
        attempt: u32::try_from(message.attempts.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1),
        trigger,
        attempted_at: at,
        succeeded: outcome == AttemptOutcome::Delivered,
        response_status: answer.status,
        error: answer.error,
        duration_ms,
        response_excerpt: webhook::excerpt(&answer.body),
        next_attempt_at,
    });
    if let Some(due) = next_attempt_at {
        store.schedule_delivery(due, message_id);
        drop(store);
        state.worker_notify().notify_one();
    }
}
