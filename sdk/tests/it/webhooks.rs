//! Webhook endpoints through the SDK, and real signed deliveries from the mock
//! verified and read into typed events in one call.

use futures::TryStreamExt;
use mediagen::{
    DeliveryOutcome, Error, ErrorKind, EventType, EventTypeFilter, FailureCode, GenerationRequest,
    MediaType, WebhookEndpointRequest, WebhookEndpointUpdate, WebhookEvent, WebhookVerifier,
};
use mediagen_mock_server::MockServer;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::{App, within_deadline};

/// A mock that may deliver to 127.0.0.1, and a receiver that answers 200.
async fn with_receiver() -> (App, wiremock::MockServer) {
    let mock = MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let app = App::with(mock, 1000.0).await;
    let receiver = wiremock::MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/hooks"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    (app, receiver)
}

/// Starts the deliveries that are due and waits until they end.
async fn deliver(app: &App) {
    for _ in 0..2 {
        app.mock.advance_clock(0.0);
        app.mock.deliveries_settled().await;
    }
}

#[tokio::test]
async fn endpoints_are_created_listed_read_updated_and_deleted() {
    let (app, receiver) = with_receiver().await;
    let webhooks = app.client.webhooks();

    let created = webhooks
        .create(
            WebhookEndpointRequest::new(format!("{}/hooks", receiver.uri()))
                .events([EventTypeFilter::GenerationCompleted])
                .description("test receiver"),
        )
        .await
        .unwrap();
    let listed = webhooks.list().await.unwrap();
    let described = webhooks.get(&created.id).await.unwrap();
    let updated = webhooks
        .update(
            &created.id,
            WebhookEndpointUpdate::new()
                .active(false)
                .description("paused"),
        )
        .await
        .unwrap();
    let read = webhooks.get(&created.id).await.unwrap();
    webhooks.delete(&created.id).await.unwrap();
    let gone = webhooks.get(&created.id).await.unwrap_err();

    assert!(created.id.starts_with("we_"));
    assert!(created.secret.expose().starts_with("whsec_"));
    assert_eq!(created.event_types, [EventTypeFilter::GenerationCompleted]);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, created.id);
    // The list shows the document's seven fields; a read, the description too.
    assert_eq!(described.description.as_deref(), Some("test receiver"));
    assert!(!updated.active);
    assert_eq!(read.disabled_reason.as_deref(), Some("manual"));
    assert_eq!(gone.kind(), Some(&ErrorKind::NotFound));
}

#[tokio::test]
async fn a_localhost_url_is_refused_with_the_services_message() {
    let app = App::start().await;

    let err = app
        .client
        .webhooks()
        .create(WebhookEndpointRequest::new("http://localhost:9000/hooks"))
        .await
        .unwrap_err();

    assert!(matches!(err.kind(), Some(ErrorKind::Validation { .. })));
    assert!(err.api().unwrap().message.contains("Localhost"), "{err}");
}

#[tokio::test]
async fn deliveries_of_the_service_verify_and_read_as_typed_events() {
    let (app, receiver) = with_receiver().await;
    let created = app
        .client
        .webhooks()
        .create(WebhookEndpointRequest::new(format!(
            "{}/hooks",
            receiver.uri()
        )))
        .await
        .unwrap();
    let verifier = created.secret.verifier().unwrap();
    let succeeded = app
        .client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a red fox"))
        .await
        .unwrap();
    let failed = app
        .client
        .generations()
        .create(GenerationRequest::new(
            "flux-schnell",
            "mock:fail=prompt_rejected a fox",
        ))
        .await
        .unwrap();

    app.mock.advance_clock(60.0);
    deliver(&app).await;

    let received = receiver.received_requests().await.unwrap();
    assert_eq!(received.len(), 2);
    let mut message_ids = Vec::new();
    for request in &received {
        let delivery = verifier.verify(&request.body, &request.headers).unwrap();
        message_ids.push(delivery.message_id.clone());
        match delivery.event {
            WebhookEvent::GenerationCompleted { id, generation, .. } => {
                assert!(id.starts_with("evt_"));
                assert_eq!(generation.id, succeeded.id);
                assert_eq!(generation.media_type, MediaType::Image);
                assert_eq!(generation.output_urls.len(), 1);
                assert_eq!(generation.cost_rub, 2.5);
            }
            WebhookEvent::GenerationFailed { generation, .. } => {
                assert_eq!(generation.id, failed.id);
                assert_eq!(generation.error_code, FailureCode::PromptRejected);
                assert!(!generation.error_message.is_empty());
            }
            other => panic!("unexpected event {other:?}"),
        }
    }
    assert_ne!(message_ids[0], message_ids[1]);
}

#[tokio::test]
async fn a_tampered_delivery_or_one_signed_with_another_secret_is_refused() {
    let (app, receiver) = with_receiver().await;
    let created = app
        .client
        .webhooks()
        .create(WebhookEndpointRequest::new(format!(
            "{}/hooks",
            receiver.uri()
        )))
        .await
        .unwrap();
    app.client
        .webhooks()
        .send_test(&created.id, None)
        .await
        .unwrap();
    deliver(&app).await;
    let request = receiver.received_requests().await.unwrap().remove(0);

    let mut tampered = request.body.clone();
    let at = tampered.iter().position(|b| *b == b'{').unwrap();
    tampered.insert(at + 1, b' ');
    let err = created
        .secret
        .verifier()
        .unwrap()
        .verify(&tampered, &request.headers)
        .unwrap_err();
    assert!(matches!(err, Error::WebhookVerification(_)), "{err:?}");

    let stranger = WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    assert!(stranger.verify(&request.body, &request.headers).is_err());
}

#[tokio::test]
async fn after_a_rotation_only_the_new_secret_verifies() {
    let (app, receiver) = with_receiver().await;
    let created = app
        .client
        .webhooks()
        .create(WebhookEndpointRequest::new(format!(
            "{}/hooks",
            receiver.uri()
        )))
        .await
        .unwrap();

    let rotated = app
        .client
        .webhooks()
        .rotate_secret(&created.id)
        .await
        .unwrap();
    app.client
        .webhooks()
        .send_test(&created.id, Some(EventType::GenerationFailed))
        .await
        .unwrap();
    deliver(&app).await;

    let request = receiver.received_requests().await.unwrap().remove(0);
    assert_ne!(rotated.secret, created.secret);
    let delivery = rotated
        .secret
        .verifier()
        .unwrap()
        .verify(&request.body, &request.headers)
        .unwrap();
    assert!(matches!(
        delivery.event,
        WebhookEvent::GenerationFailed { .. }
    ));
    assert!(
        created
            .secret
            .verifier()
            .unwrap()
            .verify(&request.body, &request.headers)
            .is_err()
    );
}

#[tokio::test]
async fn delivery_attempts_are_listed_and_a_message_can_be_redelivered() {
    let (app, receiver) = with_receiver().await;
    let created = app
        .client
        .webhooks()
        .create(WebhookEndpointRequest::new(format!(
            "{}/hooks",
            receiver.uri()
        )))
        .await
        .unwrap();
    let queued = app
        .client
        .webhooks()
        .send_test(&created.id, None)
        .await
        .unwrap();
    deliver(&app).await;

    app.client
        .webhooks()
        .redeliver(&created.id, queued.message_id)
        .await
        .unwrap();
    deliver(&app).await;
    let attempts: Vec<_> = within_deadline(
        app.client
            .webhooks()
            .deliveries(&created.id)
            .try_collect::<Vec<_>>(),
    )
    .await
    .unwrap();

    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|a| a.message_id == queued.message_id));
    assert!(
        attempts
            .iter()
            .all(|a| a.outcome == DeliveryOutcome::Succeeded)
    );
    let received = receiver.received_requests().await.unwrap();
    let ids: Vec<_> = received
        .iter()
        .map(|r| r.headers.get("webhook-id").unwrap().clone())
        .collect();
    assert_eq!(ids[0], ids[1], "a redelivery keeps the webhook-id");
}

#[tokio::test]
async fn secrets_never_appear_in_debug_output() {
    let (app, receiver) = with_receiver().await;
    let created = app
        .client
        .webhooks()
        .create(WebhookEndpointRequest::new(format!(
            "{}/hooks",
            receiver.uri()
        )))
        .await
        .unwrap();

    let secret = created
        .secret
        .expose()
        .trim_start_matches("whsec_")
        .to_owned();
    assert!(!format!("{created:?}").contains(&secret));
    assert!(!format!("{:?}", created.secret.verifier().unwrap()).contains(&secret));
}
