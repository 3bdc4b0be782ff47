//! SIGTERM to the real `mediagen-mock` binary: the request in flight is
//! answered, then the process stops cleanly with exit status 0.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads from `stream` until `needle` has arrived (or the stream ends).
pub async fn read_until(stream: &mut TcpStream, needle: &[u8]) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(needle.len()).any(|w| w == needle) {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    seen
}

#[tokio::test]
async fn sigterm_answers_the_request_in_flight_then_exits_zero() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mediagen-mock"))
        .args(["--listen", "127.0.0.1:0", "--clock", "manual"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mediagen-mock");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = || lines.next().expect("a line").expect("text");
    let address = next()
        .rsplit("http://")
        .next()
        .expect("the address")
        .to_owned();
    let key = next().rsplit(' ').next().expect("the demo key").to_owned();

    // Headers and `Expect: 100-continue`, then nothing: the server answers
    // `100 Continue` once the handler starts reading the body, which proves
    // the request is in flight.
    let body = br#"{"modelSlug":"flux-schnell","prompt":"in flight"}"#;
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    let head = format!(
        "POST /v1/generations HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let interim = read_until(&mut stream, b"\r\n\r\n").await;
    assert!(
        interim.starts_with(b"HTTP/1.1 100"),
        "{}",
        String::from_utf8_lossy(&interim)
    );

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    // The body comes only after the signal; the answer must still come.
    stream.write_all(body).await.expect("the rest of the body");
    let answer = read_until(&mut stream, b"}").await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    assert!(answer.contains("\"status\":\"PENDING\""), "{answer}");

    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("join")
        .expect("exit status");
    assert_eq!(status.code(), Some(0), "clean exit after SIGTERM");
}
