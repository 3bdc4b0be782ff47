//! The account, the dashboard summary and the magic link.

use reqwest::Method;
use serde_json::json;

use crate::{App, assert_conforms, image_request};

#[tokio::test]
async fn account_describes_the_owner_of_the_key() {
    let app = App::start().await;
    let reply = app.get("/v1/account").await;
    assert_eq!(reply.status, 200);
    assert_conforms("Account", &reply.body);
    assert_eq!(reply.body["id"], app.user_id.to_string());
    assert_eq!(reply.body["balanceRub"], 1000.0);
    assert_eq!(
        reply.body["limits"],
        json!({"concurrentGenerations": 5, "webhookEndpoints": 5, "requestsPerMinute": 60})
    );
}

#[tokio::test]
async fn summary_counts_generations_by_status_and_media_type_and_spending_net_of_refunds() {
    let app = App::start().await;
    app.create(image_request("kept")).await;
    app.create(image_request("mock:fail=content_policy")).await;
    app.create(json!({"modelSlug": "yandex-speechkit", "prompt": "привет"}))
        .await;
    app.mock.advance_clock(60.0).unwrap();
    app.create(image_request("still pending")).await;
    let reply = app.get("/v1/stats/summary").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_conforms("Summary", &reply.body);
    assert_eq!(reply.body["generations"], 4);
    assert_eq!(reply.body["byStatus"]["SUCCEEDED"], 2);
    assert_eq!(reply.body["byStatus"]["FAILED"], 1);
    assert_eq!(reply.body["byStatus"]["PENDING"], 1);
    assert_eq!(reply.body["spentRub"], 3.7, "kept charges only: 2.5 + 1.2");
    let image = reply.body["byMediaType"]
        .as_array()
        .expect("by type")
        .iter()
        .find(|m| m["mediaType"] == "IMAGE")
        .cloned()
        .expect("IMAGE");
    assert_eq!(
        (image["generations"].as_u64(), image["spentRub"].as_f64()),
        (Some(3), Some(2.5))
    );
    app.get("/v1/stats/summary?from=yesterday")
        .await
        .assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn magic_link_answers_the_same_whether_or_not_the_account_exists() {
    let app = App::start().await;
    let email = app.get("/v1/account").await.body["email"]
        .as_str()
        .expect("email")
        .to_owned();
    let known = app
        .send(
            Method::POST,
            "/v1/auth/magic-link/request",
            None,
            Some(json!({"email": email})),
        )
        .await;
    let unknown = app
        .send(
            Method::POST,
            "/v1/auth/magic-link/request",
            None,
            Some(json!({"email": "nobody@example.com"})),
        )
        .await;
    assert_eq!((known.status.as_u16(), unknown.status.as_u16()), (202, 202));
    assert_eq!(known.body, unknown.body);
    assert_conforms("MagicLinkAccepted", &known.body);
    let outbox = app.send(Method::GET, "/_mock/outbox", None, None).await;
    let sent = outbox.body["data"].as_array().expect("messages");
    assert_eq!(sent.len(), 1, "only the real account gets a message");
    assert_eq!(sent[0]["to"], email);
}

#[tokio::test]
async fn magic_link_requests_are_limited_to_ten_a_minute_per_address() {
    let app = App::start().await;
    for _ in 0..10 {
        let reply = app
            .send(
                Method::POST,
                "/v1/auth/magic-link/request",
                None,
                Some(json!({"email": "a@example.com"})),
            )
            .await;
        assert_eq!(reply.status, 202);
    }
    app.send(
        Method::POST,
        "/v1/auth/magic-link/request",
        None,
        Some(json!({"email": "a@example.com"})),
    )
    .await
    .assert_error(429, "RATE_LIMIT_ERROR");
}

#[tokio::test]
async fn magic_link_with_a_bad_address_is_400() {
    let app = App::start().await;
    app.send(
        Method::POST,
        "/v1/auth/magic-link/request",
        None,
        Some(json!({"email": "not an address"})),
    )
    .await
    .assert_error(400, "VALIDATION_ERROR");
}
