//! Rate-limit-aware poller: follows generations until each ends, spacing its reads by
//! the `x-ratelimit-*` headers so that polling spends at most half of what is left
//! of the window. The limit (60 requests a minute) is per IP address: the other half
//! stays for creating, and for other programs behind the same address.
//!
//! ```sh
//! cargo run -p mediagen-examples --bin rate_limit_poller             # every active generation
//! cargo run -p mediagen-examples --bin rate_limit_poller -- <id> <id>
//! ```

use std::collections::HashMap;
use std::time::Duration;

use futures::TryStreamExt;
use mediagen::{Client, GenerationFilter, GenerationStatus, LimitScope, RateLimit};
use uuid::Uuid;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let client = Client::from_env()?;
    let mut ids: Vec<Uuid> = std::env::args()
        .skip(1)
        .map(|id| id.parse())
        .collect::<Result<_, _>>()?;
    if ids.is_empty() {
        for status in [GenerationStatus::Pending, GenerationStatus::Processing] {
            let filter = GenerationFilter::new().status(status);
            let active: Vec<_> = client.generations().list(filter).try_collect().await?;
            ids.extend(active.iter().map(|g| g.id));
        }
        // A generation that started between the two lists is in both.
        ids.sort();
        ids.dedup();
    }

    let mut last: HashMap<Uuid, GenerationStatus> = HashMap::new();
    while !ids.is_empty() {
        let mut still_active = Vec::new();
        for id in ids {
            // Every answer, the list's too, says what is left of the window.
            if let Some(limit) = client.rate_limit_of(LimitScope::General) {
                let pause = pause(limit);
                println!(
                    "  quota {}/{} for {} s: next read in {} ms",
                    limit.remaining,
                    limit.limit,
                    limit.reset.as_secs(),
                    pause.as_millis()
                );
                tokio::time::sleep(pause).await;
            }
            let generation = client.generations().get(id).await?;
            if last.get(&id) != Some(&generation.status) {
                println!("{id} {}", generation.status);
                last.insert(id, generation.status.clone());
            }
            // PENDING and PROCESSING: the task has not ended yet.
            if generation.status.is_active() {
                still_active.push(id);
            }
        }
        ids = still_active;
    }
    println!("all ended");
    Ok(())
}

/// Half of the requests left in the window, spread evenly over the time until it
/// resets; with none to spare, the wait for the next window.
fn pause(limit: RateLimit) -> Duration {
    match limit.remaining / 2 {
        0 => limit.reset,
        budget => limit.reset / budget,
    }
}
