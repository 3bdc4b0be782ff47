//! Every example in the contract is valid against the schema beside it, so that the
//! examples a reader copies (and the mock server's answers checked against the same
//! schemas) are right.

use serde_json::{Value, json};

use crate::{METHODS, doc, resolve};

struct Example {
    at: String,
    schema_pointer: String,
    value: Value,
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The pointer of `value` if it is a local `$ref`, else `at`.
fn target(value: &Value, at: &str) -> String {
    value
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .map_or_else(|| at.to_owned(), str::to_owned)
}

/// Collects the examples of a request body or response at `at`.
fn media_examples(doc: &Value, at: &str, out: &mut Vec<Example>, missing: &mut Vec<String>) {
    let at = target(doc.pointer(at).expect("pointer"), at);
    let holder = resolve(doc, doc.pointer(&at).expect("pointer"));
    let Some(json) = holder["content"].get("application/json") else {
        return;
    };
    let schema_pointer = format!("{at}/content/application~1json/schema");
    let mut found = 0;
    if let Some(example) = json.get("example") {
        out.push(Example {
            at: at.clone(),
            schema_pointer: schema_pointer.clone(),
            value: example.clone(),
        });
        found += 1;
    }
    if let Some(examples) = json.get("examples").and_then(Value::as_object) {
        for (name, example) in examples {
            let example = resolve(doc, example);
            if let Some(value) = example.get("value") {
                out.push(Example {
                    at: format!("{at} ({name})"),
                    schema_pointer: schema_pointer.clone(),
                    value: value.clone(),
                });
                found += 1;
            }
        }
    }
    if found == 0 {
        missing.push(at);
    }
}

fn all_examples(doc: &Value) -> (Vec<Example>, Vec<String>) {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for section in ["paths", "webhooks"] {
        for (path, item) in doc[section].as_object().into_iter().flatten() {
            for method in METHODS {
                let Some(op) = item.get(*method) else {
                    continue;
                };
                let base = format!("/{section}/{}/{method}", escape(path));
                if op.get("requestBody").is_some() {
                    media_examples(doc, &format!("{base}/requestBody"), &mut out, &mut missing);
                }
                for code in op["responses"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(c, _)| c)
                {
                    media_examples(
                        doc,
                        &format!("{base}/responses/{code}"),
                        &mut out,
                        &mut missing,
                    );
                }
            }
        }
    }
    for (name, schema) in doc["components"]["schemas"].as_object().expect("schemas") {
        for (i, value) in schema
            .get("examples")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            out.push(Example {
                at: format!("components.schemas.{name}.examples[{i}]"),
                schema_pointer: format!("/components/schemas/{}", escape(name)),
                value: value.clone(),
            });
        }
    }
    missing.sort();
    missing.dedup();
    (out, missing)
}

#[test]
fn every_json_body_has_an_example() {
    let doc = doc();
    let (_, missing) = all_examples(&doc);
    assert!(
        missing.is_empty(),
        "JSON bodies without an example: {missing:#?}"
    );
}

#[test]
fn every_example_is_valid_against_its_schema() {
    let doc = doc();
    let (examples, _) = all_examples(&doc);
    assert!(
        examples.len() > 40,
        "only {} examples found",
        examples.len()
    );
    let mut failures = Vec::new();
    for example in &examples {
        // The whole document is the schema resource, so `#/components/...` references
        // resolve; the root `$ref` picks the schema the example belongs to.
        let mut root = doc.clone();
        // A `$ref` is a URI: braces of path templates must be percent-encoded.
        let fragment = example
            .schema_pointer
            .replace('{', "%7B")
            .replace('}', "%7D");
        root["$ref"] = json!(format!("#{fragment}"));
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("{}: schema does not compile: {e}", example.at));
        for error in validator.iter_errors(&example.value) {
            failures.push(format!(
                "{}: {} at {}",
                example.at,
                error,
                error.instance_path()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "invalid examples:\n{}",
        failures.join("\n")
    );
}
