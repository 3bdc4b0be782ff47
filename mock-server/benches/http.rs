//! Requests per second of the mock's `GET /v1/generations/{id}` and
//! `POST /v1/generations`, beside a bare axum handler answering the mock's JSON,
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
//! ratio is what the verdict costs the request path. It is given twice: as
//! requests per second, and as the CPU time this process (the mocks; wrk runs
//! apart) spends per request, which the other tenants of a shared host move
//! far less than they move a rate.
//!
//! The bare handler answers the mock's own answer to the GET (captured from
//! the mock at start-up: the same keys and values, built and serialized anew
//! for each request; the mock's request id and rate-limit headers stay the
//! mock's own cost), and is measured twice in each round: in this process, on the
//! runtime the mocks run on, and in a process of its own, so that neither
//! shares a process with the other. The second is this binary run again with
//! `MEDIAGEN_BENCH_BARE_SERVER=1`: it serves the bare handler only, prints its
//! address and stops when its stdin closes or this process kills it. Each
//! mock's rate is given against both: what the mock's code costs beyond
//! axum's, and that with the sharing of one process taken out.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::routing::get;
use mediagen_mock_server::MockServer;
use serde_json::{Value, json};
use tokio::net::TcpListener;

const USERS: usize = 2_000;

/// Set (to anything) in the bare server's process: `main` serves the bare
/// handler only.
const BARE_SERVER: &str = "MEDIAGEN_BENCH_BARE_SERVER";
/// The JSON the bare server answers, handed to its process.
const BARE_BODY: &str = "MEDIAGEN_BENCH_BARE_BODY";

/// The mock's answer to a GET, built anew and serialized for each request, as
/// the mock builds and serializes its own (and as this handler's `json!` did
/// before it copied the mock's fields, so its figures stay comparable).
async fn bare_generation(State(body): State<Arc<Value>>) -> Json<Value> {
    Json(Value::clone(&body))
}

fn bare_router(body: Arc<Value>) -> axum::Router {
    axum::Router::new()
        .route("/v1/generations/{id}", get(bare_generation))
        .with_state(body)
}

/// `main` of the bare server's process: serves the JSON of `BARE_BODY` on
/// 127.0.0.1:0, prints the address on stdout, and returns once stdin closes
/// (the bench ended, whichever way it ended).
fn bare_server() {
    let body: Value = std::env::var(BARE_BODY)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("{BARE_BODY} holds no JSON"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let addr = runtime.block_on(serve(bare_router(Arc::new(body))));
    println!("{addr}");
    std::io::stdout().flush().expect("print the address");
    std::io::copy(&mut std::io::stdin(), &mut std::io::sink()).ok();
}

/// The bare server's process, killed when this is dropped, a panic's unwinding
/// included; should this process die without unwinding, the child's stdin
/// closes and it stops by itself.
struct BareProcess {
    child: Child,
    addr: SocketAddr,
}

impl BareProcess {
    fn start(body: &Value) -> Self {
        let exe = std::env::current_exe().expect("this bench's path");
        let child = Command::new(exe)
            .env(BARE_SERVER, "1")
            .env(BARE_BODY, body.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the bare server's process");
        // Guarded from here on: a failure to read the address kills it.
        let mut process = Self {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let mut line = String::new();
        BufReader::new(process.child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the bare server's address");
        process.addr = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the bare server printed {line:?}, not an address"));
        process
    }
}

impl Drop for BareProcess {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
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

/// What one wrk run measured.
#[derive(Debug, Clone, Copy)]
struct Run {
    rps: f64,
    /// The share of non-2xx answers.
    refused: f64,
    /// CPU time of this process per request, in microseconds.
    cpu_us: f64,
}

/// CPU time this process has used (all its threads, user and system), in
/// microseconds: `/proc/self/stat` counts it in ticks of 10 ms.
fn cpu_us() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's name, which may hold spaces: state is
    // the first, utime the 12th, stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10_000.0
}

/// Runs wrk: its requests per second, the share of non-2xx answers, and
/// this process's CPU time per request.
fn wrk(url: &str, seconds: u64, script: Option<&std::path::Path>) -> Run {
    let mut command = Command::new("wrk");
    command.args(["-t2", "-c32", &format!("-d{seconds}s"), "--latency"]);
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    command.arg(url);
    let cpu_before = cpu_us();
    let output = command.output().expect("run wrk (apt-get install wrk)");
    let cpu = cpu_us() - cpu_before;
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
    let per = |value: f64| if total > 0.0 { value / total } else { 0.0 };
    Run {
        rps,
        refused: per(non_2xx),
        cpu_us: per(cpu),
    }
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

    /// The mock's answer to `GET /v1/generations/{id}`, as JSON.
    async fn answer(&self, generation_id: &str) -> Value {
        reqwest::Client::new()
            .get(format!(
                "{}/v1/generations/{generation_id}",
                self.mock.uri()
            ))
            .bearer_auth(&self.keys[0])
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .expect("read a generation")
            .json()
            .await
            .expect("json")
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

    /// `GET /v1/generations/{id}` for `seconds`.
    fn get(&self, generation_id: &str, seconds: u64) -> Run {
        let url = format!("{}/v1/generations/{generation_id}", self.mock.uri());
        wrk(&url, seconds, Some(&self.get_script))
    }

    /// `POST /v1/generations` for `seconds`.
    fn post(&self, seconds: u64) -> Run {
        let url = format!("{}/v1/generations", self.mock.uri());
        wrk(&url, seconds, Some(&self.post_script))
    }
}

/// Which run of a round.
#[derive(Clone, Copy)]
enum Step {
    Bare,
    BareProcess,
    Get,
    GetOff,
    Post,
    PostOff,
}

fn main() {
    if std::env::var_os(BARE_SERVER).is_some() {
        return bare_server();
    }
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
    // The bare handler answers what the mock answers to the GET, once the
    // generation has finished, as the rounds' generations have by the time
    // most of their reads arrive.
    let (on, off, body, bare_addr) = runtime.block_on(async {
        let on = Target::start(true, &dir).await;
        let off = Target::start(false, &dir).await;
        let generation_id = on.fresh_generation().await;
        let mut body = on.answer(&generation_id).await;
        for _ in 0..100 {
            if !body["finishedAt"].is_null() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            body = on.answer(&generation_id).await;
        }
        assert_eq!(
            body["status"], "SUCCEEDED",
            "the generation to copy: {body}"
        );
        let body = Arc::new(body);
        let bare_addr = serve(bare_router(Arc::clone(&body))).await;
        (on, off, body, bare_addr)
    });
    let bare_process = BareProcess::start(&body);
    eprintln!(
        "the bare handler answers the mock's GET: {} bytes of JSON, {} keys",
        body.to_string().len(),
        body.as_object().map_or(0, serde_json::Map::len)
    );

    let (mut bare, mut bare_apart, mut get, mut get_off, mut post, mut post_off) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for round in 1..=rounds {
        let generation_id = runtime.block_on(on.fresh_generation());
        let generation_off = runtime.block_on(off.fresh_generation());
        // The runs a ratio compares go back to back (the bare handlers and
        // GET, GET with and without the verdict, POST with and without it),
        // and which of them goes first alternates by round: the host's noise,
        // which moves over seconds, hits both sides of each ratio alike and
        // favours neither. Which bare handler runs next to GET alternates by
        // pairs of rounds.
        let (near, far) = if (round - 1) / 2 % 2 == 0 {
            (Step::BareProcess, Step::Bare)
        } else {
            (Step::Bare, Step::BareProcess)
        };
        let mut reads = [far, near, Step::Get, Step::GetOff];
        let mut creates = [Step::Post, Step::PostOff];
        if round % 2 == 0 {
            reads.reverse();
            creates.reverse();
        }
        let bare_path = format!("/v1/generations/{generation_id}");
        for step in reads.into_iter().chain(creates) {
            match step {
                Step::Bare => bare.push(wrk(
                    &format!("http://{bare_addr}{bare_path}"),
                    seconds,
                    None,
                )),
                Step::BareProcess => bare_apart.push(wrk(
                    &format!("http://{}{bare_path}", bare_process.addr),
                    seconds,
                    None,
                )),
                Step::Get => get.push(on.get(&generation_id, seconds)),
                Step::GetOff => get_off.push(off.get(&generation_off, seconds)),
                Step::Post => post.push(on.post(seconds)),
                Step::PostOff => post_off.push(off.post(seconds)),
            }
        }
        let last = |runs: &[Run]| runs[round - 1];
        eprintln!(
            "round {round}/{rounds}: bare {:.0} (own process {:.0}), GET {:.0} (no verdict {:.0}), POST {:.0} (no verdict {:.0}) req/s; \
             CPU µs/request GET {:.2} ({:.2}), POST {:.2} ({:.2})",
            last(&bare).rps,
            last(&bare_apart).rps,
            last(&get).rps,
            last(&get_off).rps,
            last(&post).rps,
            last(&post_off).rps,
            last(&get).cpu_us,
            last(&get_off).cpu_us,
            last(&post).cpu_us,
            last(&post_off).cpu_us,
        );
    }
    drop(bare_process);
    std::fs::remove_dir_all(&dir).ok();
    // Each round's ratio is taken between runs of the same round, seconds
    // apart: the host's noise moves both, so the median ratio holds still
    // where the medians of the rates alone need not come from one moment.
    let ratio = |runs: &[Run], base: &[Run], of: fn(&Run) -> f64| {
        median(runs.iter().zip(base).map(|(r, b)| of(r) / of(b)).collect())
    };
    let rate = |run: &Run| run.rps;
    let cpu = |run: &Run| run.cpu_us;
    let mid = |runs: &[Run], of: fn(&Run) -> f64| median(runs.iter().map(of).collect());
    let refused = |runs: &[Run]| 100.0 * mid(runs, |run| run.refused);
    println!(
        "| target (wrk -t2 -c32, {seconds} s × {rounds} rounds, median) | requests/s | vs bare axum (median of the rounds' ratios) |"
    );
    println!("|---|---:|---:|");
    println!(
        "| bare axum handler, similar JSON | {:.0} | 1.00 |",
        mid(&bare, rate)
    );
    println!(
        "| mock GET /v1/generations/{{id}} ({:.1}% non-2xx) | {:.0} | {:.2} |",
        refused(&get),
        mid(&get, rate),
        ratio(&get, &bare, rate)
    );
    println!(
        "| mock POST /v1/generations ({USERS} users, {:.1}% non-2xx) | {:.0} | {:.2} |",
        refused(&post),
        mid(&post, rate),
        ratio(&post, &bare, rate)
    );
    println!();
    println!(
        "| vs the bare handler in this process and in one of its own (same run, median of the rounds' ratios) | requests/s | / bare, this process | / bare, own process |"
    );
    println!("|---|---:|---:|---:|");
    println!(
        "| bare axum handler, the mock's GET JSON, in this process | {:.0} | 1.00 | {:.2} |",
        mid(&bare, rate),
        ratio(&bare, &bare_apart, rate)
    );
    println!(
        "| bare axum handler, the mock's GET JSON, in a process of its own | {:.0} | {:.2} | 1.00 |",
        mid(&bare_apart, rate),
        ratio(&bare_apart, &bare, rate)
    );
    for (name, runs) in [
        ("mock GET /v1/generations/{id}", &get),
        ("mock POST /v1/generations", &post),
    ] {
        println!(
            "| {name} | {:.0} | {:.2} | {:.2} |",
            mid(runs, rate),
            ratio(runs, &bare, rate),
            ratio(runs, &bare_apart, rate)
        );
    }
    println!();
    println!(
        "| the verdict's bookkeeping (same run, median of the rounds' ratios) | without: requests/s | with / without | without: CPU µs per request | with / without |"
    );
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| GET /v1/generations/{{id}} | {:.0} | {:.3} | {:.2} | {:.3} |",
        mid(&get_off, rate),
        ratio(&get, &get_off, rate),
        mid(&get_off, cpu),
        ratio(&get, &get_off, cpu)
    );
    println!(
        "| POST /v1/generations (no Idempotency-Key: one advice per create) | {:.0} | {:.3} | {:.2} | {:.3} |",
        mid(&post_off, rate),
        ratio(&post, &post_off, rate),
        mid(&post_off, cpu),
        ratio(&post, &post_off, cpu)
    );
}
