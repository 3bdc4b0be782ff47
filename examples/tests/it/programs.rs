//! The example programs, each run against a mock server.

use futures::TryStreamExt;
use mediagen::GenerationRequest;
use mediagen_mock_server::MockServer;

use crate::{bind_receiver, program, run, serve_receiver};

#[tokio::test]
async fn quickstart_creates_waits_and_downloads() {
    let mock = MockServer::builder().real_clock(50.0).start().await;
    let user = mock.create_user(100.0);
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("quickstart-out");
    std::fs::remove_dir_all(&out).ok();
    let mut cmd = program("quickstart", &mock, &user.api_key);
    cmd.args([
        "flux-schnell",
        "a lighthouse at dusk",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8(run(cmd).await.stdout).unwrap();
    assert!(stdout.contains("SUCCEEDED"), "{stdout}");
    let saved: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(saved.len(), 1);
    let bytes = std::fs::read(saved[0].as_ref().unwrap().path()).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 0.0)),
        "charged once"
    );
}

#[tokio::test]
async fn batch_runs_more_prompts_than_the_concurrency_cap_and_all_succeed() {
    let mock = MockServer::builder().real_clock(50.0).start().await;
    let user = mock.create_user(100.0);
    let mut cmd = program("batch", &mock, &user.api_key);
    let prompts: String = (0..8).map(|n| format!("fox number {n}\n")).collect();
    cmd.arg("flux-schnell").write_stdin(prompts);
    let stdout = String::from_utf8(run(cmd).await.stdout).unwrap();
    assert!(stdout.ends_with("8 succeeded, 0 failed\n"), "{stdout}");
    let most_active = stdout
        .lines()
        .filter_map(|l| {
            l.split(" active]")
                .next()?
                .rsplit(", ")
                .next()?
                .parse::<usize>()
                .ok()
        })
        .max();
    assert_eq!(
        most_active,
        Some(5),
        "never above the service's 5 active tasks: {stdout}"
    );
    mock.check_ledger().unwrap();
}

#[tokio::test]
async fn rate_limit_poller_follows_every_active_generation_to_its_end() {
    let mock = MockServer::builder().real_clock(50.0).start().await;
    let user = mock.create_user(100.0);
    let client = mediagen::Client::new(mock.uri(), &user.api_key).unwrap();
    for n in 0..3 {
        client
            .generations()
            .create(GenerationRequest::new("flux-schnell", format!("owl {n}")))
            .await
            .unwrap();
    }
    let stdout = String::from_utf8(
        run(program("rate_limit_poller", &mock, &user.api_key))
            .await
            .stdout,
    )
    .unwrap();
    assert_eq!(stdout.matches(" SUCCEEDED").count(), 3, "{stdout}");
    assert!(
        stdout.contains("quota ") && stdout.ends_with("all ended\n"),
        "{stdout}"
    );
    let ended: Vec<_> = client
        .generations()
        .list(mediagen::GenerationFilter::new())
        .try_collect()
        .await
        .unwrap();
    assert!(ended.iter().all(|g| !g.status.is_active()));
}

#[tokio::test]
async fn the_receiver_verifies_skips_duplicates_and_refuses_forgeries() {
    let mock = MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let user = mock.create_user(100.0);
    let client = mediagen::Client::new(mock.uri(), &user.api_key).unwrap();
    let (listener, url) = bind_receiver().await;
    let endpoint = client
        .webhooks()
        .create(mediagen::WebhookEndpointRequest::new(&url))
        .await
        .unwrap();
    let mut events = serve_receiver(listener, endpoint.secret.expose());

    let queued = client
        .webhooks()
        .send_test(&endpoint.id, None)
        .await
        .unwrap();
    mock.advance(1.0);
    mock.deliveries_settled().await;
    client
        .webhooks()
        .redeliver(&endpoint.id, queued.message_id)
        .await
        .unwrap();
    mock.advance(1.0);
    mock.deliveries_settled().await;

    let first = events.recv().await.unwrap();
    assert_eq!(first.webhook_id, queued.message_id.to_string());
    assert_eq!(first.event_type, "generation.completed");
    assert!(
        events.try_recv().is_err(),
        "the redelivery of the same webhook-id is skipped"
    );

    let forged = reqwest::Client::new()
        .post(&url)
        .header("webhook-id", "msg_x")
        .header("webhook-timestamp", "1700000000")
        .header("webhook-signature", "v1,Zm9yZ2Vk")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 400);
}
