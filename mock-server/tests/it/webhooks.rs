//! The webhook endpoint API and its address rules.

use std::net::IpAddr;

use mediagen_mock_server::{MockServer, Responses};
use reqwest::Method;
use serde_json::{Value, json};

use crate::{App, assert_conforms};

const HOOK: &str = "https://hooks.example.com/mediagen";

/// A mock with the service's address rules, where hooks.example.com resolves
/// to a public address (no traffic goes there: these tests never deliver).
async fn app() -> App {
    let app = App::start().await;
    app.mock
        .set_dns("hooks.example.com", vec![IpAddr::from([93, 184, 216, 34])]);
    app
}

async fn create(app: &App, body: Value) -> crate::Reply {
    app.post("/v1/webhook-endpoints", body).await
}

/// The document: the list "contains only `id`, `url`, `eventTypes`, `active`,
/// `failureCount`, `lastDeliveryAt`, `createdAt`", in every response mode
/// (`extra` adds its one unknown member to every record, as it does
/// everywhere); a read keeps the designed fields.
#[tokio::test]
async fn list_items_carry_exactly_the_documents_seven_fields_in_every_mode() {
    let app = app().await;
    let created = create(&app, json!({"url": HOOK, "description": "prod"})).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let seven = [
        "active",
        "createdAt",
        "eventTypes",
        "failureCount",
        "id",
        "lastDeliveryAt",
        "url",
    ];
    for (mode, extra) in [
        (Responses::Full, None),
        (Responses::Minimal, None),
        (Responses::Extra, Some("mockExtra")),
    ] {
        let mut settings = app.mock.get_settings();
        settings.responses = mode;
        app.mock.update_settings(settings);
        let listed = app.get("/v1/webhook-endpoints").await;
        assert_conforms("WebhookEndpointList", &listed.body);
        let mut keys: Vec<&str> = listed.body["data"][0]
            .as_object()
            .expect("an item")
            .keys()
            .map(String::as_str)
            .filter(|key| Some(*key) != extra)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, seven, "{mode:?}");
    }
    let mut settings = app.mock.get_settings();
    settings.responses = Responses::Full;
    app.mock.update_settings(settings);
    let id = created.body["id"].as_str().expect("id");
    let read = app.get(&format!("/v1/webhook-endpoints/{id}")).await;
    assert_eq!(read.body["description"], "prod");
    assert_eq!(read.body["disabledReason"], Value::Null);
}

#[tokio::test]
async fn create_answers_201_with_id_url_secret_and_event_types_only() {
    let app = app().await;
    let reply = create(&app, json!({"url": HOOK, "eventTypes": ["generation.*"]})).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_conforms("WebhookEndpointCreated", &reply.body);
    let mut keys: Vec<_> = reply
        .body
        .as_object()
        .expect("object")
        .keys()
        .cloned()
        .collect();
    keys.sort();
    assert_eq!(keys, ["eventTypes", "id", "secret", "url"]);
    assert!(
        reply.body["secret"]
            .as_str()
            .is_some_and(|s| s.starts_with("whsec_"))
    );
    webhook_verify::Webhook::new(reply.body["secret"].as_str().expect("secret"))
        .expect("a usable secret");
}

#[tokio::test]
async fn list_and_get_never_show_the_secret() {
    let app = app().await;
    let created = create(&app, json!({"url": HOOK})).await;
    let secret = created.body["secret"].as_str().expect("secret").to_owned();
    let list = app.get("/v1/webhook-endpoints").await;
    assert_conforms("WebhookEndpointList", &list.body);
    let one = app
        .get(&format!(
            "/v1/webhook-endpoints/{}",
            created.body["id"].as_str().expect("id")
        ))
        .await;
    assert_conforms("WebhookEndpoint", &one.body);
    for text in [list.body.to_string(), one.body.to_string()] {
        assert!(
            !text.contains(&secret) && !text.contains("\"secret\""),
            "{text}"
        );
    }
    let entry = &list.body["data"][0];
    for field in [
        "id",
        "url",
        "eventTypes",
        "active",
        "failureCount",
        "lastDeliveryAt",
        "createdAt",
    ] {
        assert!(entry.get(field).is_some(), "{field}");
    }
}

#[tokio::test]
async fn sixth_endpoint_is_refused_with_the_documented_message() {
    let app = app().await;
    for _ in 0..5 {
        assert_eq!(create(&app, json!({"url": HOOK})).await.status, 201);
    }
    let reply = create(&app, json!({"url": HOOK})).await;
    reply.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(
        reply.body["error"]["message"],
        "Maximum 5 webhook endpoints allowed"
    );
    assert_eq!(
        reply.body["error"]["details"]["fields"][0]["params"]["limit"],
        5
    );
}

async fn refused_with(app: &App, url: &str, message: &str) {
    let reply = create(app, json!({"url": url})).await;
    assert_eq!(reply.status, 400, "{url}: {}", reply.body);
    assert_eq!(reply.code(), "VALIDATION_ERROR", "{url}");
    assert_eq!(reply.body["error"]["message"], message, "{url}");
}

#[tokio::test]
async fn schemes_other_than_http_and_https_are_refused() {
    let app = app().await;
    for url in [
        "ftp://hooks.example.com/x",
        "file:///etc/passwd",
        "gopher://hooks.example.com",
    ] {
        refused_with(&app, url, "Only http and https URLs are allowed").await;
    }
}

#[tokio::test]
async fn localhost_in_any_spelling_is_refused() {
    let app = app().await;
    for url in [
        "http://localhost/x",
        "http://LOCALHOST./x",
        "https://api.localhost/x",
        "http://LocalHost:8080/",
    ] {
        refused_with(&app, url, "Localhost URLs are not allowed").await;
    }
}

#[tokio::test]
async fn private_addresses_in_any_spelling_are_refused() {
    let app = app().await;
    for url in [
        "http://127.0.0.1/x",
        "http://[::1]/x",
        "http://10.1.2.3/x",
        "http://172.16.0.1/x",
        "http://192.168.1.1/x",
        "http://100.64.0.1/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[fc00::1]/x",
        "http://[fe80::1]/x",
        "http://[::ffff:10.0.0.1]/x",
        "http://0.0.0.0/x",
        "http://2130706433/x",
        "http://0x7f000001/x",
        "http://0177.0.0.1/x",
    ] {
        refused_with(&app, url, "Private IP addresses are not allowed").await;
    }
}

#[tokio::test]
async fn a_name_resolving_to_a_private_address_is_refused() {
    let app = app().await;
    app.mock
        .set_dns("internal.example.com", vec![IpAddr::from([10, 0, 0, 7])]);
    refused_with(
        &app,
        "https://internal.example.com/hook",
        "Private IP addresses are not allowed",
    )
    .await;
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_refused() {
    let app = app().await;
    // An empty answer, pinned, so the test sends no DNS query off the machine.
    app.mock.set_dns("no-such-host.invalid", Vec::new());
    refused_with(
        &app,
        "https://no-such-host.invalid/hook",
        "DNS resolution failed for the provided hostname",
    )
    .await;
}

#[tokio::test]
async fn unknown_event_type_is_refused_listing_the_allowed_values() {
    let app = app().await;
    let reply = create(
        &app,
        json!({"url": HOOK, "eventTypes": ["generation.succeeded"]}),
    )
    .await;
    reply.assert_error(400, "VALIDATION_ERROR");
    let message = reply.body["error"]["message"].as_str().expect("message");
    for allowed in [
        "generation.completed",
        "generation.failed",
        "generation.*",
        "*",
    ] {
        assert!(message.contains(allowed), "{message}");
    }
    assert_eq!(
        reply.body["error"]["details"]["allowedValues"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );
}

#[tokio::test]
async fn update_changes_fields_and_active_true_reactivates() {
    let app = app().await;
    let id = create(&app, json!({"url": HOOK})).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let path = format!("/v1/webhook-endpoints/{id}");
    let off = app
        .send(
            Method::PATCH,
            &path,
            Some(&app.key),
            Some(json!({"active": false, "eventTypes": ["generation.failed"]})),
        )
        .await;
    assert_eq!(off.status, 200, "{}", off.body);
    assert_eq!(
        (
            off.body["active"].as_bool(),
            off.body["disabledReason"].as_str()
        ),
        (Some(false), Some("manual"))
    );
    let on = app
        .send(
            Method::PATCH,
            &path,
            Some(&app.key),
            Some(json!({"active": true})),
        )
        .await;
    assert_eq!(
        (
            on.body["active"].as_bool(),
            on.body["failureCount"].as_u64()
        ),
        (Some(true), Some(0))
    );
    assert_eq!(on.body["eventTypes"], json!(["generation.failed"]));
    assert_conforms("WebhookEndpoint", &on.body);
    let bad = app
        .send(
            Method::PATCH,
            &path,
            Some(&app.key),
            Some(json!({"url": "http://10.0.0.1/"})),
        )
        .await;
    bad.assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn delete_removes_the_endpoint() {
    let app = app().await;
    let id = create(&app, json!({"url": HOOK})).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let path = format!("/v1/webhook-endpoints/{id}");
    assert_eq!(
        app.send(Method::DELETE, &path, Some(&app.key), None)
            .await
            .status,
        204
    );
    app.get(&path).await.assert_error(404, "NOT_FOUND");
}

#[tokio::test]
async fn rotate_secret_answers_a_new_secret_once() {
    let app = app().await;
    let created = create(&app, json!({"url": HOOK})).await;
    let id = created.body["id"].as_str().expect("id");
    let rotated = app
        .post(
            &format!("/v1/webhook-endpoints/{id}/rotate-secret"),
            json!({}),
        )
        .await;
    assert_eq!(rotated.status, 200);
    assert_conforms("WebhookSecret", &rotated.body);
    assert_ne!(rotated.body["secret"], created.body["secret"]);
}

#[tokio::test]
async fn another_users_endpoint_is_404() {
    let app = app().await;
    let id = create(&app, json!({"url": HOOK})).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let other = app.mock.create_user(10.0);
    for (method, path) in [
        (Method::GET, format!("/v1/webhook-endpoints/{id}")),
        (Method::DELETE, format!("/v1/webhook-endpoints/{id}")),
        (
            Method::POST,
            format!("/v1/webhook-endpoints/{id}/rotate-secret"),
        ),
    ] {
        app.send(method, &path, Some(&other.api_key), None)
            .await
            .assert_error(404, "NOT_FOUND");
    }
}

#[tokio::test]
async fn allow_private_webhooks_lets_ci_receivers_on_loopback_register() {
    let mock = MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let app = App::with(mock).await;
    let reply = create(&app, json!({"url": "http://127.0.0.1:9/hook"})).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    refused_with(
        &app,
        "ftp://127.0.0.1/hook",
        "Only http and https URLs are allowed",
    )
    .await;
}
