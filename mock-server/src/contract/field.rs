//! Violations in Ajv's dialect: `details.fields[]` of a `VALIDATION_ERROR`, with
//! Ajv's instance paths, messages and `params`.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};

/// One violation, with the field names and conventions of Ajv's error objects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    /// JSON pointer to the offending value; `""` is the root.
    pub path: String,
    /// The JSON Schema keyword that failed.
    pub keyword: String,
    /// Human-readable text, as Ajv writes it.
    pub message: String,
    /// Keyword arguments; always an object.
    pub params: Value,
}

impl FieldError {
    /// A violation at the JSON pointer `path` of keyword `keyword`.
    pub fn new(
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

    /// The values of the closed set an `enum` violation names, as text.
    pub fn allowed_values(&self) -> Option<Vec<String>> {
        if self.keyword != "enum" {
            return None;
        }
        let values = self.params.get("allowedValues")?.as_array()?;
        Some(
            values
                .iter()
                .map(|value| match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect(),
        )
    }

    pub(super) fn required(path: &str, property: &str) -> Self {
        Self::new(
            path,
            "required",
            format!("must have required property '{property}'"),
            json!({ "missingProperty": property }),
        )
    }

    pub(super) fn additional_property(path: &str, property: &str) -> Self {
        Self::new(
            path,
            "additionalProperties",
            "must NOT have additional properties",
            json!({ "additionalProperty": property }),
        )
    }

    pub(super) fn type_mismatch(path: &str, expected: &str) -> Self {
        Self::new(
            path,
            "type",
            format!("must be {expected}"),
            json!({ "type": expected }),
        )
    }

    pub(super) fn not_allowed(path: &str, allowed: &[Value]) -> Self {
        Self::new(
            path,
            "enum",
            "must be equal to one of the allowed values",
            json!({ "allowedValues": allowed }),
        )
    }

    pub(super) fn limit(path: &str, keyword: &str, comparison: &str, limit: Value) -> Self {
        Self::new(
            path,
            keyword,
            format!("must be {comparison} {}", number_text(&limit)),
            json!({ "comparison": comparison, "limit": limit }),
        )
    }

    pub(super) fn format(path: &str, format: &str) -> Self {
        Self::new(
            path,
            "format",
            format!("must match format \"{format}\""),
            json!({ "format": format }),
        )
    }
}

/// Stable order for clients and tests; equal keys keep the order of
/// evaluation, which follows the schema.
pub(super) fn sort(errors: &mut [FieldError]) {
    errors.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.keyword.cmp(&b.keyword)));
}

pub(super) fn count_limit(
    path: &str,
    keyword: &str,
    comparison: &str,
    limit: u64,
    unit: &str,
) -> FieldError {
    FieldError::new(
        path,
        keyword,
        format!("must NOT have {comparison} than {limit} {unit}"),
        json!({ "limit": limit }),
    )
}

pub(super) fn pattern_mismatch(path: &str, pattern: &str) -> FieldError {
    FieldError::new(
        path,
        "pattern",
        format!("must match pattern \"{pattern}\""),
        json!({ "pattern": pattern }),
    )
}

/// A JSON number is an integer for Ajv when it has no fraction: `5.0` counts.
pub(super) fn is_whole(number: &serde_json::Number) -> bool {
    number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// JSON equality with JavaScript's numbers, where `5` and `5.0` are one value.
pub(super) fn same_value(a: &Value, b: &Value) -> bool {
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
pub(super) fn js_number(value: &Value) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    match value.as_f64() {
        Some(f) if !value.is_i64() && !value.is_u64() && f.fract() == 0.0 && f.abs() <= SAFE => {
            json!(f as i64)
        }
        _ => value.clone(),
    }
}

pub(super) fn number_text(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => {
            n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string())
        }
        other => value_text(other),
    }
}

pub(super) fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The hyphenated form only, as the contract's `format: uuid` accepts.
pub(super) fn is_uuid(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

/// Ajv's answer for `uniqueItems`: the highest index that repeats an earlier
/// item, and the nearest earlier one, as `(i, j)`.
pub(super) fn last_duplicate(items: &[Value]) -> Option<(usize, usize)> {
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
pub(super) fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer token made safe for a URI fragment (`{` and `}` among others).
pub(super) fn fragment_token(name: &str) -> String {
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

pub(super) fn percent_decode(text: &str) -> Option<String> {
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
