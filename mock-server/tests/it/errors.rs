use reqwest::Method;
use serde_json::json;

use crate::App;

#[tokio::test]
async fn body_that_is_not_json_is_400_validation_error() {
    let app = App::start().await;
    let reply = app
        .http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("sent");
    let reply = crate::Reply::read(reply).await;
    reply.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(
        reply.body["error"]["details"]["fields"][0]["keyword"],
        "json"
    );
}

#[tokio::test]
async fn wrong_content_type_is_415_unsupported_media_type() {
    let app = App::start().await;
    let reply = app
        .http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .header("content-type", "text/plain")
        .body(r#"{"modelSlug":"flux-schnell","prompt":"p"}"#)
        .send()
        .await
        .expect("sent");
    crate::Reply::read(reply)
        .await
        .assert_error(415, "UNSUPPORTED_MEDIA_TYPE");
}

#[tokio::test]
async fn body_over_the_limit_is_413_payload_too_large() {
    let app = App::start().await;
    let prompt = "a".repeat(2 * 1024 * 1024);
    let reply = app
        .create(json!({"modelSlug": "flux-schnell", "prompt": prompt}))
        .await;
    reply.assert_error(413, "PAYLOAD_TOO_LARGE");
    assert_eq!(app.balance(), (1000.0, 0.0), "nothing was reserved");
}

#[tokio::test]
async fn unknown_route_is_404_in_the_envelope() {
    let app = App::start().await;
    app.get("/v1/no-such-thing")
        .await
        .assert_error(404, "NOT_FOUND");
}

/// A method a path lacks is an unknown route like any other: the document's
/// status table has no 405, and its code table pairs `NOT_FOUND` with 404.
#[tokio::test]
async fn a_method_no_path_of_the_contract_has_is_404_not_found_with_allow() {
    let app = App::unlimited().await;
    let doc = mediagen_openapi::document().expect("contract");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let has: Vec<String> = ["get", "post", "put", "patch", "delete"]
            .into_iter()
            .filter(|m| item.get(*m).is_some())
            .map(str::to_uppercase)
            .collect();
        let concrete = path
            .replace("{id}", "00000000-0000-4000-8000-000000000000")
            .replace("{messageId}", "00000000-0000-4000-8000-000000000000");
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            if has.iter().any(|m| m == method) {
                continue;
            }
            let method = Method::from_bytes(method.as_bytes()).expect("method");
            let reply = app
                .send(method.clone(), &concrete, Some(&app.key), None)
                .await;
            reply.assert_error(404, "NOT_FOUND");
            let allow = reply.header("allow").unwrap_or_default();
            for own in &has {
                assert!(
                    allow.contains(own.as_str()),
                    "{method} {path}: Allow {allow:?}"
                );
            }
        }
    }
    // The control API answers the same way.
    let reply = app.send(Method::DELETE, "/_mock/clock", None, None).await;
    reply.assert_error(404, "NOT_FOUND");
    assert_eq!(reply.header("allow"), Some("GET,HEAD"));
    let reply = app.send(Method::PUT, "/_mock/worlds", None, None).await;
    reply.assert_error(404, "NOT_FOUND");
    assert!(reply.header("allow").is_some_and(|a| a.contains("POST")));
}

/// The limits are the routes' own: however spent the general limit is, an
/// unknown path or method is told it does not exist, never to wait.
#[tokio::test]
async fn an_unknown_route_is_never_refused_by_a_limit() {
    let mock = mediagen_mock_server::MockServer::start().await;
    let world = mock.world().await;
    let http = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", world.uri());
    for _ in 0..62 {
        http.get(url("/v1/catalog/")).send().await.expect("sent");
    }
    let spent = http.get(url("/v1/catalog/")).send().await.expect("sent");
    assert_eq!(spent.status(), 429, "the general limit is spent");
    for (method, path) in [
        (Method::GET, "/_mock/nosuch"),
        (Method::GET, "/v1/nothing"),
        (Method::PUT, "/v1/generations"),
    ] {
        let reply = crate::Reply::read(
            http.request(method.clone(), url(path))
                .send()
                .await
                .expect("sent"),
        )
        .await;
        reply.assert_error(404, "NOT_FOUND");
        assert!(reply.header("retry-after").is_none(), "{method} {path}");
    }
}

#[tokio::test]
async fn every_operation_of_the_contract_is_served() {
    let app = App::unlimited().await;
    let doc = mediagen_openapi::document().expect("contract");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let concrete = path
                .replace("{id}", "00000000-0000-4000-8000-000000000000")
                .replace("{messageId}", "00000000-0000-4000-8000-000000000000");
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let reply = app
                .send(method.clone(), &concrete, Some(&app.key), Some(json!({})))
                .await;
            let unrouted = reply.status == 501
                || reply.body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("No route"));
            assert!(
                !unrouted,
                "{method} {path}: {} {}",
                reply.status, reply.body
            );
            assert!(
                reply.status.as_u16() < 500,
                "{method} {path}: {} {}",
                reply.status,
                reply.body
            );
        }
    }
}

#[tokio::test]
async fn request_id_header_matches_the_error_body() {
    let app = App::start().await;
    let reply = app.send(Method::GET, "/v1/generations", None, None).await;
    assert_eq!(
        reply.header("x-request-id"),
        reply.body["error"]["requestId"].as_str()
    );
}

#[tokio::test]
async fn a_generation_id_that_is_not_a_uuid_names_no_generation() {
    let app = App::start().await;
    app.get("/v1/generations/not-a-uuid")
        .await
        .assert_error(404, "NOT_FOUND");
    app.post("/v1/generations/not-a-uuid/cancel", json!({}))
        .await
        .assert_error(404, "NOT_FOUND");
    // Other areas keep reading a malformed id as a malformed request.
    app.get("/v1/files/not-a-uuid")
        .await
        .assert_error(400, "VALIDATION_ERROR");
}

/// One rule for every error's `timestamp`: the world's clock, the clock of
/// the records the error is about, for the service's errors and the control
/// API's alike.
#[tokio::test]
async fn every_error_carries_the_worlds_clock_time() {
    let app = App::start().await;
    app.mock.advance_clock(3.0 * 86_400.0);
    let now = app
        .mock
        .now()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let service = app
        .get("/v1/generations/00000000-0000-4000-8000-000000000000")
        .await;
    let control = app
        .control(Method::POST, "/_mock/clock/advance", json!({"seconds": -1}))
        .await;
    let unknown = app.control(Method::GET, "/_mock/nosuch", json!({})).await;
    let world = app
        .control(Method::GET, "/worlds/w_nosuch/v1/generations", json!({}))
        .await;
    for reply in [&service, &control, &unknown, &world] {
        assert!(reply.status.is_client_error(), "{}", reply.body);
        assert_eq!(reply.body["error"]["timestamp"], now, "{}", reply.body);
    }
}
