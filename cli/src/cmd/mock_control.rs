//! A client of a running mock's control API (`/_mock/…`) at the base URL, a mock's
//! address or a world's: `mock logs` reads its journal through it, and `webhooks
//! trigger --endpoint` asks it to deliver. The admin token (or a world's control
//! token) goes to that address only; a refusal or a mock that is not there is told
//! once, with what to do.

use anyhow::Context as _;
use serde_json::Value;

use crate::error::{Exit, Failure};

/// What a refusal of the token tells to do.
const TOKEN_HINT: &str = "pass the mock's admin token, or the world's control token, with \
                          --token or MEDIAGEN_MOCK_ADMIN_TOKEN";

pub struct MockControl {
    client: reqwest::Client,
    base_url: String,
    token: Option<String>,
}

impl MockControl {
    pub fn new(base_url: &str, token: Option<String>) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            // The token goes to the configured address only.
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
            token,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.with_token(self.client.get(format!("{}{path}", self.base_url)))
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.with_token(self.client.post(format!("{}{path}", self.base_url)))
    }

    fn with_token(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Sends `request`. No answer is told as no mock at the base URL; an answer
    /// outside 2xx as the mock's refusal, with `not_found` as the hint of a 404.
    pub async fn send(
        &self,
        request: reqwest::RequestBuilder,
        not_found: &str,
    ) -> anyhow::Result<reqwest::Response> {
        let response = request.send().await.map_err(|err| self.unreachable(&err))?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(refused(response, not_found).await)
        }
    }

    /// No mock answered at the base URL: the cause, said once.
    pub fn unreachable(&self, err: &reqwest::Error) -> anyhow::Error {
        Failure::new(
            Exit::Other,
            "CONNECTION_ERROR",
            format!("no mock answered at {}: {}", self.base_url, cause(err)),
        )
        .hint(
            "is a mock running there? Start one with `mediagen mock`, or give its address (or \
             a world's baseUrl) with --base-url",
        )
        .into()
    }
}

/// The innermost cause of a failed request, such as `Connection refused (os error
/// 111)`: the outer ones repeat the URL.
pub fn cause(err: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = err;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// A refusal of the mock as the command's failure, with the mock's own code.
pub async fn refused(response: reqwest::Response, not_found: &str) -> anyhow::Error {
    let status = response.status();
    let url = response.url().clone();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let message = body["error"]["message"]
        .as_str()
        .map_or_else(|| format!("{url} answered {status}"), str::to_owned);
    let code = body["error"]["code"].as_str().unwrap_or("MOCK_REFUSED");
    let failure = match status.as_u16() {
        401 | 403 => Failure::new(Exit::Authentication, code, message).hint(TOKEN_HINT),
        404 => Failure::new(Exit::Usage, code, message).hint(not_found),
        400..=499 => Failure::new(Exit::Usage, code, message),
        _ => Failure::new(Exit::Other, code, message),
    };
    failure.into()
}

/// One message of the journal's Server-Sent Events stream.
pub enum Message {
    /// An event's `data`, its lines joined.
    Data(String),
    /// The comment `: end of history`, after the events of `?history=true`.
    HistoryEnd,
}

/// The messages of the journal's stream, `/_mock/events`.
pub struct Messages {
    response: reqwest::Response,
    /// Bytes of a line not yet whole.
    pending: Vec<u8>,
    /// Whole lines not yet read.
    lines: std::collections::VecDeque<String>,
    data: String,
}

impl Messages {
    pub fn of(response: reqwest::Response) -> Self {
        Self {
            response,
            pending: Vec::new(),
            lines: std::collections::VecDeque::new(),
            data: String::new(),
        }
    }

    /// The next message; `None` when the stream ends.
    pub async fn next(&mut self) -> anyhow::Result<Option<Message>> {
        loop {
            while let Some(line) = self.lines.pop_front() {
                if line.is_empty() {
                    if !self.data.is_empty() {
                        return Ok(Some(Message::Data(std::mem::take(&mut self.data))));
                    }
                } else if let Some(value) = line.strip_prefix("data:") {
                    self.data.push_str(value.strip_prefix(' ').unwrap_or(value));
                } else if line.starts_with(": end of history") {
                    return Ok(Some(Message::HistoryEnd));
                }
                // `id:` repeats the event's `seq`, which the data carries; other
                // comments keep an idle stream open.
            }
            let Some(chunk) = self
                .response
                .chunk()
                .await
                .context("while reading the stream")?
            else {
                return Ok(None);
            };
            self.pending.extend_from_slice(&chunk);
            // Whole lines only; the rest waits for the next chunk.
            if let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') {
                let whole: Vec<u8> = self.pending.drain(..=end).collect();
                self.lines
                    .extend(String::from_utf8_lossy(&whole).lines().map(str::to_owned));
            }
        }
    }
}
