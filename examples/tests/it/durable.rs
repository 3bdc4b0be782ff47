//! The durable receiver (`webhook_receiver --inbox FILE`) against the mock and its
//! retries: killed with SIGKILL at random moments and restarted, it still processes
//! every generation's final event exactly once.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mediagen::{Client, CreatedWebhookEndpoint, GenerationRequest, WebhookEndpointRequest};
use mediagen_mock_server::MockServer;
use serde_json::Value;
use uuid::Uuid;

use crate::{Running, program, run};

/// A random number below `below`, different at each call and each run.
fn random(below: u64) -> u64 {
    RandomState::new().hash_one(std::time::Instant::now()) % below
}

/// A port free now, kept by the receiver across its restarts so that the
/// endpoint's URL stays right.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What both tests start from: a mock that delivers to loopback, without the
/// general rate limit (the tests make more requests a minute than it allows,
/// and what they test is delivery); a user with a balance; its client, on a
/// pace of its own (the host's other processes, other tests, have nothing to
/// do with this one); an endpoint at a port free now; and the inbox's file.
struct Rig {
    mock: MockServer,
    key: String,
    client: Client,
    port: u16,
    endpoint: CreatedWebhookEndpoint,
    db: PathBuf,
    _dir: tempfile::TempDir,
}

impl Rig {
    async fn start(balance_rub: f64, paced: bool) -> Self {
        let mock = MockServer::builder()
            .config(|c| c.allow_private_webhooks = true)
            .rate_limits(false)
            .start()
            .await;
        let key = mock.create_user(balance_rub).unwrap().api_key;
        let client = Client::builder()
            .base_url(mock.uri())
            .api_key(&key)
            .pacing(paced)
            .shared_pace(false)
            .build()
            .unwrap();
        let port = free_port();
        let endpoint = client
            .webhooks()
            .create(WebhookEndpointRequest::new(webhook_url(port)))
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        Self {
            mock,
            key,
            client,
            port,
            endpoint,
            db: dir.path().join("inbox.db"),
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        webhook_url(self.port)
    }

    /// The durable receiver of the endpoint, not yet started.
    fn receiver(&self) -> Receiver<'_> {
        Receiver {
            mock: &self.mock,
            key: self.key.clone(),
            secret: self.endpoint.secret.expose().to_owned(),
            port: self.port,
            db: &self.db,
        }
    }
}

fn webhook_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/webhooks")
}

struct Receiver<'a> {
    mock: &'a MockServer,
    key: String,
    secret: String,
    port: u16,
    db: &'a Path,
}

impl Receiver<'_> {
    async fn start(&self) -> Running {
        let mut cmd = program("webhook_receiver", self.mock, &self.key);
        cmd.env("MEDIAGEN_WEBHOOK_SECRET", &self.secret)
            .arg(self.port.to_string())
            .arg("--inbox")
            .arg(self.db);
        let mut running = Running::spawn(cmd);
        let listening = running.next_line().await.unwrap();
        assert!(listening.starts_with("listening on "), "{listening}");
        running
    }

    /// Lines of `--dump`, parsed.
    async fn dump(&self) -> Vec<Value> {
        let mut cmd = program("webhook_receiver", self.mock, &self.key);
        cmd.arg("--inbox").arg(self.db).arg("--dump");
        let output = run(cmd).await;
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// Ends the receiver as an operator would: SIGTERM, after which it finishes the
/// messages it stored, then exits.
async fn stop(running: Running) -> Vec<String> {
    let status = Command::new("kill")
        .args(["-TERM", &running.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    running.finish().await
}

/// Makes every retry due, round after round, until every message is delivered.
async fn deliver_everything(mock: &MockServer) {
    for _ in 0..100 {
        mock.deliveries_settled().await;
        if mock
            .list_deliveries()
            .iter()
            .all(|d| d.state == "delivered")
        {
            return;
        }
        // Past the longest delay the schedule can have reached by now.
        mock.advance_clock(3600.0).unwrap();
    }
    panic!("messages still undelivered: {:#?}", mock.list_deliveries());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_at_random_moments_the_durable_receiver_processes_each_final_event_once() {
    // Unpaced: the mock's limits are off.
    let rig = Rig::start(1000.0, false).await;
    let (mock, client, endpoint) = (&rig.mock, &rig.client, &rig.endpoint);
    let receiver = rig.receiver();

    let mut expected = HashMap::new();
    let mut running = Some(receiver.start().await);
    for round in 0..8 {
        // Five at a time: the service runs 5 tasks of a user at once. One in three fails.
        for n in 0..5 {
            let prompt = if (round * 5 + n) % 3 == 0 {
                "mock:fail=content_policy".to_owned()
            } else {
                format!("a fox, take {round}.{n}")
            };
            let created = client
                .generations()
                .create(GenerationRequest::new("flux-schnell", prompt))
                .await
                .unwrap();
            expected.insert(created.id, None);
        }
        if round % 3 == 2 {
            // Down when the tasks end: every first attempt fails, the retries come later.
            drop(running.take());
        }
        mock.advance_clock(30.0).unwrap();
        // SIGKILL at a random moment while the deliveries arrive and are worked on.
        tokio::time::sleep(Duration::from_micros(random(20_000))).await;
        drop(running.take());
        mock.deliveries_settled().await;
        running = Some(receiver.start().await);
        if round % 2 == 1 {
            // Retries due while it runs, then killed again at random.
            mock.advance_clock(3600.0).unwrap();
            tokio::time::sleep(Duration::from_micros(random(20_000))).await;
            drop(running.take());
            running = Some(receiver.start().await);
        }
    }
    deliver_everything(mock).await;

    // Some messages again, three times at once: concurrent duplicates, answered,
    // not stored. (A few: the client paces its requests.)
    let messages = mock.list_deliveries();
    let mut redeliveries = tokio::task::JoinSet::new();
    for message in messages.iter().take(4).cycle().take(12) {
        let client = client.clone();
        let (endpoint_id, message_id) = (endpoint.id.clone(), message.message_id);
        redeliveries.spawn(async move {
            client
                .webhooks()
                .redeliver(&endpoint_id, message_id)
                .await
                .unwrap();
        });
    }
    redeliveries.join_all().await;
    mock.advance_clock(1.0).unwrap();
    deliver_everything(mock).await;
    // Killed once more, maybe before its worker caught up: what it stored and did
    // not process, the dump processes first.
    tokio::time::sleep(Duration::from_micros(random(5_000))).await;
    drop(running.take());

    for (id, status) in &mut expected {
        *status = mock.generation(*id).map(|g| g.status);
    }
    let dump = receiver.dump().await;
    let mut seen: HashMap<Uuid, usize> = HashMap::new();
    for line in &dump {
        let id: Uuid = line["generationId"].as_str().unwrap().parse().unwrap();
        *seen.entry(id).or_default() += 1;
        let wanted = match expected[&id] {
            Some("SUCCEEDED") => "generation.completed",
            Some("FAILED") => "generation.failed",
            other => panic!("{id} ended {other:?}"),
        };
        assert_eq!(line["type"], wanted, "{line}");
        assert!(line["webhookId"].as_str().is_some_and(|w| !w.is_empty()));
    }
    assert_eq!(seen.len(), expected.len(), "none missing: {dump:#?}");
    assert!(seen.values().all(|n| *n == 1), "none twice: {dump:#?}");
    let failed_attempts = messages
        .iter()
        .flat_map(|m| &m.attempts)
        .filter(|a| !a.succeeded)
        .count();
    assert!(failed_attempts > 0, "the kills made the service retry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_durable_receiver_refuses_forgeries_keeps_unknown_events_and_answers_503_when_locked() {
    let rig = Rig::start(100.0, true).await;
    let (mock, client, endpoint, url) = (&rig.mock, &rig.client, &rig.endpoint, rig.url());
    let receiver = rig.receiver();
    let mut running = receiver.start().await;
    let http = reqwest::Client::new();
    let now = unix_now();

    let forged = http
        .post(&url)
        .header("webhook-id", "msg_forged")
        .header("webhook-timestamp", now.to_string())
        .header("webhook-signature", "v1,Zm9yZ2Vk")
        .body(r#"{"type":"generation.completed"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 400);

    // An event type this program does not know, signed with the endpoint's secret.
    let body = r#"{"id":"evt_new","type":"invoice.paid","created_at":"2026-11-22T10:15:30.123Z","data":{}}"#;
    let signature = webhook_verify::Webhook::new(endpoint.secret.expose())
        .unwrap()
        .sign("msg_unknown", now, body.as_bytes())
        .unwrap();
    let unknown = http
        .post(&url)
        .header("webhook-id", "msg_unknown")
        .header("webhook-timestamp", now.to_string())
        .header("webhook-signature", signature)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 204, "stored, never refused");
    assert_eq!(running.next_line().await.unwrap(), "invoice.paid ignored");

    // Another connection holds the write lock past the receiver's bound: 503, and
    // the service's retry is stored once the lock is gone.
    let other = webhook_inbox::rusqlite::Connection::open(&rig.db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let created = client
        .generations()
        .create(GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();
    mock.advance_clock(30.0).unwrap();
    mock.deliveries_settled().await;
    other.execute_batch("ROLLBACK").unwrap();
    drop(other);
    deliver_everything(mock).await;
    let attempts: Vec<_> = mock.list_deliveries()[0]
        .attempts
        .iter()
        .map(|a| a.response_status)
        .collect();
    assert_eq!(attempts[0], Some(503), "{attempts:?}");
    assert_eq!(attempts.last(), Some(&Some(204)), "{attempts:?}");
    stop(running).await;

    let dump = receiver.dump().await;
    assert_eq!(dump.len(), 2, "{dump:#?}");
    assert_eq!(dump[0]["webhookId"], "msg_unknown");
    assert_eq!(dump[0]["type"], "invoice.paid");
    assert_eq!(dump[0]["generationId"], Value::Null);
    assert_eq!(dump[1]["type"], "generation.completed");
    assert_eq!(dump[1]["generationId"], created.id.to_string());
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}
