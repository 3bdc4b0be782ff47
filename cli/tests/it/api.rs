//! `mediagen api METHOD PATH`: any request of the service, its answer on stdout.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{Setup, envelope, run, scripted, text};

#[tokio::test]
async fn api_get_prints_the_answer_on_one_line_for_a_script() {
    let setup = Setup::new().await;

    let output = run(setup.cmd(&["api", "GET", "/v1/catalog/"])).await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert_eq!(stdout.lines().count(), 1, "one line when piped: {stdout}");
    let catalog: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        catalog["models"]
            .as_array()
            .is_some_and(|models| models.iter().any(|m| m["slug"] == "flux-schnell")),
        "{catalog}"
    );
}

#[tokio::test]
async fn api_post_with_fields_starts_a_generation_with_a_key_that_get_reads_back() {
    let setup = Setup::new().await;

    let created = run(setup.cmd(&[
        "-vv",
        "api",
        "POST",
        "/v1/generations",
        "-f",
        "modelSlug=flux-schnell",
        "-f",
        "prompt=a fox",
        "-f",
        "params.aspect_ratio=16:9",
    ]))
    .await;
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert!(
        text(&created.stderr).contains("  > idempotency-key: "),
        "a create carries a key: {}",
        text(&created.stderr)
    );
    let created: Value = serde_json::from_slice(&created.stdout).unwrap();
    let id = created["id"].as_str().expect("the new generation's id");
    let read = setup
        .json(&["api", "GET", &format!("/v1/generations/{id}")])
        .await;
    let listed = setup
        .json(&["api", "GET", "/v1/generations", "-f", "limit=1"])
        .await;

    assert_eq!(created["status"], "PENDING");
    assert_eq!(read["id"], id);
    assert_eq!(read["prompt"], "a fox");
    assert_eq!(read["params"], json!({"aspect_ratio": "16:9"}));
    assert_eq!(listed["data"][0]["id"], id, "fields of a GET are its query");
    assert_eq!(
        setup.mock.balance(setup.user),
        Some((997.5, 2.5)),
        "reserved once"
    );
}

#[tokio::test]
async fn api_input_from_stdin_is_the_body() {
    let setup = Setup::new().await;
    let mut estimate = setup.cmd(&["api", "POST", "/v1/generations/estimate", "--input", "-"]);
    estimate.write_stdin(
        r#"{"modelSlug": "flux-schnell", "prompt": "a fox", "params": {"resolution": "2k"}}"#,
    );

    let output = run(estimate).await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["costRub"], 5.0, "the 2k factor of the body counted");
}

#[tokio::test]
async fn api_prints_the_envelope_of_an_error_answer_and_exits_with_its_code() {
    let setup = Setup::new().await;
    let missing = "/v1/generations/00000000-0000-4000-8000-000000000000";

    let for_scripts = run(setup.cmd(&["api", "GET", missing])).await;
    let for_people = run(setup.cmd(&["--format", "human", "api", "GET", missing])).await;
    let mut invalid = setup.cmd(&["api", "POST", "/v1/generations", "--input", "-"]);
    invalid.write_stdin(r#"{"modelSlug": "flux-schnell"}"#);
    let invalid = run(invalid).await;

    for output in [&for_scripts, &for_people] {
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
        assert_eq!(text(&output.stdout).lines().count(), 1, "the envelope once");
        assert_eq!(envelope(output)["code"], "NOT_FOUND");
        assert!(text(&output.stderr).contains(&format!("while sending GET {missing}")));
    }
    assert_eq!(
        invalid.status.code(),
        Some(2),
        "a validation error is exit 2"
    );
    assert_eq!(envelope(&invalid)["code"], "VALIDATION_ERROR");
    // The test sent the same 404 twice on purpose (once per format); each run
    // of the command sent it once.
    setup.mock.reset_verdict();
}

#[tokio::test]
async fn api_refuses_a_url_so_the_key_never_leaves_the_configured_host() {
    let setup = Setup::new().await;
    let elsewhere = MockServer::start().await;

    for target in [
        format!("{}/v1/catalog/", elsewhere.uri()),
        elsewhere.uri().replacen("http:", "", 1),
        "v1/catalog/".to_owned(),
    ] {
        let output = run(setup.cmd(&["api", "GET", &target])).await;
        assert_eq!(output.status.code(), Some(2), "{target}");
        assert_eq!(envelope(&output)["code"], "USAGE_ERROR", "{target}");
    }
    let both = run(setup.cmd(&[
        "api",
        "POST",
        "/v1/generations",
        "-f",
        "prompt=x",
        "--input",
        "-",
    ]))
    .await;

    assert_eq!(both.status.code(), Some(2), "--field and --input conflict");
    assert!(
        elsewhere.received_requests().await.unwrap().is_empty(),
        "nothing was sent to the other host"
    );
}

#[tokio::test]
async fn an_unanswered_create_is_retried_with_one_key_which_the_error_tells() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({"error": {
            "code": "SERVICE_UNAVAILABLE", "message": "try later", "requestId": "req_busy",
            "timestamp": "2026-11-22T10:15:30.123Z"
        }})))
        .mount(&server)
        .await;
    let create = |more: &[&str]| {
        let args = [
            &["--max-attempts", "2", "api", "POST", "/v1/generations"][..],
            &["-f", "modelSlug=flux-schnell", "-f", "prompt=a fox"],
            more,
        ]
        .concat();
        run(scripted(&server, &args))
    };

    let first = create(&[]).await;
    let told = envelope(&first);
    let key = told["details"]["idempotencyKey"]
        .as_str()
        .expect("the key is told")
        .to_owned();
    let again = create(&["--header", &format!("Idempotency-Key: {key}")]).await;

    assert_eq!(first.status.code(), Some(1));
    assert!(
        told["hint"]
            .as_str()
            .is_some_and(|hint| hint.contains(&format!("--header 'Idempotency-Key: {key}'"))),
        "{told}"
    );
    assert_eq!(again.status.code(), Some(1));
    let keys: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|request| {
            request.headers["idempotency-key"]
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        keys,
        vec![key; 4],
        "every attempt of both runs carries the one key"
    );
}
