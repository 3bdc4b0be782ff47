//! What an answer carries in each response mode, read from the contract, so
//! that the mock and the contract cannot disagree about it:
//!
//! - `minimal` keeps, in every record, the members its schema lists as
//!   `required` and those whose `x-guaranteed-when` holds (`outputUrls` when
//!   the status is `SUCCEEDED`, `details.fields` for a `VALIDATION_ERROR`…):
//!   in the records the service document describes, exactly what it
//!   guarantees; in the others, their identity and purpose.
//! - `extra` adds a member no client knows to every record.
//!
//! A record is an object whose schema lists `properties`; maps (objects with
//! only `additionalProperties`) keep every entry, since their keys are data.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

/// The member `extra` adds to every record.
pub const EXTRA_MEMBER: &str = "mockExtra";
/// The header `extra` adds to every answer and every webhook delivery.
pub const EXTRA_HEADER: &str = "x-mock-extra";
/// The value of [`EXTRA_HEADER`].
pub const EXTRA_HEADER_VALUE: &str = "a header no client knows; ignore it";

/// The value of [`EXTRA_MEMBER`]: an object, the hardest kind of member for
/// a reader that expects only the ones it knows.
fn extra_value() -> Value {
    json!({"note": "a member no client knows; ignore it", "since": "v1"})
}

/// One operation's path and the schemas of its JSON answers by status.
#[derive(Debug)]
struct Operation {
    method: String,
    segments: Vec<String>,
    responses: Vec<(u16, String)>,
}

/// The contract's schemas and its operations' answers, for shaping answers.
#[derive(Debug)]
pub struct Shapes {
    schemas: Map<String, Value>,
    operations: Vec<Operation>,
    /// Each path of the contract, its parameters written `{}`, with the
    /// methods it has: what [`Shapes::serves`] looks up on every request.
    methods: HashMap<String, Vec<String>>,
}

/// The shapes of the committed contract, read once.
pub fn shapes() -> &'static Shapes {
    static SHAPES: OnceLock<Shapes> = OnceLock::new();
    SHAPES.get_or_init(|| {
        let document = mediagen_openapi::document().expect("the committed contract is JSON");
        Shapes::from_document(&document)
    })
}

/// The schema name a `$ref` to `#/components/schemas/<Name>` points at.
fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/components/schemas/")
}

impl Shapes {
    fn from_document(openapi: &Value) -> Self {
        let schemas = openapi
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut operations = Vec::new();
        let mut methods: HashMap<String, Vec<String>> = HashMap::new();
        for (path, item) in openapi["paths"].as_object().into_iter().flatten() {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let responses = operation["responses"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(status, response)| {
                        let schema = response.pointer("/content/application~1json/schema")?;
                        Some((status.parse().ok()?, ref_name(schema)?.to_owned()))
                    })
                    .collect();
                let method = method.to_ascii_uppercase();
                methods
                    .entry(template_key(path))
                    .or_default()
                    .push(method.clone());
                operations.push(Operation {
                    method,
                    segments: segments(path),
                    responses,
                });
            }
        }
        Self {
            schemas,
            operations,
            methods,
        }
    }

    /// The schema of the JSON answer of `method path` with `status`: the
    /// operation's own for a success, the error envelope for any error.
    pub fn response_schema(&self, method: &str, path: &str, status: u16) -> Option<&str> {
        if status >= 400 {
            return Some("Error");
        }
        let path = segments(path);
        self.operations
            .iter()
            .filter(|op| op.method == method && op.segments.len() == path.len())
            .find(|op| {
                op.segments
                    .iter()
                    .zip(&path)
                    .all(|(want, got)| want.starts_with('{') || want == got)
            })?
            .responses
            .iter()
            .find(|(s, _)| *s == status)
            .map(|(_, name)| name.as_str())
    }

    /// Whether the service has `method` on the route `template` (a path as
    /// the router matched it, `{id}` and all). Only a path of the contract
    /// with no such method is refused: HEAD goes with GET, and a route the
    /// contract does not list is the router's to know.
    pub fn serves(&self, method: &str, template: &str) -> bool {
        let method = if method == "HEAD" { "GET" } else { method };
        self.methods
            .get(&template_key(template))
            .is_none_or(|methods| methods.iter().any(|m| m == method))
    }

    /// `value` as `minimal` sends it, read as the schema `name`.
    pub fn minimal(&self, name: &str, value: &Value) -> Value {
        self.walk(
            &json!({"$ref": format!("#/components/schemas/{name}")}),
            value,
            &[],
            Mode::Minimal,
        )
    }

    /// `value` as `extra` sends it, read as the schema `name`.
    pub fn extra(&self, name: &str, value: &Value) -> Value {
        self.walk(
            &json!({"$ref": format!("#/components/schemas/{name}")}),
            value,
            &[],
            Mode::Extra,
        )
    }

    /// Follows `$ref`s to the schema itself.
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        // The contract's references never loop; the bound only guards a broken one.
        for _ in 0..16 {
            match ref_name(schema).and_then(|name| self.schemas.get(name)) {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// The branch of an `anyOf`/`oneOf` that `value` is: the first whose type
    /// fits it and, for an object, whose required members it has.
    fn branch<'a>(&'a self, schema: &'a Value, value: &Value) -> &'a Value {
        let Some(branches) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        else {
            return schema;
        };
        branches
            .iter()
            .map(|b| self.resolve(b))
            .find(|b| fits(b, value))
            .unwrap_or(schema)
    }

    fn walk(
        &self,
        schema: &Value,
        value: &Value,
        outer: &[&Map<String, Value>],
        mode: Mode,
    ) -> Value {
        let schema = self.branch(self.resolve(schema), value);
        match value {
            Value::Array(items) => {
                let item = schema.get("items").unwrap_or(&Value::Null);
                Value::Array(
                    items
                        .iter()
                        .map(|v| self.walk(item, v, outer, mode))
                        .collect(),
                )
            }
            Value::Object(object) => self.object(schema, object, outer, mode),
            scalar => scalar.clone(),
        }
    }

    fn object(
        &self,
        schema: &Value,
        object: &Map<String, Value>,
        outer: &[&Map<String, Value>],
        mode: Mode,
    ) -> Value {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            // A map: every entry is data, each shaped by the schema of its values.
            let values = schema.get("additionalProperties").unwrap_or(&Value::Null);
            return Value::Object(
                object
                    .iter()
                    .map(|(k, v)| (k.clone(), self.walk(values, v, outer, mode)))
                    .collect(),
            );
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut scope = outer.to_vec();
        scope.insert(0, object);
        let mut shaped = Map::new();
        for (key, member) in object {
            let declared = properties.get(key);
            let keep = match mode {
                Mode::Extra => true,
                Mode::Minimal => {
                    required.contains(&key.as_str())
                        || declared.is_some_and(|d| guaranteed(d, &scope))
                }
            };
            if keep {
                let member_schema = declared.unwrap_or(&Value::Null);
                shaped.insert(key.clone(), self.walk(member_schema, member, &scope, mode));
            }
        }
        if mode == Mode::Extra {
            shaped.insert(EXTRA_MEMBER.to_owned(), extra_value());
        }
        Value::Object(shaped)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Minimal,
    Extra,
}

/// The path's segments, a trailing `/` not being one.
/// A path template with each parameter written `{}`, so that the router's
/// names for them and the contract's need not agree.
fn template_key(template: &str) -> String {
    let mut key = String::with_capacity(template.len());
    for (i, segment) in template.trim_end_matches('/').split('/').enumerate() {
        if i > 0 {
            key.push('/');
        }
        key.push_str(if segment.starts_with('{') {
            "{}"
        } else {
            segment
        });
    }
    key
}

fn segments(path: &str) -> Vec<String> {
    path.trim_end_matches('/')
        .split('/')
        .map(str::to_owned)
        .collect()
}

/// Whether `value` can be an instance of the (resolved) `schema`, judged by
/// its type and, for an object, the required members it has.
fn fits(schema: &Value, value: &Value) -> bool {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let type_fits = match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == kind || (t == "number" && kind == "integer"),
        Some(Value::Array(types)) => types
            .iter()
            .any(|t| t == kind || (t == "number" && kind == "integer")),
        Some(_) => false,
    };
    let members_fit = match (value, schema.get("required").and_then(Value::as_array)) {
        (Value::Object(object), Some(required)) => required
            .iter()
            .filter_map(Value::as_str)
            .all(|name| object.contains_key(name)),
        _ => true,
    };
    type_fits && members_fit
}

/// Whether the member whose schema is `declared` is guaranteed here: its
/// `x-guaranteed-when` names members and the values under which it is, each
/// looked up in the object itself first, then in the objects around it.
fn guaranteed(declared: &Value, scope: &[&Map<String, Value>]) -> bool {
    let Some(conditions) = declared.get("x-guaranteed-when").and_then(Value::as_object) else {
        return false;
    };
    conditions.iter().all(|(name, allowed)| {
        let actual = scope.iter().find_map(|object| object.get(name));
        allowed
            .as_array()
            .is_some_and(|values| actual.is_some_and(|a| values.contains(a)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_keeps_what_the_document_guarantees_of_a_generation_by_its_status() {
        let shapes = shapes();
        let full = |status: &str| {
            json!({
                "id": "6f1c0f4e-0000-4000-8000-000000000000", "status": status,
                "modelSlug": "flux-schnell", "mediaType": "IMAGE", "costRub": 2.5,
                "outputUrls": [], "errorCode": null, "createdAt": "2026-11-23T10:00:00.000Z",
            })
        };
        let pending = shapes.minimal("Generation", &full("PENDING"));
        assert_eq!(
            pending,
            json!({"id": "6f1c0f4e-0000-4000-8000-000000000000", "status": "PENDING", "costRub": 2.5})
        );
        let mut succeeded = full("SUCCEEDED");
        succeeded["outputUrls"] = json!(["http://x/0.png"]);
        let kept = shapes.minimal("Generation", &succeeded);
        assert_eq!(kept["outputUrls"], json!(["http://x/0.png"]));
        assert!(kept.get("errorCode").is_none() && kept.get("modelSlug").is_none());
        let mut failed = full("FAILED");
        failed["errorCode"] = json!("timeout");
        let kept = shapes.minimal("Generation", &failed);
        assert_eq!(kept["errorCode"], "timeout");
        assert!(kept.get("outputUrls").is_none());
    }

    #[test]
    fn minimal_errors_keep_the_details_their_code_promises() {
        let shapes = shapes();
        let validation = json!({"error": {
            "code": "VALIDATION_ERROR", "message": "m", "requestId": "req_1",
            "timestamp": "2026-11-23T10:00:00.000Z",
            "details": {"fields": [{"path": "/x", "keyword": "k", "message": "m", "params": {}}],
                        "allowedValues": ["a"]},
        }});
        let kept = shapes.minimal("Error", &validation);
        assert_eq!(
            kept["error"]["details"],
            json!({"fields": [{"path": "/x", "keyword": "k", "message": "m", "params": {}}]})
        );
        let limited = json!({"error": {
            "code": "RATE_LIMIT_ERROR", "message": "m", "requestId": "req_1",
            "timestamp": "2026-11-23T10:00:00.000Z", "details": {"retryAfter": 17, "limit": 60},
        }});
        assert_eq!(
            shapes.minimal("Error", &limited)["error"]["details"],
            json!({"retryAfter": 17})
        );
        let model = json!({"error": {
            "code": "MODEL_NOT_AVAILABLE", "message": "m", "requestId": "req_1",
            "timestamp": "2026-11-23T10:00:00.000Z", "details": {"modelSlug": "flux-pro"},
        }});
        assert!(
            shapes.minimal("Error", &model)["error"]
                .get("details")
                .is_none()
        );
    }

    #[test]
    fn maps_keep_their_entries_and_extra_marks_every_record() {
        let shapes = shapes();
        let summary = json!({
            "from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z", "spentRub": 1.0,
            "generations": {"total": 2, "byStatus": {"SUCCEEDED": 1, "FAILED": 1}},
        });
        let extra = shapes.extra("Summary", &summary);
        assert_eq!(extra[EXTRA_MEMBER], extra_value());
        let list =
            json!({"data": [{"id": "a", "status": "PENDING", "costRub": 1.0}], "hasMore": false});
        let extra = shapes.extra("GenerationList", &list);
        assert_eq!(extra["data"][0][EXTRA_MEMBER], extra_value());
        assert_eq!(extra[EXTRA_MEMBER], extra_value());
    }

    #[test]
    fn each_operation_finds_the_schema_of_its_answer() {
        let shapes = shapes();
        assert_eq!(
            shapes.response_schema("POST", "/v1/generations", 202),
            Some("CreateGenerationResponse")
        );
        assert_eq!(
            shapes.response_schema(
                "GET",
                "/v1/generations/6f1c0f4e-0000-4000-8000-000000000000",
                200
            ),
            Some("Generation")
        );
        assert_eq!(
            shapes.response_schema("GET", "/v1/catalog/", 200),
            Some("Catalog")
        );
        assert_eq!(shapes.response_schema("GET", "/v1/nothing", 200), None);
        assert_eq!(
            shapes.response_schema("GET", "/v1/nothing", 404),
            Some("Error")
        );
        assert_eq!(
            shapes.response_schema("GET", "/v1/billing/invoices/x/pdf", 200),
            None,
            "not JSON"
        );
    }
}
