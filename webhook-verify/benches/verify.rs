//! Verifying a 1 KiB and a 64 KiB webhook: this crate, the `standardwebhooks` crate
//! it replaces, and the floor both stand on, one HMAC-SHA256 of the signed content.
//!
//! `cargo bench -p webhook-verify --bench verify`

// A benchmark exports nothing.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hmac::{Hmac, Mac as _};
use http::HeaderMap;
use sha2::Sha256;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const MSG_ID: &str = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";

/// A JSON-looking body of exactly `len` bytes.
fn payload(len: usize) -> Vec<u8> {
    let head = br#"{"type":"task.completed","data":{"id":"task_01","output":""#;
    let tail = br#""}}"#;
    let mut body = head.to_vec();
    body.resize(len - tail.len(), b'x');
    body.extend_from_slice(tail);
    body
}

fn now() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970");
    i64::try_from(since.as_secs()).expect("the clock fits an i64")
}

/// Fresh headers for each benchmark, so the timestamp stays within the 5-minute
/// tolerance however long the earlier ones ran.
fn signed_headers(body: &[u8]) -> (HeaderMap, i64) {
    let wh = webhook_verify::Webhook::new(SECRET).expect("the secret is valid");
    let timestamp = now();
    let signature = wh.sign(MSG_ID, timestamp, body).expect("an HMAC key signs");
    let mut headers = HeaderMap::new();
    headers.insert("webhook-id", MSG_ID.parse().expect("ASCII"));
    headers.insert("webhook-timestamp", timestamp.into());
    headers.insert("webhook-signature", signature.parse().expect("ASCII"));
    (headers, timestamp)
}

/// One group per body size, `verify_<size>`, each with the same three ids, which
/// `scripts/bench.sh` reads back.
fn verify_size(c: &mut Criterion, group_name: &str, len: usize) {
    let body = payload(len);
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Bytes(len as u64));

    let ours = webhook_verify::Webhook::new(SECRET).expect("the secret is valid");
    let (headers, _) = signed_headers(&body);
    group.bench_function("webhook-verify", |b| {
        b.iter(|| {
            let verified = ours.verify(black_box(&body), black_box(&headers));
            assert!(verified.is_ok());
        });
    });

    // The floor: the MAC alone, over the content already joined, with a key set up
    // per message as a straightforward implementation would. It runs right after
    // this crate's benchmark, so that the two figures the ratio compares are taken
    // as close together as a shared machine allows.
    let key = STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .expect("the secret is base64");
    let (_, timestamp) = signed_headers(&body);
    let mut content = format!("{MSG_ID}.{timestamp}.").into_bytes();
    content.extend_from_slice(&body);
    group.bench_function("bare-hmac-sha256", |b| {
        b.iter(|| {
            let mut mac = Hmac::<Sha256>::new_from_slice(black_box(&key)).expect("any key length");
            mac.update(black_box(&content));
            black_box(mac.finalize().into_bytes())
        });
    });

    let theirs = standardwebhooks::Webhook::new(SECRET).expect("the secret is valid");
    let (headers, _) = signed_headers(&body);
    group.bench_function("standardwebhooks-1.0.1", |b| {
        b.iter(|| {
            let verified = theirs.verify(black_box(&body), black_box(&headers));
            assert!(verified.is_ok());
        });
    });

    group.finish();
}

fn verify_1kib(c: &mut Criterion) {
    verify_size(c, "verify_1KiB", 1024);
}

fn verify_64kib(c: &mut Criterion) {
    verify_size(c, "verify_64KiB", 64 * 1024);
}

criterion_group!(benches, verify_1kib, verify_64kib);
criterion_main!(benches);
