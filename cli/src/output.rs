//! All printing: JSON on stdout for scripts; tables, colour and progress on a
//! terminal for people. Nothing else in the command writes to stdout or stderr.

use std::fmt::Display;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use futures::{Stream, StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::cli::{ColorWhen, Format, Global};
use crate::jq;

/// How this run prints.
#[derive(Debug, Clone)]
pub struct Output {
    json: bool,
    /// JSON Lines: one object per line, the items of a list each on its own.
    lines: bool,
    color_out: bool,
    color_err: bool,
    stdout_tty: bool,
    stderr_tty: bool,
    /// Spinners and bars are drawn: stderr is a terminal and no log lines
    /// (`-v`, `MEDIAGEN_LOG`) go there to be drawn over.
    draws: bool,
    /// `--jq`: what is printed instead of each JSON document.
    jq: Option<Arc<Jq>>,
}

/// A `--jq` filter and the count of documents it has run on, which names the one
/// it failed on.
#[derive(Debug)]
struct Jq {
    filter: jq::Filter,
    documents: AtomicU64,
}

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const GREEN: Style = AnsiColor::Green.on_default();
pub const RED: Style = AnsiColor::Red.on_default().bold();
pub const YELLOW: Style = AnsiColor::Yellow.on_default();

impl Output {
    pub fn new(global: &Global) -> Self {
        let format = match (global.json, global.format) {
            (true, _) => Format::Json,
            // A filter reads JSON; `--format human` with it is refused as it is parsed.
            (false, None) if global.jq.is_some() => Format::Json,
            (false, Some(format)) => format,
            // Scripts read stdout through a pipe; people read a terminal.
            (false, None) if stdout_is_terminal() => Format::Human,
            (false, None) => Format::Json,
        };
        let color = |tty: bool| match global.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => auto_color(tty),
        };
        let stdout_tty = stdout_is_terminal();
        let stderr_tty = io::stderr().is_terminal();
        let logs = global.verbose > 0 || std::env::var_os("MEDIAGEN_LOG").is_some();
        Self {
            json: format != Format::Human,
            lines: format == Format::Jsonl,
            color_out: color(stdout_tty),
            color_err: color(stderr_tty),
            stdout_tty,
            stderr_tty,
            draws: stderr_tty && !logs,
            jq: global.jq.clone().map(|filter| {
                Arc::new(Jq {
                    filter,
                    documents: AtomicU64::new(0),
                })
            }),
        }
    }

    /// Whether the output is for scripts: JSON or JSON Lines.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Prints `value` as JSON for scripts, or calls `human` to write it for people. In
    /// JSON Lines a list is one line per item, and anything else one line.
    pub fn emit<T: Serialize + ?Sized>(
        &self,
        value: &T,
        human: impl FnOnce(&Self, &mut dyn Write) -> io::Result<()>,
    ) -> anyhow::Result<()> {
        let mut stdout = io::stdout().lock();
        if self.lines {
            match serde_json::to_value(value)? {
                serde_json::Value::Array(items) => self.write_lines(&mut stdout, &items)?,
                other => self.write_lines(&mut stdout, &[other])?,
            }
        } else if let Some(jq) = &self.jq {
            jq.write(&serde_json::to_value(value)?, &mut stdout)?;
        } else if self.json {
            serde_json::to_writer_pretty(&mut stdout, value)?;
            writeln!(stdout)?;
        } else {
            human(self, &mut stdout)?;
        }
        stdout.flush()?;
        Ok(())
    }

    /// Prints a list that arrives page by page. In JSON Lines each item is written as
    /// soon as its page has come and none is kept, so memory stays flat however long
    /// the list; a failure part-way leaves the lines already written, and the error
    /// envelope follows them. In JSON and for people the list is printed whole, once
    /// complete, since a table's columns depend on every row.
    pub async fn list<T, E>(
        &self,
        items: impl Stream<Item = Result<T, E>>,
        human: impl FnOnce(&Self, &mut dyn Write, &[T]) -> io::Result<()>,
    ) -> anyhow::Result<()>
    where
        T: Serialize,
        E: std::error::Error + Send + Sync + 'static,
    {
        if !self.lines {
            let items: Vec<T> = items.try_collect().await?;
            return self.emit(&items, |out, w| human(out, w, &items));
        }
        // The items at hand without waiting: the rest of the page that just came.
        let mut pages = std::pin::pin!(items.ready_chunks(PAGE_AT_MOST));
        while let Some(page) = pages.next().await {
            // Locked only between awaits, and written in one piece per page.
            let mut stdout = BufWriter::new(io::stdout().lock());
            let written = page.into_iter().try_for_each(|item| {
                self.write_lines(&mut stdout, &[item?])?;
                anyhow::Ok(())
            });
            stdout.flush()?;
            written?;
        }
        Ok(())
    }

    /// A JSON answer of the service as it came (`mediagen api`): indented for a person
    /// at a terminal, on one line for a program or in JSON Lines.
    pub fn answer(&self, value: &serde_json::Value) -> anyhow::Result<()> {
        if self.stdout_tty && !self.lines && self.jq.is_none() {
            let mut stdout = io::stdout().lock();
            serde_json::to_writer_pretty(&mut stdout, value)?;
            writeln!(stdout)?;
            stdout.flush()?;
            Ok(())
        } else {
            self.json_line(value)
        }
    }

    /// One JSON line on stdout, for streams of events; with `--jq`, what the filter
    /// makes of it.
    pub fn json_line<T: Serialize>(&self, value: &T) -> anyhow::Result<()> {
        let mut stdout = io::stdout().lock();
        self.write_lines(&mut stdout, std::slice::from_ref(value))?;
        stdout.flush()?;
        Ok(())
    }

    /// An error's envelope on stdout, one line, never filtered: `--jq` is for answers,
    /// and a script must still see why there is none.
    pub fn envelope<T: Serialize>(&self, value: &T) -> anyhow::Result<()> {
        json_line(value)
    }

    /// Each value as one line of JSON, or through `--jq`.
    fn write_lines<T: Serialize>(&self, w: &mut impl Write, values: &[T]) -> anyhow::Result<()> {
        match &self.jq {
            Some(jq) => values
                .iter()
                .try_for_each(|value| jq.write(&serde_json::to_value(value)?, w)),
            None => Ok(write_lines(w, values)?),
        }
    }

    /// A line on stdout for people, whatever the format (used where JSON is not the
    /// answer, such as `valid` of `webhooks verify`).
    pub fn plain(&self, text: impl Display) -> anyhow::Result<()> {
        let mut stdout = io::stdout().lock();
        writeln!(stdout, "{text}")?;
        stdout.flush()?;
        Ok(())
    }

    /// Raw bytes on stdout: a document or a script.
    pub fn bytes(&self, bytes: &[u8]) -> anyhow::Result<()> {
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        Ok(())
    }

    /// A message for people on stderr: progress, notes, hints. Kept out of stdout so
    /// that stdout stays the answer.
    pub fn note(&self, text: impl Display) {
        // A closed stderr has nowhere to report to.
        let _ = writeln!(io::stderr().lock(), "{text}");
    }

    /// Asks a person on the terminal for a line, the prompt on stderr.
    pub fn ask(&self, prompt: &str) -> anyhow::Result<String> {
        let mut stderr = io::stderr().lock();
        write!(stderr, "{prompt}")?;
        stderr.flush()?;
        let mut line = String::new();
        io::stdin().read_line(&mut line)?;
        Ok(line.trim().to_owned())
    }

    /// Asks a person on the terminal for a secret, which is not echoed.
    pub fn ask_secret(&self, prompt: &str) -> anyhow::Result<String> {
        Ok(rpassword::prompt_password(prompt)?)
    }

    /// `text` in `style` when stdout shows colour.
    pub fn paint(&self, style: Style, text: impl Display) -> String {
        paint(self.color_out, style, text)
    }

    /// `text` in `style` when stderr shows colour.
    pub fn paint_err(&self, style: Style, text: impl Display) -> String {
        paint(self.color_err, style, text)
    }

    /// A status word in its colour: green for success, red for failure.
    pub fn status(&self, status: &str) -> String {
        self.paint(status_style(status), status)
    }

    /// Whether stderr is a terminal.
    pub fn interactive(&self) -> bool {
        self.stderr_tty
    }

    /// Whether spinners and bars are drawn; otherwise progress is told in lines.
    pub fn draws_progress(&self) -> bool {
        self.draws
    }

    /// Whether stderr shows colour.
    pub fn colors_stderr(&self) -> bool {
        self.color_err
    }

    /// A spinner on stderr, drawn only on a terminal.
    pub fn spinner(&self) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, self.draw_target());
        bar.set_style(
            ProgressStyle::with_template("{spinner:.cyan} {msg} {elapsed:.dim}")
                .expect("a valid spinner template"),
        );
        bar.enable_steady_tick(Duration::from_millis(100));
        bar
    }

    /// A byte progress bar on stderr, drawn only on a terminal.
    pub fn bytes_bar(&self, name: &str) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, self.draw_target());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30.cyan/blue}] {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .expect("a valid bar template")
            .progress_chars("=> "),
        );
        bar.set_message(name.to_owned());
        bar
    }

    /// A batch's bar on stderr, drawn only on a terminal: lines done of `len`,
    /// the message (active, failed, spent) and the time left.
    pub fn batch_bar(&self, len: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(len), self.draw_target());
        bar.set_style(
            ProgressStyle::with_template(
                "[{bar:30.cyan/blue}] {pos}/{len} done · {msg} · {eta} left",
            )
            .expect("a valid bar template")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// A line for people on stderr above `bar`, which is drawn again below it.
    pub fn note_above(&self, bar: &ProgressBar, text: impl Display) {
        bar.suspend(|| self.note(text));
    }

    /// An SDK progress callback that moves `bar`.
    pub fn track(bar: &ProgressBar) -> impl FnMut(mediagen::Progress) + Send + use<> {
        let bar = bar.clone();
        move |progress| {
            if let Some(total) = progress.total {
                bar.set_length(total);
            }
            bar.set_position(progress.bytes);
        }
    }

    fn draw_target(&self) -> ProgressDrawTarget {
        if self.draws {
            ProgressDrawTarget::term_like(Box::new(Narrower(console::Term::stderr())))
        } else {
            ProgressDrawTarget::hidden()
        }
    }
}

/// Stderr as indicatif sees it, two columns narrower than it is. A line drawn to
/// the last column leaves the cursor there, so the `^C` the terminal echoes wraps
/// onto a new line, and clearing the bar then clears the wrong one, leaving its
/// last frame on screen. Two free columns hold the echo.
#[derive(Debug)]
struct Narrower(console::Term);

impl indicatif::TermLike for Narrower {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(2)
    }

    fn height(&self) -> u16 {
        self.0.size().0
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.0.write_str(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Jq {
    /// The filter's outputs for one document. A failure names the document by its
    /// number in this run and, where it has one, its id.
    fn write(&self, value: &serde_json::Value, w: &mut impl Write) -> anyhow::Result<()> {
        let number = self.documents.fetch_add(1, Ordering::Relaxed) + 1;
        match self.filter.write(value, w) {
            Ok(()) => Ok(()),
            Err(jq::RunError::Io(err)) => Err(err.into()),
            Err(jq::RunError::Filter(why)) => {
                let id = ["id", "webhookId", "seq"]
                    .iter()
                    .find_map(|key| value.get(key))
                    .map(|id| format!(", {id}"))
                    .unwrap_or_default();
                Err(anyhow::anyhow!(
                    "the --jq filter failed on record {number}{id}: {why}"
                ))
            }
        }
    }
}

/// One JSON line on stdout, before there is an [`Output`]: a wrong command line.
pub fn json_line<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    write_lines(&mut stdout, std::slice::from_ref(value))?;
    stdout.flush()?;
    Ok(())
}

/// Whether a stream shows colour when `--color` is `auto`: a terminal, and
/// neither `NO_COLOR` nor a dumb terminal says otherwise.
fn auto_color(tty: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    tty && !no_color && std::env::var("TERM").as_deref() != Ok("dumb")
}

/// clap's own text for a wrong command line, or for `--help` and `--version`: on
/// stderr or stdout, as clap chooses, with the values of a closed set on the
/// error line (see [`allowed_on_the_error_line`]).
pub fn command_line_message(err: &clap::Error) -> io::Result<()> {
    let rendered = err.render();
    let (tty, mut stream): (bool, Box<dyn Write>) = if err.use_stderr() {
        (io::stderr().is_terminal(), Box::new(io::stderr().lock()))
    } else {
        (stdout_is_terminal(), Box::new(io::stdout().lock()))
    };
    let text = if auto_color(tty) {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    stream.write_all(allowed_on_the_error_line(&text).as_bytes())?;
    stream.flush()
}

/// The first line of clap's message for a wrong command line, without `error: `,
/// with the values of a closed set on it: the envelope's message.
pub fn command_line_error(err: &clap::Error) -> String {
    let text = allowed_on_the_error_line(&err.render().to_string());
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}

/// clap's text with the `[possible values: …]` of a refused value moved up onto
/// the error line, where gh and cargo's readers look for them.
fn allowed_on_the_error_line(text: &str) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let values = lines
        .iter()
        .skip(1)
        .position(|line| line.starts_with("  [possible values: "))
        .map(|at| lines.remove(at + 1));
    if let (Some(values), Some(first)) = (values, lines.first_mut()) {
        first.push(' ');
        first.push_str(values.trim_start());
    }
    lines.join("\n")
}

/// Whether stdout is a terminal, where people read; scripts read a pipe.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// The most items of a list written at once in JSON Lines: a page of the service's
/// is smaller, so this only bounds what a very large page holds back.
const PAGE_AT_MOST: usize = 1000;

/// Each value as one line of JSON.
fn write_lines<T: Serialize>(w: &mut impl Write, values: &[T]) -> io::Result<()> {
    for value in values {
        serde_json::to_writer(&mut *w, value)?;
        writeln!(w)?;
    }
    Ok(())
}

fn paint(on: bool, style: Style, text: impl Display) -> String {
    if on {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// The colour of an HTTP status: 2xx went through, 410 and 5xx are failures, the
/// rest wants a look.
pub fn http_status_style(status: u64) -> Style {
    match status {
        200..=299 => GREEN,
        410 | 500.. => RED,
        _ => YELLOW,
    }
}

pub fn status_style(status: &str) -> Style {
    match status {
        "SUCCEEDED" | "ACTIVE" | "PAID" | "DELIVERED" | "SUCCESS" => GREEN,
        "FAILED" | "FAILING" | "DISABLED" | "EXPIRED" => RED,
        "CANCELLED" | "PAUSED" => DIM,
        "PENDING" | "PROCESSING" | "ISSUED" => YELLOW,
        _ => Style::new(),
    }
}

/// What people see for a value the answer did not carry: only some fields are
/// guaranteed by the service, the others may be absent.
pub const ABSENT: &str = "-";

/// `show(value)`, or [`ABSENT`] when there is no value.
pub fn or_absent<T>(value: Option<T>, show: impl FnOnce(T) -> String) -> String {
    value.map_or_else(|| ABSENT.to_owned(), show)
}

/// Roubles as people read them.
pub fn rub(amount: f64) -> String {
    format!("{amount:.2} RUB")
}

/// A duration of real time for people: whole seconds, or tenths below one
/// second, so that a short one never reads `0 s`.
pub fn seconds(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.1} s", seconds.max(0.1))
    } else {
        format!("{seconds:.0} s")
    }
}

/// A time in UTC, to the second.
pub fn time(at: &chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// A table with a header, columns aligned by their widest cell. Cells may carry a
/// style, applied after padding so colour never shifts the columns.
#[derive(Debug)]
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<(String, Style)>>,
}

impl Table {
    pub fn new(header: impl IntoIterator<Item = &'static str>) -> Self {
        Self {
            header: header.into_iter().collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: impl IntoIterator<Item = String>) {
        self.styled_row(cells.into_iter().map(|text| (text, Style::new())));
    }

    pub fn styled_row(&mut self, cells: impl IntoIterator<Item = (String, Style)>) {
        self.rows.push(cells.into_iter().collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn write(&self, out: &Output, w: &mut dyn Write) -> io::Result<()> {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, (text, _)) in widths.iter_mut().zip(row) {
                *width = (*width).max(text.chars().count());
            }
        }
        let header = self.header.iter().map(|h| (h.to_string(), BOLD));
        for row in std::iter::once(header.collect::<Vec<_>>()).chain(self.rows.iter().cloned()) {
            let mut line = String::new();
            for (index, (text, style)) in row.iter().enumerate().take(columns) {
                let last = index + 1 == columns;
                let pad = if last {
                    0
                } else {
                    widths[index] - text.chars().count() + 2
                };
                line.push_str(&out.paint(*style, text));
                line.extend(std::iter::repeat_n(' ', pad));
            }
            writeln!(w, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// Label and value pairs, the labels aligned: one resource for people.
pub fn fields(out: &Output, w: &mut dyn Write, pairs: &[(&str, String)]) -> io::Result<()> {
    let width = pairs
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    for (label, value) in pairs {
        let label = format!("{label:width$}");
        writeln!(w, "{}  {value}", out.paint(DIM, label))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Output {
        Output {
            json: false,
            lines: false,
            color_out: false,
            color_err: false,
            stdout_tty: false,
            stderr_tty: false,
            draws: false,
            jq: None,
        }
    }

    #[test]
    fn tables_align_columns_by_characters_not_bytes() {
        let mut table = Table::new(["NAME", "PRICE"]);
        table.row(["Озвучка".to_owned(), "1.00 RUB".to_owned()]);
        table.row(["flux".to_owned(), "2.50 RUB".to_owned()]);
        let mut buf = Vec::new();
        table.write(&plain(), &mut buf).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "NAME     PRICE\nОзвучка  1.00 RUB\nflux     2.50 RUB\n"
        );
    }

    #[test]
    fn the_values_of_a_closed_set_are_told_on_the_error_line() {
        let text = "error: invalid value 'purple' for '--color <WHEN>'\n  [possible values: auto, \
                    always, never]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            allowed_on_the_error_line(text),
            "error: invalid value 'purple' for '--color <WHEN>' [possible values: auto, always, \
             never]\n\nFor more information, try '--help'.\n"
        );
        let other = "error: unexpected argument '--colour' found\n";
        assert_eq!(allowed_on_the_error_line(other), other);
    }

    #[test]
    fn colour_is_added_after_padding() {
        let out = Output {
            color_out: true,
            ..plain()
        };
        let mut table = Table::new(["A", "B"]);
        table.styled_row([("x".to_owned(), GREEN), ("y".to_owned(), Style::new())]);
        let mut buf = Vec::new();
        table.write(&out, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains(&format!("{GREEN}x{GREEN:#}  y")), "{text:?}");
    }
}
