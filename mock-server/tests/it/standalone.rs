//! The binary where it is installed rather than built: a minimal image with no
//! CA certificates, a container's health check, a stop with a live journal open.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use reqwest::Method;
use serde_json::json;

use crate::Binary;
use crate::receiver::Receiver;
use crate::shutdown::read_until;
use crate::snapshots::call;

/// rustls-native-certs reads only these when they are set: a system without
/// any CA certificate, as in an image `FROM scratch`.
const NO_CA_STORE: [(&str, &str); 2] = [
    ("SSL_CERT_FILE", "/nonexistent/ca.pem"),
    ("SSL_CERT_DIR", "/nonexistent/certs"),
];

#[tokio::test]
async fn without_a_ca_store_it_starts_and_delivers() {
    let receiver = Receiver::start().await;
    let mock = Binary::start_with_env(["--allow-private-webhooks"], NO_CA_STORE);
    let endpoint = call(
        &mock,
        Method::POST,
        "/v1/webhook-endpoints",
        Some(json!({"url": receiver.url})),
    )
    .await;
    receiver.set_secret(endpoint["secret"].as_str().expect("secret"));
    let id = endpoint["id"].as_str().expect("id");
    call(
        &mock,
        Method::POST,
        &format!("/v1/webhook-endpoints/{id}/test"),
        None,
    )
    .await;
    let received = receiver.wait_for(1).await;
    assert_eq!(received.len(), 1);
}

fn health(listen: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mediagen-mock"))
        .args(["health", "--listen", listen])
        .env_remove("MEDIAGEN_MOCK_LISTEN")
        .stdin(Stdio::null())
        .output()
        .expect("run mediagen-mock health")
}

#[test]
fn the_health_check_passes_on_a_running_mock_and_fails_where_none_answers() {
    let mut mock = Binary::start::<_, &str>([]);
    let address = mock.base.trim_start_matches("http://").to_owned();
    let passed = health(&address);
    assert!(
        passed.status.success(),
        "{}",
        String::from_utf8_lossy(&passed.stderr)
    );
    // A wildcard address, as in the image (0.0.0.0:8080), is asked on loopback.
    let port = address.rsplit(':').next().expect("a port");
    assert!(health(&format!("0.0.0.0:{port}")).status.success());
    assert_eq!(mock.terminate().code(), Some(0));

    let failed = health(&address);
    assert_eq!(failed.status.code(), Some(1));
    let said = String::from_utf8_lossy(&failed.stderr);
    assert!(said.contains(&format!("http://{address}/health")), "{said}");
}

#[tokio::test]
async fn sigterm_with_the_live_journal_open_stops_within_the_grace_and_saves_the_state() {
    let dir = std::env::temp_dir().join(format!("mediagen-grace-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let state = dir.join("state.json");
    let mut mock = Binary::start([OsStr::new("--state"), state.as_os_str()]);
    let fresh = mock.next_line();
    assert!(fresh.starts_with("state file"), "{fresh}");

    // A dashboard's stream: it never ends by itself.
    let address = mock.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    let head = format!("GET /_mock/events HTTP/1.1\r\nHost: {address}\r\n\r\n");
    tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes())
        .await
        .expect("write");
    let answer = read_until(&mut stream, b"\r\n\r\n").await;
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    mock.sigterm();
    // A bound on a process that would otherwise wait for the stream for ever.
    let waited = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        tokio::task::spawn_blocking(move || {
            let status = mock.child.wait().expect("exit status");
            let rest: Vec<String> = std::iter::from_fn(|| mock.stdout.next())
                .map_while(Result::ok)
                .collect();
            (status, rest)
        }),
    )
    .await
    .expect("the mock stops with the stream still open")
    .expect("join");
    let (status, said) = waited;
    assert_eq!(status.code(), Some(0));
    assert!(
        said.iter()
            .any(|l| l.starts_with("stopping: requests still open")),
        "{said:?}"
    );
    assert!(
        said.contains(&format!("state saved to {}", state.display())),
        "{said:?}"
    );
    assert!(state.exists());
    std::fs::remove_dir_all(&dir).ok();
}
