//! Every part at once: the SDK creates, the mock runs the task and signs the webhook,
//! the example receiver verifies it with webhook-verify.

use std::net::SocketAddr;
use std::time::Duration;

use futures::TryStreamExt;
use mediagen::BillingOperationType;
use mediagen::{
    Client, FailureCode, GenerationFilter, GenerationRequest, GenerationStatus, HistoryFilter,
    RetryPolicy, WebhookEndpointRequest, WebhookEvent,
};
use mediagen_examples::receiver::Delivery;
use mediagen_mock_server::{ForcedOutcome, MockServer, NewUser, OutcomeKind};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::{self, UnboundedReceiver};

use crate::mock_for_webhooks;

/// A mock, a user with 100 RUB and a client of theirs, and the example receiver
/// subscribed to every event of the user; the deliveries it verified.
async fn mock_with_receiver() -> (MockServer, NewUser, Client, UnboundedReceiver<Delivery>) {
    let mock = mock_for_webhooks().await;
    let user = mock.create_user(100.0).unwrap();
    let client = Client::new(mock.uri(), &user.api_key).unwrap();
    // Bound before the endpoint exists, so that its URL is known; served once the
    // endpoint's secret is.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/webhooks", listener.local_addr().unwrap());
    let endpoint = client
        .webhooks()
        .create(WebhookEndpointRequest::new(url))
        .await
        .unwrap();
    let (work, deliveries) = mpsc::unbounded_channel();
    let app = mediagen_examples::receiver::router(endpoint.secret.expose(), work).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (mock, user, client, deliveries)
}

#[tokio::test]
async fn a_task_succeeds_and_the_receiver_gets_a_verified_completed_event() {
    let (mock, user, client, mut deliveries) = mock_with_receiver().await;
    let created = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();

    mock.advance_clock(30.0).unwrap();
    mock.deliveries_settled().await;

    let generation = client.generations().get(created.id).await.unwrap();
    assert_eq!(generation.status, GenerationStatus::Succeeded);
    // The receiver queues an event before it answers, so a settled delivery is here.
    let delivery = deliveries.try_recv().expect("a verified delivery");
    match delivery.event {
        WebhookEvent::GenerationCompleted { generation: g, .. } => {
            assert_eq!(g.id, created.id);
            assert_eq!(g.output_urls, generation.output_urls);
            assert_eq!(g.cost_rub, 2.5);
        }
        other => panic!("expected generation.completed, got {other:?}"),
    }
    assert!(deliveries.try_recv().is_err(), "one event per task");
    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 0.0)),
        "charged once, nothing left reserved"
    );
    mock.check_ledger().unwrap();
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}

#[tokio::test]
async fn a_task_fails_after_three_attempts_is_refunded_then_the_failed_event_arrives() {
    let (mock, user, client, mut deliveries) = mock_with_receiver().await;
    // A provider error, which the service's worker tries 3 times before it is final.
    mock.force_outcome(ForcedOutcome {
        user_id: Some(user.user_id),
        model_slug: None,
        outcome: OutcomeKind::Fail,
        error_code: Some(mediagen_mock_server::FailureCode::ProviderUnavailable),
        count: 1,
    })
    .unwrap();
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

    // One second at a time, so that the balance is read as the event arrives, not
    // later: the service refunds before it sends generation.failed.
    let mut arrived = None;
    for _ in 0..60 {
        mock.advance_clock(1.0).unwrap();
        mock.deliveries_settled().await;
        if let Ok(delivery) = deliveries.try_recv() {
            arrived = Some((delivery, mock.balance(user.user_id)));
            break;
        }
    }
    let (delivery, balance_on_arrival) = arrived.expect("generation.failed within a minute");

    assert_eq!(
        balance_on_arrival,
        Some((100.0, 0.0)),
        "the balance is whole again"
    );
    match delivery.event {
        WebhookEvent::GenerationFailed { generation, .. } => {
            assert_eq!(generation.id, created.id);
            assert_eq!(generation.error_code, FailureCode::ProviderUnavailable);
        }
        other => panic!("expected generation.failed, got {other:?}"),
    }
    let generation = client.generations().get(created.id).await.unwrap();
    assert_eq!(generation.status, GenerationStatus::Failed);
    assert_eq!(
        mock.generation(created.id).unwrap().attempts,
        3,
        "final after the third attempt"
    );
    assert!(deliveries.try_recv().is_err(), "one event per task");
    mock.check_ledger().unwrap();
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}

/// A proxy in front of `upstream` whose first connection carries the request to the
/// server but loses the answer: it closes as the answer starts, as a network failing
/// after the service acted would. Later connections pass through.
async fn proxy_losing_the_first_answer(upstream: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut client, _)) = listener.accept().await {
            let lose_answer = std::mem::take(&mut first);
            tokio::spawn(async move {
                let mut server = TcpStream::connect(upstream).await.unwrap();
                if lose_answer {
                    let (mut client_read, _client_write) = client.split();
                    let (mut server_read, mut server_write) = server.split();
                    let mut first_byte = [0];
                    tokio::select! {
                        _ = tokio::io::copy(&mut client_read, &mut server_write) => {}
                        _ = server_read.read_exact(&mut first_byte) => {}
                    }
                    // Both sockets close here, before any of the answer has reached
                    // the client.
                } else {
                    tokio::io::copy_bidirectional(&mut client, &mut server)
                        .await
                        .ok();
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_create_retried_after_a_dropped_connection_charges_once() {
    let mock = MockServer::start().await;
    let user = mock.create_user(100.0).unwrap();
    let proxy = proxy_losing_the_first_answer(mock.address()).await;
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

    let creates: Vec<_> = mock
        .list_requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path == "/v1/generations")
        .collect();
    assert_eq!(creates.len(), 2, "the lost answer, then the retry");
    assert!(creates.iter().all(|r| r.status == Some(202)), "{creates:?}");
    assert!(creates[0].idempotency_key.is_some());
    assert_eq!(
        creates[0].idempotency_key, creates[1].idempotency_key,
        "the retry carries the first request's Idempotency-Key"
    );
    let all: Vec<_> = client
        .generations()
        .list(GenerationFilter::new())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(all.len(), 1, "the retry found the first generation");
    assert_eq!(all[0].id, created.id);

    mock.advance_clock(30.0).unwrap();

    assert_eq!(
        mock.balance(user.user_id),
        Some((97.5, 0.0)),
        "one charge, not two"
    );
    let charges: Vec<_> = client
        .billing()
        .history(HistoryFilter::new())
        .try_filter(|op| std::future::ready(op.type_ == BillingOperationType::GenerationCharge))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(charges.len(), 1);
    assert_eq!(charges[0].generation_id, Some(created.id));
    mock.check_ledger().unwrap();
    // Our own client is held to the mock's verdict on the rules for clients.
    mock.assert_clean();
}
