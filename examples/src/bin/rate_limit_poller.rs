//! Rate-limit-aware poller: follows generations until each ends, spreading its
//! requests over the window the `x-ratelimit-*` headers describe, so that polling
//! never spends the 60 requests a minute that creating needs too.
//!
//! ```sh
//! cargo run -p mediagen-examples --bin rate_limit_poller             # every active generation
//! cargo run -p mediagen-examples --bin rate_limit_poller -- <id> <id>
//! ```

use std::collections::HashMap;
use std::time::Duration;

use futures::TryStreamExt;
use mediagen::{Client, GenerationFilter, GenerationStatus};

/// Never pause longer than this between two reads, whatever the headers say.
const MAX_PAUSE: Duration = Duration::from_secs(5);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let client = Client::from_env()?;
    let mut ids: Vec<uuid::Uuid> = std::env::args()
        .skip(1)
        .map(|id| id.parse())
        .collect::<Result<_, _>>()?;
    if ids.is_empty() {
        for status in [GenerationStatus::Pending, GenerationStatus::Processing] {
            let active: Vec<_> = client
                .generations()
                .list(GenerationFilter::new().status(status))
                .try_collect()
                .await?;
            ids.extend(active.into_iter().map(|g| g.id));
        }
    }

    let mut last: HashMap<uuid::Uuid, GenerationStatus> = HashMap::new();
    while !ids.is_empty() {
        let mut still_active = Vec::new();
        for id in ids {
            let generation = client.generations().get(id).await?;
            if last.insert(id, generation.status.clone()).as_ref() != Some(&generation.status) {
                println!("{id} {}", generation.status);
            }
            if generation.status.is_active() {
                still_active.push(id);
            }
            // The quota left in this window, spread over the time until it resets.
            if let Some(limit) = client.rate_limit() {
                let pause = limit.reset / limit.remaining.max(1);
                println!(
                    "  quota {}/{} for {} s: next read in {} ms",
                    limit.remaining,
                    limit.limit,
                    limit.reset.as_secs(),
                    pause.min(MAX_PAUSE).as_millis()
                );
                tokio::time::sleep(pause.min(MAX_PAUSE)).await;
            }
        }
        ids = still_active;
    }
    println!("all ended");
    Ok(())
}
