//! The machinery every request passes through: authentication, the user agent,
//! the `Idempotency-Key` of a create, rate-limit pacing and retries.
//!
//! It knows nothing of the generated code: it sends an [`Operation`] (the
//! contract's row and the SDK's policy for it, `operation/`) with the call's
//! [`RequestOptions`], and returns the last response beside a [`Record`] of
//! what it saw. The generated client reaches it through `bridge.rs`; uploads,
//! downloads and [`Client::request`](crate::Client::request) call it directly.
//!
//! [`Shared::prepare`] completes a request once and the loop re-sends copies
//! of it, so every retry of a create carries the same `Idempotency-Key` (rule 7
//! of `POST /v1/generations`), and a retried create is never charged twice.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, HeaderValue, USER_AGENT};
use tracing::Instrument;
use tracing::field::Empty;

use crate::clock::Clock;
use crate::error::{ApiError, Error, Result};
use crate::host::Host;
use crate::hub::Hub;
use crate::operation::{Operation, OperationId, Repeat};
use crate::options::RequestOptions;
use crate::rate_limit::Scopes;
use crate::retry::{self, Decision, RetryPolicy};

/// The hand-written transport inside the generated client ([`raw::GeneratedClient`]):
/// authentication, the user agent, idempotency keys, pacing and retries.
///
/// It has no public methods; it exists so that the generated client, used
/// directly, gets the same behaviour as [`Client`](crate::Client).
///
/// [`raw::GeneratedClient`]: crate::raw::GeneratedClient
///
/// ```
/// let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
/// let raw: &mediagen::raw::GeneratedClient = client.raw();
/// let transport: &mediagen::raw::Transport = progenitor_client::ClientInfo::inner(raw);
/// assert!(!format!("{transport:?}").contains("secret"));
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Clone)]
pub struct Transport {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.fmt(f)
    }
}

/// What every clone of a client shares.
pub(crate) struct Shared {
    /// `Bearer <key>`, marked sensitive so that `http` never prints it.
    pub(crate) authorization: Option<HeaderValue>,
    pub(crate) user_agent: HeaderValue,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    /// What the process knows of this service: its pacer, its models' times.
    pub(crate) host: Arc<Host>,
    /// The webhooks a receiver handed to this client, for its waits.
    pub(crate) hub: Arc<Hub>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) http: Http,
    /// Options every call of this client starts from ([`Client::with_options`]).
    ///
    /// [`Client::with_options`]: crate::Client::with_options
    pub(crate) defaults: RequestOptions,
}

/// What sends a request: a `reqwest::Client`, or one wrapped in middleware.
#[derive(Clone, Debug)]
pub(crate) enum Http {
    Plain(reqwest::Client),
    #[cfg(feature = "middleware")]
    Middleware(reqwest_middleware::ClientWithMiddleware),
}

/// Why a request got no answer.
enum Unanswered {
    Transport(reqwest::Error),
    /// A middleware of the client failed; whether the request was sent is unknown.
    // Made only by a `reqwest-middleware` chain (feature `middleware`).
    #[cfg_attr(not(feature = "middleware"), allow(dead_code))]
    Middleware(BoxError),
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Http {
    async fn execute(
        &self,
        request: reqwest::Request,
    ) -> std::result::Result<reqwest::Response, Unanswered> {
        match self {
            Self::Plain(client) => client.execute(request).await.map_err(Unanswered::Transport),
            #[cfg(feature = "middleware")]
            Self::Middleware(client) => client.execute(request).await.map_err(|err| match err {
                reqwest_middleware::Error::Reqwest(err) => Unanswered::Transport(err),
                reqwest_middleware::Error::Middleware(err) => Unanswered::Middleware(err.into()),
            }),
        }
    }

    /// The client the generated code builds requests with.
    pub(crate) fn builder_client(&self) -> reqwest::Client {
        match self {
            Self::Plain(client) => client.clone(),
            // Requests are only built with it; they are sent through the chain.
            #[cfg(feature = "middleware")]
            Self::Middleware(_) => crate::roots::offline_client(),
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field(
                "api_key",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("user_agent", &self.user_agent)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("clock", &self.clock)
            .field("defaults", &self.defaults)
            .finish_non_exhaustive()
    }
}

/// The operation's `mediagen.operation` span. Its fields never hold a
/// secret: the path is the contract's template, or the path alone of a
/// request to the service outside the contract ([`Client::request`]); a
/// storage URL, signed, is not shown at all. Headers are trace events of
/// their own, with credentials redacted ([`log_headers`]).
///
/// [`Client::request`]: crate::Client::request
pub(crate) fn span(
    operation: &Operation,
    method: &reqwest::Method,
    url: &reqwest::Url,
) -> tracing::Span {
    let path = match (operation.template(), operation.to_service) {
        (Some(template), _) => template,
        (None, true) => url.path(),
        (None, false) => "(storage URL)",
    };
    let span = tracing::info_span!(
        "mediagen.operation",
        operation = operation.name,
        method = %method,
        path,
        attempt = Empty,
        status = Empty,
        request_id = Empty,
        generation_id = Empty,
    );
    // The operations on one generation carry its id in their path.
    if matches!(
        operation.id,
        Some(OperationId::GetGeneration | OperationId::CancelGeneration)
    ) && let Some(id) = url.path_segments().and_then(|mut s| s.nth(2))
    {
        span.record("generation_id", id);
    }
    span
}

/// A request on its way, as its clock is told: started when made, ended when
/// dropped, whether the answer came, the request failed or its call was dropped.
struct Traveling<'a>(&'a dyn Clock);

impl<'a> Traveling<'a> {
    fn start(clock: &'a dyn Clock) -> Self {
        clock.request_started();
        Self(clock)
    }
}

impl Drop for Traveling<'_> {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// What the transport saw of one call, beside its result: how many attempts it
/// took, the final error answer read from its raw body (the generated code
/// cannot parse error codes it does not know), whether the outcome is unknown,
/// and a middleware's own failure.
#[derive(Debug, Default)]
pub(crate) struct Record {
    pub(crate) operation: &'static str,
    pub(crate) attempts: u32,
    /// The final error answer, read.
    error: Option<ApiError>,
    /// Set when the request may have acted and was not repeated: how to check.
    unknown_outcome: Option<&'static str>,
    /// A middleware's own failure, which the generated code can only pass on
    /// as a transport error.
    middleware: Option<BoxError>,
}

impl Record {
    /// The error of a call that ended without an answer below 400: the error
    /// answer read, or the middleware's failure, or else what `otherwise` makes
    /// of the call; wrapped in [`Error::OutcomeUnknown`] when the request may
    /// have acted.
    pub(crate) fn into_error(mut self, otherwise: impl FnOnce(&Self) -> Error) -> Error {
        let unknown_outcome = self.unknown_outcome.take();
        let operation = self.operation;
        let error = match (self.middleware.take(), self.error.take()) {
            (Some(source), _) => Error::Middleware { source },
            (None, Some(error)) => error.into(),
            (None, None) => otherwise(&self),
        };
        match unknown_outcome {
            Some(check) => Error::OutcomeUnknown {
                operation,
                check,
                source: Box::new(error),
            },
            None => error,
        }
    }

    /// Whether the call ended in an error answer, read.
    pub(crate) fn answered_with_error(&self) -> bool {
        self.error.is_some()
    }
}

/// One attempt's result.
enum Attempt {
    /// An answer below 400.
    Answer(reqwest::Response),
    /// An error answer, read; the response is rebuilt from the bytes read.
    Failed(reqwest::Response, Box<ApiError>),
    /// No answer.
    Transport(reqwest::Error),
    /// A middleware failed.
    Middleware(BoxError),
}

impl Attempt {
    fn decision(&self, repeat: Repeat) -> Decision {
        match self {
            Self::Answer(_) => Decision::Stop,
            Self::Failed(_, error) => retry::decide(error, repeat),
            Self::Transport(error) => retry::decide_transport(error, repeat),
            // Whether the request reached the service is unknown, as with no answer.
            Self::Middleware(_) => match repeat {
                Repeat::Once { .. } => Decision::Unknown,
                Repeat::Safe | Repeat::Keyed => Decision::Retry { retry_after: None },
            },
        }
    }

    /// The event of a retry, in the operation's span: the delay and why.
    fn log_retry(&self, operation: &'static str, attempt: u32, delay: Duration) {
        let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        match self {
            Self::Failed(_, error) => tracing::warn!(
                operation,
                attempt,
                delay_ms,
                reason = if error.status.as_u16() == 429 {
                    "refused before acting (rate limit)"
                } else {
                    "transient error"
                },
                code = %error.code,
                status = error.status.as_u16(),
                request_id = error.request_id.as_deref().unwrap_or(""),
                "retrying"
            ),
            Self::Transport(error) => tracing::warn!(
                operation,
                attempt,
                delay_ms,
                reason = if error.is_connect() {
                    "the request never reached the service"
                } else {
                    "no answer"
                },
                error = %error,
                "retrying"
            ),
            Self::Middleware(error) => tracing::warn!(
                operation,
                attempt,
                delay_ms,
                reason = "a middleware failed",
                error = %error,
                "retrying"
            ),
            Self::Answer(_) => {}
        }
    }
}

impl Shared {
    /// Completes a request to the service before it is sent: the key (unless
    /// the operation is public), the user agent, the call's own headers and
    /// time-out, and the `Idempotency-Key` of an operation that needs one.
    pub(crate) fn prepare(
        &self,
        request: &mut reqwest::Request,
        operation: &Operation,
        options: &RequestOptions,
    ) {
        let headers = request.headers_mut();
        if let Some(authorization) = &self.authorization
            && operation.authenticated()
        {
            headers.insert(AUTHORIZATION, authorization.clone());
        }
        headers.insert(USER_AGENT, self.user_agent.clone());
        for (name, value) in options.headers() {
            headers.insert(name.clone(), value.clone());
        }
        // Never create without a key: a retry of any kind then finds the first
        // attempt's generation instead of making a second one.
        if operation.repeat == Repeat::Keyed && !headers.contains_key("idempotency-key") {
            headers.insert("idempotency-key", new_idempotency_key());
        }
        *request.timeout_mut() = Some(options.timeout_or(self.timeout));
    }

    /// Sends `request` with pacing and retries, each retry a copy of it.
    pub(crate) async fn send(
        &self,
        operation: Operation,
        request: reqwest::Request,
        options: &RequestOptions,
    ) -> (reqwest::Result<reqwest::Response>, Record) {
        match request.try_clone() {
            Some(first) => {
                self.run(operation, first, move || request.try_clone(), options)
                    .await
            }
            // A streamed body can be sent only once.
            None => self.run(operation, request, || None, options).await,
        }
    }

    /// The retry loop: sends `first`, and after a failure that repeating cannot
    /// turn into a second action waits and sends the next copy from `again`, up to
    /// the call's attempts. Returns the last outcome and what the loop saw. It
    /// runs in the operation's span.
    pub(crate) async fn run(
        &self,
        operation: Operation,
        first: reqwest::Request,
        again: impl FnMut() -> Option<reqwest::Request>,
        options: &RequestOptions,
    ) -> (reqwest::Result<reqwest::Response>, Record) {
        let span = span(&operation, first.method(), first.url());
        self.repeat(operation, first, again, options)
            .instrument(span)
            .await
    }

    async fn repeat(
        &self,
        operation: Operation,
        first: reqwest::Request,
        mut again: impl FnMut() -> Option<reqwest::Request>,
        options: &RequestOptions,
    ) -> (reqwest::Result<reqwest::Response>, Record) {
        let mut request = first;
        let mut attempt = 1;
        loop {
            tracing::Span::current().record("attempt", attempt);
            let outcome = self.attempt(operation, request).await;
            let decision = outcome.decision(operation.repeat);
            if let Some(delay) = self.delay(attempt, decision, options)
                && let Some(next) = again()
            {
                outcome.log_retry(operation.name, attempt, delay);
                self.clock.sleep(delay).await;
                request = next;
                attempt += 1;
                continue;
            }
            let unknown = match (decision, operation.repeat) {
                (Decision::Unknown, Repeat::Once { check }) => Some(check),
                _ => None,
            };
            return finish(operation, attempt, outcome, unknown);
        }
    }

    /// One attempt of `operation`, for a loop that must read the body before it
    /// knows whether the attempt succeeded (a download): the outcome, an error
    /// answer read into [`Error`], and what the retry rule makes of it.
    pub(crate) async fn attempt_once(
        &self,
        operation: Operation,
        request: reqwest::Request,
    ) -> (Result<reqwest::Response>, Decision) {
        let outcome = self.attempt(operation, request).await;
        let decision = outcome.decision(operation.repeat);
        let result = match outcome {
            Attempt::Answer(response) => Ok(response),
            Attempt::Failed(_, error) => Err(Error::Api(error)),
            Attempt::Transport(source) => Err(Error::Connection {
                attempts: 1,
                source,
            }),
            Attempt::Middleware(source) => Err(Error::Middleware { source }),
        };
        (result, decision)
    }

    /// The pause before attempt `attempt + 1`, if there is to be one: within
    /// the call's attempts (its own, or the policy's).
    pub(crate) fn delay(
        &self,
        attempt: u32,
        decision: Decision,
        options: &RequestOptions,
    ) -> Option<Duration> {
        match decision {
            Decision::Retry { retry_after }
                if attempt < options.attempts_or(self.retry.attempts()) =>
            {
                self.retry.delay_after(attempt, retry_after)
            }
            _ => None,
        }
    }

    /// One attempt: waits for room in the rate-limit window, sends, and reads an
    /// error answer whole so that its code can be judged.
    async fn attempt(&self, operation: Operation, request: reqwest::Request) -> Attempt {
        let permit = if operation.to_service {
            Some(
                self.host
                    .pacer
                    .acquire(
                        Scopes::of(operation.limit),
                        self.clock.as_ref(),
                        self.retry.longest_wait(),
                    )
                    .await,
            )
        } else {
            None
        };
        log_headers("request", request.headers());
        let traveling = Traveling::start(self.clock.as_ref());
        let result = self.http.execute(request).await;
        drop(traveling);
        let now = self.clock.now();
        let response = match result {
            Ok(response) => response,
            Err(unanswered) => {
                drop(permit);
                return match unanswered {
                    Unanswered::Transport(error) => Attempt::Transport(error),
                    Unanswered::Middleware(error) => Attempt::Middleware(error),
                };
            }
        };
        if let Some(permit) = permit {
            self.host
                .pacer
                .answered(permit, now, Some(response.headers()));
        }
        log_headers("response", response.headers());
        let status = response.status();
        let span = tracing::Span::current();
        span.record("status", status.as_u16());
        if let Some(id) = response
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
        {
            span.record("request_id", id);
        }
        if status.as_u16() < 400 {
            // Reading the body early costs a copy of the answer: only for a subscriber.
            if operation.creates_generation() && !span.is_disabled() {
                return Attempt::Answer(created_id_recorded(response, &span).await);
            }
            return Attempt::Answer(response);
        }
        let version = response.version();
        let headers = response.headers().clone();
        let body = match response.bytes().await {
            Ok(body) => body,
            Err(error) => return Attempt::Transport(error),
        };
        let error = ApiError::from_response(status, &headers, &body);
        if let Some(id) = &error.request_id {
            span.record("request_id", id.as_str());
        }
        Attempt::Failed(rebuilt(status, version, headers, body), Box::new(error))
    }
}

/// The end of a call: its last outcome as the generated code reads it, and
/// what the loop saw.
fn finish(
    operation: Operation,
    attempts: u32,
    outcome: Attempt,
    unknown_outcome: Option<&'static str>,
) -> (reqwest::Result<reqwest::Response>, Record) {
    let mut record = Record {
        operation: operation.name,
        attempts,
        ..Record::default()
    };
    let result = match outcome {
        Attempt::Answer(response) => Ok(response),
        Attempt::Failed(response, mut error) => {
            error.attempts = attempts;
            tracing::debug!(
                operation = operation.name,
                attempts,
                code = %error.code,
                status = error.status.as_u16(),
                request_id = error.request_id.as_deref().unwrap_or(""),
                "error answer"
            );
            record.error = Some(*error);
            record.unknown_outcome = unknown_outcome;
            Ok(response)
        }
        Attempt::Transport(error) => {
            record.unknown_outcome = unknown_outcome;
            Err(error)
        }
        Attempt::Middleware(error) => {
            record.unknown_outcome = unknown_outcome;
            record.middleware = Some(error);
            Err(stand_in_error())
        }
    };
    (result, record)
}

/// Each header of an attempt as a trace event (`direction` is `request` or
/// `response`), for a reader that wants to see what went over the wire. A
/// credential is never a field: an API key shows only the part that names it.
fn log_headers(direction: &'static str, headers: &http::HeaderMap) {
    if !tracing::enabled!(tracing::Level::TRACE) {
        return;
    }
    for (name, value) in headers {
        tracing::trace!(direction, name = name.as_str(), value = %shown(name, value), "header");
    }
}

/// A header's value as it may be shown: a credential redacted, the key's
/// public part kept (`Bearer mg_live_<public>_…`) so the reader knows which key.
fn shown(name: &http::HeaderName, value: &HeaderValue) -> String {
    use http::header::{COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
    let credential = value.is_sensitive()
        || [AUTHORIZATION, PROXY_AUTHORIZATION, COOKIE, SET_COOKIE].contains(name);
    if !credential {
        return String::from_utf8_lossy(value.as_bytes()).into_owned();
    }
    let bearer = value
        .to_str()
        .ok()
        .and_then(|value| value.strip_prefix("Bearer "));
    // `<prefix>_live_<public>_<secret>` (Authentication, rule 3): cut at the
    // first `_` after the public part's start, so a secret holding `_` stays whole.
    let public = bearer.and_then(|key| {
        let (prefix, rest) = key.split_once("_live_")?;
        let (public, _secret) = rest.split_once('_')?;
        Some(format!("{prefix}_live_{public}_…"))
    });
    match (bearer, public) {
        (_, Some(public)) => format!("Bearer {public}"),
        (Some(_), None) => "Bearer …".to_owned(),
        (None, None) => "…".to_owned(),
    }
}

/// The answer to a create, its body read so that the new generation's id goes
/// into the operation's span; the response is rebuilt from the bytes read.
async fn created_id_recorded(
    response: reqwest::Response,
    span: &tracing::Span,
) -> reqwest::Response {
    let status = response.status();
    let version = response.version();
    let headers = response.headers().clone();
    let body = match response.bytes().await {
        Ok(body) => body,
        // The generated code meets the same broken body and reports it.
        Err(_) => Bytes::new(),
    };
    #[derive(serde::Deserialize)]
    struct Created {
        id: uuid::Uuid,
    }
    if let Ok(created) = serde_json::from_slice::<Created>(&body) {
        span.record("generation_id", tracing::field::display(created.id));
    }
    rebuilt(status, version, headers, body)
}

/// A response made again from the parts of one whose body was read, for the
/// generated code to read in its turn.
fn rebuilt(
    status: http::StatusCode,
    version: http::Version,
    headers: http::HeaderMap,
    body: Bytes,
) -> reqwest::Response {
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    *response.version_mut() = version;
    *response.headers_mut() = headers;
    reqwest::Response::from(response)
}

/// A transport error standing for a middleware's failure on its way through
/// the generated code, which passes on only transport errors; [`call`] reports
/// the middleware's own error instead. reqwest refuses a URL without a host
/// before any network access, which gives such an error (a test holds it).
fn stand_in_error() -> reqwest::Error {
    crate::roots::offline_client()
        .get("http://")
        .build()
        .expect_err("reqwest refuses a URL without a host")
}

/// A fresh `Idempotency-Key`: a UUID v4.
pub(crate) fn new_idempotency_key() -> HeaderValue {
    HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
        .unwrap_or_else(|_| HeaderValue::from_static("mediagen-fallback-key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_header_never_holds_the_keys_secret() {
        let value = |v: &str| HeaderValue::from_str(v).unwrap();
        assert_eq!(
            shown(&AUTHORIZATION, &value("Bearer mg_live_pub123_s3cr_3t")),
            "Bearer mg_live_pub123_…"
        );
        assert_eq!(shown(&AUTHORIZATION, &value("Bearer opaque")), "Bearer …");
        assert_eq!(shown(&AUTHORIZATION, &value("Basic dXNlcjpwYXNz")), "…");
        let mut custom = value("token");
        custom.set_sensitive(true);
        assert_eq!(
            shown(&http::HeaderName::from_static("x-token"), &custom),
            "…"
        );
        assert_eq!(
            shown(&USER_AGENT, &value("mediagen-cli/0.1.0")),
            "mediagen-cli/0.1.0"
        );
    }
}
