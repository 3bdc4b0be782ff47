//! Files: the upload request, the presigned PUT, get, delete, and generations
//! that reference a file or an external link.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{App, assert_conforms};

async fn request_upload(app: &App, content_type: &str, size: u64) -> crate::Reply {
    app.post(
        "/v1/files",
        json!({"filename": "frame.png", "contentType": content_type, "sizeBytes": size}),
    )
    .await
}

async fn put(app: &App, url: &str, content_type: &str, bytes: Vec<u8>) -> reqwest::StatusCode {
    app.http
        .put(url)
        .header("content-type", content_type)
        .body(bytes)
        .send()
        .await
        .expect("upload reaches the mock")
        .status()
}

#[tokio::test]
async fn upload_request_answers_a_signed_expiring_put_url_that_stores_the_bytes() {
    let app = App::start().await;
    let reply = request_upload(&app, "image/png", 4).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_conforms("FileUpload", &reply.body);
    let url = reply.body["uploadUrl"].as_str().expect("url").to_owned();
    assert!(url.contains("signature=") && url.contains("expires="));
    assert_eq!(put(&app, &url, "image/png", b"\x89PNG".to_vec()).await, 200);
    let id = reply.body["fileId"].as_str().expect("id");
    let file = app.get(&format!("/v1/files/{id}")).await;
    assert_conforms("File", &file.body);
    assert_eq!(file.body["status"], "uploaded");
    let bytes = app
        .http
        .get(reply.body["fileUrl"].as_str().expect("file url"))
        .send()
        .await
        .expect("get")
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(&bytes[..], b"\x89PNG");
}

#[tokio::test]
async fn a_tampered_or_expired_upload_url_is_refused() {
    let app = App::start().await;
    let reply = request_upload(&app, "image/png", 4).await;
    let url = reply.body["uploadUrl"].as_str().expect("url").to_owned();
    let tampered = url.replace("expires=", "expires=9");
    assert_eq!(
        put(&app, &tampered, "image/png", b"1234".to_vec()).await,
        403
    );
    app.mock.advance_clock(16.0 * 60.0).unwrap();
    assert_eq!(
        put(&app, &url, "image/png", b"1234".to_vec()).await,
        403,
        "expired after 15 minutes"
    );
}

#[tokio::test]
async fn more_bytes_than_declared_or_another_type_are_refused() {
    let app = App::start().await;
    let reply = request_upload(&app, "image/png", 2).await;
    let url = reply.body["uploadUrl"].as_str().expect("url").to_owned();
    assert_eq!(put(&app, &url, "image/png", b"123".to_vec()).await, 400);
    assert_eq!(put(&app, &url, "image/jpeg", b"12".to_vec()).await, 400);
}

#[tokio::test]
async fn too_large_a_file_is_400_with_the_limit() {
    let app = App::start().await;
    let reply = request_upload(&app, "image/png", 20 * 1024 * 1024 + 1).await;
    reply.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(
        reply.body["error"]["details"]["maxSizeBytes"],
        20 * 1024 * 1024
    );
}

#[tokio::test]
async fn unsupported_file_type_is_400() {
    let app = App::start().await;
    request_upload(&app, "application/x-msdownload", 10)
        .await
        .assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn upload_requests_are_limited_to_twenty_a_minute_per_address() {
    let app = App::start().await;
    for i in 0..20 {
        let reply = request_upload(&app, "image/png", 4).await;
        assert_eq!(reply.status, 201, "request {i}");
        assert_eq!(reply.header("x-ratelimit-limit"), Some("20"));
    }
    let refused = request_upload(&app, "image/png", 4).await;
    refused.assert_error(429, "RATE_LIMIT_ERROR");
    assert!(refused.header("retry-after").is_some());
}

#[tokio::test]
async fn deleted_file_is_gone_and_another_users_file_is_404() {
    let app = App::start().await;
    let id = request_upload(&app, "image/png", 4).await.body["fileId"]
        .as_str()
        .expect("id")
        .to_owned();
    let other = app.mock.create_user(1.0).unwrap();
    app.send(
        Method::GET,
        &format!("/v1/files/{id}"),
        Some(&other.api_key),
        None,
    )
    .await
    .assert_error(404, "NOT_FOUND");
    assert_eq!(
        app.send(
            Method::DELETE,
            &format!("/v1/files/{id}"),
            Some(&app.key),
            None
        )
        .await
        .status,
        204
    );
    app.get(&format!("/v1/files/{id}"))
        .await
        .assert_error(404, "NOT_FOUND");
}

async fn video_from(app: &App, params: Value) -> Value {
    let mut params = params;
    params["duration"] = json!(5);
    let id = app
        .create(
            json!({"modelSlug": "kling-2-1", "prompt": "the frame comes alive", "params": params}),
        )
        .await
        .body["id"]
        .clone();
    app.mock.advance_clock(300.0).unwrap();
    app.get(&format!("/v1/generations/{}", id.as_str().expect("id")))
        .await
        .body
}

#[tokio::test]
async fn a_generation_can_use_an_uploaded_file() {
    let app = App::start().await;
    let reply = request_upload(&app, "image/png", 4).await;
    put(
        &app,
        reply.body["uploadUrl"].as_str().expect("url"),
        "image/png",
        b"\x89PNG".to_vec(),
    )
    .await;
    let done = video_from(&app, json!({"image_file_id": reply.body["fileId"]})).await;
    assert_eq!(done["status"], "SUCCEEDED", "{done}");
}

#[tokio::test]
async fn a_missing_or_deleted_file_fails_the_task_with_input_fetch_failed() {
    let app = App::start().await;
    let reply = request_upload(&app, "image/png", 4).await;
    let id = reply.body["fileId"].as_str().expect("id").to_owned();
    app.send(
        Method::DELETE,
        &format!("/v1/files/{id}"),
        Some(&app.key),
        None,
    )
    .await;
    let failed = video_from(&app, json!({"image_file_id": id})).await;
    assert_eq!(
        (failed["status"].as_str(), failed["errorCode"].as_str()),
        (Some("FAILED"), Some("input_fetch_failed"))
    );
    let never_uploaded = request_upload(&app, "image/png", 4).await.body["fileId"].clone();
    let failed = video_from(&app, json!({"image_file_id": never_uploaded})).await;
    assert_eq!(failed["errorCode"], "input_fetch_failed");
}

#[tokio::test]
async fn an_external_reference_that_cannot_be_downloaded_fails_with_reference_fetch_failed() {
    let app = App::start().await;
    let failed = video_from(
        &app,
        json!({"image_url": "https://images.example.com/frame.png"}),
    )
    .await;
    assert_eq!(failed["errorCode"], "reference_fetch_failed");
    assert_eq!(app.balance().1, 0.0, "refunded");
}
