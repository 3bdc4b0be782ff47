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

#[tokio::test]
async fn wrong_method_is_405_in_the_envelope() {
    let app = App::start().await;
    let reply = app
        .send(Method::DELETE, "/v1/generations", Some(&app.key), None)
        .await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.code(), "NOT_FOUND");
    assert!(
        reply.header("allow").is_some_and(|a| a.contains("POST")),
        "{:?}",
        reply.headers
    );
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
            let unrouted = reply.status == 405
                || reply.status == 501
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
