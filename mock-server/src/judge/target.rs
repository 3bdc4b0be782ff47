//! The world a command is judged in: the root of a mock started here, or a
//! world made on a running mock. Either is driven over its control API, as any
//! client of the mock drives it, so that both are judged the same way.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::child::Signals;
use super::report::Verdict;
use crate::config::{ClockMode, Config, Options, Switch};
use crate::server::MockServer;

/// How often the deliveries are looked at while they settle.
const POLL: Duration = Duration::from_millis(200);

/// Real seconds a control request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// An answer of the control API other than 2xx.
#[derive(Debug, thiserror::Error)]
#[error("{method} {url}: {status} {said}")]
struct Refused {
    method: Method,
    url: String,
    status: StatusCode,
    /// The envelope's code and message, or the start of the body.
    said: String,
}

/// Where the webhook deliveries stand once the command has exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// None is pending.
    Quiet,
    /// These are pending, with their next attempt beyond the wait.
    Later(usize),
    /// The wait ran out with these due or in flight.
    GaveUp(usize),
    /// A signal ended the wait with these due or in flight.
    Interrupted(usize),
}

/// The judged world and how to end it.
pub(super) struct Target {
    control: Control,
    api_key: String,
    owner: Owner,
}

enum Owner {
    /// A mock of this process, stopped at the end.
    Here(MockServer),
    /// A world of a running mock, deleted at the end.
    There { server: String, id: String },
}

/// The control API of one world: its base URL and the token it takes.
struct Control {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Target {
    /// Starts a mock in this process on 127.0.0.1 at a free port, set up as
    /// `mediagen-mock` would be from `file` and `options`.
    pub(super) async fn start(file: Option<&Path>, mut options: Options) -> anyhow::Result<Self> {
        if options.listen.is_some() || options.state.is_some() {
            eprintln!(
                "judge: --listen and --state (MEDIAGEN_MOCK_LISTEN, MEDIAGEN_MOCK_STATE) are not \
                 used: the judge's mock listens on 127.0.0.1 at a free port and starts afresh"
            );
        }
        // Loopback whatever the file says, so that its control API may stay open.
        options.listen = Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        options.state = None;
        let config =
            Config::load(file, options).context("while loading the mock's configuration")?;
        let token = config.admin_token.clone();
        let mock = MockServer::builder()
            .config(|own| *own = config)
            .start()
            .await;
        let control = Control::new(mock.uri(), token, false)?;
        Ok(Self {
            api_key: mock.demo_api_key().to_owned(),
            control,
            owner: Owner::Here(mock),
        })
    }

    /// Makes a world on the mock at `server` (`POST /_mock/worlds`), with the
    /// settings of `options` a world takes and the admin token it gives.
    pub(super) async fn world_of(
        server: &url::Url,
        file: Option<&Path>,
        options: Options,
    ) -> anyhow::Result<Self> {
        let settings = world_settings(file, &options);
        let server = server.as_str().trim_end_matches('/').to_owned();
        let root = Control::new(server.clone(), options.admin_token.clone(), true)?;
        let made = match root
            .call(Method::POST, "/_mock/worlds", Some(&settings))
            .await
        {
            Ok(body) => serde_json::from_slice::<Value>(&body).map_err(anyhow::Error::from),
            Err(err) => Err(err),
        };
        let made = made.map_err(|err| {
            let needs_token = options.admin_token.is_none()
                && err
                    .downcast_ref::<Refused>()
                    .is_some_and(|refused| refused.status == StatusCode::UNAUTHORIZED);
            let err = err.context(format!("while making a world on the mock at {server}"));
            if needs_token {
                err.context("its control API needs the admin token: --admin-token TOKEN or MEDIAGEN_MOCK_ADMIN_TOKEN")
            } else {
                err
            }
        })?;
        let text = |name: &str| made[name].as_str().map(str::to_owned);
        let (Some(id), Some(base)) = (text("id"), text("baseUrl")) else {
            bail!("the mock at {server} made a world without an id or a baseUrl: {made}");
        };
        let token = text("controlToken").or(options.admin_token);
        let target = Self {
            control: Control::new(base, token, true)?,
            api_key: text("demoApiKey").unwrap_or_default(),
            owner: Owner::There { server, id },
        };
        if target.api_key.is_empty() {
            target.close().await;
            bail!("the world made has no demo user's key");
        }
        Ok(target)
    }

    /// The variables the command runs with; `None` removes one, so that a token
    /// of another mock left in the environment is not sent to this one.
    pub(super) fn environment(&self) -> Vec<(&'static str, Option<String>)> {
        let base = Some(self.control.base.clone());
        let key = Some(self.api_key.clone());
        vec![
            ("MEDIAGEN_BASE_URL", base.clone()),
            ("MEDIAGEN_API_KEY", key.clone()),
            // The names the Node package's `connectMock()` reads.
            ("MEDIAGEN_MOCK_URL", base),
            ("MEDIAGEN_MOCK_API_KEY", key),
            ("MEDIAGEN_MOCK_CONTROL_TOKEN", self.control.token.clone()),
        ]
    }

    /// Waits, up to `limit` of real time, until no webhook delivery is due or
    /// in flight. A delivery whose next attempt comes later than the wait could
    /// last (minutes off on a clock at real speed, or any time on a manual
    /// clock nobody moves), or follows an attempt nobody answered, is not
    /// waited for.
    pub(super) async fn settle(
        &self,
        limit: Duration,
        signals: &mut Signals,
    ) -> anyhow::Result<Settled> {
        let started = Instant::now();
        loop {
            let left = limit.saturating_sub(started.elapsed());
            let (due, later) = self.pending(left).await?;
            if due == 0 {
                return Ok(if later == 0 {
                    Settled::Quiet
                } else {
                    Settled::Later(later)
                });
            }
            if left.is_zero() {
                return Ok(Settled::GaveUp(due));
            }
            tokio::select! {
                () = tokio::time::sleep(POLL.min(left)) => {}
                _ = signals.recv() => return Ok(Settled::Interrupted(due)),
            }
        }
    }

    /// The pending deliveries: those due within `window` of real time (or in
    /// flight), and the others.
    async fn pending(&self, window: Duration) -> anyhow::Result<(usize, usize)> {
        let clock = self.control.json("/_mock/clock").await?;
        let now = clock["now"]
            .as_str()
            .and_then(time)
            .ok_or_else(|| anyhow!("the mock's clock answered without a time: {clock}"))?;
        let scale = match clock["mode"].as_str() {
            Some("real") => clock["timeScale"].as_f64().unwrap_or(1.0),
            _ => 0.0,
        };
        let horizon = now
            + chrono::Duration::from_std(window.mul_f64(scale.max(0.0)))
                .unwrap_or(chrono::Duration::MAX);
        let deliveries = self.control.json("/_mock/deliveries").await?;
        let pending = deliveries["data"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|d| d["state"] == "pending");
        let (mut due, mut later) = (0, 0);
        for delivery in pending {
            let last = delivery["attempts"]
                .as_array()
                .and_then(|attempts| attempts.last());
            let Some(last) = last else {
                // Not tried yet: the first attempt goes at once.
                due += 1;
                continue;
            };
            // A receiver that did not answer the last attempt most likely ended
            // with the command, and a connection refused is not judged: its
            // retry is not waited for. One under way shows as a retry whose
            // time has passed.
            let answered = last["responseStatus"].is_u64();
            match last["nextAttemptAt"].as_str().and_then(time) {
                Some(next) if answered && next <= horizon => due += 1,
                Some(_) => later += 1,
                None => due += 1,
            }
        }
        Ok((due, later))
    }

    /// The verdict as the mock answers it, and read; `strict` names the rules
    /// of advice that fail the run.
    pub(super) async fn verdict(&self, strict: &[String]) -> anyhow::Result<(Bytes, Verdict)> {
        let path = if strict.is_empty() {
            "/_mock/verdict".to_owned()
        } else {
            format!("/_mock/verdict?strict={}", strict.join(","))
        };
        let raw = self
            .control
            .call(Method::GET, &path, None)
            .await
            .context("while reading the verdict")?;
        let verdict = serde_json::from_slice(&raw).context("while reading the verdict")?;
        Ok((raw, verdict))
    }

    /// Stops the mock, or ends the world; a world that cannot be ended is told.
    pub(super) async fn close(self) {
        match self.owner {
            Owner::Here(mock) => mock.shutdown().await,
            Owner::There { server, id } => {
                let path = format!("/_mock/worlds/{id}");
                let root = Control {
                    base: server,
                    ..self.control
                };
                if let Err(err) = root.call(Method::DELETE, &path, None).await {
                    eprintln!("judge: the world {id} was not ended: {err:#}");
                }
            }
        }
    }
}

impl Control {
    /// `proxied`: whether the environment's HTTP proxy may carry the calls; a
    /// mock of this process is reached on loopback, never through a proxy.
    fn new(base: String, token: Option<String>, proxied: bool) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .tls_certs_merge(crate::tls::built_in_roots());
        let http = if proxied { http } else { http.no_proxy() };
        Ok(Self {
            http: http.build().context("while making an HTTP client")?,
            base,
            token,
        })
    }

    /// Calls the control API; an answer other than 2xx is an error with the
    /// envelope's code and message.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Bytes> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method.clone(), &url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let answer = request
            .send()
            .await
            .with_context(|| format!("{method} {url}"))?;
        let status = answer.status();
        let bytes = answer
            .bytes()
            .await
            .with_context(|| format!("{method} {url}"))?;
        if status.is_success() {
            return Ok(bytes);
        }
        let envelope: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let error = &envelope["error"];
        let said = match (error["code"].as_str(), error["message"].as_str()) {
            (Some(code), Some(message)) => format!("{code}: {message}"),
            _ => String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
        };
        Err(Refused {
            method,
            url,
            status,
            said,
        }
        .into())
    }

    async fn json(&self, path: &str) -> anyhow::Result<Value> {
        let bytes = self.call(Method::GET, path, None).await?;
        serde_json::from_slice(&bytes).with_context(|| format!("GET {}{path}", self.base))
    }
}

/// The settings of `POST /_mock/worlds` that the serving options give, when
/// given; the others are the server's, and said so.
fn world_settings(file: Option<&Path>, options: &Options) -> Value {
    if file.is_some() {
        eprintln!("judge: with --url, the config file is not read: the mock at URL has its own");
    }
    let mut settings = serde_json::Map::new();
    if let Some(clock) = options.clock {
        let clock = match clock {
            ClockMode::Real => "real",
            ClockMode::Manual => "manual",
        };
        settings.insert("clock".into(), json!(clock));
    }
    if let Some(scale) = options.time_scale {
        settings.insert("timeScale".into(), json!(scale));
    }
    if let Some(responses) = options.responses {
        settings.insert("responses".into(), json!(responses));
    }
    if let Some(switch) = options.rate_limits {
        settings.insert("rateLimits".into(), json!(switch == Switch::On));
    }
    if let Some(rub) = options.demo_balance_rub {
        settings.insert("demoBalanceRub".into(), json!(rub));
    }
    let unused = [
        ("--catalog", options.catalog.is_some()),
        ("--demo-api-key", options.demo_api_key.is_some()),
        ("--fault", options.fault.is_some()),
        (
            "--allow-private-webhooks",
            options.allow_private_webhooks.is_some(),
        ),
        ("--queue-seconds", options.queue_seconds.is_some()),
        ("--auto-pay-seconds", options.auto_pay_seconds.is_some()),
        ("--retain", options.retain.is_some()),
    ];
    let unused: Vec<&str> = unused
        .iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| *name)
        .collect();
    if !unused.is_empty() {
        eprintln!(
            "judge: with --url, {} are the running mock's own and not used; a world takes \
             --clock, --time-scale, --responses, --rate-limits and --demo-balance-rub",
            unused.join(", ")
        );
    }
    Value::Object(settings)
}

fn time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
