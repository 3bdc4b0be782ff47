//! Memory worlds cost: resident memory after a world is created, used and
//! deleted 10,000 times, against where it started (after a warm-up, so that the
//! allocator's and the runtime's one-time growth is not counted); and, for
//! scale, what 1,000 worlds alive at once hold.
//!
//! ```text
//! cargo bench -p mediagen-mock-server --bench worlds
//! MEDIAGEN_BENCH_WORLDS=100000 cargo bench -p mediagen-mock-server --bench worlds
//! ```
//!
//! Every world is made and ended over HTTP (`POST` and `DELETE /_mock/worlds`),
//! and answers one request of the service in between.

mod common;

use mediagen_mock_server::MockServer;
use serde_json::Value;

const WARM_UP: usize = 1_000;
const ALIVE: usize = 1_000;

async fn create(http: &reqwest::Client, root: &str) -> (String, String) {
    let world: Value = http
        .post(format!("{root}/_mock/worlds"))
        .send()
        .await
        .expect("the mock answers")
        .json()
        .await
        .expect("a world");
    let id = world["id"].as_str().expect("id").to_owned();
    let base = world["baseUrl"].as_str().expect("baseUrl").to_owned();
    let key = world["demoApiKey"].as_str().expect("demoApiKey");
    let account = http
        .get(format!("{base}/v1/account"))
        .bearer_auth(key)
        .send()
        .await
        .expect("the world answers");
    assert!(account.status().is_success(), "{}", account.status());
    (id, base)
}

async fn delete(http: &reqwest::Client, root: &str, id: &str) {
    let gone = http
        .delete(format!("{root}/_mock/worlds/{id}"))
        .send()
        .await
        .expect("the mock answers");
    assert_eq!(gone.status(), 204);
}

#[tokio::main]
async fn main() {
    let cycles = common::env_number("MEDIAGEN_BENCH_WORLDS", 10_000);
    let mock = MockServer::builder().rate_limits(false).start().await;
    let root = mock.uri();
    let http = reqwest::Client::new();
    for _ in 0..WARM_UP {
        let (id, _) = create(&http, &root).await;
        delete(&http, &root, &id).await;
    }
    let start = common::rss_mib();
    let began = std::time::Instant::now();
    for _ in 0..cycles {
        let (id, _) = create(&http, &root).await;
        delete(&http, &root, &id).await;
    }
    let per_cycle_us = began.elapsed().as_secs_f64() * 1e6 / cycles as f64;
    let after = common::rss_mib();

    let before_alive = common::rss_mib();
    let mut alive = Vec::with_capacity(ALIVE);
    for _ in 0..ALIVE {
        alive.push(create(&http, &root).await.0);
    }
    let per_world_kib = (common::rss_mib() - before_alive) * 1024.0 / ALIVE as f64;
    for id in &alive {
        delete(&http, &root, id).await;
    }
    assert!(mock.list_worlds().is_empty());

    let grown = after - start;
    println!("worlds: {cycles} created, used and deleted one after another");
    println!("  resident memory {start:.1} MiB → {after:.1} MiB ({grown:+.1} MiB)");
    println!(
        "  {per_cycle_us:.0} µs a cycle; {ALIVE} alive at once hold {per_world_kib:.0} KiB each"
    );
    println!(
        "RESULT worlds cycles={cycles} start_mib={start:.1} end_mib={after:.1} grown_mib={grown:.1} cycle_us={per_cycle_us:.0} alive_kib={per_world_kib:.0}"
    );
}
