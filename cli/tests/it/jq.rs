//! `--jq`: a jq filter on every JSON answer and on each record of a stream.

use crate::golden::check;
use crate::{Setup, envelope, run, text};

/// A mock with three generations of known prompts, ended.
async fn three_generations() -> Setup {
    let setup = Setup::new().await;
    for prompt in ["a quiet harbour", "a paper crane", "a storm over the sea"] {
        setup.created(prompt).await;
    }
    setup.mock.advance_clock(60.0).unwrap();
    setup
}

#[tokio::test]
async fn a_list_answer_is_filtered_whole_with_raw_strings_and_compact_json() {
    let setup = three_generations().await;
    let output = run(setup.cmd(&[
        "list",
        "--jq",
        r#"sort_by(.prompt)[] | "\(.prompt)\t\(.status)", {model: .modelSlug, cost: .costRub}"#,
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    check("jq-list.txt", &text(&output.stdout));
}

#[tokio::test]
async fn a_stream_is_filtered_record_by_record() {
    let setup = three_generations().await;
    // In JSON Lines each generation is a document of its own: `.prompt`, not `.[]`.
    let output = run(setup.cmd(&["list", "--format", "jsonl", "--jq", ".prompt"])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let mut prompts: Vec<&str> = std::str::from_utf8(&output.stdout)
        .unwrap()
        .lines()
        .collect();
    prompts.sort_unstable();
    assert_eq!(
        prompts,
        ["a paper crane", "a quiet harbour", "a storm over the sea"]
    );
}

#[tokio::test]
async fn a_wrong_filter_is_a_usage_error_at_its_column_before_anything_is_sent() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["--format", "human", "list", "--jq", ".[] | .id |"])).await;
    assert_eq!(output.status.code(), Some(2));
    check("jq-wrong-filter.txt", &text(&output.stderr));
    // Scripts get the same in the envelope.
    let output = run(setup.cmd(&["list", "--jq", "map(.id) | nosuch"])).await;
    assert_eq!(output.status.code(), Some(2));
    let message = envelope(&output)["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("undefined filter `nosuch` at column 12"),
        "{message}"
    );
    assert!(setup.mock.list_requests().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_failing_filter_names_the_record_it_failed_on() {
    let setup = three_generations().await;
    let output = run(setup.cmd(&["list", "--format", "jsonl", "--jq", ".prompt + 1"])).await;
    assert_eq!(output.status.code(), Some(1));
    let message = envelope(&output)["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("the --jq filter failed on record 1, \""),
        "{message}"
    );
    assert!(message.contains("cannot calculate"), "{message}");
}

#[tokio::test]
async fn an_error_keeps_its_envelope_unfiltered() {
    let setup = Setup::new().await;
    let output =
        run(setup.cmd(&["get", "00000000-0000-4000-8000-000000000000", "--jq", ".id"])).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(envelope(&output)["code"], "NOT_FOUND");
}

#[tokio::test]
async fn jq_refuses_output_for_people() {
    let output = run(crate::bare(&["--format", "human", "balance", "--jq", "."])).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr)
            .contains("--jq filters JSON, so it cannot be used with --format human"),
        "{}",
        text(&output.stderr)
    );
}
