//! One exit code per kind of outcome, each with the error envelope on stdout and
//! a hint of what to do next on stderr.

use mediagen_mock_server::MockServer;

use crate::{Setup, bare, envelope, run, text};

#[tokio::test]
async fn a_wrong_command_line_exits_2_with_a_usage_envelope() {
    let output = run(bare(&["generate", "--no-such-flag"])).await;
    assert_eq!(output.status.code(), Some(2));
    let error = envelope(&output);
    assert_eq!(error["code"], "USAGE_ERROR");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("--no-such-flag")
    );
    assert!(
        text(&output.stderr).contains("Usage:"),
        "clap's usage for people"
    );
}

#[tokio::test]
async fn a_request_the_service_refuses_as_invalid_exits_2_with_the_fields() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&[
        "generate",
        "-m",
        "flux-schnell",
        "--param",
        "aspect_ratio=7:3",
        "a fox",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "VALIDATION_ERROR");
    assert!(error["requestId"].as_str().unwrap().starts_with("req_"));
    // The failing field is in the details, and the hint says where the parameters are told.
    assert!(
        error["details"].to_string().contains("aspect_ratio"),
        "{error}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("mediagen models SLUG"),
        "{error}"
    );
    let stderr = text(&output.stderr);
    assert_eq!(stderr.matches("aspect_ratio").count(), 1, "{stderr}");
}

#[tokio::test]
async fn no_base_url_exits_2_before_any_request_and_names_every_place_to_set_one() {
    // A key is set, and nowhere to send it: no host is assumed.
    let mut cmd = bare(&["--json", "balance"]);
    cmd.env("MEDIAGEN_API_KEY", "mg_live_pub_secret");
    let output = run(cmd).await;
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "CONFIGURATION_ERROR");
    let hint = error["hint"].as_str().unwrap();
    for place in ["--base-url", "MEDIAGEN_BASE_URL", "base_url", "--mock"] {
        assert!(hint.contains(place), "{place} in {hint}");
    }
}

#[tokio::test]
async fn no_api_key_exits_3_and_says_where_to_put_one() {
    let mut cmd = bare(&["balance"]);
    cmd.env("MEDIAGEN_BASE_URL", "http://127.0.0.1:9");
    let output = run(cmd).await;
    assert_eq!(output.status.code(), Some(3));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("MEDIAGEN_API_KEY") && stderr.contains("--mock"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_wrong_api_key_exits_3() {
    let setup = Setup::new().await;
    let mut cmd = setup.cmd(&["balance"]);
    cmd.env("MEDIAGEN_API_KEY", "mg_live_nobody_secret");
    let output = run(cmd).await;
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(envelope(&output)["code"], "AUTHENTICATION_ERROR");
}

#[tokio::test]
async fn insufficient_balance_exits_4_and_says_how_much_is_missing() {
    let setup = Setup::with(MockServer::start().await, 1.0);
    let output = run(setup.cmd(&[
        "--format",
        "human",
        "generate",
        "-m",
        "flux-schnell",
        "a fox",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(4));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("INSUFFICIENT_BALANCE"), "{stderr}");
    // The amounts, once: in the service's message, not again in the hint.
    assert_eq!(stderr.matches("2.50 RUB").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("1.00 RUB").count(), 1, "{stderr}");
    assert!(stderr.contains("mediagen topup"), "{stderr}");
}

#[tokio::test]
async fn a_sixth_active_generation_exits_5_and_says_to_wait_for_one() {
    let setup = Setup::new().await;
    for n in 0..5 {
        setup
            .json(&["generate", "-m", "flux-schnell", &format!("fox {n}")])
            .await;
    }
    let output = run(setup.cmd(&["generate", "-m", "flux-schnell", "one fox too many"])).await;
    assert_eq!(output.status.code(), Some(5));
    let error = envelope(&output);
    assert_eq!(error["code"], "RATE_LIMIT_ERROR");
    assert!(
        error["hint"].as_str().unwrap().contains("active"),
        "{error}"
    );
}

#[tokio::test]
async fn a_failed_generation_exits_6_with_its_failure_code() {
    let setup = Setup::fast().await;
    let output = run(setup.cmd(&[
        "generate",
        "--wait",
        "-m",
        "flux-schnell",
        "a fox mock:fail=content_policy",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(6), "{}", text(&output.stderr));
    let error = envelope(&output);
    assert_eq!(error["code"], "GENERATION_FAILED");
    assert_eq!(error["details"]["errorCode"], "content_policy");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("change the prompt"),
        "{error}"
    );
    assert_eq!(
        setup.mock.balance(setup.user),
        Some((1000.0, 0.0)),
        "refunded"
    );
}

#[tokio::test]
async fn a_cancelled_generation_ends_the_wait_with_exit_6() {
    let setup = Setup::new().await;
    let created = setup
        .json(&["generate", "-m", "flux-schnell", "a fox"])
        .await;
    let id = created["id"].as_str().unwrap();
    let cancelled = setup.json(&["cancel", id]).await;
    assert_eq!(cancelled["status"], "CANCELLED");
    let output = run(setup.cmd(&["get", id, "--wait"])).await;
    assert_eq!(output.status.code(), Some(6));
    assert_eq!(envelope(&output)["code"], "GENERATION_CANCELLED");
}

#[tokio::test]
async fn the_wait_deadline_exits_7_and_says_how_to_resume() {
    // The manual clock never moves, so the generation is still PENDING at the deadline.
    let setup = Setup::new().await;
    let output = run(setup.cmd(&[
        "generate",
        "--wait",
        "--timeout",
        "300ms",
        "-m",
        "flux-schnell",
        "a fox",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(7));
    let error = envelope(&output);
    assert_eq!(error["code"], "WAIT_TIMEOUT");
    let id = error["details"]["id"].as_str().unwrap();
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains(&format!("mediagen get {id} --wait"))
    );
}

#[tokio::test]
async fn anything_else_exits_1_such_as_an_unknown_generation() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["get", "00000000-0000-4000-8000-000000000000"])).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(envelope(&output)["code"], "NOT_FOUND");
}

#[tokio::test]
async fn cancelling_a_finished_generation_is_a_conflict_that_exits_1() {
    let setup = Setup::fast().await;
    let done = setup
        .json(&["generate", "--wait", "-m", "flux-schnell", "a fox"])
        .await;
    let output = run(setup.cmd(&["cancel", done["id"].as_str().unwrap()])).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(envelope(&output)["code"], "CONFLICT_ERROR");
}

#[tokio::test]
async fn an_unreachable_service_exits_1_and_points_at_the_base_url() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = bare(&["balance", "--max-attempts", "1"]);
    cmd.env("MEDIAGEN_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("MEDIAGEN_API_KEY", "mg_live_a_b");
    let output = run(cmd).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(envelope(&output)["code"], "CONNECTION_ERROR");
    assert!(text(&output.stderr).contains("--base-url"));
}
