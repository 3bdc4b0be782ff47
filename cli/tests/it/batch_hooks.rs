//! `mediagen batch --listen`: waits that end on the service's webhooks, with an
//! endpoint of the run written in the journal before anything waits on it; and
//! what a batch tells and saves after it ran.

use std::path::Path;

use mediagen_mock_server::{Fault, MockServer};

use crate::batch::{killed_after, results};
use crate::{Setup, run, scratch, text};

/// A mock 20 times faster than real time that delivers to loopback addresses,
/// as `--allow-private-webhooks` makes it.
async fn setup() -> Setup {
    let mock = MockServer::builder()
        .real_clock(20.0)
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    Setup::with(mock, 1000.0)
}

fn manifest(dir: &Path, count: usize) -> String {
    let path = dir.join("jobs.txt");
    let lines: String = (1..=count).map(|n| format!("a fox number {n}\n")).collect();
    std::fs::write(&path, lines).unwrap();
    path.display().to_string()
}

fn count(setup: &Setup, method: &str, path: impl Fn(&str) -> bool) -> usize {
    setup
        .mock
        .list_requests()
        .iter()
        .filter(|r| r.method == method && path(&r.path))
        .count()
}

fn endpoint_creates(setup: &Setup) -> usize {
    count(setup, "POST", |p| p == "/v1/webhook-endpoints")
}

fn generation_reads(setup: &Setup) -> usize {
    count(setup, "GET", |p| p.starts_with("/v1/generations/"))
}

async fn endpoints(setup: &Setup) -> usize {
    setup.client().webhooks().list().await.unwrap().len()
}

fn all_succeeded(manifest: &str, lines: usize) {
    let written = results(manifest);
    assert_eq!(written.len(), lines);
    assert!(
        written.iter().all(|r| r["status"] == "SUCCEEDED"),
        "{written:?}"
    );
}

const LISTEN: [&str; 2] = ["--listen", "127.0.0.1:0"];

/// `batch` of `manifest` with waits that end on webhooks, at a free port.
fn listening(manifest: &str) -> [&str; 6] {
    [
        "batch",
        "-m",
        "flux-schnell",
        manifest,
        LISTEN[0],
        LISTEN[1],
    ]
}

/// A port on 127.0.0.1 free a moment ago, for a command to listen on.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test]
async fn waits_end_on_webhooks_and_the_runs_endpoint_is_deleted_at_the_end() {
    let setup = setup().await;
    let dir = scratch("hooks-run");
    let manifest = manifest(&dir, 6);
    let args = listening(&manifest);

    let output = run(setup.cmd(&args)).await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    all_succeeded(&manifest, 6);
    assert_eq!(endpoint_creates(&setup), 1);
    assert_eq!(endpoints(&setup).await, 0, "the run's endpoint is gone");
    assert!(
        generation_reads(&setup) < 6,
        "the waits ended on webhooks, not on reads: {} reads",
        generation_reads(&setup)
    );
    let stderr = text(&output.stderr);
    assert!(stderr.contains("waits end on webhooks"), "{stderr}");
}

#[tokio::test]
async fn a_webhook_url_the_service_refuses_fails_before_any_generation_is_created() {
    // A mock that refuses private addresses, as the real service does.
    let setup = Setup::with(MockServer::builder().real_clock(20.0).start().await, 1000.0);
    let dir = scratch("hooks-refused");
    let manifest = manifest(&dir, 2);
    let args = listening(&manifest);

    let output = run(setup.cmd(&args)).await;

    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("are not allowed"), "{stderr}");
    assert!(stderr.contains("--allow-private-webhooks"), "{stderr}");
    assert_eq!(count(&setup, "POST", |p| p == "/v1/generations"), 0);
    assert_eq!(endpoints(&setup).await, 0);
}

#[tokio::test]
async fn an_endpoint_create_without_an_answer_is_not_sent_again_and_is_found_and_deleted() {
    let setup = setup().await;
    // The service makes the endpoint, then the connection drops before the answer.
    setup
        .mock
        .inject_fault(
            Fault::drop_after()
                .on("POST", "/v1/webhook-endpoints")
                .times(1),
        )
        .unwrap();
    let dir = scratch("hooks-lost-create");
    let manifest = manifest(&dir, 3);
    let args = listening(&manifest);

    let output = run(setup.cmd(&args)).await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    all_succeeded(&manifest, 3);
    assert_eq!(endpoint_creates(&setup), 1, "a create is never repeated");
    assert_eq!(endpoints(&setup).await, 0, "found by its URL and deleted");
    let stderr = text(&output.stderr);
    assert!(stderr.contains("got no clear answer"), "{stderr}");
}

#[tokio::test]
async fn a_batch_killed_and_run_again_reuses_the_endpoint_of_its_journal_and_then_deletes_it() {
    let setup = setup().await;
    let dir = scratch("hooks-resume");
    let manifest = manifest(&dir, 8);
    // One address for both runs: the URL, http://ADDR/, is the same.
    let listen = format!("127.0.0.1:{}", free_port());
    let args = [
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
        "--listen",
        &listen,
    ];
    killed_after(&setup, &args, 2).await;
    assert_eq!(
        endpoints(&setup).await,
        1,
        "the killed run left its endpoint"
    );

    let again = run(setup.cmd(&args)).await;

    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("reusing endpoint"));
    all_succeeded(&manifest, 8);
    assert_eq!(endpoint_creates(&setup), 1, "reused, not registered again");
    assert_eq!(endpoints(&setup).await, 0);
    let user = setup.mock.get_user(setup.user).unwrap();
    assert_eq!(user.generations, 8);
}

#[tokio::test]
async fn the_endpoint_of_a_crashed_run_is_deleted_by_the_next_run_that_polls() {
    let setup = setup().await;
    let dir = scratch("hooks-cleanup");
    let manifest = manifest(&dir, 8);
    killed_after(&setup, &listening(&manifest), 2).await;
    let args = ["batch", "-m", "flux-schnell", manifest.as_str()];

    let again = run(setup.cmd(&args)).await;

    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(endpoints(&setup).await, 0);
    assert!(text(&again.stderr).contains("deleted endpoint"));
}

#[tokio::test]
async fn with_a_webhook_secret_the_batch_uses_the_registered_endpoint_and_leaves_it() {
    let setup = setup().await;
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/hooks");
    let created = setup
        .client()
        .webhooks()
        .create(mediagen::WebhookEndpointRequest::new(&url))
        .await
        .unwrap();
    let dir = scratch("hooks-registered");
    let manifest = manifest(&dir, 4);
    let listen = format!("127.0.0.1:{port}");
    let output = run(setup.cmd(&[
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
        "--listen",
        &listen,
        "--webhook-url",
        &url,
        "--webhook-secret",
        created.secret.expose(),
    ]))
    .await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    all_succeeded(&manifest, 4);
    assert_eq!(endpoint_creates(&setup), 1, "only the user's own");
    assert_eq!(endpoints(&setup).await, 1, "left as it was");
    assert!(generation_reads(&setup) < 4, "{}", generation_reads(&setup));
}

#[tokio::test]
async fn a_content_refusal_is_told_to_change_its_line_and_a_transient_failure_to_run_again() {
    let setup = Setup::fast().await;
    let dir = scratch("batch-failure-hints");
    let path = dir.join("jobs.txt");
    std::fs::write(
        &path,
        "a fox\nmock:fail=content_policy a hare\nmock:fail=timeout an owl\n",
    )
    .unwrap();
    let manifest = path.display().to_string();
    let args = ["batch", "-m", "flux-schnell", manifest.as_str()];

    let first = run(setup.cmd(&args)).await;

    assert_eq!(first.status.code(), Some(6), "{}", text(&first.stderr));
    let stderr = text(&first.stderr);
    let hint = |needle: &str| {
        stderr
            .lines()
            .find(|line| line.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?}: {stderr}"))
            .to_owned()
    };
    let refusal = hint("line 2 (content_policy)");
    assert!(
        refusal.contains("a changed line is a new line"),
        "{refusal}"
    );
    let transient = hint("line 3 (timeout)");
    assert!(
        transient.contains("run the same command again"),
        "{transient}"
    );
    assert!(!stderr.contains("runs what is left"), "{stderr}");

    // The rerun creates the transient failure anew, and only it.
    let creates = |setup: &Setup| count(setup, "POST", |p| p == "/v1/generations");
    let before = creates(&setup);
    let again = run(setup.cmd(&args)).await;
    assert_eq!(again.status.code(), Some(6));
    assert_eq!(creates(&setup), before + 1);
}

#[tokio::test]
async fn a_lines_output_without_o_is_saved_in_the_current_directory_and_told_first() {
    let setup = Setup::fast().await;
    let dir = scratch("batch-output-here");
    let path = dir.join("jobs.jsonl");
    std::fs::write(
        &path,
        "{\"model\": \"flux-schnell\", \"prompt\": \"an owl\", \"output\": \"owl.png\"}\n\
         {\"model\": \"flux-schnell\", \"prompt\": \"a hare\"}\n",
    )
    .unwrap();

    let output = run({
        let mut cmd = setup.cmd(&["batch", "jobs.jsonl"]);
        cmd.current_dir(&dir);
        cmd
    })
    .await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(dir.join("owl.png").is_file(), "saved where the line says");
    let stderr = text(&output.stderr);
    assert!(stderr.contains("line(s) 1 name an \"output\""), "{stderr}");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".png"))
        .collect();
    assert_eq!(files, ["owl.png"], "a line without output is not saved");
}

#[tokio::test]
async fn batch_and_generate_number_their_files_alike_from_one() {
    let setup = Setup::fast().await;
    let dir = scratch("batch-numbering");
    let manifest = manifest(&dir, 1);
    let out = dir.join("out");
    let output = run(setup.cmd(&[
        "batch",
        "-m",
        "flux-schnell",
        manifest.as_str(),
        "-o",
        out.to_str().unwrap(),
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let id = results(&manifest)[0]["id"].as_str().unwrap().to_owned();
    assert!(out.join(format!("1-{id}-1.png")).is_file());

    let generated = setup
        .json(&[
            "--json",
            "generate",
            "--wait",
            "-m",
            "flux-schnell",
            "a hare",
            "-o",
            out.to_str().unwrap(),
        ])
        .await;
    let id = generated["id"].as_str().unwrap();
    assert!(out.join(format!("{id}-1.png")).is_file(), "{generated}");
}

#[tokio::test]
async fn a_webhook_secret_without_an_endpoint_for_the_url_is_refused_before_anything_is_created() {
    let setup = setup().await;
    let dir = scratch("hooks-no-endpoint");
    let manifest = manifest(&dir, 2);
    let mut args = listening(&manifest).to_vec();
    args.extend([
        "--webhook-url",
        "http://127.0.0.1:9/hooks",
        "--webhook-secret",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ]);

    let output = run(setup.cmd(&args)).await;

    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("no endpoint of this account"), "{stderr}");
    assert_eq!(count(&setup, "POST", |p| p == "/v1/generations"), 0);
    assert_eq!(endpoint_creates(&setup), 0);
}
