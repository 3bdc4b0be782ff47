//! Rule 1: the SDK relies only on what the service promises.
//!
//! Every operation of the contract is answered by a scripted server, not by our
//! mock: once with the least the contract requires (the fields the service
//! document guarantees), and once with every field it designs. In both, every
//! enumeration carries a value no version knows and every object a member nobody
//! knows. Each call must succeed, and hand the unknown values back as sent.

use std::future::Future;
use std::pin::Pin;

use futures::TryStreamExt;
use mediagen::{
    Client, FileContentType, GenerationFilter, GenerationRequest, HistoryFilter,
    WebhookEndpointRequest, WebhookEndpointUpdate,
};
use serde_json::{Map, Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{InstantClock, requisites, wire_client};

type Call<'a> = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;

/// The SDK's call for an operation, its answer as JSON.
type Case = (&'static str, for<'a> fn(&'a Client) -> Call<'a>);

/// Reads an SDK result as JSON (what the caller holds, as the SDK serialises it).
async fn json<T: serde::Serialize>(
    call: impl Future<Output = Result<T, mediagen::Error>>,
) -> Result<Value, String> {
    let value = call.await.map_err(|err| format!("{err:#?}"))?;
    serde_json::to_value(value).map_err(|err| err.to_string())
}

const ID: &str = "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19";

fn id() -> Uuid {
    Uuid::parse_str(ID).unwrap()
}

fn request() -> GenerationRequest {
    GenerationRequest::new("flux-schnell", "a red fox")
}

/// Every JSON operation of the contract, by its operationId, through the SDK.
const CASES: &[Case] = &[
    ("create_generation", |c| {
        Box::pin(async move {
            let created = c
                .generations()
                .create(request())
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"id": created.id, "status": created.status, "costRub": created.cost_rub}))
        })
    }),
    ("list_generations", |c| {
        Box::pin(async move {
            let page = c
                .generations()
                .list_page(&GenerationFilter::new(), None)
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"data": page.items, "hasMore": page.has_more}))
        })
    }),
    ("estimate_generation", |c| {
        Box::pin(json(
            async move { c.generations().estimate(&request()).await },
        ))
    }),
    ("get_generation", |c| {
        Box::pin(json(async move { c.generations().get(id()).await }))
    }),
    ("cancel_generation", |c| {
        Box::pin(json(async move { c.generations().cancel(id()).await }))
    }),
    ("create_webhook_endpoint", |c| {
        Box::pin(async move {
            let created = c
                .webhooks()
                .create(WebhookEndpointRequest::new("https://example.com/hooks"))
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"id": created.id, "eventTypes": created.event_types}))
        })
    }),
    ("list_webhook_endpoints", |c| {
        Box::pin(json(async move { c.webhooks().list().await }))
    }),
    ("get_webhook_endpoint", |c| {
        Box::pin(json(async move { c.webhooks().get("we_1").await }))
    }),
    ("update_webhook_endpoint", |c| {
        Box::pin(json(async move {
            c.webhooks()
                .update("we_1", WebhookEndpointUpdate::new().active(true))
                .await
        }))
    }),
    ("rotate_webhook_endpoint_secret", |c| {
        Box::pin(async move {
            let rotated = c
                .webhooks()
                .rotate_secret("we_1")
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"secret": rotated.secret.expose()}))
        })
    }),
    ("send_test_webhook", |c| {
        Box::pin(json(
            async move { c.webhooks().send_test("we_1", None).await },
        ))
    }),
    ("list_webhook_deliveries", |c| {
        Box::pin(async move {
            let page = c
                .webhooks()
                .deliveries_page("we_1", None)
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"data": page.items}))
        })
    }),
    ("redeliver_webhook_message", |c| {
        Box::pin(json(
            async move { c.webhooks().redeliver("we_1", id()).await },
        ))
    }),
    ("create_file_upload", |c| {
        Box::pin(json(async move {
            c.files()
                .create_upload("cat.png", FileContentType::ImagePng, 10)
                .await
        }))
    }),
    ("get_file", |c| {
        Box::pin(json(async move { c.files().get(id()).await }))
    }),
    ("get_balance", |c| {
        Box::pin(json(async move { c.billing().balance().await }))
    }),
    ("list_billing_history", |c| {
        Box::pin(async move {
            let page = c
                .billing()
                .history_page(&HistoryFilter::new(), None)
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"data": page.items}))
        })
    }),
    ("get_requisites", |c| {
        Box::pin(json(async move { c.billing().requisites().await }))
    }),
    ("set_requisites", |c| {
        Box::pin(json(async move {
            c.billing().set_requisites(requisites()).await
        }))
    }),
    ("list_invoices", |c| {
        Box::pin(async move {
            let page = c
                .billing()
                .invoices_page(None, None)
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"data": page.items}))
        })
    }),
    ("create_invoice", |c| {
        Box::pin(json(
            async move { c.billing().create_invoice(10_000.0).await },
        ))
    }),
    ("create_topup", |c| {
        Box::pin(json(async move { c.billing().topup(1_000.0, None).await }))
    }),
    ("get_account", |c| {
        Box::pin(json(async move { c.account().get().await }))
    }),
    ("get_summary", |c| {
        Box::pin(json(async move { c.account().summary(None, None).await }))
    }),
    ("request_magic_link", |c| {
        Box::pin(json(async move {
            c.auth().request_magic_link("ada@example.com").await
        }))
    }),
    ("list_catalog", |c| {
        Box::pin(json(async move { c.catalog().get().await }))
    }),
    ("get_health", |c| {
        Box::pin(json(async move { c.health().await }))
    }),
];

/// What an answer carries beyond the contract's least.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// Only the required fields.
    Minimal,
    /// Every field of the contract's example.
    Full,
}

/// Rewrites `example` (valid for `schema`) into the answer under test: fields cut
/// to the required ones for [`Shape::Minimal`], each enumeration value replaced by
/// one nobody knows (recorded in `unknown`), and a member nobody knows added to
/// every object of the contract.
fn answer(
    doc: &Value,
    schema: &Value,
    example: &Value,
    shape: Shape,
    unknown: &mut Vec<String>,
) -> Value {
    let (schema, name) = resolve(doc, schema);
    if schema.get("enum").is_some() && example.is_string() {
        let value = format!("NEW_{}", name.unwrap_or("VALUE"));
        unknown.push(value.clone());
        return Value::String(value);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = schema.get(combinator).and_then(Value::as_array) {
            if example.is_null() {
                return Value::Null;
            }
            let branch = branches
                .iter()
                .find(|b| b.get("type").is_none_or(|t| t != "null"))
                .unwrap();
            return answer(doc, branch, example, shape, unknown);
        }
    }
    match (schema.get("properties").and_then(Value::as_object), example) {
        (Some(properties), Value::Object(fields)) => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            for (key, value) in fields {
                if shape == Shape::Minimal && !required.contains(&key.as_str()) {
                    continue;
                }
                let field_schema = properties.get(key).cloned().unwrap_or(json!({}));
                out.insert(
                    key.clone(),
                    answer(doc, &field_schema, value, shape, unknown),
                );
            }
            out.insert("memberNobodyKnows".into(), json!({"nested": [1, "two"]}));
            Value::Object(out)
        }
        (None, Value::Array(items)) => match schema.get("items") {
            Some(item) => Value::Array(
                items
                    .iter()
                    .map(|v| answer(doc, item, v, shape, unknown))
                    .collect(),
            ),
            None => example.clone(),
        },
        _ => example.clone(),
    }
}

/// The schema a `$ref` points at, and its name.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> (&'a Value, Option<&'a str>) {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.rsplit('/').next();
            let target = doc
                .pointer(reference.trim_start_matches('#'))
                .expect("the $ref resolves");
            (target, name)
        }
        None => (schema, None),
    }
}

/// Each JSON operation: method, path as a regex, status, response schema, examples.
fn operations(doc: &Value) -> Vec<(String, String, String, u16, Value, Vec<Value>)> {
    let mut found = Vec::new();
    for (route, item) in doc["paths"].as_object().unwrap() {
        for (verb, operation) in item.as_object().unwrap() {
            let Some(id) = operation.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            for (status, response) in operation["responses"].as_object().unwrap() {
                let Some(content) = response.pointer("/content/application~1json") else {
                    continue;
                };
                if !status.starts_with('2') {
                    continue;
                }
                let examples = match (content.get("example"), content.get("examples")) {
                    (Some(example), _) => vec![example.clone()],
                    (None, Some(named)) => named
                        .as_object()
                        .unwrap()
                        .values()
                        .map(|e| e["value"].clone())
                        .collect(),
                    (None, None) => Vec::new(),
                };
                let pattern = format!("^{}$", regex_path(route));
                found.push((
                    id.to_owned(),
                    verb.to_uppercase(),
                    pattern,
                    status.parse().unwrap(),
                    content["schema"].clone(),
                    examples,
                ));
            }
        }
    }
    found
}

fn regex_path(route: &str) -> String {
    route
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "[^/]+".to_owned()
            } else {
                segment.replace('.', "\\.")
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn every_operation_reads(shape: Shape) {
    let doc = mediagen_openapi::document().unwrap();
    let operations = operations(&doc);
    let mut covered = 0;
    for (operation, verb, pattern, status, schema, examples) in &operations {
        if operation == "get_openapi_document" {
            // The document itself, handed over as JSON: nothing to read.
            continue;
        }
        let (_, call) = CASES
            .iter()
            .find(|(id, _)| id == operation)
            .unwrap_or_else(|| panic!("{operation} has no case: add the SDK's call for it"));
        assert!(!examples.is_empty(), "{operation} has an example");
        for example in examples {
            let mut unknown = Vec::new();
            let body = answer(&doc, schema, example, shape, &mut unknown);
            let server = MockServer::start().await;
            Mock::given(method(verb.as_str()))
                .and(path_regex(pattern.as_str()))
                .respond_with(ResponseTemplate::new(*status).set_body_json(&body))
                .mount(&server)
                .await;
            let client = wire_client(&server, &InstantClock::new());

            let read = call(&client)
                .await
                .unwrap_or_else(|err| panic!("{operation} ({shape:?}) failed on {body}: {err}"));

            let text = read.to_string();
            for value in &unknown {
                assert!(
                    text.contains(value),
                    "{operation} ({shape:?}) lost {value}: {text}"
                );
            }
            covered += 1;
        }
    }
    assert!(covered >= CASES.len(), "every case ran ({covered})");
}

#[tokio::test]
async fn every_operation_reads_an_answer_with_only_the_guaranteed_fields_and_unknown_values() {
    every_operation_reads(Shape::Minimal).await;
}

#[tokio::test]
async fn every_operation_reads_an_answer_with_every_field_unknown_values_and_unknown_members() {
    every_operation_reads(Shape::Full).await;
}

#[tokio::test]
async fn a_designed_field_of_another_shape_is_dropped_and_a_guaranteed_one_fails_the_call() {
    let server = MockServer::start().await;
    let other = Uuid::new_v4();
    // A service that designed `createdAt` as a number and `params` as a string.
    Mock::given(method("GET"))
        .and(path_regex(format!("^/v1/generations/{ID}$")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": ID, "status": "PROCESSING", "costRub": 2.5,
            "createdAt": 1_763_806_530, "params": "16:9", "modelSlug": ["flux"]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!("^/v1/generations/{other}$")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": other, "status": "PROCESSING", "costRub": "2.50"
        })))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let generation = client.generations().get(id()).await.unwrap();
    let err = client.generations().get(other).await.unwrap_err();

    assert_eq!(
        (
            generation.created_at,
            generation.params,
            generation.model_slug
        ),
        (None, None, None)
    );
    assert_eq!(generation.cost_rub, 2.5);
    let message = err.to_string();
    assert!(
        matches!(
            err,
            mediagen::Error::Decode {
                operation: "get_generation",
                ..
            }
        ) && message.contains("costRub"),
        "{message}"
    );
}

#[tokio::test]
async fn every_page_of_a_list_reads_with_only_the_guaranteed_fields() {
    let server = MockServer::start().await;
    let second = Uuid::new_v4();
    Mock::given(method("GET"))
        .and(path_regex("^/v1/generations$"))
        .and(wiremock::matchers::query_param("cursor", "c2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"id": second, "status": "ARCHIVED", "costRub": 1}], "hasMore": false
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/v1/generations$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"id": ID, "status": "SUCCEEDED", "costRub": 2.5, "outputUrls": ["https://cdn.example/0.png"]}],
            "hasMore": true, "nextCursor": "c2"
        })))
        .with_priority(10)
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let all: Vec<_> = client
        .generations()
        .list(GenerationFilter::new())
        .try_collect()
        .await
        .unwrap();

    assert_eq!(all.len(), 2);
    assert_eq!(all[1].status.as_str(), "ARCHIVED");
    assert!(!all[1].status.is_known());
}

#[test]
fn every_webhook_event_reads_with_only_the_guaranteed_fields_and_unknown_values() {
    let doc = mediagen_openapi::document().unwrap();
    let events = doc["webhooks"].as_object().unwrap();
    assert_eq!(events.len(), 2);
    for (name, event) in events {
        let content = &event["post"]["requestBody"]["content"]["application/json"];
        let example = content.get("example").cloned().unwrap_or_else(|| {
            content["examples"]
                .as_object()
                .unwrap()
                .values()
                .next()
                .unwrap()["value"]
                .clone()
        });
        for shape in [Shape::Minimal, Shape::Full] {
            let mut unknown = Vec::new();
            let body = answer(&doc, &content["schema"], &example, shape, &mut unknown);
            assert!(!unknown.is_empty(), "{name} carries an enumeration");

            let event = mediagen::WebhookEvent::parse(body.to_string().as_bytes())
                .unwrap_or_else(|err| panic!("{name} ({shape:?}) failed on {body}: {err}"));

            assert_eq!(event.event_type(), body["type"].as_str().unwrap());
            let read = format!("{event:?}");
            for value in &unknown {
                assert!(
                    read.contains(value),
                    "{name} ({shape:?}) lost {value}: {read}"
                );
            }
        }
    }
}

/// Each open enum of the SDK, with the values it names.
macro_rules! named {
    ($($name:ident),* $(,)?) => {
        [$((stringify!($name), mediagen::$name::KNOWN)),*]
    };
}

#[test]
fn every_enumeration_of_the_contract_has_an_open_enum_naming_each_value() {
    let sdk = named![
        BillingOperationStatus,
        BillingOperationType,
        Currency,
        DeliveryOutcome,
        DeliveryTrigger,
        ErrorCode,
        EventType,
        EventTypeFilter,
        FailureCode,
        FileContentType,
        FileStatus,
        GenerationStatus,
        HealthStatus,
        InvoiceStatus,
        MediaType,
        ModelParameterType,
        ModelStatus,
        PriceUnit,
        TopupStatus,
        UploadMethod,
    ];
    let doc = mediagen_openapi::document().unwrap();
    let contract: Vec<(&String, Vec<&str>)> = doc["components"]["schemas"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(name, schema)| {
            let values = schema.get("enum")?.as_array()?;
            Some((name, values.iter().filter_map(Value::as_str).collect()))
        })
        .collect();

    for (name, values) in &contract {
        let (_, known) = sdk
            .iter()
            .find(|(sdk_name, _)| sdk_name == name)
            .unwrap_or_else(|| panic!("the contract's {name} has no open enum in the SDK"));
        assert_eq!(
            *known,
            values.as_slice(),
            "{name}: the SDK's enum and the contract disagree"
        );
    }
    assert_eq!(
        sdk.len(),
        contract.len(),
        "the SDK names an enumeration the contract lacks"
    );
}
