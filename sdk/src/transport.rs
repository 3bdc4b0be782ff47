//! The machinery every request passes through: authentication, the user agent,
//! the `Idempotency-Key` of a create, rate-limit pacing and retries.
//!
//! The generated client carries a [`Transport`] as its inner value and calls
//! the `ClientHooks` implemented here around each operation: `pre` completes
//! the request, `exec` sends it, as many times as the [`RetryPolicy`] allows.
//! Because a retry re-sends a copy of the request `pre` completed, every retry
//! of a create carries the same `Idempotency-Key` (rule 7 of
//! `POST /v1/generations`), so a retried create is never charged twice.
//!
//! The hand-written layer runs each call inside [`call`], which reads back what
//! `exec` saw: the status and body of an error answer (the generated code
//! cannot parse error codes it does not know) and the number of attempts.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, HeaderValue, USER_AGENT};
use progenitor_client::{ClientHooks, OperationInfo, ResponseValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::Instrument;
use tracing::field::Empty;

use crate::clock::Clock;
use crate::error::{ApiError, Error, Result};
use crate::generated;
use crate::options::{self, RequestOptions};
use crate::rate_limit::{Pacer, Scopes};
use crate::read;
use crate::retry::{self, Decision, Repeat, RetryPolicy};

type RawError = progenitor_client::Error<generated::types::Error>;

/// The hand-written transport inside the generated client ([`raw::Client`]):
/// authentication, the user agent, idempotency keys, pacing and retries.
///
/// It has no public methods; it exists so that the generated client, used
/// directly, gets the same behaviour as [`Client`](crate::Client).
///
/// [`raw::Client`]: crate::raw::Client
///
/// ```
/// let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
/// let raw: &mediagen::raw::Client = client.raw();
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
    pub(crate) pacer: Arc<Pacer>,
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
            Self::Middleware(_) => reqwest::Client::new(),
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

/// Operations the service answers without a key (Authentication, rule 2).
const PUBLIC_OPERATIONS: &[&str] = &[
    "get_health",
    "list_catalog",
    "get_openapi_document",
    "request_magic_link",
];

/// How one operation is sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operation {
    pub(crate) id: &'static str,
    /// Its path template in the contract; `None` for a storage URL.
    template: Option<&'static str>,
    /// Whether, and when, it may be sent again.
    repeat: Repeat,
    /// Whether it counts against the service's limits (not for storage URLs).
    paced: bool,
    scopes: Scopes,
}

impl Operation {
    pub(crate) fn of(id: &'static str, method: &reqwest::Method) -> Self {
        Self {
            id,
            template: generated::OPERATIONS
                .iter()
                .find(|(op, _, _)| *op == id)
                .map(|(_, _, template)| *template),
            repeat: Repeat::of(id, method),
            paced: true,
            scopes: Scopes::of_operation(id),
        }
    }

    /// A transfer to or from a storage URL (a presigned upload, a result file):
    /// idempotent, outside the service's limits, and sent without the API key.
    pub(crate) fn storage(id: &'static str) -> Self {
        Self {
            id,
            template: None,
            repeat: Repeat::Safe,
            paced: false,
            scopes: Scopes::of_operation(id),
        }
    }

    /// The operation's `mediagen.operation` span. Its fields never hold a
    /// secret: the path is the contract's template, or the path alone of a
    /// request to the service outside the contract ([`Client::request`]); a
    /// storage URL, signed, is not shown at all. Headers are trace events of
    /// their own, with credentials redacted ([`log_headers`]).
    ///
    /// [`Client::request`]: crate::Client::request
    pub(crate) fn span(&self, request: &reqwest::Request) -> tracing::Span {
        // Only storage transfers go unpaced: every other request goes to the service.
        let path = match (self.template, self.paced) {
            (Some(template), _) => template,
            (None, true) => request.url().path(),
            (None, false) => "(storage URL)",
        };
        let span = tracing::info_span!(
            "mediagen.operation",
            operation = self.id,
            method = %request.method(),
            path,
            attempt = Empty,
            status = Empty,
            request_id = Empty,
            generation_id = Empty,
        );
        if self
            .template
            .is_some_and(|t| t.starts_with("/v1/generations/{id}"))
            && let Some(id) = request.url().path_segments().and_then(|mut s| s.nth(2))
        {
            span.record("generation_id", id);
        }
        span
    }
}

/// What `exec` saw of the call in progress, read back by [`call`].
#[derive(Debug, Default)]
struct CallRecord {
    operation: &'static str,
    attempts: u32,
    /// The final error answer, read from its raw body.
    error: Option<ApiError>,
    /// Set when the request may have acted and was not repeated: how to check.
    unknown_outcome: Option<&'static str>,
    /// A middleware's own failure, which the generated code can only pass on
    /// as a transport error.
    middleware: Option<BoxError>,
}

tokio::task_local! {
    static CALL: Arc<Mutex<CallRecord>>;
}

fn record(update: impl FnOnce(&mut CallRecord)) {
    // Outside `call` (the generated client used directly) there is nothing to fill.
    let _ = CALL.try_with(|call| update(&mut call.lock().unwrap_or_else(|p| p.into_inner())));
}

impl ClientHooks<Transport> for generated::Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        info: &OperationInfo,
    ) -> std::result::Result<(), progenitor_client::Error<E>> {
        self.inner.shared.prepare(request, info.operation_id);
        Ok(())
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        self.inner.shared.execute(request, info.operation_id).await
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
    /// Completes a request of the contract before it is sent: the key, the user
    /// agent, the call's own headers and time-out, a create's `Idempotency-Key`.
    pub(crate) fn prepare(&self, request: &mut reqwest::Request, operation_id: &str) {
        let options = options::current(&self.defaults);
        let headers = request.headers_mut();
        if let Some(authorization) = &self.authorization
            && !PUBLIC_OPERATIONS.contains(&operation_id)
        {
            headers.insert(AUTHORIZATION, authorization.clone());
        }
        headers.insert(USER_AGENT, self.user_agent.clone());
        for (name, value) in options.headers() {
            headers.insert(name.clone(), value.clone());
        }
        // Never create without a key: a retry of any kind then finds the first
        // attempt's generation instead of making a second one.
        if operation_id == "create_generation" && !headers.contains_key("idempotency-key") {
            headers.insert("idempotency-key", new_idempotency_key());
        }
        *request.timeout_mut() = Some(options.timeout_or(self.timeout));
    }

    /// Sends a request of the contract with pacing and retries.
    async fn execute(
        &self,
        request: reqwest::Request,
        operation_id: &'static str,
    ) -> reqwest::Result<reqwest::Response> {
        let operation = Operation::of(operation_id, request.method());
        self.send(operation, request).await
    }

    /// Sends `request` with pacing and retries, each retry a copy of it.
    async fn send(
        &self,
        operation: Operation,
        request: reqwest::Request,
    ) -> reqwest::Result<reqwest::Response> {
        let (result, _attempts) = match request.try_clone() {
            Some(first) => {
                self.run(operation, first, move || request.try_clone())
                    .await
            }
            // A streamed body can be sent only once.
            None => self.run(operation, request, || None).await,
        };
        result
    }

    /// The retry loop: sends `first`, and after a failure that repeating cannot
    /// turn into a second action waits and sends the next copy from `again`, up to
    /// the policy's attempts. Returns the last outcome and the number of attempts.
    /// It runs in the operation's span.
    pub(crate) async fn run(
        &self,
        operation: Operation,
        first: reqwest::Request,
        again: impl FnMut() -> Option<reqwest::Request>,
    ) -> (reqwest::Result<reqwest::Response>, u32) {
        let span = operation.span(&first);
        self.repeat(operation, first, again).instrument(span).await
    }

    async fn repeat(
        &self,
        operation: Operation,
        first: reqwest::Request,
        mut again: impl FnMut() -> Option<reqwest::Request>,
    ) -> (reqwest::Result<reqwest::Response>, u32) {
        let mut request = first;
        let mut attempt = 1;
        loop {
            tracing::Span::current().record("attempt", attempt);
            let outcome = self.attempt(operation, request).await;
            let decision = outcome.decision(operation.repeat);
            if let Some(delay) = self.delay(attempt, decision)
                && let Some(next) = again()
            {
                outcome.log_retry(operation.id, attempt, delay);
                self.clock.sleep(delay).await;
                request = next;
                attempt += 1;
                continue;
            }
            let unknown = match (decision, operation.repeat) {
                (Decision::Unknown, Repeat::Once { check }) => Some(check),
                _ => None,
            };
            return (self.finish(operation, attempt, outcome, unknown), attempt);
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
    pub(crate) fn delay(&self, attempt: u32, decision: Decision) -> Option<Duration> {
        let attempts = options::current(&self.defaults).attempts_or(self.retry.attempts());
        match decision {
            Decision::Retry { retry_after } if attempt < attempts => {
                self.retry.delay_after(attempt, retry_after)
            }
            _ => None,
        }
    }

    fn finish(
        &self,
        operation: Operation,
        attempts: u32,
        outcome: Attempt,
        unknown_outcome: Option<&'static str>,
    ) -> reqwest::Result<reqwest::Response> {
        match outcome {
            Attempt::Answer(response) => {
                record(|call| {
                    call.operation = operation.id;
                    call.attempts = attempts;
                    call.error = None;
                });
                Ok(response)
            }
            Attempt::Failed(response, mut error) => {
                error.attempts = attempts;
                tracing::debug!(
                    operation = operation.id,
                    attempts,
                    code = %error.code,
                    status = error.status.as_u16(),
                    request_id = error.request_id.as_deref().unwrap_or(""),
                    "error answer"
                );
                record(|call| {
                    call.operation = operation.id;
                    call.attempts = attempts;
                    call.error = Some(*error);
                    call.unknown_outcome = unknown_outcome;
                });
                Ok(response)
            }
            Attempt::Transport(error) => {
                record(|call| {
                    call.operation = operation.id;
                    call.attempts = attempts;
                    call.error = None;
                    call.unknown_outcome = unknown_outcome;
                });
                Err(error)
            }
            Attempt::Middleware(error) => {
                record(|call| {
                    call.operation = operation.id;
                    call.attempts = attempts;
                    call.error = None;
                    call.unknown_outcome = unknown_outcome;
                    call.middleware = Some(error);
                });
                Err(stand_in_error())
            }
        }
    }

    /// One attempt: waits for room in the rate-limit window, sends, and reads an
    /// error answer whole so that its code can be judged.
    async fn attempt(&self, operation: Operation, request: reqwest::Request) -> Attempt {
        let permit = if operation.paced {
            Some(
                self.pacer
                    .acquire(
                        operation.scopes,
                        self.clock.as_ref(),
                        self.retry.longest_wait(),
                    )
                    .await,
            )
        } else {
            None
        };
        log_headers("request", request.headers());
        let result = self.http.execute(request).await;
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
            self.pacer.answered(permit, now, Some(response.headers()));
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
            if operation.id == "create_generation" && !span.is_disabled() {
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
    reqwest::Client::new()
        .get("http://")
        .build()
        .expect_err("reqwest refuses a URL without a host")
}

/// A fresh `Idempotency-Key`: a UUID v4.
pub(crate) fn new_idempotency_key() -> HeaderValue {
    HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
        .unwrap_or_else(|_| HeaderValue::from_static("mediagen-fallback-key"))
}

/// Runs one generated operation whose answer is JSON, and reads it.
///
/// Every answer is read by one policy (`read.rs`): when the generated code refuses
/// a body, the body is read again tolerantly, so that only a missing or mistyped
/// required field fails the call.
pub(crate) async fn call<T: DeserializeOwned>(
    operation: impl Future<Output = std::result::Result<ResponseValue<T>, RawError>>,
) -> Result<T> {
    let (result, record) = scoped(operation).await;
    match result {
        Ok(value) => Ok(value.into_inner()),
        Err(err) => reread(err, record),
    }
}

/// Like [`call`], for operations whose answer this crate reads into a type of its
/// own (`G` is the generated type, `T` ours).
pub(crate) async fn call_as<G: Serialize, T: DeserializeOwned>(
    operation: impl Future<Output = std::result::Result<ResponseValue<G>, RawError>>,
) -> Result<T> {
    let (result, record) = scoped(operation).await;
    match result {
        Ok(value) => serde_json::to_value(value.into_inner())
            .and_then(serde_json::from_value)
            .map_err(|source| Error::Decode {
                operation: record.operation,
                body: Bytes::new(),
                source,
            }),
        Err(err) => reread(err, record),
    }
}

/// Sends a request that [`Shared::prepare`] completed, by the rule of
/// `operation`, and answers a response below 400; an error answer, or no
/// answer, is the error any call would give.
pub(crate) async fn call_raw(
    shared: &Shared,
    operation: Operation,
    request: reqwest::Request,
) -> Result<reqwest::Response> {
    let (result, record) = scoped(shared.send(operation, request)).await;
    match result {
        Ok(response) if response.status().as_u16() < 400 => Ok(response),
        // The record holds the error answer, read.
        Ok(_) => Err(convert(RawError::InvalidRequest(String::new()), record)),
        Err(err) => Err(convert(RawError::CommunicationError(err), record)),
    }
}

/// Runs one generated operation whose answer is not JSON (a document, a stream).
pub(crate) async fn send<T>(
    operation: impl Future<Output = std::result::Result<ResponseValue<T>, RawError>>,
) -> Result<T> {
    let (result, record) = scoped(operation).await;
    result
        .map(ResponseValue::into_inner)
        .map_err(|err| convert(err, record))
}

/// A body the generated code refused, read again by the tolerant policy; any
/// other failure converted.
fn reread<T: DeserializeOwned>(err: RawError, record: CallRecord) -> Result<T> {
    match err {
        progenitor_client::Error::InvalidResponsePayload(body, _) if record.error.is_none() => {
            read::tolerant(&body).map_err(|source| Error::Decode {
                operation: record.operation,
                body,
                source,
            })
        }
        err => Err(convert(err, record)),
    }
}

async fn scoped<T>(operation: impl Future<Output = T>) -> (T, CallRecord) {
    let slot = Arc::new(Mutex::new(CallRecord::default()));
    let result = CALL.scope(Arc::clone(&slot), operation).await;
    let record = std::mem::take(&mut *slot.lock().unwrap_or_else(|p| p.into_inner()));
    (result, record)
}

fn convert(err: RawError, mut record: CallRecord) -> Error {
    let unknown_outcome = record.unknown_outcome.take();
    let operation = record.operation;
    let error = match record.middleware.take() {
        Some(source) => Error::Middleware { source },
        None => convert_raw(err, record),
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

fn convert_raw(err: RawError, record: CallRecord) -> Error {
    use progenitor_client::Error as Raw;
    if let Some(error) = record.error {
        return error.into();
    }
    let operation = record.operation;
    match err {
        Raw::InvalidRequest(message) | Raw::Custom(message) => Error::InvalidRequest(message),
        Raw::CommunicationError(source) => Error::Connection {
            attempts: record.attempts.max(1),
            source,
        },
        Raw::ResponseBodyError(source) | Raw::InvalidUpgrade(source) => Error::Body(source),
        Raw::InvalidResponsePayload(body, source) => Error::Decode {
            operation,
            body,
            source,
        },
        Raw::ErrorResponse(value) => {
            let body = serde_json::to_vec(value.as_ref()).unwrap_or_default();
            ApiError::from_response(value.status(), value.headers(), &body).into()
        }
        Raw::UnexpectedResponse(response) => Error::UnexpectedStatus {
            operation,
            status: response.status(),
        },
    }
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
