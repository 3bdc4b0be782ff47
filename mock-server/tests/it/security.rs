//! What a hostile or careless caller must never get: secrets out of lists,
//! logs or `Debug`; another user's resources; the control API without its
//! token; the server down with oversized headers or bodies.

use axum::body::Body;
use axum::http::Request;
use futures::stream;
use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::fuzz::{ADMIN_TOKEN, Seeded, example_body};
use crate::{App, call};

#[tokio::test]
async fn keys_and_webhook_secrets_never_show_in_lists_logs_or_debug() {
    let seeded = Seeded::start().await;
    let app = &seeded.app;
    let created = app
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "https://example.com/other"}),
        )
        .await;
    let webhook_secret = created.body["secret"].as_str().expect("a secret");
    let key_secret = app.key.rsplit('_').next().expect("the secret part");
    let admin = Some(ADMIN_TOKEN);
    let mut shown = vec![
        // The mock's state shows its configuration, admin token included.
        format!("{:?}", app.mock),
    ];
    for path in [
        "/v1/webhook-endpoints".to_owned(),
        format!("/v1/webhook-endpoints/{}", seeded.ids.endpoint),
        format!("/v1/webhook-endpoints/{}/deliveries", seeded.ids.endpoint),
        "/v1/account".to_owned(),
    ] {
        shown.push(String::from_utf8_lossy(&app.get(&path).await.bytes).into_owned());
    }
    for path in [
        "/_mock/requests".to_owned(),
        "/_mock/deliveries".to_owned(),
        format!("/_mock/users/{}", app.user_id),
    ] {
        let reply = app.send(Method::GET, &path, admin, None).await;
        assert_eq!(reply.status, 200, "{path}");
        shown.push(String::from_utf8_lossy(&reply.bytes).into_owned());
    }
    // The key of the secret without its prefix, as base64 in a careless log.
    let webhook_key = webhook_secret.trim_start_matches("whsec_");
    for text in &shown {
        assert!(!text.contains(key_secret), "the API key leaks: {text}");
        assert!(
            !text.contains(webhook_key),
            "the webhook secret leaks: {text}"
        );
        assert!(!text.contains(ADMIN_TOKEN), "the admin token leaks: {text}");
    }
}

#[tokio::test]
async fn another_users_generation_endpoint_file_and_invoice_answer_404_and_stay_intact() {
    let seeded = Seeded::start().await;
    let other = seeded.app.mock.create_user(100.0).unwrap();
    let doc = mediagen_openapi::document().expect("contract");
    let ids = &seeded.ids;
    let mut checked = 0;
    for (template, item) in doc["paths"].as_object().expect("paths") {
        if !template.contains("{id}") {
            continue;
        }
        let own = if template.starts_with("/v1/generations") {
            &ids.generation
        } else if template.starts_with("/v1/webhook-endpoints") {
            &ids.endpoint
        } else if template.starts_with("/v1/files") {
            &ids.file
        } else {
            &ids.invoice
        };
        let path = template
            .replace("{id}", own)
            .replace("{messageId}", &ids.message);
        for method in ["get", "post", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let mut request = Request::builder()
                .method(method.to_uppercase().as_str())
                .uri(&path)
                .header("authorization", format!("Bearer {}", other.api_key));
            let body = match example_body(&doc, method, template) {
                Some(example) => {
                    request = request.header("content-type", "application/json");
                    Body::from(serde_json::to_vec(&example).expect("JSON"))
                }
                None => Body::empty(),
            };
            let reply = call(&seeded.router, request.body(body).expect("a request"))
                .await
                .expect("an answer");
            reply.assert_error(404, "NOT_FOUND");
            checked += 1;
        }
    }
    assert_eq!(checked, 13, "every operation on an owned resource");
    // The foreign DELETEs, PATCH and rotation changed nothing of the owner's.
    let app = &seeded.app;
    for path in [
        format!("/v1/generations/{}", ids.generation),
        format!("/v1/webhook-endpoints/{}", ids.endpoint),
        format!("/v1/files/{}", ids.file),
        format!("/v1/billing/invoices/{}/pdf", ids.invoice),
    ] {
        assert_eq!(app.get(&path).await.status, 200, "{path}");
    }
    let endpoint = app
        .get(&format!("/v1/webhook-endpoints/{}", ids.endpoint))
        .await;
    assert_eq!(endpoint.body["url"], "https://example.com/hooks");
}

#[tokio::test]
async fn every_control_route_refuses_a_missing_or_wrong_admin_token() {
    let seeded = Seeded::start().await;
    let app = &seeded.app;
    let user = app.user_id;
    let routes = [
        (Method::POST, "/_mock/users".to_owned()),
        (Method::GET, format!("/_mock/users/{user}")),
        (Method::POST, format!("/_mock/users/{user}/keys")),
        (Method::PUT, format!("/_mock/users/{user}/balance")),
        (Method::DELETE, "/_mock/keys/abc".to_owned()),
        (Method::GET, "/_mock/clock".to_owned()),
        (Method::POST, "/_mock/clock/advance".to_owned()),
        (Method::POST, "/_mock/models/flux-schnell/state".to_owned()),
        (Method::POST, "/_mock/outcomes".to_owned()),
        (Method::PUT, "/_mock/settings".to_owned()),
        (Method::GET, "/_mock/requests".to_owned()),
        (Method::GET, "/_mock/deliveries".to_owned()),
        (Method::PUT, "/_mock/dns".to_owned()),
        (Method::GET, "/_mock/outbox".to_owned()),
        (
            Method::POST,
            format!("/_mock/invoices/{}/pay", seeded.ids.invoice),
        ),
        (Method::POST, "/_mock/reset".to_owned()),
    ];
    // Same length as the token, one byte off; the test user's own API key; none.
    let near = format!("{}X", &ADMIN_TOKEN[..ADMIN_TOKEN.len() - 1]);
    for (method, path) in &routes {
        for token in [None, Some(near.as_str()), Some(app.key.as_str())] {
            app.send(method.clone(), path, token, Some(json!({})))
                .await
                .assert_error(401, "AUTHENTICATION_ERROR");
        }
    }
    let allowed = app
        .send(Method::GET, "/_mock/clock", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(allowed.status, 200);
    assert!(app.mock.balance(user).is_some(), "nothing was reset");
}

/// Sends raw bytes to the mock and reads the status line of the answer.
async fn raw_status(app: &App, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(app.mock.address())
        .await
        .expect("connect");
    // The server may answer and close before it has read everything.
    stream.write_all(request).await.ok();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.ok();
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn oversized_or_too_many_headers_are_refused_and_the_server_keeps_serving() {
    let app = App::start().await;
    let huge = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(1024 * 1024)
    );
    let many = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\n{}Connection: close\r\n\r\n",
        (0..500)
            .map(|n| format!("X-H{n}: v\r\n"))
            .collect::<String>()
    );
    for request in [huge, many] {
        let status = raw_status(&app, request.as_bytes()).await;
        assert!(status.starts_with("HTTP/1.1 431"), "{status:?}");
    }
    assert_eq!(app.get("/health").await.status, 200, "still serving");
}

#[tokio::test]
async fn a_streamed_body_over_the_limit_is_413_and_reserves_nothing() {
    let app = App::start().await;
    // No Content-Length: the limit must hold while the body streams in.
    let chunks = (0..64).map(|_| Ok::<_, std::io::Error>(vec![b' '; 32 * 1024]));
    let reply = app
        .http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(stream::iter(chunks)))
        .send()
        .await
        .expect("sent");
    let reply = crate::Reply::read(reply).await;
    reply.assert_error(413, "PAYLOAD_TOO_LARGE");
    assert_eq!(app.balance(), (1000.0, 0.0));
}

#[tokio::test]
async fn a_name_resolving_to_public_and_private_addresses_is_refused_at_creation() {
    let app = App::start().await;
    // One private answer among public ones is enough: a client may pick any.
    app.mock
        .set_dns(
            "mixed.example.com",
            vec![
                std::net::IpAddr::from([93, 184, 216, 34]),
                std::net::IpAddr::from([169, 254, 169, 254]),
            ],
        )
        .unwrap();
    let reply = app
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "https://mixed.example.com/hook"}),
        )
        .await;
    reply.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(
        reply.body["error"]["message"],
        Value::from("Private IP addresses are not allowed")
    );
}
