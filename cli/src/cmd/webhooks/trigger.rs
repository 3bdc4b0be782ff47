//! `webhooks trigger`: a signed delivery of any event the contract defines, to test a
//! receiver without the service or a paid generation. The body is the contract's
//! example for the event, with `--set` overrides checked against its schema before
//! anything is sent; the answer is told with what the service would do with it.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::Serialize;
use serde_json::{Value, json};

use super::super::context::Context;
use super::super::mock_control::{Message, Messages, MockControl};
use crate::cli::webhooks::TriggerArgs;
use crate::error::{Exit, Failure};
use crate::output::{self, DIM};

/// The document's delivery rule 1: no answer within 10 seconds is a failure.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

pub async fn run(ctx: &Context, args: TriggerArgs) -> anyhow::Result<()> {
    let contract = Events::of_contract()?;
    let event = contract.event(&args.event)?;
    let now = chrono::Utc::now();
    let mut body = event.example.clone();
    // A fresh event each time, as the service makes them.
    body["id"] = json!(format!(
        "evt_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..24]
    ));
    body["created_at"] = json!(now.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
    for (path, value) in args.sets {
        event.set(&mut body, &path, value)?;
    }
    event.check(&body)?;
    let told = match (args.to, args.endpoint) {
        (Some(url), _) => {
            let secret = args.secret.unwrap_or_default();
            let webhook_id = args
                .webhook_id
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let timestamp = args.timestamp.unwrap_or_else(|| now.timestamp());
            deliver(&url, &secret, &webhook_id, timestamp, &body).await?
        }
        (None, Some(endpoint)) => {
            let mock = MockControl::new(&ctx.mock_base_url().await?, args.token)?;
            through_mock(&mock, &endpoint, &body).await?
        }
        (None, None) => unreachable!("clap requires --to or --endpoint"),
    };
    ctx.out.emit(&told, |out, w| {
        let answer = match (told.status, &told.error) {
            (Some(status), _) => out.paint(output::http_status_style(u64::from(status)), status),
            (None, Some(error)) => out.paint(output::RED, error),
            (None, None) => "-".to_owned(),
        };
        output::fields(
            out,
            w,
            &[
                ("event", format!("{} {}", told.event, told.event_id)),
                ("to", told.to.clone()),
                ("webhook-id", told.webhook_id.clone()),
                ("answer", format!("{answer} in {} ms", told.duration_ms)),
                ("outcome", told.outcome.to_owned()),
            ],
        )?;
        writeln!(w, "\n{}", out.paint(DIM, &told.service))
    })
}

/// What a delivery came to.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Told {
    event: String,
    event_id: String,
    to: String,
    webhook_id: String,
    /// The receiver's status; none when no answer came.
    status: Option<u16>,
    /// Why no answer came.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    duration_ms: u64,
    /// `delivered`, `failed` (retried) or `disabled`.
    outcome: &'static str,
    /// What the service does with that answer, in words.
    service: String,
    body: Value,
}

/// The document's rules for an answer ("Delivery and retries").
fn outcome(status: Option<u16>) -> (&'static str, String) {
    match status {
        Some(410) => (
            "disabled",
            "410: the service disables the endpoint automatically; no more deliveries until it \
             is enabled again (mediagen webhooks update ID --enable)"
                .to_owned(),
        ),
        Some(status) if status >= 400 => ("failed", retried(&format!("{status}"))),
        Some(status) => (
            "delivered",
            format!(
                "{status}: acknowledged; a receiver answers 2xx quickly and skips duplicates by \
                 webhook-id (the document counts only 400 and above, or no answer, as a failure)"
            ),
        ),
        None => ("failed", retried("no answer within 10 s")),
    }
}

fn retried(why: &str) -> String {
    format!(
        "{why}: a failed delivery; the service retries the same webhook-id up to 15 times with \
         exponential back-off from 5 seconds up to 3 days, and deactivates the endpoint after \
         720 consecutive failures"
    )
}

/// POSTs the signed delivery to `url`, as the service does.
async fn deliver(
    url: &url::Url,
    secret: &str,
    webhook_id: &str,
    timestamp: i64,
    body: &Value,
) -> anyhow::Result<Told> {
    let signer = webhook_verify::Webhook::new(secret).map_err(|err| {
        Failure::new(Exit::Usage, "USAGE_ERROR", format!("--secret: {err}")).hint(
            "a signing secret is whsec_ followed by base64, as `mediagen webhooks create` shows it",
        )
    })?;
    let bytes = serde_json::to_vec(body)?;
    let signature = signer.sign(webhook_id, timestamp, &bytes)?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(ANSWER_WITHIN)
        .build()?;
    let started = Instant::now();
    let answer = client
        .post(url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("webhook-id", webhook_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(bytes)
        .send()
        .await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, error) = match answer {
        Ok(response) => (Some(response.status().as_u16()), None),
        Err(err) if err.is_timeout() => (None, Some("no answer within 10 s".to_owned())),
        Err(err) => (None, Some(format!("{:#}", anyhow::Error::new(err)))),
    };
    let (outcome, service) = outcome(status);
    Ok(Told {
        event: body["type"].as_str().unwrap_or_default().to_owned(),
        event_id: body["id"].as_str().unwrap_or_default().to_owned(),
        to: url.to_string(),
        webhook_id: webhook_id.to_owned(),
        status,
        error,
        duration_ms,
        outcome,
        service,
        body: body.clone(),
    })
}

/// Asks the mock to deliver `body` to its endpoint through its own delivery path
/// (`POST /_mock/deliveries`), and follows its journal (`GET /_mock/events`, opened
/// first so that nothing is missed) for the first attempt.
async fn through_mock(mock: &MockControl, endpoint: &str, body: &Value) -> anyhow::Result<Told> {
    const NO_ENDPOINT: &str = "--endpoint is an endpoint of the mock at --base-url (a mock's \
                               or a world's address), as `mediagen webhooks list` shows them";
    let journal = mock
        .send(
            mock.get("/_mock/events")
                .header(reqwest::header::ACCEPT, "text/event-stream"),
            "--base-url must be a mock's address, or a world's baseUrl",
        )
        .await?;
    let queued: Value = mock
        .send(
            mock.post("/_mock/deliveries")
                .json(&json!({ "endpointId": endpoint, "payload": body })),
            NO_ENDPOINT,
        )
        .await?
        .json()
        .await
        .context("while reading the mock's answer")?;
    let message_id = queued["messageId"].as_str().unwrap_or_default().to_owned();
    // The mock's worker sends the first attempt at once, unless its clock is manual.
    let attempt = tokio::time::timeout(
        ANSWER_WITHIN + Duration::from_secs(5),
        first_attempt(Messages::of(journal), &message_id),
    )
    .await
    .map_err(|_| {
        anyhow::anyhow!(
            "the mock queued message {message_id} but made no attempt within 15 s (is its \
             clock manual? advance it)"
        )
    })??;
    let status = attempt["responseStatus"]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok());
    let (outcome, service) = outcome(status);
    Ok(Told {
        event: body["type"].as_str().unwrap_or_default().to_owned(),
        event_id: body["id"].as_str().unwrap_or_default().to_owned(),
        to: format!("endpoint {endpoint} of the mock at {}", mock.base_url()),
        webhook_id: message_id,
        status,
        error: attempt["error"].as_str().map(str::to_owned),
        duration_ms: attempt["durationMs"].as_u64().unwrap_or_default(),
        outcome,
        service: format!(
            "{service}; the mock did so (message \"{}\")",
            attempt["state"].as_str().unwrap_or_default()
        ),
        body: body.clone(),
    })
}

/// The journal's first `attempt` event of message `message_id`.
async fn first_attempt(mut journal: Messages, message_id: &str) -> anyhow::Result<Value> {
    while let Some(message) = journal.next().await? {
        let Message::Data(data) = message else {
            continue;
        };
        let Ok(event) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if event["type"] == "attempt" && event["messageId"] == message_id {
            return Ok(event);
        }
    }
    anyhow::bail!("the mock closed its journal before it made an attempt of message {message_id}")
}

/// The contract's webhooks: each event's example body and schema.
struct Events {
    document: Value,
}

/// One event of the contract.
struct Event<'a> {
    name: String,
    example: Value,
    /// The body's schema, `$ref`s into `components`.
    schema: &'a Value,
    components: &'a Value,
}

impl Events {
    fn of_contract() -> anyhow::Result<Self> {
        Ok(Self {
            document: mediagen_openapi::document()?,
        })
    }

    fn event(&self, name: &str) -> anyhow::Result<Event<'_>> {
        let webhooks = self.document["webhooks"].as_object();
        let Some(operation) = webhooks.and_then(|all| all.get(name)) else {
            let mut known: Vec<&str> = webhooks
                .map(|all| all.keys().map(String::as_str).collect())
                .unwrap_or_default();
            known.sort_unstable();
            return Err(Failure::new(
                Exit::Usage,
                "USAGE_ERROR",
                format!(
                    "no event `{name}` in the contract; it defines {}",
                    known.join(", ")
                ),
            )
            .detail("allowedValues", known)
            .into());
        };
        let content = &operation["post"]["requestBody"]["content"]["application/json"];
        Ok(Event {
            name: name.to_owned(),
            example: content["example"].clone(),
            schema: &content["schema"],
            components: &self.document["components"],
        })
    }
}

/// A step of a `--set` path: a member or an index.
#[derive(Debug, PartialEq)]
enum Step<'p> {
    Member(&'p str),
    Index(usize),
}

/// `data.generation.output_urls[0]` as its steps.
fn steps(path: &str) -> Result<Vec<Step<'_>>, String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (member, indexes) = part
            .split_once('[')
            .map_or((part, ""), |(m, rest)| (m, rest));
        if member.is_empty() {
            return Err(format!("`{path}` has an empty member name"));
        }
        steps.push(Step::Member(member));
        if !indexes.is_empty() {
            for index in format!("[{indexes}").split('[').skip(1) {
                let index = index
                    .strip_suffix(']')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| {
                        format!("`{path}`: an index is a whole number in brackets, such as [0]")
                    })?;
                steps.push(Step::Index(index));
            }
        }
    }
    Ok(steps)
}

impl Event<'_> {
    /// The schema `schema` stands for, its `$ref` followed.
    fn resolved<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut schema = schema;
        while let Some(reference) = schema["$ref"].as_str() {
            match reference
                .strip_prefix("#/components/")
                .and_then(|pointer| self.components.pointer(&format!("/{pointer}")))
            {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// Sets `path` of `body` to `value`, after checking that the event's schema has
    /// that path: an unknown member is an error that names the known ones.
    fn set(&self, body: &mut Value, path: &str, value: Value) -> anyhow::Result<()> {
        let usage = |message: String| -> anyhow::Error {
            Failure::new(
                Exit::Usage,
                "USAGE_ERROR",
                format!("--set {path}: {message}"),
            )
            .into()
        };
        let steps = steps(path).map_err(usage)?;
        let mut schema = self.resolved(self.schema);
        let mut at = body;
        let mut walked = String::new();
        for step in &steps {
            match step {
                Step::Member(name) => {
                    let members = schema["properties"].as_object();
                    let Some(member) = members.and_then(|m| m.get(*name)) else {
                        let mut known: Vec<&str> = members
                            .map(|m| m.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        // In one order whatever order the document's map keeps.
                        known.sort_unstable();
                        let place = if walked.is_empty() {
                            "the body".to_owned()
                        } else {
                            format!("`{walked}`")
                        };
                        return Err(usage(if known.is_empty() {
                            format!("{place} has no members in the {} event", self.name)
                        } else {
                            format!(
                                "{place} of the {} event has no member `{name}`; it has {}",
                                self.name,
                                known.join(", ")
                            )
                        }));
                    };
                    schema = self.resolved(member);
                    if !at.is_object() {
                        *at = json!({});
                    }
                    at = at
                        .as_object_mut()
                        .map(|object| object.entry((*name).to_owned()).or_insert(Value::Null))
                        .expect("an object");
                    walked = if walked.is_empty() {
                        (*name).to_owned()
                    } else {
                        format!("{walked}.{name}")
                    };
                }
                Step::Index(index) => {
                    if schema["items"].is_null() {
                        return Err(usage(format!("`{walked}` is not a list")));
                    }
                    schema = self.resolved(&schema["items"]);
                    if !at.is_array() {
                        *at = json!([]);
                    }
                    let list = at.as_array_mut().expect("an array");
                    if *index > list.len() {
                        return Err(usage(format!(
                            "`{walked}` has {} items: an index goes up to {} (the next one adds an item)",
                            list.len(),
                            list.len()
                        )));
                    }
                    if *index == list.len() {
                        list.push(Value::Null);
                    }
                    at = &mut list[*index];
                    walked = format!("{walked}[{index}]");
                }
            }
        }
        *at = value;
        Ok(())
    }

    /// Checks the whole body against the event's schema: a mistyped value is told
    /// with its path, before anything is sent.
    fn check(&self, body: &Value) -> anyhow::Result<()> {
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": self.schema["$ref"],
            "components": self.components,
        });
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .map_err(|err| anyhow::anyhow!("the contract's schema of {}: {err}", self.name))?;
        let wrong: Vec<String> = validator
            .iter_errors(body)
            .map(|err| {
                let at = err.instance_path().to_string();
                let at = at.trim_start_matches('/').replace('/', ".");
                format!("{}: {err}", if at.is_empty() { "the body" } else { &at })
            })
            .collect();
        if wrong.is_empty() {
            return Ok(());
        }
        Err(Failure::new(
            Exit::Usage,
            "VALIDATION_ERROR",
            format!(
                "the {} event does not match the contract's schema: {}",
                self.name,
                wrong.join("; ")
            ),
        )
        .hint("nothing was sent; fix the --set values")
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_members_and_indexes() {
        assert_eq!(
            steps("data.generation.output_urls[1]").unwrap(),
            [
                Step::Member("data"),
                Step::Member("generation"),
                Step::Member("output_urls"),
                Step::Index(1)
            ]
        );
        assert!(steps("data..x").is_err());
        assert!(steps("data.urls[x]").is_err());
    }

    #[test]
    fn each_answer_gets_the_documents_outcome() {
        assert_eq!(outcome(Some(204)).0, "delivered");
        assert_eq!(outcome(Some(410)).0, "disabled");
        assert_eq!(outcome(Some(500)).0, "failed");
        assert_eq!(outcome(Some(404)).0, "failed");
        assert_eq!(outcome(None).0, "failed");
    }
}
