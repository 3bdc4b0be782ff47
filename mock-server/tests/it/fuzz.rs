//! Hostile input through the whole app: any method, path, query string,
//! header and body. Whatever a client sends, the mock answers below 500 with
//! every error in the service's envelope, and the ledger holds afterwards.

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri};
use mediagen_mock_server::MockServer;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

use crate::{App, Reply, call, scaled, schemas};

/// The control API's token in these tests: set, so that both sides of the
/// guard are exercised.
pub const ADMIN_TOKEN: &str = "fuzz-admin-token";

/// Names the contract's examples and these tests put in webhook URLs. Pinned
/// to loopback, so that a delivery to them never leaves 127.0.0.1.
const EXAMPLE_HOSTS: &[&str] = &["example.com", "new.example.com"];

/// Resources of the test user that requests can name by id.
#[derive(Debug, Clone)]
pub struct Ids {
    pub generation: String,
    pub endpoint: String,
    pub file: String,
    pub invoice: String,
    pub message: String,
    pub user: String,
}

impl Ids {
    fn all(&self) -> Vec<String> {
        vec![
            self.generation.clone(),
            self.endpoint.clone(),
            self.file.clone(),
            self.invoice.clone(),
            self.message.clone(),
            self.user.clone(),
        ]
    }
}

/// A mock with one of everything for the test user, and its router for
/// sending requests in process.
#[derive(Debug)]
pub struct Seeded {
    pub app: App,
    pub router: axum::Router,
    pub ids: Ids,
}

/// The example body of an operation's request in the contract.
pub fn example_body(doc: &Value, method: &str, path: &str) -> Option<Value> {
    let content = doc["paths"][path][method]
        .pointer("/requestBody/content/application~1json")?
        .clone();
    match content.get("example") {
        Some(example) => Some(example.clone()),
        None => content["examples"]
            .as_object()?
            .values()
            .next()
            .map(|e| e["value"].clone()),
    }
}

impl Seeded {
    pub async fn start() -> Self {
        let mock = MockServer::builder()
            .rate_limits(false)
            .config(|c| {
                c.allow_private_webhooks = true;
                c.admin_token = Some(ADMIN_TOKEN.into());
            })
            .start()
            .await;
        for host in EXAMPLE_HOSTS {
            mock.set_dns(host, vec![std::net::Ipv4Addr::LOCALHOST.into()])
                .unwrap();
        }
        // Unresolvable, by a pinned empty answer rather than a real DNS query.
        mock.set_dns("bad.invalid", Vec::new()).unwrap();
        let router = mock.router();
        let app = App::with(mock).await;
        let doc = mediagen_openapi::document().expect("contract");
        let created = |reply: Reply, field: &str| -> String {
            assert!(reply.status.is_success(), "seeding: {}", reply.body);
            reply.body[field].as_str().expect("an id").to_owned()
        };
        let generation = created(app.create(crate::image_request("seed")).await, "id");
        let endpoint = created(
            app.post(
                "/v1/webhook-endpoints",
                json!({"url": "https://example.com/hooks"}),
            )
            .await,
            "id",
        );
        let file = created(
            app.post(
                "/v1/files",
                json!({"filename": "a.png", "contentType": "image/png", "sizeBytes": 10}),
            )
            .await,
            "fileId",
        );
        let requisites = example_body(&doc, "put", "/v1/billing/requisites").expect("example");
        let reply = app
            .send(
                Method::PUT,
                "/v1/billing/requisites",
                Some(&app.key),
                Some(requisites),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let invoice = created(
            app.post("/v1/billing/invoices", json!({"amountRub": 1000}))
                .await,
            "id",
        );
        let paid = app
            .send(
                Method::POST,
                &format!("/_mock/invoices/{invoice}/pay"),
                Some(ADMIN_TOKEN),
                Some(json!({})),
            )
            .await;
        assert_eq!(paid.status, 200, "{}", paid.body);
        let message = created(
            app.post(&format!("/v1/webhook-endpoints/{endpoint}/test"), json!({}))
                .await,
            "messageId",
        );
        let ids = Ids {
            generation,
            endpoint,
            file,
            invoice,
            message,
            user: app.user_id.to_string(),
        };
        Self { app, router, ids }
    }
}

/// The route templates of the contract and of the mock's own surface (control
/// API, result files, uploads). Reset and settings are left out: the first
/// would take the test user away, the second can make creates wait for a
/// clock nobody moves.
fn templates() -> Vec<String> {
    let doc = mediagen_openapi::document().expect("contract");
    let mut all: Vec<String> = doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .cloned()
        .collect();
    all.extend(
        [
            "/_mock/users",
            "/_mock/users/{id}",
            "/_mock/users/{id}/keys",
            "/_mock/users/{id}/balance",
            "/_mock/keys/{id}",
            "/_mock/clock",
            "/_mock/clock/advance",
            "/_mock/models/{slug}/state",
            "/_mock/outcomes",
            "/_mock/requests",
            "/_mock/deliveries",
            "/_mock/dns",
            "/_mock/outbox",
            "/_mock/invoices/{id}/pay",
            "/outputs/{id}/{file}",
            "/uploads/{id}",
        ]
        .map(str::to_owned),
    );
    all
}

/// Percent-encodes every byte but the unreserved ones, so any bytes (invalid
/// UTF-8, `/`, NUL) can travel in a path segment or a query value.
pub fn encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Text a hostile client might write: mostly visible ASCII, or a mix of
/// digits, signs, separators, multi-byte and control characters.
pub fn text() -> impl Strategy<Value = String> {
    const MIXED: &[char] = &[
        '0', '9', '-', '+', '.', ',', ' ', '_', '/', ':', 'a', 'Z', 'ü', '😀', '\u{0}', '\u{202e}',
        '\n', '"', '\\', '%', '*',
    ];
    (any::<bool>(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(ascii, bytes)| {
        bytes
            .into_iter()
            .map(|b| {
                if ascii {
                    char::from(b' ' + b % 95)
                } else {
                    MIXED[usize::from(b) % MIXED.len()]
                }
            })
            .collect()
    })
}

/// One path segment: a word of the API, an id that exists, any UUID, any bytes.
fn segment(ids: Vec<String>) -> impl Strategy<Value = String> {
    const WORDS: &[&str] = &[
        "v1",
        "generations",
        "webhook-endpoints",
        "files",
        "billing",
        "invoices",
        "pdf",
        "act",
        "topup",
        "balance",
        "history",
        "requisites",
        "account",
        "stats",
        "summary",
        "auth",
        "magic-link",
        "request",
        "catalog",
        "health",
        "api",
        "openapi.json",
        "_mock",
        "users",
        "keys",
        "clock",
        "advance",
        "outcomes",
        "deliveries",
        "dns",
        "outbox",
        "pay",
        "outputs",
        "uploads",
        "cancel",
        "estimate",
        "rotate-secret",
        "test",
        "redeliver",
        "0.png",
        "0.mp4",
        "1.wav",
        "flux-schnell",
        "",
        ".",
        "..",
        "%",
        "%zz",
        "%C0%AF",
        "%2F",
        "%00",
        "~",
        "+",
        ";",
        "@",
        ":",
        "%20",
    ];
    prop_oneof![
        4 => prop::sample::select(WORDS).prop_map(str::to_owned),
        3 => prop::sample::select(ids),
        2 => any::<u128>().prop_map(|n| uuid::Uuid::from_u128(n).to_string()),
        2 => prop::collection::vec(any::<u8>(), 0..16).prop_map(|b| encode(&b)),
        1 => Just("a".repeat(5000)),
    ]
}

fn path(ids: Vec<String>) -> impl Strategy<Value = String> {
    let filled = (
        prop::sample::select(templates()),
        prop::collection::vec(segment(ids.clone()), 2),
    )
        .prop_map(|(template, fill)| {
            let mut out = String::new();
            let mut fill = fill.into_iter().cycle();
            let mut rest = template.as_str();
            while let Some(open) = rest.find('{') {
                let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
                out.push_str(&rest[..open]);
                out.push_str(&fill.next().unwrap_or_default());
                rest = &rest[close..];
            }
            out + rest
        });
    let random =
        prop::collection::vec(segment(ids), 0..6).prop_map(|s| format!("/{}", s.join("/")));
    prop_oneof![3 => filled, 1 => random]
}

fn query(ids: Vec<String>) -> impl Strategy<Value = String> {
    const KEYS: &[&str] = &[
        "limit",
        "cursor",
        "status",
        "modelSlug",
        "from",
        "to",
        "type",
        "expires",
        "signature",
    ];
    const VALUES: &[&str] = &[
        "1",
        "0",
        "-1",
        "100",
        "101",
        "99999999999999999999",
        "1e3",
        "abc",
        "PENDING",
        "SUCCEEDED",
        "TOPUP",
        "2026-01-01T00:00:00Z",
        "2026-13-45T99:00:00Z",
        "flux-schnell",
        "",
        "%",
        "%FF",
        "+",
        "null",
    ];
    let key = prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => prop::collection::vec(any::<u8>(), 0..6).prop_map(|b| encode(&b)),
    ];
    let value = prop_oneof![
        3 => prop::sample::select(VALUES).prop_map(str::to_owned),
        1 => prop::sample::select(ids),
        2 => prop::collection::vec(any::<u8>(), 0..24).prop_map(|b| encode(&b)),
    ];
    let pair = (key, value, any::<bool>()).prop_map(|(k, v, bare)| {
        if bare && v.is_empty() {
            k
        } else {
            format!("{k}={v}")
        }
    });
    prop_oneof![
        2 => Just(String::new()),
        3 => prop::collection::vec(pair, 0..5).prop_map(|p| format!("?{}", p.join("&"))),
        1 => prop::sample::select(&["?", "?&&==", "?=", "?a=%", "?limit=1&limit=2"][..]).prop_map(str::to_owned),
    ]
}

/// Bytes a header value may hold on the wire: visible ASCII, space, tab and
/// bytes above 0x7f.
fn header_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max).prop_map(|bytes| {
        bytes
            .into_iter()
            .map(|b| {
                if (b < 0x20 && b != b'\t') || b == 0x7f {
                    b ^ 0x40
                } else {
                    b
                }
            })
            .collect()
    })
}

fn headers(key: String) -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    let bearer = |token: &str| Some(format!("Bearer {token}").into_bytes());
    let authorization = prop_oneof![
        2 => Just(None),
        6 => Just(bearer(&key)),
        1 => Just(bearer(ADMIN_TOKEN)),
        1 => Just(Some(format!("bearer   {key}  ").into_bytes())),
        1 => Just(bearer("mg_live_abc_def")),
        1 => header_bytes(60).prop_map(|b| Some([b"Bearer ".as_slice(), &b].concat())),
        1 => header_bytes(60).prop_map(Some),
    ];
    let content_type = prop_oneof![
        2 => Just(None),
        6 => Just(Some(b"application/json".to_vec())),
        1 => Just(Some(b"APPLICATION/JSON; charset=utf-8".to_vec())),
        1 => Just(Some(b"application/merge-patch+json".to_vec())),
        1 => Just(Some(b"text/plain".to_vec())),
        1 => Just(Some(b"image/png".to_vec())),
        1 => header_bytes(40).prop_map(Some),
    ];
    let idempotency = prop_oneof![
        4 => Just(None),
        2 => "[ -~]{1,20}".prop_map(|k| Some(k.into_bytes())),
        1 => Just(Some(vec![b'k'; 300])),
        1 => header_bytes(30).prop_map(Some),
    ];
    let extra_name = prop::sample::select(
        &[
            "accept",
            "x-request-id",
            "webhook-id",
            "cookie",
            "expect",
            "range",
            "accept-encoding",
            "if-none-match",
            "origin",
            "x-forwarded-for",
            "x-custom",
        ][..],
    );
    let extra = prop::collection::vec((extra_name, header_bytes(80)), 0..4);
    (authorization, content_type, idempotency, extra).prop_map(|(auth, ct, idem, extra)| {
        let mut all = Vec::new();
        for (name, value) in [
            ("authorization", auth),
            ("content-type", ct),
            ("idempotency-key", idem),
        ] {
            if let Some(value) = value {
                all.push((name.to_owned(), value));
            }
        }
        all.extend(extra.into_iter().map(|(n, v)| (n.to_owned(), v)));
        all
    })
}

/// Field names the API reads, so that random JSON reaches past the schema check.
const FIELDS: &[&str] = &[
    "modelSlug",
    "prompt",
    "params",
    "aspect_ratio",
    "resolution",
    "duration",
    "image_file_id",
    "image_url",
    "url",
    "eventTypes",
    "eventType",
    "active",
    "description",
    "filename",
    "contentType",
    "sizeBytes",
    "amountRub",
    "returnUrl",
    "email",
    "legalName",
    "inn",
    "kpp",
    "bic",
    "balanceRub",
    "seconds",
    "state",
    "scope",
    "host",
    "addresses",
    "outcome",
    "errorCode",
    "count",
    "userId",
];

/// Values that mean something to the API, beside arbitrary ones.
fn known_string() -> impl Strategy<Value = Value> {
    prop::sample::select(
        &[
            "flux-schnell",
            "kling-video",
            "imagen-4",
            "stable-audio-2",
            "mock:fail=timeout",
            "mock:delay=1e308",
            "mock:fail=nonsense",
            "generation.*",
            "*",
            "generation.failed",
            "image/png",
            "video/mp4",
            "https://example.com/hooks",
            "http://127.0.0.1:1/x",
            "ftp://example.com/",
            "http://localhost/",
            "http://10.0.0.1/",
            "http://[::1]/",
            "http://bad.invalid/",
            "not a url",
            "16:9",
            "2k",
            "read_only",
            "full",
            "succeed",
            "fail",
            "withdrawn",
            "circuit_open",
            "127.0.0.1",
            "",
            "00000000-0000-0000-0000-000000000000",
        ][..],
    )
    .prop_map(Value::from)
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(
            &[
                0.0, -0.0, 0.001, 0.5, 1.0, 99.999, 1e10, 9.9e10, 1e11, 1e15, 1e308, -1.0
            ][..]
        )
        .prop_map(Value::from),
    ]
}

/// Arbitrary JSON, a few levels deep, keyed mostly by the API's own names.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        known_string(),
        text().prop_map(Value::from),
    ];
    let key = prop_oneof![
        3 => prop::sample::select(FIELDS).prop_map(str::to_owned),
        1 => text(),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A request body: nothing, any bytes, any JSON, a contract example with a
/// field replaced, absurd nesting, or more than the body limit.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let doc = mediagen_openapi::document().expect("contract");
    let examples: Vec<Value> = doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .flat_map(|path| {
            ["post", "put", "patch"]
                .into_iter()
                .filter_map(|m| example_body(&doc, m, path))
                .collect::<Vec<_>>()
        })
        .collect();
    let mutated = (
        prop::sample::select(examples),
        prop::sample::select(FIELDS),
        json_value(),
    )
        .prop_map(|(mut example, field, value)| {
            if let Some(object) = example.as_object_mut() {
                object.insert(field.to_owned(), value);
            }
            serde_json::to_vec(&example).unwrap_or_default()
        });
    prop_oneof![
        3 => Just(Vec::new()),
        2 => prop::collection::vec(any::<u8>(), 0..200),
        4 => json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        6 => mutated,
        1 => (1usize..5000).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes()),
        1 => (1usize..5000).prop_map(|n| format!("{}1", "{\"a\":".repeat(n)).into_bytes()),
        1 => Just(vec![b' '; 1024 * 1024 + 1]),
    ]
}

const METHODS: &[&str] = &[
    "GET", "GET", "POST", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PURGE",
    "get",
];

/// A request as a client might send it, once its pieces are put together.
#[derive(Clone)]
struct Fuzzed {
    method: Method,
    uri: Uri,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

/// Readable when a case fails: bytes as lossy text, the body cut short.
impl std::fmt::Debug for Fuzzed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        f.debug_struct("Fuzzed")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(n, v)| (n, lossy(v)))
                    .collect::<Vec<_>>(),
            )
            .field("body", &lossy(&self.body[..self.body.len().min(300)]))
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl Fuzzed {
    fn request(&self) -> Request<Body> {
        let mut request = Request::builder()
            .method(self.method.clone())
            .uri(self.uri.clone());
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
            let value = HeaderValue::from_bytes(value).expect("header-safe bytes");
            request = request.header(name, value);
        }
        request
            .body(Body::from(self.body.clone()))
            .expect("a request")
    }
}

fn fuzzed(ids: Vec<String>, key: String) -> impl Strategy<Value = Fuzzed> {
    (
        prop::sample::select(METHODS),
        path(ids.clone()),
        query(ids),
        headers(key),
        body(),
    )
        .prop_filter_map(
            "a URI http accepts",
            |(method, path, query, headers, body)| {
                Some(Fuzzed {
                    method: Method::from_bytes(method.as_bytes()).ok()?,
                    uri: format!("{path}{query}").parse().ok()?,
                    headers,
                    body,
                })
            },
        )
}

/// What every answer to anything must be: below 500, and an error in the
/// envelope (HEAD answers carry no body to check).
fn check(method: &Method, reply: &Reply) -> Result<(), TestCaseError> {
    let status = reply.status.as_u16();
    prop_assert!(status < 500, "{status}: {}", reply.body);
    if status >= 400 && method != Method::HEAD {
        let envelope = schemas().validate("Error", &reply.body);
        prop_assert!(
            envelope.is_ok(),
            "{status} not in the envelope: {:?} {:?}",
            String::from_utf8_lossy(&reply.bytes),
            envelope
        );
    }
    Ok(())
}

#[test]
fn any_request_a_client_can_send_answers_below_500_in_the_envelope() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let seeded = runtime.block_on(Seeded::start());
    let strategy = fuzzed(seeded.ids.all(), seeded.app.key.clone());
    let mut runner = TestRunner::new(Config {
        cases: scaled("PROPTEST_CASES", 3000),
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&strategy, |case| {
        let reply = runtime
            .block_on(call(&seeded.router, case.request()))
            .ok_or_else(|| TestCaseError::fail("no answer within 30 s"))?;
        check(&case.method, &reply)
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    seeded.app.mock.check_ledger().expect("the ledger holds");
}
