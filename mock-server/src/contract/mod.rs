//! Checks of request bodies against the contract's schemas and of `params`
//! against the catalogue.
//!
//! The service reports a failed check as 400 `VALIDATION_ERROR` with
//! `error.details.fields[]`, whose members (`path`, `keyword`, `message`,
//! `params`) are those of Ajv's error objects. Clients may match on them, so
//! both checks here speak Ajv's dialect: the instance path as a JSON pointer
//! (the object's own path for `required` and `additionalProperties`), Ajv's
//! message texts and Ajv's `params`.

use std::collections::BTreeMap;
use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Registry, ValidationError, Validator};
use serde_json::{Value, json};

use field::{
    count_limit, fragment_token, js_number, last_duplicate, number_text, pattern_mismatch,
    percent_decode, sort, value_text,
};

mod field;
mod params;
pub mod shape;

pub use field::FieldError;
pub use params::validate_params;

/// The base URI the contract's schemas are registered under while compiling.
const CONTRACT_URI: &str = "urn:mediagen:openapi";

/// Validators for the contract's component schemas, compiled once at start.
pub struct ContractSchemas {
    /// `{"components": {"schemas": …}}` of the contract: what the validators
    /// were compiled from, kept to read a failed keyword's own value back.
    document: Value,
    validators: BTreeMap<String, Validator>,
}

impl fmt::Debug for ContractSchemas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContractSchemas")
            .field("schemas", &self.validators.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ContractSchemas {
    /// The contract's schemas (`mediagen_openapi::document()`), compiled once
    /// for the process: every world of a mock reads the same contract.
    ///
    /// # Panics
    ///
    /// When the committed contract does not compile, which its own tests rule out.
    pub fn shared() -> &'static Self {
        static SHARED: std::sync::LazyLock<ContractSchemas> = std::sync::LazyLock::new(|| {
            let document = mediagen_openapi::document().expect("the committed contract is JSON");
            ContractSchemas::from_document(&document)
                .unwrap_or_else(|err| panic!("the committed contract: {err}"))
        });
        &SHARED
    }

    /// The schemas of the mock's control contract (`openapi/mock-control.json`),
    /// against which the control API checks the bodies it receives.
    ///
    /// # Panics
    ///
    /// When the committed control contract does not compile, which its tests rule out.
    pub fn control() -> &'static Self {
        static CONTROL: std::sync::LazyLock<ContractSchemas> = std::sync::LazyLock::new(|| {
            let document = mediagen_openapi::mock_control_document()
                .expect("the committed control contract is JSON");
            ContractSchemas::from_document(&document)
                .unwrap_or_else(|err| panic!("the committed control contract: {err}"))
        });
        &CONTROL
    }

    /// Compiles every `components.schemas` entry of an OpenAPI 3.1 document.
    fn from_document(openapi: &Value) -> Result<Self, String> {
        let schemas = openapi
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or("the document has no components.schemas object")?;
        // Only the schemas are kept: the rest of an OpenAPI document is not JSON
        // Schema, and `$ref`s between schemas still resolve at the same pointers.
        let document = json!({ "components": { "schemas": schemas } });
        // One registry indexes the document once; each component is then a
        // root of just `{"$ref": …}`, which keeps start-up to a few tens of ms.
        let registry = Registry::new()
            .draft(Draft::Draft202012)
            .add(CONTRACT_URI, &document)
            .and_then(|builder| builder.prepare())
            .map_err(|err| format!("the schemas cannot be indexed: {err}"))?;
        let mut validators = BTreeMap::new();
        for name in schemas.keys() {
            let reference = format!(
                "{CONTRACT_URI}#/components/schemas/{}",
                fragment_token(name)
            );
            let root = json!({ "$ref": reference });
            let validator = jsonschema::options()
                .with_draft(Draft::Draft202012)
                .should_validate_formats(true)
                .with_registry(&registry)
                .build(&root)
                .map_err(|err| format!("schema {name:?} does not compile: {err}"))?;
            validators.insert(name.clone(), validator);
        }
        // The validators own what they need; the registry only borrowed the
        // document for compiling.
        drop(registry);
        Ok(Self {
            document,
            validators,
        })
    }

    /// Validates `value` against `components.schemas.<name>`; every violation,
    /// sorted by path then keyword.
    ///
    /// An unknown name is a programming error of the caller; it gives a single
    /// violation with keyword `schema` rather than a panic.
    pub fn validate(&self, name: &str, value: &Value) -> Result<(), Vec<FieldError>> {
        let Some(validator) = self.validators.get(name) else {
            return Err(vec![FieldError::new(
                "",
                "schema",
                format!("no schema named '{name}' in the contract"),
                json!({ "schema": name }),
            )]);
        };
        if validator.is_valid(value) {
            return Ok(());
        }
        let mut errors = Vec::new();
        for error in validator.iter_errors(value) {
            self.push_ajv_errors(name, &error, &mut errors);
        }
        sort(&mut errors);
        Err(errors)
    }

    /// Translates one error of the `jsonschema` crate into Ajv's shape; a
    /// failed `anyOf`/`oneOf` carries its branches' errors, which Ajv reports
    /// before the combinator's own.
    fn push_ajv_errors(&self, name: &str, error: &ValidationError<'_>, out: &mut Vec<FieldError>) {
        let path = error.instance_path().as_str();
        let plain = |keyword: &str, message: String, params: Value| {
            FieldError::new(path, keyword, message, params)
        };
        let field = match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                out.extend(
                    unexpected
                        .iter()
                        .map(|name| FieldError::additional_property(path, name)),
                );
                return;
            }
            ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                out.extend(unexpected.iter().map(|name| {
                    plain(
                        "unevaluatedProperties",
                        "must NOT have unevaluated properties".to_owned(),
                        json!({ "unevaluatedProperty": name }),
                    )
                }));
                return;
            }
            ValidationErrorKind::AnyOf { context } => {
                for branch in context.iter().flatten() {
                    self.push_ajv_errors(name, branch, out);
                }
                plain(
                    "anyOf",
                    "must match a schema in anyOf".to_owned(),
                    json!({}),
                )
            }
            ValidationErrorKind::OneOfNotValid { context } => {
                for branch in context.iter().flatten() {
                    self.push_ajv_errors(name, branch, out);
                }
                plain(
                    "oneOf",
                    "must match exactly one schema in oneOf".to_owned(),
                    json!({ "passingSchemas": null }),
                )
            }
            ValidationErrorKind::OneOfMultipleValid { context } => {
                let passing: Vec<usize> = context
                    .iter()
                    .enumerate()
                    .filter(|(_, errors)| errors.is_empty())
                    .map(|(index, _)| index)
                    .take(2)
                    .collect();
                plain(
                    "oneOf",
                    "must match exactly one schema in oneOf".to_owned(),
                    json!({ "passingSchemas": passing }),
                )
            }
            ValidationErrorKind::Required { property } => {
                FieldError::required(path, &value_text(property))
            }
            ValidationErrorKind::Type { kind } => {
                // Ajv names the types in the schema's own order ("string,null"),
                // which the crate's type set does not keep.
                let declared = self
                    .keyword_value(name, error.evaluation_path().as_str())
                    .filter(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)));
                match (kind, declared) {
                    (TypeKind::Single(ty), _) => FieldError::type_mismatch(path, ty.as_str()),
                    (TypeKind::Multiple(_), Some(types)) => {
                        let names: Vec<&str> = types
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .collect();
                        plain(
                            "type",
                            format!("must be {}", names.join(",")),
                            json!({ "type": types }),
                        )
                    }
                    (TypeKind::Multiple(set), None) => {
                        let names: Vec<&str> = set.iter().map(|t| t.as_str()).collect();
                        plain(
                            "type",
                            format!("must be {}", names.join(",")),
                            json!({ "type": names }),
                        )
                    }
                }
            }
            ValidationErrorKind::Enum { options } => plain(
                "enum",
                "must be equal to one of the allowed values".to_owned(),
                json!({ "allowedValues": options }),
            ),
            ValidationErrorKind::Constant { expected_value } => plain(
                "const",
                "must be equal to constant".to_owned(),
                json!({ "allowedValue": expected_value }),
            ),
            ValidationErrorKind::Minimum { limit } => {
                FieldError::limit(path, "minimum", ">=", js_number(limit))
            }
            ValidationErrorKind::Maximum { limit } => {
                FieldError::limit(path, "maximum", "<=", js_number(limit))
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                FieldError::limit(path, "exclusiveMinimum", ">", js_number(limit))
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                FieldError::limit(path, "exclusiveMaximum", "<", js_number(limit))
            }
            ValidationErrorKind::MultipleOf { multiple_of } => {
                let multiple_of = js_number(&json!(multiple_of));
                plain(
                    "multipleOf",
                    format!("must be multiple of {}", number_text(&multiple_of)),
                    json!({ "multipleOf": multiple_of }),
                )
            }
            ValidationErrorKind::MinLength { limit } => {
                count_limit(path, "minLength", "fewer", *limit, "characters")
            }
            ValidationErrorKind::MaxLength { limit } => {
                count_limit(path, "maxLength", "more", *limit, "characters")
            }
            ValidationErrorKind::MinItems { limit } => {
                count_limit(path, "minItems", "fewer", *limit, "items")
            }
            ValidationErrorKind::MaxItems { limit } => {
                count_limit(path, "maxItems", "more", *limit, "items")
            }
            ValidationErrorKind::MinProperties { limit } => {
                count_limit(path, "minProperties", "fewer", *limit, "properties")
            }
            ValidationErrorKind::MaxProperties { limit } => {
                count_limit(path, "maxProperties", "more", *limit, "properties")
            }
            ValidationErrorKind::AdditionalItems { limit } => {
                count_limit(path, "additionalItems", "more", *limit as u64, "items")
            }
            ValidationErrorKind::UnevaluatedItems { unexpected } => {
                let evaluated = error
                    .instance()
                    .as_array()
                    .map_or(0, |items| items.len().saturating_sub(unexpected.len()));
                count_limit(path, "unevaluatedItems", "more", evaluated as u64, "items")
            }
            ValidationErrorKind::Format { format } => FieldError::format(path, format),
            ValidationErrorKind::Pattern { pattern } => pattern_mismatch(path, pattern),
            ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. } => {
                // The regex gave up rather than answered; to the client the
                // value still does not match the pattern.
                let pattern = self
                    .keyword_value(name, error.evaluation_path().as_str())
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                pattern_mismatch(path, pattern)
            }
            ValidationErrorKind::UniqueItems => {
                let (i, j) = error
                    .instance()
                    .as_array()
                    .and_then(|items| last_duplicate(items))
                    .unwrap_or((0, 0));
                plain(
                    "uniqueItems",
                    format!("must NOT have duplicate items (items ## {j} and {i} are identical)"),
                    json!({ "i": i, "j": j }),
                )
            }
            ValidationErrorKind::Contains => plain(
                "contains",
                "must contain at least 1 valid item(s)".to_owned(),
                json!({ "minContains": 1 }),
            ),
            ValidationErrorKind::PropertyNames { error: inner } => plain(
                "propertyNames",
                "property name must be valid".to_owned(),
                json!({ "propertyName": value_text(inner.instance()) }),
            ),
            ValidationErrorKind::Not { .. } => {
                plain("not", "must NOT be valid".to_owned(), json!({}))
            }
            ValidationErrorKind::FalseSchema => plain(
                "false schema",
                "boolean schema is false".to_owned(),
                json!({}),
            ),
            ValidationErrorKind::ContentEncoding { content_encoding } => plain(
                "contentEncoding",
                format!("must be encoded as \"{content_encoding}\""),
                json!({ "contentEncoding": content_encoding }),
            ),
            ValidationErrorKind::FromUtf8 { .. } => plain(
                "contentEncoding",
                "must be encoded text of UTF-8".to_owned(),
                json!({}),
            ),
            ValidationErrorKind::ContentMediaType { content_media_type } => plain(
                "contentMediaType",
                format!("must be of media type \"{content_media_type}\""),
                json!({ "contentMediaType": content_media_type }),
            ),
            ValidationErrorKind::Custom { keyword, message } => {
                plain(keyword, message.clone(), json!({}))
            }
            ValidationErrorKind::Referencing(err) => {
                plain("$ref", format!("can't resolve reference: {err}"), json!({}))
            }
        };
        out.push(field);
    }

    /// The schema value at an evaluation path of schema `name`'s validator,
    /// following `$ref`s the way the validator did.
    fn keyword_value(&self, name: &str, evaluation_path: &str) -> Option<&Value> {
        let mut tokens = evaluation_path.split('/').skip(1);
        // Every compiled root is a lone `$ref` to its component, so the paths
        // start with that `$ref`.
        if tokens.next()? != "$ref" {
            return None;
        }
        let mut current = self.document.pointer("/components/schemas")?.get(name)?;
        for token in tokens {
            let token = token.replace("~1", "/").replace("~0", "~");
            let reference = (token == "$ref")
                .then(|| current.get("$ref").and_then(Value::as_str))
                .flatten();
            current = match (reference, current) {
                (Some(reference), _) => self.resolve(reference)?,
                (None, Value::Object(object)) => object.get(&token)?,
                (None, Value::Array(items)) => items.get(token.parse::<usize>().ok()?)?,
                (None, _) => return None,
            };
        }
        Some(current)
    }

    /// Resolves a document-local `$ref` such as `#/components/schemas/Error`.
    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = percent_decode(reference.strip_prefix('#')?)?;
        self.document.pointer(&pointer)
    }
}

#[cfg(test)]
mod tests;
