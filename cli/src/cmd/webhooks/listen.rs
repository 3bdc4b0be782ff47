//! `webhooks listen`: a receiver on this machine that verifies each delivery,
//! answers at once, skips retries of a message it has seen, and prints the events.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use mediagen::{WebhookEndpointRequest, WebhookEvent, WebhookVerifier};
use tokio::sync::mpsc;

use super::event_filters;
use crate::cli::ListenArgs;
use crate::cmd::Context;
use crate::output::{self, DIM, GREEN, RED, YELLOW};
use crate::signal::Signals;

/// What the handler saw, passed to the printer so that answering never waits on it.
#[derive(Debug)]
enum Received {
    Event {
        message_id: String,
        timestamp: i64,
        event: WebhookEvent,
        body: Bytes,
    },
    Duplicate {
        message_id: String,
    },
    Rejected {
        reason: String,
    },
}

#[derive(Debug)]
struct Receiver {
    verifier: WebhookVerifier,
    seen: Mutex<HashSet<String>>,
    tx: mpsc::UnboundedSender<Received>,
}

pub async fn run(ctx: &Context, args: ListenArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("while binding 127.0.0.1:{}", args.port))?;
    let addr = listener.local_addr()?;

    let mut registered = None;
    let verifier = match &args.secret {
        Some(secret) => WebhookVerifier::new(secret)?,
        None => {
            let url = args
                .public_url
                .clone()
                .unwrap_or_else(|| format!("http://{addr}/"));
            let request = WebhookEndpointRequest::new(&url).events(event_filters(&args.events));
            let created = ctx
                .client()
                .await?
                .webhooks()
                .create(request)
                .await
                .context("while registering the endpoint")?;
            ctx.out
                .note(format!("registered endpoint {} for {url}", created.id));
            registered = Some(created.id.clone());
            created.secret.verifier()?
        }
    };

    // Listening before the address is told, so a signal sent as soon as it is seen stops us.
    let stop = Signals::interrupt_or_terminate()?;
    let (tx, rx) = mpsc::unbounded_channel();
    let receiver = Arc::new(Receiver {
        verifier,
        seen: Mutex::new(HashSet::new()),
        tx,
    });
    let app = Router::new().fallback(receive).with_state(receiver);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                stop_rx.await.ok();
            })
            .await
    });
    ctx.out.note(format!(
        "listening on http://{addr}/ · {}",
        if ctx.out.interactive() {
            "Ctrl-C to stop"
        } else {
            "SIGINT or SIGTERM to stop"
        }
    ));

    let printed = print_events(ctx, rx, stop, args.max_events).await;
    stop_tx.send(()).ok();
    // In-flight answers are 2xx already sent; give the server a moment to close.
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .ok();
    if let Some(id) = registered {
        ctx.client()
            .await?
            .webhooks()
            .delete(&id)
            .await
            .with_context(|| format!("while deleting the endpoint {id}; delete it with `mediagen webhooks delete {id}`"))?;
        ctx.out.note(format!("deleted endpoint {id}"));
    }
    printed
}

/// Prints what arrives until `max` events, Ctrl-C or SIGTERM.
async fn print_events(
    ctx: &Context,
    mut rx: mpsc::UnboundedReceiver<Received>,
    mut stop: Signals,
    max: Option<usize>,
) -> anyhow::Result<()> {
    let mut events = 0;
    while max.is_none_or(|max| events < max) {
        let received = tokio::select! {
            received = rx.recv() => received,
            () = stop.recv() => None,
        };
        let Some(received) = received else { break };
        match received {
            Received::Event {
                message_id,
                timestamp,
                event,
                body,
            } => {
                events += 1;
                print_event(ctx, &message_id, timestamp, &event, &body)?;
            }
            Received::Duplicate { message_id } => {
                ctx.out.note(ctx.out.paint_err(
                    DIM,
                    format!("skipped a retry of {message_id}, already received"),
                ));
            }
            Received::Rejected { reason } => {
                ctx.out.note(format!(
                    "{} {reason}",
                    ctx.out.paint_err(RED, "rejected (400):")
                ));
            }
        }
    }
    Ok(())
}

fn print_event(
    ctx: &Context,
    message_id: &str,
    timestamp: i64,
    event: &WebhookEvent,
    body: &[u8],
) -> anyhow::Result<()> {
    if ctx.out.is_json() {
        let payload: serde_json::Value = serde_json::from_slice(body)?;
        return ctx.out.json_line(&serde_json::json!({
            "webhookId": message_id,
            "timestamp": timestamp,
            "type": event.event_type(),
            "payload": payload,
        }));
    }
    let when = chrono::DateTime::from_timestamp(timestamp, 0)
        .map(|t| output::time(&t))
        .unwrap_or_default();
    let detail = match event {
        WebhookEvent::GenerationCompleted {
            generation: done, ..
        } => {
            format!(
                "{} {} · {}",
                ctx.out.paint(GREEN, "SUCCEEDED"),
                done.id,
                done.output_urls.join(" ")
            )
        }
        WebhookEvent::GenerationFailed {
            generation: failed, ..
        } => format!(
            "{} {} · {}: {}",
            ctx.out.paint(RED, "FAILED"),
            failed.id,
            failed.error_code,
            failed.error_message
        ),
        other => ctx.out.paint(YELLOW, other.event_type()),
    };
    ctx.out.plain(format!(
        "{when}  {}  {detail}  [{message_id}]",
        event.event_type()
    ))
}

/// Answers every request at once: 400 for what does not verify, 200 otherwise.
async fn receive(
    State(receiver): State<Arc<Receiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let delivery = match receiver.verifier.verify(&body, &headers) {
        Ok(delivery) => delivery,
        Err(err) => {
            receiver
                .tx
                .send(Received::Rejected {
                    reason: err.to_string(),
                })
                .ok();
            return StatusCode::BAD_REQUEST;
        }
    };
    let fresh = receiver
        .seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(delivery.message_id.clone());
    let received = if fresh {
        Received::Event {
            message_id: delivery.message_id,
            timestamp: delivery.timestamp,
            event: delivery.event,
            body,
        }
    } else {
        Received::Duplicate {
            message_id: delivery.message_id,
        }
    };
    receiver.tx.send(received).ok();
    StatusCode::OK
}
