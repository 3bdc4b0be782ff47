//! Signed webhook deliveries per second from the mock to a local receiver that
//! verifies every signature with webhook-verify.
//!
//! ```text
//! cargo bench -p mediagen-mock-server --bench delivery
//! MEDIAGEN_BENCH_MESSAGES=50000 MEDIAGEN_BENCH_ROUNDS=5 cargo bench -p mediagen-mock-server --bench delivery
//! ```
//!
//! Each round queues the messages at once (5 endpoints of one user) and times
//! until the receiver has verified all of them.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use mediagen_mock_server::Kopecks;
use mediagen_mock_server::{AppState, ClockMode, Config};
use serde_json::json;
use tokio::net::TcpListener;
use webhook_verify::Webhook;

#[derive(Clone)]
struct Receiver {
    verifiers: Arc<Vec<Webhook>>,
    verified: Arc<AtomicUsize>,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if receiver
        .verifiers
        .iter()
        .any(|wh| wh.verify(&body, &headers).is_ok())
    {
        receiver.verified.fetch_add(1, Ordering::Relaxed);
        StatusCode::NO_CONTENT
    } else {
        StatusCode::BAD_REQUEST
    }
}

fn main() {
    let messages = common::env_number("MEDIAGEN_BENCH_MESSAGES", 20_000);
    let rounds = common::env_number("MEDIAGEN_BENCH_ROUNDS", 3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let state = AppState::new(Config {
            clock: ClockMode::Real,
            rate_limits: false,
            allow_private_webhooks: true,
            ..Config::default()
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let mock_addr: SocketAddr = listener.local_addr().expect("address");
        tokio::spawn(mediagen_mock_server::run(state.clone(), listener, std::future::pending()));

        let user = state.create_user(Kopecks::from_rub(1.0), None);
        let http = reqwest::Client::new();
        let receiver_listener = TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let hook = format!("http://{}/hook", receiver_listener.local_addr().expect("address"));
        let mut secrets = Vec::new();
        let mut endpoints = Vec::new();
        for _ in 0..5 {
            let created: serde_json::Value = http
                .post(format!("http://{mock_addr}/v1/webhook-endpoints"))
                .bearer_auth(&user.api_key)
                .json(&json!({"url": hook}))
                .send()
                .await
                .expect("create endpoint")
                .json()
                .await
                .expect("json");
            secrets.push(Webhook::new(created["secret"].as_str().expect("secret")).expect("secret"));
            endpoints.push(created["id"].as_str().expect("id").to_owned());
        }
        let receiver = Receiver {
            verifiers: Arc::new(secrets),
            verified: Arc::new(AtomicUsize::new(0)),
        };
        let app = axum::Router::new().route("/hook", post(receive)).with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(receiver_listener, app).await });

        let payload = Bytes::from(serde_json::to_vec(&json!({"id": "evt_bench", "type": "generation.completed", "data": {}})).expect("json"));
        let mut rates = Vec::new();
        for round in 1..=rounds {
            receiver.verified.store(0, Ordering::SeqCst);
            let started = Instant::now();
            {
                let now = state.now();
                let mut store = state.store();
                for n in 0..messages {
                    let endpoint = store.endpoint(&endpoints[n % endpoints.len()]).expect("created").clone();
                    store.enqueue_message(&endpoint, "generation.completed", format!("evt_{n}"), payload.clone(), now);
                }
            }
            state.worker_notify().notify_one();
            while receiver.verified.load(Ordering::SeqCst) < messages {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            state.deliverer().settled().await;
            let rate = messages as f64 / started.elapsed().as_secs_f64();
            eprintln!("round {round}/{rounds}: {rate:.0} deliveries/s");
            rates.push(rate);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "signed deliveries to a verifying local receiver: median {:.0}/s over {rounds} rounds of {messages} (min {:.0}, max {:.0})",
            rates[rates.len() / 2],
            rates[0],
            rates[rates.len() - 1]
        );
    });
}
