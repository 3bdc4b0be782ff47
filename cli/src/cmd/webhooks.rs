//! `webhooks`: endpoints, their deliveries, and `verify` for debugging signatures.

use std::io::{Read, Write};
use std::time::Duration;

use anyhow::Context as _;
use futures::{StreamExt, TryStreamExt};
use mediagen::{EventType, EventTypeFilter, WebhookEndpointRequest, WebhookEndpointUpdate};
use webhook_verify::{Webhook, WebhookError};

use super::Context;
use crate::cli::{VerifyArgs, WebhooksCommand};
use crate::error::{Exit, Failure};
use crate::output::{self, DIM, Output, Table, YELLOW};

pub async fn run(ctx: &Context, command: WebhooksCommand) -> anyhow::Result<()> {
    match command {
        WebhooksCommand::Verify(args) => verify(&ctx.out, args),
        WebhooksCommand::Listen(args) => super::listen::run(ctx, args).await,
        WebhooksCommand::Create {
            url,
            events,
            description,
        } => {
            let mut request = WebhookEndpointRequest::new(url).events(event_filters(&events));
            if let Some(description) = description {
                request = request.description(description);
            }
            let created = ctx
                .client()
                .await?
                .webhooks()
                .create(request)
                .await
                .context("while creating the endpoint")?;
            let value = serde_json::json!({
                "id": created.id,
                "url": created.url,
                "secret": created.secret.expose(),
                "eventTypes": created.event_types,
            });
            ctx.out.emit(&value, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("id", created.id.clone()),
                        ("url", created.url.clone()),
                        ("events", filters_text(&created.event_types)),
                        ("secret", created.secret.expose().to_owned()),
                    ],
                )?;
                writeln!(
                    w,
                    "\n{}",
                    out.paint(
                        YELLOW,
                        "the secret is shown only now: keep it where your receiver reads it"
                    )
                )
            })
        }
        WebhooksCommand::List => {
            let endpoints = ctx.client().await?.webhooks().list().await?;
            ctx.out.emit(&endpoints, |out, w| {
                if endpoints.is_empty() {
                    return writeln!(w, "no webhook endpoints");
                }
                let mut table = Table::new(["ID", "URL", "EVENTS", "STATE", "FAILURES"]);
                for endpoint in &endpoints {
                    let state = if endpoint.active {
                        "ACTIVE"
                    } else {
                        "DISABLED"
                    };
                    table.styled_row([
                        (endpoint.id.clone(), Default::default()),
                        (endpoint.url.clone(), Default::default()),
                        (filters_text(&endpoint.event_types), Default::default()),
                        (state.to_owned(), output::status_style(state)),
                        (endpoint.failure_count.to_string(), Default::default()),
                    ]);
                }
                table.write(out, w)
            })
        }
        WebhooksCommand::Get { id } => {
            let endpoint = ctx.client().await?.webhooks().get(&id).await?;
            ctx.out
                .emit(&endpoint, |out, w| endpoint_fields(out, w, &endpoint))
        }
        WebhooksCommand::Update {
            id,
            url,
            events,
            description,
            enable,
            disable,
        } => {
            let mut update = WebhookEndpointUpdate::new();
            if let Some(url) = url {
                update = update.url(url);
            }
            if !events.is_empty() {
                update = update.events(event_filters(&events));
            }
            if let Some(description) = description {
                update = update.description(description);
            }
            if enable || disable {
                update = update.active(enable);
            }
            let endpoint = ctx
                .client()
                .await?
                .webhooks()
                .update(&id, update)
                .await
                .context("while updating the endpoint")?;
            ctx.out
                .emit(&endpoint, |out, w| endpoint_fields(out, w, &endpoint))
        }
        WebhooksCommand::Rotate { id } => {
            let rotated = ctx
                .client()
                .await?
                .webhooks()
                .rotate_secret(&id)
                .await
                .context("while rotating the secret")?;
            // The endpoint rotated is the one asked for, whether or not the answer says.
            let value = serde_json::json!({
                "id": rotated.id.as_deref().unwrap_or(&id),
                "secret": rotated.secret.expose(),
                "rotatedAt": rotated.rotated_at,
            });
            ctx.out.emit(&value, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("id", rotated.id.clone().unwrap_or_else(|| id.clone())),
                        ("secret", rotated.secret.expose().to_owned()),
                        (
                            "rotated",
                            output::or_absent(rotated.rotated_at.as_ref(), output::time),
                        ),
                    ],
                )?;
                writeln!(
                    w,
                    "\n{}",
                    out.paint(
                        YELLOW,
                        "the old secret no longer verifies: update your receiver now"
                    )
                )
            })
        }
        WebhooksCommand::Delete { id } => {
            ctx.client()
                .await?
                .webhooks()
                .delete(&id)
                .await
                .with_context(|| format!("while deleting {id}"))?;
            let value = serde_json::json!({ "id": id, "deleted": true });
            ctx.out.emit(&value, |_, w| writeln!(w, "deleted {id}"))
        }
        WebhooksCommand::Test { id, event } => {
            let event = event.map(|name| EventType::from(name.as_str()));
            let queued = ctx
                .client()
                .await?
                .webhooks()
                .send_test(&id, event)
                .await
                .context("while sending the test event")?;
            ctx.out.emit(&queued, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("webhook-id", queued.message_id.to_string()),
                        (
                            "event",
                            output::or_absent(queued.event_type.as_ref(), ToString::to_string),
                        ),
                        (
                            "scheduled",
                            output::or_absent(queued.scheduled_at.as_ref(), output::time),
                        ),
                    ],
                )?;
                let hint = ctx.command(&format!("webhooks deliveries {id}"));
                writeln!(
                    w,
                    "\n{}",
                    out.paint(DIM, format!("see the attempt: {hint}"))
                )
            })
        }
        WebhooksCommand::Deliveries { id, limit } => {
            let attempts: Vec<_> = ctx
                .client()
                .await?
                .webhooks()
                .deliveries(&id)
                .take(limit)
                .try_collect()
                .await?;
            ctx.out.emit(&attempts, |out, w| {
                if attempts.is_empty() {
                    return writeln!(w, "no deliveries");
                }
                let mut table = Table::new([
                    "WHEN",
                    "WEBHOOK-ID",
                    "EVENT",
                    "ATTEMPT",
                    "OUTCOME",
                    "STATUS",
                    "MS",
                    "ERROR",
                ]);
                for a in &attempts {
                    let outcome = a.outcome.to_string();
                    table.styled_row([
                        (output::time(&a.attempted_at), Default::default()),
                        (a.message_id.to_string(), Default::default()),
                        (
                            output::or_absent(a.event_type.as_ref(), ToString::to_string),
                            Default::default(),
                        ),
                        (
                            output::or_absent(a.attempt, |n| n.to_string()),
                            Default::default(),
                        ),
                        (
                            outcome.clone(),
                            output::status_style(&outcome.to_uppercase()),
                        ),
                        (
                            output::or_absent(a.response_status, |s| s.to_string()),
                            Default::default(),
                        ),
                        (
                            output::or_absent(a.duration_ms, |ms| ms.to_string()),
                            Default::default(),
                        ),
                        (a.error.clone().unwrap_or_default(), Default::default()),
                    ]);
                }
                table.write(out, w)
            })
        }
        WebhooksCommand::Redeliver { id, message_id } => {
            let queued = ctx
                .client()
                .await?
                .webhooks()
                .redeliver(&id, message_id)
                .await
                .context("while queueing the redelivery")?;
            ctx.out.emit(&queued, |_, w| match &queued.scheduled_at {
                Some(at) => writeln!(w, "queued {} for {}", queued.message_id, output::time(at)),
                None => writeln!(w, "queued {}", queued.message_id),
            })
        }
    }
}

fn endpoint_fields(
    out: &Output,
    w: &mut dyn Write,
    endpoint: &mediagen::types::WebhookEndpoint,
) -> std::io::Result<()> {
    let state = if endpoint.active {
        "ACTIVE"
    } else {
        "DISABLED"
    };
    let mut pairs = vec![
        ("id", endpoint.id.clone()),
        ("url", endpoint.url.clone()),
        ("events", filters_text(&endpoint.event_types)),
        ("state", out.status(state)),
        ("failures", endpoint.failure_count.to_string()),
        ("created", output::time(&endpoint.created_at)),
    ];
    if let Some(reason) = &endpoint.disabled_reason {
        pairs.push(("disabled because", reason.clone()));
    }
    if let Some(description) = &endpoint.description {
        pairs.push(("description", description.clone()));
    }
    output::fields(out, w, &pairs)
}

/// Event names from the command line, as given: a name this version does not
/// know may be one the service added, and the service says which it accepts.
pub fn event_filters(names: &[String]) -> Vec<EventTypeFilter> {
    names
        .iter()
        .map(|name| EventTypeFilter::from(name.as_str()))
        .collect()
}

fn filters_text(filters: &[EventTypeFilter]) -> String {
    if filters.is_empty() {
        return "all".to_owned();
    }
    filters
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `webhooks verify`: checks one delivery as a receiver would, and when it fails,
/// looks for the usual causes to say which one it is.
pub fn verify(out: &Output, args: VerifyArgs) -> anyhow::Result<()> {
    let payload = match &args.payload_file {
        Some(path) => {
            std::fs::read(path).with_context(|| format!("while reading {}", path.display()))?
        }
        None => {
            let mut payload = Vec::new();
            std::io::stdin()
                .read_to_end(&mut payload)
                .context("while reading the body from stdin")?;
            payload
        }
    };
    let webhook = Webhook::new(&args.secret)
        .map_err(|err| {
            Failure::new(
                Exit::Usage,
                "INVALID_SECRET",
                format!("the secret is not usable: {err}"),
            )
            .hint("pass the endpoint's secret as shown at creation or rotation, whsec_ and all")
        })?
        .with_tolerance(Duration::from_secs(args.tolerance));
    let now = args.now.unwrap_or_else(|| chrono::Utc::now().timestamp());
    let result = webhook.verify_parts_at(&payload, &args.id, &args.timestamp, &args.signature, now);
    let err = match result {
        Ok(()) => {
            return if out.is_json() {
                out.emit(&serde_json::json!({ "valid": true }), |_, _| Ok(()))
            } else {
                out.plain("valid")
            };
        }
        Err(err) => err,
    };
    let hint = diagnose(&webhook, &args, &payload, &err);
    let code = match err {
        WebhookError::InvalidSignature => "INVALID_SIGNATURE",
        WebhookError::TimestampTooOldError | WebhookError::FutureTimestampError => {
            "TIMESTAMP_OUT_OF_TOLERANCE"
        }
        WebhookError::InvalidTimestamp => "INVALID_TIMESTAMP",
        _ => "INVALID_WEBHOOK",
    };
    let mut failure = Failure::new(Exit::Other, code, format!("invalid: {err}"));
    failure.hint = hint;
    Err(failure.into())
}

/// The likely cause of a failed verification, found by retrying with each usual
/// mistake undone.
fn diagnose(
    webhook: &Webhook,
    args: &VerifyArgs,
    payload: &[u8],
    err: &WebhookError,
) -> Option<String> {
    let ignoring_time = |body: &[u8]| {
        webhook
            .verify_parts_ignoring_timestamp(body, &args.id, &args.timestamp, &args.signature)
            .is_ok()
    };
    match err {
        WebhookError::TimestampTooOldError | WebhookError::FutureTimestampError => {
            let skew = args.timestamp.parse::<i64>().ok().map(|ts| {
                let now = args.now.unwrap_or_else(|| chrono::Utc::now().timestamp());
                now - ts
            });
            let signed = if ignoring_time(payload) {
                "the signature itself is right, "
            } else {
                ""
            };
            Some(match skew {
                Some(skew) => format!(
                    "{signed}but the timestamp is {} s {} the clock here (tolerance {} s): check this \
                     machine's clock, or pass --now for a captured delivery",
                    skew.abs(),
                    if skew > 0 { "behind" } else { "ahead of" },
                    args.tolerance
                ),
                None => format!("{signed}but the timestamp is out of tolerance"),
            })
        }
        WebhookError::InvalidSignature => {
            let trimmed = payload.trim_ascii_end();
            if trimmed.len() != payload.len() && ignoring_time(trimmed) {
                return Some(
                    "the body has trailing whitespace or a newline the signed body did not have \
                     (echo adds one): pass the raw bytes, with printf or --payload-file"
                        .to_owned(),
                );
            }
            if !args.secret.starts_with("whsec_") {
                return Some("secrets start with whsec_: check you passed the whole secret".to_owned());
            }
            Some(
                "the signature was made with another secret or over other bytes: use the current \
                 secret (a rotation invalidates the old one at once) and the body exactly as \
                 received, before any JSON parsing"
                    .to_owned(),
            )
        }
        WebhookError::MissingHeader(_) | WebhookError::InvalidHeader(_) => {
            Some("pass the three headers webhook-id, webhook-timestamp and webhook-signature as received".to_owned())
        }
        WebhookError::InvalidTimestamp => Some("webhook-timestamp is Unix seconds, such as 1700000000".to_owned()),
        _ => None,
    }
}
