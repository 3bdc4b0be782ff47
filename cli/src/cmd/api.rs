//! `mediagen api METHOD PATH`: any request of the service, as `gh api` is for GitHub.
//! It goes through the SDK's `Client::request`, so it has the key, the retry rule
//! and the pacing of every other command, and its errors the same exit codes.

use std::io::Read;
use std::path::Path;

use anyhow::Context as _;
use mediagen_openapi::operations::OperationId;
use mediagen_openapi::policy::Repeat;
use reqwest::Method;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::context::Context;
use crate::cli::CommandId;
use crate::cli::api::ApiArgs;
use crate::error::{Exit, Failure};
use crate::sdk_error::may_have_acted;

pub async fn run(ctx: &Context, args: ApiArgs) -> anyhow::Result<()> {
    let ApiArgs {
        method,
        mut path,
        fields,
        input,
        headers,
    } = args;
    let body = match &input {
        Some(file) => Some(read_input(file)?),
        None if fields.is_empty() => None,
        None if matches!(method, Method::GET | Method::HEAD) => {
            path = with_query(&path, &fields);
            None
        }
        None => Some(object_of(&fields)?),
    };
    // The SDK gives every create a key of its own; this one is chosen here so that a
    // create left without a clear answer can tell it, and running the command again
    // with it returns the generation the first run made instead of paying for a
    // second (rule 7 of POST /v1/generations). Other requests that may act (a
    // top-up, an invoice) are never repeated by the SDK, and end in OUTCOME_UNKNOWN.
    let key = (takes_a_key(&method, &path)
        && !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("idempotency-key")))
    .then(|| Uuid::new_v4().to_string());

    // The catalog answers without a key; anything else answers 401 without one,
    // which is told like every missing key.
    let client = ctx.public_client().await?;
    let mut call = client.request(method.clone(), path.clone(), body);
    for (name, value) in &headers {
        call = call.header(name, value);
    }
    if let Some(key) = &key {
        call = call.header("Idempotency-Key", key);
    }
    let err = match call.await {
        Ok(answer) => {
            return match serde_json::from_slice::<Value>(&answer.body) {
                Ok(value) => ctx.out.answer(&value),
                // A document (a PDF), or no body at all: as it came.
                Err(_) => ctx.out.bytes(&answer.body),
            };
        }
        Err(err) => err,
    };
    let failure = match &key {
        Some(key) if may_have_acted(&err) => Failure::unanswered_create(
            &err,
            key,
            &format!("run the same command with --header 'Idempotency-Key: {key}'"),
        ),
        _ => Failure::from(&err),
    }
    .hinted(CommandId::Api);
    // The service's answer is the output, whatever it says; for scripts the error
    // report prints the envelope already.
    if matches!(err, mediagen::Error::Api(_)) && !ctx.out.is_json() {
        ctx.out.answer(&failure.envelope())?;
    }
    Err(anyhow::Error::new(failure).context(format!("while sending {method} {path}")))
}

/// Whether the contract says the request carries an `Idempotency-Key`
/// (`x-repeat: keyed`): a create, which starts a paid generation.
fn takes_a_key(method: &Method, path: &str) -> bool {
    OperationId::from_path(method.as_str(), path).is_some_and(|op| op.repeat() == Repeat::Keyed)
}

/// The body from a file, or from stdin for `-`.
fn read_input(file: &Path) -> anyhow::Result<Value> {
    let (name, bytes) = if file == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("while reading the body from stdin")?;
        ("stdin".to_owned(), bytes)
    } else {
        let bytes =
            std::fs::read(file).with_context(|| format!("while reading {}", file.display()))?;
        (file.display().to_string(), bytes)
    };
    serde_json::from_slice(&bytes).map_err(|err| {
        Failure::new(
            Exit::Usage,
            "INVALID_INPUT",
            format!("the body from {name} is not JSON: {err}"),
        )
        .into()
    })
}

/// `--field` pairs as a JSON object; `a.b=1` sets `b` inside the object `a`.
fn object_of(fields: &[(String, Value)]) -> anyhow::Result<Value> {
    let mut body = Map::new();
    for (key, value) in fields {
        let (parents, last) = match key.rsplit_once('.') {
            Some((parents, last)) => (Some(parents), last),
            None => (None, key.as_str()),
        };
        let mut object = &mut body;
        for part in parents.into_iter().flat_map(|parents| parents.split('.')) {
            let inner = object
                .entry(part)
                .or_insert_with(|| Value::Object(Map::new()));
            object = match inner {
                Value::Object(inner) => inner,
                _ => {
                    return Err(Failure::new(
                        Exit::Usage,
                        "USAGE_ERROR",
                        format!(
                            "--field {key}: `{part}` has a value already, so it holds no fields"
                        ),
                    )
                    .into());
                }
            };
        }
        object.insert(last.to_owned(), value.clone());
    }
    Ok(Value::Object(body))
}

/// `path` with the fields as query parameters after the query it has.
fn with_query(path: &str, fields: &[(String, Value)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (key, value) in fields {
        match value {
            Value::String(text) => query.append_pair(key, text),
            other => query.append_pair(key, &other.to_string()),
        };
    }
    let joint = if path.contains('?') { '&' } else { '?' };
    format!("{path}{joint}{}", query.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect()
    }

    #[test]
    fn fields_make_an_object_with_nested_keys() {
        let body = object_of(&fields(&[
            ("modelSlug", json!("flux-schnell")),
            ("params.aspect_ratio", json!("16:9")),
            ("params.steps", json!(4)),
        ]))
        .unwrap();
        assert_eq!(
            body,
            json!({"modelSlug": "flux-schnell", "params": {"aspect_ratio": "16:9", "steps": 4}})
        );
        assert!(object_of(&fields(&[("a", json!(1)), ("a.b", json!(2))])).is_err());
    }

    #[test]
    fn fields_of_a_get_are_its_query() {
        let limit = fields(&[("limit", json!(5)), ("status", json!("FAILED"))]);
        assert_eq!(
            with_query("/v1/generations", &limit),
            "/v1/generations?limit=5&status=FAILED"
        );
        let model = fields(&[("model", json!("a b&c"))]);
        assert_eq!(
            with_query("/v1/generations?limit=5", &model),
            "/v1/generations?limit=5&model=a+b%26c"
        );
    }

    #[test]
    fn only_post_v1_generations_takes_a_key() {
        assert!(takes_a_key(&Method::POST, "/v1/generations"));
        assert!(takes_a_key(&Method::POST, "/v1/generations/?x=1"));
        assert!(!takes_a_key(&Method::POST, "/v1/generations/estimate"));
        assert!(!takes_a_key(&Method::GET, "/v1/generations"));
        assert!(!takes_a_key(&Method::POST, "/v1/billing/topup"));
    }
}
