//! Rule 2: never do anything twice that costs money or changes state. An attempt
//! is repeated only when repeating cannot act twice, and once the service accepted
//! a create, every error still carries the generation's id and key.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mediagen::{
    Error, ErrorKind, GenerationRequest, GenerationStatus, RetryPolicy, WebhookEndpointRequest,
    WebhookEndpointUpdate,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use uuid::Uuid;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{InstantClock, TEST_KEY, error_body, requisites, wire_client};

fn failing(status: u16, code: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(error_body(code, "something went wrong"))
}

async fn requests_to(server: &MockServer, route: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == route)
        .count()
}

/// An error that says the outcome is unknown, from the operation named.
fn assert_unknown(err: &Error, operation: &str) {
    match err {
        Error::OutcomeUnknown {
            operation: op,
            check,
            ..
        } => {
            assert_eq!(*op, operation);
            assert!(!check.is_empty());
            assert!(!err.is_retryable(), "checking comes before trying again");
        }
        other => panic!("{operation}: expected an unknown outcome, got {other:?}"),
    }
}

#[tokio::test]
async fn a_post_that_may_have_acted_is_sent_once_after_a_5xx_and_says_how_to_check() {
    let server = MockServer::start().await;
    let endpoint = "we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds";
    let cases = [
        (
            "POST",
            "/v1/billing/topup".to_owned(),
            500,
            "INTERNAL_ERROR",
        ),
        (
            "POST",
            "/v1/webhook-endpoints".to_owned(),
            502,
            "GATEWAY_TIMEOUT",
        ),
        (
            "POST",
            format!("/v1/webhook-endpoints/{endpoint}/rotate-secret"),
            503,
            "SERVICE_UNAVAILABLE",
        ),
        (
            "POST",
            "/v1/billing/invoices".to_owned(),
            500,
            "INTERNAL_ERROR",
        ),
        (
            "POST",
            format!("/v1/webhook-endpoints/{endpoint}/test"),
            502,
            "BILLING_TIMEOUT",
        ),
        (
            "PATCH",
            format!("/v1/webhook-endpoints/{endpoint}"),
            500,
            "INTERNAL_ERROR",
        ),
        ("POST", "/v1/files".to_owned(), 503, "SERVICE_UNAVAILABLE"),
        (
            "POST",
            "/v1/auth/magic-link/request".to_owned(),
            500,
            "INTERNAL_ERROR",
        ),
    ];
    for (verb, route, status, code) in &cases {
        Mock::given(method(*verb))
            .and(path(route.as_str()))
            .respond_with(failing(*status, code))
            .mount(&server)
            .await;
    }
    let id = Uuid::new_v4();
    Mock::given(method("POST"))
        .and(path(format!("/v1/generations/{id}/cancel")))
        .respond_with(failing(500, "INTERNAL_ERROR"))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = wire_client(&server, &clock);

    let topup = client.billing().topup(1000.0, None).await.unwrap_err();
    let create = client
        .webhooks()
        .create(WebhookEndpointRequest::new("https://example.com/hooks"))
        .await
        .unwrap_err();
    let rotate = client.webhooks().rotate_secret(endpoint).await.unwrap_err();
    let invoice = client.billing().create_invoice(10_000.0).await.unwrap_err();
    let test = client
        .webhooks()
        .send_test(endpoint, None)
        .await
        .unwrap_err();
    let update = client
        .webhooks()
        .update(endpoint, WebhookEndpointUpdate::new().active(true))
        .await
        .unwrap_err();
    let upload = client
        .files()
        .create_upload("cat.png", mediagen::FileContentType::ImagePng, 10)
        .await
        .unwrap_err();
    let link = client
        .auth()
        .request_magic_link("ada@example.com")
        .await
        .unwrap_err();
    let cancel = client.generations().cancel(id).await.unwrap_err();

    assert_unknown(&topup, "create_topup");
    assert_unknown(&create, "create_webhook_endpoint");
    assert_unknown(&rotate, "rotate_webhook_endpoint_secret");
    assert_unknown(&invoice, "create_invoice");
    assert_unknown(&test, "send_test_webhook");
    assert_unknown(&update, "update_webhook_endpoint");
    assert_unknown(&upload, "create_file_upload");
    assert_unknown(&link, "request_magic_link");
    assert_unknown(&cancel, "cancel_generation");
    for (_, route, _, _) in &cases {
        assert_eq!(
            requests_to(&server, route).await,
            1,
            "{route} was sent once"
        );
    }
    assert!(clock.sleeps().is_empty(), "nothing waited for a retry");
    // The service's answer stays readable through the error.
    assert_eq!(topup.status().map(|s| s.as_u16()), Some(500));
    assert!(topup.request_id().is_some_and(|id| id.starts_with("req_")));
    assert!(topup.to_string().contains("balance history"), "{topup}");
}

#[tokio::test]
async fn a_refusal_before_acting_is_retried_for_a_post_too() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/billing/topup"))
        .respond_with(
            failing(429, "RATE_LIMIT_ERROR")
                .insert_header("retry-after", "7")
                .set_body_json(json!({"error": {
                    "code": "RATE_LIMIT_ERROR", "message": "slow down",
                    "requestId": "req_1", "timestamp": "2026-11-22T10:15:30.123Z",
                    "details": {"retryAfter": 7}
                }})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/billing/topup"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": Uuid::new_v4(), "amountRub": 1000, "status": "SUCCEEDED"
        })))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = wire_client(&server, &clock);

    let topup = client.billing().topup(1000.0, None).await.unwrap();

    assert_eq!(topup.status, mediagen::TopupStatus::Succeeded);
    assert_eq!(requests_to(&server, "/v1/billing/topup").await, 2);
    assert!(clock.sleeps()[0] >= std::time::Duration::from_secs(7));
}

#[tokio::test]
async fn requests_idempotent_by_nature_are_retried_after_a_5xx() {
    let server = MockServer::start().await;
    let file = Uuid::new_v4();
    for (verb, route) in [
        ("GET", "/v1/billing/balance".to_owned()),
        ("DELETE", format!("/v1/files/{file}")),
        ("PUT", "/v1/billing/requisites".to_owned()),
        ("POST", "/v1/generations/estimate".to_owned()),
    ] {
        Mock::given(method(verb))
            .and(path(route))
            .respond_with(failing(503, "SERVICE_UNAVAILABLE"))
            .mount(&server)
            .await;
    }
    let client = crate::wire_client_with(
        &server,
        &InstantClock::new(),
        RetryPolicy::default().max_attempts(3),
    );

    let balance = client.billing().balance().await.unwrap_err();
    let delete = client.files().delete(file).await.unwrap_err();
    let requisites = client
        .billing()
        .set_requisites(requisites())
        .await
        .unwrap_err();
    let estimate = client
        .generations()
        .estimate(&GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap_err();

    for err in [&balance, &delete, &requisites, &estimate] {
        assert_eq!(err.kind(), Some(&ErrorKind::ServiceUnavailable), "{err:?}");
        assert_eq!(err.api().unwrap().attempts, 3);
    }
    assert_eq!(requests_to(&server, "/v1/billing/balance").await, 3);
    assert_eq!(requests_to(&server, &format!("/v1/files/{file}")).await, 3);
    assert_eq!(requests_to(&server, "/v1/billing/requisites").await, 3);
    assert_eq!(requests_to(&server, "/v1/generations/estimate").await, 3);
}

/// A client of `url` on `clock`, with the default retry policy.
fn client_of(url: String, clock: &InstantClock) -> mediagen::Client {
    mediagen::Client::builder()
        .base_url(url)
        .api_key(TEST_KEY)
        .clock(clock.clone())
        .build()
        .unwrap()
}

/// A server that reads each request and closes the connection without a word for
/// the first `drops` requests, then answers each with `status` and `body`; the
/// requests it read, as text.
async fn dropping_server(
    drops: usize,
    status: u16,
    body: serde_json::Value,
) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let log = Arc::clone(&log);
            let count = Arc::clone(&count);
            let body = body.to_string();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0_u8; 4096];
                // The head and a small body arrive together; read until the body is in.
                while let Ok(read) = socket.read(&mut buffer).await {
                    if read == 0 {
                        return;
                    }
                    request.extend_from_slice(&buffer[..read]);
                    let text = String::from_utf8_lossy(&request);
                    if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if rest.len() >= length {
                            break;
                        }
                    }
                }
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&request).into_owned());
                if count.fetch_add(1, Ordering::SeqCst) < drops {
                    return; // dropped: the socket closes with no answer
                }
                let answer = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    (format!("http://{address}"), seen)
}

#[tokio::test]
async fn a_top_up_whose_connection_dropped_is_not_sent_again() {
    let (url, seen) = dropping_server(
        1,
        201,
        json!({"id": Uuid::new_v4(), "amountRub": 1000, "status": "SUCCEEDED"}),
    )
    .await;
    let client = client_of(url, &InstantClock::new());

    let err = client.billing().topup(1000.0, None).await.unwrap_err();

    assert_unknown(&err, "create_topup");
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "one top-up reached the service"
    );
}

#[tokio::test]
async fn a_create_whose_connection_dropped_is_sent_again_with_the_same_key() {
    let id = Uuid::new_v4();
    let (url, seen) = dropping_server(
        2,
        202,
        json!({"id": id, "status": "PENDING", "costRub": 2.5}),
    )
    .await;
    let client = client_of(url, &InstantClock::new());

    let created = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();

    assert_eq!(created.id, id);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let keys: Vec<&str> = seen
        .iter()
        .map(|request| {
            request
                .lines()
                .find_map(|l| l.strip_prefix("idempotency-key: "))
                .expect("every attempt carries the key")
        })
        .collect();
    assert!(
        keys.iter().all(|k| *k == created.idempotency_key),
        "{keys:?}"
    );
}

#[tokio::test]
async fn a_post_that_never_reached_the_service_is_retried() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let clock = InstantClock::new();
    let client = client_of(format!("http://{address}"), &clock);

    let err = client.billing().topup(1000.0, None).await.unwrap_err();

    // Refused connections: nothing was sent, so every attempt was safe.
    assert!(
        matches!(err, Error::Connection { attempts: 5, .. }),
        "{err:?}"
    );
    assert_eq!(clock.sleeps().len(), 4);
}

#[tokio::test]
async fn a_download_has_one_retry_loop_for_the_request_and_the_body() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/outputs/0.png"))
        .respond_with(failing(503, "SERVICE_UNAVAILABLE"))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = crate::wire_client_with(&server, &clock, RetryPolicy::default().max_attempts(3));
    let target = std::env::temp_dir().join(format!("mediagen-{}.png", Uuid::new_v4()));

    let err = client
        .files()
        .download(format!("{}/outputs/0.png", server.uri()), &target)
        .await
        .unwrap_err();

    assert_eq!(err.kind(), Some(&ErrorKind::ServiceUnavailable));
    assert_eq!(err.api().unwrap().attempts, 3);
    assert_eq!(
        requests_to(&server, "/outputs/0.png").await,
        3,
        "3 attempts, not 3 × 3"
    );
    assert_eq!(clock.sleeps().len(), 2);
    assert!(!target.exists());
}

fn created_body(id: Uuid) -> ResponseTemplate {
    ResponseTemplate::new(202).set_body_json(json!({"id": id, "status": "PENDING", "costRub": 2.5}))
}

#[tokio::test]
async fn an_error_after_an_accepted_create_carries_the_generation_id_and_key() {
    let server = MockServer::start().await;
    let id = Uuid::new_v4();
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(created_body(id))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/v1/generations/.+"))
        .respond_with(failing(500, "INTERNAL_ERROR"))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let request = GenerationRequest::new("flux-schnell", "a fox").idempotency_key("order-17");

    let err = client
        .generations()
        .create_and_wait(request.clone())
        .await
        .unwrap_err();
    let batch = client.generations().batch([request]).await;

    for err in [&err, batch[0].as_ref().unwrap_err()] {
        match err {
            Error::AfterCreate {
                id: kept,
                idempotency_key,
                source,
            } => {
                assert_eq!(*kept, id);
                assert_eq!(idempotency_key, "order-17");
                assert_eq!(source.kind(), Some(&ErrorKind::Internal));
            }
            other => panic!("expected the id to survive, got {other:?}"),
        }
        assert_eq!(err.generation_id(), Some(id));
        assert_eq!(err.idempotency_key(), Some("order-17"));
        assert_eq!(err.status().map(|s| s.as_u16()), Some(500));
        assert!(err.to_string().contains(&id.to_string()));
    }
}

#[tokio::test]
async fn a_wait_stops_at_any_status_but_pending_and_processing_and_hands_it_back() {
    let server = MockServer::start().await;
    let (archived, failed, cancelled) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    for (id, body) in [
        (
            archived,
            json!({"id": archived, "status": "ARCHIVED", "costRub": 2.5}),
        ),
        (
            failed,
            json!({"id": failed, "status": "FAILED", "costRub": 2.5, "errorCode": "quantum_flux"}),
        ),
        (
            cancelled,
            json!({"id": cancelled, "status": "CANCELLED", "costRub": 2.5}),
        ),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/v1/generations/{id}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&server)
            .await;
    }
    let client = wire_client(&server, &InstantClock::new());

    let archived_err = client.generations().wait(archived).await.unwrap_err();
    let failed_err = client.generations().wait(failed).await.unwrap_err();
    let cancelled_err = client.generations().wait(cancelled).await.unwrap_err();

    match archived_err {
        Error::UnknownGenerationStatus { generation, .. } => {
            assert_eq!(
                generation.status,
                GenerationStatus::Other("ARCHIVED".into())
            );
        }
        other => panic!("{other:?}"),
    }
    match failed_err {
        Error::GenerationFailed(failure) => {
            assert_eq!(failure.code.as_str(), "quantum_flux", "the code as it came");
            assert!(
                !failure.retryable(),
                "an unknown code is not assumed temporary"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(cancelled_err, Error::GenerationCancelled { id, .. } if id == cancelled));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "one read each: no polling"
    );
}

#[tokio::test]
async fn create_and_wait_reads_the_guaranteed_minimum_and_keeps_the_key_on_failure() {
    let server = MockServer::start().await;
    let (done, failed) = (Uuid::new_v4(), Uuid::new_v4());
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .and(wiremock::matchers::header("idempotency-key", "ok-1"))
        .respond_with(created_body(done))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .and(wiremock::matchers::header("idempotency-key", "bad-1"))
        .respond_with(created_body(failed))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{done}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": done, "status": "SUCCEEDED", "costRub": 2.5, "outputUrls": ["https://cdn.example/0.png"]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{failed}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": failed, "status": "FAILED", "costRub": 2.5, "errorCode": "timeout"
        })))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let fox = |key: &str| GenerationRequest::new("flux-schnell", "a fox").idempotency_key(key);

    let generation = client
        .generations()
        .create_and_wait(fox("ok-1"))
        .await
        .unwrap();
    let err = client
        .generations()
        .create_and_wait(fox("bad-1"))
        .await
        .unwrap_err();

    assert_eq!(generation.output_urls, ["https://cdn.example/0.png"]);
    assert_eq!(generation.model_slug, None);
    match &err {
        Error::GenerationFailed(failure) => {
            assert_eq!(failure.idempotency_key.as_deref(), Some("bad-1"));
            assert!(failure.retryable());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.generation_id(), Some(failed));
}
