//! Uploads through presigned URLs (wiremock: the mock does not serve files
//! yet) and downloads of result files (the mock's real outputs).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mediagen::{GenerationRequest, Progress};
use serde_json::json;
use uuid::Uuid;
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{App, InstantClock, TEST_KEY, wire_client, within_deadline};

/// A fresh directory under the system's temporary one.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mediagen-sdk-test-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn presigning(server: &MockServer, file_id: Uuid, size: usize) {
    Mock::given(method("POST"))
        .and(path("/v1/files"))
        .and(body_json(
            json!({"filename": "cat.png", "contentType": "image/png", "sizeBytes": size}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "fileId": file_id,
            "uploadUrl": format!("{}/storage/upload/{file_id}?signature=abc", server.uri()),
            "uploadMethod": "PUT",
            "uploadHeaders": {"Content-Type": "image/png"},
            "expiresAt": "2026-11-22T10:30:30.123Z",
            "fileUrl": format!("{}/storage/files/{file_id}", server.uri()),
            "maxSizeBytes": 20_971_520
        })))
        .expect(1)
        .mount(server)
        .await;
}

#[tokio::test]
async fn an_upload_asks_for_a_url_then_streams_the_bytes_there_without_the_key() {
    let server = MockServer::start().await;
    let file_id = Uuid::new_v4();
    let bytes: Vec<u8> = (0..200_000_u32).map(|i| (i % 251) as u8).collect();
    presigning(&server, file_id, bytes.len()).await;
    Mock::given(method("PUT"))
        .and(path(format!("/storage/upload/{file_id}")))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&server)
        .await;
    let dir = scratch();
    let file = dir.join("cat.png");
    std::fs::write(&file, &bytes).unwrap();
    let client = wire_client(&server, &InstantClock::new());
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&progress);

    let uploaded = client
        .files()
        .upload(&file)
        .on_progress(move |p| sink.lock().unwrap().push(p))
        .await
        .unwrap();

    assert_eq!(uploaded.file_id, file_id);
    assert_eq!(uploaded.size_bytes, bytes.len() as u64);
    let requests = server.received_requests().await.unwrap();
    let put = requests
        .iter()
        .find(|r| r.method.as_str() == "PUT")
        .unwrap();
    assert_eq!(put.body, bytes);
    assert!(
        put.headers.get("authorization").is_none(),
        "the key went to storage"
    );
    assert_eq!(put.headers.get("content-type").unwrap(), "image/png");
    let post = requests
        .iter()
        .find(|r| r.method.as_str() == "POST")
        .unwrap();
    assert_eq!(
        post.headers.get("authorization").unwrap().to_str().unwrap(),
        format!("Bearer {TEST_KEY}")
    );
    let progress = progress.lock().unwrap();
    assert_eq!(
        progress.last(),
        Some(&Progress {
            bytes: bytes.len() as u64,
            total: Some(bytes.len() as u64)
        })
    );
    assert!(progress.windows(2).all(|w| w[0].bytes <= w[1].bytes));
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn an_upload_put_that_fails_transiently_is_sent_again_whole() {
    let server = MockServer::start().await;
    let file_id = Uuid::new_v4();
    let bytes = vec![42_u8; 70_000];
    presigning(&server, file_id, bytes.len()).await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    client
        .files()
        .upload_bytes("cat.png", bytes.clone())
        .await
        .unwrap();

    let puts: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "PUT")
        .collect();
    assert_eq!(puts.len(), 2);
    assert!(puts.iter().all(|p| p.body == bytes));
}

#[tokio::test]
async fn a_file_of_unknown_type_is_refused_before_anything_is_sent() {
    let server = MockServer::start().await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client
        .files()
        .upload_bytes("notes.txt", vec![1, 2, 3])
        .await
        .unwrap_err();

    assert!(matches!(err, mediagen::Error::InvalidRequest(_)), "{err:?}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_result_file_downloads_to_a_path_with_progress() {
    let app = App::start().await;
    let done = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .create_and_wait(GenerationRequest::new("flux-schnell", "a red fox")),
        ),
    )
    .await
    .unwrap();
    let dir = scratch();
    let target = dir.join("fox.png");
    let mut progress = Vec::new();

    let written = app
        .client
        .files()
        .download(&done.output_urls[0], &target)
        .on_progress(|p| progress.push(p))
        .await
        .unwrap();

    let bytes = std::fs::read(&target).unwrap();
    assert_eq!(bytes.len() as u64, written);
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert_eq!(progress.last().map(|p| p.bytes), Some(written));
    assert!(!dir.join("fox.png.part").exists());
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn download_outputs_saves_every_result_file_named_after_the_generation() {
    let app = App::start().await;
    let done = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .create_and_wait(GenerationRequest::new("suno-v4", "a sea shanty")),
        ),
    )
    .await
    .unwrap();
    let dir = scratch();

    let paths = app
        .client
        .files()
        .download_outputs(&done, &dir)
        .await
        .unwrap();

    assert_eq!(paths.len(), done.output_urls.len());
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(name.starts_with(&done.id.to_string()), "{name}");
        assert!(std::fs::metadata(path).unwrap().len() > 0);
    }
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn a_failed_download_leaves_no_file_behind() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/outputs/missing.png"))
        .respond_with(ResponseTemplate::new(404).set_body_string("no such file"))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let dir = scratch();
    let target = dir.join("missing.png");

    let err = client
        .files()
        .download(format!("{}/outputs/missing.png", server.uri()), &target)
        .await
        .unwrap_err();

    assert_eq!(err.status(), Some(reqwest::StatusCode::NOT_FOUND));
    assert!(!target.exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let request = &server.received_requests().await.unwrap()[0];
    assert!(request.headers.get("authorization").is_none());
    std::fs::remove_dir_all(dir).ok();
}
