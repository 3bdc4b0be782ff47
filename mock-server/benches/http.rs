//! Requests per second of the mock's `GET /v1/generations/{id}` and
//! `POST /v1/generations`, beside a bare axum handler answering a similar JSON,
//! all driven by `wrk` in another process in the same run.
//!
//! ```text
//! apt-get install wrk
//! cargo bench -p mediagen-mock-server --bench http            # 11 rounds of 3 s
//! MEDIAGEN_BENCH_SECONDS=10 MEDIAGEN_BENCH_ROUNDS=5 cargo bench -p mediagen-mock-server --bench http
//! ```
//!
//! Rate limits are off. Creates go to 2,000 users chosen at random by the wrk
//! script, and the clock runs a million times faster, so tasks finish at once
//! and the concurrency cap does not turn the run into a 429 benchmark.
//!
//! The same two routes are measured on a second mock without the verdict's
//! bookkeeping (`Config::verdict` off), interleaved in the same rounds: the
//! ratio is what the verdict costs the request path.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::process::Command;

use axum::Json;
use axum::routing::get;
use mediagen_mock_server::MockServer;
use serde_json::{Value, json};
use tokio::net::TcpListener;

const USERS: usize = 2_000;

async fn bare_generation() -> Json<Value> {
    Json(json!({
        "id": "0b7a3c4e-8f1d-4c2a-9e5b-7d6f1a2b3c4d",
        "status": "SUCCEEDED",
        "modelSlug": "flux-schnell",
        "mediaType": "IMAGE",
        "prompt": "a lighthouse at dusk",
        "params": {"aspect_ratio": "16:9"},
        "costRub": 2.5,
        "outputUrls": ["http://127.0.0.1/outputs/0b7a3c4e-8f1d-4c2a-9e5b-7d6f1a2b3c4d/0.png"],
        "errorCode": null,
        "errorMessage": null,
        "createdAt": "2026-11-22T10:00:00.000Z",
        "startedAt": "2026-11-22T10:00:01.000Z",
        "finishedAt": "2026-11-22T10:00:05.000Z"
    }))
}

async fn serve(router: axum::Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    addr
}

/// Runs wrk and returns its requests per second and the share of non-2xx answers.
fn wrk(url: &str, seconds: u64, script: Option<&std::path::Path>) -> (f64, f64) {
    let mut command = Command::new("wrk");
    command.args(["-t2", "-c32", &format!("-d{seconds}s"), "--latency"]);
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command
        .arg(url)
        .output()
        .expect("run wrk (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    let number_after = |label: &str| -> f64 {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0)
    };
    let rps = number_after("Requests/sec:");
    let total: f64 = text
        .lines()
        .find(|l| l.contains("requests in"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0);
    let non_2xx = number_after("Non-2xx or 3xx responses:");
    (rps, if total > 0.0 { non_2xx / total } else { 0.0 })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One mock under test: its address, its users' keys and its wrk scripts.
struct Target {
    mock: MockServer,
    keys: Vec<String>,
    get_script: std::path::PathBuf,
    post_script: std::path::PathBuf,
}

impl Target {
    async fn start(verdict: bool, dir: &std::path::Path) -> Self {
        let mock = MockServer::builder()
            .real_clock(1_000_000.0)
            .rate_limits(false)
            .queue_seconds(0.0)
            .config(|c| c.verdict = verdict)
            .start()
            .await;
        let keys: Vec<String> = (0..USERS)
            .map(|_| mock.create_user(1e9).unwrap().api_key)
            .collect();
        let name = if verdict { "on" } else { "off" };
        let get_script = dir.join(format!("get-{name}.lua"));
        std::fs::write(
            &get_script,
            format!("wrk.headers[\"Authorization\"] = \"Bearer {}\"\n", keys[0]),
        )
        .expect("script");
        let post_script = dir.join(format!("post-{name}.lua"));
        let mut lua = std::fs::File::create(&post_script).expect("script");
        writeln!(lua, "local keys = {{").expect("write");
        for key in &keys {
            writeln!(lua, "  \"{key}\",").expect("write");
        }
        writeln!(
            lua,
            "}}\nwrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.body = '{{\"modelSlug\":\"flux-schnell\",\"prompt\":\"a lighthouse at dusk\",\"params\":{{\"aspect_ratio\":\"16:9\"}}}}'\n\
             request = function()\n  wrk.headers[\"Authorization\"] = \"Bearer \" .. keys[math.random(#keys)]\n  return wrk.format()\nend"
        )
        .expect("write");
        Self {
            mock,
            keys,
            get_script,
            post_script,
        }
    }

    /// A generation to read, made anew for each round: the creates of the
    /// round before push older ones out of the mock's retention bound.
    async fn fresh_generation(&self) -> String {
        let created: Value = reqwest::Client::new()
            .post(format!("{}/v1/generations", self.mock.uri()))
            .bearer_auth(&self.keys[0])
            .json(&json!({"modelSlug": "flux-schnell", "prompt": "a lighthouse at dusk", "params": {"aspect_ratio": "16:9"}}))
            .send()
            .await
            .expect("create")
            .json()
            .await
            .expect("json");
        created["id"].as_str().expect("id").to_owned()
    }

    /// `GET /v1/generations/{id}` for `seconds`: requests per second and the
    /// share refused.
    fn get(&self, generation_id: &str, seconds: u64) -> (f64, f64) {
        let url = format!("{}/v1/generations/{generation_id}", self.mock.uri());
        wrk(&url, seconds, Some(&self.get_script))
    }

    /// `POST /v1/generations` for `seconds`: requests per second and the
    /// share refused.
    fn post(&self, seconds: u64) -> (f64, f64) {
        let url = format!("{}/v1/generations", self.mock.uri());
        wrk(&url, seconds, Some(&self.post_script))
    }
}

fn main() {
    let seconds = common::env_number("MEDIAGEN_BENCH_SECONDS", 3);
    let rounds = common::env_number("MEDIAGEN_BENCH_ROUNDS", 11) as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("mediagen-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");

    // The mock as it runs (the verdict's bookkeeping on), and the same mock
    // without the verdict: its cost on the request path, in the same run.
    let (on, off, bare_addr) = runtime.block_on(async {
        let on = Target::start(true, &dir).await;
        let off = Target::start(false, &dir).await;
        let bare = axum::Router::new().route("/v1/generations/{id}", get(bare_generation));
        (on, off, serve(bare).await)
    });

    let (mut bare, mut get_rps, mut post_rps, mut post_refused) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut get_refused = Vec::new();
    let (mut get_off, mut post_off) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let generation_id = runtime.block_on(on.fresh_generation());
        let generation_off = runtime.block_on(off.fresh_generation());
        // The runs a ratio compares go back to back (bare and GET, GET with
        // and without the verdict, POST with and without it), and which of
        // them goes first alternates by round: the host's noise, which moves
        // over seconds, hits both sides of each ratio alike and favours
        // neither.
        let bare_url = format!("http://{bare_addr}/v1/generations/{generation_id}");
        let ((get, get_no), (get_base, _), (post, post_no), (post_base, _)) = if round % 2 == 1 {
            bare.push(wrk(&bare_url, seconds, None).0);
            let get = on.get(&generation_id, seconds);
            let get_base = off.get(&generation_off, seconds);
            let post = on.post(seconds);
            (get, get_base, post, off.post(seconds))
        } else {
            let get_base = off.get(&generation_off, seconds);
            let get = on.get(&generation_id, seconds);
            bare.push(wrk(&bare_url, seconds, None).0);
            let post_base = off.post(seconds);
            (get, get_base, on.post(seconds), post_base)
        };
        get_rps.push(get);
        get_refused.push(get_no);
        post_rps.push(post);
        post_refused.push(post_no);
        get_off.push(get_base);
        post_off.push(post_base);
        eprintln!(
            "round {round}/{rounds}: bare {:.0}, GET {get:.0} (no verdict {get_base:.0}), POST {post:.0} (no verdict {post_base:.0}) req/s",
            bare[round - 1],
        );
    }
    std::fs::remove_dir_all(&dir).ok();

    // Each round's ratio is taken against the bare handler of the same round,
    // seconds apart: the host's noise moves both, so the median ratio holds still
    // where the medians of the rates alone need not come from one moment.
    let ratio =
        |rates: &[f64], base: &[f64]| median(rates.iter().zip(base).map(|(r, b)| r / b).collect());
    let (get_ratio, post_ratio) = (ratio(&get_rps, &bare), ratio(&post_rps, &bare));
    let (get_cost, post_cost) = (ratio(&get_rps, &get_off), ratio(&post_rps, &post_off));
    let (bare, get, post) = (median(bare), median(get_rps), median(post_rps));
    let (get_off, post_off) = (median(get_off), median(post_off));
    println!(
        "| target (wrk -t2 -c32, {seconds} s × {rounds} rounds, median) | requests/s | vs bare axum (median of the rounds' ratios) |"
    );
    println!("|---|---:|---:|");
    println!("| bare axum handler, similar JSON | {bare:.0} | 1.00 |");
    println!(
        "| mock GET /v1/generations/{{id}} ({:.1}% non-2xx) | {get:.0} | {get_ratio:.2} |",
        100.0 * median(get_refused)
    );
    println!(
        "| mock POST /v1/generations ({USERS} users, {:.1}% non-2xx) | {post:.0} | {:.2} |",
        100.0 * median(post_refused),
        post_ratio
    );
    println!();
    println!(
        "| the verdict's bookkeeping (same run) | without, requests/s | with / without (median of the rounds' ratios) |"
    );
    println!("|---|---:|---:|");
    println!("| GET /v1/generations/{{id}} | {get_off:.0} | {get_cost:.3} |");
    println!(
        "| POST /v1/generations (no Idempotency-Key: one advice per create) | {post_off:.0} | {post_cost:.3} |"
    );
}
