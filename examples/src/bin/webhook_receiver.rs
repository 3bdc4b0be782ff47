//! Webhook receiver: verifies each delivery, skips duplicates, answers at once, and
//! handles each event in the background (see `src/receiver.rs`).
//!
//! With `--inbox FILE` it is durable (see `src/durable.rs`): each delivery is stored
//! in the SQLite file before it is answered, and each event is recorded in the same
//! file, in the transaction that completes it, so that a crash or a restart neither
//! loses an event nor handles one twice. `--inbox FILE --dump` processes what is
//! stored and not yet processed, then prints the events processed, one JSON line
//! each, in order, and exits.
//!
//! ```sh
//! export MEDIAGEN_WEBHOOK_SECRET=whsec_…     # shown once when the endpoint is created
//! cargo run -p mediagen-examples --bin webhook_receiver -- 3000 --inbox webhooks.db
//! # register http(s)://<public address>/webhooks with `mediagen webhooks create`
//! cargo run -p mediagen-examples --bin webhook_receiver -- --inbox webhooks.db --dump
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use mediagen_examples::{durable, receiver};
use webhook_verify::Webhook;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Port 0 picks a free one; the address is printed below.
    let mut port: u16 = 3000;
    let mut inbox: Option<PathBuf> = None;
    let mut dump = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--inbox" => inbox = Some(args.next().context("--inbox needs a FILE")?.into()),
            "--dump" => dump = true,
            _ => port = arg.parse().with_context(|| format!("not a port: {arg}"))?,
        }
    }
    if dump {
        let path = inbox.context("--dump reads the file of --inbox FILE")?;
        for line in durable::dump(&path)? {
            println!("{line}");
        }
        return Ok(());
    }
    let secret = std::env::var("MEDIAGEN_WEBHOOK_SECRET")
        .map_err(|_| anyhow::anyhow!("set MEDIAGEN_WEBHOOK_SECRET to the endpoint's whsec_…"))?;

    // Loopback here; behind a reverse proxy or a tunnel in production, since the
    // service only delivers to public http(s) addresses.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    match inbox {
        Some(path) => durably(listener, &secret, &path).await,
        None => in_memory(listener, &secret).await,
    }
}

/// Deliveries stored in `path` before they are answered; a worker records them. On
/// Ctrl-C or SIGTERM it stops taking deliveries, finishes those stored, and exits.
async fn durably(
    listener: tokio::net::TcpListener,
    secret: &str,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    let inbox = durable::open(path)?;
    let app = axum::Router::new().nest("/webhooks", inbox.router(Webhook::new(secret)?));
    println!("listening on http://{}/webhooks", listener.local_addr()?);
    // Messages stored before a crash are worked on first, in order of arrival.
    let stop = Arc::new(AtomicBool::new(false));
    let worker = durable::spawn_worker(inbox, Arc::clone(&stop));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    stop.store(true, Ordering::SeqCst);
    tokio::task::spawn_blocking(move || worker.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the worker panicked"))?;
    Ok(())
}

async fn shutdown() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("a handler for SIGTERM");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Deliveries deduplicated in memory and handed to a task: a restart forgets them.
async fn in_memory(listener: tokio::net::TcpListener, secret: &str) -> anyhow::Result<()> {
    let (work, mut queue) = tokio::sync::mpsc::unbounded_channel();
    let app = receiver::router(secret, work)?;

    // The work, one delivery at a time: here a line each; in an application, update
    // an order or tell a user.
    tokio::spawn(async move {
        while let Some(delivery) = queue.recv().await {
            println!("{}", receiver::describe(&delivery.event));
        }
    });

    println!("listening on http://{}/webhooks", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
