//! The live journal under load: requests at a steady 1,000 a second for 10 s,
//! with two readers of `GET /_mock/events` attached (the dashboard and a
//! test's reader) and without; then as many requests as 64 clients can send,
//! with and without the readers.
//!
//! ```text
//! cargo bench -p mediagen-mock-server --bench events
//! MEDIAGEN_BENCH_RATE=2000 MEDIAGEN_BENCH_SECONDS=20 MEDIAGEN_BENCH_ROUNDS=5 cargo bench -p mediagen-mock-server --bench events
//! ```
//!
//! Each paced run counts the `request` events every reader got against the
//! request log's growth, and looks for gaps in `seq` and `lagged` messages:
//! a lost event fails the run. A quarter of the requests create a generation
//! (one of 200 users; the clock runs 60 times faster, so tasks end and write
//! ledger rows during the run), the rest read one. Prints one `RESULT` line
//! per figure, medians of the rounds.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use mediagen_mock_server::{ClockMode, MockServer, NewUser};
use serde_json::json;

/// What one reader of the stream saw.
#[derive(Default)]
struct Seen {
    requests: AtomicU64,
    /// Events missed: gaps in `seq` and `lagged` messages.
    lost: AtomicU64,
}

/// The number right after `key` in `data`.
fn number_after(data: &str, key: &str) -> Option<u64> {
    let rest = &data[data.find(key)? + key.len()..];
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

/// Opens the stream at `url` (subscribed once its answer's head came), then
/// reads it in a task of its own, counting what it sees.
async fn attach_reader(
    http: &reqwest::Client,
    url: String,
) -> (Arc<Seen>, tokio::task::JoinHandle<()>) {
    let seen = Arc::new(Seen::default());
    let response = http.get(url).send().await.expect("the stream opens");
    let task = tokio::spawn({
        let seen = seen.clone();
        async move {
            let mut body = response.bytes_stream();
            let mut text = String::new();
            let mut last = 0u64;
            while let Some(Ok(chunk)) = body.next().await {
                text.push_str(&String::from_utf8_lossy(&chunk));
                let mut read = 0;
                while let Some(end) = text[read..].find("\n\n") {
                    let block = &text[read..read + end];
                    read += end + 2;
                    let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) else {
                        continue;
                    };
                    // Read as a light client would: the number and the type,
                    // without building the whole object.
                    if let Some(missed) = number_after(data, "\"missed\":") {
                        seen.lost.fetch_add(missed, Ordering::Relaxed);
                        continue;
                    }
                    let seq = number_after(data, "\"seq\":").expect("seq");
                    if last != 0 && seq != last + 1 {
                        seen.lost.fetch_add(seq - last - 1, Ordering::Relaxed);
                    }
                    last = seq;
                    if data.contains("\"type\":\"request\"") {
                        seen.requests.fetch_add(1, Ordering::Relaxed);
                    }
                }
                text.drain(..read);
            }
        }
    });
    (seen, task)
}

async fn attach(
    http: &reqwest::Client,
    mock: &MockServer,
    readers: usize,
) -> Vec<(Arc<Seen>, tokio::task::JoinHandle<()>)> {
    let mut attached = Vec::new();
    for _ in 0..readers {
        attached.push(attach_reader(http, format!("{}/_mock/events", mock.uri())).await);
    }
    attached
}

/// Stops the readers; the events they were told they missed.
fn detach(attached: Vec<(Arc<Seen>, tokio::task::JoinHandle<()>)>) -> u64 {
    let lost = attached
        .iter()
        .map(|(seen, _)| seen.lost.load(Ordering::Relaxed))
        .sum();
    for (_, task) in attached {
        task.abort();
    }
    lost
}

/// One request of the mix: the `n`th.
async fn one_request(http: &reqwest::Client, base: &str, users: &[NewUser], n: u64) -> bool {
    let user = &users[n as usize % users.len()];
    let request = if n.is_multiple_of(4) {
        http.post(format!("{base}/v1/generations")).json(&json!({
            "modelSlug": "flux-schnell",
            "prompt": format!("a lighthouse {n}"),
            "params": {"aspect_ratio": "16:9"}
        }))
    } else {
        http.get(format!("{base}/v1/generations?limit=5"))
    };
    request
        .bearer_auth(&user.api_key)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .is_ok()
}

struct Paced {
    achieved_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    logged: u64,
    /// Request events per reader.
    told: Vec<u64>,
    lost: u64,
    errors: u64,
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `rate` requests a second for `seconds`, each sent on time whether or not
/// the ones before were answered.
async fn paced(mock: &MockServer, readers: usize, rate: u64, seconds: u64) -> Paced {
    mock.reset();
    let users: Arc<Vec<NewUser>> =
        Arc::new((0..200).map(|_| mock.create_user(1e9).unwrap()).collect());
    let http = reqwest::Client::new();
    let attached = attach(&http, mock, readers).await;
    let logged_before = mock.list_requests().len() as u64;
    let total = rate * seconds;
    let errors = Arc::new(AtomicU64::new(0));
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut sent = Vec::with_capacity(total as usize);
    for n in 0..total {
        ticker.tick().await;
        let (http, users, errors, base) = (http.clone(), users.clone(), errors.clone(), mock.uri());
        sent.push(tokio::spawn(async move {
            let at = Instant::now();
            if !one_request(&http, &base, &users, n).await {
                errors.fetch_add(1, Ordering::Relaxed);
            }
            at.elapsed().as_secs_f64() * 1000.0
        }));
    }
    let mut latencies = Vec::with_capacity(sent.len());
    for task in sent {
        latencies.push(task.await.expect("a request task"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    let logged = mock.list_requests().len() as u64 - logged_before;
    // Readers catch up: every event is published before its answer is sent,
    // so what is still to come is already on its way.
    let deadline = Instant::now() + Duration::from_secs(10);
    while attached
        .iter()
        .any(|(seen, _)| seen.requests.load(Ordering::Relaxed) < logged)
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let told = attached
        .iter()
        .map(|(seen, _)| seen.requests.load(Ordering::Relaxed))
        .collect();
    let lost = detach(attached);
    latencies.sort_by(f64::total_cmp);
    Paced {
        achieved_per_second: total as f64 / elapsed,
        p50_ms: latencies[latencies.len() / 2],
        p99_ms: latencies[latencies.len() * 99 / 100],
        logged,
        told,
        lost,
        errors: errors.load(Ordering::Relaxed),
    }
}

/// Requests a second that `clients` clients sending back to back get in
/// `seconds`, and the events the readers missed meanwhile (told, not failed:
/// past what the readers can take, a reader is told what it lost).
async fn saturated(mock: &MockServer, readers: usize, clients: u64, seconds: u64) -> (f64, u64) {
    mock.reset();
    let users: Arc<Vec<NewUser>> =
        Arc::new((0..200).map(|_| mock.create_user(1e9).unwrap()).collect());
    let http = reqwest::Client::new();
    let attached = attach(&http, mock, readers).await;
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..clients)
        .map(|c| {
            let (http, users, done, base) = (http.clone(), users.clone(), done.clone(), mock.uri());
            tokio::spawn(async move {
                let mut n = c;
                while Instant::now() < until {
                    one_request(&http, &base, &users, n).await;
                    done.fetch_add(1, Ordering::Relaxed);
                    n += clients;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("a client");
    }
    let lost = detach(attached);
    (done.load(Ordering::Relaxed) as f64 / seconds as f64, lost)
}

fn main() {
    let rate = common::env_number("MEDIAGEN_BENCH_RATE", 1000u64);
    let seconds = common::env_number("MEDIAGEN_BENCH_SECONDS", 10u64);
    let rounds = common::env_number("MEDIAGEN_BENCH_ROUNDS", 3usize);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mock = MockServer::builder()
            .config(|c| {
                c.clock = ClockMode::Real;
                c.time_scale = 60.0;
                c.rate_limits = false;
            })
            .start()
            .await;
        for readers in [0, 2] {
            let (mut achieved, mut p50, mut p99) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..rounds {
                let run = paced(&mock, readers, rate, seconds).await;
                assert_eq!(run.errors, 0, "every request answered 2xx");
                assert_eq!(run.lost, 0, "no reader missed an event");
                for told in &run.told {
                    assert_eq!(*told, run.logged, "each reader got every logged request");
                }
                eprintln!(
                    "paced readers={readers}: {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {} logged, told {:?}",
                    run.achieved_per_second, run.p50_ms, run.p99_ms, run.logged, run.told
                );
                achieved.push(run.achieved_per_second);
                p50.push(run.p50_ms);
                p99.push(run.p99_ms);
            }
            println!(
                "RESULT paced readers={readers} offered_per_second={rate} seconds={seconds} achieved_per_second={:.0} p50_ms={:.2} p99_ms={:.2} lost=0",
                median(&mut achieved),
                median(&mut p50),
                median(&mut p99)
            );
        }
        for readers in [0, 2] {
            let (mut rates, mut lost) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                let (rate, missed) = saturated(&mock, readers, 64, 5).await;
                eprintln!("saturated readers={readers}: {rate:.0}/s, {missed} events missed");
                rates.push(rate);
                lost.push(missed as f64);
            }
            println!(
                "RESULT saturated readers={readers} clients=64 per_second={:.0} lost={:.0}",
                median(&mut rates),
                median(&mut lost)
            );
        }
    });
}
