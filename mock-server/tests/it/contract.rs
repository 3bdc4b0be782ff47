//! Contract testing in the manner of schemathesis, in Rust so that CI runs it:
//! requests built from each operation of openapi/openapi.json, valid and
//! mutated, and every answer checked against what the operation declares
//! (status, media type, body schema, required headers), never a 5xx.
//! `mock-server/contract/schemathesis.sh` runs schemathesis itself.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Body;
use axum::http::{Method, Request};
use mediagen_mock_server::Responses;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

use crate::fuzz::{Seeded, encode, example_body, json_value, text};
use crate::{Reply, call, scaled, schemas};

/// One operation of the contract, as the tests need it.
#[derive(Debug, Clone)]
struct Operation {
    method: Method,
    template: String,
    /// Query parameters: name and schema (references resolved).
    query: Vec<(String, Value)>,
    example: Option<Value>,
    /// Declared status → (media type, schema), references resolved to the
    /// component schema name where there is one.
    responses: HashMap<u16, Option<(String, DeclaredBody)>>,
    required_headers: HashMap<u16, Vec<String>>,
}

/// What a declared response body is.
#[derive(Debug, Clone)]
enum DeclaredBody {
    Component(String),
    Inline(Value),
}

fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => doc
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or(value),
        None => value,
    }
}

fn operations() -> Vec<Operation> {
    let doc = mediagen_openapi::document().expect("contract");
    let mut all = Vec::new();
    for (template, item) in doc["paths"].as_object().expect("paths") {
        for method in ["get", "post", "put", "patch", "delete"] {
            let Some(op) = item.get(method) else {
                continue;
            };
            let query = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| resolve(&doc, p))
                .filter(|p| p["in"] == "query")
                .map(|p| {
                    let name = p["name"].as_str().expect("a name").to_owned();
                    (name, resolve(&doc, &p["schema"]).clone())
                })
                .collect();
            let mut responses = HashMap::new();
            let mut required_headers = HashMap::new();
            for (status, response) in op["responses"].as_object().expect("responses") {
                let status: u16 = status.parse().expect("numeric statuses");
                let response = resolve(&doc, response);
                let body = response["content"].as_object().and_then(|c| {
                    let (media, content) = c.iter().next()?;
                    let schema = &content["schema"];
                    let body = match schema["$ref"].as_str() {
                        Some(r) => DeclaredBody::Component(r.rsplit('/').next()?.to_owned()),
                        None => DeclaredBody::Inline(schema.clone()),
                    };
                    Some((media.clone(), body))
                });
                responses.insert(status, body);
                let headers = response["headers"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(_, h)| resolve(&doc, h)["required"] == true)
                    .map(|(name, _)| name.to_ascii_lowercase())
                    .collect();
                required_headers.insert(status, headers);
            }
            all.push(Operation {
                method: Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method"),
                template: template.clone(),
                query,
                example: example_body(&doc, method, template),
                responses,
                required_headers,
            });
        }
    }
    all
}

/// Which value a path parameter gets.
#[derive(Debug, Clone)]
enum PathId {
    /// One that exists now, of the kind the path names.
    Existing(Index),
    /// A well-formed one that names nothing.
    Unknown(u128),
    /// Anything at all.
    Garbage(Vec<u8>),
}

/// How the body differs from the contract's example.
#[derive(Debug, Clone)]
enum BodyChange {
    None,
    /// A field removed (by position among the example's fields).
    Remove(Index),
    /// A field given another value.
    Replace(Index, Value),
    /// A field the schema does not have.
    Add(String, Value),
    Whole(Value),
    NotJson(Vec<u8>),
    Empty,
}

#[derive(Debug, Clone)]
enum Key {
    Full,
    ReadOnly,
    Missing,
    Wrong,
}

#[derive(Debug, Clone)]
struct Case {
    operation: Index,
    ids: [PathId; 2],
    /// Per query parameter of the operation: absent, valid, or any text.
    query: Vec<(bool, Option<String>, Index)>,
    body: BodyChange,
    key: Key,
    idempotency_key: Option<String>,
    /// Send the body as `text/plain` instead of JSON.
    wrong_content_type: bool,
    /// A model of the mock's catalogue instead of the example's, whose models
    /// the mock does not have (and without the example's params, which are
    /// that model's).
    model: Option<Index>,
}

fn case() -> impl Strategy<Value = Case> {
    let id = prop_oneof![
        6 => any::<Index>().prop_map(PathId::Existing),
        2 => any::<u128>().prop_map(PathId::Unknown),
        1 => prop::collection::vec(any::<u8>(), 0..12).prop_map(PathId::Garbage),
    ];
    let body = prop_oneof![
        8 => Just(BodyChange::None),
        2 => any::<Index>().prop_map(BodyChange::Remove),
        3 => (any::<Index>(), json_value()).prop_map(|(i, v)| BodyChange::Replace(i, v)),
        1 => (text(), json_value()).prop_map(|(k, v)| BodyChange::Add(k, v)),
        1 => json_value().prop_map(BodyChange::Whole),
        1 => prop::collection::vec(any::<u8>(), 0..40).prop_map(BodyChange::NotJson),
        1 => Just(BodyChange::Empty),
    ];
    let key = prop_oneof![
        12 => Just(Key::Full),
        1 => Just(Key::ReadOnly),
        1 => Just(Key::Missing),
        1 => Just(Key::Wrong),
    ];
    let query = prop::collection::vec(
        (
            any::<bool>(),
            prop::option::weighted(0.2, text()),
            any::<Index>(),
        ),
        4,
    );
    (
        any::<Index>(),
        [id.clone(), id],
        query,
        body,
        key,
        prop::option::weighted(0.3, "[a-z0-9]{1,8}"),
        prop::bool::weighted(0.05),
        prop::option::weighted(0.8, any::<Index>()),
    )
        .prop_map(
            |(operation, ids, query, body, key, idempotency_key, wrong_content_type, model)| Case {
                operation,
                ids,
                query,
                body,
                key,
                idempotency_key,
                wrong_content_type,
                model,
            },
        )
}

/// Ids that exist, by the kind of resource a path names; creates add to them.
#[derive(Debug, Default)]
struct Pool {
    ids: HashMap<&'static str, Vec<String>>,
}

impl Pool {
    fn kind(template: &str, position: usize) -> &'static str {
        if position == 1 {
            return "message";
        }
        [
            ("/v1/generations", "generation"),
            ("/v1/webhook-endpoints", "endpoint"),
            ("/v1/files", "file"),
            ("/v1/billing/invoices", "invoice"),
        ]
        .into_iter()
        .find(|(prefix, _)| template.starts_with(prefix))
        .map_or("generation", |(_, kind)| kind)
    }

    fn pick(&self, kind: &str, index: &Index) -> String {
        self.ids
            .get(kind)
            .filter(|ids| !ids.is_empty())
            .map_or_else(
                || uuid::Uuid::nil().to_string(),
                |ids| index.get(ids).clone(),
            )
    }

    /// Remembers the id a successful create answered with.
    fn learn(&mut self, op: &Operation, reply: &Reply) {
        if !reply.status.is_success() || op.method != Method::POST {
            return;
        }
        let found = match op.template.as_str() {
            "/v1/generations" => Some(("generation", "id")),
            "/v1/webhook-endpoints" => Some(("endpoint", "id")),
            "/v1/files" => Some(("file", "fileId")),
            "/v1/billing/invoices" => Some(("invoice", "id")),
            "/v1/webhook-endpoints/{id}/test" => Some(("message", "messageId")),
            _ => None,
        };
        if let Some((kind, field)) = found
            && let Some(id) = reply.body[field].as_str()
        {
            self.ids.entry(kind).or_default().push(id.to_owned());
        }
    }
}

/// A valid value for a query parameter's schema.
fn valid_query_value(schema: &Value, pick: &Index) -> String {
    if let Some(values) = schema["enum"].as_array() {
        return pick.get(values).as_str().unwrap_or_default().to_owned();
    }
    match (schema["type"].as_str(), schema["format"].as_str()) {
        (Some("integer"), _) => {
            let low = schema["minimum"].as_i64().unwrap_or(0);
            let high = schema["maximum"].as_i64().unwrap_or(low + 100);
            let span = usize::try_from(high - low + 1).unwrap_or(1);
            (low + i64::try_from(pick.index(span)).unwrap_or(0)).to_string()
        }
        (_, Some("date-time")) => "2026-01-01T00:00:00.000Z".to_owned(),
        _ => ["flux-schnell", "kling-video", "imagen-4"][pick.index(3)].to_owned(),
    }
}

struct Built {
    request: Request<Body>,
    described: String,
}

fn build(op: &Operation, case: &Case, seeded: &Seeded, pool: &Pool, read_only: &str) -> Built {
    let mut path = String::new();
    let mut rest = op.template.as_str();
    let mut position = 0;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        path.push_str(&rest[..open]);
        let value = match &case.ids[position.min(1)] {
            PathId::Existing(i) => pool.pick(Pool::kind(&op.template, position), i),
            PathId::Unknown(n) => uuid::Uuid::from_u128(*n).to_string(),
            PathId::Garbage(bytes) => encode(bytes),
        };
        path.push_str(&value);
        rest = &rest[close..];
        position += 1;
    }
    path.push_str(rest);
    let pairs: Vec<String> = op
        .query
        .iter()
        .zip(&case.query)
        .filter(|(_, (present, _, _))| *present)
        .map(|((name, schema), (_, mutated, pick))| {
            let value = mutated
                .clone()
                .unwrap_or_else(|| valid_query_value(schema, pick));
            format!("{name}={}", encode(value.as_bytes()))
        })
        .collect();
    if !pairs.is_empty() {
        path = format!("{path}?{}", pairs.join("&"));
    }
    let mut request = Request::builder().method(op.method.clone()).uri(&path);
    let key = match case.key {
        Key::Full => Some(seeded.app.key.as_str()),
        Key::ReadOnly => Some(read_only),
        Key::Missing => None,
        Key::Wrong => Some("mg_live_abc_def"),
    };
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    if let Some(idempotency_key) = &case.idempotency_key {
        request = request.header("idempotency-key", idempotency_key);
    }
    let body: Option<Vec<u8>> = op.example.as_ref().map(|example| {
        let mut example = example.clone();
        if let (Some(pick), Some(object)) = (&case.model, example.as_object_mut())
            && object.contains_key("modelSlug")
        {
            let models = mediagen_mock_server::Config::default().catalog.models;
            object.insert("modelSlug".into(), pick.get(&models).slug.clone().into());
            object.remove("params");
        }
        let fields: Vec<String> = example
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        match &case.body {
            BodyChange::None => {}
            BodyChange::Remove(i) if !fields.is_empty() => {
                example.as_object_mut().map(|o| o.remove(i.get(&fields)));
            }
            BodyChange::Replace(i, value) if !fields.is_empty() => {
                example[i.get(&fields)] = value.clone();
            }
            BodyChange::Add(name, value) => {
                example
                    .as_object_mut()
                    .map(|o| o.insert(name.clone(), value.clone()));
            }
            BodyChange::Whole(value) => example = value.clone(),
            BodyChange::NotJson(bytes) => return bytes.clone(),
            BodyChange::Empty => return Vec::new(),
            BodyChange::Remove(_) | BodyChange::Replace(..) => {}
        }
        serde_json::to_vec(&example).unwrap_or_default()
    });
    let described = format!(
        "{} {path} body {}",
        op.method,
        body.as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default()
    );
    let request = match body {
        Some(bytes) => {
            let media = if case.wrong_content_type {
                "text/plain"
            } else {
                "application/json"
            };
            request
                .header("content-type", media)
                .body(Body::from(bytes))
        }
        None => request.body(Body::empty()),
    };
    Built {
        request: request.expect("a request from the contract"),
        described,
    }
}

/// The answer is one the operation declares, in the declared media type, with
/// a body valid against the declared schema and the required headers.
fn conforms(op: &Operation, described: &str, reply: &Reply) -> Result<(), TestCaseError> {
    let status = reply.status.as_u16();
    prop_assert!(status < 500, "{described}: {status} {}", reply.body);
    let Some(declared) = op.responses.get(&status) else {
        return Err(TestCaseError::fail(format!(
            "{described}: status {status} is not declared: {}",
            reply.body
        )));
    };
    for header in op.required_headers.get(&status).into_iter().flatten() {
        prop_assert!(
            reply.headers.contains_key(header.as_str()),
            "{described}: {status} lacks {header}"
        );
    }
    let Some((media, schema)) = declared else {
        prop_assert!(
            reply.bytes.is_empty(),
            "{described}: {status} should have no body"
        );
        return Ok(());
    };
    let content_type = reply.header("content-type").unwrap_or_default();
    prop_assert!(
        content_type.starts_with(media.as_str()),
        "{described}: {status} is {content_type}, declared {media}"
    );
    match schema {
        DeclaredBody::Component(name) => {
            let checked = schemas().validate(name, &reply.body);
            prop_assert!(
                checked.is_ok(),
                "{described}: {status} body does not conform to {name}: {} {:?}",
                reply.body,
                checked
            );
        }
        DeclaredBody::Inline(schema) if schema["format"] == "binary" => {
            prop_assert!(reply.bytes.starts_with(b"%PDF-"), "{described}: not a PDF");
        }
        DeclaredBody::Inline(schema) => {
            prop_assert!(
                schema["type"] != "object" || reply.body.is_object(),
                "{described}: {status} is not an object"
            );
        }
    }
    Ok(())
}

#[test]
fn every_answer_to_requests_built_from_the_contract_conforms_to_it() {
    answers_conform(Responses::Full, scaled("PROPTEST_CASES", 3000));
}

/// In `minimal` mode every answer keeps what the contract requires, so a
/// client built from the contract still reads it.
#[test]
fn every_minimal_answer_still_conforms_to_the_contract() {
    answers_conform(Responses::Minimal, scaled("PROPTEST_CASES", 3000) / 4);
}

/// In `extra` mode the unknown members break no schema of the contract.
#[test]
fn every_extra_answer_still_conforms_to_the_contract() {
    answers_conform(Responses::Extra, scaled("PROPTEST_CASES", 3000) / 4);
}

fn answers_conform(mode: Responses, cases: u32) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    // `advance_clock` starts the deliveries it makes due on this runtime.
    let _entered = runtime.enter();
    let seeded = runtime.block_on(Seeded::start());
    let mut settings = seeded.app.mock.get_settings();
    settings.responses = mode;
    seeded.app.mock.update_settings(settings).unwrap();
    let read_only = seeded
        .app
        .mock
        .create_key(seeded.app.user_id, mediagen_mock_server::Scope::ReadOnly)
        .expect("the user exists")
        .api_key;
    let ops = operations();
    let pool = Mutex::new(Pool::default());
    {
        let mut pool = pool.lock().expect("pool");
        for (kind, id) in [
            ("generation", &seeded.ids.generation),
            ("endpoint", &seeded.ids.endpoint),
            ("file", &seeded.ids.file),
            ("invoice", &seeded.ids.invoice),
            ("message", &seeded.ids.message),
        ] {
            pool.ids.entry(kind).or_default().push(id.clone());
        }
    }
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&case(), |case| {
        let op = case.operation.get(&ops);
        let built = build(op, &case, &seeded, &pool.lock().expect("pool"), &read_only);
        let reply = runtime
            .block_on(call(&seeded.router, built.request))
            .ok_or_else(|| TestCaseError::fail(format!("{}: no answer", built.described)))?;
        pool.lock().expect("pool").learn(op, &reply);
        // Tasks finish and free the concurrency limit as time passes.
        seeded.app.mock.advance_clock(20.0).unwrap();
        conforms(op, &built.described, &reply)
    });
    if let Err(failure) = outcome {
        panic!("{mode:?}: {failure}");
    }
    seeded.app.mock.check_ledger().expect("the ledger holds");
}
