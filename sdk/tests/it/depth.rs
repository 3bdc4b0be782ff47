//! Per-call options, a client of one's own, tracing spans, the batch as a
//! stream, downloads to bytes, writers and resumed files, and any operation by
//! method and path.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use mediagen::{Client, Error, GenerationRequest, RequestOptions};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{App, InstantClock, TEST_KEY, wire_client, within_deadline};

fn fox(prompt: &str) -> GenerationRequest {
    GenerationRequest::new("flux-schnell", prompt)
}

async fn balance_server(status: u16) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .respond_with(ResponseTemplate::new(status).set_body_json(if status < 400 {
            json!({"availableRub": 10.0})
        } else {
            json!({"error": {"code": "SERVICE_UNAVAILABLE", "message": "m", "requestId": "req_1", "timestamp": "2026-11-23T10:00:00Z"}})
        }))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_call_sends_its_own_header_and_keeps_its_own_attempts() {
    let server = balance_server(503).await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client
        .billing()
        .balance()
        .header("x-correlation-id", "order-17")
        .max_attempts(1)
        .await
        .unwrap_err();

    assert_eq!(err.status().map(|s| s.as_u16()), Some(503));
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "one attempt, as the call asked");
    assert_eq!(requests[0].headers["x-correlation-id"], "order-17");
    // The client's own policy still applies to the next call.
    client.billing().balance().await.unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 6);
}

#[tokio::test]
async fn a_call_times_out_at_its_own_time_out() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client
        .billing()
        .balance()
        .timeout(Duration::from_millis(100))
        .max_attempts(1)
        .await
        .unwrap_err();

    match err {
        Error::Connection { source, .. } => assert!(source.is_timeout(), "{source}"),
        other => panic!("expected a time-out, got {other:?}"),
    }
}

#[tokio::test]
async fn a_header_that_cannot_be_one_fails_before_anything_is_sent() {
    let server = balance_server(200).await;
    let client = wire_client(&server, &InstantClock::new());
    let err = client
        .billing()
        .balance()
        .header("bad name", "x")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidRequest(_)), "{err:?}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn with_options_reaches_every_page_of_a_list() {
    let app = App::start().await;
    for n in 0..3 {
        app.client
            .generations()
            .create(fox(&format!("fox {n}")))
            .await
            .unwrap();
    }
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/generations"))
        .and(header("x-tenant", "acme"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"data": [], "hasMore": false})),
        )
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new())
        .with_options(RequestOptions::new().header("x-tenant", "acme"));
    let all: Vec<_> = client
        .generations()
        .list(mediagen::GenerationFilter::new())
        .collect()
        .await;
    assert!(all.is_empty(), "the header matched: {all:?}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_reqwest_client_of_ones_own_carries_every_request() {
    let server = balance_server(200).await;
    let mut defaults = reqwest::header::HeaderMap::new();
    defaults.insert("x-company-proxy", "yes".parse().unwrap());
    let http = reqwest::Client::builder()
        .default_headers(defaults)
        .build()
        .unwrap();
    let client = Client::builder()
        .base_url(server.uri())
        .api_key(TEST_KEY)
        .http_client(http)
        .build()
        .unwrap();
    client.billing().balance().await.unwrap();
    let request = &server.received_requests().await.unwrap()[0];
    assert_eq!(request.headers["x-company-proxy"], "yes");
    assert!(
        request.headers["authorization"]
            .to_str()
            .unwrap()
            .starts_with("Bearer ")
    );
}

/// A span's or an event's fields, as text.
type FieldList = Vec<(String, String)>;

/// Spans (by id, in the order they began) and events as a subscriber sees
/// them, from every thread of this test binary.
#[derive(Debug, Default, Clone)]
struct Seen {
    spans: Arc<Mutex<Vec<(u64, String, FieldList)>>>,
    events: Arc<Mutex<Vec<FieldList>>>,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl<S> tracing_subscriber::Layer<S> for Seen
where
    S: tracing::Subscriber + for<'l> tracing_subscriber::registry::LookupSpan<'l>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        self.spans.lock().unwrap().push((
            id.into_u64(),
            attrs.metadata().name().to_owned(),
            fields,
        ));
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        // Recorded later (status, request id): kept with its span. An id is
        // reused once its span closed, so the newest span with it is the one.
        let mut spans = self.spans.lock().unwrap();
        if let Some((_, _, fields)) = spans.iter_mut().rev().find(|(n, _, _)| *n == id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        self.events.lock().unwrap().push(fields);
    }
}

impl Seen {
    /// The one subscriber of this test binary, for every thread: a subscriber
    /// of one thread's would miss a callsite another thread met first, whose
    /// interest tracing then caches as "nobody listens".
    fn global() -> &'static Seen {
        static SEEN: std::sync::OnceLock<Seen> = std::sync::OnceLock::new();
        SEEN.get_or_init(|| {
            use tracing_subscriber::layer::SubscriberExt;
            let seen = Seen::default();
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry().with(seen.clone()),
            )
            .expect("the only global subscriber of the test binary");
            seen
        })
    }

    /// The fields of the spans of operation `id` that have `field` = `value`.
    fn operation(&self, id: &str, field: &str, value: &str) -> Vec<(String, String)> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, name, fields)| {
                name == "mediagen.operation"
                    && fields.iter().any(|(k, v)| k == "operation" && v == id)
                    && fields.iter().any(|(k, v)| k == field && v == value)
            })
            .flat_map(|(_, _, fields)| fields.clone())
            .collect()
    }

    /// The events that carry `field` = `value`.
    fn events_with(&self, field: &str, value: &str) -> Vec<FieldList> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|fields| fields.iter().any(|(k, v)| k == field && v == value))
            .cloned()
            .collect()
    }

    fn everything(&self) -> String {
        format!(
            "{:?} {:?}",
            self.spans.lock().unwrap(),
            self.events.lock().unwrap()
        )
    }
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn each_operation_is_a_span_with_its_request_id_and_generation_and_no_secret() {
    let seen = Seen::global();
    let app = App::start().await;
    app.mock
        .inject_fault(
            mediagen_mock_server::Fault::error(503, "SERVICE_UNAVAILABLE")
                .on("POST", "/v1/generations"),
        )
        .unwrap();

    let created = within_deadline(app.clock.run(app.client.generations().create(fox("a fox"))))
        .await
        .unwrap();
    let read = app.client.generations().get(created.id).await.unwrap();

    let id = created.id.to_string();
    let create = seen.operation("create_generation", "generation_id", &id);
    assert_eq!(field(&create, "method"), Some("POST"));
    assert_eq!(field(&create, "path"), Some("/v1/generations"));
    assert_eq!(field(&create, "attempt"), Some("2"));
    assert_eq!(field(&create, "status"), Some("202"));
    assert_eq!(
        field(&create, "generation_id"),
        Some(created.id.to_string().as_str())
    );
    assert!(field(&create, "request_id").is_some_and(|r| r.starts_with("req_")));
    let get = seen.operation("get_generation", "generation_id", &id);
    assert_eq!(field(&get, "path"), Some("/v1/generations/{id}"));
    assert_eq!(
        field(&get, "generation_id"),
        Some(read.id.to_string().as_str())
    );
    let retry = seen
        .events_with("operation", "create_generation")
        .into_iter()
        .find(|e| field(e, "message") == Some("retrying"))
        .expect("the retry is an event");
    assert!(field(&retry, "delay_ms").is_some() && field(&retry, "reason").is_some());
    let secret = app.user.api_key.rsplit('_').next().unwrap().to_owned();
    assert!(
        !seen.everything().contains(&secret),
        "the key is never a field"
    );
}

#[tokio::test]
async fn a_batch_streams_each_outcome_as_it_ends() {
    let app = App::start().await;
    // The slow one first: it ends last.
    let requests = vec![fox("slow mock:delay=120"), fox("quick"), fox("quick too")];
    let outcomes: Vec<_> = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests)
                .stream()
                .collect::<Vec<_>>(),
        ),
    )
    .await;
    let order: Vec<usize> = outcomes.iter().map(|o| o.index).collect();
    assert_eq!(order.last(), Some(&0), "{order:?}");
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
}

#[tokio::test]
async fn fail_fast_starts_nothing_after_a_failure_and_keeps_what_runs() {
    let app = App::start().await;
    let requests = vec![
        fox("mock:fail=content_policy"),
        fox("runs"),
        fox("never"),
        fox("never either"),
    ];
    let results = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests)
                .max_active(2)
                .fail_fast(true),
        ),
    )
    .await;
    assert!(
        matches!(results[0], Err(Error::GenerationFailed(_))),
        "{:?}",
        results[0]
    );
    assert!(results[1].is_ok(), "started before the failure: it ends");
    for never in &results[2..] {
        assert!(matches!(never, Err(Error::NotStarted { .. })), "{never:?}");
    }
    let user = app.mock.get_user(app.user.user_id).unwrap();
    assert_eq!(user.generations, 2, "nothing created after the failure");
}

#[tokio::test]
async fn a_cost_limit_stops_creating_before_the_total_would_pass_it() {
    let app = App::start().await;
    let cost = app
        .client
        .generations()
        .estimate(&fox("x"))
        .await
        .unwrap()
        .cost_rub;
    let requests: Vec<_> = (0..5).map(|n| fox(&format!("fox {n}"))).collect();
    let results = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests)
                .max_active(1)
                .max_total_cost_rub(cost * 2.5),
        ),
    )
    .await;
    let made = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(made, 2, "{results:?}");
    assert!(
        results[2..]
            .iter()
            .all(|r| matches!(r, Err(Error::NotStarted { .. })))
    );
    let (available, reserved) = app.mock.balance(app.user.user_id).unwrap();
    assert!(1000.0 - available - reserved <= cost * 2.5 + 1e-9);
}

async fn finished(app: &App) -> mediagen::Generation {
    within_deadline(
        app.clock
            .run(app.client.generations().create_and_wait(fox("a fox"))),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_result_downloads_to_bytes_to_a_writer_and_into_a_folder_made_for_it() {
    let app = App::start().await;
    let done = finished(&app).await;
    let url = &done.output_urls[0];
    let bytes = app.client.files().download_bytes(url).await.unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    let mut sink = Vec::new();
    let written = app
        .client
        .files()
        .download_to(url, &mut sink)
        .await
        .unwrap();
    assert_eq!((written, sink.as_slice()), (bytes.len() as u64, &bytes[..]));
    let dir = std::env::temp_dir().join(format!("mediagen-depth-{}", uuid::Uuid::new_v4()));
    let target = dir.join("nested/deeper/fox.png");
    let mut seen = Vec::new();
    app.client
        .files()
        .download(url, &target)
        .on_progress(|p| seen.push(p.bytes))
        .await
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
    assert_eq!(seen.last(), Some(&(bytes.len() as u64)));
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn a_partial_download_left_behind_is_resumed_with_a_range() {
    let app = App::start().await;
    let done = finished(&app).await;
    let url = &done.output_urls[0];
    let whole = app.client.files().download_bytes(url).await.unwrap();
    let dir = std::env::temp_dir().join(format!("mediagen-depth-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("fox.png");
    let half = whole.len() / 2;
    std::fs::write(dir.join("fox.png.part"), &whole[..half]).unwrap();
    let mut first = None;
    app.client
        .files()
        .download(url, &target)
        .on_progress(|p| {
            first.get_or_insert(p.bytes);
        })
        .await
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), whole);
    assert!(
        first.is_some_and(|b| b > half as u64),
        "went on from {half}: {first:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A storage server that sends half a body and breaks off, then answers the
/// next request, which must ask for the rest, with `206`.
async fn breaking_server(body: Vec<u8>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/outputs/x/0.bin", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        for round in 0.. {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut head = Vec::new();
            let mut buffer = [0_u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buffer[..n]),
                }
            }
            let head = String::from_utf8_lossy(&head).to_lowercase();
            log.lock().unwrap().push(head.clone());
            let half = body.len() / 2;
            if round == 0 {
                let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.write_all(&body[..half]).await;
                // Breaks off mid-body.
            } else {
                let from: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("range: bytes="))
                    .and_then(|r| r.trim_end_matches('-').parse().ok())
                    .unwrap_or(0);
                let rest = &body[from..];
                let answer = format!(
                    "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes {from}-{}/{}\r\n\r\n",
                    rest.len(),
                    body.len() - 1,
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.write_all(rest).await;
            }
        }
    });
    (url, seen)
}

#[tokio::test]
async fn a_body_that_breaks_off_is_resumed_where_it_broke() {
    let body: Vec<u8> = (0..20_000_u32).map(|n| (n % 251) as u8).collect();
    let (url, seen) = breaking_server(body.clone()).await;
    let server = MockServer::start().await;
    let client = wire_client(&server, &InstantClock::new());

    let bytes = client.files().download_bytes(&url).await.unwrap();

    assert_eq!(bytes, body);
    let heads = seen.lock().unwrap().clone();
    assert_eq!(heads.len(), 2);
    assert!(
        heads[1].contains(&format!("range: bytes={}-", body.len() / 2)),
        "{}",
        heads[1]
    );
}

#[tokio::test]
async fn any_operation_can_be_sent_by_method_and_path_with_the_same_rules() {
    let app = App::start().await;
    let created = app
        .client
        .request(
            reqwest::Method::POST,
            "/v1/generations",
            Some(json!({"modelSlug": "flux-schnell", "prompt": "a fox"})),
        )
        .await
        .unwrap();
    assert_eq!(created.status, 202);
    let posted = app
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert!(posted.idempotency_key.is_some(), "a create carries a key");
    let err = app
        .client
        .request(reqwest::Method::GET, "/v1/generations/not-there", None)
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(404));
    let refused = app
        .client
        .request(
            reqwest::Method::GET,
            "https://elsewhere.example/v1/balance",
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, Error::InvalidRequest(_)),
        "the key stays home"
    );
}

#[cfg(feature = "middleware")]
mod middleware {
    use futures::future::BoxFuture;
    use http::Extensions;
    use reqwest_middleware::{Next, Result};

    use super::*;

    fn sign<'a>(
        mut request: reqwest::Request,
        extensions: &'a mut Extensions,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<reqwest::Response>> {
        request
            .headers_mut()
            .insert("x-signed", "yes".parse().unwrap());
        Box::pin(next.run(request, extensions))
    }

    fn sealed<'a>(
        _: reqwest::Request,
        _: &'a mut Extensions,
        _: Next<'a>,
    ) -> BoxFuture<'a, Result<reqwest::Response>> {
        Box::pin(async {
            Err(reqwest_middleware::Error::middleware(
                std::io::Error::other("vault sealed"),
            ))
        })
    }

    fn through(server: &MockServer, chain: reqwest_middleware::ClientWithMiddleware) -> Client {
        Client::builder()
            .base_url(server.uri())
            .api_key(TEST_KEY)
            .clock(InstantClock::new())
            .middleware_client(chain)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn every_request_goes_through_the_chain() {
        let server = balance_server(200).await;
        let chain = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(sign)
            .build();
        through(&server, chain).billing().balance().await.unwrap();
        assert_eq!(
            server.received_requests().await.unwrap()[0].headers["x-signed"],
            "yes"
        );
    }

    #[tokio::test]
    async fn a_failing_middleware_is_its_own_error_and_repeats_only_what_is_safe() {
        let server = balance_server(200).await;
        let chain = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(sealed)
            .build();
        let client = through(&server, chain);
        let read = client.billing().balance().await.unwrap_err();
        assert!(matches!(read, Error::Middleware { .. }), "{read:?}");
        assert!(read.to_string().contains("vault sealed"));
        let topup = client.billing().topup(100.0, None).await.unwrap_err();
        assert!(
            matches!(&topup, Error::OutcomeUnknown { source, .. } if matches!(**source, Error::Middleware { .. })),
            "{topup:?}"
        );
    }
}
