//! Batch: many prompts, at most 5 active at once (the service's limit per user),
//! with progress as each one moves on.
//!
//! ```sh
//! printf 'a red fox\na blue whale\na green owl\n' | cargo run -p mediagen-examples --bin batch -- flux-schnell
//! ```

use std::io::BufRead;

use mediagen::{Client, GenerationRequest};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "flux-schnell".into());
    let requests: Vec<GenerationRequest> = std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .filter(|line| !line.trim().is_empty())
        .map(|prompt| GenerationRequest::new(&model, prompt))
        .collect();
    let client = Client::from_env()?;

    // The batch starts the next request as soon as one ends, and never has more than
    // `max_active` running, so it never meets the 429 of the concurrency limit.
    let results = client
        .generations()
        .batch(requests)
        .max_active(5)
        .on_progress(|p| {
            println!(
                "[{}/{} done, {} active] #{} {:?}",
                p.finished, p.total, p.active, p.index, p.event
            )
        })
        .await;

    let mut failed = 0;
    for (index, result) in results.iter().enumerate() {
        match result {
            Ok(generation) => println!(
                "#{index} {}: {}",
                generation.id,
                generation.output_urls.join(" ")
            ),
            Err(err) => {
                failed += 1;
                println!("#{index} failed: {err}");
            }
        }
    }
    println!("{} succeeded, {failed} failed", results.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
