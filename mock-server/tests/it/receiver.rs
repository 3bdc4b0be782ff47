//! A webhook receiver for the tests: axum on 127.0.0.1:0 that verifies every
//! delivery with webhook-verify, records it, and answers as a script says.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use webhook_verify::Webhook;

/// How the receiver answers one delivery.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    Status(u16),
    StatusRetryAfter(u16, u64),
    /// Never answers.
    Hang,
    /// Answers the status once [`Receiver::release`] lets it: a receiver as
    /// slow as the test decides.
    Held(u16),
    /// Answers the status after this long in real time: a receiver as slow
    /// as it is on the network, whatever the mock's clock does.
    After(u16, std::time::Duration),
}

#[derive(Debug, Clone)]
pub struct Received {
    pub id: String,
    pub timestamp: i64,
    pub body: Value,
    pub verified: bool,
    /// What the probe (if any) saw when the delivery arrived.
    pub probe: Option<Value>,
    /// The `x-mock-extra` header, which only the `extra` mode sends.
    pub extra_header: Option<String>,
    /// The `webhook-signature` header and the body as they came, to check
    /// against secrets other than the receiver's.
    pub signature: String,
    pub raw: Vec<u8>,
}

type Probe = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

struct Inner {
    secret: Option<String>,
    script: VecDeque<Answer>,
    received: Vec<Received>,
    probe: Option<Probe>,
    /// One permit per held answer let go.
    gate: Arc<tokio::sync::Semaphore>,
    /// Told of every arrival, for [`Receiver::wait_for`].
    arrivals: Arc<tokio::sync::Notify>,
}

#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Receiver {
    pub async fn start() -> Self {
        Self::start_on("127.0.0.1:0".parse().expect("an address")).await
    }

    /// A receiver on `addr`, such as the port of one that was down.
    pub async fn start_on(addr: std::net::SocketAddr) -> Self {
        let inner = Arc::new(Mutex::new(Inner {
            secret: None,
            script: VecDeque::new(),
            received: Vec::new(),
            probe: None,
            gate: Arc::new(tokio::sync::Semaphore::new(0)),
            arrivals: Arc::new(tokio::sync::Notify::new()),
        }));
        let app = axum::Router::new()
            .route("/hook", post(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .expect("bind receiver");
        let url = format!("http://{}/hook", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, inner }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("receiver lock")
    }

    /// The secret deliveries are verified with.
    pub fn set_secret(&self, secret: &str) {
        self.lock().secret = Some(secret.to_owned());
    }

    /// The next answers, in order; 204 once they run out.
    pub fn script(&self, answers: impl IntoIterator<Item = Answer>) {
        self.lock().script.extend(answers);
    }

    /// Called with each body as it arrives; its result is kept with the delivery.
    pub fn probe(&self, probe: impl Fn(&Value) -> Value + Send + Sync + 'static) {
        self.lock().probe = Some(Arc::new(probe));
    }

    /// Lets one held answer go.
    pub fn release(&self) {
        self.lock().gate.add_permits(1);
    }

    pub fn received(&self) -> Vec<Received> {
        self.lock().received.clone()
    }

    /// Waits until `count` deliveries have arrived, on any clock.
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        loop {
            let arrivals = self.lock().arrivals.clone();
            let notified = arrivals.notified();
            tokio::pin!(notified);
            // Registered before the count is read, so no arrival slips between.
            notified.as_mut().enable();
            let received = self.received();
            if received.len() >= count {
                return received;
            }
            notified.await;
        }
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = {
        let mut inner = inner.lock().expect("receiver lock");
        let verified = inner
            .secret
            .as_deref()
            .and_then(|s| Webhook::new(s).ok())
            .is_some_and(|wh| wh.verify(&body, &headers).is_ok());
        let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let probe = inner.probe.clone().map(|p| p(&json));
        inner.received.push(Received {
            id: header(&headers, "webhook-id"),
            timestamp: header(&headers, "webhook-timestamp").parse().unwrap_or(0),
            body: json,
            verified,
            probe,
            signature: header(&headers, "webhook-signature"),
            extra_header: headers
                .get("x-mock-extra")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            raw: body.to_vec(),
        });
        inner.arrivals.notify_waiters();
        inner.script.pop_front().unwrap_or(Answer::Status(204))
    };
    match answer {
        Answer::Status(code) => status(code).into_response(),
        Answer::StatusRetryAfter(code, secs) => (
            status(code),
            [("retry-after", secs.to_string())],
            "slow down",
        )
            .into_response(),
        Answer::Hang => std::future::pending().await,
        Answer::After(code, wait) => {
            tokio::time::sleep(wait).await;
            status(code).into_response()
        }
        Answer::Held(code) => {
            let gate = inner.lock().expect("receiver lock").gate.clone();
            gate.acquire().await.expect("the gate stays open").forget();
            status(code).into_response()
        }
    }
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}
