//! Checks of the contract: it is OpenAPI 3.1, complete, self-consistent, and fit for the
//! code generator.

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod document;
mod examples;
mod policy;
mod rewrite;

use serde_json::Value;

pub fn doc() -> Value {
    mediagen_openapi::document().expect("the contract is JSON")
}

pub const METHODS: &[&str] = &["get", "put", "post", "delete", "patch", "head", "options"];

/// Every operation of the document: (path, method, operation object).
pub fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                ops.push((path.clone(), (*method).to_owned(), op.clone()));
            }
        }
    }
    ops
}

/// Follows a local `$ref` (`#/a/b`) inside the document.
pub fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').expect("local reference");
            resolve(doc, doc.pointer(pointer).expect("reference resolves"))
        }
        None => value,
    }
}
