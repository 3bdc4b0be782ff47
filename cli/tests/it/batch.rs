//! `mediagen batch`: a manifest checked whole, run at the service's limits,
//! and safe to run again after anything, `kill -9` included.

use std::path::Path;
use std::process::Stdio;

use mediagen_mock_server::{Fault, MockServer, Responses};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{Setup, run, scratch, text};

fn manifest(dir: &Path, lines: &[&str]) -> String {
    let path = dir.join("jobs.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.display().to_string()
}

fn prompts(count: usize) -> Vec<String> {
    (1..=count).map(|n| format!("a fox number {n}")).collect()
}

fn creates(setup: &Setup) -> usize {
    setup
        .mock
        .list_requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/v1/generations")
        .count()
}

/// The rows of the results file of `manifest`.
pub fn results(manifest: &str) -> Vec<Value> {
    std::fs::read_to_string(format!("{manifest}.results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Starts a batch and kills it (`kill -9`) once it created `created`
/// generations: no clean stop, the process dies between two steps, wherever
/// it is.
pub async fn killed_after(setup: &Setup, args: &[&str], created: usize) {
    let mut first = tokio::process::Command::from(setup.process(args));
    first
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut first = first.spawn().unwrap();
    let mut events = BufReader::new(first.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < created {
        let line = events.next_line().await.unwrap().expect("events");
        seen += usize::from(line.contains("\"created\""));
    }
    first.start_kill().unwrap();
    first.wait().await.unwrap();
}

#[tokio::test]
async fn a_batch_killed_with_sigkill_and_run_again_pays_once_per_line_and_writes_everything() {
    let setup = Setup::with(MockServer::builder().real_clock(20.0).start().await, 1000.0);
    let dir = scratch("batch-kill");
    let lines = prompts(8);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let manifest = manifest(&dir, &lines);
    let out = dir.join("out").display().to_string();
    let args = [
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
        "-o",
        out.as_str(),
    ];

    killed_after(&setup, &args, 3).await;

    let again = run(setup.cmd(&args)).await;
    assert!(again.status.success(), "{}", text(&again.stderr));

    let user = setup.mock.get_user(setup.user).unwrap();
    assert_eq!(
        user.generations, 8,
        "one generation per line, whatever the crash"
    );
    setup.mock.check_ledger().unwrap();
    let written = results(&manifest);
    assert_eq!(written.len(), 8);
    for row in &written {
        assert_eq!(row["status"], "SUCCEEDED", "{row}");
        for file in row["files"].as_array().expect("files") {
            assert!(Path::new(file.as_str().unwrap()).is_file(), "{row}");
        }
    }
}

#[tokio::test]
async fn a_create_whose_answer_was_lost_is_resumed_by_its_key_and_paid_once() {
    let setup = Setup::with(MockServer::builder().real_clock(20.0).start().await, 1000.0);
    // The service acts, then the connection drops before the answer.
    setup
        .mock
        .inject_fault(Fault::drop_after().on("POST", "/v1/generations").times(1))
        .unwrap();
    let dir = scratch("batch-lost-answer");
    let manifest = manifest(&dir, &["a fox", "a hare"]);
    let args = [
        "--max-attempts",
        "1",
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
    ];

    let first = run(setup.cmd(&args)).await;
    assert!(
        !first.status.success(),
        "a line failed: {}",
        text(&first.stderr)
    );
    let again = run(setup.cmd(&args)).await;
    assert!(again.status.success(), "{}", text(&again.stderr));

    let user = setup.mock.get_user(setup.user).unwrap();
    assert_eq!(user.generations, 2, "the lost one was found by its key");
    assert_eq!(
        creates(&setup),
        3,
        "the lost create, its resend, the other line"
    );
    setup.mock.check_ledger().unwrap();
    assert!(
        results(&manifest)
            .iter()
            .all(|r| r["status"] == "SUCCEEDED")
    );
}

#[tokio::test]
async fn a_broken_line_is_told_at_once_when_the_catalogue_cannot_be_read() {
    // The refusal is certain whatever the catalogue says: it is asked once,
    // not through the retries (1 + 2 + 4 + 8 s) a run that may start would take.
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/v1/catalog/"))
        .respond_with(
            wiremock::ResponseTemplate::new(503).set_body_json(serde_json::json!({
                "error": {"code": "SERVICE_UNAVAILABLE", "message": "down for a moment"}
            })),
        )
        .expect(1)
        .mount(&server)
        .await;
    let dir = scratch("batch-broken-line-no-catalogue");
    let manifest = manifest(
        &dir,
        &[
            "{\"model\": \"flux-schnell\", \"prompt\": \"a fox\"}",
            "{\"model\": \"flux-schnell\", \"prompt\": ",
        ],
    );
    let output = run(crate::scripted(&server, &["batch", manifest.as_str()])).await;

    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("INVALID_MANIFEST"), "{stderr}");
    assert!(
        stderr.contains("line 2: not a manifest object: EOF while parsing a value"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the other lines were not checked against it"),
        "{stderr}"
    );
    server.verify().await;
}

#[tokio::test]
async fn a_manifest_with_bad_lines_names_every_one_in_one_pass_and_creates_nothing() {
    let setup = Setup::fast().await;
    let dir = scratch("batch-bad-lines");
    let manifest = manifest(
        &dir,
        &[
            "# a comment",
            "a fox",
            "{\"model\": \"no-such-model\", \"prompt\": \"x\"}",
            "{\"prompt\": ",
            "{\"model\": \"flux-schnell\", \"prompt\": \"y\", \"params\": {\"colour\": \"red\"}}",
        ],
    );
    let output =
        run(setup.cmd(&["--json", "batch", "-m", "flux-schnell", manifest.as_str()])).await;

    assert_eq!(output.status.code(), Some(2));
    let error = crate::envelope(&output);
    let named: Vec<u64> = error["details"]["lines"]
        .as_array()
        .expect("the lines named")
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(named, [3, 4, 5], "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("3 line(s)"), "{message}");
    assert!(
        message.contains("line 3: the catalogue has no model"),
        "{message}"
    );
    assert!(
        message.contains("line 4: not a manifest object"),
        "{message}"
    );
    assert!(
        message.contains("line 5: flux-schnell has no parameter \"colour\""),
        "{message}"
    );
    assert!(!message.contains("line 2:"), "{message}");
    assert_eq!(creates(&setup), 0, "nothing was created");
}

#[tokio::test]
async fn the_budget_stops_creating_and_the_summary_tells_what_was_left_out() {
    let setup = Setup::fast().await;
    let dir = scratch("batch-budget");
    let lines = prompts(4);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let manifest = manifest(&dir, &lines);
    // 2.50 RUB each: two fit in 6 RUB, the third would pass it.
    let output = run(setup.cmd(&[
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
        "--max-cost",
        "6",
        "--max-active",
        "1",
    ]))
    .await;

    assert_eq!(output.status.code(), Some(4), "{}", text(&output.stderr));
    assert_eq!(creates(&setup), 2);
    let stderr = text(&output.stderr);
    assert!(stderr.contains("not started: lines 3, 4"), "{stderr}");
    let states: Vec<Value> = results(&manifest)
        .iter()
        .map(|r| r["event"].clone())
        .collect();
    assert_eq!(
        states,
        ["succeeded", "succeeded", "not_started", "not_started"]
    );
}

#[tokio::test]
async fn a_batch_works_with_answers_that_carry_only_what_the_service_guarantees() {
    let setup = Setup::with(
        MockServer::builder()
            .real_clock(50.0)
            .responses(Responses::Minimal)
            .start()
            .await,
        1000.0,
    );
    let dir = scratch("batch-minimal");
    let manifest = manifest(&dir, &["a fox", "a hare", "an owl"]);
    let out = dir.join("out").display().to_string();
    let output = run(setup.cmd(&[
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
        "-o",
        out.as_str(),
    ]))
    .await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    let written = results(&manifest);
    assert!(
        written.iter().all(|r| r["status"] == "SUCCEEDED"),
        "{written:?}"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3);
}

#[tokio::test]
async fn batch_status_tells_each_state_from_the_journal() {
    let setup = Setup::fast().await;
    let dir = scratch("batch-status");
    let manifest = manifest(&dir, &["a fox", "mock:fail=content_policy a hare"]);
    let output = run(setup.cmd(&["batch", "-m", "flux-schnell", manifest.as_str()])).await;
    assert_eq!(output.status.code(), Some(6), "a generation failed");
    // A line added since: not started yet.
    std::fs::write(
        &manifest,
        "a fox\nmock:fail=content_policy a hare\nan owl\n",
    )
    .unwrap();

    let status = setup.json(&["batch", "status", manifest.as_str()]).await;
    assert_eq!(status["succeeded"][0]["line"], 1);
    assert_eq!(status["failed"][0]["line"], 2);
    assert_eq!(status["not_started"][0]["line"], 3);
}

/// A batch in the background, its events read from stdout and its notes from
/// stderr.
struct Running {
    child: tokio::process::Child,
    events: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    notes: tokio::io::Lines<BufReader<tokio::process::ChildStderr>>,
}

impl Running {
    fn start(setup: &Setup, args: &[&str]) -> Self {
        let mut cmd = tokio::process::Command::from(setup.process(args));
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let events = BufReader::new(child.stdout.take().unwrap()).lines();
        let notes = BufReader::new(child.stderr.take().unwrap()).lines();
        Self {
            child,
            events,
            notes,
        }
    }

    async fn created(&mut self, count: usize) {
        let mut seen = 0;
        while seen < count {
            let line = self.events.next_line().await.unwrap().expect("an event");
            seen += usize::from(line.contains("\"created\""));
        }
    }

    async fn note(&mut self, needle: &str) -> String {
        while let Some(line) = self.notes.next_line().await.unwrap() {
            if line.contains(needle) {
                return line;
            }
        }
        panic!("stderr ended without {needle:?}");
    }

    fn interrupt(&self) {
        let pid = self.child.id().unwrap().to_string();
        assert!(
            std::process::Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
    }
}

#[tokio::test]
async fn a_first_ctrl_c_stops_creating_and_follows_what_runs_to_its_end() {
    let setup = Setup::new().await;
    let dir = scratch("batch-ctrl-c");
    let lines = prompts(6);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let manifest = manifest(&dir, &lines);
    let mut batch = Running::start(
        &setup,
        &[
            "batch",
            "-m",
            "flux-schnell",
            manifest.as_str(),
            "--max-active",
            "2",
        ],
    );
    batch.created(2).await;

    batch.interrupt();
    batch.note("stopping: no new generations").await;
    // The two that run end on the service; the batch sees them end.
    setup.mock.advance_clock(10.0).unwrap();
    let status = batch.child.wait().await.unwrap();

    assert_eq!(status.code(), Some(130));
    assert_eq!(creates(&setup), 2, "nothing was created after Ctrl-C");
    let states: Vec<Value> = results(&manifest)
        .iter()
        .map(|r| r["event"].clone())
        .collect();
    assert_eq!(&states[..2], ["succeeded", "succeeded"]);
    assert!(states[2..].iter().all(|s| s == "not_started"), "{states:?}");
}

#[tokio::test]
async fn a_second_ctrl_c_exits_at_once_and_tells_how_to_go_on() {
    let setup = Setup::new().await;
    let dir = scratch("batch-ctrl-c-twice");
    let manifest = manifest(&dir, &["a fox", "a hare", "an owl"]);
    let mut batch = Running::start(
        &setup,
        &[
            "batch",
            "-m",
            "flux-schnell",
            manifest.as_str(),
            "--max-active",
            "1",
        ],
    );
    batch.created(1).await;
    batch.interrupt();
    batch.note("stopping").await;

    batch.interrupt();
    let told = batch.note("exited").await;
    let status = batch.child.wait().await.unwrap();

    assert_eq!(status.code(), Some(130));
    assert!(told.contains("batch -m flux-schnell"), "{told}");
    assert!(told.contains("paying for nothing twice"), "{told}");
}
