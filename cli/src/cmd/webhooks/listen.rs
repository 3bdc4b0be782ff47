//! `webhooks listen`: a receiver on this machine that verifies each delivery,
//! answers at once, skips retries of a message it has seen, prints the events, and
//! forwards each verified delivery to the local apps of `--forward-to`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use mediagen::{Delivery, WebhookEndpointRequest, WebhookEvent, WebhookVerifier};
use serde_json::json;
use tokio::sync::mpsc;

use super::endpoints::event_filters;
use crate::cli::webhooks::{ListenArgs, Target};
use crate::cmd::context::Context;
use crate::output::{self, DIM, GREEN, RED, YELLOW};
use crate::signal::Signals;

/// The headers a delivery is forwarded with, as they came, so that the app verifies
/// the same signature over the same bytes.
const FORWARDED_HEADERS: [&str; 4] = [
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "content-type",
];

/// How long an app has to answer: the service's own limit for a delivery.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(10);

/// What the handler saw, passed to the printer so that answering never waits on it.
#[derive(Debug)]
enum Received {
    Verified(Box<Verified>),
    Rejected { reason: String },
}

/// A delivery whose signature verified.
#[derive(Debug)]
struct Verified {
    delivery: Delivery,
    /// The raw body and the headers to forward, byte for byte.
    body: Bytes,
    headers: HeaderMap,
    /// A message already received: a retry, or a redelivery asked for.
    repeat: bool,
}

#[derive(Debug)]
struct Receiver {
    verifier: WebhookVerifier,
    seen: Mutex<HashSet<String>>,
    tx: mpsc::UnboundedSender<Received>,
}

/// What an app answered to a forwarded delivery.
#[derive(Debug)]
struct Forwarded<'a> {
    url: &'a url::Url,
    answer: Result<StatusCode, String>,
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
            let request =
                WebhookEndpointRequest::new(&url).events(event_filters(&args.routes.events));
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
    let forwarder = mediagen::build_http_client(|| {
        reqwest::Client::builder()
            .timeout(FORWARD_TIMEOUT)
            // The app's own answer is what is shown, a redirect included.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!(
                "mediagen-cli/",
                env!("CARGO_PKG_VERSION"),
                " (webhooks listen)"
            ))
    })
    .context("while making the client that forwards deliveries")?;

    // Listening before the address is told, so a signal sent as soon as it is seen stops us.
    let signals = Signals::interrupt_or_terminate()?;
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
    for target in &args.routes.targets {
        ctx.out.note(format!(
            "forwarding {} to {}",
            events_text(&target.events),
            target.url
        ));
    }

    let printed = print_events(ctx, &args, &forwarder, rx, signals).await;
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

/// Forwards and prints what arrives until `--max-events` events, Ctrl-C or SIGTERM.
async fn print_events(
    ctx: &Context,
    args: &ListenArgs,
    forwarder: &reqwest::Client,
    mut rx: mpsc::UnboundedReceiver<Received>,
    mut signals: Signals,
) -> anyhow::Result<()> {
    let mut events = 0;
    while args.max_events.is_none_or(|max| events < max) {
        let received = tokio::select! {
            received = rx.recv() => received,
            () = signals.recv() => None,
        };
        let Some(received) = received else { break };
        let Verified {
            delivery,
            body,
            headers,
            repeat,
        } = match received {
            Received::Verified(verified) => *verified,
            Received::Rejected { reason } => {
                ctx.out.note(format!(
                    "{} {reason}",
                    ctx.out.paint_err(RED, "rejected (400):")
                ));
                continue;
            }
        };
        let event_type = delivery.event.event_type();
        if !takes(&args.routes.events, event_type) {
            ctx.out.note(ctx.out.paint_err(
                DIM,
                format!(
                    "ignored {event_type} {}: not among --event",
                    delivery.message_id
                ),
            ));
            continue;
        }
        // An app gets repeats too: skipping them is its own job, as in production.
        let forwarded = forward(forwarder, &args.routes.targets, &delivery, &body, &headers).await;
        if repeat {
            let mut note = format!(
                "skipped a retry of {}, already received",
                delivery.message_id
            );
            if !forwarded.is_empty() {
                note.push_str(&format!(" · forwarded {}", statuses(ctx, &forwarded)));
            }
            ctx.out.note(ctx.out.paint_err(DIM, note));
            continue;
        }
        events += 1;
        let forwarded = (!args.routes.targets.is_empty()).then_some(forwarded.as_slice());
        print_event(ctx, &delivery, &body, forwarded)?;
    }
    Ok(())
}

/// Whether an event passes filters of `--event`: none means all; `generation.*` is the
/// group, `*` everything.
fn takes(filters: &[String], event_type: &str) -> bool {
    filters.is_empty()
        || filters.iter().any(|filter| {
            filter == "*"
                || filter == event_type
                || filter
                    .strip_suffix('*')
                    .is_some_and(|group| group.ends_with('.') && event_type.starts_with(group))
        })
}

/// POSTs the delivery to every target that takes its event, all at once, and returns
/// each one's answer in the order of the command line.
async fn forward<'a>(
    client: &reqwest::Client,
    targets: &'a [Target],
    delivery: &Delivery,
    body: &Bytes,
    headers: &HeaderMap,
) -> Vec<Forwarded<'a>> {
    let sends = targets
        .iter()
        .filter(|target| takes(&target.events, delivery.event.event_type()))
        .map(|target| async move {
            let sent = client
                .post(target.url.clone())
                .headers(headers.clone())
                .body(body.clone())
                .send()
                .await;
            let answer = match sent {
                Ok(response) => Ok(response.status()),
                Err(err) if err.is_timeout() => {
                    Err(format!("no answer within {} s", FORWARD_TIMEOUT.as_secs()))
                }
                // The innermost cause says it best: `Connection refused (os error 111)`.
                Err(err) => Err(std::iter::successors(
                    Some(&err as &(dyn std::error::Error + 'static)),
                    |cause| cause.source(),
                )
                .last()
                .map_or_else(|| err.to_string(), ToString::to_string)),
            };
            Forwarded {
                url: &target.url,
                answer,
            }
        });
    futures::future::join_all(sends).await
}

/// `http://127.0.0.1:3000/hooks 200 OK · http://127.0.0.1:4000/ 503 Service Unavailable`.
fn statuses(ctx: &Context, forwarded: &[Forwarded<'_>]) -> String {
    forwarded
        .iter()
        .map(|f| {
            let answer = match &f.answer {
                Ok(status) if status.is_success() => ctx.out.paint(GREEN, status),
                Ok(status) => ctx.out.paint(RED, status),
                Err(reason) => ctx.out.paint(RED, reason),
            };
            format!("{} {answer}", f.url)
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The events an app gets, for the line that announces it.
fn events_text(events: &[String]) -> String {
    if events.is_empty() {
        "every event".to_owned()
    } else {
        events.join(", ")
    }
}

/// One event on stdout: a JSON line for scripts, a line for people; with the apps'
/// answers when there are apps to forward to.
fn print_event(
    ctx: &Context,
    delivery: &Delivery,
    body: &[u8],
    forwarded: Option<&[Forwarded<'_>]>,
) -> anyhow::Result<()> {
    let Delivery {
        message_id,
        timestamp,
        event,
        ..
    } = delivery;
    if ctx.out.is_json() {
        let payload: serde_json::Value = serde_json::from_slice(body)?;
        let mut line = json!({
            "webhookId": message_id,
            "timestamp": timestamp,
            "type": event.event_type(),
            "payload": payload,
        });
        if let Some(forwarded) = forwarded {
            line["forwarded"] = forwarded
                .iter()
                .map(|f| match &f.answer {
                    Ok(status) => json!({"url": f.url.as_str(), "status": status.as_u16()}),
                    Err(reason) => json!({"url": f.url.as_str(), "error": reason}),
                })
                .collect();
        }
        return ctx.out.json_line(&line);
    }
    let when = chrono::DateTime::from_timestamp(*timestamp, 0)
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
    let mut line = format!("{when}  {}  {detail}  [{message_id}]", event.event_type());
    match forwarded {
        Some([]) => line.push_str(&format!("  {}", ctx.out.paint(DIM, "→ no app takes it"))),
        Some(forwarded) => line.push_str(&format!("  → {}", statuses(ctx, forwarded))),
        None => {}
    }
    ctx.out.plain(line)
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
    let mut forwarded = HeaderMap::new();
    for name in FORWARDED_HEADERS {
        if let Some(value) = headers.get(name) {
            forwarded.insert(name, value.clone());
        }
    }
    receiver
        .tx
        .send(Received::Verified(Box::new(Verified {
            delivery,
            body,
            headers: forwarded,
            repeat: !fresh,
        })))
        .ok();
    StatusCode::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_filters_take_names_groups_and_everything() {
        let filters = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert!(takes(&[], "generation.failed"));
        assert!(takes(&filters(&["*"]), "anything.new"));
        assert!(takes(&filters(&["generation.*"]), "generation.completed"));
        assert!(!takes(&filters(&["generation.*"]), "invoice.paid"));
        assert!(takes(
            &filters(&["generation.failed", "generation.completed"]),
            "generation.completed"
        ));
        assert!(!takes(
            &filters(&["generation.failed"]),
            "generation.completed"
        ));
        assert!(!takes(&filters(&["generation*"]), "generation.completed"));
    }
}
