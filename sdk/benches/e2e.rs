//! End to end: 10,000 generations across 2,000 users, created through the SDK
//! against the mock under a fast clock, each user with a webhook endpoint on a local
//! receiver that verifies every delivery with `webhook-verify`.
//!
//! ```text
//! cargo bench -p mediagen --bench e2e
//! MEDIAGEN_BENCH_USERS=500 MEDIAGEN_BENCH_PER_USER=5 cargo bench -p mediagen --bench e2e
//! ```
//!
//! Figures: generations per second (the first create to the last delivery), the
//! latency from a task's final state to its verified delivery at the receiver (p50,
//! p99, in real time), and the peak resident memory of the whole process (mock,
//! clients and receiver). Rate limits are off: all users share one address here,
//! where in production they would not. The mock's clock runs `SCALE` times faster,
//! so a 4-second image takes 40 ms; the final-state time of each task (mock time)
//! is mapped back to real time through the clock's scale.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use mediagen::{
    Client, GenerationRequest, RetryPolicy, WebhookEndpointRequest, WebhookEvent, WebhookVerifier,
};
use mediagen_mock_server::MockServer;

const SCALE: f64 = 100.0;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The receiver: a verifier per user (each endpoint has its own secret), and the
/// real time each generation's event arrived.
#[derive(Debug, Default)]
struct Receiver {
    verifiers: Mutex<HashMap<usize, Arc<WebhookVerifier>>>,
    arrivals: Mutex<HashMap<uuid::Uuid, (Instant, DateTime<Utc>)>>,
    rejected: Mutex<usize>,
    expected: usize,
    all_arrived: tokio::sync::Notify,
}

async fn receive(
    State(receiver): State<Arc<Receiver>>,
    Path(user): Path<usize>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let arrived = Instant::now();
    let verifier = receiver.verifiers.lock().unwrap().get(&user).cloned();
    let Some(delivery) = verifier.and_then(|v| v.verify(&body, &headers).ok()) else {
        *receiver.rejected.lock().unwrap() += 1;
        return StatusCode::BAD_REQUEST;
    };
    let (id, final_at) = match delivery.event {
        WebhookEvent::GenerationCompleted { generation, .. } => {
            (generation.id, generation.completed_at)
        }
        WebhookEvent::GenerationFailed { generation, .. } => (generation.id, generation.failed_at),
        _ => return StatusCode::NO_CONTENT,
    };
    let mut arrivals = receiver.arrivals.lock().unwrap();
    arrivals.entry(id).or_insert((arrived, final_at));
    if arrivals.len() == receiver.expected {
        receiver.all_arrived.notify_one();
    }
    StatusCode::NO_CONTENT
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

#[tokio::main]
async fn main() {
    let users = env_number("MEDIAGEN_BENCH_USERS", 2_000);
    let per_user = env_number("MEDIAGEN_BENCH_PER_USER", 5);
    let total = users * per_user;

    let mock = MockServer::builder()
        .real_clock(SCALE)
        .rate_limits(false)
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let receiver = Arc::new(Receiver {
        expected: total,
        ..Receiver::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let receiver_addr: SocketAddr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route("/hook/{user}", axum::routing::post(receive))
        .with_state(receiver.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    // One connection pool for every user's client, as one process of an integrator would.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();
    let clients: Vec<Client> = (0..users)
        .map(|_| {
            let user = mock.create_user(1_000.0);
            Client::builder()
                .base_url(mock.uri())
                .api_key(user.api_key)
                .http_client(http.clone())
                .pacing(false)
                .retry_policy(RetryPolicy::default())
                .build()
                .unwrap()
        })
        .collect();
    for (index, client) in clients.iter().enumerate() {
        let url = format!("http://{receiver_addr}/hook/{index}");
        let created = client
            .webhooks()
            .create(WebhookEndpointRequest::new(url))
            .await
            .unwrap();
        receiver
            .verifiers
            .lock()
            .unwrap()
            .insert(index, Arc::new(created.secret.verifier().unwrap()));
    }

    // Mock time and real time at one moment, to map final states back to real time.
    let (real_origin, mock_origin) = (Instant::now(), mock.state().clock().now());
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        tasks.spawn(async move {
            for n in 0..per_user {
                let request =
                    GenerationRequest::new("flux-schnell", format!("a lighthouse, take {n}"));
                client.generations().create(request).await.unwrap();
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    let created_in = started.elapsed();
    tokio::time::timeout(Duration::from_secs(600), receiver.all_arrived.notified())
        .await
        .expect("every delivery within 10 minutes");
    let last = receiver
        .arrivals
        .lock()
        .unwrap()
        .values()
        .map(|(at, _)| *at)
        .max()
        .unwrap();
    let elapsed = last - started;

    let mut latencies: Vec<f64> = receiver
        .arrivals
        .lock()
        .unwrap()
        .values()
        .map(|(arrived, completed_at)| {
            let mock_offset = (*completed_at - mock_origin).as_seconds_f64() / SCALE;
            let final_state = real_origin + Duration::from_secs_f64(mock_offset.max(0.0));
            arrived.saturating_duration_since(final_state).as_secs_f64() * 1000.0
        })
        .collect();
    latencies.sort_by(f64::total_cmp);
    mock.check_ledger().unwrap();

    let rate = total as f64 / elapsed.as_secs_f64();
    println!("end to end: {total} generations, {users} users, clock x{SCALE}");
    println!("  creates done in       {:.2} s", created_in.as_secs_f64());
    println!("  last delivery after   {:.2} s", elapsed.as_secs_f64());
    println!("  generations/s         {rate:.0}");
    println!(
        "  final state → delivery p50 {:.1} ms, p99 {:.1} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );
    println!(
        "  rejected deliveries   {}",
        receiver.rejected.lock().unwrap()
    );
    if let Some(kib) = peak_rss_kib() {
        println!("  peak memory (VmHWM)   {:.0} MiB", kib as f64 / 1024.0);
    }
    println!(
        "RESULT e2e generations={total} users={users} per_second={rate:.0} p50_ms={:.1} p99_ms={:.1} peak_mib={:.0}",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        peak_rss_kib().unwrap_or(0) as f64 / 1024.0
    );
}
