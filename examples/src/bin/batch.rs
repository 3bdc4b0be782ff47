//! Batch: many prompts, one per line on stdin, at most 5 active at once (the
//! service's limit per user), with a line as each one starts and as each one ends.
//!
//! ```sh
//! printf 'a red fox\na blue whale\na green owl\n' | cargo run -p mediagen-examples --bin batch -- flux-schnell
//! ```

use std::io::BufRead;
use std::process::ExitCode;

use futures::StreamExt;
use mediagen::{BatchEvent, Client, GenerationRequest};

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(0) => ExitCode::SUCCESS,
        // A non-zero exit status, so that a script notices.
        Ok(_) => ExitCode::FAILURE,
        Err(err) => {
            // `{:#}` is the message and its causes on one line, as people read them.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the batch and returns how many prompts failed.
async fn run() -> anyhow::Result<usize> {
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
    let total = requests.len();
    let client = Client::from_env()?;

    // The batch starts the next request as soon as one ends and never has more than
    // `max_active` running, so it never meets the concurrency limit's 429, which no
    // retry fixes. Each create keeps its own Idempotency-Key across retries.
    let mut outcomes = client
        .generations()
        .batch(requests)
        .max_active(5)
        .on_progress(|p| {
            // Status changes in between, the ends (told below with their results)
            // and events of later SDK versions are not printed.
            if let BatchEvent::Created { id } = &p.event {
                println!(
                    "[{}/{} done, {} active] #{} created {id}",
                    p.finished, p.total, p.active, p.index
                );
            }
        })
        .stream();

    // Each prompt's result as soon as it ends, so a long batch shows its first
    // images while the others still run.
    let (mut done, mut failed) = (0, 0);
    while let Some(outcome) = outcomes.next().await {
        done += 1;
        let what = match &outcome.result {
            Ok(generation) => format!(
                "succeeded ({:.2} RUB): {}",
                generation.cost_rub,
                generation.output_urls.join(" ")
            ),
            Err(err) => {
                failed += 1;
                // The error's own words: its code, message and request id.
                format!("failed: {err}")
            }
        };
        println!("[{done}/{total} done] #{} {what}", outcome.index);
    }
    println!("{} succeeded, {failed} failed", total - failed);
    Ok(failed)
}
