use serde_json::Value;

use crate::doc;

#[test]
fn rewritten_contract_reads_as_openapi_3_0_for_the_generator() {
    let old = mediagen_openapi::to_openapi_30(&doc()).expect("rewrite");
    let spec: openapiv3::OpenAPI =
        serde_json::from_value(old.clone()).expect("an OpenAPI 3.0 document");
    assert_eq!(spec.openapi, "3.0.3");
    assert!(old.get("webhooks").is_none());
    let text = old.to_string();
    for leftover in ["\"const\"", "\"jsonSchemaDialect\"", "\"$schema\""] {
        assert!(!text.contains(leftover), "{leftover} survived the rewrite");
    }
    fn no_type_arrays(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.iter().all(|(k, v)| {
                !(k == "type" && v.is_array()) && (k == "example" || no_type_arrays(v))
            }),
            Value::Array(items) => items.iter().all(no_type_arrays),
            _ => true,
        }
    }
    assert!(no_type_arrays(&old["components"]));
}
