//! `mediagen mock logs`: a running mock's live journal in the terminal.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mediagen_mock_server::MockServer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::golden::check;
use crate::{Setup, process, run, text};

/// The human lines with what changes from run to run (times, ids) replaced.
fn steady(lines: &str) -> String {
    let uuid = |c: char| c.is_ascii_hexdigit() || c == '-';
    lines
        .lines()
        .map(|line| {
            // `HH:MM:SS.mmm  ` first: the mock's clock.
            let mut line = format!("<time>{}", line.get(12..).unwrap_or_default());
            for prefix in ["user ", "message ", "generation ", "req_"] {
                while let Some(at) = line.find(prefix) {
                    let start = at + prefix.len();
                    let end = line[start..]
                        .find(|c: char| !uuid(c) && !c.is_ascii_alphanumeric())
                        .map_or(line.len(), |n| start + n);
                    if line[start..end].starts_with('<') || start == end {
                        break;
                    }
                    line.replace_range(start..end, "<id>");
                }
            }
            line + "\n"
        })
        .collect()
}

#[tokio::test]
async fn the_history_is_a_line_per_event_for_people_and_ends() {
    let setup = Setup::new().await;
    let created = setup.created("a lighthouse at dusk").await;
    setup.mock.advance_clock(60.0).unwrap();
    let output = run(setup.cmd(&["mock", "logs", "--format", "human", "--color", "never"])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    check("mock-logs-history.txt", &steady(&text(&output.stdout)));
    // Scripts get the events themselves, and filters pick them.
    let output = run(setup.cmd(&[
        "mock",
        "logs",
        "--kind",
        "generation",
        "--generation",
        &created.id.to_string(),
        "--jq",
        ".change",
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "created\nstarted\nended\n");
}

#[tokio::test]
async fn a_wrong_token_is_refused_with_the_way_to_pass_one() {
    let mock = MockServer::builder()
        .config(|c| c.admin_token = Some("s3cret".into()))
        .start()
        .await;
    let mut cmd = process(&["mock", "logs", "--token", "wrong"]);
    cmd.env("MEDIAGEN_BASE_URL", mock.uri());
    let output = run(assert_cmd::Command::from_std(cmd)).await;
    assert_eq!(output.status.code(), Some(3));
    assert!(
        text(&output.stderr).contains("--token"),
        "{}",
        text(&output.stderr)
    );
}

/// A TCP proxy in front of the mock whose connections can all be cut at once,
/// as a network does; it goes on accepting new ones.
async fn cutting_proxy(to: std::net::SocketAddr) -> (String, watch::Sender<u32>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (cut, cuts) = watch::channel(0u32);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let mut cuts = cuts.clone();
            cuts.borrow_and_update();
            tokio::spawn(async move {
                let Ok(mut outbound) = TcpStream::connect(to).await else {
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = cuts.changed() => {}
                }
            });
        }
    });
    (url, cut)
}

#[tokio::test]
async fn following_through_a_lost_connection_loses_and_repeats_no_event() {
    let mock = MockServer::builder()
        .config(|c| c.rate_limits = false)
        .start()
        .await;
    let addr: std::net::SocketAddr = mock.uri().trim_start_matches("http://").parse().unwrap();
    let (proxy, cut) = cutting_proxy(addr).await;
    let mut cmd =
        tokio::process::Command::from(process(&["mock", "logs", "--follow", "--format", "jsonl"]));
    cmd.env("MEDIAGEN_BASE_URL", &proxy)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();

    let http = reqwest::Client::new();
    let key = mock.demo_api_key().to_owned();
    let balance = format!("{}/v1/billing/balance", mock.uri());
    // Requests until the reader shows one: then it is connected.
    let first: Value = loop {
        http.get(&balance).bearer_auth(&key).send().await.unwrap();
        if let Ok(Ok(Some(line))) =
            tokio::time::timeout(std::time::Duration::from_millis(100), lines.next_line()).await
        {
            break serde_json::from_str(&line).unwrap();
        }
    };

    // 2,000 requests, 16 at a time, with every connection of the reader cut halfway.
    const REQUESTS: usize = 2000;
    let sent = Arc::new(AtomicUsize::new(0));
    let started = std::time::Instant::now();
    let senders: Vec<_> = (0..16)
        .map(|_| {
            let (http, balance, key, sent, cut) = (
                http.clone(),
                balance.clone(),
                key.clone(),
                sent.clone(),
                cut.clone(),
            );
            tokio::spawn(async move {
                loop {
                    let n = sent.fetch_add(1, Ordering::Relaxed);
                    if n >= REQUESTS {
                        break;
                    }
                    if n == REQUESTS / 2 {
                        cut.send_modify(|cuts| *cuts += 1);
                    }
                    http.get(&balance).bearer_auth(&key).send().await.unwrap();
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
    let rate = REQUESTS as f64 / started.elapsed().as_secs_f64();
    // The last request of all, which the reader must reach.
    let marker = format!("{}/v1/models", mock.uri());
    http.get(&marker).send().await.unwrap();

    let mut seqs = vec![first["seq"].as_u64().unwrap()];
    let mut balances = 1;
    while let Some(line) = lines.next_line().await.unwrap() {
        let event: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(event["type"], "lagged", "the reader fell behind: {line}");
        seqs.push(event["seq"].as_u64().unwrap());
        if event["path"] == "/v1/models" {
            break;
        }
        balances += usize::from(event["path"] == "/v1/billing/balance");
    }
    child.kill().await.unwrap();
    let stderr = text(&child.wait_with_output().await.unwrap().stderr);
    assert!(
        stderr.contains("connection lost"),
        "the cut was seen: {stderr}"
    );
    let unique: BTreeSet<u64> = seqs.iter().copied().collect();
    assert_eq!(unique.len(), seqs.len(), "no event twice");
    let (low, high) = (seqs[0], *seqs.last().unwrap());
    assert_eq!(
        seqs.len() as u64,
        high - low + 1,
        "no event lost between {low} and {high}"
    );
    assert!(
        balances > REQUESTS,
        "every request of the run was printed: {balances}"
    );
    eprintln!("{REQUESTS} requests at {rate:.0}/s through a cut connection: every event once");
}

#[tokio::test]
async fn a_worlds_journal_is_read_at_its_base_url_with_its_control_token() {
    let mock = MockServer::builder()
        .config(|c| c.admin_token = Some("root-secret".into()))
        .start()
        .await;
    let http = reqwest::Client::new();
    let world: Value = http
        .post(format!("{}/_mock/worlds", mock.uri()))
        .bearer_auth("root-secret")
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (base_url, token) = (
        world["baseUrl"].as_str().unwrap(),
        world["controlToken"].as_str().unwrap(),
    );
    let created = mediagen::Client::new(base_url, world["demoApiKey"].as_str().unwrap())
        .unwrap()
        .generations()
        .create(mediagen::GenerationRequest::new("flux-schnell", "a fox"))
        .await
        .unwrap();
    let logs = |base: &str, token: &str| {
        let mut cmd = process(&[
            "mock",
            "logs",
            "--token",
            token,
            "--jq",
            "select(.type == \"generation\") | .generationId",
        ]);
        cmd.env("MEDIAGEN_BASE_URL", base);
        run(assert_cmd::Command::from_std(cmd))
    };
    let output = logs(base_url, token).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim(), created.id.to_string());
    // The world's token opens its own journal only.
    let output = logs(&mock.uri(), token).await;
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
}

#[tokio::test]
async fn following_prints_a_line_per_request_for_people() {
    let setup = Setup::new().await;
    let mut follow = crate::Background::spawn(setup.process(&[
        "mock", "logs", "--follow", "--format", "human", "--color", "never", "--kind", "request",
    ]));
    let mut stdout = BufReader::new(follow.child.stdout.take().unwrap()).lines();
    let client = setup.client();
    // Until the reader shows a request, it may not be connected yet.
    loop {
        client.billing().balance().await.unwrap();
        if let Ok(Ok(Some(_))) =
            tokio::time::timeout(std::time::Duration::from_millis(100), stdout.next_line()).await
        {
            break;
        }
    }
    let missing = uuid::Uuid::from_u128(7);
    client.generations().get(missing).await.unwrap_err();
    client.billing().balance().await.unwrap();
    let mut lines = String::new();
    for _ in 0..2 {
        let line = stdout.next_line().await.unwrap().unwrap();
        // The latency varies from run to run.
        let line = line
            .split(' ')
            .map(|word| if word.ends_with("ms") { "<ms>" } else { word })
            .collect::<Vec<_>>()
            .join(" ");
        lines.push_str(&line);
        lines.push('\n');
    }
    follow.child.kill().await.unwrap();
    check("mock-logs-requests.txt", &steady(&lines));
}

#[tokio::test]
async fn a_mock_that_is_not_there_is_named_once_with_the_way_to_start_one() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let journal: &[&str] = &["mock", "logs"];
    let trigger: &[&str] = &[
        "webhooks",
        "trigger",
        "generation.completed",
        "--endpoint",
        "ep_1",
    ];
    for args in [journal, trigger] {
        let mut cmd = process(args);
        cmd.env("MEDIAGEN_BASE_URL", &closed);
        let output = run(assert_cmd::Command::from_std(cmd)).await;
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(&closed).count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("is a mock running there?"),
            "{args:?}: {stderr}"
        );
    }
}
