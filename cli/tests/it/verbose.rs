//! `-v` and `MEDIAGEN_LOG`: each HTTP attempt told on stderr, stdout left as it was,
//! and never the API key's secret.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{SCRIPTED_KEY, Setup, run, scripted, text};

#[tokio::test]
async fn verbose_tells_each_attempt_on_stderr_and_leaves_stdout_as_it_was() {
    let setup = Setup::new().await;
    let id = setup.created("a fox").await.id.to_string();

    let quiet = run(setup.cmd(&["get", &id])).await;
    let verbose = run(setup.cmd(&["-v", "get", &id])).await;
    let very = run(setup.cmd(&["-vv", "get", &id])).await;

    for output in [&quiet, &verbose, &very] {
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    assert_eq!(
        text(&verbose.stdout),
        text(&quiet.stdout),
        "stdout unchanged"
    );
    assert_eq!(text(&very.stdout), text(&quiet.stdout), "stdout unchanged");
    assert_eq!(text(&quiet.stderr), "", "nothing without -v");
    let line = text(&verbose.stderr);
    let line = line
        .strip_prefix(&format!("GET /v1/generations/{id} 200 req_"))
        .unwrap_or_else(|| panic!("one line for the one attempt: {line:?}"));
    assert_eq!(line.lines().count(), 1, "{line:?}");

    let told = text(&very.stderr);
    let public = setup.key.rsplit_once('_').unwrap().0;
    assert!(
        told.contains(&format!("  > authorization: Bearer {public}_…\n")),
        "the key named by its public part: {told}"
    );
    assert!(told.contains("  < x-request-id: req_"), "{told}");
    assert!(!told.contains(&setup.key), "never the secret: {told}");
}

/// A service that refuses the first create with a windowed 429, then accepts.
async fn refusing_once(server: &MockServer) {
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_json(json!({"error": {
                    "code": "RATE_LIMIT_ERROR", "message": "Too many requests",
                    "requestId": "req_scripted_429", "timestamp": "2026-11-22T10:15:30.123Z",
                    "details": {"retryAfter": 0}
                }})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(server)
        .await;
}

#[tokio::test]
async fn a_retried_create_is_two_lines_with_the_same_key_and_no_secret() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(ResponseTemplate::new(202).set_body_json(json!({
            "id": "7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47", "status": "PENDING", "costRub": 2.5
        })))
        .mount(&server)
        .await;
    let generate = |verbosity: &[&str]| {
        let args = [
            verbosity,
            &[
                "--json",
                "generate",
                "-m",
                "flux-schnell",
                "--idempotency-key",
                "order-17",
                "a fox",
            ],
        ]
        .concat();
        run(scripted(&server, &args))
    };

    refusing_once(&server).await;
    let quiet = generate(&[]).await;
    refusing_once(&server).await;
    let very = generate(&["-vv"]).await;

    assert!(quiet.status.success(), "{}", text(&quiet.stderr));
    assert!(very.status.success(), "{}", text(&very.stderr));
    assert_eq!(text(&very.stdout), text(&quiet.stdout), "stdout unchanged");
    let told = text(&very.stderr);
    let attempts: Vec<&str> = told
        .lines()
        .filter(|line| line.starts_with("POST "))
        .collect();
    assert_eq!(attempts.len(), 2, "one line per attempt: {told}");
    assert!(
        attempts[0]
            .starts_with("POST /v1/generations 429 RATE_LIMIT_ERROR req_scripted_429 retrying in ")
            && attempts[0].ends_with(": refused before acting (rate limit)"),
        "{}",
        attempts[0]
    );
    assert_eq!(attempts[1], "POST /v1/generations 202");
    assert_eq!(
        told.matches("  > idempotency-key: order-17\n").count(),
        2,
        "the retry carries the same key: {told}"
    );
    let (public, secret) = SCRIPTED_KEY.rsplit_once('_').unwrap();
    let shown = format!("  > authorization: Bearer {public}_…\n");
    assert_eq!(told.matches(&shown).count(), 2, "{told}");
    assert!(!told.contains(secret), "never the secret: {told}");
}

#[tokio::test]
async fn mediagen_log_prints_the_sdks_events_and_a_bad_filter_is_a_usage_error() {
    let setup = Setup::new().await;

    let mut logged = setup.cmd(&["balance"]);
    logged.env("MEDIAGEN_LOG", "mediagen=debug");
    let logged = run(logged).await;
    let mut wrong = setup.cmd(&["balance"]);
    wrong.env("MEDIAGEN_LOG", "mediagen=loud");
    let wrong = run(wrong).await;

    assert!(logged.status.success(), "{}", text(&logged.stderr));
    let told = text(&logged.stderr);
    assert!(
        told.contains("mediagen.operation") && told.contains("operation=\"get_balance\""),
        "{told}"
    );
    assert!(!told.contains(&setup.key), "{told}");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).contains("MEDIAGEN_LOG"),
        "{}",
        text(&wrong.stderr)
    );
}
