//! Construction, authentication, the user agent, secrecy of the key, and the
//! rate-limit values of each answer.

use std::time::Duration;

use mediagen::{Client, Error, ErrorKind, LimitScope};
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{InstantClock, TEST_KEY, error_body, wire_client};

fn health() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "status": "ok", "time": "2026-11-22T10:15:30.123Z", "version": "1.0.0"
    }))
}

fn balance() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "availableRub": 12.5, "reservedRub": 2.5, "currency": "RUB",
        "updatedAt": "2026-11-22T10:15:30.123Z"
    }))
}

#[tokio::test]
async fn keyed_operations_carry_the_key_as_a_bearer_token_and_the_user_agent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .and(header(
            "authorization",
            format!("Bearer {TEST_KEY}").as_str(),
        ))
        .respond_with(balance())
        .expect(1)
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let balance = client.billing().balance().await.unwrap();

    assert_eq!(balance.available_rub, 12.5);
    let request = &server.received_requests().await.unwrap()[0];
    let agent = request.headers.get("user-agent").unwrap().to_str().unwrap();
    assert!(agent.starts_with("mediagen-rust/"), "{agent}");
}

#[tokio::test]
async fn public_operations_are_sent_without_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(health())
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/catalog/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"models": []})))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    client.health().await.unwrap();
    client.catalog().get().await.unwrap();

    for request in server.received_requests().await.unwrap() {
        assert!(
            request.headers.get("authorization").is_none(),
            "{}",
            request.url
        );
    }
}

#[tokio::test]
async fn a_custom_reqwest_client_and_user_agent_are_used_with_the_key_still_added() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .and(header(
            "authorization",
            format!("Bearer {TEST_KEY}").as_str(),
        ))
        .and(header("user-agent", "thumbnailer/3.1"))
        .respond_with(balance())
        .expect(1)
        .mount(&server)
        .await;
    let http = reqwest::Client::builder().build().unwrap();
    let client = Client::builder()
        .base_url(server.uri())
        .api_key(TEST_KEY)
        .http_client(http)
        .user_agent("thumbnailer/3.1")
        .build()
        .unwrap();

    client.billing().balance().await.unwrap();
}

#[tokio::test]
async fn the_request_timeout_applies_to_each_attempt() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/account"))
        .respond_with(balance().set_delay(Duration::from_secs(5)))
        .mount(&server)
        .await;
    let clock = InstantClock::new();
    let client = Client::builder()
        .base_url(server.uri())
        .api_key(TEST_KEY)
        .timeout(Duration::from_millis(100))
        .retry_policy(mediagen::RetryPolicy::default().max_attempts(2))
        .clock(clock.clone())
        .build()
        .unwrap();

    let err = client.account().get().await.unwrap_err();

    match &err {
        Error::Connection { attempts, source } => {
            assert_eq!(*attempts, 2);
            assert!(source.is_timeout());
        }
        other => panic!("expected a time-out, got {other:?}"),
    }
}

#[tokio::test]
async fn the_key_never_appears_in_debug_output_or_in_errors() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/account"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(error_body("AUTHENTICATION_ERROR", "Invalid API key")),
        )
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client.account().get().await.unwrap_err();

    assert_eq!(err.kind(), Some(&ErrorKind::Authentication));
    let secret = "testsecretvalue";
    for text in [
        format!("{client:?}"),
        format!("{client:#?}"),
        format!("{:?}", client.raw()),
        format!("{err}"),
        format!("{err:?}"),
        format!("{:?}", Client::builder().api_key(TEST_KEY)),
    ] {
        assert!(!text.contains(secret), "the key leaked into {text}");
    }
}

#[tokio::test]
async fn the_rate_limit_values_of_each_answer_are_readable() {
    let server = MockServer::start().await;
    for (remaining, reset) in [("59", "60"), ("58", "59")] {
        Mock::given(method("GET"))
            .and(path("/health"))
            .respond_with(
                health()
                    .insert_header("x-ratelimit-limit", "60")
                    .insert_header("x-ratelimit-remaining", remaining)
                    .insert_header("x-ratelimit-reset", reset),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    let client = wire_client(&server, &InstantClock::new());
    assert_eq!(client.rate_limit(), None);

    client.health().await.unwrap();
    let first = client.rate_limit().unwrap();
    client.health().await.unwrap();
    let second = client.rate_limit().unwrap();

    assert_eq!(
        (first.limit, first.remaining, first.reset),
        (60, 59, Duration::from_secs(60))
    );
    assert_eq!(
        (second.remaining, second.reset),
        (58, Duration::from_secs(59))
    );
    assert_eq!(client.rate_limit_of(LimitScope::General), Some(second));
}

#[tokio::test]
async fn clones_share_the_rate_limit_view() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(
            health()
                .insert_header("x-ratelimit-limit", "60")
                .insert_header("x-ratelimit-remaining", "41")
                .insert_header("x-ratelimit-reset", "30"),
        )
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let clone = client.clone();

    clone.health().await.unwrap();

    assert_eq!(client.rate_limit().map(|r| r.remaining), Some(41));
}

#[test]
fn a_bad_base_url_or_key_is_refused_when_building() {
    for url in ["not a url", "ftp://example.com", ""] {
        let err = Client::new(url, TEST_KEY).unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{url}: {err:?}");
    }
    for key in ["", "   ", "mg_live_a\nb"] {
        let err = Client::new("http://127.0.0.1:8080", key).unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{key:?}: {err:?}");
        assert!(!err.to_string().contains(key.trim()) || key.trim().is_empty());
    }
}

#[test]
fn there_is_no_default_host_to_send_the_key_to() {
    let err = Client::builder().api_key(TEST_KEY).build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert!(err.to_string().contains("MEDIAGEN_BASE_URL"), "{err}");
}
