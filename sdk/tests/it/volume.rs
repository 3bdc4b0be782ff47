//! Volume at the service's limits: one pace for every client of a service,
//! reads timed to the task, and waits that end on a webhook.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use futures::StreamExt;
use mediagen::{
    BatchEvent, Client, GenerationRequest, GenerationStatus, WebhookReceiver, WebhookSecret,
};
use mediagen_mock_server::MockServer;
use serde_json::json;
use tokio::sync::mpsc;

use crate::{App, within_deadline};

fn reads(app: &App) -> usize {
    app.requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/v1/generations/"))
        .count()
}

#[tokio::test]
async fn a_wait_reads_once_when_the_catalogue_tells_the_models_time() {
    let app = App::start().await;
    // flux-schnell: 1 s in the queue and 4 s of work, as the catalogue says.
    let done = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .create_and_wait(GenerationRequest::new("flux-schnell", "a fox")),
        ),
    )
    .await
    .unwrap();

    assert_eq!(done.status, GenerationStatus::Succeeded);
    assert_eq!(reads(&app), 1, "{:#?}", app.requests());
}

#[tokio::test]
async fn a_task_that_runs_longer_than_its_model_is_read_in_short_steps_then_less_often() {
    let app = App::start().await;
    // Twelve times its model's time: the steps grow once it is late.
    let request = GenerationRequest::new("flux-schnell", "mock:delay=59 a slow fox");
    let started = app.mock.now();
    let done = within_deadline(
        app.clock
            .run(app.client.generations().create_and_wait(request)),
    )
    .await
    .unwrap();

    assert_eq!(done.status, GenerationStatus::Succeeded);
    let read_at: Vec<f64> = app
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/v1/generations/"))
        .map(|r| (r.at - started).as_seconds_f64())
        .collect();
    // The first read at the model's time (5 s), then no faster than every 0.5 s...
    assert!((5.0..6.0).contains(&read_at[0]), "{read_at:?}");
    for pair in read_at.windows(2) {
        assert!(pair[1] - pair[0] >= 0.5 - 1e-6, "{read_at:?}");
    }
    // ...and far fewer reads than one every 0.5 s for a minute.
    assert!(read_at.len() < 40, "{} reads: {read_at:?}", read_at.len());
    // The end is seen within the longest step of the schedule (15 s).
    let ended = 60.0;
    assert!(read_at.last().unwrap() - ended <= 15.0, "{read_at:?}");
}

#[tokio::test]
async fn clients_of_one_service_share_its_rate_limit_window() {
    let mock = MockServer::builder().real_clock(1.0).start().await;
    let (a, b) = (
        mock.create_user(10.0).unwrap(),
        mock.create_user(10.0).unwrap(),
    );
    let client = |key: &str| Client::new(mock.uri(), key).unwrap();
    let (first, second) = (client(&a.api_key), client(&b.api_key));

    first.health().await.unwrap();
    second.catalog().get().await.unwrap();

    // Both keys count against one address: the second answer is what the
    // first client knows of the window too.
    let seen = first.rate_limit().expect("the window");
    assert_eq!(seen, second.rate_limit().unwrap());
    assert_eq!(seen.remaining, 58);
}

/// Serves a client's receiver of webhooks at `/hooks` on `listener`.
fn serve(listener: tokio::net::TcpListener, receiver: WebhookReceiver) {
    async fn deliver(
        State(receiver): State<WebhookReceiver>,
        headers: HeaderMap,
        body: bytes::Bytes,
    ) -> StatusCode {
        match receiver.receive(&headers, &body) {
            Ok(_) => StatusCode::NO_CONTENT,
            Err(_) => StatusCode::BAD_REQUEST,
        }
    }
    let app = axum::Router::new()
        .route("/hooks", axum::routing::post(deliver))
        .with_state(receiver);
    tokio::spawn(async move { axum::serve(listener, app).await });
}

#[tokio::test]
async fn a_batch_with_a_webhook_receiver_ends_on_the_events_without_reading() {
    let mock = MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let user = mock.create_user(100.0).unwrap();
    // The client's own clock is real: its safety reads would come 10 s after
    // each create; the mock's clock is moved by hand, so the tasks end at once.
    let client = Client::new(mock.uri(), &user.api_key).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let endpoint = client
        .webhooks()
        .create(mediagen::WebhookEndpointRequest::new(url))
        .await
        .unwrap();
    let receiver = client
        .webhook_receiver([WebhookSecret::new(endpoint.secret.expose())])
        .unwrap();
    serve(listener, receiver);

    let (created, mut creates) = mpsc::unbounded_channel();
    let requests = ["a fox", "a hare", "an owl"].map(|p| GenerationRequest::new("flux-schnell", p));
    let batch = client
        .generations()
        .batch(requests)
        .on_progress(move |p| {
            if let BatchEvent::Created { .. } = p.event {
                let _ = created.send(());
            }
        })
        .stream()
        .collect::<Vec<_>>();
    let drive = async {
        for _ in 0..3 {
            creates.recv().await.unwrap();
        }
        mock.advance_clock(6.0).unwrap();
        mock.deliveries_settled().await;
    };
    let (outcomes, ()) = within_deadline(async { tokio::join!(batch, drive) }).await;

    assert_eq!(outcomes.len(), 3);
    for outcome in &outcomes {
        let generation = outcome.result.as_ref().expect("succeeded");
        assert_eq!(generation.status, GenerationStatus::Succeeded);
        assert_eq!(generation.output_urls.len(), 1);
    }
    let reads = mock
        .list_requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/v1/generations/"))
        .count();
    assert_eq!(reads, 0, "the events ended every wait");
}

#[tokio::test]
async fn a_receiver_refuses_a_forged_delivery_and_drops_a_repeat() {
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let client = Client::new("http://127.0.0.1:9", "mg_live_demo_secret").unwrap();
    let receiver = client
        .webhook_receiver([WebhookSecret::new(secret)])
        .unwrap();
    let body = serde_json::to_vec(&json!({
        "id": "evt_1", "type": "generation.completed", "created_at": "2026-11-24T10:00:00.000Z",
        "data": {"generation": {"id": "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19", "status": "SUCCEEDED",
            "media_type": "IMAGE", "output_urls": ["https://cdn.example/0.png"], "cost_rub": 2.5,
            "completed_at": "2026-11-24T10:00:00.000Z"}}
    }))
    .unwrap();
    let now = chrono::Utc::now().timestamp();
    let signed = |secret: &str| {
        let signature = webhook_verify::Webhook::new(secret)
            .unwrap()
            .sign("msg_1", now, &body)
            .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("webhook-id", "msg_1".parse().unwrap());
        headers.insert("webhook-timestamp", now.into());
        headers.insert("webhook-signature", signature.parse().unwrap());
        headers
    };

    let forged = signed("whsec_5XhVnU1OdcTTkDYG5AEUaIVhBZ5HMvXyMUJOQ/nyEcA=");
    assert!(receiver.receive(&forged, &body).is_err());
    let first = receiver.receive(&signed(secret), &body).unwrap();
    assert!(matches!(
        first,
        Some(mediagen::WebhookEvent::GenerationCompleted { .. })
    ));
    // The service retries a message it thinks failed: the same webhook-id again.
    assert_eq!(receiver.receive(&signed(secret), &body).unwrap(), None);
}
