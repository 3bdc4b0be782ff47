//! End to end: generations created through the SDK against the mock under a fast
//! clock, each user with a webhook endpoint on a local receiver that verifies every
//! delivery with `webhook-verify`. Two runs in one process:
//!
//! 1. **Burst**: 10,000 generations across 2,000 users, each user creating its five
//!    one after another, all users at once; `MEDIAGEN_BENCH_ROUNDS` (5) bursts, the
//!    median one reported, since this machine is shared. Gives the maximum rate.
//! 2. **Steady**: creates offered at a fixed rate (half the burst's, or
//!    `MEDIAGEN_BENCH_RATE`) for `MEDIAGEN_BENCH_SECONDS`, round-robin over the same
//!    users. Gives the latency a receiver sees when the service is not queueing.
//!
//! ```text
//! cargo bench -p mediagen --bench e2e
//! MEDIAGEN_BENCH_USERS=500 MEDIAGEN_BENCH_PER_USER=5 cargo bench -p mediagen --bench e2e
//! MEDIAGEN_BENCH_RATE=2000 MEDIAGEN_BENCH_SECONDS=20 cargo bench -p mediagen --bench e2e
//! MEDIAGEN_BENCH_IN_FLIGHT=2000 cargo bench -p mediagen --bench e2e
//! ```
//!
//! The users share one process and one connection pool, as an integrator's
//! service would, with at most `MEDIAGEN_BENCH_IN_FLIGHT` (64) creates under way
//! at once: reqwest bounds idle connections, not open ones, so 2,000 creates at
//! once would open 2,000 connections and close most of them again.
//!
//! Figures: generations per second (the first create to the last delivery), the
//! latency from a task's final state to its verified delivery at the receiver (p50,
//! p99, max, in real time), and the peak resident memory of the whole process (mock,
//! clients and receiver), reset between the runs. Rate limits are off: all users
//! share one address here, where in production they would not. The mock's clock runs
//! `SCALE` times faster, so a 4-second image takes 40 ms; the final-state time of
//! each task (mock time) is mapped back to real time through the clock's scale.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
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
use tokio::sync::Notify;

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
    rejected: AtomicUsize,
    /// How many arrivals the run in progress waits for.
    expected: AtomicUsize,
    all_arrived: Notify,
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
        receiver.rejected.fetch_add(1, Ordering::Relaxed);
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
    if arrivals.len() == receiver.expected.load(Ordering::Relaxed) {
        receiver.all_arrived.notify_one();
    }
    StatusCode::NO_CONTENT
}

/// The process's peak resident memory since the start or the last [`reset_peak`].
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    kib as f64 / 1024.0
}

/// Starts the peak over from the present resident memory (Linux: `clear_refs` 5).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").ok();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or(f64::NAN)
}

/// The mock, the receiver and one SDK client per user.
struct Rig {
    mock: MockServer,
    receiver: Arc<Receiver>,
    clients: Vec<Client>,
    /// Creates under way at once, across all users.
    in_flight: Arc<tokio::sync::Semaphore>,
    /// Real time and mock time at one moment, to map final states to real time.
    real_origin: Instant,
    mock_origin: DateTime<Utc>,
}

impl Rig {
    async fn start(users: usize, in_flight: usize) -> Self {
        let mock = MockServer::builder()
            .real_clock(SCALE)
            .rate_limits(false)
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await;
        let receiver = Arc::new(Receiver::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver_addr: SocketAddr = listener.local_addr().unwrap();
        let app = axum::Router::new()
            .route("/hook/{user}", axum::routing::post(receive))
            .with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });

        // One connection pool for every user's client, as one process of an
        // integrator would.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(in_flight)
            .build()
            .unwrap();
        let clients: Vec<Client> = (0..users)
            .map(|_| {
                let user = mock.create_user(100_000.0).unwrap();
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
        let (real_origin, mock_origin) = (Instant::now(), mock.now());
        Self {
            mock,
            receiver,
            clients,
            in_flight: Arc::new(tokio::sync::Semaphore::new(in_flight)),
            real_origin,
            mock_origin,
        }
    }

    /// Waits until `count` generations in all have arrived at the receiver.
    async fn arrivals(&self, count: usize) {
        self.receiver.expected.store(count, Ordering::Relaxed);
        let notified = self.receiver.all_arrived.notified();
        if self.receiver.arrivals.lock().unwrap().len() < count {
            tokio::time::timeout(Duration::from_secs(600), notified)
                .await
                .expect("every delivery within 10 minutes");
        }
    }

    /// Arrival times and final-state-to-delivery latencies (ms) of `ids`.
    fn measured(&self, ids: &[uuid::Uuid]) -> (Instant, Vec<f64>) {
        let arrivals = self.receiver.arrivals.lock().unwrap();
        let mut last = self.real_origin;
        let mut latencies: Vec<f64> = ids
            .iter()
            .map(|id| {
                let (arrived, final_at) = arrivals[id];
                last = last.max(arrived);
                let mock_offset = (final_at - self.mock_origin).as_seconds_f64() / SCALE;
                let final_state = self.real_origin + Duration::from_secs_f64(mock_offset.max(0.0));
                arrived.saturating_duration_since(final_state).as_secs_f64() * 1000.0
            })
            .collect();
        latencies.sort_by(f64::total_cmp);
        (last, latencies)
    }
}

async fn create(client: &Client, in_flight: &tokio::sync::Semaphore, n: usize) -> uuid::Uuid {
    let _slot = in_flight.acquire().await.unwrap();
    let request = GenerationRequest::new("flux-schnell", format!("a lighthouse, take {n}"));
    client.generations().create(request).await.unwrap().id
}

/// One burst: every user creates `per_user` generations one after another, all
/// users at once. Returns the generations per second (the first create to the
/// last delivery) and the final-state-to-delivery latencies.
async fn burst_round(rig: &Rig, per_user: usize) -> (f64, Vec<f64>) {
    let total = rig.clients.len() * per_user;
    let already = rig.receiver.arrivals.lock().unwrap().len();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for client in &rig.clients {
        let (client, in_flight) = (client.clone(), rig.in_flight.clone());
        tasks.spawn(async move {
            let mut ids = Vec::with_capacity(per_user);
            for n in 0..per_user {
                ids.push(create(&client, &in_flight, n).await);
            }
            ids
        });
    }
    let mut ids = Vec::with_capacity(total);
    while let Some(done) = tasks.join_next().await {
        ids.extend(done.unwrap());
    }
    let created_in = started.elapsed();
    rig.arrivals(already + total).await;
    let (last, latencies) = rig.measured(&ids);
    let elapsed = last - started;
    println!(
        "  creates done in {:.2} s, last delivery after {:.2} s",
        created_in.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    (total as f64 / elapsed.as_secs_f64(), latencies)
}

/// `rounds` bursts one after another on the same mock; the median round's rate,
/// the latencies of all rounds, and the peak memory of all of them.
async fn burst(rig: &Rig, per_user: usize, rounds: usize) -> f64 {
    let total = rig.clients.len() * per_user;
    reset_peak();
    let mut rates = Vec::with_capacity(rounds);
    let mut latencies = Vec::new();
    for round in 1..=rounds {
        let (rate, round_latencies) = burst_round(rig, per_user).await;
        println!("  round {round}/{rounds}: {rate:.0} generations/s");
        rates.push(rate);
        latencies.extend(round_latencies);
    }
    rates.sort_by(f64::total_cmp);
    latencies.sort_by(f64::total_cmp);
    let rate = percentile(&rates, 0.5);
    let peak = peak_rss_mib();
    println!(
        "burst: {total} generations × {rounds} rounds, {} users, at most {} creates under way, clock x{SCALE}",
        rig.clients.len(),
        rig.in_flight.available_permits()
    );
    println!("  generations/s         {rate:.0} (median round)");
    println!(
        "  final state → delivery p50 {:.1} ms, p99 {:.1} ms (queueing included)",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );
    println!("  peak memory (VmHWM)   {peak:.0} MiB");
    println!(
        "RESULT e2e generations={total} rounds={rounds} users={} in_flight={} per_second={rate:.0} p50_ms={:.1} p99_ms={:.1} peak_mib={peak:.0}",
        rig.clients.len(),
        rig.in_flight.available_permits(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
    );
    rate
}

/// Offers creates at `rate` per second for `seconds`, round-robin over the users,
/// each create on its own task at its own time so that a slow answer does not
/// delay the next offer.
async fn steady(rig: &Rig, rate: f64, seconds: f64) {
    let already = rig.receiver.arrivals.lock().unwrap().len();
    let offers = (rate * seconds).round() as usize;
    reset_peak();
    let started = tokio::time::Instant::now();
    let period = Duration::from_secs_f64(1.0 / rate);
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..offers {
        // An absolute schedule: a late wake-up is caught up, not carried forward.
        tokio::time::sleep_until(started + period.mul_f64(n as f64)).await;
        let client = rig.clients[n % rig.clients.len()].clone();
        let in_flight = rig.in_flight.clone();
        tasks.spawn(async move { create(&client, &in_flight, n).await });
    }
    let mut ids = Vec::with_capacity(offers);
    while let Some(done) = tasks.join_next().await {
        ids.push(done.unwrap());
    }
    let offered_in = started.elapsed();
    rig.arrivals(already + offers).await;
    let (_, latencies) = rig.measured(&ids);
    let achieved = offers as f64 / offered_in.as_secs_f64();
    let peak = peak_rss_mib();
    let (p50, p99, max) = (
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
    );
    println!("steady: {offers} generations offered at {rate:.0}/s for {seconds} s");
    println!("  achieved rate         {achieved:.0}/s");
    println!("  final state → delivery p50 {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms");
    println!("  peak memory (VmHWM)   {peak:.0} MiB");
    println!(
        "RESULT steady offered_per_second={rate:.0} achieved_per_second={achieved:.0} seconds={seconds} p50_ms={p50:.1} p99_ms={p99:.1} max_ms={max:.1} peak_mib={peak:.0}"
    );
}

#[tokio::main]
async fn main() {
    let users = env_number("MEDIAGEN_BENCH_USERS", 2_000);
    let per_user = env_number("MEDIAGEN_BENCH_PER_USER", 5);
    let seconds = env_number("MEDIAGEN_BENCH_SECONDS", 10) as f64;
    let in_flight = env_number("MEDIAGEN_BENCH_IN_FLIGHT", 64).max(1);
    let rounds = env_number("MEDIAGEN_BENCH_ROUNDS", 5).max(1);

    let rig = Rig::start(users, in_flight).await;
    let maximum = burst(&rig, per_user, rounds).await;
    let rate = std::env::var("MEDIAGEN_BENCH_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(maximum / 2.0);
    if seconds > 0.0 {
        steady(&rig, rate, seconds).await;
    }
    println!(
        "  rejected deliveries   {}",
        rig.receiver.rejected.load(Ordering::Relaxed)
    );
    rig.mock.check_ledger().unwrap();
}
