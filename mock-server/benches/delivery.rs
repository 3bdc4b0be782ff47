//! Signed webhook deliveries per second from the mock to a local receiver that
//! verifies every signature with webhook-verify.
//!
//! ```text
//! cargo bench -p mediagen-mock-server --bench delivery
//! MEDIAGEN_BENCH_MESSAGES=50000 MEDIAGEN_BENCH_ROUNDS=5 cargo bench -p mediagen-mock-server --bench delivery
//! ```
//!
//! Each round asks for the messages as test deliveries (`POST
//! /v1/webhook-endpoints/{id}/test`, 64 at a time, to 5 endpoints of one user)
//! and times from the first request until the receiver has verified all of
//! them; the mock delivers while the requests still arrive.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use futures::{StreamExt, stream};
use mediagen_mock_server::{ClockMode, MockServer};
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
        let mock = MockServer::builder()
            .config(|c| {
                c.clock = ClockMode::Real;
                c.rate_limits = false;
                c.allow_private_webhooks = true;
            })
            .start()
            .await;
        let mock_addr = mock.address();
        let user = mock.create_user(1.0).unwrap();
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

        let mut rates = Vec::new();
        for round in 1..=rounds {
            receiver.verified.store(0, Ordering::SeqCst);
            let started = Instant::now();
            stream::iter(0..messages)
                .map(|n| {
                    http.post(format!(
                        "http://{mock_addr}/v1/webhook-endpoints/{}/test",
                        endpoints[n % endpoints.len()]
                    ))
                    .bearer_auth(&user.api_key)
                    .send()
                })
                .buffer_unordered(64)
                .for_each(|answer| async move {
                    let status = answer.expect("a test delivery").status();
                    assert_eq!(status, 202, "the test delivery is queued");
                })
                .await;
            while receiver.verified.load(Ordering::SeqCst) < messages {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            mock.deliveries_settled().await;
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
