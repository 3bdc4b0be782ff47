//! `--jq` on a stream: the cost per record of a simple filter (`.id`) and of a
//! string-building one, beside printing the same records as JSON Lines (what the
//! stream prints without `--jq`), in the same run. The filter module is the
//! command's own, compiled here from its source.
//!
//! ```text
//! cargo bench -p mediagen-cli --bench jq
//! ```

// The command's own module, of which the bench uses the filter alone.
#[allow(dead_code)]
#[path = "../src/jq.rs"]
mod jq;

use std::io::Write;
use std::time::{Duration, Instant};

const RECORDS: usize = 20_000;
const RUNS: usize = 15;

/// The median time per record of `print` over the stream.
fn per_record(
    records: &[serde_json::Value],
    mut print: impl FnMut(&serde_json::Value, &mut Vec<u8>),
) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let mut out = Vec::with_capacity(RECORDS * 64);
            let started = Instant::now();
            for record in records {
                print(record, &mut out);
            }
            std::hint::black_box(&out);
            started.elapsed() / RECORDS as u32
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn main() {
    let text = include_str!("../tests/jq/generations.jsonl");
    let kinds: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a recorded record"))
        .collect();
    let records: Vec<serde_json::Value> = kinds.iter().cycle().take(RECORDS).cloned().collect();
    let lines = per_record(&records, |record, out| {
        serde_json::to_writer(&mut *out, record).unwrap();
        out.write_all(b"\n").unwrap();
    });
    let simple = jq::Filter::new(".id").unwrap();
    let id = per_record(&records, |record, out| simple.write(record, out).unwrap());
    let built = jq::Filter::new(r#""\(.modelSlug)\t\(.status)\t\(.costRub)""#).unwrap();
    let string = per_record(&records, |record, out| built.write(record, out).unwrap());
    let ns = |d: Duration| d.as_nanos();
    println!("--jq on a stream of {RECORDS} generations, median of {RUNS} runs, per record");
    println!("  JSON Lines, no filter   {:>6} ns", ns(lines));
    println!(
        "  --jq .id                {:>6} ns  ({:.1}x)",
        ns(id),
        id.as_secs_f64() / lines.as_secs_f64()
    );
    println!(
        "  --jq \"\\(..)\\t\\(..)\"     {:>6} ns  ({:.1}x)",
        ns(string),
        string.as_secs_f64() / lines.as_secs_f64()
    );
}
