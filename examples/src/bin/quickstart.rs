//! Quickstart: create a generation, wait for it, download the result.
//!
//! ```sh
//! # both required: the service's address and your key (or `mediagen mock` and its demo key)
//! export MEDIAGEN_BASE_URL=https://…  MEDIAGEN_API_KEY=mg_live_…
//! cargo run -p mediagen-examples --bin quickstart -- flux-schnell "a lighthouse at dusk" out/
//! ```

use mediagen::{Client, GenerationRequest};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let model = args.next().unwrap_or_else(|| "flux-schnell".into());
    let prompt = args.next().unwrap_or_else(|| "a lighthouse at dusk".into());
    let out = args.next().unwrap_or_else(|| "out".into());

    // MEDIAGEN_API_KEY, and MEDIAGEN_BASE_URL to point at a mock or a staging server.
    let client = Client::from_env()?;

    // `create_and_wait` sends an Idempotency-Key and keeps it across retries, so a
    // dropped connection never starts (or charges) the generation twice.
    let generation = client
        .generations()
        .create_and_wait(GenerationRequest::new(model, prompt))
        .on_status(|g| println!("{} {} ({:.2} RUB)", g.id, g.status, g.cost_rub))
        .await?;

    std::fs::create_dir_all(&out)?;
    for path in client.files().download_outputs(&generation, &out).await? {
        println!("saved {}", path.display());
    }
    Ok(())
}
