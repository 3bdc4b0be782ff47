//! `mediagen mock judge`: the mock library's judge inside mediagen, with the
//! help and the exit codes of `mediagen-mock judge`.

use crate::{bare, run, scratch, text};

/// Two creates, the first answered 503 by the fault of `--fault`, the second
/// sent with another Idempotency-Key: `create-retry-new-key`.
const NEW_KEY_AFTER_503: &str = r#"
import json, os, urllib.request, urllib.error
def create(key):
    request = urllib.request.Request(
        os.environ["MEDIAGEN_BASE_URL"] + "/v1/generations", method="POST",
        data=json.dumps({"modelSlug": "flux-schnell", "prompt": "a fox"}).encode(),
        headers={"Authorization": "Bearer " + os.environ["MEDIAGEN_API_KEY"],
                 "Idempotency-Key": key, "Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(request, timeout=30).status
    except urllib.error.HTTPError as error:
        return error.code
assert create("key-1") == 503
assert create("key-2") == 202
"#;

const FAULT: &str = "effect=error,status=503,method=POST,path=/v1/generations,count=1";

fn judge(args: &[&str]) -> assert_cmd::Command {
    let mut cmd = bare(&[&["mock", "judge"], args].concat());
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd
}

#[tokio::test]
async fn the_judges_help_is_the_mock_judges_with_the_verdict_file_as_verdict_json() {
    let output = run(bare(&["mock", "judge", "--help"])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let help = text(&output.stdout);
    crate::golden::check("mock-judge-help.txt", &help);
    for told in [
        "MEDIAGEN_MOCK_URL",
        "MEDIAGEN_MOCK_CONTROL_TOKEN",
        "--verdict-json <FILE>",
        "Exit codes:",
        "127  COMMAND was not found",
    ] {
        assert!(help.contains(told), "{told} in {help}");
    }
}

#[tokio::test]
async fn a_violation_fails_the_run_and_the_commands_own_code_goes_through() {
    let dir = scratch("judge-violation");
    let (junit, json) = (dir.join("verdict.xml"), dir.join("verdict.json"));
    let output = run(judge(&[
        "--fault",
        FAULT,
        "--junit",
        junit.to_str().unwrap(),
        "--verdict-json",
        json.to_str().unwrap(),
        "--",
        "python3",
        "-c",
        NEW_KEY_AFTER_503,
    ]))
    .await;
    let said = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("create-retry-new-key: violation"), "{said}");
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(xml.contains(r#"type="create-retry-new-key""#), "{xml}");
    let verdict: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the JSON file")).unwrap();
    assert_eq!(verdict["clean"], false);

    let output = run(judge(&["--", "sh", "-c", "exit 3"])).await;
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let output = run(judge(&["--", "no-such-command-of-the-judge"])).await;
    assert_eq!(output.status.code(), Some(127), "{}", text(&output.stderr));
}
