//! Integration tests of the mock server: each rule of the service document,
//! against a server spawned on 127.0.0.1:0 with a manual clock.

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod account;
mod auth;
mod billing;
mod concurrency;
mod contract;
mod control;
mod delivery;
mod deprecated;
mod edge;
mod errors;
mod events;
mod exposure;
mod faults;
mod files;
mod fuzz;
mod generations;
mod injected;
mod judge;
mod lifecycle;
mod meta;
mod modes;
mod operations;
mod parity;
mod races;
mod rate_limits;
mod receiver;
mod security;
mod shutdown;
mod snapshots;
mod standalone;
mod verdict;
mod webhooks;
mod worlds;

use mediagen_mock_server::MockServer;
use mediagen_mock_server::contract::ContractSchemas;
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

/// A started mock, a user with a balance, and typed request helpers.
#[derive(Debug)]
pub struct App {
    pub mock: MockServer,
    pub http: reqwest::Client,
    pub key: String,
    pub user_id: uuid::Uuid,
}

/// A response read whole: status, headers and JSON body (Null when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub bytes: Vec<u8>,
}

impl Reply {
    async fn read(response: Response) -> Self {
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("body").to_vec();
        Self::new(status, headers, bytes)
    }

    fn new(status: StatusCode, headers: reqwest::header::HeaderMap, bytes: Vec<u8>) -> Self {
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Self {
            status,
            headers,
            body,
            bytes,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn code(&self) -> &str {
        self.body["error"]["code"]
            .as_str()
            .unwrap_or("<no error code>")
    }

    /// Asserts the error envelope of the service document, Errors.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        assert_eq!(self.code(), code, "body: {}", self.body);
        let error = &self.body["error"];
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(
            error["requestId"]
                .as_str()
                .is_some_and(|r| r.starts_with("req_"))
        );
        assert!(
            error["timestamp"]
                .as_str()
                .is_some_and(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok())
        );
        assert_conforms("Error", &self.body);
        if code == "VALIDATION_ERROR" {
            // The document: one element of `details.fields[]` per violation.
            assert!(
                error["details"]["fields"]
                    .as_array()
                    .is_some_and(|f| !f.is_empty()),
                "a VALIDATION_ERROR without details.fields: {}",
                self.body
            );
        }
    }
}

/// The contract's schemas, compiled once for all tests.
pub fn schemas() -> &'static ContractSchemas {
    ContractSchemas::shared()
}

/// Asserts that `value` is valid against `components.schemas.<name>` of the contract.
#[track_caller]
pub fn assert_conforms(name: &str, value: &Value) {
    if let Err(fields) = schemas().validate(name, value) {
        panic!("{value} does not conform to {name}: {fields:#?}");
    }
}

impl App {
    pub async fn start() -> Self {
        Self::with(MockServer::start().await).await
    }

    /// A mock without enforced request limits, for tests that send many requests.
    pub async fn unlimited() -> Self {
        Self::with(MockServer::builder().rate_limits(false).start().await).await
    }

    pub async fn with(mock: MockServer) -> Self {
        let user = mock.create_user(1000.0).unwrap();
        Self {
            http: reqwest::Client::new(),
            key: user.api_key,
            user_id: user.user_id,
            mock,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.mock.uri())
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let mut request = self.http.request(method, self.url(path));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        Reply::read(request.send().await.expect("request reaches the mock")).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, Some(&self.key), None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(Method::POST, path, Some(&self.key), Some(body))
            .await
    }

    pub async fn create(&self, body: Value) -> Reply {
        self.post("/v1/generations", body).await
    }

    pub async fn create_with_key(&self, key: &str, idempotency_key: &str, body: Value) -> Reply {
        let request = self
            .http
            .post(self.url("/v1/generations"))
            .bearer_auth(key)
            .header("Idempotency-Key", idempotency_key)
            .json(&body);
        Reply::read(request.send().await.expect("request reaches the mock")).await
    }

    pub async fn control(&self, method: Method, path: &str, body: Value) -> Reply {
        self.send(method, path, None, Some(body)).await
    }

    /// `(available, reserved)` of the test user in roubles.
    pub fn balance(&self) -> (f64, f64) {
        self.mock.balance(self.user_id).expect("the user exists")
    }
}

/// Sends `request` through `app` in process, without a socket, so that a
/// property test can send what no HTTP client would (bytes outside UTF-8 in
/// headers, malformed percent-encoding) and thousands of cases stay quick.
/// `None` when no answer comes within 30 seconds: a hang is a failure too.
pub async fn call(
    app: &axum::Router,
    request: axum::http::Request<axum::body::Body>,
) -> Option<Reply> {
    use tower::ServiceExt;
    let exchange = async {
        let response = app.clone().oneshot(request).await.expect("infallible");
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .expect("a whole body");
        Reply::new(parts.status, parts.headers, bytes.to_vec())
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), exchange)
        .await
        .ok()
}

/// How many cases or rounds a randomized test runs: the environment variable
/// `var` when set (for long runs that give the figures), else `default`, which
/// keeps the suite quick in a debug build.
pub fn scaled(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// A valid create body for the cheapest image model.
/// The contract's example of a legal entity's requisites, which invoices need.
pub fn requisites() -> Value {
    let doc = mediagen_openapi::document().expect("contract");
    doc["paths"]["/v1/billing/requisites"]["put"]["requestBody"]["content"]["application/json"]["example"].clone()
}

pub fn image_request(prompt: &str) -> Value {
    json!({"modelSlug": "flux-schnell", "prompt": prompt, "params": {"aspect_ratio": "16:9"}})
}

/// The `mediagen-mock` binary on a free port of 127.0.0.1 (with a manual clock
/// unless `args` say otherwise), its address and demo key read from what it
/// prints; killed when dropped.
pub struct Binary {
    pub child: std::process::Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    pub key: String,
    /// Kept open: the mock's later lines must not meet a closed pipe.
    pub stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Binary {
    pub fn start<I, S>(args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        Self::start_with_env(args, [])
    }

    /// [`start`](Self::start), with these environment variables set.
    pub fn start_with_env<I, S>(
        args: I,
        env: impl IntoIterator<Item = (&'static str, &'static str)>,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mediagen-mock"))
            .args(["--listen", "127.0.0.1:0", "--clock", "manual"])
            .args(args)
            .env("RUST_LOG", "warn")
            .envs(env)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start mediagen-mock");
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut next = || lines.next().expect("a line").expect("text");
        let base = format!(
            "http://{}",
            next().rsplit("http://").next().expect("the address")
        );
        let key = next().rsplit(' ').next().expect("the demo key").to_owned();
        Self {
            child,
            base,
            key,
            stdout: lines,
        }
    }

    /// The next line it printed after its address and key.
    pub fn next_line(&mut self) -> String {
        self.stdout.next().expect("a line").expect("text")
    }

    /// Sends SIGTERM, as a supervisor stops it.
    pub fn sigterm(&self) {
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
    }

    /// SIGTERM, then its exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        self.sigterm();
        self.child.wait().expect("exit status")
    }
}

impl std::fmt::Debug for Binary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binary")
            .field("pid", &self.child.id())
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
