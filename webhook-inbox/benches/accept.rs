//! Deliveries accepted per second, and each one's latency, with 64 senders at once
//! each posting signed 1 KiB deliveries one after the other through the inbox's axum
//! router (in process: the HTTP server's own cost is left out), beside a bare verify
//! of the same deliveries in the same run.
//!
//! Run: `cargo bench -p webhook-inbox --bench accept [-- SENDERS PER_SENDER]`
//! (64 and 400 unless given). The database is in the target directory, on disk.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use bytes::Bytes;
use tower::ServiceExt as _;
use webhook_inbox::{Durability, Inbox, InboxConfig};
use webhook_verify::Webhook;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// One delivery as the service sends it.
#[derive(Clone)]
struct Delivery {
    headers: HeaderMap,
    body: Bytes,
}

/// 1 KiB bodies, each a distinct message.
fn deliveries(count: usize) -> Vec<Delivery> {
    let webhook = Webhook::new(SECRET).unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    (0..count)
        .map(|n| {
            let id = format!("msg_{n:012}");
            let head = format!(
                r#"{{"id":"evt_{n:012}","type":"generation.completed","created_at":"2026-11-22T10:15:30.123Z","data":{{"generation":{{"id":"3f6c1a52-8d4e-4b7a-9c21-{n:012}","status":"SUCCEEDED","media_type":"IMAGE","cost_rub":2.5,"output_urls":["#
            );
            let mut body = head;
            while body.len() < 1024 - 8 {
                body.push_str(r#""u","#);
            }
            body.truncate(1024 - 8);
            body.push_str(r#""u"]}}}"#);
            let body = format!("{body:<1024}").into_bytes();
            let mut headers = HeaderMap::new();
            headers.insert("webhook-id", id.parse().unwrap());
            headers.insert("webhook-timestamp", now.into());
            let signature = webhook.sign(&id, now, &body).unwrap();
            headers.insert("webhook-signature", signature.parse().unwrap());
            Delivery {
                headers,
                body: Bytes::from(body),
            }
        })
        .collect()
}

struct Run {
    per_second: f64,
    latencies: Vec<Duration>,
}

impl Run {
    fn percentile(&mut self, p: f64) -> Duration {
        self.latencies.sort_unstable();
        let at = ((self.latencies.len() as f64 * p).ceil() as usize).saturating_sub(1);
        self.latencies[at.min(self.latencies.len() - 1)]
    }
}

/// `senders` tasks at once, each calling `one` on its share in turn.
async fn measure<F, Fut>(work: &[Delivery], senders: usize, one: F) -> Run
where
    F: Fn(Delivery) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for share in work.chunks(work.len().div_ceil(senders)) {
        let share = share.to_vec();
        let one = one.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(share.len());
            for delivery in share {
                let sent = Instant::now();
                one(delivery).await;
                latencies.push(sent.elapsed());
            }
            latencies
        });
    }
    let latencies: Vec<Duration> = tasks.join_all().await.into_iter().flatten().collect();
    Run {
        per_second: latencies.len() as f64 / started.elapsed().as_secs_f64(),
        latencies,
    }
}

async fn through_inbox(durability: Durability, work: &[Delivery], senders: usize) -> Run {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let inbox = Inbox::open_with(
        dir.path().join("inbox.db"),
        InboxConfig::default().durability(durability),
    )
    .unwrap();
    let app = inbox.router(Webhook::new(SECRET).unwrap());
    let run = measure(work, senders, move |delivery: Delivery| {
        let app = app.clone();
        async move {
            let mut request = Request::post("/").body(Body::from(delivery.body)).unwrap();
            *request.headers_mut() = delivery.headers;
            let status = app.oneshot(request).await.unwrap().status();
            assert_eq!(status, StatusCode::NO_CONTENT);
        }
    })
    .await;
    assert_eq!(inbox.stats().unwrap().waiting, work.len() as u64);
    run
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"));
    let senders: usize = args.next().map_or(64, |a| a.parse().unwrap());
    let per_sender: usize = args.next().map_or(400, |a| a.parse().unwrap());
    let work = deliveries(senders * per_sender);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{senders} senders x {per_sender} deliveries of {} bytes, {} runtime threads",
        work[0].body.len(),
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!(
        "{:<44} {:>12} {:>10} {:>10}",
        "", "accepted/s", "p50", "p99"
    );
    runtime.block_on(async {
        let webhook = std::sync::Arc::new(Webhook::new(SECRET).unwrap());
        let mut rows = vec![(
            "bare verify (no store)",
            measure(&work, senders, move |delivery: Delivery| {
                let webhook = webhook.clone();
                async move {
                    webhook.verify(&delivery.body, &delivery.headers).unwrap();
                }
            })
            .await,
        )];
        rows.push((
            "inbox, durable against an application crash",
            through_inbox(Durability::ApplicationCrash, &work, senders).await,
        ));
        rows.push((
            "inbox, durable against a power loss",
            through_inbox(Durability::PowerLoss, &work, senders).await,
        ));
        for (name, mut run) in rows {
            let (p50, p99) = (run.percentile(0.50), run.percentile(0.99));
            println!(
                "{name:<44} {:>12.0} {:>8.3}ms {:>8.3}ms",
                run.per_second,
                p50.as_secs_f64() * 1e3,
                p99.as_secs_f64() * 1e3
            );
        }
    });
}
