//! One test binary for the crate; each module is one area of behaviour.

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod compat;
mod ed25519;
mod known_answers;
mod no_panic;
mod rotation;
mod round_trip;
mod secrets;
mod verify;

/// A 24-byte secret, the size Svix issues.
pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
pub const MSG_ID: &str = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
/// A fixed clock, so nothing depends on when the tests run.
pub const NOW: i64 = 1_700_000_000;
pub const BODY: &[u8] = br#"{"type":"task.completed","data":{"id":"task_01"}}"#;

/// Property-test settings: 10,000 cases keep the suite quick in a debug build;
/// `PROPTEST_CASES` asks for a longer run. Rejected cases (`prop_assume!`) are
/// allowed in proportion, so that a long run does not stop at proptest's fixed
/// 1,024 rejects.
pub fn config() -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    proptest::test_runner::Config {
        cases,
        max_global_rejects: cases / 10 + 1024,
        ..proptest::test_runner::Config::default()
    }
}

pub fn webhook() -> webhook_verify::Webhook {
    webhook_verify::Webhook::new(SECRET).expect("the test secret is valid")
}

/// Headers as a sender puts them on the wire.
#[cfg(feature = "http")]
pub fn headers(id: &str, timestamp: &str, signature: &str) -> http::HeaderMap {
    let mut headers = http::HeaderMap::new();
    headers.insert("webhook-id", id.parse().expect("visible ASCII"));
    headers.insert(
        "webhook-timestamp",
        timestamp.parse().expect("visible ASCII"),
    );
    headers.insert(
        "webhook-signature",
        signature.parse().expect("visible ASCII"),
    );
    headers
}

pub fn system_now() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970");
    i64::try_from(since.as_secs()).expect("the clock fits an i64")
}
