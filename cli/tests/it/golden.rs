//! Help texts and tables compared with the files in tests/golden; run with
//! UPDATE_GOLDEN=1 to rewrite them after a deliberate change, and review the diff.

use std::path::PathBuf;

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{Setup, bare, run, scripted, text};

pub fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write the golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        actual, expected,
        "{name} differs from tests/golden (UPDATE_GOLDEN=1 rewrites it)"
    );
}

async fn help(args: &[&str], name: &str) {
    let output = run(bare(args)).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    check(name, &text(&output.stdout));
}

#[tokio::test]
async fn the_main_help_lists_every_command_and_the_exit_codes() {
    help(&["--help"], "help.txt").await;
}

#[tokio::test]
async fn the_short_helps_fit_a_screen_and_say_how_to_start() {
    help(&["-h"], "short-help.txt").await;
    help(&["generate", "-h"], "generate-short-help.txt").await;
}

#[tokio::test]
async fn generate_help_shows_every_option() {
    help(&["generate", "--help"], "generate-help.txt").await;
}

#[tokio::test]
async fn webhooks_help_lists_the_endpoint_commands_and_the_tools() {
    help(&["webhooks", "--help"], "webhooks-help.txt").await;
    help(
        &["webhooks", "trigger", "--help"],
        "webhooks-trigger-help.txt",
    )
    .await;
    help(&["mock", "logs", "--help"], "mock-logs-help.txt").await;
    help(
        &["webhooks", "verify", "--help"],
        "webhooks-verify-help.txt",
    )
    .await;
    help(
        &["webhooks", "listen", "--help"],
        "webhooks-listen-help.txt",
    )
    .await;
}

#[tokio::test]
async fn the_catalog_table_for_people() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["--format", "human", "models"])).await;
    assert!(output.status.success());
    check("models.txt", &text(&output.stdout));
}

#[tokio::test]
async fn one_models_parameters_and_prices_for_people() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["--format", "human", "models", "flux-schnell"])).await;
    assert!(output.status.success());
    check("models-flux-schnell.txt", &text(&output.stdout));
}

/// The service's error envelope with a request id that stays the same from run to run.
fn refusal(status: u16, code: &str, message: &str, request_id: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({"error": {
        "code": code, "message": message, "requestId": request_id,
        "timestamp": "2026-11-22T10:15:30.123Z"
    }}))
}

#[tokio::test]
async fn each_error_line_says_the_step_code_status_message_and_request_id_once() {
    let server = MockServer::start().await;
    let created = "7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47";
    let refusals = [
        (
            "GET",
            "/v1/generations/00000000-0000-4000-8000-000000000000".to_owned(),
            refusal(404, "NOT_FOUND", "Generation not found", "req_golden_get"),
        ),
        (
            "POST",
            "/v1/billing/topup".to_owned(),
            refusal(500, "INTERNAL_ERROR", "boom", "req_golden_topup"),
        ),
        (
            "GET",
            format!("/v1/generations/{created}"),
            refusal(500, "INTERNAL_ERROR", "boom", "req_golden_status"),
        ),
    ];
    for (verb, route, answer) in refusals {
        Mock::given(method(verb))
            .and(path(route))
            .respond_with(answer)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/generations/estimate"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"costRub": 2.5, "availableRub": 1000.0, "sufficient": true})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .and(wiremock::matchers::body_partial_json(
            json!({"modelSlug": "nope"}),
        ))
        .respond_with(refusal(
            404,
            "NOT_FOUND",
            "Model 'nope' not found",
            "req_golden_model",
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/generations"))
        .respond_with(
            ResponseTemplate::new(202)
                .set_body_json(json!({"id": created, "status": "PENDING", "costRub": 2.5})),
        )
        .mount(&server)
        .await;
    let commands: [&[&str]; 5] = [
        &["get", "00000000-0000-4000-8000-000000000000"],
        &["generate", "-m", "nope", "a fox"],
        &["generate", "-m", "flux-schnell", "--max-cost", "1", "a fox"],
        &["topup", "1000"],
        &[
            "generate",
            "--wait",
            "-m",
            "flux-schnell",
            "--idempotency-key",
            "order-17",
            "a fox",
        ],
    ];

    let mut told = String::new();
    for args in commands {
        let all = [&["--format", "human", "--max-attempts", "1"], args].concat();
        let output = run(scripted(&server, &all)).await;
        assert!(!output.status.success(), "{args:?}");
        let stderr = text(&output.stderr);
        let line = stderr
            .lines()
            .find(|line| line.starts_with("error: "))
            .unwrap_or_else(|| panic!("no error line: {stderr}"));
        for once in ["req_golden", "NOT_FOUND", "INTERNAL_ERROR", "404", "500"] {
            assert!(line.matches(once).count() <= 1, "{once} twice in {line}");
        }
        told.push_str(&format!("$ mediagen {}\n{stderr}\n", args.join(" ")));
    }
    check("errors.txt", &told);
}
