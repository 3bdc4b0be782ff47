//! Webhook receiver: verifies each delivery, skips duplicates, answers at once, and
//! handles each event in a background task (see `src/receiver.rs`).
//!
//! ```sh
//! export MEDIAGEN_WEBHOOK_SECRET=whsec_…     # shown once when the endpoint is created
//! cargo run -p mediagen-examples --bin webhook_receiver -- 3000
//! # register http(s)://<public address>/webhooks with `mediagen webhooks create`
//! ```

use mediagen::WebhookEvent;
use mediagen_examples::receiver;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Port 0 picks a free one; the address is printed below.
    let port: u16 = match std::env::args().nth(1) {
        Some(port) => port.parse()?,
        None => 3000,
    };
    let secret = std::env::var("MEDIAGEN_WEBHOOK_SECRET")
        .map_err(|_| anyhow::anyhow!("set MEDIAGEN_WEBHOOK_SECRET to the endpoint's whsec_…"))?;
    let (work, mut queue) = tokio::sync::mpsc::unbounded_channel();
    let app = receiver::router(&secret, work)?;

    // The work, one delivery at a time: here a line each; in an application, update
    // an order or tell a user.
    tokio::spawn(async move {
        while let Some(delivery) = queue.recv().await {
            match delivery.event {
                WebhookEvent::GenerationCompleted { generation, .. } => println!(
                    "{} completed: {}",
                    generation.id,
                    generation.output_urls.join(" ")
                ),
                WebhookEvent::GenerationFailed { generation, .. } => println!(
                    "{} failed with {} (its cost is back on the balance)",
                    generation.id, generation.error_code
                ),
                // Events added after this program was written: acknowledged, ignored.
                other => println!("{} ignored", other.event_type()),
            }
        }
    });

    // Loopback here; behind a reverse proxy or a tunnel in production, since the
    // service only delivers to public http(s) addresses.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}/webhooks", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
