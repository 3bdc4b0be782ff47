//! Batch: many prompts, one per line on stdin, at most 5 active at once (the
//! service's limit per user), with progress as each one moves on.
//!
//! ```sh
//! printf 'a red fox\na blue whale\na green owl\n' | cargo run -p mediagen-examples --bin batch -- flux-schnell
//! ```

use std::io::BufRead;

use mediagen::{BatchEvent, Client, GenerationRequest};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "flux-schnell".into());
    let requests: Vec<GenerationRequest> = std::io::stdin()
        .lock()
        .lines()
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|line| !line.trim().is_empty())
        .map(|prompt| GenerationRequest::new(&model, prompt))
        .collect();
    let client = Client::from_env()?;

    // The batch starts the next request as soon as one ends and never has more than
    // `max_active` running, so it never meets the concurrency limit's 429, which no
    // retry fixes. Each create keeps its own Idempotency-Key across retries.
    let results = client
        .generations()
        .batch(requests)
        .max_active(5)
        .on_progress(|p| {
            let what = match &p.event {
                BatchEvent::Created { id } => format!("created {id}"),
                BatchEvent::Succeeded { .. } => "succeeded".to_owned(),
                BatchEvent::Failed { .. } => "failed".to_owned(),
                // Status changes in between, and events of later SDK versions.
                _ => return,
            };
            println!(
                "[{}/{} done, {} active] #{} {what}",
                p.finished, p.total, p.active, p.index
            );
        })
        .await;

    // One result per prompt, in the order of the input.
    let mut failed = 0;
    for (index, result) in results.iter().enumerate() {
        match result {
            Ok(generation) => println!("#{index} {}", generation.output_urls.join(" ")),
            Err(err) => {
                failed += 1;
                println!("#{index} {err}");
            }
        }
    }
    println!("{} succeeded, {failed} failed", results.len() - failed);
    // A non-zero exit status, so that a script notices.
    anyhow::ensure!(failed == 0, "{failed} of {} prompts failed", results.len());
    Ok(())
}
