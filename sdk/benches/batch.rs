//! Batches at the service's limits, as a user runs them: 60 `flux-schnell` and
//! 40 `imagen-4` generations through `Generations::batch`, against the mock
//! with its limits on (60 requests a minute per address, 5 active tasks per
//! user) and its clock 20 times faster than real time; once learning each end
//! by polling, once by webhook (a receiver of the client's own on 127.0.0.1).
//!
//! ```text
//! cargo bench -p mediagen --bench batch
//! MEDIAGEN_BENCH_TRACE=1 cargo bench -p mediagen --bench batch   # every request, on the mock's clock
//! ```
//!
//! The floor no client can beat, in the mock's seconds: N generations need N
//! creates, and polling at least N reads, at 60 requests a minute, so 2N
//! seconds when polling and N by webhook; and 5 tasks at a time, so the sum of
//! the tasks' times over 5, never less than the longest. The figure is the
//! makespan (first request to last end seen) over the larger of the two, with
//! the requests spent per generation and the 429 answers met.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use mediagen::{Client, GenerationRequest, WebhookReceiver, WebhookSecret};
use mediagen_mock_server::MockServer;

const SCALE: f64 = 20.0;

/// A model's time from create to end, in the mock's seconds: the queue (1 s)
/// and one attempt, as the catalogue says.
fn task_seconds(model: &str) -> f64 {
    match model {
        "flux-schnell" => 5.0,
        "imagen-4" => 13.0,
        other => panic!("no time known for {other}"),
    }
}

struct Run {
    makespan: f64,
    bound: f64,
    requests: usize,
    rate_limited: usize,
    failed: usize,
}

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

async fn run(model: &str, count: usize, webhooks: bool) -> Run {
    let mock = MockServer::builder()
        .real_clock(SCALE)
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let user = mock.create_user(10_000.0).unwrap();
    let client = Client::new(mock.uri(), &user.api_key).expect("a client");
    if webhooks {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let url = format!(
            "http://{}/hooks",
            listener.local_addr().expect("an address")
        );
        let endpoint = client
            .webhooks()
            .create(mediagen::WebhookEndpointRequest::new(url))
            .await
            .expect("an endpoint");
        let receiver = client
            .webhook_receiver([WebhookSecret::new(endpoint.secret.expose())])
            .expect("a receiver");
        let app = axum::Router::new()
            .route("/hooks", axum::routing::post(deliver))
            .with_state(receiver);
        tokio::spawn(async move { axum::serve(listener, app).await });
        // The endpoint's create is set-up, not the batch: a fresh window for it.
        tokio::time::sleep(Duration::from_secs_f64(61.0 / SCALE)).await;
    }
    let before = mock.list_requests().len();
    let started = mock.now();
    let requests =
        (0..count).map(|n| GenerationRequest::new(model, format!("a lighthouse, take {n}")));
    let results = client.generations().batch(requests).await;
    let makespan = (mock.now() - started).as_seconds_f64();
    let log = mock.list_requests();
    let during = &log[before..];
    if std::env::var_os("MEDIAGEN_BENCH_TRACE").is_some() {
        for r in during {
            eprintln!(
                "{:7.2} {} {} {:?}",
                (r.at - started).as_seconds_f64(),
                r.method,
                r.path,
                r.status
            );
        }
    }
    let floor_requests = if webhooks {
        count as f64
    } else {
        2.0 * count as f64
    };
    let seconds = task_seconds(model);
    Run {
        makespan,
        bound: floor_requests
            .max(count as f64 * seconds / 5.0)
            .max(seconds),
        requests: during.len(),
        rate_limited: during.iter().filter(|r| r.status == Some(429)).count(),
        failed: results.iter().filter(|r| r.is_err()).count(),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for (model, count) in [("flux-schnell", 60), ("imagen-4", 40)] {
        for webhooks in [false, true] {
            let mode = if webhooks { "webhook" } else { "polling" };
            let run = runtime.block_on(run(model, count, webhooks));
            assert_eq!(run.failed, 0, "every generation of the batch succeeds");
            eprintln!(
                "{model} x{count}, {mode}: {:.0} s against a bound of {:.0} s ({:.2}x), \
                 {:.2} requests per generation, {} answered 429",
                run.makespan,
                run.bound,
                run.makespan / run.bound,
                run.requests as f64 / count as f64,
                run.rate_limited
            );
            println!(
                "RESULT batch model={model} count={count} mode={mode} makespan_s={:.1} bound_s={:.0} \
                 ratio={:.2} requests_per_generation={:.2} rate_limited={}",
                run.makespan,
                run.bound,
                run.makespan / run.bound,
                run.requests as f64 / count as f64,
                run.rate_limited
            );
        }
    }
}
