//! Every part at once: the SDK creates, the mock runs the task and signs the webhook,
//! the example receiver verifies it with webhook-verify.

use std::net::SocketAddr;
use std::time::Duration;

use futures::TryStreamExt;
use mediagen::{
    Client, GenerationFilter, GenerationRequest, GenerationStatus, RetryPolicy,
    WebhookEndpointRequest,
};
use mediagen_mock_server::{FailureCode, ForcedOutcome, MockServer, OutcomeKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::{bind_receiver, serve_receiver};

async fn mock_with_receiver() -> (
    MockServer,
    mediagen_mock_server::NewUser,
    Client,
    tokio::sync::mpsc::UnboundedReceiver<mediagen_examples::receiver::Event>,
) {
    let mock = MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let user = mock.create_user(100.0);
    let client = Client::new(mock.uri(), &user.api_key).unwrap();
    let (listener, url) = bind_receiver().await;
    let endpoint = client
        .webhooks()
        .create(WebhookEndpointRequest::new(url))
        .await
        .unwrap();
    let events = serve_receiver(listener, endpoint.secret.expose());
    (mock, user, client, events)
}

#[tokio::test]
async fn a_task_succeeds_and_the_receiver_gets_a_verified_completed_event() {
    let (mock, user, client, mut events) = mock_with_receiver().await;
    let created = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();
    mock.advance(30.0);
    mock.deliveries_settled().await;

    let generation = client.generations().get(created.id).await.unwrap();
    assert_eq!(generation.status, GenerationStatus::Succeeded);
    let event = events.recv().await.unwrap();
    assert_eq!(event.event_type, "generation.completed");
    let data = &event.payload["data"]["generation"];
    assert_eq!(data["id"], created.id.to_string());
    assert_eq!(data["output_urls"][0], generation.output_urls[0]);
    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 0.0)),
        "charged once, nothing reserved"
    );
    mock.check_ledger().unwrap();
}

#[tokio::test]
async fn a_task_fails_after_three_attempts_is_refunded_then_the_failed_event_arrives() {
    let (mock, user, client, mut events) = mock_with_receiver().await;
    mock.force_outcome(ForcedOutcome {
        user_id: Some(user.user_id),
        model_slug: None,
        outcome: OutcomeKind::Fail,
        error_code: Some(FailureCode::ProviderUnavailable),
        count: 1,
    });
    let created = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();
    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 2.5)),
        "reserved at creation"
    );
    for _ in 0..10 {
        mock.advance(30.0);
    }
    mock.deliveries_settled().await;

    let generation = client.generations().get(created.id).await.unwrap();
    assert_eq!(generation.status, GenerationStatus::Failed);
    let attempts = mock.state().store().generations[&created.id].attempts;
    assert_eq!(
        attempts, 3,
        "a provider error is tried 3 times before it is final"
    );
    assert_eq!(
        mock.balance(user.user_id),
        Some((100.0, 0.0)),
        "the balance is whole again"
    );
    let event = events.recv().await.unwrap();
    assert_eq!(event.event_type, "generation.failed");
    assert_eq!(
        event.payload["data"]["generation"]["error_code"],
        "provider_unavailable"
    );
    assert!(events.try_recv().is_err(), "one event per task");
    mock.check_ledger().unwrap();
}

/// A proxy to `upstream` that forwards the first request but drops its connection as
/// soon as the answer starts, as a network failing after the server acted would;
/// later connections pass through.
async fn dropping_proxy(upstream: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut client, _)) = listener.accept().await {
            let mut server = TcpStream::connect(upstream).await.unwrap();
            if std::mem::take(&mut first) {
                tokio::spawn(async move {
                    let (mut client_read, client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let forward = tokio::spawn(async move {
                        tokio::io::copy(&mut client_read, &mut server_write)
                            .await
                            .ok();
                    });
                    let mut answer = [0; 1];
                    server_read.read_exact(&mut answer).await.ok();
                    forward.abort();
                    drop(client_write);
                });
            } else {
                tokio::spawn(async move {
                    tokio::io::copy_bidirectional(&mut client, &mut server)
                        .await
                        .ok();
                    client.shutdown().await.ok();
                });
            }
        }
    });
    addr
}

#[tokio::test]
async fn a_create_retried_after_a_dropped_connection_charges_once() {
    let mock = MockServer::start().await;
    let user = mock.create_user(100.0);
    let proxy = dropping_proxy(mock.address()).await;
    let client = Client::builder()
        .base_url(format!("http://{proxy}"))
        .api_key(&user.api_key)
        .retry_policy(RetryPolicy::default().base_delay(Duration::from_millis(10)))
        .build()
        .unwrap();

    let created = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();

    let all: Vec<_> = client
        .generations()
        .list(GenerationFilter::new())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        all.len(),
        1,
        "the retry found the first create by its Idempotency-Key"
    );
    assert_eq!(all[0].id, created.id);
    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 2.5)),
        "one reservation, not two"
    );
    mock.check_ledger().unwrap();
}
