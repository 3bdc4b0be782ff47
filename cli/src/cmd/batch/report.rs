//! What the batch tells as it goes: JSON Lines on stdout for scripts, a bar and a
//! line per failure on stderr for people; and how each line ended.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use indicatif::ProgressBar;
use mediagen::{
    BatchEvent, BatchOutcome, BatchProgress, Error, FailureCode, Generation, GenerationStatus,
};
use serde_json::{Value, json};
use uuid::Uuid;

use super::manifest::Line;
use crate::error::{Exit, Failure};
use crate::output::{self, Output, RED};

/// How one line of the batch ended.
#[derive(Debug, Clone, Default)]
pub struct Ended {
    pub id: Option<Uuid>,
    pub status: Option<String>,
    pub cost_rub: Option<f64>,
    pub files: Vec<PathBuf>,
    pub code: Option<String>,
    /// The generation's failure code, when it ended `FAILED`: what the next
    /// step depends on.
    pub failure: Option<FailureCode>,
    pub message: Option<String>,
    pub request_id: Option<String>,
    /// Why it was not started, when it was not.
    pub left_out: Option<String>,
    pub exit: Option<Exit>,
}

impl Ended {
    pub fn of(outcome: &BatchOutcome) -> Self {
        match &outcome.result {
            Ok(generation) => Self::generation(generation),
            Err(Error::NotStarted { reason }) => Self {
                left_out: Some(reason.clone()),
                ..Self::default()
            },
            Err(err) => {
                let failure = Failure::from(err);
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
                    failure: generation.and_then(|g| g.error_code.clone()),
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

    pub fn succeeded(&self) -> bool {
        self.status.as_deref() == Some(GenerationStatus::Succeeded.as_str())
    }

    /// The line's object in events and in the results file.
    pub fn value(&self, line: &Line, event: &str) -> Value {
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

/// The batch's output while it runs; clones tell on the same bar.
#[derive(Debug, Clone)]
pub struct Report {
    pub out: Output,
    pub bar: ProgressBar,
    tally: Arc<Mutex<Tally>>,
}

#[derive(Debug, Default)]
struct Tally {
    active: usize,
    failed: usize,
    spent: f64,
}

impl Report {
    /// The bar of a batch of `lines` lines, drawn at once.
    pub fn start(out: &Output, lines: usize) -> Self {
        let report = Self {
            out: out.clone(),
            bar: out.batch_bar(lines as u64),
            tally: Arc::default(),
        };
        report.progress();
        report
    }

    pub fn event(&self, line: &Line, event: &str, ended: &Ended) {
        if self.out.is_json() {
            // A reader that has gone cannot be told; the batch goes on.
            let _ = self.out.json_line(&ended.value(line, event));
        }
    }

    /// The SDK's progress callback: the number of active generations on the bar,
    /// and an event for each create, resume and journal entry.
    pub fn on_progress(&self, lines: Vec<Line>) -> impl FnMut(&BatchProgress) + Send + use<> {
        let report = self.clone();
        move |p| {
            report.tally().active = p.active;
            let id = match &p.event {
                BatchEvent::Created { id } => Some(("created", *id)),
                BatchEvent::Resumed { id } => Some(("resumed", *id)),
                BatchEvent::Recorded { id } => Some(("recorded", *id)),
                _ => None,
            };
            if let Some((event, id)) = id {
                let started = Ended {
                    id: Some(id),
                    ..Ended::default()
                };
                report.event(&lines[p.index], event, &started);
            }
            report.progress();
        }
    }

    /// A line has ended: counted, and the bar moves.
    pub fn ended(&self, ended: &Ended) {
        {
            let mut tally = self.tally();
            if ended.succeeded() {
                tally.spent += ended.cost_rub.unwrap_or_default();
            } else if ended.left_out.is_none() {
                tally.failed += 1;
            }
        }
        self.bar.inc(1);
        self.progress();
    }

    pub fn failed(&self, line: &Line, ended: &Ended) {
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

    fn progress(&self) {
        let tally = self.tally();
        self.bar.set_message(format!(
            "{} active · {} failed · {} spent",
            tally.active,
            tally.failed,
            output::rub(tally.spent)
        ));
    }

    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }
}
