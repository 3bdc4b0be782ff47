//! `batch`: many generations from a manifest, at the service's limits, with a
//! journal that makes running the same command again safe; and `batch
//! status`, which reads the journal.

mod manifest;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use futures::StreamExt;
use indicatif::ProgressBar;
use mediagen::{
    BatchEvent, BatchOutcome, Error, Generation, GenerationStatus, Journal, JournalEntry,
    SqliteJournal, item_names,
};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinSet;
use uuid::Uuid;

use self::manifest::{Bad, Line};
use super::Context;
use crate::cli::{BatchArgs, BatchCommand, BatchRunArgs};
use crate::error::{Exit, Failure};
use crate::output::{self, Output, RED};
use crate::signal::Signals;

pub async fn run(ctx: &Context, args: BatchArgs) -> anyhow::Result<()> {
    match args.command {
        Some(BatchCommand::Status { manifest, state }) => status(ctx, &manifest, state.as_deref()),
        None => batch(ctx, args.run).await,
    }
}

/// The journal of a manifest: `--state`, else beside the manifest.
fn journal_path(manifest: &Path, state: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(state) = state {
        return Ok(state.to_owned());
    }
    if manifest == Path::new("-") {
        return Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            "a manifest read from stdin has no place for its journal",
        )
        .hint("pass --state PATH: the journal that makes running the batch again safe")
        .into());
    }
    Ok(beside(manifest, "journal"))
}

/// `path` with `.suffix` added to its file name.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{suffix}"));
    PathBuf::from(name)
}

/// The manifest's lines, each checked; every line that cannot run is told,
/// with why, and nothing starts.
async fn read_lines(
    ctx: &Context,
    args: &BatchRunArgs,
    manifest: &Path,
) -> anyhow::Result<Vec<Line>> {
    let text = manifest::text(manifest)?;
    let mut bad = Vec::new();
    let lines =
        manifest::parse(&text, args.model.as_deref(), &args.params).unwrap_or_else(|errors| {
            bad = errors;
            Vec::new()
        });
    if bad.is_empty() && lines.is_empty() {
        return Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            format!("{} has no lines to run", manifest.display()),
        )
        .hint("write one prompt per line (with -m), or one JSON object per line")
        .into());
    }
    if bad.is_empty() {
        // The catalogue, when it can be read: the service checks what it cannot.
        match ctx.public_client().await?.catalog().get().await {
            Ok(catalog) => bad = manifest::check(&lines, &catalog),
            Err(err) => ctx.out.note(format!(
                "the catalogue could not be read ({err}); the service checks each line as it is created"
            )),
        }
    }
    if bad.is_empty() {
        return Ok(lines);
    }
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

/// How one line of the batch ended.
#[derive(Debug, Clone, Default)]
struct Ended {
    id: Option<Uuid>,
    status: Option<String>,
    cost_rub: Option<f64>,
    files: Vec<PathBuf>,
    code: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
    /// Why it was not started, when it was not.
    left_out: Option<String>,
    exit: Option<Exit>,
}

impl Ended {
    fn of(outcome: &BatchOutcome) -> Self {
        match &outcome.result {
            Ok(generation) => Self::generation(generation),
            Err(Error::NotStarted { reason }) => Self {
                left_out: Some(reason.clone()),
                ..Self::default()
            },
            Err(err) => {
                let failure = Failure::from_sdk(err);
                let generation = match err {
                    Error::GenerationFailed(failure) => Some(&failure.generation),
                    Error::UnknownGenerationStatus { generation, .. } => Some(&**generation),
                    _ => None,
                };
                Self {
                    id: err.generation_id(),
                    status: generation.map(|g| g.status.to_string()).or_else(|| {
                        matches!(err, Error::GenerationCancelled { .. }).then(|| "CANCELLED".into())
                    }),
                    cost_rub: generation.map(|g| g.cost_rub),
                    code: generation
                        .and_then(|g| g.error_code.as_ref().map(ToString::to_string))
                        .or_else(|| Some(failure.code.clone())),
                    message: Some(failure.message.clone()),
                    request_id: failure.request_id.clone(),
                    exit: Some(failure.exit),
                    ..Self::default()
                }
            }
        }
    }

    fn generation(generation: &Generation) -> Self {
        Self {
            id: Some(generation.id),
            status: Some(generation.status.to_string()),
            cost_rub: Some(generation.cost_rub),
            ..Self::default()
        }
    }

    fn succeeded(&self) -> bool {
        self.status.as_deref() == Some(GenerationStatus::Succeeded.as_str())
    }

    /// The line's object in events and in the results file.
    fn value(&self, line: &Line, event: &str) -> Value {
        let mut value = json!({"event": event, "line": line.number});
        let mut put = |key: &str, v: Value| {
            if !v.is_null() {
                value[key] = v;
            }
        };
        put("id", json!(self.id));
        put("status", json!(self.status));
        put("costRub", json!(self.cost_rub));
        if !self.files.is_empty() {
            put("files", json!(self.files));
        }
        put("errorCode", json!(self.code));
        put(
            "message",
            json!(self.message.as_ref().or(self.left_out.as_ref())),
        );
        put("requestId", json!(self.request_id));
        value
    }
}

/// What the batch prints as it goes: JSON Lines on stdout for scripts, a bar
/// and a line per failure on stderr for people.
#[derive(Debug, Clone)]
struct Report {
    out: Output,
    bar: ProgressBar,
    tally: Arc<Mutex<Tally>>,
}

#[derive(Debug, Default)]
struct Tally {
    active: usize,
    failed: usize,
    spent: f64,
}

impl Report {
    fn event(&self, line: &Line, event: &str, ended: &Ended) {
        if self.out.is_json() {
            // A reader that has gone cannot be told; the batch goes on.
            let _ = self.out.json_line(&ended.value(line, event));
        }
    }

    fn progress(&self) {
        let tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        self.bar.set_message(format!(
            "{} active · {} failed · {} spent",
            tally.active,
            tally.failed,
            output::rub(tally.spent)
        ));
    }

    fn failed(&self, line: &Line, ended: &Ended) {
        if self.out.is_json() {
            return;
        }
        let mut text = format!(
            "{} line {}",
            self.out.paint_err(RED, "failed:"),
            line.number
        );
        if let Some(id) = ended.id {
            text.push_str(&format!(" ({id})"));
        }
        if let Some(code) = &ended.code {
            text.push_str(&format!(": {code}"));
        }
        if let Some(message) = &ended.message {
            text.push_str(&format!(": {message}"));
        }
        if let Some(request_id) = &ended.request_id {
            text.push_str(&format!(" [request {request_id}]"));
        }
        self.out.note_above(&self.bar, text);
    }
}

async fn batch(ctx: &Context, args: BatchRunArgs) -> anyhow::Result<()> {
    let manifest = args.manifest.clone().unwrap_or_else(|| PathBuf::from("-"));
    let journal_path = journal_path(&manifest, args.state.as_deref())?;
    let lines = read_lines(ctx, &args, &manifest).await?;
    let requests: Vec<_> = lines.iter().map(Line::request).collect();
    let names = item_names(&requests);

    let mut journal = SqliteJournal::open(&journal_path)
        .with_context(|| format!("while opening the journal {}", journal_path.display()))?;
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
    let client = ctx.client().await?.clone();
    let resume = resume_command();

    let report = Report {
        out: ctx.out.clone(),
        bar: ctx.out.batch_bar(lines.len() as u64),
        tally: Arc::default(),
    };
    report.progress();
    let (stop, stopped) = oneshot::channel::<()>();
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let signals = {
        let (report, interrupted, resume) =
            (report.clone(), Arc::clone(&interrupted), resume.clone());
        let mut signals = Signals::interrupt()?;
        tokio::spawn(async move {
            signals.recv().await;
            interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
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
        })
    };

    let mut batch = client
        .generations()
        .batch(requests)
        .max_active(usize::from(args.max_active))
        .journal(journal)
        .stop_on(async {
            let _ = stopped.await;
        });
    if let Some(max) = args.max_cost {
        batch = batch.max_total_cost_rub(max);
    }
    let progress_lines: Vec<Line> = lines.clone();
    let progress = report.clone();
    let batch = batch.on_progress(move |p| {
        let line = &progress_lines[p.index];
        let (event, id) = match &p.event {
            BatchEvent::Created { id } => ("created", *id),
            BatchEvent::Resumed { id } => ("resumed", *id),
            BatchEvent::Recorded { id } => ("recorded", *id),
            _ => {
                progress
                    .tally
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .active = p.active;
                progress.progress();
                return;
            }
        };
        progress
            .tally
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .active = p.active;
        progress.event(
            line,
            event,
            &Ended {
                id: Some(id),
                ..Ended::default()
            },
        );
        progress.progress();
    });

    let mut results: Vec<Option<Ended>> = vec![None; lines.len()];
    let mut downloads = JoinSet::new();
    let mut outcomes = batch.stream();
    while let Some(outcome) = outcomes.next().await {
        let line = &lines[outcome.index];
        let ended = Ended::of(&outcome);
        {
            let mut tally = report.tally.lock().unwrap_or_else(|p| p.into_inner());
            if ended.succeeded() {
                tally.spent += ended.cost_rub.unwrap_or_default();
            } else if ended.left_out.is_none() {
                tally.failed += 1;
            }
        }
        report.bar.inc(1);
        report.progress();
        match (&outcome.result, &args.output) {
            (Ok(generation), Some(dir)) => {
                let (client, generation, dir) = (client.clone(), generation.clone(), dir.clone());
                let targets = targets(line, &generation, &dir);
                let index = outcome.index;
                downloads.spawn(async move { (index, download(&client, targets).await) });
            }
            (Ok(_), None) => report.event(line, "succeeded", &ended),
            (Err(Error::NotStarted { .. }), _) => report.event(line, "not_started", &ended),
            (Err(_), _) => {
                report.event(line, "failed", &ended);
                report.failed(line, &ended);
            }
        }
        results[outcome.index] = Some(ended);
    }
    while let Some(joined) = downloads.join_next().await {
        let (index, written) = joined.context("a download stopped")?;
        let line = &lines[index];
        let Some(ended) = results[index].as_mut() else {
            continue;
        };
        match written {
            Ok(files) => {
                ended.files = files;
                report.event(line, "succeeded", ended);
            }
            Err(err) => {
                ended.code = Some("DOWNLOAD_FAILED".into());
                ended.message = Some(format!("{err:#}"));
                ended.exit = Some(Exit::Other);
                report.event(line, "download_failed", ended);
                report.failed(line, ended);
            }
        }
    }
    signals.abort();
    report.bar.finish_and_clear();

    let ended: Vec<Ended> = results.into_iter().map(Option::unwrap_or_default).collect();
    // Beside the journal: the manifest's name, or --state's.
    let results_path = beside(args.state.as_deref().unwrap_or(&manifest), "results.jsonl");
    write_results(&results_path, &lines, &ended)?;
    summarize(
        ctx,
        &lines,
        &ended,
        &results_path,
        interrupted.load(std::sync::atomic::Ordering::SeqCst),
        &resume,
    )
}

/// The command that runs this batch again.
fn resume_command() -> String {
    let args: Vec<String> = std::env::args()
        .map(|arg| {
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

/// Where each result of `generation` goes in `dir`: the line's `output` (with
/// `-N` before its extension when there are several), else `LINE-ID-N.EXT`.
fn targets(line: &Line, generation: &Generation, dir: &Path) -> Vec<(String, PathBuf)> {
    let count = generation.output_urls.len();
    generation
        .output_urls
        .iter()
        .enumerate()
        .map(|(n, url)| {
            let extension = reqwest::Url::parse(url)
                .ok()
                .and_then(|u| u.path_segments()?.next_back().map(str::to_owned))
                .and_then(|name| name.rsplit_once('.').map(|(_, ext)| format!(".{ext}")))
                .unwrap_or_default();
            let name = match &line.output {
                Some(output) if count == 1 => output.clone(),
                Some(output) => match output.rsplit_once('.') {
                    Some((stem, ext)) => format!("{stem}-{}.{ext}", n + 1),
                    None => format!("{output}-{}{extension}", n + 1),
                },
                None => format!("{}-{}-{}{extension}", line.number, generation.id, n + 1),
            };
            (url.clone(), dir.join(name))
        })
        .collect()
}

/// Downloads what is not there yet (a file there is whole: a download is
/// written beside it and renamed at its end); the paths of every result.
async fn download(
    client: &mediagen::Client,
    targets: Vec<(String, PathBuf)>,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for (url, path) in targets {
        if !path.exists() {
            client
                .files()
                .download(url, path.clone())
                .await
                .with_context(|| format!("while downloading into {}", path.display()))?;
        }
        paths.push(path);
    }
    Ok(paths)
}

/// One object per line of the manifest, in its order, written whole and then
/// renamed, so that a reader never sees half of it.
fn write_results(path: &Path, lines: &[Line], ended: &[Ended]) -> anyhow::Result<()> {
    let mut text = String::new();
    for (line, ended) in lines.iter().zip(ended) {
        let state = state_of(ended);
        text.push_str(&ended.value(line, state).to_string());
        text.push('\n');
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("while writing {}", path.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    file.persist(path)
        .with_context(|| format!("while writing {}", path.display()))?;
    Ok(())
}

/// The word for how a line ended.
fn state_of(ended: &Ended) -> &'static str {
    match (&ended.left_out, ended.succeeded(), &ended.exit) {
        (Some(_), _, _) => "not_started",
        (None, true, None) => "succeeded",
        _ => "failed",
    }
}

/// The summary on stderr for people and as a last JSON line for scripts, and
/// the exit code: 130 after Ctrl-C, the code of a request the service refused,
/// 6 for a generation that failed, 4 for lines the budget left out, else 0.
fn summarize(
    ctx: &Context,
    lines: &[Line],
    ended: &[Ended],
    results: &Path,
    interrupted: bool,
    resume: &str,
) -> anyhow::Result<()> {
    let numbers = |state: &str| -> Vec<usize> {
        lines
            .iter()
            .zip(ended)
            .filter(|(_, e)| state_of(e) == state)
            .map(|(l, _)| l.number)
            .collect()
    };
    let (succeeded, failed, left_out) = (
        numbers("succeeded"),
        numbers("failed"),
        numbers("not_started"),
    );
    let spent: f64 = ended
        .iter()
        .filter(|e| e.succeeded())
        .filter_map(|e| e.cost_rub)
        .sum();
    let summary = json!({
        "event": "summary",
        "lines": lines.len(),
        "succeeded": succeeded.len(),
        "failed": failed,
        "notStarted": left_out,
        "spentRub": spent,
        "results": results,
    });
    if ctx.out.is_json() {
        ctx.out.json_line(&summary)?;
    }
    let list = |numbers: &[usize]| -> String {
        let shown: Vec<String> = numbers.iter().take(20).map(ToString::to_string).collect();
        let more = numbers.len().saturating_sub(20);
        format!(
            "line{} {}{}",
            if numbers.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    };
    let mut text = format!(
        "{} of {} line(s) succeeded · {} spent · results in {}",
        succeeded.len(),
        lines.len(),
        output::rub(spent),
        results.display()
    );
    if !failed.is_empty() {
        text.push_str(&format!("\nfailed: {}", list(&failed)));
    }
    if !left_out.is_empty() {
        text.push_str(&format!("\nnot started: {}", list(&left_out)));
    }
    ctx.out.note(text);

    let refused = ended
        .iter()
        .find_map(|e| e.exit.filter(|exit| *exit != Exit::GenerationFailed));
    let exit = if interrupted {
        Some((
            Exit::Interrupted,
            "INTERRUPTED",
            "the batch was stopped before every line ran".to_owned(),
        ))
    } else if let Some(exit) = refused {
        Some((
            exit,
            "BATCH_FAILED",
            format!("the service refused {}", list(&failed)),
        ))
    } else if !failed.is_empty() {
        Some((
            Exit::GenerationFailed,
            "BATCH_FAILED",
            format!("{} failed", list(&failed)),
        ))
    } else if !left_out.is_empty() {
        Some((
            Exit::InsufficientBalance,
            "BUDGET_REACHED",
            format!("{} left out by --max-cost", list(&left_out)),
        ))
    } else {
        None
    };
    match exit {
        None => Ok(()),
        Some((exit, code, message)) => Err(Failure::new(exit, code, message)
            .hint(format!("the journal keeps what was paid for: `{resume}` runs what is left, paying for nothing twice"))
            .into()),
    }
}

/// `batch status`: the lines in each state, from the journal alone.
fn status(ctx: &Context, manifest: &Path, state: Option<&Path>) -> anyhow::Result<()> {
    let journal_path = journal_path(manifest, state)?;
    if !journal_path.exists() {
        return Err(Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            format!(
                "{} has no journal at {}: it never ran",
                manifest.display(),
                journal_path.display()
            ),
        )
        .hint("run the batch first, or pass --state PATH")
        .into());
    }
    // The lines as the manifest has them now, known by their text: a line
    // without a model of its own reads as any.
    let text = manifest::text(manifest)?;
    let lines = manifest::parse(&text, Some("-"), &[]).unwrap_or_default();
    let names = item_names(&lines.iter().map(Line::request).collect::<Vec<_>>());
    let entries: HashMap<String, JournalEntry> = SqliteJournal::open(&journal_path)?
        .entries()?
        .into_iter()
        .map(|e| (e.item.clone(), e))
        .collect();
    let mut states: BTreeMap<&'static str, Vec<Value>> = BTreeMap::new();
    let current: HashSet<&String> = names.iter().collect();
    for (line, name) in lines.iter().zip(&names) {
        let (state, id) = match entries.get(name) {
            None => ("not_started", None),
            Some(JournalEntry { id: None, .. }) => ("sent", None),
            Some(JournalEntry {
                id, ended: None, ..
            }) => ("running", *id),
            Some(JournalEntry { ended: Some(g), .. })
                if g.status == GenerationStatus::Succeeded =>
            {
                ("succeeded", Some(g.id))
            }
            Some(JournalEntry { ended: Some(g), .. }) => ("failed", Some(g.id)),
        };
        states
            .entry(state)
            .or_default()
            .push(json!({"line": line.number, "id": id}));
    }
    for entry in entries.values().filter(|e| !current.contains(&e.item)) {
        states
            .entry("removed")
            .or_default()
            .push(json!({"line": null, "id": entry.id}));
    }
    ctx.out.emit(&states, |out, w| {
        let mut table = output::Table::new(["STATE", "LINES", "WHICH"]);
        for (state, rows) in &states {
            let which: Vec<String> = rows
                .iter()
                .take(12)
                .map(|r| match r["line"].as_u64() {
                    Some(n) => n.to_string(),
                    None => r["id"].as_str().unwrap_or("-").to_owned(),
                })
                .collect();
            let more = if rows.len() > 12 {
                format!(" and {} more", rows.len() - 12)
            } else {
                String::new()
            };
            table.row([
                state.to_string(),
                rows.len().to_string(),
                format!("{}{more}", which.join(", ")),
            ]);
        }
        table.write(out, w)
    })
}
