//! Response modes: `minimal` sends what the service document guarantees and no
//! more, area by area; `extra` adds a member and a header no client knows;
//! webhook bodies follow the mode; the control API switches it at run time.

use std::collections::BTreeSet;

use mediagen_mock_server::{MockServer, Responses};
use reqwest::Method;
use serde_json::{Value, json};

use crate::delivery::register;
use crate::receiver::Receiver;
use crate::{App, image_request};

async fn app(mode: Responses) -> App {
    App::with(
        MockServer::builder()
            .responses(mode)
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
    )
    .await
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

#[tokio::test]
async fn minimal_generations_carry_only_the_guaranteed_fields_for_each_status() {
    let app = app(Responses::Minimal).await;
    let created = app.create(image_request("p")).await;
    assert_eq!(created.status, 202);
    assert_eq!(keys(&created.body), set(&["id", "status", "costRub"]));
    let id = created.body["id"].as_str().expect("id").to_owned();
    let pending = app.get(&format!("/v1/generations/{id}")).await;
    assert_eq!(keys(&pending.body), set(&["id", "status", "costRub"]));

    app.mock.advance_clock(30.0).unwrap();
    let done = app.get(&format!("/v1/generations/{id}")).await;
    assert_eq!(done.body["status"], "SUCCEEDED");
    assert_eq!(
        keys(&done.body),
        set(&["id", "status", "costRub", "outputUrls"])
    );

    let failing = app.create(image_request("mock:fail=content_policy")).await;
    let failing = failing.body["id"].as_str().expect("id").to_owned();
    app.mock.advance_clock(30.0).unwrap();
    let failed = app.get(&format!("/v1/generations/{failing}")).await;
    assert_eq!(
        keys(&failed.body),
        set(&["id", "status", "costRub", "errorCode"])
    );

    let list = app.get("/v1/generations").await;
    assert_eq!(
        keys(&list.body),
        set(&["data", "hasMore"]),
        "a designed list keeps its required members"
    );
    for item in list.body["data"].as_array().expect("items") {
        assert!(keys(item).is_subset(&set(&[
            "id",
            "status",
            "costRub",
            "outputUrls",
            "errorCode"
        ])));
    }
    // Headers are not fields: the limits and the request id stay.
    assert!(list.header("x-ratelimit-reset").is_some() && list.header("x-request-id").is_some());
}

#[tokio::test]
async fn minimal_webhook_endpoints_carry_the_documents_lists_of_fields() {
    let app = app(Responses::Minimal).await;
    let created = app
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "http://127.0.0.1:9/hook"}),
        )
        .await;
    assert_eq!(
        keys(&created.body),
        set(&["id", "url", "secret", "eventTypes"])
    );
    let id = created.body["id"].as_str().expect("id").to_owned();
    let listed = app.get("/v1/webhook-endpoints").await;
    assert_eq!(
        keys(&listed.body["data"][0]),
        set(&[
            "id",
            "url",
            "eventTypes",
            "active",
            "failureCount",
            "lastDeliveryAt",
            "createdAt"
        ])
    );
    let rotated = app
        .post(
            &format!("/v1/webhook-endpoints/{id}/rotate-secret"),
            json!({}),
        )
        .await;
    assert_eq!(keys(&rotated.body), set(&["secret"]));
}

#[tokio::test]
async fn minimal_errors_keep_only_the_details_their_code_promises() {
    let app = app(Responses::Minimal).await;
    let invalid = app.create(json!({"modelSlug": "flux-schnell"})).await;
    invalid.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(keys(&invalid.body["error"]["details"]), set(&["fields"]));
    app.mock
        .set_model_state("flux-schnell", mediagen_mock_server::ModelState::Disabled)
        .unwrap();
    let disabled = app.create(image_request("p")).await;
    disabled.assert_error(403, "MODEL_NOT_AVAILABLE");
    assert!(
        disabled.body["error"].get("details").is_none(),
        "modelSlug is designed, not promised"
    );
    app.mock
        .set_model_state("flux-schnell", mediagen_mock_server::ModelState::Available)
        .unwrap();
    app.control(
        Method::PUT,
        &format!("/_mock/users/{}/balance", app.user_id),
        json!({"balanceRub": 0.01}),
    )
    .await;
    let poor = app.create(image_request("p")).await;
    poor.assert_error(402, "INSUFFICIENT_BALANCE");
    assert_eq!(
        keys(&poor.body["error"]["details"]),
        set(&["required", "available"])
    );
}

#[tokio::test]
async fn minimal_webhook_bodies_carry_the_documents_payload_fields() {
    let app = app(Responses::Minimal).await;
    let receiver = Receiver::start().await;
    register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    app.create(image_request("mock:fail=content_policy")).await;
    app.mock.advance_clock(30.0).unwrap();
    let received = receiver.wait_for(2).await;
    let by_type = |t: &str| {
        received
            .iter()
            .find(|r| r.body["type"] == t)
            .map(|r| r.body.clone())
            .expect("the event")
    };
    let completed = by_type("generation.completed");
    assert_eq!(keys(&completed), set(&["id", "type", "created_at", "data"]));
    assert_eq!(
        keys(&completed["data"]["generation"]),
        set(&[
            "id",
            "status",
            "media_type",
            "output_urls",
            "cost_rub",
            "completed_at"
        ])
    );
    let failed = by_type("generation.failed");
    assert_eq!(
        keys(&failed["data"]["generation"]),
        set(&["id", "error_code", "error_message", "failed_at"])
    );
    assert!(
        received.iter().all(|r| r.verified),
        "still signed over the bytes sent"
    );
}

/// Every object of `value`, at any depth, carries the unknown member.
fn every_object_is_marked(value: &Value, at: &str) {
    match value {
        Value::Object(object) => {
            assert!(object.contains_key("mockExtra"), "{at} lacks it: {value}");
            for (k, v) in object {
                if k != "mockExtra" {
                    every_object_is_marked(v, &format!("{at}/{k}"));
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                every_object_is_marked(v, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn extra_adds_an_unknown_member_to_every_record_and_an_unknown_header() {
    let app = app(Responses::Extra).await;
    let created = app.create(image_request("p")).await;
    assert!(created.header("x-mock-extra").is_some());
    every_object_is_marked(&created.body, "");
    app.mock.advance_clock(30.0).unwrap();
    let listed = app.get("/v1/generations").await;
    every_object_is_marked(&listed.body["data"], "/data");
    let invalid = app.create(json!({})).await;
    assert_eq!(invalid.code(), "VALIDATION_ERROR");
    assert!(invalid.body["error"]["mockExtra"].is_object());
    assert!(invalid.body["error"]["details"]["fields"][0]["mockExtra"].is_object());
}

#[tokio::test]
async fn extra_webhook_bodies_and_deliveries_carry_the_unknown_member_and_header() {
    let app = app(Responses::Extra).await;
    let receiver = Receiver::start().await;
    register(&app, &receiver, json!([])).await;
    app.create(image_request("p")).await;
    app.mock.advance_clock(30.0).unwrap();
    let received = receiver.wait_for(1).await;
    let body = &received[0].body;
    assert!(body["mockExtra"].is_object() && body["data"]["generation"]["mockExtra"].is_object());
    assert!(received[0].verified);
    assert_eq!(
        received[0].extra_header.as_deref(),
        Some("a header no client knows; ignore it")
    );
}

#[tokio::test]
async fn the_control_api_switches_the_mode_at_run_time() {
    let app = App::start().await;
    let created = app.create(image_request("p")).await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    let full = app.get(&format!("/v1/generations/{id}")).await;
    assert!(
        full.body.get("modelSlug").is_some(),
        "full sends designed fields"
    );
    let settings = app
        .control(
            Method::PUT,
            "/_mock/settings",
            json!({"responses": "minimal"}),
        )
        .await;
    assert_eq!(settings.body["responses"], "minimal");
    let minimal = app.get(&format!("/v1/generations/{id}")).await;
    assert_eq!(keys(&minimal.body), set(&["id", "status", "costRub"]));
    let read = app.control(Method::GET, "/_mock/settings", json!({})).await;
    assert_eq!(read.body["responses"], "minimal");
    app.control(Method::PUT, "/_mock/settings", json!({"responses": "loud"}))
        .await
        .assert_error(400, "VALIDATION_ERROR");
    app.control(Method::POST, "/_mock/reset", json!({})).await;
    let read = app.control(Method::GET, "/_mock/settings", json!({})).await;
    assert_eq!(
        read.body["responses"], "full",
        "reset restores the configured mode"
    );
}
