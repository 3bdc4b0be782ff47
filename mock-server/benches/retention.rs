//! Memory a long run costs: resident memory growth per 100,000 finished
//! generations, with the default `--retain` bound and with no bound, in one
//! process (the bounded run first, so that memory the unbounded one leaves
//! behind cannot flatter it). Growth is measured from the first fifth of the run
//! on, by when every bounded kind has reached its bound.
//!
//! ```text
//! cargo bench -p mediagen-mock-server --bench retention
//! MEDIAGEN_BENCH_GENERATIONS=1000000 cargo bench -p mediagen-mock-server --bench retention
//! ```
//!
//! Creates go over HTTP, 1,000 users with five tasks each at a time; the manual
//! clock then moves a minute so that every task finishes, and the next round starts.

mod common;

use mediagen_mock_server::config::Retention;
use mediagen_mock_server::{Config, MockServer};

const USERS: usize = 1_000;
const PER_ROUND: usize = 5;

/// Finishes `total` generations on a mock with `retention`; returns the growth in
/// resident memory from the first 20% of them to the end, scaled to 100,000.
async fn growth(retention: Retention, total: usize) -> f64 {
    let mock = MockServer::builder()
        .rate_limits(false)
        .queue_seconds(0.0)
        .config(|c: &mut Config| c.retention = retention)
        .start()
        .await;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/generations", mock.uri());
    let keys: Vec<String> = (0..USERS)
        .map(|_| mock.create_user(1_000_000.0).unwrap().api_key)
        .collect();
    let rounds = total / (USERS * PER_ROUND);
    let mut baseline = None;
    for round in 0..rounds {
        if round == rounds / 5 {
            baseline = Some(common::rss_mib());
        }
        let mut creates = tokio::task::JoinSet::new();
        for key in &keys {
            let (http, url, key) = (http.clone(), url.clone(), key.clone());
            creates.spawn(async move {
                for n in 0..PER_ROUND {
                    let answer = http
                        .post(&url)
                        .bearer_auth(&key)
                        .json(&serde_json::json!({
                            "modelSlug": "flux-schnell",
                            "prompt": format!("a lighthouse at dusk, take {round}.{n}"),
                            "params": {"aspect_ratio": "16:9"},
                        }))
                        .send()
                        .await
                        .expect("the mock answers");
                    assert!(answer.status().is_success(), "{}", answer.status());
                }
            });
        }
        while let Some(done) = creates.join_next().await {
            done.unwrap();
        }
        mock.advance_clock(60.0).unwrap();
    }
    mock.check_ledger().unwrap();
    let grown = common::rss_mib() - baseline.unwrap_or(0.0);
    grown * 100_000.0 / (total as f64 * 0.8)
}

#[tokio::main]
async fn main() {
    let total =
        common::env_number("MEDIAGEN_BENCH_GENERATIONS", 300_000).max(USERS * PER_ROUND * 5);
    let default = Config::default().retention;
    let bounded = growth(default, total).await;
    let unbounded = growth(Retention::default(), total).await;
    println!("retention: {total} finished generations, {USERS} users");
    println!("  default bound {default:?}: {bounded:+.1} MiB per 100,000");
    println!("  no bound: {unbounded:+.1} MiB per 100,000");
    println!(
        "RESULT retention generations={total} bounded_mib_per_100k={bounded:.1} unbounded_mib_per_100k={unbounded:.1}"
    );
}
