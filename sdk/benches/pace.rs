//! What sharing the pace with the other processes of the host costs a request:
//! one client whose pace goes through the state file, one whose pace is the
//! process's own, taking turns against a bare local server that answers
//! `GET /health` with the `x-ratelimit-*` headers (a window that never runs
//! out, so nothing waits and only the bookkeeping differs).
//!
//! ```text
//! cargo bench -p mediagen --bench pace
//! ```
//!
//! Each round sends `REQUESTS` requests one after another through each client,
//! in turn; the figure is the median over the rounds of the time per request,
//! and of the difference between the two clients within a round.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use mediagen::Client;

const ROUNDS: usize = 15;
const REQUESTS: usize = 2_000;

static REMAINING: AtomicU32 = AtomicU32::new(u32::MAX);

async fn health() -> (HeaderMap, axum::Json<serde_json::Value>) {
    let mut headers = HeaderMap::new();
    let remaining = REMAINING.fetch_sub(1, Ordering::Relaxed);
    headers.insert("x-ratelimit-limit", u32::MAX.into());
    headers.insert("x-ratelimit-remaining", remaining.into());
    headers.insert("x-ratelimit-reset", 60.into());
    (headers, axum::Json(serde_json::json!({"status": "ok"})))
}

/// The time per request of `REQUESTS` requests one after another.
async fn per_request(client: &Client) -> Duration {
    let started = Instant::now();
    for _ in 0..REQUESTS {
        client.health().await.expect("the server answers");
    }
    started.elapsed() / REQUESTS as u32
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the server");
        let uri = format!("http://{}", listener.local_addr().expect("an address"));
        let app = axum::Router::new().route("/health", axum::routing::get(health));
        tokio::spawn(async move { axum::serve(listener, app).await });

        // The bench's own runtime directory, never the user's.
        let dir = tempfile::tempdir().expect("a scratch directory");
        let own = Client::builder()
            .base_url(&uri)
            .shared_pace(false)
            .build()
            .expect("a client");
        let shared = Client::builder()
            .base_url(&uri)
            .shared_pace(true)
            .shared_pace_dir(dir.path())
            .build()
            .expect("a client");

        per_request(&own).await;
        per_request(&shared).await;
        assert!(
            std::fs::read_to_string(dir.path().join("pace-1.json"))
                .is_ok_and(|state| state.contains(&uri)),
            "the shared client keeps its pace in the state file"
        );

        let (mut own_us, mut shared_us, mut cost_us) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let (a, b) = if round % 2 == 0 {
                let a = per_request(&own).await;
                (a, per_request(&shared).await)
            } else {
                let b = per_request(&shared).await;
                (per_request(&own).await, b)
            };
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            own_us.push(us(a));
            shared_us.push(us(b));
            cost_us.push(us(b) - us(a));
        }
        let (own_us, shared_us, cost_us) = (median(own_us), median(shared_us), median(cost_us));
        eprintln!(
            "a request with the pace of the process: {own_us:.1} µs; shared with the host's \
             processes: {shared_us:.1} µs; sharing costs {cost_us:.1} µs a request \
             (median of {ROUNDS} rounds of {REQUESTS})"
        );
        println!(
            "RESULT pace own_us={own_us:.1} shared_us={shared_us:.1} cost_us={cost_us:.1} \
             rounds={ROUNDS} requests={REQUESTS}"
        );
    });
}
