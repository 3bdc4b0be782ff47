//! The schema and params checks, against Ajv's output for the same input.

use std::time::Instant;

use serde_json::Map;

use super::*;
use crate::domain::catalog::{Catalog, Model, ParamType};

/// Compiling once per test binary keeps the suite fast.
fn contract() -> &'static ContractSchemas {
    ContractSchemas::shared()
}

fn errors(name: &str, body: Value) -> Vec<FieldError> {
    contract()
        .validate(name, &body)
        .expect_err("the body should fail")
}

fn model(slug: &str) -> Model {
    Catalog::default_catalog()
        .get(slug)
        .expect("a model of the default catalogue")
        .clone()
}

fn params(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn field(path: &str, keyword: &str, message: &str, params: Value) -> FieldError {
    FieldError::new(path, keyword, message, params)
}

#[test]
fn every_schema_of_the_control_contract_compiles() {
    let document = mediagen_openapi::mock_control_document().expect("the control contract");
    let schemas = ContractSchemas::from_document(&document).expect("compiles");
    assert_eq!(
        schemas.validators.len(),
        document["components"]["schemas"].as_object().unwrap().len()
    );
}

#[test]
fn every_component_schema_compiles_quickly() {
    let start = Instant::now();
    let document = mediagen_openapi::document().expect("the contract");
    let schemas = ContractSchemas::from_document(&document).expect("compiles");
    let elapsed = start.elapsed();
    println!(
        "compiled {} component schemas in {elapsed:?}",
        schemas.validators.len()
    );

    let names = document["components"]["schemas"]
        .as_object()
        .expect("components.schemas");
    assert_eq!(schemas.validators.len(), names.len());
    assert!(
        names
            .keys()
            .all(|name| schemas.validators.contains_key(name))
    );
}

#[test]
fn contract_schemas_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<ContractSchemas>();
}

#[test]
fn debug_lists_the_schema_names_only() {
    let text = format!("{:?}", contract());
    assert!(text.starts_with("ContractSchemas { schemas: ["), "{text}");
    assert!(text.contains("\"CreateGenerationRequest\""));
    assert!(text.len() < 4096, "{} characters", text.len());
}

#[test]
fn valid_create_request_passes() {
    let body = json!({
        "modelSlug": "flux-schnell",
        "prompt": "a red fox in the snow",
        "params": {
            "aspect_ratio": "16:9",
            "resolution": "2k",
            "image_file_id": "5f0c6b1e-8a4d-4c1e-9f3a-2b7d6e8c9a01",
        },
    });
    assert_eq!(
        contract().validate("CreateGenerationRequest", &body),
        Ok(())
    );
}

#[test]
fn missing_model_slug_is_reported_with_missing_property() {
    let found = errors("CreateGenerationRequest", json!({"prompt": "p"}));
    assert_eq!(
        found,
        [field(
            "",
            "required",
            "must have required property 'modelSlug'",
            json!({"missingProperty": "modelSlug"})
        )]
    );
}

#[test]
fn every_missing_property_is_reported_in_schema_order() {
    let found = errors("CreateGenerationRequest", json!({}));
    let missing: Vec<&Value> = found.iter().map(|e| &e.params["missingProperty"]).collect();
    assert_eq!(missing, [&json!("modelSlug"), &json!("prompt")]);
    assert!(
        found
            .iter()
            .all(|e| e.path.is_empty() && e.keyword == "required")
    );
}

#[test]
fn wrong_types_are_reported_at_their_paths_through_refs() {
    let body = json!({"modelSlug": 1, "prompt": "p", "params": {"aspect_ratio": 3}});
    let found = errors("CreateGenerationRequest", body);
    assert_eq!(
        found,
        [
            field(
                "/modelSlug",
                "type",
                "must be string",
                json!({"type": "string"})
            ),
            field(
                "/params/aspect_ratio",
                "type",
                "must be string",
                json!({"type": "string"})
            ),
        ]
    );
}

#[test]
fn non_object_params_is_a_type_error() {
    for params in [json!([1]), json!("x"), json!(null), json!(7)] {
        let body = json!({"modelSlug": "m", "prompt": "p", "params": params});
        let found = errors("CreateGenerationRequest", body);
        assert_eq!(
            found,
            [field(
                "/params",
                "type",
                "must be object",
                json!({"type": "object"})
            )]
        );
    }
}

#[test]
fn empty_strings_break_min_length() {
    let found = errors(
        "CreateGenerationRequest",
        json!({"modelSlug": "", "prompt": "p"}),
    );
    assert_eq!(
        found,
        [field(
            "/modelSlug",
            "minLength",
            "must NOT have fewer than 1 characters",
            json!({"limit": 1})
        )]
    );
}

#[test]
fn formats_of_the_contract_are_checked() {
    let body = json!({
        "modelSlug": "m",
        "prompt": "p",
        "params": {"image_file_id": "nope", "image_url": "not a uri"},
    });
    let found = errors("CreateGenerationRequest", body);
    assert_eq!(
        found,
        [
            field(
                "/params/image_file_id",
                "format",
                "must match format \"uuid\"",
                json!({"format": "uuid"})
            ),
            field(
                "/params/image_url",
                "format",
                "must match format \"uri\"",
                json!({"format": "uri"})
            ),
        ]
    );
}

#[test]
fn valid_webhook_endpoint_request_passes() {
    let body = json!({
        "url": "https://example.com/hooks",
        "eventTypes": ["generation.*", "*"],
        "description": "ci",
    });
    assert_eq!(
        contract().validate("CreateWebhookEndpointRequest", &body),
        Ok(())
    );
    let bare = json!({"url": "http://example.com"});
    assert_eq!(
        contract().validate("CreateWebhookEndpointRequest", &bare),
        Ok(())
    );
}

#[test]
fn webhook_url_must_match_format_uri() {
    let found = errors(
        "CreateWebhookEndpointRequest",
        json!({"url": "example dot com"}),
    );
    assert_eq!(
        found,
        [field(
            "/url",
            "format",
            "must match format \"uri\"",
            json!({"format": "uri"})
        )]
    );
}

#[test]
fn unknown_event_type_lists_the_allowed_values() {
    let body = json!({
        "url": "https://example.com",
        "eventTypes": ["generation.completed", "generation.succeeded"],
    });
    let found = errors("CreateWebhookEndpointRequest", body);
    assert_eq!(
        found,
        [field(
            "/eventTypes/1",
            "enum",
            "must be equal to one of the allowed values",
            json!({"allowedValues": mediagen_openapi::sets::EventTypeFilter::NAMES})
        )]
    );
}

#[test]
fn long_description_breaks_max_length_counted_in_characters() {
    let body = json!({"url": "https://example.com", "description": "é".repeat(257)});
    let found = errors("CreateWebhookEndpointRequest", body);
    assert_eq!(
        found,
        [field(
            "/description",
            "maxLength",
            "must NOT have more than 256 characters",
            json!({"limit": 256})
        )]
    );
    let exact = json!({"url": "https://example.com", "description": "é".repeat(256)});
    assert_eq!(
        contract().validate("CreateWebhookEndpointRequest", &exact),
        Ok(())
    );
}

#[test]
fn nullable_types_are_named_in_the_schema_order() {
    let found = errors("UpdateWebhookEndpointRequest", json!({"description": 5}));
    assert_eq!(
        found,
        [field(
            "/description",
            "type",
            "must be string,null",
            json!({"type": ["string", "null"]})
        )]
    );
}

#[test]
fn numeric_limits_read_like_ajv() {
    let found = errors(
        "FileUploadRequest",
        json!({"filename": "a.png", "contentType": "image/png", "sizeBytes": 0}),
    );
    assert_eq!(
        found,
        [field(
            "/sizeBytes",
            "minimum",
            "must be >= 1",
            json!({"comparison": ">=", "limit": 1})
        )]
    );
    let found = errors("TopupRequest", json!({"amountRub": 100000.5}));
    assert_eq!(
        found,
        [field(
            "/amountRub",
            "maximum",
            "must be <= 100000",
            json!({"comparison": "<=", "limit": 100000})
        )]
    );
}

#[test]
fn any_of_reports_each_branch_then_itself() {
    let found = errors("Generation", json!({"errorCode": 5}));
    let at_code: Vec<&str> = found
        .iter()
        .filter(|e| e.path == "/errorCode")
        .map(|e| e.keyword.as_str())
        .collect();
    assert_eq!(at_code, ["anyOf", "enum", "type", "type"]);
    let any_of = found
        .iter()
        .find(|e| e.keyword == "anyOf")
        .expect("the anyOf error");
    assert_eq!(any_of.message, "must match a schema in anyOf");
}

#[test]
fn violations_are_sorted_by_path_then_keyword() {
    let body = json!({"url": 1, "eventTypes": ["x", 2], "description": 3});
    let found = errors("CreateWebhookEndpointRequest", body);
    let keys: Vec<(&str, &str)> = found
        .iter()
        .map(|e| (e.path.as_str(), e.keyword.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("/description", "type"),
            ("/eventTypes/0", "enum"),
            ("/eventTypes/1", "enum"),
            ("/eventTypes/1", "type"),
            ("/url", "type"),
        ]
    );
}

#[test]
fn unknown_schema_name_is_a_schema_error() {
    let found = errors("NoSuchSchema", json!({}));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].keyword, "schema");
    assert_eq!(found[0].params, json!({"schema": "NoSuchSchema"}));
}

#[test]
fn keywords_absent_from_the_contract_still_read_like_ajv() {
    let document = json!({"components": {"schemas": {
        "Closed": {
            "type": "object",
            "properties": {
                "a": {"const": 1},
                "b": {"type": "array", "uniqueItems": true, "maxItems": 3},
                "c": {"pattern": "^x"},
            },
            "additionalProperties": false,
        },
        "Odd name/{x}": {"type": "integer", "exclusiveMinimum": 0.5, "multipleOf": 2},
    }}});
    let schemas = ContractSchemas::from_document(&document).expect("the schemas compile");

    let found = schemas
        .validate(
            "Closed",
            &json!({"a": 2, "b": [1, 2, 1, 2], "c": "y", "x": 0, "y": 0}),
        )
        .expect_err("invalid");
    assert_eq!(
        found,
        [
            field(
                "",
                "additionalProperties",
                "must NOT have additional properties",
                json!({"additionalProperty": "x"})
            ),
            field(
                "",
                "additionalProperties",
                "must NOT have additional properties",
                json!({"additionalProperty": "y"})
            ),
            field(
                "/a",
                "const",
                "must be equal to constant",
                json!({"allowedValue": 1})
            ),
            field(
                "/b",
                "maxItems",
                "must NOT have more than 3 items",
                json!({"limit": 3})
            ),
            field(
                "/b",
                "uniqueItems",
                "must NOT have duplicate items (items ## 1 and 3 are identical)",
                json!({"i": 3, "j": 1})
            ),
            field(
                "/c",
                "pattern",
                "must match pattern \"^x\"",
                json!({"pattern": "^x"})
            ),
        ]
    );

    let found = schemas
        .validate("Odd name/{x}", &json!(-1))
        .expect_err("invalid");
    assert_eq!(
        found,
        [
            field(
                "",
                "exclusiveMinimum",
                "must be > 0.5",
                json!({"comparison": ">", "limit": 0.5})
            ),
            field(
                "",
                "multipleOf",
                "must be multiple of 2",
                json!({"multipleOf": 2})
            ),
        ]
    );
}

#[test]
fn hostile_bodies_give_errors_not_panics() {
    // Deeper than serde_json's parser lets through (128), yet shallow
    // enough for serde_json's own recursive clone and drop.
    let mut deep = json!("leaf");
    for _ in 0..300 {
        deep = json!({"x": [deep]});
    }
    let body = json!({
        "modelSlug": "m",
        "prompt": "p",
        "params": {"nested": deep.clone(), "seed": u64::MAX, "big": 1.0e308},
    });
    assert_eq!(
        contract().validate("CreateGenerationRequest", &body),
        Ok(())
    );
    assert!(
        contract()
            .validate("CreateGenerationRequest", &deep)
            .is_err()
    );
    assert!(
        contract()
            .validate(
                "CreateWebhookEndpointRequest",
                &json!({"url": "x".repeat(1 << 20)})
            )
            .is_err()
    );
    for value in [
        json!(null),
        json!([]),
        json!(-0.0),
        json!(i64::MIN),
        json!(""),
    ] {
        assert!(
            contract()
                .validate("CreateGenerationRequest", &value)
                .is_err()
        );
    }

    let flux = model("flux-schnell");
    let found = validate_params(
        &flux,
        &params(json!({"seed": 1.0e308, "aspect_ratio": deep, "negative_prompt": u64::MAX})),
    );
    let keywords: Vec<&str> = found.iter().map(|e| e.keyword.as_str()).collect();
    assert_eq!(keywords, ["enum", "type", "type", "maximum"]);
}

#[test]
fn default_catalogue_models_accept_empty_params() {
    for model in Catalog::default_catalog().models {
        assert_eq!(validate_params(&model, &Map::new()), [], "{}", model.slug);
    }
}

#[test]
fn default_catalogue_models_accept_their_own_defaults() {
    for model in Catalog::default_catalog().models {
        let defaults: Map<String, Value> = model
            .parameters
            .iter()
            .filter_map(|p| Some((p.name.clone(), p.default.clone()?)))
            .collect();
        assert_eq!(validate_params(&model, &defaults), [], "{}", model.slug);
    }
}

#[test]
fn unknown_param_is_an_additional_property() {
    let found = validate_params(
        &model("flux-schnell"),
        &params(json!({"style": "noir", "aspect_ratio": "1:1"})),
    );
    assert_eq!(
        found,
        [field(
            "/params",
            "additionalProperties",
            "must NOT have additional properties",
            json!({"additionalProperty": "style"})
        )]
    );
}

#[test]
fn value_outside_allowed_values_lists_them() {
    let found = validate_params(&model("flux-schnell"), &params(json!({"resolution": "4k"})));
    assert_eq!(
        found,
        [field(
            "/params/resolution",
            "enum",
            "must be equal to one of the allowed values",
            json!({"allowedValues": ["1k", "2k"]})
        )]
    );
}

#[test]
fn allowed_numbers_compare_as_javascript_numbers() {
    let kling = model("kling-2-1");
    assert_eq!(
        validate_params(&kling, &params(json!({"duration": 10.0}))),
        []
    );
    let found = validate_params(&kling, &params(json!({"duration": 7})));
    assert_eq!(found[0].params, json!({"allowedValues": [5, 10]}));
}

#[test]
fn wrong_type_for_every_kind() {
    let catalog = Catalog::default_catalog();
    let cases = [
        (ParamType::String, json!(5), "string"),
        (ParamType::Integer, json!("5"), "integer"),
        (ParamType::Number, json!("fast"), "number"),
        (ParamType::Boolean, json!("true"), "boolean"),
        (ParamType::File, json!(42), "string"),
    ];
    for (kind, wrong, expected) in cases {
        let (model, parameter) = catalog
            .models
            .iter()
            .find_map(|m| m.parameters.iter().find(|p| p.kind == kind).map(|p| (m, p)))
            .unwrap_or_else(|| panic!("a {kind:?} parameter in the default catalogue"));
        let found = validate_params(model, &params(json!({ parameter.name.clone(): wrong })));
        let type_error = found
            .iter()
            .find(|e| e.keyword == "type")
            .unwrap_or_else(|| panic!("{kind:?}: {found:?}"));
        assert_eq!(type_error.path, format!("/params/{}", parameter.name));
        assert_eq!(type_error.message, format!("must be {expected}"));
        assert_eq!(type_error.params, json!({ "type": expected }));
    }
}

#[test]
fn integer_with_a_fraction_is_a_type_error_and_a_whole_float_is_not() {
    let veo = model("veo-3");
    let found = validate_params(&veo, &params(json!({"duration": 5.5})));
    assert_eq!(
        found,
        [field(
            "/params/duration",
            "type",
            "must be integer",
            json!({"type": "integer"})
        )]
    );
    assert_eq!(validate_params(&veo, &params(json!({"duration": 6.0}))), []);
}

#[test]
fn null_is_not_an_absent_param() {
    let found = validate_params(&model("flux-schnell"), &params(json!({"seed": null})));
    assert_eq!(
        found,
        [field(
            "/params/seed",
            "type",
            "must be integer",
            json!({"type": "integer"})
        )]
    );
}

#[test]
fn below_minimum_and_above_maximum_are_reported_with_their_limits() {
    let veo = model("veo-3");
    assert_eq!(
        validate_params(&veo, &params(json!({"duration": 3}))),
        [field(
            "/params/duration",
            "minimum",
            "must be >= 4",
            json!({"comparison": ">=", "limit": 4})
        )]
    );
    assert_eq!(
        validate_params(&veo, &params(json!({"duration": 9}))),
        [field(
            "/params/duration",
            "maximum",
            "must be <= 8",
            json!({"comparison": "<=", "limit": 8})
        )]
    );
    let eleven = model("eleven-multilingual-v2");
    assert_eq!(
        validate_params(&eleven, &params(json!({"speed": 0.25}))),
        [field(
            "/params/speed",
            "minimum",
            "must be >= 0.5",
            json!({"comparison": ">=", "limit": 0.5})
        )]
    );
    assert_eq!(validate_params(&eleven, &params(json!({"speed": 2}))), []);
}

#[test]
fn file_param_takes_a_uuid_string() {
    let imagen = model("imagen-4");
    let id = "5f0c6b1e-8a4d-4c1e-9f3a-2b7d6e8c9a01";
    assert_eq!(
        validate_params(&imagen, &params(json!({"image_file_id": id}))),
        []
    );
    for not_uuid in [
        "file_123",
        "5f0c6b1e8a4d4c1e9f3a2b7d6e8c9a01",
        "{5f0c6b1e-8a4d-4c1e-9f3a-2b7d6e8c9a01}",
    ] {
        assert_eq!(
            validate_params(&imagen, &params(json!({"image_file_id": not_uuid}))),
            [field(
                "/params/image_file_id",
                "format",
                "must match format \"uuid\"",
                json!({"format": "uuid"})
            )],
            "{not_uuid}"
        );
    }
}

#[test]
fn missing_required_param_is_reported_at_params() {
    let mut kling = model("kling-2-1");
    let image = kling
        .parameters
        .iter_mut()
        .find(|p| p.name == "image_file_id")
        .expect("kling takes an input image");
    image.required = true;
    let found = validate_params(&kling, &Map::new());
    assert_eq!(
        found,
        [field(
            "/params",
            "required",
            "must have required property 'image_file_id'",
            json!({"missingProperty": "image_file_id"})
        )]
    );
}

#[test]
fn params_defaults_are_not_required_to_be_sent() {
    let mut veo = model("veo-3");
    for parameter in &mut veo.parameters {
        parameter.required = true;
    }
    assert!(veo.parameters.iter().all(|p| p.default.is_some()));
    assert_eq!(validate_params(&veo, &Map::new()), []);
}

#[test]
fn param_names_are_escaped_in_paths() {
    let mut flux = model("flux-schnell");
    flux.parameters[0].name = "a/b~c".to_owned();
    let found = validate_params(&flux, &params(json!({"a/b~c": 1})));
    assert_eq!(found[0].path, "/params/a~1b~0c");
}

#[test]
fn param_violations_are_sorted_by_path_then_keyword() {
    let mut flux = model("flux-schnell");
    flux.parameters[1].required = true;
    flux.parameters[1].default = None;
    let found = validate_params(&flux, &params(json!({"seed": -1.5, "zzz": 1, "aaa": 2})));
    let keys: Vec<(&str, &str)> = found
        .iter()
        .map(|e| (e.path.as_str(), e.keyword.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("/params", "additionalProperties"),
            ("/params", "additionalProperties"),
            ("/params", "required"),
            ("/params/seed", "minimum"),
            ("/params/seed", "type"),
        ]
    );
}
