//! Webhook receiver: verifies deliveries, skips duplicates, answers at once, and
//! handles each event in a background task.
//!
//! ```sh
//! export MEDIAGEN_WEBHOOK_SECRET=whsec_…     # shown once when the endpoint is created
//! cargo run -p mediagen-examples --bin webhook_receiver -- 3000
//! # register http(s)://<public address>/webhooks with `mediagen webhooks create`
//! ```

use mediagen_examples::receiver;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map(|p| p.parse())
        .transpose()?
        .unwrap_or(3000);
    let secret = std::env::var("MEDIAGEN_WEBHOOK_SECRET")?;
    let (events, mut queue) = tokio::sync::mpsc::unbounded_channel();
    let app = receiver::router(&secret, events)?;

    // The work: here a line per event; in an application, update an order, notify a user.
    tokio::spawn(async move {
        while let Some(event) = queue.recv().await {
            let generation = &event.payload["data"]["generation"];
            match event.event_type.as_str() {
                "generation.completed" => println!(
                    "{} completed: {}",
                    generation["id"], generation["output_urls"]
                ),
                "generation.failed" => println!(
                    "{} failed: {} (the cost is back on the balance)",
                    generation["id"], generation["error_code"]
                ),
                other => println!("{other}: {}", event.payload),
            }
        }
    });

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}/webhooks", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
