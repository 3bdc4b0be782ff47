//! How long `GET /_mock/verdict` takes over a world with 100,000 logged
//! requests: creates with and without a key, reads, retries through injected
//! 503s, so that the verdict has findings of several rules to list. The
//! requests go through the world's router in process (no socket), the verdict
//! is read the same way, and the median of the reads is given.
//!
//! ```text
//! cargo bench -p mediagen-mock-server --bench verdict
//! MEDIAGEN_BENCH_REQUESTS=200000 cargo bench -p mediagen-mock-server --bench verdict
//! ```

mod common;

use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use mediagen_mock_server::config::Retention;
use mediagen_mock_server::{Fault, MockServer};
use serde_json::Value;
use tower::ServiceExt;

const USERS: usize = 200;

async fn send(app: &axum::Router, request: Request<Body>) -> (u16, Vec<u8>) {
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    (status, body.to_vec())
}

fn create(key: &str, idempotency_key: Option<&str>, prompt: &str) -> Request<Body> {
    let mut request = Request::post("/v1/generations")
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json");
    if let Some(k) = idempotency_key {
        request = request.header("idempotency-key", k);
    }
    request
        .body(Body::from(format!(
            "{{\"modelSlug\":\"flux-schnell\",\"prompt\":\"{prompt}\",\"params\":{{\"aspect_ratio\":\"16:9\"}}}}"
        )))
        .expect("a request")
}

fn read(key: &str, id: &str) -> Request<Body> {
    Request::get(format!("/v1/generations/{id}"))
        .header("authorization", format!("Bearer {key}"))
        .body(Body::empty())
        .expect("a request")
}

fn main() {
    let requests: usize = common::env_number("MEDIAGEN_BENCH_REQUESTS", 100_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mock = MockServer::builder()
            .real_clock(1_000_000.0)
            .rate_limits(false)
            .queue_seconds(0.0)
            .config(|c| {
                c.retention = Retention {
                    count: Some(requests),
                    age_secs: None,
                };
            })
            .start()
            .await;
        let keys: Vec<String> = (0..USERS)
            .map(|_| mock.create_user(1e9).unwrap().api_key)
            .collect();
        let app = mock.router();
        mock.inject_fault(
            Fault::error(503, "SERVICE_UNAVAILABLE")
                .on("POST", "/v1/generations")
                .times(u32::try_from(requests / 50).unwrap_or(u32::MAX)),
        )
        .unwrap();
        let started = Instant::now();
        let mut sent = 0;
        let mut last_id: Option<String> = None;
        while sent < requests {
            let key = &keys[sent % USERS];
            let (status, body) = match sent % 4 {
                // A retry with a fresh key after the 503s: create-retry-new-key.
                0 => send(&app, create(key, Some(&format!("k{sent}")), "a lighthouse")).await,
                // Without a key: create-without-key.
                1 => send(&app, create(key, None, &format!("prompt {sent}"))).await,
                _ => match &last_id {
                    Some(id) => send(&app, read(&keys[0], id)).await,
                    None => send(&app, create(&keys[0], Some("first"), "first")).await,
                },
            };
            if status == 202 && sent % USERS == 0 {
                let created: Value = serde_json::from_slice(&body).unwrap_or_default();
                last_id = created["id"].as_str().map(str::to_owned);
            }
            sent += 1;
        }
        let loading = started.elapsed();
        let logged = mock.list_requests().len();

        let mut times = Vec::new();
        let mut size = 0;
        let mut findings = 0;
        for _ in 0..21 {
            let started = Instant::now();
            let (status, body) = send(
                &app,
                Request::get("/_mock/verdict")
                    .body(Body::empty())
                    .expect("a request"),
            )
            .await;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(status, 200);
            size = body.len();
            let verdict: Value = serde_json::from_slice(&body).expect("JSON");
            findings = verdict["findings"].as_array().map_or(0, Vec::len);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{sent} requests sent in {:.1} s ({logged} logged, retention {requests}); \
             GET /_mock/verdict: median {:.3} ms, max {:.3} ms over 21 reads; \
             {findings} findings, {size} bytes",
            loading.as_secs_f64(),
            times[times.len() / 2],
            times[times.len() - 1],
        );
    });
}
