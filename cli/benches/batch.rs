//! Several `mediagen batch` processes at once on one host, each with its own
//! key, against one mock with its limits on (60 requests a minute per address,
//! 5 active tasks per user) and its clock 20 times faster than real time: 60
//! `flux-schnell` generations in all, polled to their end; and one `mediagen
//! batch` of 60 whose waits end on webhooks (`--listen`, the mock started with
//! `--allow-private-webhooks`), beside the same batch polling.
//!
//! ```text
//! cargo bench -p mediagen-cli --bench batch              # every row
//! cargo bench -p mediagen-cli --bench batch -- webhook   # the webhook rows only
//! cargo bench -p mediagen-cli --bench batch -- processes # the rows of several processes only
//! ```
//!
//! The address's limit is shared by every process behind it, so the floor no
//! set of processes can beat is the one of all their generations together, in
//! the mock's seconds: N creates and at least N reads at 60 requests a minute,
//! 2N seconds; and 5 tasks at a time per user, the sum of the tasks' times over
//! 5 per process. Waits that end on webhooks need no read: N creates, N
//! seconds. The figure is the makespan (the first process started to the
//! last one ended) over that bound, with the requests spent per generation and
//! the 429 answers met. Each set of processes runs once with the pace the
//! processes share through the runtime directory, and once with each process on
//! a pace of its own (`MEDIAGEN_SHARED_PACE=off`), the baseline. The webhook
//! batch and its polling twin run 5 rounds each, in turns; the medians are
//! told.

use std::path::Path;
use std::process::{Command, Stdio};

use mediagen_mock_server::MockServer;

const SCALE: f64 = 20.0;
const MODEL: &str = "flux-schnell";
/// A `flux-schnell` task from create to end, in the mock's seconds: the queue
/// (1 s) and one attempt, as the catalogue says.
const TASK_SECONDS: f64 = 5.0;
const GENERATIONS: usize = 60;

/// Rounds of the webhook batch and of its polling twin.
const ROUNDS: usize = 5;

struct Run {
    makespan: f64,
    bound: f64,
    requests: usize,
    rate_limited: usize,
}

/// How the processes learn that a generation ended.
#[derive(Clone, Copy, PartialEq)]
enum Ends {
    Polling,
    Webhooks,
}

async fn run(processes: usize, shared: bool, ends: Ends) -> Run {
    let mock = MockServer::builder()
        .real_clock(SCALE)
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let dir = tempfile::tempdir().expect("a scratch directory");
    // The processes' runtime directory: the bench's own, never the user's.
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).expect("the runtime directory");
    let per_process = GENERATIONS / processes;
    let commands: Vec<Command> = (0..processes)
        .map(|p| {
            let user = mock.create_user(10_000.0).unwrap();
            let manifest = dir.path().join(format!("process-{p}.txt"));
            let lines: String = (0..per_process)
                .map(|n| format!("a lighthouse, process {p}, take {n}\n"))
                .collect();
            std::fs::write(&manifest, lines).expect("a manifest");
            let mut command = command(&mock.uri(), &user.api_key, &manifest, &runtime, shared);
            if ends == Ends::Webhooks {
                command.args(["--listen", "127.0.0.1:0"]);
            }
            command
        })
        .collect();
    let started = mock.now();
    let children: Vec<_> = commands
        .into_iter()
        .map(|mut command| command.spawn().expect("start mediagen batch"))
        .collect();
    let outputs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|child| child.wait_with_output().expect("mediagen batch ends"))
            .collect::<Vec<_>>()
    })
    .await
    .expect("the waiting thread");
    let makespan = (mock.now() - started).as_seconds_f64();
    for output in outputs {
        assert!(
            output.status.success(),
            "every batch succeeds: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let log = mock.list_requests();
    let users = processes as f64;
    let requests_each = match ends {
        Ends::Polling => 2.0,
        Ends::Webhooks => 1.0,
    };
    Run {
        makespan,
        bound: (requests_each * GENERATIONS as f64)
            .max(GENERATIONS as f64 * TASK_SECONDS / (5.0 * users))
            .max(TASK_SECONDS),
        requests: log.len(),
        rate_limited: log.iter().filter(|r| r.status == Some(429)).count(),
    }
}

fn command(base_url: &str, key: &str, manifest: &Path, runtime: &Path, shared: bool) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mediagen"));
    command
        .env_clear()
        .env("MEDIAGEN_BASE_URL", base_url)
        .env("MEDIAGEN_API_KEY", key)
        .env("XDG_RUNTIME_DIR", runtime)
        .args(["--json", "batch", "-m", MODEL])
        .arg(manifest)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if !shared {
        command.env("MEDIAGEN_SHARED_PACE", "off");
    }
    command
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    if only.as_deref().is_none_or(|only| only == "processes") {
        processes(&runtime);
    }
    if only.as_deref().is_none_or(|only| only == "webhook") {
        webhooks(&runtime);
    }
}

/// One process, and four at once with the pace shared and not.
fn processes(runtime: &tokio::runtime::Runtime) {
    for (processes, shared) in [(1, true), (4, true), (4, false)] {
        let pace = if shared { "shared" } else { "own" };
        let run = runtime.block_on(run(processes, shared, Ends::Polling));
        eprintln!(
            "{processes} x mediagen batch, {GENERATIONS} {MODEL} in all, {pace} pace: {:.0} s \
             against a bound of {:.0} s ({:.2}x), {:.2} requests per generation, {} answered 429",
            run.makespan,
            run.bound,
            run.makespan / run.bound,
            run.requests as f64 / GENERATIONS as f64,
            run.rate_limited
        );
        println!(
            "RESULT processes processes={processes} count={GENERATIONS} model={MODEL} pace={pace} \
             makespan_s={:.1} bound_s={:.0} ratio={:.2} requests_per_generation={:.2} rate_limited={}",
            run.makespan,
            run.bound,
            run.makespan / run.bound,
            run.requests as f64 / GENERATIONS as f64,
            run.rate_limited
        );
    }
}

/// One batch whose waits end on webhooks, and the same batch polling, in turns.
fn webhooks(runtime: &tokio::runtime::Runtime) {
    let mut polling = Vec::new();
    let mut webhook = Vec::new();
    for _ in 0..ROUNDS {
        polling.push(runtime.block_on(run(1, true, Ends::Polling)));
        webhook.push(runtime.block_on(run(1, true, Ends::Webhooks)));
    }
    let median = |runs: &[Run], of: fn(&Run) -> f64| {
        let mut values: Vec<f64> = runs.iter().map(of).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let polled = median(&polling, |r| r.makespan);
    for (name, runs) in [("polling", &polling), ("webhook", &webhook)] {
        let makespan = median(runs, |r| r.makespan);
        let bound = runs[0].bound;
        let requests = median(runs, |r| r.requests as f64) / GENERATIONS as f64;
        let rate_limited: usize = runs.iter().map(|r| r.rate_limited).sum();
        eprintln!(
            "mediagen batch, {GENERATIONS} {MODEL}, {name}: median {makespan:.1} s of {ROUNDS} \
             rounds against a bound of {bound:.0} s ({:.2}x), {:.2}x the polling median, \
             {requests:.2} requests per generation, {rate_limited} answered 429 in all",
            makespan / bound,
            makespan / polled,
        );
        println!(
            "RESULT ends ends={name} count={GENERATIONS} model={MODEL} rounds={ROUNDS} \
             makespan_median_s={makespan:.1} bound_s={bound:.0} ratio={:.2} vs_polling={:.2} \
             requests_per_generation={requests:.2} rate_limited={rate_limited}",
            makespan / bound,
            makespan / polled,
        );
    }
}
