use std::collections::BTreeSet;

use serde_json::Value;

use crate::{doc, operations, resolve};

#[test]
fn document_parses_as_openapi_3_1() {
    let spec =
        oas3::from_json(mediagen_openapi::OPENAPI_JSON).expect("a valid OpenAPI 3.1 document");
    assert!(spec.openapi.starts_with("3.1."), "version {}", spec.openapi);
    assert!(spec.paths.as_ref().is_some_and(|p| !p.is_empty()));
}

#[test]
fn every_reference_resolves() {
    fn walk(doc: &Value, value: &Value, at: &str, broken: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    let target = reference.strip_prefix('#').and_then(|p| doc.pointer(p));
                    if target.is_none() {
                        broken.push(format!("{at}: {reference}"));
                    }
                }
                for (key, child) in map {
                    walk(doc, child, &format!("{at}/{key}"), broken);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(doc, child, &format!("{at}/{i}"), broken);
                }
            }
            _ => {}
        }
    }
    let doc = doc();
    let mut broken = Vec::new();
    walk(&doc, &doc, "", &mut broken);
    assert!(broken.is_empty(), "unresolved references: {broken:#?}");
}

#[test]
fn every_path_the_service_document_names_is_described() {
    // The paths and methods named in the service's API document, section Endpoints.
    let named = [
        ("/v1/generations", "post"),
        ("/v1/generations/{id}", "get"),
        ("/v1/webhook-endpoints", "post"),
        ("/v1/webhook-endpoints", "get"),
        ("/v1/webhook-endpoints/{id}/rotate-secret", "post"),
        ("/v1/webhook-endpoints/{id}", "delete"),
        ("/health", "get"),
        ("/v1/catalog/", "get"),
        ("/v1/files", "post"),
        ("/v1/auth/magic-link/request", "post"),
        ("/v1/billing/topup", "post"),
        ("/v1/billing/invoices/{id}/pdf", "get"),
        ("/v1/billing/invoices/{id}/act", "get"),
        ("/api/openapi.json", "get"),
    ];
    let doc = doc();
    let missing: Vec<_> = named
        .iter()
        .filter(|(path, method)| doc["paths"][path].get(method).is_none())
        .collect();
    assert!(missing.is_empty(), "missing operations: {missing:?}");
}

#[test]
fn the_generation_area_has_five_endpoints() {
    let doc = doc();
    let count = operations(&doc)
        .iter()
        .filter(|(path, _, _)| path.starts_with("/v1/generations"))
        .count();
    assert_eq!(count, 5);
}

#[test]
fn only_the_public_methods_skip_authentication() {
    let doc = doc();
    assert_eq!(doc["security"], serde_json::json!([{"bearerAuth": []}]));
    let public: BTreeSet<_> = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op.get("security") == Some(&serde_json::json!([])))
        .map(|(path, method, _)| format!("{} {path}", method.to_uppercase()))
        .collect();
    let expected: BTreeSet<_> = [
        "GET /health",
        "GET /v1/catalog/",
        "GET /api/openapi.json",
        "POST /v1/auth/magic-link/request",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(public, expected);
}

#[test]
fn every_operation_fits_the_generator() {
    let doc = doc();
    let mut ids = BTreeSet::new();
    for (path, method, op) in operations(&doc) {
        let at = format!("{} {path}", method.to_uppercase());
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{at}: no operationId"));
        assert!(
            ids.insert(id.to_owned()),
            "{at}: duplicate operationId {id}"
        );
        let responses = op["responses"].as_object().expect("responses");
        assert!(
            !responses.contains_key("default"),
            "{at}: uses a default response"
        );
        let successes: Vec<_> = responses.keys().filter(|c| c.starts_with('2')).collect();
        assert_eq!(successes.len(), 1, "{at}: success responses {successes:?}");
        for (code, response) in responses {
            if code.starts_with('2') {
                continue;
            }
            let response = resolve(&doc, response);
            let schema = &response["content"]["application/json"]["schema"];
            assert_eq!(
                schema["$ref"], "#/components/schemas/Error",
                "{at} {code}: error responses use the Error envelope"
            );
        }
    }
}

#[test]
fn every_response_carries_the_rate_limit_headers() {
    let doc = doc();
    for (path, method, op) in operations(&doc) {
        for (code, response) in op["responses"].as_object().expect("responses") {
            let headers = &resolve(&doc, response)["headers"];
            for name in [
                "x-ratelimit-limit",
                "x-ratelimit-remaining",
                "x-ratelimit-reset",
            ] {
                assert!(
                    headers.get(name).is_some(),
                    "{} {path} {code}: no {name}",
                    method.to_uppercase()
                );
            }
            if code == "429" {
                assert!(
                    headers.get("retry-after").is_some(),
                    "{path} 429: no retry-after"
                );
            }
        }
    }
}

#[test]
fn create_takes_an_idempotency_key_header() {
    let doc = doc();
    let params = doc["paths"]["/v1/generations"]["post"]["parameters"]
        .as_array()
        .expect("parameters");
    let found = params.iter().map(|p| resolve(&doc, p)).any(|p| {
        p["in"] == "header"
            && p["name"]
                .as_str()
                .is_some_and(|n| n.eq_ignore_ascii_case("Idempotency-Key"))
    });
    assert!(found);
}

#[test]
fn webhooks_describe_both_events_with_their_signature_headers() {
    let doc = doc();
    for event in ["generation.completed", "generation.failed"] {
        let op = &doc["webhooks"][event]["post"];
        let names: BTreeSet<_> = op["parameters"]
            .as_array()
            .unwrap_or_else(|| panic!("{event}: no parameters"))
            .iter()
            .map(|p| resolve(&doc, p))
            .filter(|p| p["in"] == "header")
            .filter_map(|p| p["name"].as_str().map(str::to_ascii_lowercase))
            .collect();
        for header in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
            assert!(names.contains(header), "{event}: no {header} header");
        }
        let body = resolve(
            &doc,
            &op["requestBody"]["content"]["application/json"]["schema"],
        );
        assert_eq!(resolve(&doc, &body["properties"]["type"])["const"], event);
    }
}

#[test]
fn enumerations_match_the_service_document() {
    let doc = doc();
    let values = |name: &str| -> BTreeSet<String> {
        doc["components"]["schemas"][name]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} is an enum"))
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let statuses = values("GenerationStatus");
    for s in ["PENDING", "PROCESSING", "SUCCEEDED", "FAILED"] {
        assert!(statuses.contains(s), "status {s}");
    }
    let failures = values("FailureCode");
    for code in [
        "content_policy",
        "moderation_rejected",
        "prompt_rejected",
        "prompt_too_long",
        "reference_fetch_failed",
        "input_fetch_failed",
        "invalid_input",
        "insufficient_credit",
        "rate_limited",
        "timeout",
        "provider_unavailable",
        "provider_internal",
    ] {
        assert!(failures.contains(code), "failure code {code}");
    }
    assert_eq!(failures.len(), 12);
    let codes = values("ErrorCode");
    for code in [
        "AUTHENTICATION_ERROR",
        "AUTHORIZATION_ERROR",
        "VALIDATION_ERROR",
        "NOT_FOUND",
        "MODEL_NOT_AVAILABLE",
        "MODEL_UNAVAILABLE",
        "UNSUPPORTED_MEDIA_TYPE",
        "PAYLOAD_TOO_LARGE",
        "INSUFFICIENT_BALANCE",
        "MARGIN_GUARD",
        "PAYMENT_ERROR",
        "RESERVATION_EXPIRED",
        "RATE_LIMIT_ERROR",
        "DAILY_CAP_EXCEEDED",
        "CONFLICT_ERROR",
        "MODERATION_REPEAT_BLOCKED",
        "PROVIDER_ERROR",
        "UPSTREAM_CIRCUIT_OPEN",
        "SERVICE_UNAVAILABLE",
        "OUTPUT_FETCH_FAILED",
        "GATEWAY_CLIENT_ERROR",
        "WEBHOOK_DELIVERY_ERROR",
        "MESSENGER_NOT_CONFIGURED",
        "INTERNAL_ERROR",
    ] {
        assert!(codes.contains(code), "error code {code}");
    }
    assert_eq!(
        values("EventType"),
        ["generation.completed", "generation.failed"]
            .map(str::to_owned)
            .into()
    );
}
