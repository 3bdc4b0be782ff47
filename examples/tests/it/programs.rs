//! The example programs, each run as a process against a mock server.

use std::path::PathBuf;

use mediagen::{Client, GenerationRequest, WebhookEndpointRequest, WebhookEndpointUpdate};
use mediagen_mock_server::MockServer;

use crate::{Running, mock_for_webhooks, program, run};

#[tokio::test]
async fn quickstart_creates_waits_and_downloads_the_image() {
    // 50 times faster than real time: the 5 seconds of a flux-schnell task take 0.1 s.
    let mock = MockServer::builder().real_clock(50.0).start().await;
    let user = mock.create_user(100.0).unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("quickstart-out");
    std::fs::remove_dir_all(&out).ok();
    let mut cmd = program("quickstart", &mock, &user.api_key);
    cmd.arg("flux-schnell")
        .arg("a lighthouse at dusk")
        .arg(&out);

    let output = run(cmd).await;

    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(" SUCCEEDED (2.50 RUB)"), "{stdout}");
    let saved: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "one output, one file");
    assert!(stdout.contains(&format!("saved {}", saved[0].display())));
    assert!(std::fs::read(&saved[0]).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 0.0)),
        "charged once"
    );
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}

#[tokio::test]
async fn batch_keeps_at_most_five_active_and_reports_each_prompts_result() {
    let mock = MockServer::builder().real_clock(50.0).start().await;
    let user = mock.create_user(100.0).unwrap();
    let mut prompts: String = (0..7).map(|n| format!("fox number {n}\n")).collect();
    prompts.push_str("a fox mock:fail=content_policy\n");
    let mut cmd = assert_cmd::Command::from(program("batch", &mock, &user.api_key));
    cmd.arg("flux-schnell").write_stdin(prompts);

    let output = run(cmd).await;

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.ends_with("7 succeeded, 1 failed\n"), "{stdout}");
    assert!(
        stdout.contains("#7 failed: generation ") && stdout.contains("content_policy"),
        "the failed prompt's error: {stdout}"
    );
    assert!(
        !stdout.contains("{ ") && !stdout.contains("Some("),
        "words for people, never Rust's debug output: {stdout}"
    );
    assert!(!output.status.success(), "a failure is in the exit status");
    let active = stdout.lines().filter_map(|line| {
        let (_, rest) = line.split_once(" done, ")?;
        rest.split_once(" active]")?.0.parse::<usize>().ok()
    });
    assert_eq!(
        active.max(),
        Some(5),
        "never above the service's 5 active tasks: {stdout}"
    );
    assert_eq!(stdout.matches("] #").count(), 8 * 2, "created, then ended");
    mock.check_ledger().unwrap();
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}

#[tokio::test]
async fn webhook_receiver_prints_each_verified_event_once_and_refuses_forgeries() {
    let mock = mock_for_webhooks().await;
    let user = mock.create_user(100.0).unwrap();
    let client = Client::new(mock.uri(), &user.api_key).unwrap();
    // The receiver needs the endpoint's secret to start, and the endpoint the
    // receiver's address: it starts at a placeholder and moves once the port is known.
    let endpoint = client
        .webhooks()
        .create(WebhookEndpointRequest::new("http://127.0.0.1:9/webhooks"))
        .await
        .unwrap();
    let mut cmd = program("webhook_receiver", &mock, &user.api_key);
    cmd.env("MEDIAGEN_WEBHOOK_SECRET", endpoint.secret.expose())
        .arg("0");
    let mut receiver = Running::spawn(cmd);
    let listening = receiver.next_line().await.unwrap();
    let url = listening.strip_prefix("listening on ").unwrap();
    client
        .webhooks()
        .update(&endpoint.id, WebhookEndpointUpdate::new().url(url))
        .await
        .unwrap();

    let completed = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();
    mock.advance_clock(30.0).unwrap();
    mock.deliveries_settled().await;
    let image = client.generations().get(completed.id).await.unwrap();
    assert_eq!(
        receiver.next_line().await.unwrap(),
        format!("{} completed: {}", completed.id, image.output_urls[0])
    );

    // The same message again, as a retry would bring it, then a new one: the
    // receiver's next line is the new one.
    let attempts = client
        .webhooks()
        .deliveries_page(&endpoint.id, None)
        .await
        .unwrap();
    client
        .webhooks()
        .redeliver(&endpoint.id, attempts.items[0].message_id)
        .await
        .unwrap();
    mock.advance_clock(1.0).unwrap();
    mock.deliveries_settled().await;
    let failed = client
        .generations()
        .create(GenerationRequest::new(
            "flux-schnell",
            "mock:fail=content_policy",
        ))
        .await
        .unwrap();
    mock.advance_clock(30.0).unwrap();
    mock.deliveries_settled().await;
    assert_eq!(
        receiver.next_line().await.unwrap(),
        format!(
            "{} failed with content_policy (its cost is back on the balance)",
            failed.id
        )
    );
    let attempts = client
        .webhooks()
        .deliveries_page(&endpoint.id, None)
        .await
        .unwrap();
    assert_eq!(attempts.items.len(), 3, "first, redelivery, second message");
    assert!(
        attempts
            .items
            .iter()
            .all(|a| a.response_status == Some(204)),
        "the duplicate is acknowledged too, or the service sends it again"
    );

    let forged = reqwest::Client::new()
        .post(url)
        .header("webhook-id", attempts.items[0].message_id.to_string())
        .header("webhook-timestamp", "1700000000")
        .header("webhook-signature", "v1,Zm9yZ2Vk")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 400);

    // The mock's probes: a wrong signature and a stale timestamp are refused,
    // a repeat of an acknowledged message is taken.
    let report = mock
        .probe_webhooks(&endpoint.id.to_string())
        .await
        .expect("the endpoint exists");
    assert!(report.probes.iter().all(|p| p.passed), "{report:#?}");
    // Our own client and receiver are held to the mock's verdict.
    mock.assert_clean();
}

#[tokio::test]
async fn rate_limit_poller_follows_each_active_generation_spending_half_the_quota_left() {
    // A manual clock: the generations stay PENDING until the poller has seen them.
    let mock = MockServer::start().await;
    let user = mock.create_user(100.0).unwrap();
    let client = Client::new(mock.uri(), &user.api_key).unwrap();
    let mut ids = Vec::new();
    for n in 0..2 {
        let request = GenerationRequest::new("flux-schnell", format!("owl {n}"));
        ids.push(client.generations().create(request).await.unwrap().id);
    }

    let mut poller = Running::spawn(program("rate_limit_poller", &mock, &user.api_key));
    let mut lines = poller.lines_until(|line| line.ends_with(" PENDING")).await;
    mock.advance_clock(30.0).unwrap();
    lines.extend(poller.finish().await);

    for id in &ids {
        let statuses: Vec<_> = lines
            .iter()
            .filter(|l| l.starts_with(&id.to_string()))
            .collect();
        assert_eq!(
            statuses.last().map(|l| l.ends_with(" SUCCEEDED")),
            Some(true),
            "{lines:#?}"
        );
    }
    assert_eq!(lines.last().map(String::as_str), Some("all ended"));
    let quotas: Vec<_> = lines.iter().filter_map(|l| parse_quota(l)).collect();
    assert!(quotas.len() >= 3, "a pause before each read: {lines:#?}");
    for (remaining, reset_secs, pause_ms) in quotas {
        // The printed pause is rounded down to the millisecond, so one more is longer
        // than the real one.
        let reads_at_this_pace = reset_secs as f64 * 1000.0 / (pause_ms + 1) as f64;
        assert!(
            reads_at_this_pace <= f64::from(remaining) / 2.0,
            "{remaining} left for {reset_secs} s, a read every {pause_ms} ms"
        );
    }
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}

/// `(remaining, reset seconds, pause ms)` of the poller's line
/// `  quota 55/60 for 60 s: next read in 2222 ms`.
fn parse_quota(line: &str) -> Option<(u32, u64, u64)> {
    let rest = line.trim_start().strip_prefix("quota ")?;
    let (remaining, rest) = rest.split_once('/')?;
    let (_, rest) = rest.split_once(" for ")?;
    let (reset, rest) = rest.split_once(" s: next read in ")?;
    let pause = rest.strip_suffix(" ms")?;
    Some((
        remaining.parse().ok()?,
        reset.parse().ok()?,
        pause.parse().ok()?,
    ))
}
