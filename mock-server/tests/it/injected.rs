//! Faults on demand: the control API, the library handle, the `--fault` flag
//! and the magic prompt, one test per effect, and the rules every effect
//! keeps (before auth and limits, never on the control API, one charge).

use std::time::{Duration, Instant};

use mediagen_mock_server::{Fault, MockServer};
use reqwest::Method;
use serde_json::{Value, json};

use crate::{App, assert_conforms, image_request};

async fn inject(app: &App, rule: Value) -> Value {
    let reply = app.control(Method::POST, "/_mock/faults", rule).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body
}

/// The mock's request log.
async fn log(app: &App) -> Vec<Value> {
    let reply = app.control(Method::GET, "/_mock/requests", json!({})).await;
    reply.body["data"].as_array().cloned().unwrap_or_default()
}

/// Generations of the test user, as the service lists them.
async fn generations(app: &App) -> Vec<Value> {
    let reply = app.get("/v1/generations?limit=100").await;
    reply.body["data"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn an_error_fault_answers_the_envelope_for_its_count_then_the_service_answers() {
    let app = App::start().await;
    let rule = inject(
        &app,
        json!({"method": "POST", "path": "/v1/generations", "effect": "error",
               "status": 503, "code": "SERVICE_UNAVAILABLE", "count": 2}),
    )
    .await;
    assert_eq!(
        (rule["remaining"].as_u64(), rule["effect"].as_str()),
        (Some(2), Some("error"))
    );
    for _ in 0..2 {
        let reply = app.create(image_request("p")).await;
        reply.assert_error(503, "SERVICE_UNAVAILABLE");
        assert_eq!(
            reply.header("x-ratelimit-limit"),
            Some("60"),
            "limit headers as usual"
        );
        assert_eq!(
            reply.header("x-request-id"),
            reply.body["error"]["requestId"].as_str()
        );
    }
    assert_eq!(app.balance(), (1000.0, 0.0), "no error fault takes money");
    assert_eq!(app.create(image_request("p")).await.status, 202);
    let listed = app.control(Method::GET, "/_mock/faults", json!({})).await;
    assert_eq!(listed.body["data"], json!([]), "used up");
    let faulted: Vec<Value> = log(&app)
        .await
        .into_iter()
        .filter(|r| r["fault"] == rule["id"])
        .collect();
    assert_eq!(faulted.len(), 2, "the log names the rule");
    assert_eq!(faulted[0]["status"], 503);
}

#[tokio::test]
async fn any_code_of_the_document_can_be_injected_with_its_status() {
    let app = App::start().await;
    for (code, status) in [
        ("PAYMENT_ERROR", 502),
        ("PROVIDER_ERROR", 502),
        ("RESERVATION_EXPIRED", 409),
        ("GATEWAY_TIMEOUT", 502),
        ("BILLING_UNAVAILABLE", 503),
        ("INTERNAL_ERROR", 500),
        ("UPSTREAM_CIRCUIT_OPEN", 503),
    ] {
        inject(
            &app,
            json!({"effect": "error", "code": code, "path": "/v1/billing/balance"}),
        )
        .await;
        app.get("/v1/billing/balance")
            .await
            .assert_error(status, code);
    }
    // A code the contract does not list, for clients that must keep it.
    inject(
        &app,
        json!({"effect": "error", "code": "BILLING_LEDGER_DOWN"}),
    )
    .await;
    let unknown = app.get("/v1/billing/balance").await;
    assert_eq!(
        (unknown.status.as_u16(), unknown.code()),
        (502, "BILLING_LEDGER_DOWN")
    );
    inject(&app, json!({"effect": "error", "code": "RATE_LIMIT_ERROR"})).await;
    let limited = app.get("/v1/billing/balance").await;
    limited.assert_error(429, "RATE_LIMIT_ERROR");
    assert_eq!(limited.header("retry-after"), Some("1"));
    assert_eq!(limited.body["error"]["details"]["retryAfter"], 1);
    inject(&app, json!({"effect": "error", "status": 400})).await;
    let invalid = app.get("/v1/billing/balance").await;
    invalid.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(
        invalid.body["error"]["details"]["fields"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn a_fault_comes_before_authentication_limits_and_validation() {
    let app = App::start().await;
    let rule = json!({"effect": "error", "status": 502, "code": "GATEWAY_TIMEOUT", "count": 2});
    inject(&app, rule.clone()).await;
    app.send(Method::GET, "/v1/generations", None, None)
        .await
        .assert_error(502, "GATEWAY_TIMEOUT");
    app.create(json!({"not": "a create"}))
        .await
        .assert_error(502, "GATEWAY_TIMEOUT");
    // The general limit used up: the fault still answers first.
    while app.get("/health").await.status != 429 {}
    let mut once = rule;
    once["count"] = json!(1);
    inject(&app, once).await;
    app.get("/health")
        .await
        .assert_error(502, "GATEWAY_TIMEOUT");
    app.get("/health")
        .await
        .assert_error(429, "RATE_LIMIT_ERROR");
}

#[tokio::test]
async fn the_control_api_is_never_faulted() {
    let app = App::start().await;
    inject(&app, json!({"effect": "drop", "count": 5})).await;
    let listed = app.control(Method::GET, "/_mock/faults", json!({})).await;
    assert_eq!(listed.body["data"][0]["remaining"], 5);
    let user = app
        .control(Method::POST, "/_mock/users", json!({"balanceRub": 1}))
        .await;
    assert_eq!(user.status, 201);
}

#[tokio::test]
async fn a_delay_fault_acts_at_once_and_answers_late_in_real_seconds() {
    let app = App::start().await;
    inject(&app, json!({"method": "POST", "path": "/v1/generations", "effect": "delay", "delaySeconds": 0.3})).await;
    let started = Instant::now();
    let reply = app.create(image_request("p")).await;
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the answer waited"
    );
    assert_eq!(reply.status, 202, "{}", reply.body);
    assert_eq!(generations(&app).await.len(), 1);
}

#[tokio::test]
async fn a_drop_fault_closes_the_connection_before_anything_happens() {
    let app = App::start().await;
    inject(
        &app,
        json!({"method": "POST", "path": "/v1/generations", "effect": "drop"}),
    )
    .await;
    let sent = app
        .http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .json(&image_request("p"))
        .send()
        .await;
    assert!(sent.is_err(), "no answer: {sent:?}");
    assert!(generations(&app).await.is_empty(), "nothing created");
    assert_eq!(app.balance(), (1000.0, 0.0), "nothing reserved");
    let entry = log(&app)
        .await
        .into_iter()
        .find(|r| r["fault"].is_string())
        .expect("logged");
    assert!(entry["status"].is_null(), "no status was answered: {entry}");
    // Never reaching the service, it was not counted by the limits either.
    let next = app.get("/v1/billing/balance").await;
    assert_eq!(
        next.header("x-ratelimit-remaining"),
        Some("58"),
        "the list and this one"
    );
}

#[tokio::test]
async fn a_drop_after_fault_acts_then_the_idempotency_key_finds_the_one_generation() {
    let app = App::start().await;
    inject(
        &app,
        json!({"method": "POST", "path": "/v1/generations", "effect": "drop_after"}),
    )
    .await;
    let first = app
        .http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .header("Idempotency-Key", "order-17")
        .json(&image_request("p"))
        .send()
        .await;
    assert!(first.is_err(), "the answer never came: {first:?}");
    let (available, reserved) = app.balance();
    assert!(
        reserved > 0.0,
        "the create happened: {available} {reserved}"
    );
    let retry = app
        .create_with_key(&app.key, "order-17", image_request("p"))
        .await;
    assert_eq!(retry.status, 202, "{}", retry.body);
    let listed = generations(&app).await;
    assert_eq!(listed.len(), 1, "one generation");
    assert_eq!(listed[0]["id"], retry.body["id"]);
    assert_eq!(app.balance(), (available, reserved), "one charge");
    app.mock.check_ledger().expect("ledger");
}

#[tokio::test]
async fn paths_match_one_segment_per_star_and_a_user_rule_spares_others() {
    let app = App::start().await;
    let created = app.create(image_request("p")).await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let other = app.mock.create_user(10.0).unwrap();
    inject(
        &app,
        json!({"method": "GET", "path": "/v1/generations/*", "userId": app.user_id,
               "effect": "error", "code": "SERVICE_UNAVAILABLE", "count": 10}),
    )
    .await;
    assert_eq!(
        app.get("/v1/generations").await.status,
        200,
        "no segment for the star"
    );
    app.send(
        Method::GET,
        &format!("/v1/generations/{id}"),
        Some(&other.api_key),
        None,
    )
    .await
    .assert_error(404, "NOT_FOUND");
    app.get(&format!("/v1/generations/{id}"))
        .await
        .assert_error(503, "SERVICE_UNAVAILABLE");
}

#[tokio::test]
async fn rules_are_listed_removed_one_by_one_or_all_and_bad_ones_refused() {
    let app = App::start().await;
    let first = inject(&app, json!({"effect": "drop", "path": "/health"})).await;
    inject(&app, json!({"effect": "drop_after", "path": "/health"})).await;
    let id = first["id"].as_str().expect("id");
    let removed = app
        .control(Method::DELETE, &format!("/_mock/faults/{id}"), json!({}))
        .await;
    assert_eq!(removed.status, 204);
    app.control(Method::DELETE, &format!("/_mock/faults/{id}"), json!({}))
        .await
        .assert_error(404, "NOT_FOUND");
    let listed = app.control(Method::GET, "/_mock/faults", json!({})).await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        app.control(Method::DELETE, "/_mock/faults", json!({}))
            .await
            .status,
        204
    );
    assert_eq!(app.get("/health").await.status, 200);

    for (rule, field) in [
        (json!({"effect": "error", "status": 302}), "/status"),
        (json!({"effect": "delay"}), "/delaySeconds"),
        (json!({"effect": "melt"}), "/effect"),
        (
            json!({"effect": "error", "code": "INSUFFICIENT_BALANCE"}),
            "/code",
        ),
    ] {
        let refused = app.control(Method::POST, "/_mock/faults", rule).await;
        refused.assert_error(400, "VALIDATION_ERROR");
        assert_eq!(refused.body["error"]["details"]["fields"][0]["path"], field);
    }
}

#[tokio::test]
async fn the_library_handle_counts_down_and_removes() {
    let app = App::start().await;
    let fault = app
        .mock
        .inject_fault(
            Fault::error(502, "BILLING_TIMEOUT")
                .on("GET", "/v1/billing/balance")
                .times(3),
        )
        .unwrap();
    app.get("/v1/billing/balance")
        .await
        .assert_error(502, "BILLING_TIMEOUT");
    assert_eq!(fault.remaining(), 2);
    fault.remove();
    assert_eq!(fault.remaining(), 0);
    assert_eq!(app.get("/v1/billing/balance").await.status, 200);
}

#[tokio::test]
async fn result_files_and_uploads_can_fail_too() {
    let app = App::start().await;
    let created = app.create(image_request("p")).await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    app.mock.advance_clock(30.0).unwrap();
    let done = app.get(&format!("/v1/generations/{id}")).await;
    let url = done.body["outputUrls"][0]
        .as_str()
        .expect("a result")
        .to_owned();
    app.mock
        .inject_fault(Fault::error(502, "OUTPUT_FETCH_FAILED").on("GET", "/outputs/*/*"))
        .unwrap();
    let failed = app.http.get(&url).send().await.expect("an answer");
    assert_eq!(failed.status(), 502);
    let body: Value = failed.json().await.expect("the envelope");
    assert_eq!(body["error"]["code"], "OUTPUT_FETCH_FAILED");
    assert_conforms("Error", &body);
    let again = app.http.get(&url).send().await.expect("an answer");
    assert_eq!(again.status(), 200, "the next fetch works");
}

#[tokio::test]
async fn a_magic_prompt_answers_the_create_with_that_error_and_takes_nothing() {
    let app = App::start().await;
    app.create(image_request("a lighthouse mock:http=502:PAYMENT_ERROR"))
        .await
        .assert_error(502, "PAYMENT_ERROR");
    app.create(image_request("mock:http=503"))
        .await
        .assert_error(503, "SERVICE_UNAVAILABLE");
    assert!(generations(&app).await.is_empty());
    assert_eq!(app.balance(), (1000.0, 0.0));
}

#[tokio::test]
async fn configured_rules_are_active_from_the_start_and_come_back_after_reset() {
    let mock = MockServer::builder()
        .config(|c| {
            c.faults = vec![
                Fault::error(503, "SERVICE_UNAVAILABLE")
                    .path("/health")
                    .checked()
                    .expect("valid"),
            ];
        })
        .start()
        .await;
    let app = App::with(mock).await;
    app.get("/health")
        .await
        .assert_error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(app.get("/health").await.status, 200);
    app.control(Method::POST, "/_mock/reset", json!({})).await;
    app.get("/health")
        .await
        .assert_error(503, "SERVICE_UNAVAILABLE");
}

#[tokio::test]
async fn the_binary_takes_rules_from_repeated_fault_flags() {
    let mock = crate::Binary::start([
        "--fault",
        "effect=error,status=503,code=GATEWAY_UNAVAILABLE,path=/health",
        "--fault",
        r#"{"effect":"error","code":"BILLING_UNAVAILABLE","status":503,"path":"/health"}"#,
    ]);
    let base = &mock.base;
    let http = reqwest::Client::new();
    let mut codes = Vec::new();
    for _ in 0..3 {
        let reply = http
            .get(format!("{base}/health"))
            .send()
            .await
            .expect("an answer");
        let body: Value = reply.json().await.expect("json");
        codes.push(body["error"]["code"].as_str().unwrap_or("none").to_owned());
    }
    assert_eq!(
        codes,
        ["GATEWAY_UNAVAILABLE", "BILLING_UNAVAILABLE", "none"]
    );
}
