//! The `mediagen` binary, run for real against a mock server started by each test.

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod api;
mod areas;
mod batch;
mod batch_hooks;
mod conventions;
mod documented;
mod exit_codes;
mod generate;
mod golden;
mod jq;
mod jsonl;
mod judge;
mod mcp;
mod mock_logs;
mod newcomer;
mod profiles;
mod promises;
mod shared_pace;
mod verbose;
mod webhooks;

use std::path::PathBuf;
use std::process::{Output, Stdio};

use assert_cmd::Command;
use mediagen_mock_server::MockServer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr};

/// A mock server with a user of its own, and the command pointed at both.
#[derive(Debug)]
pub struct Setup {
    pub mock: MockServer,
    pub key: String,
    pub user: mediagen_mock_server::UserId,
}

impl Setup {
    /// A mock with a manual clock: generations stay where the test leaves them.
    pub async fn new() -> Self {
        Self::with(MockServer::start().await, 1000.0)
    }

    /// A mock whose clock runs 50 times faster than real time, for waits that end.
    pub async fn fast() -> Self {
        Self::with(MockServer::builder().real_clock(50.0).start().await, 1000.0)
    }

    pub fn with(mock: MockServer, balance_rub: f64) -> Self {
        let user = mock.create_user(balance_rub).unwrap();
        Self {
            key: user.api_key,
            user: user.user_id,
            mock,
        }
    }
}

/// `mediagen` is held to the mock's verdict: a test whose world ends with a
/// violation of the service's rules for clients fails, through whatever faults
/// it injected. A test that breaks a rule on purpose says so with
/// `mock.reset_verdict()` after it.
impl Drop for Setup {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.mock.assert_clean();
        }
    }
}

impl Setup {
    /// `mediagen` with an empty environment but the mock's URL and the user's key.
    pub fn cmd(&self, args: &[&str]) -> Command {
        Command::from_std(self.process(args))
    }

    /// [`cmd`](Self::cmd) to run in the [`Background`].
    pub fn process(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = process(args);
        cmd.env("MEDIAGEN_BASE_URL", self.mock.uri())
            .env("MEDIAGEN_API_KEY", &self.key);
        cmd
    }

    /// Runs the command and parses its stdout as JSON, asserting success.
    pub async fn json(&self, args: &[&str]) -> Value {
        let output = run(self.cmd(args)).await;
        assert!(
            output.status.success(),
            "{args:?} failed: {}",
            text(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
            panic!(
                "{args:?}: stdout is not JSON ({err}): {}",
                text(&output.stdout)
            )
        })
    }

    /// A client of the SDK as the same user, to arrange and check state.
    pub fn client(&self) -> mediagen::Client {
        mediagen::Client::new(self.mock.uri(), &self.key).expect("a client of the mock")
    }

    /// A generation of flux-schnell started through the SDK, to arrange state.
    pub async fn created(&self, prompt: &str) -> mediagen::CreatedGeneration {
        self.client()
            .generations()
            .create(mediagen::GenerationRequest::new("flux-schnell", prompt))
            .await
            .expect("the mock accepts the generation")
    }
}

/// The key sent to scripted services (wiremock); its secret part is `secretvalue`.
pub const SCRIPTED_KEY: &str = "mg_live_scripted_secretvalue";

/// `mediagen` with an empty environment but a scripted service's URL and [`SCRIPTED_KEY`].
pub fn scripted(server: &wiremock::MockServer, args: &[&str]) -> Command {
    Command::from_std(scripted_process(server, args))
}

/// [`scripted`] to run in the [`Background`].
pub fn scripted_process(server: &wiremock::MockServer, args: &[&str]) -> std::process::Command {
    let mut cmd = process(args);
    cmd.env("MEDIAGEN_BASE_URL", server.uri())
        .env("MEDIAGEN_API_KEY", SCRIPTED_KEY);
    cmd
}

/// `mediagen` with nothing in its environment: no key, no config, no colour settings.
pub fn bare(args: &[&str]) -> Command {
    Command::from_std(process(args))
}

/// [`bare`] to run in the [`Background`].
pub fn process(args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mediagen"));
    cmd.env_clear().args(args);
    cmd
}

/// Runs a command without blocking the mock server's runtime.
pub async fn run(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("run mediagen"))
        .await
        .expect("the command's thread")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The error envelope a failed command printed on stdout.
pub fn envelope(output: &Output) -> Value {
    let value: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {}", text(&output.stdout)));
    value["error"].clone()
}

/// A command running in the background, with its stderr read line by line.
#[derive(Debug)]
pub struct Background {
    pub child: Child,
    pub stderr: Lines<BufReader<ChildStderr>>,
}

impl Background {
    pub fn spawn(cmd: std::process::Command) -> Self {
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn mediagen");
        let stderr = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        Self { child, stderr }
    }

    /// Reads stderr until a line containing `needle`, and returns that line.
    pub async fn wait_for(&mut self, needle: &str) -> String {
        while let Some(line) = self.stderr.next_line().await.expect("read stderr") {
            if line.contains(needle) {
                return line;
            }
        }
        panic!("stderr ended without a line containing {needle:?}");
    }

    pub fn signal(&self, name: &str) {
        let pid = self.child.id().expect("a running child").to_string();
        let status = std::process::Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .expect("run kill");
        assert!(status.success());
    }

    pub async fn finish(self) -> Output {
        self.child
            .wait_with_output()
            .await
            .expect("wait for mediagen")
    }
}

/// A fresh directory under the target directory, removed first if a run left it.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-tests")
        .join(name);
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}
