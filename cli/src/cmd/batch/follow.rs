//! Following the lines to their end: each outcome told as it comes, and the
//! results of those that succeed downloaded while the others run.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use futures::{Stream, StreamExt};
use mediagen::{BatchOutcome, Client, Error, Generation};
use tokio::task::JoinSet;

use super::manifest::Line;
use super::report::{Ended, Report};
use crate::error::Exit;

/// The downloads under way: a line's index, and the files written or why not.
type Downloads = JoinSet<(usize, anyhow::Result<Vec<PathBuf>>)>;

/// How each line ended, in the manifest's order, once every outcome has come and
/// every download has ended: into `output`, or for a line that names its
/// `output`, into the current directory.
pub async fn follow(
    mut outcomes: impl Stream<Item = BatchOutcome> + Unpin,
    client: &Client,
    lines: &[Line],
    output: Option<&Path>,
    report: &Report,
) -> anyhow::Result<Vec<Ended>> {
    let mut results: Vec<Option<Ended>> = vec![None; lines.len()];
    let mut downloads = Downloads::new();
    let here = match output {
        None if lines.iter().any(|line| line.output.is_some()) => {
            Some(std::env::current_dir().context("while reading the current directory")?)
        }
        _ => None,
    };
    while let Some(outcome) = outcomes.next().await {
        let line = &lines[outcome.index];
        let ended = Ended::of(&outcome);
        report.ended(&ended);
        // A line that names its output is downloaded without -o as well: into
        // the current directory, as it says (and as the start told).
        let dir = output.or_else(|| line.output.as_ref().and(here.as_deref()));
        match (&outcome.result, dir) {
            (Ok(generation), Some(dir)) => {
                let (client, targets) = (client.clone(), targets(line, generation, dir));
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
    downloaded(downloads, lines, &mut results, report).await?;
    Ok(results.into_iter().map(Option::unwrap_or_default).collect())
}

/// Waits for every download, and tells each line whose results are written, or
/// could not be.
async fn downloaded(
    mut downloads: Downloads,
    lines: &[Line],
    results: &mut [Option<Ended>],
    report: &Report,
) -> anyhow::Result<()> {
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
    Ok(())
}

/// Where each result of `generation` goes in `dir`: the line's `output` (with
/// `-N` before its extension when there are several), else `LINE-` before the
/// name `generate -o` gives it (`ID-N.EXT`); N counts from 1 everywhere.
fn targets(line: &Line, generation: &Generation, dir: &Path) -> Vec<(String, PathBuf)> {
    let count = generation.output_urls.len();
    mediagen::output_paths(generation, dir)
        .into_iter()
        .enumerate()
        .map(|(n, (url, path))| {
            let named = path.file_name().unwrap_or_default().to_string_lossy();
            let extension = path
                .extension()
                .map(|ext| format!(".{}", ext.to_string_lossy()))
                .unwrap_or_default();
            let name = match &line.output {
                Some(output) if count == 1 => output.clone(),
                Some(output) => match output.rsplit_once('.') {
                    Some((stem, ext)) => format!("{stem}-{}.{ext}", n + 1),
                    None => format!("{output}-{}{extension}", n + 1),
                },
                None => format!("{}-{named}", line.number),
            };
            (url, dir.join(name))
        })
        .collect()
}

/// Downloads what is not there yet (a file there is whole: a download is
/// written beside it and renamed at its end); the paths of every result.
async fn download(
    client: &Client,
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
