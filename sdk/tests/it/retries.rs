//! Retries, in one place for every operation: which answers are tried again, how
//! long the client waits, and that a retried create keeps its Idempotency-Key.

use std::time::Duration;

use mediagen::{Error, ErrorKind, GenerationRequest, RetryPolicy};
use serde_json::json;
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{InstantClock, error_body, generation_body, wire_client, wire_client_with};

fn created(id: Uuid) -> ResponseTemplate {
    ResponseTemplate::new(202).set_body_json(json!({"id": id, "status": "PENDING", "costRub": 2.5}))
}

fn failing(status: u16, code: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(error_body(code, "something went wrong"))
}

fn keys_sent(requests: &[wiremock::Request]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            r.headers
                .get("idempotency-key")
                .expect("every create carries an Idempotency-Key")
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_retried_create_sends_the_same_generated_idempotency_key_each_time() {
    let server = MockServer::start().await;
    let id = Uuid::new_v4();
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(failing(503, "SERVICE_UNAVAILABLE"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(created(id))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = wire_client(&server, &clock);

    let generation = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a red fox"))
        .await
        .unwrap();

    let keys = keys_sent(&server.received_requests().await.unwrap());
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    let key = Uuid::parse_str(&keys[0]).expect("the key is a UUID");
    assert_eq!(key.get_version_num(), 4);
    assert_eq!(generation.id, id);
    assert_eq!(generation.idempotency_key, keys[0]);
    assert_eq!(clock.sleeps().len(), 2);
}

#[tokio::test]
async fn a_callers_idempotency_key_is_sent_on_every_retry() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(failing(502, "GATEWAY_TIMEOUT"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(created(Uuid::new_v4()))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a red fox").idempotency_key("order-4711"))
        .await
        .unwrap();

    let keys = keys_sent(&server.received_requests().await.unwrap());
    assert_eq!(keys, ["order-4711", "order-4711"]);
}

#[tokio::test]
async fn two_create_calls_without_a_key_get_different_keys() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(created(Uuid::new_v4()))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let request = GenerationRequest::new("flux-schnell", "a red fox");

    let first = client.generations().create(request.clone()).await.unwrap();
    let second = client.generations().create(request).await.unwrap();

    assert_ne!(first.idempotency_key, second.idempotency_key);
}

#[tokio::test]
async fn a_create_that_timed_out_is_retried_with_its_key_through_a_conflict() {
    // The first attempt reaches the service but its answer is lost (time-out);
    // the retry finds the first request still running (409, rule 8), and the
    // next one gets the generation the first request made.
    let server = MockServer::start().await;
    let id = Uuid::new_v4();
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(created(id).set_delay(Duration::from_secs(5)))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(failing(409, "CONFLICT_ERROR"))
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(created(id))
        .with_priority(3)
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = mediagen::Client::builder()
        .base_url(server.uri())
        .api_key(crate::TEST_KEY)
        .clock(clock.clone())
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();

    let generation = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a red fox"))
        .await
        .unwrap();

    assert_eq!(generation.id, id);
    let keys = keys_sent(&server.received_requests().await.unwrap());
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]));
}

#[tokio::test]
async fn a_windowed_rate_limit_is_waited_out_for_at_least_retry_after() {
    let server = MockServer::start().await;
    let id = Uuid::new_v4();
    let mut limited = error_body("RATE_LIMIT_ERROR", "Rate limit of 60 requests exceeded");
    limited["error"]["details"] = json!({"retryAfter": 17});
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{id}")))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "17")
                .set_body_json(limited),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(generation_body(id, "PENDING")))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = wire_client(&server, &clock);

    let generation = client.generations().get(id).await.unwrap();

    assert_eq!(generation.id, id);
    let sleeps = clock.sleeps();
    assert_eq!(sleeps.len(), 1);
    assert!(sleeps[0] >= Duration::from_secs(17), "{sleeps:?}");
}

#[tokio::test]
async fn a_retry_after_beyond_the_policys_limit_is_left_to_the_caller() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/generations"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "600")
                .set_body_json(error_body("RATE_LIMIT_ERROR", "slow down")),
        )
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = wire_client(&server, &clock);

    let err = client
        .generations()
        .list_page(&mediagen::GenerationFilter::new(), None)
        .await
        .unwrap_err();

    assert_eq!(
        err.kind(),
        Some(&ErrorKind::RateLimited {
            retry_after: Some(Duration::from_secs(600)),
            limit: None
        })
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    assert!(clock.sleeps().is_empty());
}

#[tokio::test]
async fn permanent_errors_are_tried_once() {
    let cases = [
        (400, "VALIDATION_ERROR"),
        (401, "AUTHENTICATION_ERROR"),
        (402, "INSUFFICIENT_BALANCE"),
        (403, "MODEL_NOT_AVAILABLE"),
        (404, "NOT_FOUND"),
        (409, "MODERATION_REPEAT_BLOCKED"),
        (410, "MODEL_UNAVAILABLE"),
        (429, "DAILY_CAP_EXCEEDED"),
        (501, "SERVICE_UNAVAILABLE"),
        (503, "MARGIN_GUARD"),
    ];
    let server = MockServer::start().await;
    for (status, code) in cases {
        server.reset().await;
        Mock::given(method("POST"))
            .and(path("/v1/generations"))
            .respond_with(failing(status, code))
            .mount(&server)
            .await;
        let clock = InstantClock::new();
        let client = wire_client(&server, &clock);

        let err = client
            .generations()
            .create(GenerationRequest::new("flux-schnell", "a red fox"))
            .await
            .unwrap_err();

        let api = err.api().unwrap_or_else(|| panic!("{code}: {err:?}"));
        assert_eq!((api.status.as_u16(), api.code.as_str()), (status, code));
        assert_eq!(api.attempts, 1, "{code}");
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            1,
            "{code} was retried"
        );
        assert!(clock.sleeps().is_empty(), "{code}");
    }
}

#[tokio::test]
async fn the_concurrency_limit_is_its_own_error_kind_and_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(failing(429, "RATE_LIMIT_ERROR"))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a red fox"))
        .await
        .unwrap_err();

    assert_eq!(
        err.kind(),
        Some(&ErrorKind::ConcurrencyLimit { limit: None })
    );
    assert!(err.is_retryable(), "it frees up when a task ends");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn transient_errors_are_retried_five_times_with_equal_jitter_within_one_two_four_eight_seconds()
 {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/account"))
        .respond_with(failing(502, "GATEWAY_TIMEOUT"))
        .mount(&server)
        .await;
    let caps = [1, 2, 4, 8].map(Duration::from_secs);
    let mut all = Vec::new();
    for _ in 0..20 {
        server.reset().await;
        Mock::given(method("GET"))
            .and(path("/v1/account"))
            .respond_with(failing(502, "GATEWAY_TIMEOUT"))
            .mount(&server)
            .await;
        let clock = InstantClock::new();
        let client = wire_client(&server, &clock);

        let err = client.account().get().await.unwrap_err();

        assert_eq!(err.kind(), Some(&ErrorKind::Gateway));
        assert_eq!(err.api().unwrap().attempts, 5);
        assert_eq!(server.received_requests().await.unwrap().len(), 5);
        let sleeps = clock.sleeps();
        assert_eq!(sleeps.len(), 4);
        for (sleep, cap) in sleeps.iter().zip(caps) {
            assert!(*sleep <= cap, "{sleep:?} above {cap:?}");
            assert!(*sleep >= cap / 2, "{sleep:?} below half of {cap:?}");
        }
        all.extend(
            sleeps
                .iter()
                .zip(caps)
                .map(|(s, c)| s.as_secs_f64() / c.as_secs_f64()),
        );
    }
    // Equal jitter: the waits spread over the upper half of each step.
    assert!(all.iter().any(|f| *f < 0.65), "{all:?}");
    assert!(all.iter().any(|f| *f > 0.85), "{all:?}");
}

#[tokio::test]
async fn the_number_of_attempts_and_the_delays_are_configurable() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .respond_with(failing(503, "SERVICE_UNAVAILABLE"))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let policy = RetryPolicy::default()
        .max_attempts(3)
        .base_delay(Duration::from_millis(10))
        .jitter(false);
    let client = wire_client_with(&server, &clock, policy);

    let err = client.billing().balance().await.unwrap_err();

    assert_eq!(err.kind(), Some(&ErrorKind::ServiceUnavailable));
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    assert_eq!(
        clock.sleeps(),
        [Duration::from_millis(10), Duration::from_millis(20)]
    );
}

#[tokio::test]
async fn unknown_gateway_and_billing_codes_are_retried_and_kept_as_text() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .respond_with(failing(503, "BILLING_LEDGER_LOCKED"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .respond_with(failing(502, "GATEWAY_EXPLODED"))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client.billing().balance().await.unwrap_err();

    let api = err.api().unwrap();
    assert_eq!(
        (api.kind.clone(), api.code.as_str()),
        (ErrorKind::Gateway, "GATEWAY_EXPLODED")
    );
    assert_eq!(
        api.request_id.as_deref(),
        Some("req_0123456789abcdef01234567")
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 5);
}

#[tokio::test]
async fn an_error_page_that_is_not_json_is_retried_by_its_status() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad Gateway</html>"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "status": "ok", "time": "2026-11-22T10:15:30.123Z", "version": "1.0.0"
        })))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let health = client.health().await.unwrap();

    assert_eq!(health.version.as_deref(), Some("1.0.0"));
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported_with_the_attempts() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let clock = InstantClock::new();
    let client = mediagen::Client::builder()
        .base_url(format!("http://{address}"))
        .api_key(crate::TEST_KEY)
        .clock(clock.clone())
        .build()
        .unwrap();

    let err = client.generations().get(Uuid::new_v4()).await.unwrap_err();

    match err {
        Error::Connection { attempts, .. } => assert_eq!(attempts, 5),
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert_eq!(clock.sleeps().len(), 4);
}

#[tokio::test]
async fn a_conflict_outside_an_idempotent_create_is_final() {
    let server = MockServer::start().await;
    let id = Uuid::new_v4();
    Mock::given(method("POST"))
        .and(path(format!("/v1/generations/{id}/cancel")))
        .respond_with(failing(409, "CONFLICT_ERROR"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/billing/invoices/{id}/act")))
        .respond_with(failing(409, "CONFLICT_ERROR"))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let cancel = client.generations().cancel(id).await.unwrap_err();
    let act = client.billing().invoice_act(id).await.unwrap_err();

    assert_eq!(cancel.kind(), Some(&ErrorKind::Conflict));
    assert_eq!(act.kind(), Some(&ErrorKind::Conflict));
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn retries_cover_operations_of_every_area() {
    // One retry loop for every operation: a webhook, a file and a billing call
    // each get their transient 503 retried.
    let server = MockServer::start().await;
    for (verb, route) in [
        ("GET", "/v1/webhook-endpoints"),
        ("GET", "/v1/files/0b7f3a52-8d4e-4b7a-9c21-5e8f0d3b7a19"),
        ("GET", "/v1/billing/requisites"),
    ] {
        Mock::given(method(verb))
            .and(path(route))
            .respond_with(failing(503, "SERVICE_UNAVAILABLE"))
            .mount(&server)
            .await;
    }
    let clock = InstantClock::new();
    let client = wire_client_with(&server, &clock, RetryPolicy::default().max_attempts(2));
    let file = Uuid::parse_str("0b7f3a52-8d4e-4b7a-9c21-5e8f0d3b7a19").unwrap();

    assert!(client.webhooks().list().await.is_err());
    assert!(client.files().get(file).await.is_err());
    assert!(client.billing().requisites().await.is_err());

    assert_eq!(server.received_requests().await.unwrap().len(), 6);
    assert_eq!(clock.sleeps().len(), 3);
}
