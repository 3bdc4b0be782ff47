//! `mediagen-mock judge -- COMMAND`: the real binary runs small clients (Python
//! with urllib, as a suite in any language would be) and exits by the verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mediagen_mock_server::known_ids;
use serde_json::Value;

use crate::Binary;
use crate::receiver::{Answer, Receiver};

/// What every client below starts with: the world from its environment, and
/// calls to the service and to the world's control API.
const PRELUDE: &str = r#"
import json, os, sys, time, urllib.request, urllib.error
BASE = os.environ["MEDIAGEN_BASE_URL"]
KEY = os.environ["MEDIAGEN_API_KEY"]
CONTROL = os.environ["MEDIAGEN_MOCK_URL"]
TOKEN = os.environ.get("MEDIAGEN_MOCK_CONTROL_TOKEN")
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

def call(method, url, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with OPENER.open(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")

def service(method, path, body=None, key=None):
    headers = {"Authorization": "Bearer " + KEY}
    if key:
        headers["Idempotency-Key"] = key
    return call(method, BASE + path, body, headers)

def control(method, path, body=None):
    return call(method, CONTROL + path, body, {"Authorization": "Bearer " + TOKEN} if TOKEN else {})

CREATE = {"modelSlug": "flux-schnell", "prompt": "a lighthouse", "params": {"aspect_ratio": "16:9"}}
"#;

/// A create answered 503 (a fault injected through the control URL of the
/// environment), sent again with another Idempotency-Key: `create-retry-new-key`.
const NEW_KEY_AFTER_503: &str = r#"
status, _ = control("POST", "/_mock/faults",
                    {"effect": "error", "status": 503, "method": "POST", "path": "/v1/generations", "count": 1})
assert status == 201, status
assert service("POST", "/v1/generations", CREATE, key="key-1")[0] == 503
assert service("POST", "/v1/generations", CREATE, key="key-2")[0] == 202
"#;

/// A create without an Idempotency-Key: `create-without-key`, advice.
const CREATE_WITHOUT_KEY: &str = r#"
assert service("POST", "/v1/generations", CREATE)[0] == 202
"#;

/// The client's script: the prelude, then `body`.
fn client(body: &str) -> String {
    format!("{PRELUDE}\n{body}")
}

/// `mediagen-mock judge ARGS`, in an environment without the mock's own variables.
fn judge(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mediagen-mock"));
    command.arg("judge").args(args).env("RUST_LOG", "warn");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("MEDIAGEN_") {
            command.env_remove(name);
        }
    }
    command
}

/// `judge ARGS -- python3 -c SCRIPT`.
fn judge_python(args: &[&str], script: &str) -> Command {
    let mut command = judge(args);
    command.args(["--", "python3", "-c", script]);
    command
}

fn run(mut command: Command) -> Output {
    command
        .stdin(Stdio::null())
        .output()
        .expect("run mediagen-mock judge")
}

/// Run on a thread of its own, so that a receiver of the test's runtime answers meanwhile.
async fn run_beside(command: Command) -> Output {
    tokio::task::spawn_blocking(move || run(command))
        .await
        .expect("the judge's thread")
}

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        said(output)
    );
}

/// A folder of the test's own for the reports.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mediagen-judge-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn path(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// The test cases of a JUnit file: (name, the `type`s of its failures, whether it has system-out).
fn cases(xml: &str) -> Vec<(String, Vec<String>, bool)> {
    xml.split("<testcase ")
        .skip(1)
        .map(|case| {
            let attribute = |text: &str, name: &str| {
                let start =
                    text.find(&format!(" {name}=\"")).expect("the attribute") + name.len() + 3;
                text[start..start + text[start..].find('"').expect("its end")].to_owned()
            };
            let case = case.split("</testcase>").next().expect("a case");
            let failures = case
                .split("<failure ")
                .skip(1)
                .map(|failure| attribute(failure, "type"))
                .collect();
            (
                attribute(case, "name"),
                failures,
                case.contains("<system-out>"),
            )
        })
        .collect()
}

/// Whether python3's XML parser reads `file` (a well-formed document).
fn well_formed(file: &Path) -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])",
            path(file),
        ])
        .status()
        .expect("python3")
        .success()
}

#[test]
fn a_command_that_does_nothing_exits_0_with_a_clean_verdict_and_every_rule_a_passing_case() {
    let dir = scratch("clean");
    let junit = dir.join("reports/verdict.xml");
    let output = run(judge_python(&["--junit", path(&junit)], &client("pass")));
    assert_exit(&output, 0);
    assert!(
        said(&output).contains("clean, no findings"),
        "{}",
        said(&output)
    );
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file, its folder made");
    let rules: Vec<&str> = known_ids().collect();
    let found = cases(&xml);
    assert_eq!(
        found
            .iter()
            .map(|(name, _, _)| name.as_str())
            .collect::<Vec<_>>(),
        rules,
        "a case per rule, in the documentation's order"
    );
    assert!(found.iter().all(|(_, failures, _)| failures.is_empty()));
    assert!(
        xml.contains(&format!(
            r#"<testsuite name="mediagen-mock verdict" tests="{}" failures="0""#,
            rules.len()
        )),
        "{xml}"
    );
    assert!(well_formed(&junit));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_create_sent_again_with_another_key_fails_the_run_and_its_rules_case() {
    let dir = scratch("violation");
    let (junit, json) = (dir.join("verdict.xml"), dir.join("verdict.json"));
    let output = run(judge_python(
        &["--junit", path(&junit), "--json", path(&json)],
        &client(NEW_KEY_AFTER_503),
    ));
    assert_exit(&output, 1);
    let told = said(&output);
    assert!(told.contains("not clean"), "{told}");
    // Each finding in words, rule id first, then its facts.
    let at = told
        .find("\n  create-retry-new-key: violation, fails the run, 1 time")
        .unwrap_or_else(|| panic!("{told}"));
    let finding = &told[at..];
    for fact in [
        "Idempotency-Key",
        "document: ",
        "advice: ",
        "requests: req_",
    ] {
        assert!(finding.contains(fact), "{fact} in {finding}");
    }

    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(well_formed(&junit), "{xml}");
    let failed: Vec<_> = cases(&xml)
        .into_iter()
        .filter(|(_, failures, _)| !failures.is_empty())
        .collect();
    assert_eq!(
        failed,
        [(
            "create-retry-new-key".to_owned(),
            vec!["create-retry-new-key".to_owned()],
            false
        )]
    );
    assert!(xml.contains(r#"failures="1""#), "{xml}");
    assert!(
        xml.contains("advice: retry a create with the same Idempotency-Key"),
        "{xml}"
    );

    let answered: Value = serde_json::from_slice(&std::fs::read(&json).expect("the JSON file"))
        .expect("the verdict as JSON");
    assert_eq!(answered["clean"], false);
    assert_eq!(answered["findings"][0]["rule"], "create-retry-new-key");
    assert_eq!(answered["checked"]["requests"], 2);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_commands_own_failure_is_the_exit_code_whatever_the_verdict() {
    let output = run(judge(&["--", "sh", "-c", "exit 3"]));
    assert_exit(&output, 3);
    assert!(said(&output).contains("exited with 3"), "{}", said(&output));

    let failing = client(&format!("{NEW_KEY_AFTER_503}\nsys.exit(4)"));
    let output = run(judge_python(&[], &failing));
    assert_exit(&output, 4);
    assert!(
        said(&output).contains("create-retry-new-key: violation"),
        "the verdict is told all the same: {}",
        said(&output)
    );
}

#[test]
fn a_command_ended_by_a_signal_exits_128_and_the_signal() {
    let output = run(judge(&["--", "sh", "-c", "kill -TERM $$"]));
    assert_exit(&output, 143);
    assert!(said(&output).contains("signal 15"), "{}", said(&output));
}

#[test]
fn a_command_not_found_exits_127_and_one_not_executable_126() {
    let output = run(judge(&["--", "no-such-command-of-the-judge"]));
    assert_exit(&output, 127);
    assert!(
        said(&output).contains("cannot run `no-such-command-of-the-judge`: not found"),
        "{}",
        said(&output)
    );

    let dir = scratch("not-executable");
    let script = dir.join("script.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").expect("a script");
    let output = run(judge(&["--", path(&script)]));
    assert_exit(&output, 126);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn strict_makes_advice_fail_the_run_of_the_rules_it_names_or_of_every_rule() {
    let dir = scratch("strict");
    let junit = dir.join("verdict.xml");
    let script = client(CREATE_WITHOUT_KEY);

    let output = run(judge_python(&["--junit", path(&junit)], &script));
    assert_exit(&output, 0);
    assert!(
        said(&output).contains("create-without-key: advice, 1 time"),
        "{}",
        said(&output)
    );
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    let advice = cases(&xml)
        .into_iter()
        .find(|(name, _, _)| name == "create-without-key")
        .expect("its case");
    assert_eq!(
        advice.1,
        Vec::<String>::new(),
        "advice does not fail its case"
    );
    assert!(advice.2, "it is told in the case's system-out: {xml}");

    for strict in [
        "--strict=create-without-key",
        "--strict=poll-rate,create-without-key",
        "--strict",
    ] {
        let output = run(judge_python(&["--junit", path(&junit), strict], &script));
        assert_exit(&output, 1);
        assert!(
            said(&output).contains("create-without-key: advice, fails the run"),
            "{strict}: {}",
            said(&output)
        );
        let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
        assert!(well_formed(&junit));
        assert!(
            cases(&xml).contains(&(
                "create-without-key".to_owned(),
                vec!["create-without-key".to_owned()],
                false
            )),
            "{strict}: {xml}"
        );
    }

    let output = run(judge_python(&["--strict=poll-rate"], &script));
    assert_exit(&output, 0);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn an_unknown_rule_in_strict_is_a_usage_error_before_the_command_runs() {
    let dir = scratch("unknown-rule");
    let touched = dir.join("ran");
    let output = run(judge(&[
        "--strict=no-such-rule",
        "--",
        "touch",
        path(&touched),
    ]));
    assert_exit(&output, 2);
    let told = said(&output);
    assert!(
        told.contains("no-such-rule") && told.contains("create-retry-new-key"),
        "{told}"
    );
    assert!(!touched.exists(), "the command never ran");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_command_finds_the_world_under_the_names_the_node_and_python_faces_read() {
    let key = "mg_live_judge0000judge_0123456789abcdef0123456789abcdef";
    let script = r#"
import json, os
print(json.dumps({name: os.environ.get(name) for name in [
    "MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY", "MEDIAGEN_MOCK_URL", "MEDIAGEN_MOCK_API_KEY",
    "MEDIAGEN_MOCK_CONTROL_TOKEN"]}))
"#;
    let mut command = judge_python(&["--demo-api-key", key], script);
    // A token of another mock, left in the environment, is not sent to this one.
    command.env("MEDIAGEN_MOCK_CONTROL_TOKEN", "another-mocks-token");
    let output = run(command);
    assert_exit(&output, 0);
    let env: Value = serde_json::from_slice(&output.stdout).expect("the command's own stdout");
    let base = env["MEDIAGEN_BASE_URL"].as_str().expect("a base URL");
    assert!(base.starts_with("http://127.0.0.1:"), "{env}");
    assert_eq!(env["MEDIAGEN_MOCK_URL"], base);
    assert_eq!(env["MEDIAGEN_API_KEY"], key, "the serving options apply");
    assert_eq!(env["MEDIAGEN_MOCK_API_KEY"], key);
    assert_eq!(env["MEDIAGEN_MOCK_CONTROL_TOKEN"], Value::Null);

    let output = run(judge_python(
        &["--admin-token", "root-secret"],
        &client(NEW_KEY_AFTER_503),
    ));
    assert_exit(&output, 1);
}

async fn control_get(base: &str, path: &str, token: &str) -> Value {
    reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .expect("the mock answers")
        .json()
        .await
        .expect("JSON")
}

#[tokio::test]
async fn with_url_the_command_is_judged_in_a_world_of_its_own_ended_afterwards() {
    let mock = Binary::start(["--admin-token", "root-secret"]);
    let dir = scratch("url");
    let junit = dir.join("verdict.xml");
    let script = client(&format!(
        "{NEW_KEY_AFTER_503}\nassert BASE.startswith({:?} + '/worlds/'), BASE\n\
         assert TOKEN and TOKEN != 'root-secret', TOKEN",
        mock.base
    ));
    let output = run_beside(judge_python(
        &[
            "--url",
            &mock.base,
            "--admin-token",
            "root-secret",
            "--junit",
            path(&junit),
        ],
        &script,
    ))
    .await;
    assert_exit(&output, 1);
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(xml.contains(r#"type="create-retry-new-key""#), "{xml}");

    let worlds = control_get(&mock.base, "/_mock/worlds", "root-secret").await;
    assert_eq!(worlds["data"], serde_json::json!([]), "the world was ended");
    let root = control_get(&mock.base, "/_mock/verdict", "root-secret").await;
    assert_eq!(
        root["checked"]["requests"], 0,
        "the root saw none of it: {root}"
    );

    let output = run_beside(judge(&["--url", &mock.base, "--", "true"])).await;
    assert_exit(&output, 125);
    assert!(said(&output).contains("--admin-token"), "{}", said(&output));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn sigterm_to_the_judge_reaches_the_command_and_the_verdict_is_still_told() {
    let script = "trap 'exit 143' TERM; echo ready; while :; do sleep 0.05; done";
    let mut command = judge(&["--", "sh", "-c", script]);
    let mut judging = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the judge");
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(judging.stdout.take().expect("stdout")),
        &mut ready,
    )
    .expect("the command's first line");
    assert_eq!(ready, "ready\n");
    let sent = Command::new("kill")
        .args(["-TERM", &judging.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let output = judging.wait_with_output().expect("the judge ends");
    assert_exit(&output, 143);
    let told = said(&output);
    assert!(told.contains("SIGTERM passed on to the command"), "{told}");
    assert!(told.contains("the mock's verdict after"), "{told}");
}

#[tokio::test]
async fn a_delivery_in_flight_when_the_command_exits_is_waited_for_and_judged() {
    let receiver = Receiver::start().await;
    receiver.script([Answer::After(500, std::time::Duration::from_millis(1500))]);
    // Registers the receiver, creates, moves the manual clock past the task's
    // end, and exits while the delivery is on its way.
    let script = client(&format!(
        r#"
status, endpoint = service("POST", "/v1/webhook-endpoints", {{"url": {url:?}}})
assert status == 201, endpoint
assert service("POST", "/v1/generations", CREATE, key="key-1")[0] == 202
assert control("POST", "/_mock/clock/advance", {{"seconds": 60}})[0] == 200
"#,
        url = receiver.url
    ));
    let output = run_beside(judge_python(
        &["--clock", "manual", "--allow-private-webhooks"],
        &script,
    ))
    .await;
    assert_exit(&output, 1);
    let told = said(&output);
    assert!(told.contains("receiver-failed: violation"), "{told}");
    assert!(told.contains("webhook-ids: "), "{told}");
    assert!(told.contains("1 webhook delivery"), "{told}");
    assert_eq!(receiver.received().len(), 1);
}
