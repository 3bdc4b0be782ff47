//! Each example program run for real against a mock server, the CI-test example, and
//! end-to-end tests with every part of the toolkit at once.

mod ci_example;
mod e2e;
mod programs;

use std::process::Output;

use assert_cmd::Command;
use mediagen_mock_server::MockServer;

/// An example program with the mock's URL and `key` in its environment.
pub fn program(name: &str, mock: &MockServer, key: &str) -> Command {
    let path = match name {
        "quickstart" => env!("CARGO_BIN_EXE_quickstart"),
        "batch" => env!("CARGO_BIN_EXE_batch"),
        "rate_limit_poller" => env!("CARGO_BIN_EXE_rate_limit_poller"),
        other => panic!("no example {other}"),
    };
    let mut cmd = Command::new(path);
    cmd.env_clear()
        .env("MEDIAGEN_BASE_URL", mock.uri())
        .env("MEDIAGEN_API_KEY", key);
    cmd
}

/// Runs a program without blocking the mock server's runtime.
pub async fn run(mut cmd: Command) -> Output {
    let output = tokio::task::spawn_blocking(move || cmd.output().expect("run the example"))
        .await
        .expect("the example's thread");
    assert!(
        output.status.success(),
        "the example failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A port on 127.0.0.1 for a receiver, and the URL of its `/webhooks`: the endpoint
/// must exist (and give its secret) before the receiver can verify.
pub async fn bind_receiver() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/webhooks",
        listener.local_addr().expect("address")
    );
    (listener, url)
}

/// Serves `mediagen_examples::receiver` verifying with `secret`; the events it hands over.
pub fn serve_receiver(
    listener: tokio::net::TcpListener,
    secret: &str,
) -> tokio::sync::mpsc::UnboundedReceiver<mediagen_examples::receiver::Event> {
    let (events, queue) = tokio::sync::mpsc::unbounded_channel();
    let app = mediagen_examples::receiver::router(secret, events).expect("a valid secret");
    tokio::spawn(async move { axum::serve(listener, app).await });
    queue
}
