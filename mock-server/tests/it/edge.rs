//! Real time at the network edge: under a scaled clock the waits a client is
//! told, and the time a webhook receiver has to answer, are real seconds;
//! windows, tasks and the delivery schedule stay on the mock's clock.

use std::time::Duration;

use mediagen_mock_server::MockServer;
use reqwest::Method;
use serde_json::json;

use crate::delivery::{attempts, register};
use crate::receiver::{Answer, Receiver};
use crate::{App, image_request};

/// A mock whose clock runs 60 times faster than real time.
async fn scaled() -> App {
    App::with(
        MockServer::builder()
            .real_clock(60.0)
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
    )
    .await
}

#[tokio::test]
async fn under_a_scaled_clock_a_refused_client_is_told_real_seconds() {
    let app = scaled().await;
    while app.send(Method::GET, "/health", None, None).await.status != 429 {}
    let refused = app.get("/v1/generations").await;
    refused.assert_error(429, "RATE_LIMIT_ERROR");
    // At most 60 s of the mock's clock are left: at most 1 real second.
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.body["error"]["details"]["retryAfter"], 1);
    assert_eq!(refused.header("x-ratelimit-reset"), Some("1"));
}

#[tokio::test]
async fn under_a_scaled_clock_the_catalogue_tells_a_models_time_in_real_seconds() {
    let duration = |catalog: &serde_json::Value, slug: &str| {
        catalog["models"]
            .as_array()
            .and_then(|models| models.iter().find(|m| m["slug"] == slug))
            .and_then(|m| m["averageDurationSeconds"].as_f64())
            .expect("the model's typical time")
    };
    let scaled = scaled().await;
    let fast = scaled.get("/v1/catalog/").await.body;
    let manual = App::with(MockServer::start().await).await;
    let slow = manual.get("/v1/catalog/").await.body;
    // flux-schnell: 1 s in the queue and a 4 s attempt, from creation to its end.
    assert_eq!(duration(&slow, "flux-schnell"), 5.0);
    assert!((duration(&fast, "flux-schnell") - 5.0 / 60.0).abs() < 1e-9);
    assert!((duration(&fast, "imagen-4") - 13.0 / 60.0).abs() < 1e-9);
}

#[tokio::test]
async fn under_a_scaled_clock_the_topup_window_tells_real_seconds() {
    let app = scaled().await;
    for _ in 0..5 {
        app.post("/v1/billing/topup", json!({"amountRub": 100}))
            .await;
    }
    let refused = app
        .post("/v1/billing/topup", json!({"amountRub": 100}))
        .await;
    refused.assert_error(429, "RATE_LIMIT_ERROR");
    let wait: u64 = refused
        .header("retry-after")
        .expect("a wait")
        .parse()
        .expect("seconds");
    // 600 s of the mock's clock are 10 real seconds, less what has passed.
    assert!((1..=10).contains(&wait), "{wait}");
    assert_eq!(refused.body["error"]["details"]["retryAfter"], wait);
    assert_eq!(
        refused.header("x-ratelimit-reset"),
        Some(wait.to_string().as_str())
    );
}

#[tokio::test]
async fn under_a_scaled_clock_a_receiver_answering_in_half_a_second_is_delivered_once() {
    let app = scaled().await;
    let receiver = Receiver::start().await;
    // Half a real second is 30 s of the mock's clock: beyond 10 s of it, well
    // within the 10 real seconds a receiver has.
    receiver.script([Answer::After(204, Duration::from_millis(500))]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    receiver.wait_for(1).await;
    app.mock.deliveries_settled().await;
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["outcome"], "succeeded");
    assert_eq!(receiver.received().len(), 1, "no second delivery");
}

#[tokio::test]
async fn a_receivers_retry_after_is_read_as_real_seconds() {
    let app = App::with(
        MockServer::builder()
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
    )
    .await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::StatusRetryAfter(503, 30)]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.post(&format!("/v1/webhook-endpoints/{endpoint}/test"), json!({}))
        .await;
    app.mock.advance_clock(0.0).unwrap();
    app.mock.deliveries_settled().await;
    let rows = attempts(&app, &endpoint).await;
    let at = |v: &serde_json::Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time")).expect("a time")
    };
    let delay = at(&rows[0]["nextAttemptAt"]) - at(&rows[0]["attemptedAt"]);
    // A manual clock counts a real second as one of its own.
    assert!(delay >= chrono::Duration::seconds(30), "{delay}");
}
