//! `-v` and `MEDIAGEN_LOG`: what the SDK's tracing tells, on stderr, so that stdout
//! stays the answer.
//!
//! The SDK runs each call in a `mediagen.operation` span (operation, method, path,
//! attempt, status, request_id, generation_id) and tells a retry, a final error
//! answer, a request held back by the rate-limit window and, at trace level, each
//! header as events inside it. `-v` folds these into one line per HTTP attempt;
//! `-vv` adds the headers below it. `MEDIAGEN_LOG` takes an `EnvFilter` directive
//! and prints the raw spans and events for those who want all of them.

use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use crate::error::{Exit, Failure};
use crate::output::{DIM, Output};

/// The SDK's span around each call.
const SPAN: &str = "mediagen.operation";

/// Installs what `-v` (`verbosity` times) and `MEDIAGEN_LOG` ask for; nothing when
/// neither is set, so a plain run pays nothing for tracing.
pub fn install(verbosity: u8, out: &Output) -> anyhow::Result<()> {
    let directives = std::env::var("MEDIAGEN_LOG")
        .ok()
        .filter(|directives| !directives.trim().is_empty());
    if verbosity == 0 && directives.is_none() {
        return Ok(());
    }
    let raw = match directives {
        Some(directives) => {
            let filter = EnvFilter::try_new(&directives).map_err(|err| {
                Failure::new(
                    Exit::Usage,
                    "USAGE_ERROR",
                    format!("MEDIAGEN_LOG=`{directives}` is not a log filter: {err}"),
                )
                .hint("for example MEDIAGEN_LOG=mediagen=debug, or mediagen=trace for the headers")
            })?;
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    // A call that went well has no event: its span's end tells it.
                    .with_span_events(FmtSpan::CLOSE)
                    .with_ansi(out.colors_stderr())
                    .with_filter(filter),
            )
        }
        None => None,
    };
    let attempts = (verbosity > 0).then(|| {
        let headers = verbosity > 1;
        // Only the SDK's own spans and events; headers are trace events.
        let level = if headers { Level::TRACE } else { Level::DEBUG };
        Attempts {
            out: out.clone(),
            headers,
        }
        .with_filter(Targets::new().with_target("mediagen", level))
    });
    tracing_subscriber::registry()
        .with(attempts)
        .with(raw)
        .try_init()?;
    Ok(())
}

/// The layer behind `-v`: a line per HTTP attempt of each `mediagen.operation`.
struct Attempts {
    out: Output,
    /// `-vv`: each attempt's headers below its line.
    headers: bool,
}

/// What is known of the attempt in progress, kept in its span.
#[derive(Debug, Default)]
struct Attempt {
    method: String,
    path: String,
    generation_id: Option<String>,
    /// The attempt's number, which starts a new attempt when it changes.
    number: Option<u64>,
    status: Option<u64>,
    code: Option<String>,
    request_id: Option<String>,
    /// Time the request was held back before it went, and why.
    held: Option<(u64, String)>,
    /// The size of a finished download.
    downloaded: Option<u64>,
    /// `> name: value` and `< name: value`, for `-vv`.
    headers: Vec<String>,
    /// Whether its line was written (at a retry); otherwise it is written when
    /// the span closes.
    told: bool,
}

impl Attempt {
    /// Takes in the span's fields as they are recorded.
    fn update(&mut self, fields: Fields) {
        for (name, value) in fields.0 {
            match name {
                "method" => self.method = value,
                "path" => self.path = value,
                "generation_id" => self.generation_id = Some(value),
                "attempt" => {
                    let number = value.parse().ok();
                    if self.number.is_some() && number != self.number {
                        // A new attempt: what the last one saw is told already.
                        *self = Self {
                            method: std::mem::take(&mut self.method),
                            path: std::mem::take(&mut self.path),
                            generation_id: self.generation_id.take(),
                            ..Self::default()
                        };
                    }
                    self.number = number;
                }
                "status" => self.status = value.parse().ok(),
                "request_id" if !value.is_empty() => self.request_id = Some(value),
                _ => {}
            }
        }
    }

    /// `METHOD PATH STATUS CODE REQUEST_ID`, then what follows (a retry).
    fn line(&self, then: Option<String>) -> String {
        // The generation's id in place of the template's `{id}`, as it was sent.
        let path = match &self.generation_id {
            Some(id) => self.path.replace("{id}", id),
            None => self.path.clone(),
        };
        let mut line = format!("{} {path}", self.method);
        match self.status {
            Some(status) => line.push_str(&format!(" {status}")),
            None => line.push_str(" no answer"),
        }
        for part in [&self.code, &self.request_id].into_iter().flatten() {
            line.push_str(&format!(" {part}"));
        }
        if let Some((delay_ms, reason)) = &self.held {
            line.push_str(&format!(
                " (sent after {} held back: {reason})",
                duration(*delay_ms)
            ));
        }
        if let Some(bytes) = self.downloaded {
            line.push_str(&format!(" · download of {bytes} bytes"));
        }
        if let Some(then) = then {
            line.push_str(&format!(" {then}"));
        }
        line
    }
}

impl Attempts {
    fn tell(&self, attempt: &mut Attempt, then: Option<String>) {
        self.out.note(attempt.line(then));
        for header in attempt.headers.drain(..) {
            self.out
                .note(self.out.paint_err(DIM, format!("  {header}")));
        }
        attempt.told = true;
    }
}

impl<S> Layer<S> for Attempts
where
    S: Subscriber + for<'l> LookupSpan<'l>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != SPAN {
            return;
        }
        if let Some(span) = ctx.span(id) {
            let mut attempt = Attempt::default();
            attempt.update(Fields::of_span(attrs));
            span.extensions_mut().insert(attempt);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(attempt) = span.extensions_mut().get_mut::<Attempt>()
        {
            let mut fields = Fields::default();
            values.record(&mut fields);
            attempt.update(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(attempt) = extensions.get_mut::<Attempt>() else {
            return;
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        match fields.get("message") {
            Some("retrying") => {
                if let Some(code) = fields.get("code") {
                    attempt.code = Some(code.to_owned());
                }
                if let Some(id) = fields.get("request_id").filter(|id| !id.is_empty()) {
                    attempt.request_id = Some(id.to_owned());
                }
                let mut then = String::from("retrying");
                if let Some(delay_ms) = fields.get("delay_ms").and_then(|ms| ms.parse().ok()) {
                    then.push_str(&format!(" in {}", duration(delay_ms)));
                }
                if let Some(reason) = fields.get("reason") {
                    then.push_str(&format!(": {reason}"));
                }
                self.tell(attempt, Some(then));
            }
            Some("error answer") => attempt.code = fields.get("code").map(str::to_owned),
            Some("downloaded") => {
                attempt.downloaded = fields.get("bytes").and_then(|b| b.parse().ok())
            }
            Some("holding a request back") => {
                if let Some(delay_ms) = fields.get("delay_ms").and_then(|ms| ms.parse::<u64>().ok())
                {
                    let before = attempt.held.as_ref().map_or(0, |(ms, _)| *ms);
                    let reason = fields.get("reason").unwrap_or_default().to_owned();
                    attempt.held = Some((before + delay_ms, reason));
                }
            }
            Some("header") if self.headers => {
                let arrow = match fields.get("direction") {
                    Some("response") => '<',
                    _ => '>',
                };
                let name = fields.get("name").unwrap_or_default();
                let value = fields.get("value").unwrap_or_default();
                attempt.headers.push(format!("{arrow} {name}: {value}"));
            }
            _ => {}
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(attempt) = span.extensions_mut().get_mut::<Attempt>()
            && !attempt.told
        {
            self.tell(attempt, None);
        }
    }
}

/// A span's or an event's fields as text, by name.
#[derive(Debug, Default)]
struct Fields(Vec<(&'static str, String)>);

impl Fields {
    fn of_span(attrs: &Attributes<'_>) -> Self {
        let mut fields = Self::default();
        attrs.record(&mut fields);
        fields
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(field, _)| *field == name)
            .map(|(_, value)| value.as_str())
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_owned()));
    }

    // Numbers, `%`-displayed values and the message all arrive here.
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
}

/// `1.2s` or `250ms`.
fn duration(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.1}s", Duration::from_millis(ms).as_secs_f64())
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_request_as_sent_and_what_came_back() {
        let attempt = Attempt {
            method: "GET".into(),
            path: "/v1/generations/{id}".into(),
            generation_id: Some("7d3f".into()),
            status: Some(429),
            code: Some("RATE_LIMIT_ERROR".into()),
            request_id: Some("req_abc".into()),
            ..Attempt::default()
        };
        assert_eq!(
            attempt.line(Some("retrying in 1.2s: rate limit".into())),
            "GET /v1/generations/7d3f 429 RATE_LIMIT_ERROR req_abc retrying in 1.2s: rate limit"
        );
        let unanswered = Attempt {
            method: "POST".into(),
            path: "/v1/billing/topup".into(),
            held: Some((250, "the rate-limit window is used up".into())),
            ..Attempt::default()
        };
        assert_eq!(
            unanswered.line(None),
            "POST /v1/billing/topup no answer (sent after 250ms held back: the rate-limit window \
             is used up)"
        );
    }

    #[test]
    fn delays_read_in_seconds_or_milliseconds() {
        assert_eq!(duration(1234), "1.2s");
        assert_eq!(duration(1000), "1.0s");
        assert_eq!(duration(40), "40ms");
    }
}
