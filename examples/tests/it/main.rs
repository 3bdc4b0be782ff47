//! Each example program run for real against a mock server, the CI-test example, and
//! end-to-end tests with every part of the toolkit at once.

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod ci_example;
mod durable;
mod e2e;
mod programs;

use std::io::BufRead;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use mediagen_mock_server::MockServer;
use tokio::sync::mpsc;

/// Longest a program may run or stay silent: a safety net against a hang, never a
/// way to wait for an outcome.
const PATIENCE: Duration = Duration::from_secs(60);

/// An example program configured, like the SDK, from `MEDIAGEN_BASE_URL` (the mock)
/// and `MEDIAGEN_API_KEY`, and nothing else from this environment.
pub fn program(name: &str, mock: &MockServer, key: &str) -> Command {
    let path = match name {
        "quickstart" => env!("CARGO_BIN_EXE_quickstart"),
        "batch" => env!("CARGO_BIN_EXE_batch"),
        "webhook_receiver" => env!("CARGO_BIN_EXE_webhook_receiver"),
        "rate_limit_poller" => env!("CARGO_BIN_EXE_rate_limit_poller"),
        other => panic!("no example {other}"),
    };
    let mut cmd = Command::new(path);
    cmd.env_clear()
        .env("MEDIAGEN_BASE_URL", mock.uri())
        .env("MEDIAGEN_API_KEY", key);
    cmd
}

/// Runs a program to its end without blocking the mock server's runtime.
pub async fn run(cmd: impl Into<assert_cmd::Command>) -> Output {
    let mut cmd = cmd.into();
    cmd.timeout(PATIENCE);
    tokio::task::spawn_blocking(move || cmd.output().expect("run the example"))
        .await
        .expect("the example's thread")
}

/// A program running in the background, its stdout read line by line as it prints,
/// so that a test can act on what it has done so far. Killed on drop.
#[derive(Debug)]
pub struct Running {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
}

impl Running {
    pub fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the example");
        let stdout = child.stdout.take().expect("a piped stdout");
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// The program's process id, to send it a signal.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next line printed; `None` once the program has closed its stdout.
    pub async fn next_line(&mut self) -> Option<String> {
        tokio::time::timeout(PATIENCE, self.lines.recv())
            .await
            .expect("the example printed nothing for a minute")
    }

    /// Lines up to and including the first that `found` accepts.
    pub async fn lines_until(&mut self, found: impl Fn(&str) -> bool) -> Vec<String> {
        let mut lines = Vec::new();
        while let Some(line) = self.next_line().await {
            let done = found(&line);
            lines.push(line);
            if done {
                return lines;
            }
        }
        panic!("the example ended without the line awaited: {lines:#?}");
    }

    /// The remaining lines, once the program has ended successfully.
    pub async fn finish(mut self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Some(line) = self.next_line().await {
            lines.push(line);
        }
        let status = self.child.wait().expect("the example's exit status");
        assert!(status.success(), "the example failed: {lines:#?}");
        lines
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Fails harmlessly when the program has already ended.
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// A mock whose webhook endpoints may point at this machine, where the tests'
/// receivers listen.
pub async fn mock_for_webhooks() -> MockServer {
    MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await
}
