//! `batch`: many generations from a manifest, at the service's limits, with a
//! journal that makes running the same command again safe; and `batch
//! status`, which reads the journal.

mod follow;
mod hooks;
mod manifest;
mod report;
mod results;
mod status;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use mediagen::{Batch, Client, Journal, JournalEntry, SqliteJournal, item_names};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use self::manifest::{Bad, Line};
use self::report::Report;
use super::context::Context;
use crate::cli::batch::{BatchArgs, BatchCommand, BatchRunArgs};
use crate::error::{Exit, Failure};
use crate::signal::Signals;

pub async fn run(ctx: &Context, args: BatchArgs) -> anyhow::Result<()> {
    match args.command {
        Some(BatchCommand::Status { manifest, state }) => {
            status::run(ctx, &manifest, state.as_deref())
        }
        None => batch(ctx, args.run).await,
    }
}

/// A run, step by step: every line checked before anything starts; the journal
/// opened; with --listen, the webhook receiver and its endpoint made ready; the
/// generations created at the service's limits and followed to their end (or
/// until Ctrl-C); the run's endpoint deleted; then the results written beside
/// the journal and summed up.
async fn batch(ctx: &Context, args: BatchRunArgs) -> anyhow::Result<()> {
    let manifest = args.manifest.clone().unwrap_or_else(|| PathBuf::from("-"));
    let journal_path = manifest::journal_path(&manifest, args.state.as_deref())?;
    let lines = read_lines(ctx, &args, &manifest).await?;
    tell_outputs(ctx, &args, &lines)?;
    let journal = open_journal(ctx, &journal_path, &lines)?;
    let client = ctx.client().await?;
    let hooks = hooks::prepare(ctx, client, &args, &journal_path).await?;
    let resume = resume_command();

    let report = Report::start(&ctx.out, lines.len());
    let (interrupt, stopped) = Interrupt::listen(&report, &resume)?;
    let batch = start(client, &args, &lines, journal, &report, stopped);
    let output = args.output.as_deref();
    let ended = follow::follow(batch.stream(), client, &lines, output, &report).await;
    let interrupted = interrupt.end();
    report.bar.finish_and_clear();
    if let Some(hooks) = hooks {
        hooks.finish(ctx, client, &journal_path).await?;
    }
    let ended = ended?;

    let results = manifest::results_path(&manifest, args.state.as_deref());
    results::write_results(&results, &lines, &ended)?;
    results::summarize(ctx, &lines, &ended, &results, interrupted, &resume)
}

/// How long a refusal already certain waits for the catalogue's reasons.
const CATALOGUE_WHEN_REFUSING: Duration = Duration::from_secs(5);

/// The manifest's lines, each checked; every line that cannot run is told,
/// with why, and nothing starts.
async fn read_lines(
    ctx: &Context,
    args: &BatchRunArgs,
    manifest: &Path,
) -> anyhow::Result<Vec<Line>> {
    let text = manifest::text(manifest)?;
    let (lines, mut bad) = manifest::parse(&text, args.model.as_deref(), &args.params);
    if bad.is_empty() && lines.is_empty() {
        return Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            format!("{} has no lines to run", manifest.display()),
        )
        .hint("write one prompt per line (with -m), or one JSON object per line")
        .into());
    }
    // The catalogue, when it can be read, checks every line that reads, in the
    // same pass as the lines that do not: one refusal names them all. The
    // service checks what it cannot. With lines that cannot run already, the
    // refusal is certain: the catalogue is asked once, briefly, for the rest
    // of its reasons, so that an unreachable service does not hold it back.
    if !lines.is_empty() {
        let client = ctx.public_client().await?;
        let catalog = client.catalog().get();
        let catalog = if bad.is_empty() {
            catalog
        } else {
            catalog.max_attempts(1).timeout(CATALOGUE_WHEN_REFUSING)
        };
        match catalog.await {
            Ok(catalog) => bad.extend(manifest::check(&lines, &catalog)),
            Err(err) if bad.is_empty() => ctx.out.note(format!(
                "the catalogue could not be read ({err}); the service checks each line as it is created"
            )),
            Err(err) => ctx.out.note(format!(
                "the catalogue could not be read ({err}); the other lines were not checked against it"
            )),
        }
    }
    if bad.is_empty() {
        return Ok(lines);
    }
    bad.sort_by_key(|b| b.number);
    let listed: Vec<String> = bad
        .iter()
        .map(|Bad { number, reason }| format!("  line {number}: {reason}"))
        .collect();
    let numbers: BTreeMap<usize, ()> = bad.iter().map(|b| (b.number, ())).collect();
    Err(Failure::new(
        Exit::Usage,
        "INVALID_MANIFEST",
        format!(
            "{} line(s) of {} cannot run, so nothing was created:\n{}",
            numbers.len(),
            manifest.display(),
            listed.join("\n")
        ),
    )
    .hint("fix these lines and run the same command again")
    .detail(
        "lines",
        bad.iter()
            .map(|b| json!({"line": b.number, "reason": b.reason}))
            .collect::<Vec<_>>(),
    )
    .into())
}

/// Without -o, the lines that name an `output` are still downloaded, into the
/// current directory: told before anything starts, so that no file comes as a
/// surprise.
fn tell_outputs(ctx: &Context, args: &BatchRunArgs, lines: &[Line]) -> anyhow::Result<()> {
    if args.output.is_some() {
        return Ok(());
    }
    let named: Vec<String> = lines
        .iter()
        .filter(|line| line.output.is_some())
        .map(|line| line.number.to_string())
        .collect();
    if !named.is_empty() {
        let here = std::env::current_dir().context("while reading the current directory")?;
        ctx.out.note(format!(
            "line(s) {} name an \"output\": saved in the current directory, {}, as each \
             ends (-o DIR saves every line's results in DIR)",
            named.join(", "),
            here.display()
        ));
    }
    Ok(())
}

/// The journal at `path`, opened; the lines of an earlier run that are no longer
/// in the manifest are told, and left alone.
fn open_journal(ctx: &Context, path: &Path, lines: &[Line]) -> anyhow::Result<SqliteJournal> {
    let requests: Vec<_> = lines.iter().map(Line::request).collect();
    let names = item_names(&requests);
    let mut journal = SqliteJournal::open(path)
        .with_context(|| format!("while opening the journal {}", path.display()))?;
    let recorded = journal.entries()?;
    let current: HashSet<&String> = names.iter().collect();
    let removed: Vec<&JournalEntry> = recorded
        .iter()
        .filter(|e| !current.contains(&e.item))
        .collect();
    if !removed.is_empty() {
        let ids: Vec<String> = removed
            .iter()
            .filter_map(|e| e.id.map(|id| id.to_string()))
            .collect();
        ctx.out.note(format!(
            "{} line(s) of an earlier run are no longer in the manifest and are left alone{}",
            removed.len(),
            if ids.is_empty() {
                String::new()
            } else {
                format!(": {}", ids.join(", "))
            }
        ));
    }
    Ok(journal)
}

/// Ctrl-C during a run: the first stops creating, and the active generations are
/// followed to their end; the second exits at once, the journal holding all.
#[derive(Debug)]
struct Interrupt {
    handler: JoinHandle<()>,
    interrupted: Arc<AtomicBool>,
}

impl Interrupt {
    /// Listens from now on; the receiver ends at the first Ctrl-C.
    fn listen(report: &Report, resume: &str) -> anyhow::Result<(Self, oneshot::Receiver<()>)> {
        let (stop, stopped) = oneshot::channel::<()>();
        let interrupted = Arc::new(AtomicBool::new(false));
        let (report, flag, resume) = (report.clone(), Arc::clone(&interrupted), resume.to_owned());
        let mut signals = Signals::interrupt()?;
        let handler = tokio::spawn(async move {
            signals.recv().await;
            flag.store(true, Ordering::SeqCst);
            let _ = stop.send(());
            report.out.note_above(
                &report.bar,
                "stopping: no new generations; the active ones are followed to their end \
                 (Ctrl-C again to exit now)",
            );
            signals.recv().await;
            report.bar.finish_and_clear();
            report.out.note(format!(
                "exited; the journal has everything: run `{resume}` to go on, paying for nothing twice"
            ));
            std::process::exit(Exit::Interrupted as i32);
        });
        Ok((
            Self {
                handler,
                interrupted,
            },
            stopped,
        ))
    }

    /// Stops listening; whether a Ctrl-C came.
    fn end(self) -> bool {
        self.handler.abort();
        self.interrupted.load(Ordering::SeqCst)
    }
}

/// The SDK's batch of the lines: at most --max-active at once, within --max-cost,
/// each create written down in the journal before it is sent, and no new create
/// once `stopped` ends.
fn start<'a>(
    client: &'a Client,
    args: &BatchRunArgs,
    lines: &[Line],
    journal: SqliteJournal,
    report: &Report,
    stopped: oneshot::Receiver<()>,
) -> Batch<'a> {
    let mut batch = client
        .generations()
        .batch(lines.iter().map(Line::request))
        .max_active(usize::from(args.max_active))
        .journal(journal)
        .stop_on(async {
            let _ = stopped.await;
        });
    if let Some(max) = args.max_cost {
        batch = batch.max_total_cost_rub(max);
    }
    batch.on_progress(report.on_progress(lines.to_vec()))
}

/// The command that runs this batch again.
fn resume_command() -> String {
    resume_of(std::env::args())
}

/// The command line `args`, quoted for a shell, with the value of
/// `--webhook-secret` left out: the command is printed, and a secret does not
/// belong in a terminal's scrollback or a CI log.
fn resume_of(args: impl IntoIterator<Item = String>) -> String {
    const SECRET: &str = "--webhook-secret";
    let mut secret_next = false;
    let args: Vec<String> = args
        .into_iter()
        .map(|arg| {
            let arg = if std::mem::take(&mut secret_next) {
                "whsec_…".to_owned()
            } else if arg.starts_with(&format!("{SECRET}=")) {
                format!("{SECRET}=whsec_…")
            } else {
                secret_next = arg == SECRET;
                arg
            };
            if arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@".contains(c))
            {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect();
    args.join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_resume_command_is_quoted_and_leaves_the_webhook_secret_out() {
        let args = [
            "mediagen",
            "batch",
            "my jobs.txt",
            "--webhook-secret",
            "whsec_abc",
            "--webhook-secret=whsec_def",
        ];
        let resume = super::resume_of(args.map(str::to_owned));
        assert_eq!(
            resume,
            "mediagen batch 'my jobs.txt' --webhook-secret 'whsec_…' '--webhook-secret=whsec_…'"
        );
    }
}
