#![doc = include_str!("../README.md")]

use serde_json::{Map, Value};

mod lookup;
pub mod policy;

// Written by `cargo codegen` from openapi.json (src/bin/generate/operations.rs
// and sets.rs); CI compares them byte for byte, so rustfmt leaves them as written.
#[rustfmt::skip]
pub mod operations;
#[rustfmt::skip]
pub mod sets;

/// The contract, byte for byte as committed in `openapi/openapi.json`.
///
/// The mock server serves exactly this text at `GET /api/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("../openapi.json");

/// Errors from reading or rewriting the contract.
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    /// The text is not JSON.
    #[error("the contract is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The document does not declare an OpenAPI 3.1 version.
    #[error("expected an OpenAPI 3.1 document, found version {found:?}")]
    Version {
        /// The value of the `openapi` field, if any.
        found: Option<String>,
    },
}

/// The contract parsed as JSON.
///
/// ```
/// let doc = mediagen_openapi::document().unwrap();
/// assert_eq!(doc["openapi"], "3.1.0");
/// ```
pub fn document() -> Result<Value, ContractError> {
    Ok(serde_json::from_str(OPENAPI_JSON)?)
}

/// The mock server's control API (`/_mock/` of each world), byte for byte as
/// committed in `openapi/mock-control.json`: the one contract every face of the
/// mock (HTTP, Rust, Python, Node) names its control methods after.
pub const MOCK_CONTROL_JSON: &str = include_str!("../mock-control.json");

/// The mock's control contract parsed as JSON.
///
/// ```
/// let doc = mediagen_openapi::mock_control_document().unwrap();
/// assert!(doc["paths"]["/_mock/worlds"]["post"]["operationId"] == "create_world");
/// ```
pub fn mock_control_document() -> Result<Value, ContractError> {
    Ok(serde_json::from_str(MOCK_CONTROL_JSON)?)
}

/// Rewrites an OpenAPI 3.1 document into the 3.0.3 dialect that progenitor 0.15 reads.
///
/// progenitor (through `openapiv3`) rejects 3.1, so the generator feeds it this
/// rewrite. Only what 3.0.3 cannot say is changed:
///
/// - `"type": ["string", "null"]` becomes `"type": "string", "nullable": true`;
/// - `anyOf`/`oneOf` with a `{"type": "null"}` branch loses that branch and gains
///   `nullable: true` (a single remaining `$ref` is wrapped in `allOf`);
/// - `const` becomes a one-value `enum`;
/// - a schema's `examples` array becomes `example` (its first element);
/// - numeric `exclusiveMinimum`/`exclusiveMaximum` become the 3.0 boolean form;
/// - `contentMediaType` on a string becomes `format: binary`;
/// - `webhooks`, `jsonSchemaDialect`, `$schema`, `info.summary` and
///   `info.license.identifier` are dropped, as are siblings of `$ref`.
///
/// Example values, defaults, enums and extensions are data, not schemas, and are
/// copied untouched.
///
/// ```
/// use serde_json::json;
/// let doc = json!({
///     "openapi": "3.1.0",
///     "info": {"title": "t", "version": "1"},
///     "paths": {},
///     "webhooks": {},
///     "components": {"schemas": {"S": {
///         "type": "object",
///         "properties": {"a": {"type": ["string", "null"]}, "b": {"const": "X"}}
///     }}}
/// });
/// let old = mediagen_openapi::to_openapi_30(&doc).unwrap();
/// assert_eq!(old["openapi"], "3.0.3");
/// assert!(old.get("webhooks").is_none());
/// let s = &old["components"]["schemas"]["S"]["properties"];
/// assert_eq!(s["a"], json!({"type": "string", "nullable": true}));
/// assert_eq!(s["b"], json!({"enum": ["X"]}));
/// ```
pub fn to_openapi_30(doc: &Value) -> Result<Value, ContractError> {
    let version = doc.get("openapi").and_then(Value::as_str);
    if !version.is_some_and(|v| v.starts_with("3.1.")) {
        return Err(ContractError::Version {
            found: version.map(str::to_owned),
        });
    }
    let mut out = doc.clone();
    let Some(root) = out.as_object_mut() else {
        return Err(ContractError::Version { found: None });
    };
    root.insert("openapi".into(), Value::from("3.0.3"));
    root.remove("webhooks");
    root.remove("jsonSchemaDialect");
    if let Some(info) = root.get_mut("info").and_then(Value::as_object_mut) {
        info.remove("summary");
        if let Some(license) = info.get_mut("license").and_then(Value::as_object_mut) {
            license.remove("identifier");
        }
    }
    if let Some(components) = root.get_mut("components").and_then(Value::as_object_mut) {
        components.remove("pathItems");
    }
    rewrite(&mut out);
    Ok(out)
}

/// Keys whose values are data (examples, defaults, enumerations), never schemas.
const DATA_KEYS: &[&str] = &["example", "default", "enum", "const", "value"];

fn rewrite(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(rewrite),
        Value::Object(obj) => {
            rewrite_schema_keywords(obj);
            for (key, child) in obj.iter_mut() {
                if DATA_KEYS.contains(&key.as_str()) || key.starts_with("x-") {
                    continue;
                }
                if key == "examples" && child.is_object() {
                    // An OpenAPI `examples` map: its entries hold data under `value`.
                    if let Some(map) = child.as_object_mut() {
                        map.values_mut().for_each(rewrite);
                    }
                    continue;
                }
                if key == "properties" || key == "patternProperties" {
                    // Keys here are property names; only the values are schemas.
                    if let Some(map) = child.as_object_mut() {
                        map.values_mut().for_each(rewrite);
                    }
                    continue;
                }
                rewrite(child);
            }
        }
        _ => {}
    }
}

fn rewrite_schema_keywords(obj: &mut Map<String, Value>) {
    if obj.contains_key("$ref") {
        obj.retain(|k, _| k == "$ref");
        return;
    }
    obj.remove("$schema");

    for combinator in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = obj.get(combinator) else {
            continue;
        };
        let is_null = |b: &Value| b.get("type").is_some_and(|t| t == "null");
        if !branches.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
        obj.remove(combinator);
        obj.insert("nullable".into(), Value::Bool(true));
        match rest.as_slice() {
            [one] if one.get("$ref").is_some() => {
                obj.insert("allOf".into(), Value::Array(rest));
            }
            [Value::Object(one)] => {
                for (k, v) in one {
                    obj.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            _ => {
                obj.insert(combinator.into(), Value::Array(rest));
            }
        }
    }

    if let Some(Value::Array(types)) = obj.get("type") {
        let nullable = types.iter().any(|t| t == "null");
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        match rest.as_slice() {
            [one] => {
                obj.insert("type".into(), one.clone());
            }
            // No single 3.0 type says "any of these": leave the type open.
            _ => {
                obj.remove("type");
            }
        }
        if nullable {
            obj.insert("nullable".into(), Value::Bool(true));
        }
    }
    if obj.get("type").is_some_and(|t| t == "null") {
        obj.remove("type");
        obj.insert("nullable".into(), Value::Bool(true));
    }

    if let Some(constant) = obj.remove("const") {
        obj.insert("enum".into(), Value::Array(vec![constant]));
    }
    if let Some(Value::Array(examples)) = obj.get("examples") {
        let first = examples.first().cloned();
        obj.remove("examples");
        if let Some(first) = first {
            obj.entry("example").or_insert(first);
        }
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(limit) = obj.get(exclusive).filter(|v| v.is_number()).cloned() {
            obj.insert(bound.into(), limit);
            obj.insert(exclusive.into(), Value::Bool(true));
        }
    }
    if obj.remove("contentMediaType").is_some() && obj.get("type").is_some_and(|t| t == "string") {
        obj.insert("format".into(), Value::from("binary"));
    }
    obj.remove("contentEncoding");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rewritten(schema: Value) -> Value {
        let doc = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {}, "components": {"schemas": {"S": schema}}});
        to_openapi_30(&doc).expect("rewrite")["components"]["schemas"]["S"].clone()
    }

    #[test]
    fn nullable_reference_becomes_all_of_with_nullable() {
        let s = rewritten(json!({"anyOf": [{"$ref": "#/components/schemas/T"}, {"type": "null"}]}));
        assert_eq!(
            s,
            json!({"allOf": [{"$ref": "#/components/schemas/T"}], "nullable": true})
        );
    }

    #[test]
    fn nullable_inline_branch_is_merged() {
        let s =
            rewritten(json!({"anyOf": [{"type": "string", "format": "uri"}, {"type": "null"}]}));
        assert_eq!(
            s,
            json!({"type": "string", "format": "uri", "nullable": true})
        );
    }

    #[test]
    fn schema_examples_array_becomes_single_example() {
        let s = rewritten(json!({"type": "integer", "examples": [5, 6]}));
        assert_eq!(s, json!({"type": "integer", "example": 5}));
    }

    #[test]
    fn example_data_is_never_rewritten() {
        let data = json!({"type": ["a", "null"], "const": 1, "examples": [1]});
        let s =
            rewritten(json!({"type": "object", "example": data.clone(), "default": data.clone()}));
        assert_eq!(s["example"], data);
        assert_eq!(s["default"], data);
    }

    #[test]
    fn property_names_that_are_keywords_are_kept() {
        let s = rewritten(json!({"type": "object", "properties": {
            "type": {"const": "generation.completed"},
            "examples": {"type": "string"}
        }}));
        assert_eq!(
            s["properties"]["type"],
            json!({"enum": ["generation.completed"]})
        );
        assert_eq!(s["properties"]["examples"], json!({"type": "string"}));
    }

    #[test]
    fn numeric_exclusive_bounds_become_boolean_form() {
        let s = rewritten(json!({"type": "number", "exclusiveMinimum": 0}));
        assert_eq!(
            s,
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true})
        );
    }

    #[test]
    fn pdf_content_becomes_binary_string() {
        let s = rewritten(json!({"type": "string", "contentMediaType": "application/pdf"}));
        assert_eq!(s, json!({"type": "string", "format": "binary"}));
    }

    #[test]
    fn reference_siblings_are_dropped() {
        let s = rewritten(json!({"$ref": "#/components/schemas/T", "description": "d"}));
        assert_eq!(s, json!({"$ref": "#/components/schemas/T"}));
    }

    #[test]
    fn a_30_document_is_refused() {
        let err = to_openapi_30(&json!({"openapi": "3.0.3"})).expect_err("must refuse");
        assert!(matches!(err, ContractError::Version { found: Some(v) } if v == "3.0.3"));
    }
}
