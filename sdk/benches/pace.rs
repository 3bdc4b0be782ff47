//! What sharing the pace with the other processes of the host costs a request:
//! clients whose pace goes through the state file, one whose pace is the
//! process's own, taking turns against a bare local server that answers
//! `GET /health` with the `x-ratelimit-*` headers (a window that never runs
//! out, so nothing waits and only the bookkeeping differs).
//!
//! ```text
//! cargo bench -p mediagen --bench pace
//! ```
//!
//! The state file lies in memory (tmpfs), as in `$XDG_RUNTIME_DIR`, and on the
//! disk, as in the cache directory of a host without a runtime directory. Each
//! round sends `REQUESTS` requests one after another through each client, in
//! turn, on one thread that runs the server too. The figures are medians over
//! the rounds of each shared client's difference from the process's own within
//! a round: in wall time, and in the thread's time on a CPU (Linux), which the
//! other programs of a busy machine do not inflate.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use mediagen::Client;

const ROUNDS: usize = 15;
const REQUESTS: u32 = 2_000;

static REMAINING: AtomicU32 = AtomicU32::new(u32::MAX);

async fn health() -> (HeaderMap, axum::Json<serde_json::Value>) {
    let mut headers = HeaderMap::new();
    let remaining = REMAINING.fetch_sub(1, Ordering::Relaxed);
    headers.insert("x-ratelimit-limit", u32::MAX.into());
    headers.insert("x-ratelimit-remaining", remaining.into());
    headers.insert("x-ratelimit-reset", 60.into());
    (headers, axum::Json(serde_json::json!({"status": "ok"})))
}

/// The time this thread has spent on a CPU, where the system tells it.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// Microseconds per request of `REQUESTS` requests one after another: wall
/// time, and time on a CPU.
async fn per_request(client: &Client) -> (f64, Option<f64>) {
    let (started, cpu) = (Instant::now(), cpu_time());
    for _ in 0..REQUESTS {
        client.health().await.expect("the server answers");
    }
    let us = |d: Duration| (d / REQUESTS).as_secs_f64() * 1e6;
    let cpu = cpu
        .zip(cpu_time())
        .map(|(before, after)| us(after - before));
    (us(started.elapsed()), cpu)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
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

        let own = Client::builder()
            .base_url(&uri)
            .shared_pace(false)
            .build()
            .expect("a client");
        let mut clients = vec![("own", own)];
        // The bench's own state directories, never the user's.
        let mut dirs = Vec::new();
        let memory = Path::new("/dev/shm");
        if memory.is_dir() {
            dirs.push(("memory", tempfile::tempdir_in(memory).expect("a directory")));
        }
        let disk = env!("CARGO_TARGET_TMPDIR");
        dirs.push(("disk", tempfile::tempdir_in(disk).expect("a directory")));
        for (name, dir) in &dirs {
            let client = Client::builder()
                .base_url(&uri)
                .shared_pace(true)
                .shared_pace_dir(dir.path())
                .build()
                .expect("a client");
            per_request(&client).await;
            assert!(
                std::fs::read_to_string(dir.path().join("pace-1.json"))
                    .is_ok_and(|state| state.contains(&uri)),
                "the shared client keeps its pace in the state file"
            );
            clients.push((name, client));
        }
        per_request(&clients[0].1).await;

        let count = clients.len();
        let (mut wall, mut cpu) = (vec![Vec::new(); count], vec![Vec::new(); count]);
        for round in 0..ROUNDS {
            let mut this_round = vec![(0.0, None); count];
            // Each client goes first in turn.
            for n in 0..count {
                let which = (round + n) % count;
                this_round[which] = per_request(&clients[which].1).await;
            }
            let (own_wall, own_cpu) = this_round[0];
            for (which, (w, c)) in this_round.into_iter().enumerate() {
                wall[which].push((w, w - own_wall));
                if let Some((c, own)) = c.zip(own_cpu) {
                    cpu[which].push((c, c - own));
                }
            }
        }
        let figures = |runs: &Vec<(f64, f64)>| {
            let time = median(runs.iter().map(|r| r.0).collect());
            let cost = median(runs.iter().map(|r| r.1).collect());
            (time, cost)
        };
        let (own_us, _) = figures(&wall[0]);
        let own_cpu_us = (!cpu[0].is_empty()).then(|| figures(&cpu[0]).0);
        let mut result = format!("RESULT pace own_us={own_us:.1}");
        if let Some(own_cpu_us) = own_cpu_us {
            result.push_str(&format!(" own_cpu_us={own_cpu_us:.1}"));
        }
        for (which, (name, _)) in clients.iter().enumerate().skip(1) {
            let (us, cost) = figures(&wall[which]);
            result.push_str(&format!(" {name}_us={us:.1} {name}_cost_us={cost:.1}"));
            let mut told = format!(
                "through a state file on {name}: {us:.1} µs a request, sharing costs {cost:.1} µs \
                 (the process's own pace: {own_us:.1} µs)"
            );
            if !cpu[which].is_empty() {
                let (cpu_us, cpu_cost) = figures(&cpu[which]);
                result.push_str(&format!(
                    " {name}_cpu_us={cpu_us:.1} {name}_cpu_cost_us={cpu_cost:.1}"
                ));
                told.push_str(&format!(
                    "; on a CPU {cpu_us:.1} µs, sharing costs {cpu_cost:.1} µs"
                ));
            }
            eprintln!("{told}; medians of {ROUNDS} rounds of {REQUESTS}");
        }
        println!("{result} rounds={ROUNDS} requests={REQUESTS}");
    });
}
