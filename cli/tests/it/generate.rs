//! `generate` and following a generation: `get --wait`, downloads, Ctrl-C.

use mediagen_mock_server::{Fault, MockServer, Responses};
use serde_json::json;

use crate::{Setup, envelope, run, scratch, text};

#[tokio::test]
async fn generate_without_wait_prints_the_new_task_and_its_idempotency_key() {
    let setup = Setup::new().await;
    let created = setup
        .json(&[
            "generate",
            "-m",
            "flux-schnell",
            "--param",
            "aspect_ratio=16:9",
            "a red fox",
        ])
        .await;
    assert_eq!(created["status"], "PENDING");
    assert_eq!(created["costRub"], 2.5);
    assert_eq!(created["idempotencyKey"].as_str().map(str::len), Some(36));

    let id = created["id"].as_str().unwrap();
    let shown = setup.json(&["get", id]).await;
    assert_eq!(shown["params"]["aspect_ratio"], "16:9");
    assert_eq!(shown["prompt"], "a red fox");
}

#[tokio::test]
async fn rerunning_with_the_same_idempotency_key_starts_and_charges_once() {
    let setup = Setup::new().await;
    let args = [
        "generate",
        "-m",
        "flux-schnell",
        "--idempotency-key",
        "order-42",
        "a red fox",
    ];
    let first = setup.json(&args).await;
    let second = setup.json(&args).await;
    assert_eq!(first["id"], second["id"]);
    assert_eq!(setup.mock.balance(setup.user), Some((997.5, 2.5)));
    assert_eq!(
        setup.json(&["list"]).await.as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn wait_with_output_downloads_the_results_and_lists_their_paths() {
    let setup = Setup::fast().await;
    let dir = scratch("wait-output");
    let done = setup
        .json(&[
            "generate",
            "--wait",
            "-m",
            "flux-schnell",
            "a lighthouse at dusk",
            "--output",
            dir.to_str().unwrap(),
        ])
        .await;
    assert_eq!(done["status"], "SUCCEEDED");
    let files = done["files"].as_array().expect("the files written");
    assert_eq!(files.len(), done["outputUrls"].as_array().unwrap().len());
    for file in files {
        let bytes = std::fs::read(file.as_str().unwrap()).expect("a downloaded file");
        assert!(bytes.starts_with(b"\x89PNG"), "an image, not an error page");
    }
    setup.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn waiting_for_people_prints_status_changes_on_stderr_and_the_result_on_stdout() {
    let setup = Setup::fast().await;
    let output = run(setup.cmd(&[
        "--format",
        "human",
        "generate",
        "-w",
        "-m",
        "flux-schnell",
        "a fox",
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("started ") && stderr.contains("2.50 RUB reserved"),
        "{stderr}"
    );
    assert!(stderr.contains(": SUCCEEDED"), "{stderr}");
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("SUCCEEDED") && stdout.contains("/outputs/"),
        "{stdout}"
    );
}

#[tokio::test]
async fn get_wait_resumes_a_generation_started_earlier() {
    let setup = Setup::fast().await;
    let created = setup
        .json(&["generate", "-m", "flux-schnell", "a fox"])
        .await;
    let done = setup
        .json(&["get", created["id"].as_str().unwrap(), "--wait"])
        .await;
    assert_eq!(done["status"], "SUCCEEDED");
    assert_eq!(done["id"], created["id"]);
}

#[tokio::test]
async fn dry_run_shows_the_estimate_and_starts_nothing() {
    let setup = Setup::new().await;
    let estimate = setup
        .json(&[
            "generate",
            "--dry-run",
            "-m",
            "flux-schnell",
            "--param",
            "resolution=2k",
            "a fox",
        ])
        .await;
    assert_eq!(estimate["costRub"], 5.0);
    assert_eq!(estimate["sufficient"], true);
    assert_eq!(setup.json(&["list"]).await, json!([]));
    assert_eq!(setup.mock.balance(setup.user), Some((1000.0, 0.0)));
}

#[tokio::test]
async fn max_cost_below_the_estimate_refuses_to_start() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&[
        "generate",
        "--max-cost",
        "3",
        "-m",
        "flux-schnell",
        "--param",
        "resolution=2k",
        "a fox",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(4));
    let error = envelope(&output);
    assert_eq!(error["code"], "COST_ABOVE_MAXIMUM");
    assert_eq!(error["details"]["costRub"], 5.0);
    assert_eq!(setup.json(&["list"]).await, json!([]));

    let within = setup
        .json(&["generate", "--max-cost", "3", "-m", "flux-schnell", "a fox"])
        .await;
    assert_eq!(within["status"], "PENDING");
}

#[tokio::test]
async fn the_prompt_can_come_from_stdin() {
    let setup = Setup::new().await;
    let mut cmd = setup.cmd(&["generate", "-m", "flux-schnell", "-"]);
    cmd.write_stdin("a long prompt\nfrom a file\n");
    let output = run(cmd).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let created: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let shown = setup.json(&["get", created["id"].as_str().unwrap()]).await;
    assert_eq!(shown["prompt"], "a long prompt\nfrom a file");
}

#[tokio::test]
async fn file_is_uploaded_and_passed_as_the_models_file_parameter() {
    let setup = Setup::new().await;
    let dir = scratch("generate-file");
    let frame = dir.join("frame.png");
    std::fs::write(&frame, b"\x89PNG\r\n\x1a\nnot really an image").unwrap();
    let created = setup
        .json(&[
            "generate",
            "-m",
            "kling-2-1",
            "--file",
            frame.to_str().unwrap(),
            "the frame comes alive",
        ])
        .await;
    let shown = setup.json(&["get", created["id"].as_str().unwrap()]).await;
    let file_id = shown["params"]["image_file_id"]
        .as_str()
        .expect("the file parameter");
    let file = setup.json(&["files", "get", file_id]).await;
    assert_eq!(file["filename"], "frame.png");
}

#[tokio::test]
async fn a_file_for_a_model_without_file_parameter_is_a_usage_error() {
    let setup = Setup::new().await;
    let dir = scratch("generate-no-file");
    let path = dir.join("a.png");
    std::fs::write(&path, b"\x89PNG").unwrap();
    let output = run(setup.cmd(&[
        "generate",
        "-m",
        "suno-v4",
        "--file",
        path.to_str().unwrap(),
        "a song",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        envelope(&output)["message"]
            .as_str()
            .unwrap()
            .contains("takes no input file")
    );
}

#[tokio::test]
async fn ctrl_c_while_waiting_prints_the_id_and_the_command_that_resumes() {
    // A manual clock that never moves: the generation stays PENDING while we wait.
    let setup = Setup::new().await;
    let mut background = crate::Background::spawn(setup.process(&[
        "--format",
        "human",
        "generate",
        "--wait",
        "-m",
        "flux-schnell",
        "a fox",
        "--output",
        "out",
    ]));
    let started = background.wait_for("started ").await;
    let id = started
        .split_whitespace()
        .nth(1)
        .expect("the id after `started`")
        .to_owned();
    background.signal("INT");
    let resume = background.wait_for("resume with").await;
    assert!(
        resume.contains(&format!("mediagen get {id} --wait --output out")),
        "{resume}"
    );
    let output = background.finish().await;
    assert_eq!(output.status.code(), Some(130));
    let status = setup.json(&["get", &id]).await;
    assert_eq!(
        status["status"], "PENDING",
        "stopping the wait does not cancel the generation"
    );
}

#[tokio::test]
async fn wait_with_output_works_when_the_service_sends_only_what_it_guarantees() {
    let setup = Setup::with(
        MockServer::builder()
            .real_clock(50.0)
            .responses(Responses::Minimal)
            .start()
            .await,
        1000.0,
    );
    let dir = scratch("minimal-output");
    let output = run(setup.cmd(&[
        "generate",
        "--wait",
        "-m",
        "flux-schnell",
        "a lighthouse at dusk",
        "--output",
        dir.to_str().unwrap(),
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("SUCCEEDED"), "{stdout}");
    let written: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(written.len(), 1, "the one result downloaded");
    setup.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn a_create_refused_twice_then_answered_after_it_acted_ends_with_one_generation() {
    let setup = Setup::fast().await;
    setup
        .mock
        .inject_fault(
            Fault::error(503, "SERVICE_UNAVAILABLE")
                .on("POST", "/v1/generations")
                .times(2),
        )
        .unwrap();
    setup
        .mock
        .inject_fault(Fault::drop_after().on("POST", "/v1/generations"))
        .unwrap();
    let done = setup
        .json(&["generate", "--wait", "-m", "flux-schnell", "a lighthouse"])
        .await;
    assert_eq!(done["status"], "SUCCEEDED");
    let balance = setup.mock.balance(setup.user).expect("the user");
    assert_eq!(
        balance.0,
        1000.0 - done["costRub"].as_f64().unwrap(),
        "one charge"
    );
    let user = setup.mock.get_user(setup.user).expect("the user");
    assert_eq!(user.generations, 1, "one generation");
}
