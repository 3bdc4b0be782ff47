//! Limits, rules 1-3: per IP, headers on every response, 429 with retry-after.

use reqwest::Method;
use serde_json::json;

use crate::{App, image_request};

#[tokio::test]
async fn every_response_carries_the_rate_limit_headers_errors_included() {
    let app = App::start().await;
    for reply in [
        app.send(Method::GET, "/health", None, None).await,
        app.get("/v1/generations").await,
        app.send(Method::GET, "/v1/generations", None, None).await,
        app.create(json!({})).await,
    ] {
        assert_eq!(
            reply.header("x-ratelimit-limit"),
            Some("60"),
            "{:?}",
            reply.status
        );
        assert!(reply.header("x-ratelimit-remaining").is_some());
        assert!(reply.header("x-ratelimit-reset").is_some());
    }
}

#[tokio::test]
async fn sixty_first_request_in_a_minute_is_429_with_retry_after_until_the_window_resets() {
    let app = App::start().await;
    for i in 0..60 {
        let reply = app.send(Method::GET, "/health", None, None).await;
        assert_eq!(reply.status, 200, "request {i}");
        assert_eq!(
            reply.header("x-ratelimit-remaining"),
            Some((59 - i).to_string().as_str())
        );
    }
    app.mock.advance_clock(20.0).unwrap();
    let refused = app.get("/v1/generations").await;
    refused.assert_error(429, "RATE_LIMIT_ERROR");
    assert_eq!(refused.header("retry-after"), Some("40"));
    assert_eq!(refused.body["error"]["details"]["retryAfter"], 40);
    app.mock.advance_clock(40.0).unwrap();
    assert_eq!(app.get("/v1/generations").await.status, 200);
}

#[tokio::test]
async fn a_request_the_general_limit_refuses_leaves_its_routes_window_alone() {
    let app = App::start().await;
    for _ in 0..60 {
        app.send(Method::GET, "/health", None, None).await;
    }
    app.mock.advance_clock(45.0).unwrap();
    let refused = app
        .post(
            "/v1/files",
            json!({"filename": "a.png", "contentType": "image/png", "sizeBytes": 10}),
        )
        .await;
    refused.assert_error(429, "RATE_LIMIT_ERROR");
    // The headers speak of the route's own limit, untouched; the wait is the
    // general window's, which refused it.
    assert_eq!(refused.header("x-ratelimit-limit"), Some("20"));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("20"));
    assert_eq!(refused.header("retry-after"), Some("15"));
    assert_eq!(refused.body["error"]["details"]["retryAfter"], 15);
    assert_eq!(refused.body["error"]["details"]["limit"], 60);
}

#[tokio::test]
async fn limit_is_per_address_so_keys_behind_one_address_share_it() {
    let app = App::start().await;
    let other = app.mock.create_user(100.0).unwrap();
    for _ in 0..30 {
        app.get("/v1/generations").await;
        app.send(Method::GET, "/v1/generations", Some(&other.api_key), None)
            .await;
    }
    app.get("/v1/generations")
        .await
        .assert_error(429, "RATE_LIMIT_ERROR");
}

#[tokio::test]
async fn control_api_is_outside_the_limits() {
    let app = App::start().await;
    for _ in 0..100 {
        assert_eq!(
            app.send(Method::GET, "/_mock/clock", None, None)
                .await
                .status,
            200
        );
    }
    assert_eq!(
        app.create(image_request("p"))
            .await
            .header("x-ratelimit-remaining"),
        Some("59")
    );
}

#[tokio::test]
async fn with_limits_off_requests_are_counted_but_never_refused() {
    let app = App::unlimited().await;
    for _ in 0..70 {
        let reply = app.send(Method::GET, "/health", None, None).await;
        assert_eq!(reply.status, 200);
        assert!(reply.header("x-ratelimit-limit").is_some());
    }
}
