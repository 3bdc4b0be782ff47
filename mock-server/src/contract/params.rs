//! `params` checked against the catalogue's parameters of the model, reported in
//! the same dialect as the schema checks.

use serde_json::{Map, Value, json};

use super::field::{FieldError, is_uuid, is_whole, js_number, pointer_token, same_value, sort};
use crate::domain::catalog::{Model, ModelParameter, ParamType};

/// Checks a request's `params` against the model's parameters from the catalogue.
///
/// Each parameter is checked as if it were the JSON Schema `{type, enum,
/// minimum, maximum}` (plus `format: uuid` for a `file`), so the violations
/// read like those of the contract's schemas. Paths are `/params/<name>`;
/// unknown names and missing required parameters are reported at `/params`
/// with `additionalProperty` / `missingProperty`, as Ajv places them.
pub fn validate_params(model: &Model, params: &Map<String, Value>) -> Vec<FieldError> {
    const PARAMS: &str = "/params";
    let mut errors = Vec::new();
    for (name, value) in params {
        // A model declares a handful of parameters: a scan is cheaper than a
        // map built for each create.
        match model.parameters.iter().find(|p| p.name == *name) {
            Some(parameter) => check_param(
                parameter,
                value,
                || format!("{PARAMS}/{}", pointer_token(name)),
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

/// Checks one parameter's value; `path` writes its place, which only an
/// error needs.
fn check_param(
    parameter: &ModelParameter,
    value: &Value,
    path: impl Fn() -> String,
    out: &mut Vec<FieldError>,
) {
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
        out.push(FieldError::type_mismatch(&path(), expected));
    }
    // Like Ajv, `enum` applies whatever the type, while the limits apply only
    // to numbers and the format only to strings.
    if let Some(allowed) = &parameter.allowed_values
        && !allowed.iter().any(|candidate| same_value(candidate, value))
    {
        out.push(FieldError::not_allowed(&path(), allowed));
    }
    if let Some(number) = value.as_f64() {
        if let Some(minimum) = parameter.minimum.filter(|&m| number < m) {
            out.push(FieldError::limit(
                &path(),
                "minimum",
                ">=",
                js_number(&json!(minimum)),
            ));
        }
        if let Some(maximum) = parameter.maximum.filter(|&m| number > m) {
            out.push(FieldError::limit(
                &path(),
                "maximum",
                "<=",
                js_number(&json!(maximum)),
            ));
        }
    }
    if let (ParamType::File, Some(text)) = (parameter.kind, value.as_str())
        && !is_uuid(text)
    {
        out.push(FieldError::format(&path(), "uuid"));
    }
}
