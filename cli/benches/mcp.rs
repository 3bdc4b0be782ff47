//! What a tool call of `mediagen mcp` costs over the SDK call it makes: the median
//! round trip of `get_balance` through the server (JSON-RPC over the stdio of a
//! child process, one request to the mock behind it) beside the median of
//! `client.billing().balance()` straight to the same mock, in the same run.
//!
//! ```text
//! cargo bench -p mediagen-cli --bench mcp
//! ```

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const CALLS: usize = 500;
const WARM_UP: usize = 50;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    // Limits off, and a clock a thousand times faster, whose windows the server's pace
    // sees pass in milliseconds: otherwise the calls would wait for the service's 60 a
    // minute, and measure the pace instead of the call.
    let mock = mediagen_mock_server::MockServer::builder()
        .rate_limits(false)
        .real_clock(1000.0)
        .start()
        .await;
    let user = mock.create_user(1000.0).expect("a user");
    let client = mediagen::Client::builder()
        .base_url(mock.uri())
        .api_key(&user.api_key)
        .pacing(false)
        .build()
        .expect("a client");

    let mut direct = Vec::with_capacity(CALLS);
    for n in 0..WARM_UP + CALLS {
        let started = Instant::now();
        client.billing().balance().await.expect("the balance");
        if n >= WARM_UP {
            direct.push(started.elapsed());
        }
    }

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mediagen"))
        .env_clear()
        .env("MEDIAGEN_BASE_URL", mock.uri())
        .env("MEDIAGEN_API_KEY", &user.api_key)
        .env("MEDIAGEN_SHARED_PACE", "off")
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mediagen mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut round_trip = async |message: Value| {
        let mut line = message.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.expect("write");
        if message.get("id").is_none() {
            return Value::Null;
        }
        loop {
            let line = stdout.next_line().await.expect("read").expect("a line");
            let answer: Value = serde_json::from_str(&line).expect("JSON");
            if answer.get("id") == message.get("id") {
                return answer;
            }
        }
    };
    round_trip(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}),
    )
    .await;
    round_trip(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let mut tool = Vec::with_capacity(CALLS);
    for n in 0..WARM_UP + CALLS {
        let started = Instant::now();
        let answer = round_trip(
            json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
            "params": {"name": "get_balance", "arguments": {}}}),
        )
        .await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        if n >= WARM_UP {
            tool.push(started.elapsed());
        }
    }

    let (direct, tool) = (median(direct), median(tool));
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("get_balance, median of {CALLS} calls after {WARM_UP} to warm up");
    println!(
        "  SDK: client.billing().balance()        {:.1} µs",
        us(direct)
    );
    println!(
        "  MCP: tools/call get_balance over stdio {:.1} µs",
        us(tool)
    );
    println!(
        "RESULT mcp direct_us={:.1} tool_us={:.1} overhead_us={:.1} ratio={:.2}",
        us(direct),
        us(tool),
        us(tool) - us(direct),
        tool.as_secs_f64() / direct.as_secs_f64()
    );
}
