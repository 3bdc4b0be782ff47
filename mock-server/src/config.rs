//! Configuration, in layers: the commented defaults embedded from
//! `config.default.toml`, then an optional TOML file, then `MEDIAGEN_MOCK_*`
//! environment variables, then flags. Validated once, at load.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde::Deserialize;

use crate::domain::catalog::Catalog;
use crate::domain::fault::{Fault, FaultRequest};

/// The defaults, with a comment on each option.
pub const DEFAULTS_TOML: &str = include_str!("../config.default.toml");

/// How the mock's clock runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockMode {
    /// Wall-clock time, sped up by `time-scale`.
    Real,
    /// Time moves only through `POST /_mock/clock/advance`.
    Manual,
}

/// What the answers carry (`--responses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Responses {
    /// Every field the contract designs: the mock as it always was.
    #[default]
    Full,
    /// Only what the service document guarantees (and, for the areas it does
    /// not show, the contract's required fields): what a client can rely on.
    Minimal,
    /// Everything of `full`, plus a field and a header that no client knows in
    /// every answer, so that tolerant readers are tested too.
    Extra,
}

/// Whether the service's request limits refuse requests (`--rate-limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    /// A request over a limit is refused with 429, as the service does.
    On,
    /// Requests are counted and the `x-ratelimit-*` headers sent, but none is refused.
    Off,
}

/// Every option, each one optional so that layers can be merged. The same type
/// is read from TOML files and from flags and environment variables.
#[derive(Debug, Clone, Default, Deserialize, Args)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[command(mut_args = help_text)]
pub struct Options {
    /// Address to listen on.
    #[arg(long, env = "MEDIAGEN_MOCK_LISTEN", value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// `real` (wall clock, scaled by --time-scale) or `manual` (moved by the control API).
    #[arg(long, env = "MEDIAGEN_MOCK_CLOCK", value_name = "MODE")]
    pub clock: Option<ClockMode>,
    /// How many times faster than real time the real clock runs.
    #[arg(long, env = "MEDIAGEN_MOCK_TIME_SCALE", value_name = "N")]
    pub time_scale: Option<f64>,
    /// Whether the service's request limits refuse requests.
    #[arg(long, env = "MEDIAGEN_MOCK_RATE_LIMITS", value_name = "on|off")]
    pub rate_limits: Option<Switch>,
    /// A catalogue file in the contract's `Catalog` shape, instead of the built-in one.
    #[arg(long, env = "MEDIAGEN_MOCK_CATALOG", value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    /// Bearer token the control API (`/_mock/...`) requires; none means open, which
    /// only a loopback --listen allows unless --open-control says so.
    #[arg(long, env = "MEDIAGEN_MOCK_ADMIN_TOKEN", value_name = "TOKEN")]
    pub admin_token: Option<String>,
    /// Leave the control API open without --admin-token on an address other
    /// than loopback, on purpose (a private network of your own); the flag alone
    /// means true.
    #[arg(long, env = "MEDIAGEN_MOCK_OPEN_CONTROL", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub open_control: Option<bool>,
    /// Let webhook endpoints point at private and loopback addresses (for CI receivers);
    /// the flag alone means true.
    #[arg(long, env = "MEDIAGEN_MOCK_ALLOW_PRIVATE_WEBHOOKS", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub allow_private_webhooks: Option<bool>,
    /// Balance in roubles of the demo user created at start.
    #[arg(long, env = "MEDIAGEN_MOCK_DEMO_BALANCE_RUB", value_name = "RUB")]
    pub demo_balance_rub: Option<f64>,
    /// API key of the demo user (`mg_live_<public>_<secret>`); a fresh one when absent.
    #[arg(long, env = "MEDIAGEN_MOCK_DEMO_API_KEY", value_name = "KEY")]
    pub demo_api_key: Option<String>,
    /// Largest request body accepted, in bytes; larger ones get 413.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_BODY_LIMIT_BYTES",
        value_name = "BYTES",
        hide_short_help = true
    )]
    pub body_limit_bytes: Option<usize>,
    /// Seconds a new task waits in PENDING before a worker takes it.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_QUEUE_SECONDS",
        value_name = "SECONDS",
        hide_short_help = true
    )]
    pub queue_seconds: Option<f64>,
    /// What answers carry: `full` (every designed field), `minimal` (only what the
    /// service document guarantees) or `extra` (full, plus unknown fields and a header).
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_RESPONSES",
        value_name = "full|minimal|extra"
    )]
    pub responses: Option<Responses>,
    /// A fault rule active from the start, as `key=value` pairs separated by commas
    /// (`effect=error,status=503,path=/v1/generations,count=2`) or a JSON object;
    /// repeatable (in the environment, rules separated by `;`).
    #[arg(
        long = "fault",
        env = "MEDIAGEN_MOCK_FAULT",
        value_name = "RULE",
        value_parser = FaultRequest::parse_flag,
        value_delimiter = ';'
    )]
    pub fault: Option<Vec<FaultRequest>>,
    /// Seconds of the mock's clock after which a new top-up pays itself; unset, a
    /// top-up waits for its payment page or `POST /_mock/topups/{id}/pay`.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_AUTO_PAY_SECONDS",
        value_name = "SECONDS",
        hide_short_help = true
    )]
    pub auto_pay_seconds: Option<f64>,
    /// Real seconds a webhook receiver has to answer (the document's 10).
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_DELIVERY_TIMEOUT_SECONDS",
        value_name = "SECONDS",
        hide_short_help = true
    )]
    pub delivery_timeout_seconds: Option<f64>,
    /// How much to remember: a count (`20000`) and/or an age on the mock's clock
    /// (`6h`); beyond them the oldest finished generations, ended webhook
    /// messages and logged requests are forgotten. Comma-separated or repeatable.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_RETAIN",
        value_name = "COUNT|AGE",
        value_delimiter = ',',
        hide_short_help = true
    )]
    pub retain: Option<Vec<RetainBound>>,
    /// Most worlds at once beside the root (`POST /_mock/worlds`); one more is
    /// refused with 429.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_MAX_WORLDS",
        value_name = "N",
        hide_short_help = true
    )]
    pub max_worlds: Option<usize>,
    /// A file that keeps the default world's state: loaded at start when it
    /// exists, written every --state-interval seconds and at shutdown (whole, then
    /// renamed; readable by its owner only, since it holds keys and secrets).
    #[arg(long, env = "MEDIAGEN_MOCK_STATE", value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Real seconds between two writes of --state; 0 writes it at shutdown only.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_STATE_INTERVAL",
        value_name = "SECONDS",
        hide_short_help = true
    )]
    pub state_interval: Option<f64>,
}

/// The help of each option as a person reads it: the default of
/// `config.default.toml` beside it, as text (a clap default would win over a
/// config file), and the environment variable by its name alone (clap shows an
/// unset one as `NAME=`). Applied to every option of the command, so the
/// `--config` beside these options gets the same.
fn help_text(arg: clap::Arg) -> clap::Arg {
    static DEFAULTS: std::sync::OnceLock<toml::Table> = std::sync::OnceLock::new();
    let arg = arg.hide_env_values(true);
    let defaults = DEFAULTS.get_or_init(|| DEFAULTS_TOML.parse().unwrap_or_default());
    let Some(value) = arg.get_long().and_then(|long| defaults.get(long)) else {
        return arg;
    };
    let value = match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Array(values) => values
            .iter()
            .map(|value| match value {
                toml::Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    };
    let with_default = |help: &clap::builder::StyledStr| format!("{help} [default: {value}]");
    let short = arg.get_help().map(with_default);
    let long = arg.get_long_help().map(with_default);
    let arg = match short {
        Some(help) => arg.help(help),
        None => arg,
    };
    match long {
        Some(help) => arg.long_help(help),
        None => arg,
    }
}

/// One bound of `--retain`: a number of records, or an age such as `6h`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum RetainBound {
    /// Keep at most this many of each kind.
    Count(usize),
    /// Forget what ended longer ago than this many seconds of the mock's clock.
    AgeSecs(f64),
}

impl std::str::FromStr for RetainBound {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let unit_secs = match text.chars().last() {
            Some('s') => 1.0,
            Some('m') => 60.0,
            Some('h') => 3_600.0,
            Some('d') => 86_400.0,
            _ => {
                return match text.parse::<usize>() {
                    Ok(count) if count > 0 => Ok(Self::Count(count)),
                    _ => Err(format!(
                        "`{text}` is neither a count of at least 1 nor an age such as 30m, 6h or 2d"
                    )),
                };
            }
        };
        match text[..text.len() - 1].parse::<f64>() {
            Ok(n) if n.is_finite() && n > 0.0 => Ok(Self::AgeSecs(n * unit_secs)),
            _ => Err(format!(
                "`{text}` is not an age above zero such as 30m, 6h or 2d"
            )),
        }
    }
}

impl TryFrom<String> for RetainBound {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

/// The bounds in effect: each kind of record is kept within both.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct Retention {
    /// At most this many finished generations, ended messages, logged requests.
    pub count: Option<usize>,
    /// Nothing that ended longer ago than this, in seconds of the mock's clock.
    pub age_secs: Option<f64>,
}

impl Retention {
    fn from_bounds(bounds: &[RetainBound]) -> Self {
        bounds
            .iter()
            .fold(Self::default(), |kept, bound| match *bound {
                RetainBound::Count(n) => Self {
                    count: Some(kept.count.map_or(n, |c| c.min(n))),
                    ..kept
                },
                RetainBound::AgeSecs(secs) => Self {
                    age_secs: Some(kept.age_secs.map_or(secs, |a| a.min(secs))),
                    ..kept
                },
            })
    }
}

impl Options {
    /// `other`'s values win where it has them.
    fn merge(self, other: Self) -> Self {
        Self {
            listen: other.listen.or(self.listen),
            clock: other.clock.or(self.clock),
            time_scale: other.time_scale.or(self.time_scale),
            rate_limits: other.rate_limits.or(self.rate_limits),
            catalog: other.catalog.or(self.catalog),
            admin_token: other.admin_token.or(self.admin_token),
            open_control: other.open_control.or(self.open_control),
            allow_private_webhooks: other.allow_private_webhooks.or(self.allow_private_webhooks),
            demo_balance_rub: other.demo_balance_rub.or(self.demo_balance_rub),
            demo_api_key: other.demo_api_key.or(self.demo_api_key),
            body_limit_bytes: other.body_limit_bytes.or(self.body_limit_bytes),
            queue_seconds: other.queue_seconds.or(self.queue_seconds),
            responses: other.responses.or(self.responses),
            fault: other.fault.or(self.fault),
            auto_pay_seconds: other.auto_pay_seconds.or(self.auto_pay_seconds),
            delivery_timeout_seconds: other
                .delivery_timeout_seconds
                .or(self.delivery_timeout_seconds),
            retain: other.retain.or(self.retain),
            max_worlds: other.max_worlds.or(self.max_worlds),
            state: other.state.or(self.state),
            state_interval: other.state_interval.or(self.state_interval),
        }
    }
}

/// The validated configuration.
#[derive(Clone)]
pub struct Config {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// How the clock runs.
    pub clock: ClockMode,
    /// How much faster than wall-clock time a real clock runs.
    pub time_scale: f64,
    /// Whether the service's request limits refuse requests (they are counted either way).
    pub rate_limits: bool,
    /// The catalogue of models.
    pub catalog: Catalog,
    /// The token the control API asks for, if any.
    pub admin_token: Option<String>,
    /// Whether the control API may be open (no admin token) on an address
    /// other than loopback.
    pub open_control: bool,
    /// Whether webhook URLs may point at localhost and private addresses.
    pub allow_private_webhooks: bool,
    /// The demo user's balance at start, in roubles.
    pub demo_balance_rub: f64,
    /// The demo user's API key, fixed; a fresh one otherwise.
    pub demo_api_key: Option<String>,
    /// The largest request body of the API.
    pub body_limit_bytes: usize,
    /// Seconds a new task waits in `PENDING` before a worker takes it.
    pub queue_seconds: f64,
    /// What answers carry at start (the control API can change it).
    pub responses: Responses,
    /// Fault rules active at start, and again after each reset.
    pub faults: Vec<Fault>,
    /// Seconds of the mock's clock after which a new top-up pays itself.
    pub auto_pay_seconds: Option<f64>,
    /// Real seconds a webhook receiver has to answer.
    pub delivery_timeout_seconds: f64,
    /// How much of what ended the mock remembers.
    pub retention: Retention,
    /// Most worlds at once beside the root.
    pub max_worlds: usize,
    /// Whether the demo user is made at start (and at each reset).
    pub demo_user: bool,
    /// The file that keeps the default world's state, if any.
    pub state_file: Option<PathBuf>,
    /// Real seconds between two writes of the state file; 0: at shutdown only.
    pub state_interval_seconds: f64,
    /// Whether each world keeps the verdict's bookkeeping (`GET /_mock/verdict`);
    /// on unless a benchmark measures the request path without it.
    pub verdict: bool,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("clock", &self.clock)
            .field("time_scale", &self.time_scale)
            .field("rate_limits", &self.rate_limits)
            .field("models", &self.catalog.models.len())
            .field("admin_token", &self.admin_token.as_ref().map(|_| "<set>"))
            .field("open_control", &self.open_control)
            .field("allow_private_webhooks", &self.allow_private_webhooks)
            .field("demo_balance_rub", &self.demo_balance_rub)
            .field("body_limit_bytes", &self.body_limit_bytes)
            .field("queue_seconds", &self.queue_seconds)
            .field("responses", &self.responses)
            .field("faults", &self.faults.len())
            .field("auto_pay_seconds", &self.auto_pay_seconds)
            .field("delivery_timeout_seconds", &self.delivery_timeout_seconds)
            .field("retention", &self.retention)
            .field("max_worlds", &self.max_worlds)
            .field("state_file", &self.state_file)
            .field("verdict", &self.verdict)
            .finish_non_exhaustive()
    }
}

impl Default for Config {
    /// The embedded defaults alone.
    fn default() -> Self {
        Self::load(None, Options::default()).expect("the embedded defaults are valid")
    }
}

impl Config {
    /// Refuses a control API open to the network: bound to an address other
    /// than loopback, the mock needs an admin token, or `--open-control` to
    /// say that an open one is meant. Anyone who reaches an open control API
    /// can change balances, move clocks, end worlds and read snapshots, which
    /// hold webhook secrets.
    pub fn check_exposure(&self) -> anyhow::Result<()> {
        if self.listen.ip().is_loopback() || self.admin_token.is_some() || self.open_control {
            return Ok(());
        }
        bail!(
            "refusing to listen on {} with the control API open: it is not a loopback address, \
             and anyone who reaches it could change balances, move clocks, end worlds and read \
             snapshots (with webhook secrets). Give --admin-token TOKEN \
             (MEDIAGEN_MOCK_ADMIN_TOKEN) to guard /_mock/, or --open-control to leave it open on purpose",
            self.listen
        )
    }

    /// Builds the configuration from the defaults, the optional `file`, and
    /// `overrides` (flags and environment variables, already merged by clap).
    pub fn load(file: Option<&Path>, overrides: Options) -> anyhow::Result<Self> {
        let mut options: Options =
            toml::from_str(DEFAULTS_TOML).context("while reading the embedded defaults")?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("while reading {}", path.display()))?;
            let from_file: Options = toml::from_str(&text)
                .with_context(|| format!("while parsing {}", path.display()))?;
            options = options.merge(from_file);
        }
        Self::validate(options.merge(overrides))
    }

    fn validate(o: Options) -> anyhow::Result<Self> {
        let missing = |name: &str| anyhow::anyhow!("option {name} has no value");
        let time_scale = o.time_scale.ok_or_else(|| missing("time-scale"))?;
        if !(time_scale.is_finite() && time_scale > 0.0) {
            bail!("time-scale must be a positive number, got {time_scale}");
        }
        let demo_balance_rub = o
            .demo_balance_rub
            .ok_or_else(|| missing("demo-balance-rub"))?;
        if !(demo_balance_rub.is_finite() && demo_balance_rub >= 0.0) {
            bail!("demo-balance-rub must be a number of at least 0, got {demo_balance_rub}");
        }
        let queue_seconds = o.queue_seconds.ok_or_else(|| missing("queue-seconds"))?;
        if !(queue_seconds.is_finite() && queue_seconds >= 0.0) {
            bail!("queue-seconds must be a number of at least 0, got {queue_seconds}");
        }
        let seconds = |value: Option<f64>, name: &str, max: f64| match value {
            Some(v) if !(v.is_finite() && v >= 0.0 && v <= max) => {
                bail!("{name} must be a number from 0 to {max}, got {v}")
            }
            other => Ok(other),
        };
        let auto_pay_seconds = seconds(o.auto_pay_seconds, "auto-pay-seconds", 86_400.0)?;
        let delivery_timeout_seconds = seconds(
            o.delivery_timeout_seconds,
            "delivery-timeout-seconds",
            600.0,
        )?
        .unwrap_or(crate::domain::webhook::DELIVERY_TIMEOUT_SECS);
        let faults = o
            .fault
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, rule)| {
                Fault::from_request(rule)
                    .map_err(|why| anyhow::anyhow!("fault rule {}: {why}", i + 1))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if let Some(key) = &o.demo_api_key
            && crate::domain::auth::parse(key).is_none()
        {
            bail!(
                "demo-api-key must have the form mg_live_<public>_<secret> with letters and digits"
            );
        }
        let catalog = match &o.catalog {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("while reading the catalog {}", path.display()))?;
                Catalog::from_json(&text)
                    .with_context(|| format!("while loading the catalog {}", path.display()))?
            }
            None => Catalog::default_catalog(),
        };
        let config = Self {
            listen: o.listen.ok_or_else(|| missing("listen"))?,
            clock: o.clock.ok_or_else(|| missing("clock"))?,
            time_scale,
            rate_limits: o.rate_limits.ok_or_else(|| missing("rate-limits"))? == Switch::On,
            catalog,
            admin_token: o.admin_token.filter(|t| !t.is_empty()),
            open_control: o.open_control.unwrap_or(false),
            allow_private_webhooks: o.allow_private_webhooks.unwrap_or(false),
            demo_balance_rub,
            demo_api_key: o.demo_api_key,
            body_limit_bytes: o
                .body_limit_bytes
                .ok_or_else(|| missing("body-limit-bytes"))?,
            queue_seconds,
            responses: o.responses.ok_or_else(|| missing("responses"))?,
            faults,
            auto_pay_seconds,
            delivery_timeout_seconds,
            retention: Retention::from_bounds(&o.retain.unwrap_or_default()),
            max_worlds: o.max_worlds.ok_or_else(|| missing("max-worlds"))?,
            demo_user: true,
            state_file: o.state,
            state_interval_seconds: seconds(o.state_interval, "state-interval", 86_400.0)?
                .ok_or_else(|| missing("state-interval"))?,
            verdict: true,
        };
        config.check_exposure()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_defaults_give_a_complete_configuration() {
        let config = Config::default();
        assert_eq!(config.listen, SocketAddr::from(([127, 0, 0, 1], 8080)));
        assert_eq!(config.clock, ClockMode::Real);
        assert!(config.rate_limits);
        assert!(!config.allow_private_webhooks);
        assert!(config.admin_token.is_none());
        assert_eq!(
            config.retention,
            Retention {
                count: Some(20_000),
                age_secs: None
            },
            "a long run stays flat by default"
        );
    }

    #[test]
    fn retain_takes_a_count_and_an_age_and_refuses_anything_else() {
        let bounds: Vec<RetainBound> = ["5000", "6h", "90s", "2d", "30m"]
            .iter()
            .map(|text| text.parse().unwrap())
            .collect();
        assert_eq!(
            Retention::from_bounds(&bounds),
            Retention {
                count: Some(5000),
                age_secs: Some(90.0)
            },
            "the tighter of each kind wins"
        );
        for bad in ["0", "-1", "6x", "h", "0h", "1.5", ""] {
            assert!(bad.parse::<RetainBound>().is_err(), "{bad:?}");
        }
        let overrides = Options {
            retain: Some(vec![RetainBound::AgeSecs(3600.0)]),
            ..Options::default()
        };
        let config = Config::load(None, overrides).unwrap();
        assert_eq!(
            config.retention,
            Retention {
                count: None,
                age_secs: Some(3600.0)
            },
            "a flag replaces the default bounds"
        );
    }

    #[test]
    fn file_overrides_defaults_and_flags_override_the_file() {
        let dir =
            std::env::temp_dir().join(format!("mediagen-mock-config-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("mock.toml");
        std::fs::write(
            &file,
            "clock = \"manual\"\nrate-limits = \"off\"\ntime-scale = 5.0\n",
        )
        .expect("write");
        let flags = Options {
            time_scale: Some(50.0),
            ..Options::default()
        };
        let config = Config::load(Some(&file), flags).expect("valid");
        assert_eq!(config.clock, ClockMode::Manual);
        assert!(!config.rate_limits);
        assert_eq!(config.time_scale, 50.0);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn fault_rules_come_from_the_file_as_tables_and_from_flags() {
        let options: Options = toml::from_str(
            "responses = \"minimal\"\n\
             [[fault]]\neffect = \"error\"\nstatus = 503\npath = \"/v1/generations\"\ncount = 2\n\
             [[fault]]\neffect = \"delay\"\ndelay-seconds = 1.5\n",
        )
        .expect("valid TOML");
        let config = Config::load(None, options).expect("valid");
        assert_eq!(config.responses, Responses::Minimal);
        assert_eq!(config.faults.len(), 2);
        assert_eq!(
            config.faults[0],
            Fault::error(503, "SERVICE_UNAVAILABLE")
                .path("/v1/generations")
                .times(2)
                .checked()
                .expect("valid")
        );
        let bad = Options {
            fault: Some(vec![
                FaultRequest::parse_flag("effect=delay").expect("parses"),
            ]),
            ..Options::default()
        };
        let err = Config::load(None, bad).expect_err("no delay given");
        assert!(err.to_string().contains("fault rule 1"), "{err}");
    }

    #[test]
    fn a_control_api_open_to_the_network_needs_a_token_or_open_control() {
        let on = |listen: &str, token: Option<&str>, open: Option<bool>| {
            Config::load(
                None,
                Options {
                    listen: Some(listen.parse().unwrap()),
                    admin_token: token.map(str::to_owned),
                    open_control: open,
                    ..Options::default()
                },
            )
            .map(drop)
        };
        for loopback in ["127.0.0.1:0", "[::1]:0"] {
            assert!(on(loopback, None, None).is_ok(), "{loopback}");
        }
        let refused = format!("{:#}", on("0.0.0.0:18099", None, None).unwrap_err());
        assert!(refused.contains("0.0.0.0:18099"), "{refused}");
        assert!(refused.contains("--admin-token"), "{refused}");
        assert!(refused.contains("--open-control"), "{refused}");
        assert!(on("[::]:0", None, Some(false)).is_err());
        assert!(on("0.0.0.0:0", Some("s3cret"), None).is_ok());
        assert!(on("0.0.0.0:0", None, Some(true)).is_ok());
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_with_a_reason() {
        let err = toml::from_str::<Options>("no-such-option = 1").expect_err("unknown key");
        assert!(err.to_string().contains("no-such-option"));
        let bad = Options {
            time_scale: Some(0.0),
            ..Options::default()
        };
        let err = Config::load(None, bad).expect_err("zero scale");
        assert!(err.to_string().contains("time-scale"));
        let bad_key = Options {
            demo_api_key: Some("sk_test".into()),
            ..Options::default()
        };
        assert!(Config::load(None, bad_key).is_err());
    }
}
