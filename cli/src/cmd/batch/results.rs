//! The end of a batch: the results file beside the journal, the summary, and the
//! exit code.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Context as _;
use serde_json::json;

use super::manifest::Line;
use super::report::Ended;
use crate::cli::CommandId;
use crate::cmd::context::Context;
use crate::error::{Exit, Failure};
use crate::hint::{self, Topic};
use crate::output;

/// One object per line of the manifest, in its order, written whole and then
/// renamed, so that a reader never sees half of it.
pub fn write_results(path: &Path, lines: &[Line], ended: &[Ended]) -> anyhow::Result<()> {
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
pub fn summarize(
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
            .hint(next_steps(lines, ended, resume))
            .into()),
    }
}

/// What to do next: for the lines whose generation failed, the hint of their
/// failure code (a rerun creates anew only what failed for now; what fails the
/// same way again needs a changed line); for the rest (refused, left out, not
/// reached), the rerun that goes on.
fn next_steps(lines: &[Line], ended: &[Ended], resume: &str) -> String {
    let mut steps: Vec<(&str, Vec<usize>, BTreeSet<String>)> = Vec::new();
    let mut rest = false;
    for (line, ended) in lines.iter().zip(ended) {
        if state_of(ended) == "succeeded" {
            continue;
        }
        let Some(failure) = &ended.failure else {
            rest = true;
            continue;
        };
        let Some(hint) = hint::hint(&Topic::Failed(failure.clone()), CommandId::Batch) else {
            rest = true;
            continue;
        };
        match steps.iter_mut().find(|(h, _, _)| *h == hint) {
            Some((_, numbers, codes)) => {
                numbers.push(line.number);
                codes.insert(failure.to_string());
            }
            None => steps.push((
                hint,
                vec![line.number],
                BTreeSet::from([failure.to_string()]),
            )),
        }
    }
    let mut told: Vec<String> = steps
        .into_iter()
        .map(|(hint, numbers, codes)| {
            let codes: Vec<String> = codes.into_iter().collect();
            format!("{} ({}): {hint}", list(&numbers), codes.join(", "))
        })
        .collect();
    if rest {
        told.push(format!(
            "the journal keeps what was paid for: `{resume}` runs what is left, paying for \
             nothing twice"
        ));
    }
    told.join("\n        ")
}

/// `line 3` or `lines 1, 2, 4`, the first 20 of them.
fn list(numbers: &[usize]) -> String {
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
}
