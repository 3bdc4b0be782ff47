//! `mediagen mock logs`: a running mock's live journal (`GET /_mock/events`, Server-Sent
//! Events) as lines for people or JSON Lines for scripts. Following, it resumes after a
//! lost connection with `Last-Event-ID`, which the mock answers with what it kept since.

use std::time::Duration;

use serde_json::Value;

use super::context::Context;
use super::mock_control::{self, Message, Messages, MockControl};
use crate::cli::mock::LogsArgs;
use crate::output::{self, DIM, Output, YELLOW};
use crate::parse::StatusFilter;

/// The first pause before reconnecting, doubled up to [`RECONNECT_AT_MOST`]: the
/// mock keeps its last 8,192 events for a returning reader, a few seconds of a
/// busy world, so the reader comes back quickly.
const RECONNECT_FIRST: Duration = Duration::from_millis(50);
const RECONNECT_AT_MOST: Duration = Duration::from_secs(2);

pub async fn run(ctx: &Context, args: LogsArgs) -> anyhow::Result<()> {
    let mock = MockControl::new(&ctx.base_url()?, args.token.clone())?;
    let wanted = Wanted::of(&args);
    let mut journal = Journal {
        out: &ctx.out,
        wanted: &wanted,
        last: None,
    };
    let mut pause = RECONNECT_FIRST;
    let mut connected_once = false;
    loop {
        let mut request = mock
            .get("/_mock/events")
            .header(reqwest::header::ACCEPT, "text/event-stream");
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
                match journal.read(Messages::of(response), args.follow).await {
                    Ok(Read::HistoryEnded) => return Ok(()),
                    Ok(Read::Closed) => "the mock closed the stream".to_owned(),
                    Err(err) => format!("{err:#}"),
                }
            }
            Ok(response) => return Err(mock_control::refused(response, NOT_A_MOCK).await),
            // A first connection that fails is a wrong address or a mock not started:
            // said at once, not tried forever.
            Err(err) if !connected_once || !args.follow => return Err(mock.unreachable(&err)),
            Err(err) => mock_control::cause(&err),
        };
        if !args.follow {
            anyhow::bail!(
                "the journal of the mock at {} ended before its history did: {lost}",
                mock.base_url()
            );
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

/// What a 404 of the journal tells to do: the address has no mock.
const NOT_A_MOCK: &str = "--base-url must be a mock's address, or a world's baseUrl";

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
    async fn read(&mut self, mut messages: Messages, follow: bool) -> anyhow::Result<Read> {
        while let Some(message) = messages.next().await? {
            match message {
                Message::Data(data) => self.message(&data)?,
                Message::HistoryEnd if !follow => return Ok(Read::HistoryEnded),
                Message::HistoryEnd => {}
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
                Some(status) => out.paint(output::http_status_style(status), status),
                None => out.paint(output::RED, "dropped"),
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
                Some(status) => out.paint(output::http_status_style(status), status),
                None => out.paint(output::RED, text("error")),
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
            let style = if severity == "violation" {
                output::RED
            } else {
                YELLOW
            };
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
