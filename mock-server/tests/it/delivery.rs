//! Signed delivery: retries on the clock, 410, deactivation, time-outs,
//! rotation, filtering, and one slow receiver never delaying another.

use std::net::IpAddr;

use mediagen_mock_server::MockServer;
use reqwest::Method;
use serde_json::{Value, json};

use crate::receiver::{Answer, Receiver};
use crate::{App, assert_conforms, image_request};

/// A mock that lets webhooks reach receivers on 127.0.0.1, as CI uses it.
pub async fn app() -> App {
    App::with(
        MockServer::builder()
            .rate_limits(false)
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
    )
    .await
}

/// Registers `receiver` for `event_types` and tells it the secret.
pub async fn register(app: &App, receiver: &Receiver, event_types: Value) -> String {
    let reply = app
        .post(
            "/v1/webhook-endpoints",
            json!({"url": receiver.url, "eventTypes": event_types}),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    receiver.set_secret(reply.body["secret"].as_str().expect("secret"));
    reply.body["id"].as_str().expect("id").to_owned()
}

/// Moves the clock and waits for the deliveries it caused.
pub async fn advance(app: &App, seconds: f64) {
    app.mock.advance_clock(seconds).unwrap();
    app.mock.deliveries_settled().await;
}

pub async fn attempts(app: &App, endpoint: &str) -> Vec<Value> {
    let reply = app
        .get(&format!(
            "/v1/webhook-endpoints/{endpoint}/deliveries?limit=100"
        ))
        .await;
    assert_conforms("WebhookDeliveryAttemptList", &reply.body);
    let mut rows = reply.body["data"].as_array().cloned().unwrap_or_default();
    rows.reverse();
    rows
}

fn time(value: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(value.as_str().expect("a time")).expect("RFC 3339")
}

#[tokio::test]
async fn completed_task_is_delivered_signed_at_the_first_try() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let endpoint = register(&app, &receiver, json!([])).await;
    let id = app.create(image_request("a lighthouse")).await.body["id"].clone();
    advance(&app, 60.0).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    let delivery = &got[0];
    assert!(
        delivery.verified,
        "signature verifies with the endpoint secret"
    );
    assert!(
        uuid::Uuid::parse_str(&delivery.id).is_ok(),
        "webhook-id is a UUID"
    );
    assert!(
        (delivery.timestamp - chrono::Utc::now().timestamp()).abs() < 60,
        "wall-clock timestamp"
    );
    assert_conforms("GenerationCompletedEvent", &delivery.body);
    assert!(
        delivery.body["id"]
            .as_str()
            .is_some_and(|e| e.starts_with("evt_"))
    );
    assert!(
        delivery.body["created_at"]
            .as_str()
            .is_some_and(|t| t.len() == 24 && t.ends_with('Z')),
        "milliseconds, UTC"
    );
    assert_eq!(delivery.body["data"]["generation"]["id"], id);
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(
        (
            rows.len(),
            rows[0]["outcome"].as_str(),
            rows[0]["trigger"].as_str()
        ),
        (1, Some("succeeded"), Some("scheduled"))
    );
}

#[tokio::test]
async fn failed_task_event_arrives_after_the_refund() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let world = app.mock.default_world().clone();
    let user = app.user_id;
    receiver.probe(move |_| {
        let (available, reserved) = world.balance(user).expect("account");
        json!({"available": available, "reserved": reserved})
    });
    register(&app, &receiver, json!(["generation.failed"])).await;
    app.create(image_request("mock:fail=provider_internal"))
        .await;
    advance(&app, 60.0).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    assert_conforms("GenerationFailedEvent", &got[0].body);
    assert_eq!(
        got[0].body["data"]["generation"]["error_code"],
        "provider_internal"
    );
    assert_eq!(
        got[0].probe,
        Some(json!({"available": 1000.0, "reserved": 0.0})),
        "refunded before sending"
    );
}

#[tokio::test]
async fn failing_receiver_gets_retries_with_the_same_webhook_id_on_the_schedule() {
    let app = app().await;
    let receiver = Receiver::start().await;
    receiver.script([
        Answer::Status(500),
        Answer::Status(503),
        Answer::Status(429),
    ]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    for _ in 0..3 {
        let rows = attempts(&app, &endpoint).await;
        let last = rows.last().expect("an attempt");
        let wait = time(&last["nextAttemptAt"]) - time(&last["attemptedAt"]);
        advance(&app, wait.num_milliseconds() as f64 / 1000.0).await;
    }
    let got = receiver.received();
    assert_eq!(got.len(), 4);
    assert!(
        got.iter().all(|d| d.id == got[0].id && d.verified),
        "one webhook-id, every attempt signed"
    );
    let rows = attempts(&app, &endpoint).await;
    let outcomes: Vec<_> = rows
        .iter()
        .map(|r| r["outcome"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(outcomes, ["failed", "failed", "failed", "succeeded"]);
    assert_eq!(rows[0]["responseStatus"], 500);
    for (n, pair) in rows.windows(2).enumerate() {
        let gap = (time(&pair[1]["attemptedAt"]) - time(&pair[0]["attemptedAt"])).num_milliseconds()
            as f64
            / 1000.0;
        let base = 5.0 * (259_200.0_f64 / 5.0).powf(n as f64 / 14.0);
        assert!(
            gap >= base * 0.8 - 0.01 && gap <= base * 1.2 + 0.01,
            "retry {}: {gap} s, schedule {base} s",
            n + 1
        );
    }
    let endpoint = app.get(&format!("/v1/webhook-endpoints/{endpoint}")).await;
    assert_eq!(
        endpoint.body["failureCount"], 0,
        "a success resets the count"
    );
}

#[tokio::test]
async fn receiver_retry_after_is_honoured() {
    let app = app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::StatusRetryAfter(503, 600)]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    let rows = attempts(&app, &endpoint).await;
    let wait = time(&rows[0]["nextAttemptAt"]) - time(&rows[0]["attemptedAt"]);
    assert_eq!(wait.num_seconds(), 600);
}

#[tokio::test]
async fn a_retry_chain_ends_after_fifteen_retries() {
    let app = app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Status(500); 20]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    // Three days of back-off in milliseconds.
    for _ in 0..20 {
        advance(&app, 4.0 * 86_400.0).await;
    }
    assert_eq!(
        receiver.received().len(),
        16,
        "the first attempt and 15 retries"
    );
    let rows = attempts(&app, &endpoint).await;
    assert!(rows.last().is_some_and(|r| r["nextAttemptAt"].is_null()));
}

#[tokio::test]
async fn answer_410_disables_the_endpoint_at_once() {
    let app = app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Status(410)]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    let reply = app.get(&format!("/v1/webhook-endpoints/{endpoint}")).await;
    assert_eq!(
        (
            reply.body["active"].as_bool(),
            reply.body["disabledReason"].as_str()
        ),
        (Some(false), Some("gone_410"))
    );
    app.create(image_request("q")).await;
    advance(&app, 3.0 * 86_400.0).await;
    assert_eq!(receiver.received().len(), 1, "nothing more is sent");
}

#[tokio::test]
async fn seven_hundred_twenty_failures_in_a_row_deactivate_the_endpoint() {
    let app = app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Status(500); 720]);
    let endpoint = register(&app, &receiver, json!([])).await;
    // 45 messages × (1 attempt + 15 retries) = 720 failures.
    for _ in 0..45 {
        let reply = app
            .post(&format!("/v1/webhook-endpoints/{endpoint}/test"), json!({}))
            .await;
        assert_eq!(reply.status, 202);
    }
    advance(&app, 0.0).await;
    for _ in 0..15 {
        advance(&app, 4.0 * 86_400.0).await;
    }
    let reply = app.get(&format!("/v1/webhook-endpoints/{endpoint}")).await;
    assert_eq!(reply.body["active"], false);
    assert_eq!(reply.body["disabledReason"], "consecutive_failures");
    assert_eq!(reply.body["failureCount"], 720);
    app.create(image_request("p")).await;
    advance(&app, 60.0).await;
    assert_eq!(receiver.received().len(), 720, "nothing after deactivation");
    app.post(&format!("/v1/webhook-endpoints/{endpoint}/test"), json!({}))
        .await
        .assert_error(409, "CONFLICT_ERROR");
}

/// A mock whose receivers have a fifth of a real second to answer, so that a
/// receiver that never answers fails quickly.
async fn impatient() -> App {
    App::with(
        MockServer::builder()
            .rate_limits(false)
            .config(|c| {
                c.allow_private_webhooks = true;
                c.delivery_timeout_seconds = 0.2;
            })
            .start()
            .await,
    )
    .await
}

#[tokio::test]
async fn receiver_that_does_not_answer_in_its_real_time_fails_whatever_the_clock_does() {
    let app = impatient().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Hang]);
    let endpoint = register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    // The clock moves only to start the task and its delivery.
    advance(&app, 5.0).await;
    assert_eq!(receiver.received().len(), 1);
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows[0]["outcome"], "failed");
    assert!(
        rows[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no answer within 0.2 s")),
        "{}",
        rows[0]
    );
}

#[tokio::test]
async fn one_hanging_receiver_never_delays_another() {
    let app = impatient().await;
    let (slow, fast) = (Receiver::start().await, Receiver::start().await);
    slow.script([Answer::Hang]);
    register(&app, &slow, json!([])).await;
    register(&app, &fast, json!([])).await;
    app.create(image_request("p")).await;
    app.mock.advance_clock(5.0).unwrap();
    while fast.received().is_empty() {
        tokio::task::yield_now().await;
    }
    assert_eq!(fast.received().len(), 1, "delivered while the other hangs");
    app.mock.deliveries_settled().await;
}

#[tokio::test]
async fn after_rotate_secret_the_old_secret_fails_at_once() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let endpoint = register(&app, &receiver, json!([])).await;
    let rotated = app
        .post(
            &format!("/v1/webhook-endpoints/{endpoint}/rotate-secret"),
            json!({}),
        )
        .await;
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    assert!(
        !receiver.received()[0].verified,
        "the old secret no longer verifies"
    );
    receiver.set_secret(rotated.body["secret"].as_str().expect("secret"));
    app.create(image_request("q")).await;
    advance(&app, 5.0).await;
    assert!(receiver.received()[1].verified, "the new one does");
}

#[tokio::test]
async fn event_types_filter_which_endpoints_get_a_message() {
    let app = app().await;
    let (failures, everything) = (Receiver::start().await, Receiver::start().await);
    register(&app, &failures, json!(["generation.failed"])).await;
    register(&app, &everything, json!(["*"])).await;
    app.create(image_request("fine")).await;
    app.create(image_request("mock:fail=content_policy")).await;
    advance(&app, 60.0).await;
    let types = |r: &Receiver| -> Vec<String> {
        r.received()
            .iter()
            .map(|d| d.body["type"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(types(&failures), ["generation.failed"]);
    let mut all = types(&everything);
    all.sort();
    assert_eq!(all, ["generation.completed", "generation.failed"]);
}

#[tokio::test]
async fn redelivery_sends_the_same_message_again_as_a_manual_attempt() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let endpoint = register(&app, &receiver, json!([])).await;
    let queued = app
        .post(
            &format!("/v1/webhook-endpoints/{endpoint}/test"),
            json!({"eventType": "generation.failed"}),
        )
        .await;
    assert_conforms("WebhookMessageQueued", &queued.body);
    advance(&app, 0.0).await;
    let message = queued.body["messageId"].as_str().expect("message");
    let again = app
        .post(
            &format!("/v1/webhook-endpoints/{endpoint}/deliveries/{message}/redeliver"),
            json!({}),
        )
        .await;
    assert_eq!(again.status, 202);
    app.mock.deliveries_settled().await;
    let got = receiver.received();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].id, got[1].id);
    assert_eq!(got[0].body, got[1].body);
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows[1]["trigger"], "manual");
}

#[tokio::test]
async fn a_name_that_comes_to_resolve_privately_is_refused_at_delivery() {
    let app = App::with(MockServer::builder().rate_limits(false).start().await).await;
    app.mock
        .set_dns("hooks.example.com", vec![IpAddr::from([93, 184, 216, 34])])
        .unwrap();
    let created = app
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "https://hooks.example.com/x"}),
        )
        .await;
    assert_eq!(created.status, 201);
    let endpoint = created.body["id"].as_str().expect("id").to_owned();
    // Re-pointed before anything is sent, so no traffic leaves the machine.
    app.mock
        .set_dns("hooks.example.com", vec![IpAddr::from([10, 0, 0, 1])])
        .unwrap();
    app.create(image_request("p")).await;
    advance(&app, 5.0).await;
    let rows = attempts(&app, &endpoint).await;
    assert_eq!(rows[0]["outcome"], "failed");
    assert!(
        rows[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("Private IP addresses are not allowed")),
        "{}",
        rows[0]
    );
}

#[tokio::test]
async fn the_rust_face_lists_the_deliveries_the_control_api_lists() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let endpoint = register(&app, &receiver, json!([])).await;
    receiver.script([Answer::Status(500)]);
    app.create(image_request("p")).await;
    advance(&app, 60.0).await;

    let deliveries = app.mock.list_deliveries();
    let reply = app.send(Method::GET, "/_mock/deliveries", None, None).await;
    assert_eq!(
        serde_json::to_value(&deliveries).expect("records"),
        reply.body["data"]
    );
    let [delivery] = deliveries.as_slice() else {
        panic!("one message: {deliveries:?}");
    };
    assert_eq!(
        (
            delivery.endpoint_id.as_str(),
            delivery.state,
            delivery.user_id
        ),
        (endpoint.as_str(), "pending", app.user_id)
    );
    assert_eq!(delivery.payload["type"], "generation.completed");
    let [attempt] = delivery.attempts.as_slice() else {
        panic!("one attempt: {:?}", delivery.attempts);
    };
    assert_eq!(
        (attempt.trigger, attempt.succeeded, attempt.response_status),
        ("scheduled", false, Some(500))
    );
    assert!(attempt.next_attempt_at.is_some(), "a retry is scheduled");
}

#[tokio::test]
async fn control_api_lists_messages_with_their_attempts() {
    let app = app().await;
    let receiver = Receiver::start().await;
    register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    advance(&app, 60.0).await;
    let reply = app.send(Method::GET, "/_mock/deliveries", None, None).await;
    let message = &reply.body["data"][0];
    assert_eq!(message["state"], "delivered");
    assert_eq!(message["attempts"].as_array().map(Vec::len), Some(1));
    assert_eq!(message["payload"]["type"], "generation.completed");
}
