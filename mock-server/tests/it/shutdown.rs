//! SIGTERM to the real `mediagen-mock` binary: the request in flight is
//! answered, then the process stops cleanly with exit status 0.

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
    let mut mock = crate::Binary::start::<_, &str>([]);
    let address = mock.base.trim_start_matches("http://").to_owned();
    let key = mock.key.clone();

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

    mock.sigterm();
    // The body comes only after the signal; the answer must still come.
    stream.write_all(body).await.expect("the rest of the body");
    let answer = read_until(&mut stream, b"}").await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    assert!(answer.contains("\"status\":\"PENDING\""), "{answer}");

    let status = tokio::task::spawn_blocking(move || mock.child.wait())
        .await
        .expect("join")
        .expect("exit status");
    assert_eq!(status.code(), Some(0), "clean exit after SIGTERM");
}
