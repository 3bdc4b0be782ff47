//! The client and its builder.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::header::HeaderValue;

use crate::bridge::call;
use crate::clock::{Clock, TokioClock};
use crate::error::{Error, Result};
use crate::generated;
use crate::generated::types;
use crate::host::Host;
use crate::limits::{LimitScope, RateLimit};
use crate::options::RequestOptions;
use crate::rate_limit::default_dir;
use crate::retry::RetryPolicy;
use crate::transport::{Http, Shared, Transport};

/// The variable [`Client::from_env`] reads the API key from.
pub const ENV_API_KEY: &str = "MEDIAGEN_API_KEY";

/// The variable [`Client::from_env`] reads the base URL from. There is no default:
/// the service document names no host, and the key goes only where it is told.
pub const ENV_BASE_URL: &str = "MEDIAGEN_BASE_URL";

/// The variable that keeps each process to a pace of its own: `off` (or `0`,
/// `false`, `no`) where the processes of the host leave by several addresses,
/// or for a test that wants its own pace; `on` (the default), `1`, `true` or
/// `yes` share it. [`ClientBuilder::shared_pace`] wins over it, and any other
/// value fails [`ClientBuilder::build`] with [`Error::InvalidVariable`].
pub const ENV_SHARED_PACE: &str = "MEDIAGEN_SHARED_PACE";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// A client of the media generation service.
///
/// Cheap to clone: clones share the connection pool, the rate-limit pacer and the
/// retry policy. Share one client per process, so that its pacer sees every request
/// made against the service's per-address limits.
///
/// The API key never appears in its `Debug` output, in logs or in errors.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::start().await;
/// # let api_key = mock.demo_api_key().to_owned();
/// let client = mediagen::Client::new(&mock.uri(), &api_key)?;
/// let balance = client.billing().balance().await;
/// # let _ = balance; // the mock does not serve billing yet
/// let models = client.catalog().models().await?;
/// assert!(models.iter().any(|m| m.slug == "flux-schnell"));
/// assert!(!format!("{client:?}").contains(&api_key));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    raw: generated::Client,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url())
            .field("transport", &self.transport().shared)
            .finish()
    }
}

impl Client {
    /// A client of the service at `base_url` with `api_key`, with the defaults of
    /// [`ClientBuilder`].
    ///
    /// ```
    /// let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// assert_eq!(client.base_url(), "http://127.0.0.1:8080");
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn new(base_url: impl AsRef<str>, api_key: impl AsRef<str>) -> Result<Self> {
        Self::builder()
            .base_url(base_url.as_ref())
            .api_key(api_key.as_ref())
            .build()
    }

    /// A client configured from the environment: the key from `MEDIAGEN_API_KEY` and
    /// the service's address from `MEDIAGEN_BASE_URL`, both required. Without either
    /// it fails with [`Error::Config`] before any request is made.
    ///
    /// ```
    /// match mediagen::Client::from_env() {
    ///     Ok(client) => println!("using {}", client.base_url()),
    ///     Err(err) => eprintln!("{err}"), // MEDIAGEN_API_KEY is not set
    /// }
    /// ```
    pub fn from_env() -> Result<Self> {
        ClientBuilder::from_lookup(|name| std::env::var(name).ok())?.build()
    }

    /// A builder for timeouts, the user agent, the retry policy and a custom
    /// `reqwest::Client`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let client = mediagen::Client::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .api_key("mg_live_demo_secret")
    ///     .timeout(Duration::from_secs(10))
    ///     .user_agent("my-app/1.2")
    ///     .build()?;
    /// # drop(client);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// The base URL requests go to.
    ///
    /// ```
    /// let client = mediagen::Client::new("http://127.0.0.1:8080/", "mg_live_demo_secret")?;
    /// assert_eq!(client.base_url(), "http://127.0.0.1:8080");
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn base_url(&self) -> &str {
        progenitor_client::ClientInfo::baseurl(&self.raw)
    }

    /// The liveness check (`GET /health`, public).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let health = client.health().await?;
    /// assert_eq!(health.status, mediagen::HealthStatus::Ok);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn health(&self) -> Result<types::Health> {
        call(self.raw.get_health().send()).await
    }

    /// The service's OpenAPI 3.1 description (`GET /api/openapi.json`, public).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let document = client.openapi_document().await?;
    /// assert_eq!(document["openapi"], "3.1.0");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn openapi_document(&self) -> Result<serde_json::Value> {
        let document = call(self.raw.get_openapi_document().send()).await?;
        Ok(serde_json::Value::Object(document))
    }

    /// The `x-ratelimit-*` values of the latest answer this client (or a clone of
    /// it) received, whatever its route.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// assert_eq!(client.rate_limit(), None);
    /// client.health().await?;
    /// let limit = client.rate_limit().expect("every answer carries the headers");
    /// assert_eq!((limit.limit, limit.remaining), (60, 59));
    /// # Ok(())
    /// # }
    /// ```
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.transport().shared.host.pacer.last()
    }

    /// The latest `x-ratelimit-*` values reported for one of the service's limits.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use mediagen::LimitScope;
    ///
    /// client.catalog().models().await?;
    /// assert_eq!(client.rate_limit_of(LimitScope::General).map(|l| l.limit), Some(60));
    /// assert_eq!(client.rate_limit_of(LimitScope::Files), None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rate_limit_of(&self, scope: LimitScope) -> Option<RateLimit> {
        self.transport().shared.host.pacer.last_of(scope)
    }

    /// The retry policy in force.
    ///
    /// ```
    /// let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// assert_eq!(client.retry_policy().attempts(), 5);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.transport().shared.retry
    }

    /// The generated client underneath, for what this layer does not cover. Its
    /// requests get the same authentication, pacing and retries.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let answer = client.raw().get_health().send().await?;
    /// assert_eq!(answer.status(), 200);
    /// assert!(answer.headers().contains_key("x-ratelimit-remaining"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn raw(&self) -> &generated::Client {
        &self.raw
    }

    /// A clone of this client whose calls all start from `options` (a
    /// time-out, attempts, headers), lists and streams included; a call's own
    /// options still win. The clone shares the connection pool and the pacer.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use futures::TryStreamExt;
    /// use mediagen::{GenerationFilter, RequestOptions};
    ///
    /// let tagged = client.with_options(RequestOptions::new().header("x-tenant", "acme").max_attempts(2));
    /// let all: Vec<_> = tagged.generations().list(GenerationFilter::new()).try_collect().await?;
    /// # let _ = all;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_options(&self, options: RequestOptions) -> Client {
        let shared = self.shared();
        let transport = Transport {
            shared: Arc::new(Shared {
                authorization: shared.authorization.clone(),
                user_agent: shared.user_agent.clone(),
                timeout: shared.timeout,
                retry: shared.retry.clone(),
                host: Arc::clone(&shared.host),
                hub: Arc::clone(&shared.hub),
                clock: Arc::clone(&shared.clock),
                http: shared.http.clone(),
                defaults: shared.defaults.clone().options(options),
            }),
        };
        Client {
            raw: generated::Client::new_with_client(
                self.base_url(),
                shared.http.builder_client(),
                transport,
            ),
        }
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.raw.inner
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.raw.inner.shared
    }
}

/// Options of a [`Client`] before it is built.
///
/// ```
/// use std::time::Duration;
/// use mediagen::{Client, RetryPolicy};
///
/// let client = Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .api_key("mg_live_demo_secret")
///     .timeout(Duration::from_secs(20))
///     .connect_timeout(Duration::from_secs(5))
///     .user_agent("thumbnailer/3.1")
///     .retry_policy(RetryPolicy::default().max_attempts(3))
///     .http_client(reqwest::Client::new())
///     .build()?;
/// # drop(client);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Clone)]
pub struct ClientBuilder {
    base_url: Option<String>,
    api_key: Option<String>,
    timeout: Duration,
    connect_timeout: Duration,
    user_agent: Option<String>,
    retry: RetryPolicy,
    http: Option<Http>,
    clock: Arc<dyn Clock>,
    /// Whether `clock` was given: the real clock is the process's own.
    own_clock: bool,
    pacing: bool,
    /// `None`: as [`ENV_SHARED_PACE`] says.
    shared_pace: Option<bool>,
    shared_pace_dir: Option<PathBuf>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("user_agent", &self.user_agent)
            .field("retry", &self.retry)
            .field("custom_http_client", &self.http.is_some())
            .field("clock", &self.clock)
            .field("pacing", &self.pacing)
            .field("shared_pace", &self.shared_pace)
            .field("shared_pace_dir", &self.shared_pace_dir)
            .finish()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            base_url: None,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            user_agent: None,
            retry: RetryPolicy::default(),
            http: None,
            clock: Arc::new(TokioClock),
            own_clock: false,
            pacing: true,
            shared_pace: None,
            shared_pace_dir: None,
        }
    }
}

impl ClientBuilder {
    /// The service's address (required: there is no default host).
    ///
    /// ```
    /// let client = mediagen::Client::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .api_key("mg_live_demo_secret")
    ///     .build()?;
    /// assert_eq!(client.base_url(), "http://127.0.0.1:8080");
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The API key, sent as `Authorization: Bearer <key>` to every operation that
    /// needs one. Without a key only the public operations work.
    ///
    /// ```
    /// let client = mediagen::Client::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .api_key("mg_live_demo_secret")
    ///     .build()?;
    /// # drop(client);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The longest a request of the API may take, answer included (default 30 s).
    /// Downloads of result files are bounded per read instead, so that large files
    /// are not cut off.
    ///
    /// ```
    /// let builder = mediagen::Client::builder().timeout(std::time::Duration::from_secs(5));
    /// # drop(builder);
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest connecting may take (default 10 s; ignored with
    /// [`http_client`](Self::http_client), which brings its own).
    ///
    /// ```
    /// let builder = mediagen::Client::builder().connect_timeout(std::time::Duration::from_secs(3));
    /// # drop(builder);
    /// ```
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The `User-Agent` header (default `mediagen-rust/<version>`).
    ///
    /// ```
    /// let builder = mediagen::Client::builder().user_agent("my-app/1.0");
    /// # drop(builder);
    /// ```
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = Some(user_agent.into());
        self
    }

    /// How transient failures are retried (default [`RetryPolicy::default`]).
    ///
    /// ```
    /// let builder = mediagen::Client::builder().retry_policy(mediagen::RetryPolicy::none());
    /// # drop(builder);
    /// ```
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Sends through this `reqwest::Client` (proxies, TLS roots, connection pool).
    /// The API key, the user agent and the request timeout are still set per request.
    ///
    /// ```
    /// let http = reqwest::Client::builder().pool_max_idle_per_host(4).build().unwrap();
    /// let builder = mediagen::Client::builder().http_client(http);
    /// # drop(builder);
    /// ```
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(Http::Plain(client));
        self
    }

    /// Sends through a `reqwest-middleware` chain (company middleware: tracing
    /// propagation, signing, caching); feature `middleware`. The retry rule of
    /// this crate still decides what is repeated: give the chain no retry
    /// middleware of its own, or requests that may have acted could be sent twice.
    /// A middleware's own failure is [`Error::Middleware`].
    ///
    /// ```
    /// # #[cfg(feature = "middleware")] {
    /// let chain = reqwest_middleware::ClientBuilder::new(reqwest::Client::new()).build();
    /// let builder = mediagen::Client::builder().middleware_client(chain);
    /// # drop(builder);
    /// # }
    /// ```
    #[cfg(feature = "middleware")]
    pub fn middleware_client(mut self, client: reqwest_middleware::ClientWithMiddleware) -> Self {
        self.http = Some(Http::Middleware(client));
        self
    }

    /// The clock behind back-off, pacing and polling (default [`TokioClock`]): for
    /// tests and simulations.
    ///
    /// ```
    /// let builder = mediagen::Client::builder().clock(mediagen::TokioClock);
    /// # drop(builder);
    /// ```
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self.own_clock = true;
        self
    }

    /// Whether requests are held back when the rate-limit window is used up
    /// (default on). Off, the client spends requests until the service answers 429,
    /// then waits `retry-after`.
    ///
    /// ```
    /// let builder = mediagen::Client::builder().pacing(false);
    /// # drop(builder);
    /// ```
    pub fn pacing(mut self, on: bool) -> Self {
        self.pacing = on;
        self
    }

    /// Whether the pace is shared with the other processes of this host
    /// (default on, unless [`ENV_SHARED_PACE`] says `off`).
    ///
    /// The service counts its general limit per IP address, so every process
    /// behind one address draws on one window: each request a client counts,
    /// and what each answer's `x-ratelimit-*` headers or a 429 teach it, holds
    /// back the clients of every other process of the host too. They meet
    /// through a small state file in the user's runtime directory
    /// (`$XDG_RUNTIME_DIR/mediagen`, else the user's cache directory's
    /// `mediagen`), under a lock the OS drops with its process; where that
    /// directory cannot be written, the client keeps a pace of its own and
    /// says so at debug level. Off, the pace is shared by the clients of this
    /// process only: for a host whose processes leave by several addresses, or
    /// a test that wants its own pace. A client with a [`clock`](Self::clock)
    /// of its own or with [`pacing`](Self::pacing) off never shares its pace.
    ///
    /// ```
    /// let builder = mediagen::Client::builder().shared_pace(false);
    /// # drop(builder);
    /// ```
    pub fn shared_pace(mut self, on: bool) -> Self {
        self.shared_pace = Some(on);
        self
    }

    /// The directory of the state file through which the processes of this
    /// host share their pace, in place of the runtime directory: for a test
    /// with a pace of its own, or a group of programs that share one.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("thumbnailer-pace");
    /// let builder = mediagen::Client::builder().shared_pace_dir(dir);
    /// # drop(builder);
    /// ```
    pub fn shared_pace_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.shared_pace_dir = Some(dir.into());
        self
    }

    /// Builds the client.
    ///
    /// Fails with [`Error::Config`] when there is no base URL or it is not an
    /// http(s) URL, the key is not usable in a header, or the HTTP client cannot
    /// be built; with [`Error::InvalidVariable`] when [`ENV_SHARED_PACE`] says
    /// neither on nor off.
    ///
    /// ```
    /// let err = mediagen::Client::builder().base_url("ftp://example.com").build().unwrap_err();
    /// assert!(matches!(err, mediagen::Error::Config(_)));
    /// let err = mediagen::Client::builder().api_key("mg_live_demo_secret").build().unwrap_err();
    /// assert!(err.to_string().contains("no base URL"));
    /// ```
    pub fn build(self) -> Result<Client> {
        let Some(base_url) = self
            .base_url
            .as_deref()
            .filter(|url| !url.trim().is_empty())
        else {
            return Err(Error::Config(format!(
                "no base URL: give the service's address with ClientBuilder::base_url or \
                 {ENV_BASE_URL}; no host is assumed"
            )));
        };
        let url = reqwest::Url::parse(base_url.trim())
            .map_err(|err| Error::Config(format!("base URL {base_url:?}: {err}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::Config(format!(
                "base URL {base_url:?} must be http or https"
            )));
        }
        let base_url = url.as_str().trim_end_matches('/').to_owned();
        let shared_pace = match self.shared_pace {
            Some(on) => on,
            None => shared_pace_from(std::env::var_os(ENV_SHARED_PACE))?,
        };
        let authorization = match self.api_key.as_deref().map(str::trim) {
            None => None,
            Some("") => return Err(Error::Config("the API key is empty".into())),
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    Error::Config("the API key has characters a header cannot carry".into())
                })?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        let user_agent = match &self.user_agent {
            Some(agent) => HeaderValue::from_str(agent).map_err(|_| {
                Error::Config(format!("user agent {agent:?} is not a valid header"))
            })?,
            None => HeaderValue::from_static(concat!("mediagen-rust/", env!("CARGO_PKG_VERSION"))),
        };
        let http = match self.http {
            Some(http) => http,
            None => Http::Plain(
                crate::build_http_client(|| {
                    reqwest::Client::builder()
                        .connect_timeout(self.connect_timeout)
                        .read_timeout(DEFAULT_READ_TIMEOUT)
                })
                .map_err(|err| Error::Config(format!("building the HTTP client: {err}")))?,
            ),
        };
        let transport = Transport {
            shared: Arc::new(Shared {
                authorization,
                user_agent,
                timeout: self.timeout,
                retry: self.retry,
                // One host for every paced client of this service on the real
                // clock: they share the address's limit (see `host.rs`), with
                // the other processes of the host too unless told otherwise.
                host: if self.pacing && !self.own_clock {
                    let pace_dir = shared_pace
                        .then(|| self.shared_pace_dir.or_else(default_dir))
                        .flatten();
                    Host::shared(&base_url, pace_dir.as_deref())
                } else {
                    Host::private(self.pacing)
                },
                hub: Arc::default(),
                clock: self.clock,
                http: http.clone(),
                defaults: RequestOptions::default(),
            }),
        };
        Ok(Client {
            raw: generated::Client::new_with_client(&base_url, http.builder_client(), transport),
        })
    }

    /// The builder [`Client::from_env`] uses, reading variables through `lookup`.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let present = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        match (present(ENV_BASE_URL), present(ENV_API_KEY)) {
            (Some(base_url), Some(key)) => Ok(Client::builder().base_url(base_url).api_key(key)),
            (base_url, key) => {
                let missing: Vec<&str> = [
                    (ENV_BASE_URL, base_url.is_none()),
                    (ENV_API_KEY, key.is_none()),
                ]
                .into_iter()
                .filter_map(|(name, missing)| missing.then_some(name))
                .collect();
                Err(Error::Config(format!(
                    "{} not set: the service's address and the API key are both required, \
                     and no host is assumed",
                    missing.join(" and ")
                )))
            }
        }
    }
}

/// What [`ENV_SHARED_PACE`] says: shared unless it says off.
fn shared_pace_from(value: Option<std::ffi::OsString>) -> Result<bool> {
    let Some(value) = value else {
        return Ok(true);
    };
    match value
        .to_str()
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        Some("" | "on" | "1" | "true" | "yes") => Ok(true),
        Some("off" | "0" | "false" | "no") => Ok(false),
        _ => Err(Error::InvalidVariable {
            variable: ENV_SHARED_PACE,
            value: value.to_string_lossy().into_owned(),
            expected: "on or off (whether the pace is shared with the other processes of this \
                       host)",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_pace_variable_says_on_or_off_and_nothing_else() {
        let says = |value: &str| shared_pace_from(Some(value.into()));
        assert!(shared_pace_from(None).unwrap());
        for on in ["on", "1", "true", "YES", ""] {
            assert!(says(on).unwrap(), "{on}");
        }
        for off in ["off", "0", "false", "No", " off "] {
            assert!(!says(off).unwrap(), "{off}");
        }
        let err = says("of").unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidVariable {
                variable: ENV_SHARED_PACE,
                ..
            }
        ));
        assert!(
            err.to_string().contains("MEDIAGEN_SHARED_PACE=\"of\""),
            "{err}"
        );
    }

    #[test]
    fn from_env_needs_both_the_base_url_and_the_key() {
        let err = ClientBuilder::from_lookup(|_| None).unwrap_err();
        assert!(
            err.to_string()
                .contains("MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY not set"),
            "{err}"
        );

        let only_key = ClientBuilder::from_lookup(|name| {
            (name == ENV_API_KEY).then(|| "mg_live_a_b".to_owned())
        })
        .unwrap_err();
        assert!(
            only_key
                .to_string()
                .starts_with("invalid client configuration: MEDIAGEN_BASE_URL not set"),
            "{only_key}"
        );

        let client = ClientBuilder::from_lookup(|name| match name {
            ENV_API_KEY => Some("mg_live_a_b".to_owned()),
            ENV_BASE_URL => Some("http://127.0.0.1:9/".to_owned()),
            _ => None,
        })
        .unwrap()
        .build()
        .unwrap();
        assert_eq!(client.base_url(), "http://127.0.0.1:9");
    }

    #[test]
    fn the_contract_names_no_host_either() {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../openapi/openapi.json")).unwrap();
        assert_eq!(doc["servers"][0]["url"], "{base_url}");
    }

    #[test]
    fn the_key_is_redacted_from_every_debug_output() {
        let key = "mg_live_pub_verysecretpart";
        let builder = Client::builder()
            .base_url("http://127.0.0.1:8080")
            .api_key(key);
        assert!(!format!("{builder:?}").contains("verysecretpart"));
        let client = builder.build().unwrap();
        assert!(!format!("{client:?}").contains("verysecretpart"));
        assert!(!format!("{:?}", client.raw()).contains("verysecretpart"));
        assert!(!format!("{client:#?}").contains("verysecretpart"));
    }
}
