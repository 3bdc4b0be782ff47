//! `mediagen mock logs`: a running mock's live journal (`GET /_mock/events`, Server-Sent
//! Events) as lines for people or JSON Lines for scripts. Following, it resumes after a
//! lost connection with `Last-Event-ID`, which the mock answers with what it kept since.

use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

use super::context::Context;
use crate::cli::mock::LogsArgs;
use crate::error::{Exit, Failure};
use crate::output::{DIM, GREEN, Output, RED, YELLOW};
use crate::parse::StatusFilter;

/// The first pause before reconnecting, doubled up to [`RECONNECT_AT_MOST`]: the
/// mock keeps its last 8,192 events for a returning reader, a few seconds of a
/// busy world, so the reader comes back quickly.
const RECONNECT_FIRST: Duration = Duration::from_millis(50);
const RECONNECT_AT_MOST: Duration = Duration::from_secs(2);

pub async fn run(ctx: &Context, args: LogsArgs) -> anyhow::Result<()> {
    let base_url = ctx.base_url()?;
    let url = format!("{}/_mock/events", base_url.trim_end_matches('/'));
    let client = reqwest::Client::builder()
        // The token goes to the configured address only.
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let wanted = Wanted::of(&args);
    let mut journal = Journal {
        out: &ctx.out,
        wanted: &wanted,
        last: None,
    };
    let mut pause = RECONNECT_FIRST;
    let mut connected_once = false;
    loop {
        let mut request = client
            .get(&url)
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(token) = &args.token {
            request = request.bearer_auth(token);
        }
        match journal.last {
            Some(seq) => request = request.header("Last-Event-ID", seq.to_string()),
            None if !connected_once && (args.history || !args.follow) => {
                request = request.query(&[("history", "true")]);
            }
            None => {}
        }
        let lost = match request.send().await {
            Ok(response) if response.status().is_success() => {
                connected_once = true;
                pause = RECONNECT_FIRST;
                match journal.read(response, args.follow).await {
                    Ok(Read::HistoryEnded) => return Ok(()),
                    Ok(Read::Closed) => "the mock closed the stream".to_owned(),
                    Err(err) => format!("{err:#}"),
                }
            }
            Ok(response) => return Err(refused(response, &url).await),
            // A first connection that fails is a wrong address or a mock not started:
            // said at once, not tried forever.
            Err(err) if !connected_once || !args.follow => {
                return Err(anyhow::Error::new(err).context(format!("while connecting to {url}")));
            }
            Err(err) => format!("{:#}", anyhow::Error::new(err)),
        };
        if !args.follow {
            anyhow::bail!("the stream of {url} ended before its history did: {lost}");
        }
        let resume = journal
            .last
            .map_or_else(String::new, |seq| format!(" after event {seq}"));
        ctx.out.note(ctx.out.paint_err(
            DIM,
            format!("connection lost ({lost}); resuming{resume} in {pause:?}"),
        ));
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(RECONNECT_AT_MOST);
    }
}

/// A refusal of the stream (a wrong token, a route that is not a mock's) as the
/// command's error.
async fn refused(response: reqwest::Response, url: &str) -> anyhow::Error {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let message = body["error"]["message"]
        .as_str()
        .map_or_else(|| format!("{url} answered {status}"), str::to_owned);
    let failure = match status.as_u16() {
        401 | 403 => Failure::new(Exit::Authentication, "AUTHENTICATION_ERROR", message).hint(
            "pass the mock's admin token, or the world's control token, with --token or \
             MEDIAGEN_MOCK_ADMIN_TOKEN",
        ),
        404 => Failure::new(Exit::Usage, "NOT_FOUND", message)
            .hint("--base-url must be a mock's address, or a world's baseUrl"),
        _ => Failure::new(Exit::Other, "CLI_ERROR", message),
    };
    failure.into()
}

/// How a read of the stream ended.
enum Read {
    /// The history's end, for a reader that wanted only that.
    HistoryEnded,
    /// The mock ended the stream.
    Closed,
}

/// The events printed so far, and what to print.
struct Journal<'a> {
    out: &'a Output,
    wanted: &'a Wanted,
    /// The `seq` of the last live event seen, where a reconnection resumes.
    last: Option<u64>,
}

impl Journal<'_> {
    /// Reads the stream's messages and prints the wanted events, until the stream
    /// ends, or, for a reader that does not follow, until the history does.
    async fn read(
        &mut self,
        mut response: reqwest::Response,
        follow: bool,
    ) -> anyhow::Result<Read> {
        let mut pending: Vec<u8> = Vec::new();
        let mut data = String::new();
        while let Some(chunk) = response.chunk().await.context("while reading the stream")? {
            pending.extend_from_slice(&chunk);
            // Whole lines only; the rest waits for the next chunk.
            let Some(end) = pending.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let lines: Vec<u8> = pending.drain(..=end).collect();
            for line in String::from_utf8_lossy(&lines).lines() {
                if line.is_empty() {
                    if !data.is_empty() {
                        self.message(&std::mem::take(&mut data))?;
                    }
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.strip_prefix(' ').unwrap_or(value));
                } else if line.starts_with(": end of history") && !follow {
                    return Ok(Read::HistoryEnded);
                }
                // `id:` repeats the event's `seq`, read from the data; other
                // comments keep an idle stream open.
            }
        }
        Ok(Read::Closed)
    }

    /// One message: an event, or `lagged` in place of events the reader missed.
    fn message(&mut self, data: &str) -> anyhow::Result<()> {
        let event: Value = match serde_json::from_str(data) {
            Ok(event) => event,
            Err(err) => {
                self.out.note(format!(
                    "skipped a message that is not JSON ({err}): {data}"
                ));
                return Ok(());
            }
        };
        if event["type"] == "lagged" {
            let missed = event["missed"].as_u64().unwrap_or_default();
            self.out.note(self.out.paint_err(
                YELLOW,
                format!("fell behind: {missed} events were missed (the mock keeps its last 8,192)"),
            ));
            return if self.out.is_json() {
                self.out.json_line(&event)
            } else {
                Ok(())
            };
        }
        // History events have `seq` 0: told before this reader came, not numbered.
        if let Some(seq) = event["seq"].as_u64().filter(|&seq| seq > 0) {
            if self.last.is_some_and(|last| seq <= last) {
                return Ok(());
            }
            self.last = Some(seq);
        }
        if !self.wanted.keeps(&event) {
            return Ok(());
        }
        if self.out.is_json() {
            self.out.json_line(&event)
        } else {
            self.out.plain(line(self.out, &event))
        }
    }
}

/// The filters of the command line.
struct Wanted {
    status: Option<StatusFilter>,
    path: Option<String>,
    kinds: Vec<String>,
    generation: Option<String>,
}

impl Wanted {
    fn of(args: &LogsArgs) -> Self {
        Self {
            status: args.status,
            path: args.path.clone(),
            kinds: args.kind.clone(),
            generation: args.generation.map(|id| id.to_string()),
        }
    }

    /// Whether `event` passes every filter given; an event without the field a
    /// filter reads does not.
    fn keeps(&self, event: &Value) -> bool {
        let kind = event["type"].as_str().unwrap_or_default();
        let path = event["path"].as_str();
        (self.kinds.is_empty() || self.kinds.iter().any(|wanted| wanted == kind))
            && self.status.is_none_or(|wanted| {
                event["status"]
                    .as_u64()
                    .and_then(|status| u16::try_from(status).ok())
                    .is_some_and(|status| wanted.matches(status))
            })
            && self
                .path
                .as_deref()
                .is_none_or(|prefix| path.is_some_and(|path| path.starts_with(prefix)))
            && self.generation.as_deref().is_none_or(|id| {
                event["generationId"] == id || path.is_some_and(|path| path.contains(id))
            })
    }
}

/// An event as one line for people: its time on the mock's clock, what happened,
/// and the ids that tie it to the rest.
fn line(out: &Output, event: &Value) -> String {
    let text = |key: &str| event[key].as_str().unwrap_or("-").to_owned();
    let short = |key: &str| {
        event[key]
            .as_str()
            .map_or_else(|| "-".to_owned(), |id| id.chars().take(8).collect())
    };
    let time = event["at"]
        .as_str()
        .and_then(|at| at.get(11..23))
        .unwrap_or("--:--:--.---");
    let kind = event["type"].as_str().unwrap_or("?");
    let what = match kind {
        "request" => {
            let status = match event["status"].as_u64() {
                Some(status) => out.paint(status_colour(status), status),
                None => out.paint(RED, "dropped"),
            };
            let took = event["durationMs"]
                .as_u64()
                .map_or_else(String::new, |ms| format!(" {ms}ms"));
            let code = event["errorCode"]
                .as_str()
                .map_or_else(String::new, |code| format!(" {code}"));
            format!(
                "{} {} {status}{code}{took}  {}  user {}",
                text("method"),
                text("path"),
                out.paint(DIM, text("requestId")),
                short("userId")
            )
        }
        "fault" => format!(
            "fault {} on {} {} {}",
            text("faultId"),
            text("method"),
            text("path"),
            out.paint(DIM, text("requestId"))
        ),
        "generation" => {
            let error = event["errorCode"]
                .as_str()
                .map_or_else(String::new, |code| format!(" {code}"));
            format!(
                "generation {} {} {}{error}  {} {} RUB",
                short("generationId"),
                text("change"),
                out.status(&text("status")),
                text("modelSlug"),
                event["costRub"]
            )
        }
        "ledger" => format!(
            "ledger {} {} RUB  balance {} reserved {}  user {}",
            text("kind"),
            event["amountRub"],
            event["balanceRub"],
            event["reservedRub"],
            short("userId")
        ),
        "message" => format!(
            "webhook {} {} {}  message {}",
            text("eventType"),
            text("state"),
            out.paint(DIM, text("endpointId")),
            short("messageId")
        ),
        "attempt" => {
            let answer = match event["responseStatus"].as_u64() {
                Some(status) => out.paint(status_colour(status), status),
                None => out.paint(RED, text("error")),
            };
            format!(
                "delivery #{} {answer} {}ms {}  message {}",
                event["attempt"],
                event["durationMs"],
                text("state"),
                short("messageId")
            )
        }
        "verdict.finding" => {
            let severity = text("severity");
            let style = if severity == "violation" { RED } else { YELLOW };
            format!(
                "verdict {} {}: {}",
                out.paint(style, severity),
                text("rule"),
                text("message")
            )
        }
        _ => {
            // A kind this version does not know, or one with little to say: its
            // members as they came.
            let mut rest = event.as_object().cloned().unwrap_or_default();
            for key in ["seq", "at", "type"] {
                rest.remove(key);
            }
            format!("{kind} {}", Value::Object(rest))
        }
    };
    format!("{}  {what}", out.paint(DIM, time))
}

fn status_colour(status: u64) -> anstyle::Style {
    match status {
        200..=299 => GREEN,
        400..=499 => YELLOW,
        _ => RED,
    }
}
