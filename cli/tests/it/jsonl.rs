//! `--format jsonl`: every list command prints one JSON object per line, written as
//! the pages arrive.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{Background, Setup, run, scripted_process, text};

/// Each line of `stdout` parsed, asserting that every one is a JSON object.
fn objects(stdout: &[u8]) -> Vec<Value> {
    text(stdout)
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("not one JSON value per line ({err}): {line}"));
            assert!(value.is_object(), "a line is an object, not a list: {line}");
            value
        })
        .collect()
}

/// `mediagen --format jsonl <args>`, and its lines, asserting success.
async fn lines(setup: &Setup, args: &[&str]) -> Vec<Value> {
    let output = run(setup.cmd(&[&["--format", "jsonl"], args].concat())).await;
    assert!(
        output.status.success(),
        "{args:?}: {}",
        text(&output.stderr)
    );
    objects(&output.stdout)
}

#[tokio::test]
async fn every_list_command_prints_one_object_per_line() {
    let setup = Setup::with(
        mediagen_mock_server::MockServer::builder()
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
        1000.0,
    );
    let client = setup.client();
    // More than the mock's page of 20, five at a time (the active limit).
    for batch in 0..5 {
        for n in 0..5 {
            let prompt = format!("fox {batch}-{n}");
            let request = mediagen::GenerationRequest::new("flux-schnell", prompt);
            client.generations().create(request).await.unwrap();
        }
        setup.mock.advance_clock(60.0).unwrap();
    }
    let endpoint = setup
        .json(&["webhooks", "create", "http://127.0.0.1:9/hook"])
        .await;
    let endpoint = endpoint["id"].as_str().unwrap();
    setup.json(&["webhooks", "test", endpoint]).await;
    setup.mock.advance_clock(1.0).unwrap();
    setup.mock.deliveries_settled().await;

    let all = lines(&setup, &["list", "--all"]).await;
    assert_eq!(all.len(), 25, "two pages of the mock");
    let listed = setup.json(&["list", "--all"]).await;
    assert_eq!(
        Value::Array(all),
        listed,
        "the same items as --json, in order"
    );
    assert_eq!(lines(&setup, &["list", "-n", "3"]).await.len(), 3);

    let history = lines(
        &setup,
        &["history", "--type", "generation_charge", "-n", "30"],
    )
    .await;
    assert_eq!(
        history.len(),
        25,
        "one charge per generation, over two pages"
    );
    assert!(history.iter().all(|op| op["amountRub"] == -2.5));

    let endpoints = lines(&setup, &["webhooks", "list"]).await;
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0]["id"], endpoint);
    let attempts = lines(&setup, &["webhooks", "deliveries", endpoint]).await;
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0]["messageId"].is_string());

    assert_eq!(
        lines(&setup, &["invoices", "list"]).await,
        Vec::<Value>::new()
    );
    let balance = lines(&setup, &["balance"]).await;
    assert_eq!(balance.len(), 1, "anything else is one line");
}

/// A page of `count` generations with only the fields the service guarantees.
fn page(first: usize, count: usize, next: Option<&str>) -> ResponseTemplate {
    let data: Vec<Value> = (first..first + count)
        .map(|n| json!({"id": uuid::Uuid::from_u128(n as u128 + 1), "status": "SUCCEEDED", "costRub": 2.5}))
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "data": data, "nextCursor": next, "hasMore": next.is_some()
    }))
}

#[tokio::test]
async fn list_all_in_jsonl_prints_each_page_before_the_next_one_has_come() {
    const PAGE: usize = 100;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/generations"))
        .and(query_param_is_missing("cursor"))
        .respond_with(page(0, PAGE, Some("c1")))
        .mount(&server)
        .await;
    for n in 1..4 {
        Mock::given(method("GET"))
            .and(path("/v1/generations"))
            .and(query_param("cursor", format!("c{n}")))
            .respond_with(page(n * PAGE, PAGE, Some(&format!("c{}", n + 1))))
            .mount(&server)
            .await;
    }
    // The last page is not answered while the test runs: whatever the command prints,
    // it prints before the end of the list.
    Mock::given(method("GET"))
        .and(path("/v1/generations"))
        .and(query_param("cursor", "c4"))
        .respond_with(page(4 * PAGE, PAGE, None).set_delay(Duration::from_secs(3600)))
        .mount(&server)
        .await;
    let mut listing = Background::spawn(scripted_process(
        &server,
        &["--format", "jsonl", "--max-attempts", "1", "list", "--all"],
    ));
    let stdout = listing.child.stdout.take().expect("piped stdout");
    let mut stdout = BufReader::new(stdout).lines();

    // A command that gathered the whole list first would print nothing for an hour;
    // the bound only turns that into a failure.
    let first_pages = tokio::time::timeout(Duration::from_secs(120), async {
        let mut seen = Vec::new();
        while seen.len() < 4 * PAGE {
            let line = stdout.next_line().await.unwrap().expect("a line");
            seen.push(objects(line.as_bytes()).remove(0));
        }
        seen
    })
    .await
    .expect("the first four pages are printed while the fifth is awaited");

    for (n, generation) in first_pages.iter().enumerate() {
        assert_eq!(
            generation["id"],
            json!(uuid::Uuid::from_u128(n as u128 + 1)),
            "in order"
        );
    }
    assert!(
        listing.child.try_wait().unwrap().is_none(),
        "still waiting for the last page"
    );
}
