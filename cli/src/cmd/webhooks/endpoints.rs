//! The endpoint commands: create, list, get, update, rotate, delete, test,
//! deliveries and redeliver.

use std::io::Write;

use anyhow::Context as _;
use futures::StreamExt;
use mediagen::{EventType, EventTypeFilter, WebhookEndpointRequest, WebhookEndpointUpdate};

use crate::cmd::context::Context;
use crate::output::{self, DIM, Output, Table, YELLOW};

pub async fn create(
    ctx: &Context,
    url: String,
    events: Vec<String>,
    description: Option<String>,
) -> anyhow::Result<()> {
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

pub async fn list(ctx: &Context) -> anyhow::Result<()> {
    // The service answers this list in one piece, not in pages.
    let endpoints = ctx.client().await?.webhooks().list().await?;
    let endpoints = futures::stream::iter(endpoints.into_iter().map(Ok::<_, mediagen::Error>));
    ctx.out
        .list(endpoints, |out, w, endpoints| {
            if endpoints.is_empty() {
                return writeln!(w, "no webhook endpoints");
            }
            let mut table = Table::new(["ID", "URL", "EVENTS", "STATE", "FAILURES"]);
            for endpoint in endpoints {
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
        .await
}

pub async fn get(ctx: &Context, id: String) -> anyhow::Result<()> {
    let endpoint = ctx.client().await?.webhooks().get(&id).await?;
    ctx.out
        .emit(&endpoint, |out, w| endpoint_fields(out, w, &endpoint))
}

pub async fn update(
    ctx: &Context,
    id: String,
    url: Option<String>,
    events: Vec<String>,
    description: Option<String>,
    enable: bool,
    disable: bool,
) -> anyhow::Result<()> {
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

pub async fn rotate(ctx: &Context, id: String) -> anyhow::Result<()> {
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

pub async fn delete(ctx: &Context, id: String) -> anyhow::Result<()> {
    ctx.client()
        .await?
        .webhooks()
        .delete(&id)
        .await
        .with_context(|| format!("while deleting {id}"))?;
    let value = serde_json::json!({ "id": id, "deleted": true });
    ctx.out.emit(&value, |_, w| writeln!(w, "deleted {id}"))
}

pub async fn test(ctx: &Context, id: String, event: Option<String>) -> anyhow::Result<()> {
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

pub async fn deliveries(ctx: &Context, id: String, limit: usize) -> anyhow::Result<()> {
    let attempts = ctx.client().await?.webhooks().deliveries(&id);
    ctx.out
        .list(attempts.take(limit), |out, w, attempts| {
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
            for a in attempts {
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
        .await
}

pub async fn redeliver(ctx: &Context, id: String, message_id: uuid::Uuid) -> anyhow::Result<()> {
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

fn endpoint_fields(
    out: &Output,
    w: &mut dyn Write,
    endpoint: &mediagen::WebhookEndpoint,
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
