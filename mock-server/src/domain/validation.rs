//! Checks of request bodies against the contract's schemas and of `params`
//! against the catalogue.
//!
//! The service reports a failed check as 400 `VALIDATION_ERROR` with
//! `error.details.fields[]`, whose members (`path`, `keyword`, `message`,
//! `params`) are those of Ajv's error objects. Clients may match on them, so
//! both checks here speak Ajv's dialect: the instance path as a JSON pointer
//! (the object's own path for `required` and `additionalProperties`), Ajv's
//! message texts and Ajv's `params`.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Registry, ValidationError, Validator};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::catalog::{Model, ModelParameter, ParamType};

/// One violation, with the field names and conventions of Ajv's error objects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    /// JSON pointer to the offending value; `""` is the root.
    pub path: String,
    /// The JSON Schema keyword that failed.
    pub keyword: String,
    pub message: String,
    /// Keyword arguments; always an object.
    pub params: Value,
}

impl FieldError {
    fn new(
        path: impl Into<String>,
        keyword: &str,
        message: impl Into<String>,
        params: Value,
    ) -> Self {
        Self {
            path: path.into(),
            keyword: keyword.to_owned(),
            message: message.into(),
            params,
        }
    }

    fn required(path: &str, property: &str) -> Self {
        Self::new(
            path,
            "required",
            format!("must have required property '{property}'"),
            json!({ "missingProperty": property }),
        )
    }

    fn additional_property(path: &str, property: &str) -> Self {
        Self::new(
            path,
            "additionalProperties",
            "must NOT have additional properties",
            json!({ "additionalProperty": property }),
        )
    }

    fn type_mismatch(path: &str, expected: &str) -> Self {
        Self::new(
            path,
            "type",
            format!("must be {expected}"),
            json!({ "type": expected }),
        )
    }

    fn not_allowed(path: &str, allowed: &[Value]) -> Self {
        Self::new(
            path,
            "enum",
            "must be equal to one of the allowed values",
            json!({ "allowedValues": allowed }),
        )
    }

    fn limit(path: &str, keyword: &str, comparison: &str, limit: Value) -> Self {
        Self::new(
            path,
            keyword,
            format!("must be {comparison} {}", number_text(&limit)),
            json!({ "comparison": comparison, "limit": limit }),
        )
    }

    fn format(path: &str, format: &str) -> Self {
        Self::new(
            path,
            "format",
            format!("must match format \"{format}\""),
            json!({ "format": format }),
        )
    }
}

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
    /// Compiles a validator for every schema under `components.schemas` of
    /// `mediagen_openapi::document()`.
    ///
    /// # Panics
    ///
    /// When the committed contract does not compile, which its own tests rule out.
    pub fn load() -> Self {
        let document = mediagen_openapi::document().expect("the committed contract is JSON");
        Self::from_document(&document).unwrap_or_else(|err| panic!("the committed contract: {err}"))
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

/// Checks a request's `params` against the model's parameters from the catalogue.
///
/// Each parameter is checked as if it were the JSON Schema `{type, enum,
/// minimum, maximum}` (plus `format: uuid` for a `file`), so the violations
/// read like those of the contract's schemas. Paths are `/params/<name>`;
/// unknown names and missing required parameters are reported at `/params`
/// with `additionalProperty` / `missingProperty`, as Ajv places them.
pub fn validate_params(model: &Model, params: &Map<String, Value>) -> Vec<FieldError> {
    const PARAMS: &str = "/params";
    let declared: HashMap<&str, &ModelParameter> = model
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p))
        .collect();
    let mut errors = Vec::new();
    for (name, value) in params {
        match declared.get(name.as_str()) {
            Some(parameter) => check_param(
                parameter,
                value,
                &format!("{PARAMS}/{}", pointer_token(name)),
                &mut errors,
            ),
            None => errors.push(FieldError::additional_property(PARAMS, name)),
        }
    }
    for parameter in &model.parameters {
        // A default stands in for an absent value, so only a required
        // parameter without one has to be sent.
        if parameter.required
            && parameter.default.is_none()
            && !params.contains_key(&parameter.name)
        {
            errors.push(FieldError::required(PARAMS, &parameter.name));
        }
    }
    sort(&mut errors);
    errors
}

fn check_param(parameter: &ModelParameter, value: &Value, path: &str, out: &mut Vec<FieldError>) {
    let expected = match parameter.kind {
        ParamType::String | ParamType::File => "string",
        ParamType::Integer => "integer",
        ParamType::Number => "number",
        ParamType::Boolean => "boolean",
    };
    let type_ok = match parameter.kind {
        ParamType::String | ParamType::File => value.is_string(),
        ParamType::Integer => value.as_number().is_some_and(is_whole),
        ParamType::Number => value.is_number(),
        ParamType::Boolean => value.is_boolean(),
    };
    if !type_ok {
        out.push(FieldError::type_mismatch(path, expected));
    }
    // Like Ajv, `enum` applies whatever the type, while the limits apply only
    // to numbers and the format only to strings.
    if let Some(allowed) = &parameter.allowed_values
        && !allowed.iter().any(|candidate| same_value(candidate, value))
    {
        out.push(FieldError::not_allowed(path, allowed));
    }
    if let Some(number) = value.as_f64() {
        if let Some(minimum) = parameter.minimum.filter(|&m| number < m) {
            out.push(FieldError::limit(
                path,
                "minimum",
                ">=",
                js_number(&json!(minimum)),
            ));
        }
        if let Some(maximum) = parameter.maximum.filter(|&m| number > m) {
            out.push(FieldError::limit(
                path,
                "maximum",
                "<=",
                js_number(&json!(maximum)),
            ));
        }
    }
    if let (ParamType::File, Some(text)) = (parameter.kind, value.as_str())
        && !is_uuid(text)
    {
        out.push(FieldError::format(path, "uuid"));
    }
}

/// Stable order for clients and tests; equal keys keep the order of
/// evaluation, which follows the schema.
fn sort(errors: &mut [FieldError]) {
    errors.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.keyword.cmp(&b.keyword)));
}

fn count_limit(path: &str, keyword: &str, comparison: &str, limit: u64, unit: &str) -> FieldError {
    FieldError::new(
        path,
        keyword,
        format!("must NOT have {comparison} than {limit} {unit}"),
        json!({ "limit": limit }),
    )
}

fn pattern_mismatch(path: &str, pattern: &str) -> FieldError {
    FieldError::new(
        path,
        "pattern",
        format!("must match pattern \"{pattern}\""),
        json!({ "pattern": pattern }),
    )
}

/// A JSON number is an integer for Ajv when it has no fraction: `5.0` counts.
fn is_whole(number: &serde_json::Number) -> bool {
    number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// JSON equality with JavaScript's numbers, where `5` and `5.0` are one value.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// A number as JavaScript would hold it: a whole float becomes an integer, so
/// limits read `1`, not `1.0`, in both `message` and `params`.
fn js_number(value: &Value) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    match value.as_f64() {
        Some(f) if !value.is_i64() && !value.is_u64() && f.fract() == 0.0 && f.abs() <= SAFE => {
            json!(f as i64)
        }
        _ => value.clone(),
    }
}

fn number_text(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => {
            n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string())
        }
        other => value_text(other),
    }
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The hyphenated form only, as the contract's `format: uuid` accepts.
fn is_uuid(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

/// Ajv's answer for `uniqueItems`: the highest index that repeats an earlier
/// item, and the nearest earlier one, as `(i, j)`.
fn last_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    // Keyed by text so the search stays linear on long arrays.
    let mut last_seen: HashMap<String, usize> = HashMap::new();
    let mut found = None;
    for (index, item) in items.iter().enumerate() {
        if let Some(earlier) = last_seen.insert(item.to_string(), index) {
            found = Some((index, earlier));
        }
    }
    found
}

/// Escapes a name for use as one token of a JSON pointer (RFC 6901).
fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer token made safe for a URI fragment (`{` and `}` among others).
fn fragment_token(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in pointer_token(name).bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;
    use std::time::Instant;

    use super::*;
    use crate::domain::catalog::Catalog;

    /// Compiling once per test binary keeps the suite fast.
    fn contract() -> &'static ContractSchemas {
        static SCHEMAS: OnceLock<ContractSchemas> = OnceLock::new();
        SCHEMAS.get_or_init(ContractSchemas::load)
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
    fn every_component_schema_compiles_quickly() {
        let start = Instant::now();
        let schemas = ContractSchemas::load();
        let elapsed = start.elapsed();
        println!(
            "compiled {} component schemas in {elapsed:?}",
            schemas.validators.len()
        );

        let document = mediagen_openapi::document().expect("the contract");
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
                json!({"allowedValues": [
                    "generation.completed",
                    "generation.failed",
                    "generation.*",
                    "*",
                ]})
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
}
