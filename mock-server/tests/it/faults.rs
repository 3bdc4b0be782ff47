//! Faults on both sides of the mock: webhook receivers that answer slowly,
//! drop the connection or are down and then up again, and provider failures
//! injected at random into the worker. (A receiver that hangs, one that
//! answers 410 and a plain provider failure have tests in delivery.rs and
//! lifecycle.rs.)

use std::net::SocketAddr;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::delivery::{advance, app, attempts, register};
use crate::receiver::{Answer, Receiver};
use crate::shutdown::read_until;
use crate::{App, image_request, scaled};

/// Registers `url` (no receiver behind it yet) and answers the endpoint id.
async fn register_url(app: &App, url: &str) -> String {
    let reply = app
        .post("/v1/webhook-endpoints", json!({ "url": url }))
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["id"].as_str().expect("id").to_owned()
}

/// Moves the clock to the next scheduled attempt of the endpoint's message.
async fn advance_to_retry(app: &App, endpoint: &str) {
    let rows = attempts(app, endpoint).await;
    let last = rows.last().expect("an attempt");
    let at = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time"));
    let wait =
        at(&last["nextAttemptAt"]).expect("a retry") - at(&last["attemptedAt"]).expect("a time");
    advance(app, wait.num_milliseconds() as f64 / 1000.0).await;
}

#[tokio::test]
async fn receiver_that_answers_slowly_but_within_its_real_time_is_delivered() {
    let app = app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Held(204)]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    app.mock.advance_clock(5.0).unwrap();
    while receiver.received().is_empty() {
        tokio::task::yield_now().await;
    }
    // A minute of the clock passes while the receiver thinks: its time to
    // answer is real, so the clock does not fail it.
    app.mock.advance_clock(60.0).unwrap();
    receiver.release();
    app.mock.deliveries_settled().await;
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(
        (rows.len(), rows[0]["outcome"].as_str()),
        (1, Some("succeeded")),
        "{rows:?}"
    );
}

#[tokio::test]
async fn receiver_that_drops_the_connection_fails_the_attempt_and_gets_the_retry() {
    let app = app().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let endpoint = register_url(&app, &format!("http://{addr}/hook")).await;
    let dropper = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        read_until(&mut socket, b"\r\n\r\n").await;
        // Closing without a word: the sender sees the connection end mid-exchange.
        drop(socket);
    });
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    dropper.await.expect("the dropper ran");
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows[0]["outcome"], "failed");
    assert!(rows[0]["responseStatus"].is_null(), "{}", rows[0]);
    let receiver = Receiver::start_on(addr).await;
    advance_to_retry(&app, &endpoint).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1, "the retry reached the receiver");
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows[1]["outcome"], "succeeded");
    let endpoint = app.get(&format!("/v1/webhook-endpoints/{endpoint}")).await;
    assert_eq!(endpoint.body["active"], true);
    assert_eq!(endpoint.body["failureCount"], 0);
}

#[tokio::test]
async fn receiver_that_is_down_then_up_gets_the_same_message_on_a_retry() {
    let app = app().await;
    // A port nobody listens on: bound for its number, then let go.
    let addr: SocketAddr = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind")
        .local_addr()
        .expect("address");
    let endpoint = register_url(&app, &format!("http://{addr}/hook")).await;
    let queued = app
        .post(&format!("/v1/webhook-endpoints/{endpoint}/test"), json!({}))
        .await;
    advance(&app, 0.0).await;
    advance_to_retry(&app, &endpoint).await;
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows.len(), 2, "two attempts while down");
    assert!(
        rows.iter()
            .all(|r| r["outcome"] == "failed" && r["error"] == "connection failed"),
        "{rows:?}"
    );
    let receiver = Receiver::start_on(addr).await;
    advance_to_retry(&app, &endpoint).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id, queued.body["messageId"].as_str().expect("id"));
    assert_eq!(attempts(&app, &endpoint).await[2]["outcome"], "succeeded");
}

/// Many tasks with provider failures injected at random, against a receiver
/// that fails at random: every failed task is refunded before its event, every
/// task's event arrives exactly once per webhook-id, and the ledger holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_provider_and_receiver_failures_lose_no_money_and_no_event() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let mut rng = StdRng::seed_from_u64(0x6661_756c_7473);
    let tasks = scaled("FAULT_TASKS", 60) as usize;
    receiver.script((0..tasks * 3).map(|_| match rng.random_range(0..10) {
        0..=2 => Answer::Status(500),
        3 => Answer::Status(503),
        4 => Answer::StatusRetryAfter(429, 30),
        _ => Answer::Status(204),
    }));
    register(&app, &receiver, json!([])).await;
    let codes = [
        "timeout",
        "provider_unavailable",
        "provider_internal",
        "rate_limited",
        "content_policy",
        "invalid_input",
    ];
    let mut expected: Vec<(String, bool)> = Vec::new();
    let mut kept = 0.0;
    for _ in 0..tasks {
        let fails = rng.random_bool(0.5);
        let prompt = if fails {
            format!("mock:fail={}", codes[rng.random_range(0..codes.len())])
        } else {
            "a lighthouse".to_owned()
        };
        let reply = app.create(image_request(&prompt)).await;
        assert_eq!(reply.status, 202, "{}", reply.body);
        if !fails {
            kept += reply.body["costRub"].as_f64().expect("a cost");
        }
        expected.push((reply.body["id"].as_str().expect("id").to_owned(), fails));
        // Worker attempts end and free the concurrency slot.
        advance(&app, 60.0).await;
        app.mock.check_ledger().expect("the ledger holds");
    }
    // Long enough for every back-off of every message.
    for _ in 0..12 {
        advance(&app, 86_400.0).await;
    }
    let got = receiver.received();
    let mut delivered: std::collections::HashMap<String, String> = Default::default();
    for d in got.iter().filter(|d| d.verified) {
        let generation = d.body["data"]["generation"]["id"]
            .as_str()
            .expect("a generation id")
            .to_owned();
        let kind = d.body["type"].as_str().expect("a type").to_owned();
        if let Some(before) = delivered.insert(d.id.clone(), kind.clone()) {
            assert_eq!(before, kind, "one message, one event");
        }
        assert!(expected.iter().any(|(id, _)| *id == generation));
    }
    assert_eq!(
        delivered.len(),
        tasks,
        "one message per task reached the receiver"
    );
    for (id, fails) in &expected {
        let status = app.get(&format!("/v1/generations/{id}")).await.body["status"].clone();
        assert_eq!(status, if *fails { "FAILED" } else { "SUCCEEDED" });
    }
    let (available, reserved) = app.balance();
    assert_eq!(reserved, 0.0);
    assert!(
        (available - (1000.0 - kept)).abs() < 1e-6,
        "only successes are paid for: {available} left, {kept} kept"
    );
    app.mock.check_ledger().expect("the ledger holds");
    let log = app.send(Method::GET, "/_mock/deliveries", None, None).await;
    let states: Vec<_> = log.body["data"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["state"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        states.iter().all(|s| s == "delivered"),
        "every message ends delivered: {states:?}"
    );
}
