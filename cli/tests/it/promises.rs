//! The command against a scripted service that answers with only what the service
//! document guarantees, and with values no version knows: nothing here comes from
//! our own mock, which always sends every designed field.

use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{envelope, process, run, scratch, scripted, text};

/// `mediagen` pointed at `server`, with one attempt per request so that failures
/// end at once.
fn at(server: &MockServer, args: &[&str]) -> assert_cmd::Command {
    scripted(server, &[&["--json", "--max-attempts", "1"], args].concat())
}

/// Mounts on `server` a create that is accepted, and returns the generation's id.
async fn accepting(server: &MockServer) -> Uuid {
    let id = Uuid::new_v4();
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(
            ResponseTemplate::new(202)
                .set_body_json(json!({"id": id, "status": "PENDING", "costRub": 2.5})),
        )
        .mount(server)
        .await;
    id
}

/// A service that accepts one create and answers its status with `answer` (the
/// generation's `id` added).
async fn service(mut answer: Value) -> (MockServer, Uuid) {
    let server = MockServer::start().await;
    let id = accepting(&server).await;
    answer["id"] = json!(id);
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    (server, id)
}

/// The service's error envelope of a 500.
fn internal_error() -> ResponseTemplate {
    ResponseTemplate::new(500).set_body_json(json!({"error": {
        "code": "INTERNAL_ERROR", "message": "boom", "requestId": "req_1",
        "timestamp": "2026-11-22T10:15:30.123Z"
    }}))
}

#[tokio::test]
async fn generate_wait_output_works_with_only_the_guaranteed_fields() {
    let server = MockServer::start().await;
    let image = format!("{}/files/out/0.png", server.uri());
    let id = accepting(&server).await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": id, "status": "SUCCEEDED", "costRub": 2.5, "outputUrls": [image]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/files/out/0.png"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"\x89PNG not really".to_vec()))
        .mount(&server)
        .await;
    let dir = scratch("minimal-generate");

    let output = run(at(
        &server,
        &[
            "generate",
            "--wait",
            "-m",
            "flux-schnell",
            "a fox",
            "--output",
            dir.to_str().unwrap(),
        ],
    ))
    .await;

    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["id"], json!(id));
    assert_eq!(result["status"], "SUCCEEDED");
    assert_eq!(result["outputUrls"][0], image);
    assert_eq!(result["idempotencyKey"].as_str().map(str::len), Some(36));
    let saved = dir.join(format!("{id}-1.png"));
    assert_eq!(result["files"][0], json!(saved));
    assert_eq!(std::fs::read(saved).unwrap(), b"\x89PNG not really");
}

#[tokio::test]
async fn a_failure_code_nobody_knows_exits_6_and_is_told_as_it_came() {
    let (server, id) =
        service(json!({"status": "FAILED", "costRub": 2.5, "errorCode": "quantum_flux"})).await;

    let output = run(at(
        &server,
        &["generate", "--wait", "-m", "flux-schnell", "a fox"],
    ))
    .await;

    assert_eq!(output.status.code(), Some(6), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "GENERATION_FAILED");
    assert_eq!(error["details"]["errorCode"], "quantum_flux");
    assert_eq!(error["details"]["id"], json!(id));
    assert!(error["details"]["idempotencyKey"].is_string());
    assert!(text(&output.stderr).contains("quantum_flux"));
}

#[tokio::test]
async fn a_cancelled_generation_exits_6() {
    let (server, _) = service(json!({"status": "CANCELLED", "costRub": 2.5})).await;

    let output = run(at(
        &server,
        &["generate", "--wait", "-m", "flux-schnell", "a fox"],
    ))
    .await;

    assert_eq!(output.status.code(), Some(6), "{}", text(&output.stderr));
    assert_eq!(envelope(&output)["code"], "GENERATION_CANCELLED");
}

#[tokio::test]
async fn a_status_nobody_knows_ends_the_wait_exits_1_and_is_printed() {
    let (server, id) = service(json!({"status": "ARCHIVED", "costRub": 2.5})).await;

    let output = run(at(
        &server,
        &["generate", "--wait", "-m", "flux-schnell", "a fox"],
    ))
    .await;

    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "UNKNOWN_STATUS");
    assert_eq!(error["details"]["status"], "ARCHIVED");
    assert_eq!(error["details"]["generation"]["id"], json!(id));
    assert!(text(&output.stderr).contains("ARCHIVED"));
    let reads = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "GET")
        .count();
    assert_eq!(reads, 1, "the wait stopped at the first read");
}

#[tokio::test]
async fn a_failed_status_read_after_the_create_tells_the_id_the_key_and_how_to_resume() {
    let server = MockServer::start().await;
    let id = accepting(&server).await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{id}")))
        .respond_with(internal_error())
        .mount(&server)
        .await;

    let output = run(at(
        &server,
        &[
            "generate",
            "--wait",
            "-m",
            "flux-schnell",
            "a fox",
            "--idempotency-key",
            "order-17",
        ],
    ))
    .await;

    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "INTERNAL_ERROR");
    assert_eq!(error["details"]["id"], json!(id));
    assert_eq!(error["details"]["idempotencyKey"], "order-17");
    let resume = format!("resume with `mediagen get {id} --wait`");
    assert!(error["hint"].as_str().unwrap().contains(&resume), "{error}");
    // For people: the resume command, and the id only there.
    let stderr = text(&output.stderr);
    assert!(stderr.contains(&resume), "{stderr}");
    assert_eq!(stderr.matches(&id.to_string()).count(), 1, "{stderr}");
}

#[tokio::test]
async fn a_top_up_answered_500_is_sent_once_and_says_where_to_look() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/billing/topup"))
        .respond_with(internal_error())
        .expect(1)
        .mount(&server)
        .await;
    // Even with attempts to spare, the top-up is not sent again.
    let output = run(scripted(&server, &["--json", "topup", "1000"])).await;

    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "OUTCOME_UNKNOWN");
    assert_eq!(error["details"]["operation"], "create_topup");
    assert!(
        error["hint"].as_str().unwrap().contains("mediagen history"),
        "{error}"
    );
    server.verify().await;
}

#[tokio::test]
async fn models_lists_a_model_with_a_media_type_nobody_knows_and_only_its_required_fields() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/catalog/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"models": [
            {"slug": "holo-1", "mediaType": "HOLOGRAM", "pricing": {"unit": "frame", "baseRub": 3}},
            {"slug": "flux-schnell", "mediaType": "IMAGE", "pricing": {"unit": "generation", "baseRub": 2.5}}
        ]})))
        .mount(&server)
        .await;
    let mut cmd = process(&["--format", "human", "models"]);
    cmd.env("MEDIAGEN_BASE_URL", server.uri());

    let output = run(assert_cmd::Command::from_std(cmd)).await;

    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let table = text(&output.stdout);
    let holo = table
        .lines()
        .find(|l| l.starts_with("holo-1"))
        .expect("listed");
    assert!(
        holo.contains("HOLOGRAM") && holo.contains("3.00 RUB per frame"),
        "{table}"
    );
}

#[tokio::test]
async fn a_create_left_without_an_answer_tells_the_key_that_finds_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(internal_error())
        .mount(&server)
        .await;

    let output = run(at(&server, &["generate", "-m", "flux-schnell", "a fox"])).await;

    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let error = envelope(&output);
    let key = error["details"]["idempotencyKey"]
        .as_str()
        .expect("the key is told");
    let sent = server.received_requests().await.unwrap();
    assert_eq!(sent[0].headers["idempotency-key"].to_str().unwrap(), key);
    let hint = error["hint"].as_str().unwrap();
    assert!(hint.contains(&format!("--idempotency-key {key}")), "{hint}");
}
