//! The verdict on a client: deliberately bad clients, each breaking one rule in
//! a world of its own and named by the rule's id; correct ones not accused;
//! the control routes and the receiver probes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use mediagen_mock_server::contract::ContractSchemas;
use mediagen_mock_server::{Fault, MockServer, Severity, Verdict};
use reqwest::Method;
use serde_json::{Value, json};
use webhook_verify::Webhook;

use crate::receiver::{Answer, Receiver};
use crate::{App, image_request};

/// The rule ids of the verdict's findings.
fn rules(verdict: &Verdict) -> Vec<&str> {
    verdict.findings.iter().map(|f| f.rule.as_str()).collect()
}

/// Asserts that the world's verdict names `rule` as a violation and nothing
/// else as one.
#[track_caller]
fn names(app: &App, rule: &str) {
    let verdict = app.mock.verdict();
    assert!(!verdict.clean, "{verdict}");
    let violations: Vec<&str> = verdict
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Violation)
        .map(|f| f.rule.as_str())
        .collect();
    assert_eq!(violations, [rule], "{verdict}");
}

fn conforms(name: &str, value: &Value) {
    if let Err(fields) = ContractSchemas::control().validate(name, value) {
        panic!("{value} does not conform to {name}: {fields:#?}");
    }
}

/// The next `times` requests of `method path` answered 503
/// `SERVICE_UNAVAILABLE`, the answer a client may retry.
fn unavailable(app: &App, method: &str, path: &str, times: u32) {
    app.mock
        .inject_fault(
            Fault::error(503, "SERVICE_UNAVAILABLE")
                .on(method, path)
                .times(times),
        )
        .unwrap();
}

async fn create_keyed(app: &App, idempotency_key: &str, prompt: &str) -> u16 {
    app.create_with_key(&app.key, idempotency_key, image_request(prompt))
        .await
        .status
        .as_u16()
}

/// Five active tasks: the user's every slot (Limits, active generation tasks).
async fn hold_every_slot(app: &App) {
    for n in 0..5 {
        assert_eq!(
            create_keyed(app, &format!("key-{n}"), "a lighthouse").await,
            202
        );
    }
}

#[tokio::test]
async fn create_retry_new_key_names_a_create_sent_again_after_a_503_with_another_key() {
    let app = App::start().await;
    unavailable(&app, "POST", "/v1/generations", 1);
    assert_eq!(create_keyed(&app, "key-1", "a lighthouse").await, 503);
    assert_eq!(create_keyed(&app, "key-2", "a lighthouse").await, 202);
    names(&app, "create-retry-new-key");
}

#[tokio::test]
async fn the_same_key_after_a_503_and_a_dropped_connection_is_clean() {
    let app = App::start().await;
    unavailable(&app, "POST", "/v1/generations", 1);
    app.mock
        .inject_fault(Fault::drop_after().on("POST", "/v1/generations").times(1))
        .unwrap();
    assert_eq!(create_keyed(&app, "key-1", "a lighthouse").await, 503);
    let dropped = app
        .http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .header("Idempotency-Key", "key-1")
        .json(&image_request("a lighthouse"))
        .send()
        .await;
    assert!(dropped.is_err() || dropped.is_ok_and(|r| r.status() == 202));
    assert_eq!(create_keyed(&app, "key-1", "a lighthouse").await, 202);
    let verdict = app.mock.verdict();
    assert!(verdict.clean && verdict.findings.is_empty(), "{verdict}");
    app.mock.assert_clean();
}

#[tokio::test]
async fn create_without_key_is_advice_that_keeps_the_verdict_clean() {
    let app = App::start().await;
    assert_eq!(app.create(image_request("a lighthouse")).await.status, 202);
    let verdict = app.mock.verdict();
    assert!(verdict.clean, "{verdict}");
    assert_eq!(rules(&verdict), ["create-without-key"]);
    assert_eq!(verdict.findings[0].severity, Severity::Advice);
}

#[tokio::test]
async fn retry_before_retry_after_names_a_client_that_hammers_through_a_429() {
    let app = App::start().await;
    let mut refused = None;
    for _ in 0..61 {
        let reply = app.get("/v1/account").await;
        if reply.status == 429 {
            refused = Some(reply);
            break;
        }
    }
    let refused = refused.expect("the general limit refuses the 61st request");
    assert!(refused.header("retry-after").is_some());
    app.get("/v1/account").await;
    names(&app, "retry-before-retry-after");
}

#[tokio::test]
async fn retry_without_backoff_names_retries_at_no_growing_delay() {
    let app = App::start().await;
    unavailable(&app, "GET", "/v1/account", 5);
    for _ in 0..5 {
        assert_eq!(app.get("/v1/account").await.status, 503);
    }
    names(&app, "retry-without-backoff");
}

#[tokio::test]
async fn retry_with_growing_delays_on_the_clock_is_clean() {
    let app = App::start().await;
    unavailable(&app, "GET", "/v1/account", 4);
    for wait in [1.0, 2.0, 4.0, 8.0] {
        assert_eq!(app.get("/v1/account").await.status, 503);
        // A client whose waits move the mock's clock, as the SDK's tests do.
        app.mock.advance_clock(wait).unwrap();
    }
    assert_eq!(app.get("/v1/account").await.status, 200);
    app.mock.assert_clean();
}

#[tokio::test]
async fn concurrency_retry_loop_names_a_create_again_before_any_task_ended() {
    let app = App::start().await;
    hold_every_slot(&app).await;
    // The same create again and again, at once: a loop, not one early try.
    for _ in 0..4 {
        assert_eq!(create_keyed(&app, "key-5", "a sixth").await, 429);
    }
    names(&app, "concurrency-retry-loop");
}

#[tokio::test]
async fn one_early_try_after_a_concurrency_429_and_then_backing_off_is_clean() {
    let app = App::start().await;
    hold_every_slot(&app).await;
    assert_eq!(create_keyed(&app, "key-5", "a sixth").await, 429);
    // Full jitter's draws: 0.40 s first, then 1.3, 2.5 and 4 s.
    for wait in [0.4, 1.3, 2.5, 4.0] {
        app.mock.advance_clock(wait).unwrap();
        if create_keyed(&app, "key-5", "a sixth").await == 202 {
            break;
        }
    }
    let verdict = app.mock.get_verdict();
    assert!(
        !verdict
            .findings
            .iter()
            .any(|f| f.rule == "concurrency-retry-loop"),
        "{verdict}"
    );
}

#[tokio::test]
async fn a_create_again_once_a_task_ended_is_clean() {
    let app = App::start().await;
    hold_every_slot(&app).await;
    assert_eq!(create_keyed(&app, "key-5", "a sixth").await, 429);
    app.mock.advance_clock(60.0).unwrap();
    assert_eq!(create_keyed(&app, "key-5", "a sixth").await, 202);
    app.mock.assert_clean();
}

#[tokio::test]
async fn repeat_final_error_names_the_same_create_after_a_404() {
    let app = App::start().await;
    let body = json!({"modelSlug": "no-such-model", "prompt": "x"});
    for key in ["key-1", "key-2"] {
        let reply = app.create_with_key(&app.key, key, body.clone()).await;
        reply.assert_error(404, "NOT_FOUND");
    }
    names(&app, "repeat-final-error");
}

#[tokio::test]
async fn unsafe_repeat_names_an_endpoint_created_again_after_a_503() {
    let app = App::start().await;
    unavailable(&app, "POST", "/v1/webhook-endpoints", 1);
    let body = json!({"url": "https://hooks.example.com/mediagen"});
    assert_eq!(
        app.post("/v1/webhook-endpoints", body.clone()).await.status,
        503
    );
    app.post("/v1/webhook-endpoints", body).await;
    names(&app, "unsafe-repeat");
}

#[tokio::test]
async fn read_after_final_is_advice_on_a_read_after_succeeded() {
    let app = App::start().await;
    let reply = app
        .create_with_key(&app.key, "key-1", image_request("a lighthouse"))
        .await;
    let id = reply.body["id"].as_str().expect("an id").to_owned();
    app.mock.advance_clock(60.0).unwrap();
    for _ in 0..2 {
        let read = app.get(&format!("/v1/generations/{id}")).await;
        assert_eq!(read.body["status"], "SUCCEEDED");
    }
    let verdict = app.mock.verdict();
    assert!(verdict.clean);
    assert_eq!(rules(&verdict), ["read-after-final"]);
}

#[tokio::test]
async fn poll_rate_is_advice_on_polling_faster_than_the_general_limit_sustains() {
    let app = App::unlimited().await;
    let reply = app
        .create_with_key(&app.key, "key-1", image_request("a lighthouse"))
        .await;
    let id = reply.body["id"].as_str().expect("an id").to_owned();
    for _ in 0..61 {
        app.get(&format!("/v1/generations/{id}")).await;
    }
    let verdict = app.mock.verdict();
    assert!(verdict.clean);
    assert_eq!(rules(&verdict), ["poll-rate"]);
}

/// A mock whose webhooks reach receivers on 127.0.0.1, a user, and an
/// endpoint for `url` whose secret is returned.
async fn with_endpoint(url: &str) -> (App, String, String) {
    let app = crate::delivery::app().await;
    let reply = app.post("/v1/webhook-endpoints", json!({"url": url})).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let id = reply.body["id"].as_str().expect("id").to_owned();
    let secret = reply.body["secret"].as_str().expect("secret").to_owned();
    (app, id, secret)
}

#[tokio::test]
async fn receiver_failed_names_a_receiver_answering_500_and_receiver_slow_one_answering_late() {
    let receiver = Receiver::start().await;
    let (app, _, secret) = with_endpoint(&receiver.url).await;
    receiver.set_secret(&secret);
    receiver.script([Answer::Status(500)]);
    app.create_with_key(&app.key, "key-1", image_request("a lighthouse"))
        .await;
    crate::delivery::advance(&app, 60.0).await;
    names(&app, "receiver-failed");

    let receiver = Receiver::start().await;
    let (app, _, _) = with_endpoint(&receiver.url).await;
    receiver.script([Answer::After(200, std::time::Duration::from_millis(2100))]);
    app.create_with_key(&app.key, "key-1", image_request("a lighthouse"))
        .await;
    crate::delivery::advance(&app, 60.0).await;
    let verdict = app.mock.verdict();
    assert!(verdict.clean);
    assert_eq!(rules(&verdict), ["receiver-slow"]);
}

/// How a hand-written receiver treats what it gets.
#[derive(Clone, Copy)]
enum Kind {
    /// Verifies the signature and the timestamp, skips duplicates.
    Correct,
    /// Takes everything.
    Naive,
    /// Verifies, but refuses a `webhook-id` it has seen.
    RefusesDuplicates,
}

#[derive(Clone)]
struct Hand {
    kind: Kind,
    secret: Arc<Mutex<String>>,
    seen: Arc<Mutex<HashSet<String>>>,
}

async fn hand(State(hand): State<Hand>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let secret = hand.secret.lock().expect("lock").clone();
    let verified = Webhook::new(&secret).is_ok_and(|wh| wh.verify(&body, &headers).is_ok());
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let fresh = hand.seen.lock().expect("lock").insert(id);
    match hand.kind {
        Kind::Naive => StatusCode::OK,
        _ if !verified => StatusCode::UNAUTHORIZED,
        Kind::RefusesDuplicates if !fresh => StatusCode::CONFLICT,
        _ => StatusCode::OK,
    }
}

/// A receiver of `kind` on 127.0.0.1, registered in a world of its own.
async fn probed(kind: Kind) -> (App, Value) {
    let hand_state = Hand {
        kind,
        secret: Arc::default(),
        seen: Arc::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let app_router = axum::Router::new()
        .route("/hook", post(hand))
        .with_state(hand_state.clone());
    tokio::spawn(async move { axum::serve(listener, app_router).await });
    let (app, id, secret) = with_endpoint(&url).await;
    *hand_state.secret.lock().expect("lock") = secret;
    let reply = app
        .control(
            Method::POST,
            "/_mock/probes/webhooks",
            json!({"endpointId": id}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    conforms("ProbeReport", &reply.body);
    (app, reply.body)
}

#[tokio::test]
async fn a_naive_receiver_is_named_for_the_bad_signature_and_the_stale_timestamp() {
    let (app, report) = probed(Kind::Naive).await;
    let verdict = app.mock.verdict();
    assert_eq!(
        rules(&verdict),
        [
            "receiver-accepts-bad-signature",
            "receiver-accepts-stale-timestamp"
        ],
        "{verdict}"
    );
    assert_eq!(report["probes"][0]["passed"], false);
    assert_eq!(report["probes"][2]["passed"], true);
}

#[tokio::test]
async fn a_receiver_refusing_a_duplicate_is_named() {
    let (app, report) = probed(Kind::RefusesDuplicates).await;
    names(&app, "receiver-refuses-duplicate");
    assert_eq!(report["probes"][2]["status"], 409);
}

#[tokio::test]
async fn a_receiver_that_verifies_passes_every_probe_and_stays_active() {
    let (app, report) = probed(Kind::Correct).await;
    app.mock.assert_clean();
    assert!(app.mock.verdict().findings.is_empty());
    let probes = report["probes"].as_array().expect("probes");
    assert_eq!(probes.len(), 3);
    assert!(probes.iter().all(|p| p["passed"] == true), "{report}");
    assert_eq!(report["probes"][0]["status"], 401);
    assert!(report["repeatedMessageId"].is_string());
    let endpoints = app.get("/v1/webhook-endpoints").await;
    let endpoint = &endpoints.body["data"][0];
    assert_eq!(endpoint["active"], true);
    assert_eq!(endpoint["failureCount"], 0);
}

#[tokio::test]
async fn probes_never_disable_or_count_against_an_endpoint_that_answers_410() {
    let receiver = Receiver::start().await;
    let (app, id, _) = with_endpoint(&receiver.url).await;
    receiver.script([
        Answer::Status(200),
        Answer::Status(410),
        Answer::Status(410),
        Answer::Status(410),
    ]);
    let report = app.mock.probe_webhooks(&id).await.expect("the endpoint");
    assert_eq!(report.probes.len(), 3);
    let endpoints = app.get("/v1/webhook-endpoints").await;
    assert_eq!(endpoints.body["data"][0]["active"], true);
    assert_eq!(endpoints.body["data"][0]["failureCount"], 0);
}

#[tokio::test]
async fn an_unknown_endpoint_is_404_in_the_envelope() {
    let app = App::start().await;
    app.control(
        Method::POST,
        "/_mock/probes/webhooks",
        json!({"endpointId": "we_none"}),
    )
    .await
    .assert_error(404, "NOT_FOUND");
    app.control(
        Method::POST,
        "/_mock/probes/webhooks",
        json!({"id": "we_none"}),
    )
    .await
    .assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn the_verdict_answers_in_every_world_reads_only_its_own_and_starts_over() {
    let app = App::start().await;
    let world = app.mock.world().await;
    assert_eq!(app.create(image_request("a lighthouse")).await.status, 202);

    let root = app
        .control(Method::GET, "/_mock/verdict", Value::Null)
        .await;
    assert_eq!(root.status, 200);
    conforms("Verdict", &root.body);
    assert_eq!(root.body["checked"]["requests"], 1);
    assert_eq!(root.body["findings"][0]["rule"], "create-without-key");
    let other = app
        .http
        .get(format!("{}/_mock/verdict", world.uri()))
        .send()
        .await
        .expect("the world answers");
    let other: Value = other.json().await.expect("JSON");
    assert_eq!(other["checked"]["requests"], 0);
    assert_eq!(other["clean"], true);

    let reset = app
        .control(Method::DELETE, "/_mock/verdict", Value::Null)
        .await;
    assert_eq!(reset.status, 204);
    let verdict = app.mock.get_verdict();
    assert!(verdict.findings.is_empty() && verdict.checked.requests == 0);
}

#[tokio::test]
#[should_panic(expected = "create-retry-new-key")]
async fn assert_clean_panics_with_the_findings_in_words() {
    let app = App::start().await;
    unavailable(&app, "POST", "/v1/generations", 1);
    create_keyed(&app, "key-1", "a lighthouse").await;
    create_keyed(&app, "key-2", "a lighthouse").await;
    app.mock.assert_clean();
}

#[tokio::test]
async fn each_finding_is_told_on_the_live_journal() {
    let app = App::start().await;
    let mut events = app.mock.stream_events();
    assert_eq!(app.create(image_request("a lighthouse")).await.status, 202);
    loop {
        let event = events.recv().await.expect("no event missed");
        let json = serde_json::to_value(&event).expect("JSON");
        if json["type"] == "verdict.finding" {
            conforms("Event", &json);
            assert_eq!(json["rule"], "create-without-key");
            assert_eq!(json["count"], 1);
            break;
        }
    }
}

#[tokio::test]
async fn starting_the_verdict_over_is_told_on_the_live_journal() {
    let app = App::start().await;
    assert_eq!(app.create(image_request("a lighthouse")).await.status, 202);
    let mut events = app.mock.stream_events();
    let reset = app
        .control(Method::DELETE, "/_mock/verdict", Value::Null)
        .await;
    assert_eq!(reset.status, 204);
    // The control face is not logged: the reset is the next thing told.
    let event = events.recv().await.expect("no event missed");
    let json = serde_json::to_value(&event).expect("JSON");
    assert_eq!(json["type"], "verdict.reset");
    conforms("Event", &json);
}

#[tokio::test]
async fn a_fresh_world_has_a_clean_empty_verdict() {
    let mock = MockServer::start().await;
    let verdict: Value = reqwest::get(format!("{}/_mock/verdict", mock.uri()))
        .await
        .expect("answers")
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        verdict,
        json!({"clean": true, "findings": [], "checked": {"requests": 0, "deliveries": 0}})
    );
}

/// Reads one active generation every `every` seconds of the clock, `reads`
/// times, waiting out each 429's `retry-after` as the document asks.
async fn poll(app: &App, every: f64, reads: u32) -> u32 {
    let created = app
        .create_with_key(
            &app.key,
            "polled",
            image_request("a slow one mock:delay=3600"),
        )
        .await;
    assert_eq!(created.status, 202, "{}", created.body);
    let path = format!(
        "/v1/generations/{}",
        created.body["id"].as_str().expect("id")
    );
    let mut refused = 0;
    for _ in 0..reads {
        let reply = app.get(&path).await;
        if reply.status == 429 {
            refused += 1;
            let wait: f64 = reply
                .header("retry-after")
                .and_then(|v| v.parse().ok())
                .expect("a windowed 429 says how long to wait");
            app.mock.advance_clock(wait).unwrap();
        } else {
            assert_eq!(reply.status, 200, "{}", reply.body);
            app.mock.advance_clock(every).unwrap();
        }
    }
    refused
}

#[tokio::test]
async fn poll_rate_limited_names_polling_that_uses_up_the_general_limit() {
    let app = App::start().await;
    let refused = poll(&app, 0.1, 130).await;
    assert!(refused >= 2, "the general limit refused {refused} reads");
    names(&app, "poll-rate-limited");
    let verdict = app.mock.verdict();
    let limited = verdict
        .findings
        .iter()
        .find(|f| f.rule == "poll-rate-limited")
        .expect("named");
    assert_eq!(
        limited.count,
        u64::from(refused),
        "one for each 429: {verdict}"
    );
    assert!(rules(&verdict).contains(&"poll-rate"), "{verdict}");
}

#[tokio::test]
async fn polling_once_a_second_under_the_default_limits_is_clean_of_poll_findings() {
    let app = App::start().await;
    poll(&app, 1.0, 150).await;
    let verdict = app.mock.verdict();
    assert!(
        !rules(&verdict).iter().any(|r| r.starts_with("poll-rate")),
        "{verdict}"
    );
    app.mock.assert_clean();
}
