//! Start-up time of the `mediagen` binary: the median wall time of whole runs, beside
//! the cost of starting any process (`true`) measured in the same run.
//!
//! ```text
//! cargo bench -p mediagen-cli --bench startup
//! ```

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 50;

/// The median wall time of `RUNS` runs of `program args`, after two warm-up runs.
fn median(program: &str, args: &[&str]) -> Duration {
    let run = || {
        let started = Instant::now();
        let status = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run the program");
        assert!(status.success(), "{program} {args:?} failed");
        started.elapsed()
    };
    run();
    run();
    let mut times: Vec<Duration> = (0..RUNS).map(|_| run()).collect();
    times.sort();
    times[RUNS / 2]
}

fn main() {
    let mediagen = env!("CARGO_BIN_EXE_mediagen");
    let baseline = median("true", &[]);
    let version = median(mediagen, &["--version"]);
    let help = median(mediagen, &["generate", "--help"]);
    let mock = median(mediagen, &["--mock", "--json", "models"]);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("CLI start-up, median of {RUNS} runs");
    println!("  true (any process)         {:.2} ms", ms(baseline));
    println!("  mediagen --version         {:.2} ms", ms(version));
    println!("  mediagen generate --help   {:.2} ms", ms(help));
    println!(
        "  mediagen --mock models     {:.2} ms (embedded mock started, one request)",
        ms(mock)
    );
    println!(
        "RESULT startup true_ms={:.2} version_ms={:.2} help_ms={:.2} mock_models_ms={:.2}",
        ms(baseline),
        ms(version),
        ms(help),
        ms(mock)
    );
}
