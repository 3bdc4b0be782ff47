//! `batch status`: how many lines of a manifest are in each state, from its
//! journal alone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use mediagen::{GenerationStatus, Journal, JournalEntry, SqliteJournal, item_names};
use serde_json::{Value, json};

use super::manifest::{self, Line, journal_path};
use crate::cmd::context::Context;
use crate::error::{Exit, Failure};
use crate::output;

/// `batch status`: the lines in each state, from the journal alone.
pub fn run(ctx: &Context, manifest: &Path, state: Option<&Path>) -> anyhow::Result<()> {
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
    let (lines, _) = manifest::parse(&text, Some("-"), &[]);
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
