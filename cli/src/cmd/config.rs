//! `login` and `config`: the settings in effect, and the config file's values.

use std::io::{IsTerminal, Read};

use anyhow::Context as _;
use serde_json::json;

use super::context::Context;
use crate::cli::config::{ConfigArgs, ConfigCommands, ConfigKey, ValueCommand};
use crate::config;
use crate::error::{Exit, Failure};
use crate::output::{self, DIM};

pub async fn run(ctx: &Context, command: ConfigCommands) -> anyhow::Result<()> {
    match command {
        ConfigCommands::Login => login(ctx).await,
        ConfigCommands::Config(args) => config(ctx, args),
    }
}

/// `mediagen config`, `config set` and `config get`.
fn config(ctx: &Context, args: ConfigArgs) -> anyhow::Result<()> {
    match args.command {
        None => show(ctx),
        Some(ValueCommand::Set { key, value }) => set(ctx, key, value),
        Some(ValueCommand::Get { key }) => get(ctx, key),
    }
}

/// `mediagen login`: asks for the key (or reads it from stdin), checks it with the
/// service, and only then saves it with the base URL in the profile.
async fn login(ctx: &Context) -> anyhow::Result<()> {
    let global = ctx.global();
    if global.mock {
        return Err(Failure::new(
            Exit::Usage,
            "USAGE_ERROR",
            "login saves a key for the service, and --mock needs none",
        )
        .into());
    }
    let terminal = std::io::stdin().is_terminal();
    let (profile, saved_url) = config::get(global, ConfigKey::BaseUrl)?;
    let base_url = match global.base_url.clone().or(saved_url) {
        Some(url) => url,
        None if terminal => ctx.out.ask("Base URL of the service: ")?,
        None => {
            return Err(Failure::new(
                Exit::Usage,
                "CONFIGURATION_ERROR",
                format!("no base URL to log in to for profile `{profile}`"),
            )
            .hint("pass --base-url URL or set MEDIAGEN_BASE_URL")
            .into());
        }
    };
    config::check(ConfigKey::BaseUrl, &base_url)?;
    let key = if terminal {
        ctx.out.ask_secret("API key (input hidden): ")?
    } else {
        read_stdin("the API key")?
    };
    let key = key.trim().to_owned();
    if key.is_empty() {
        return Err(
            Failure::new(Exit::Usage, "USAGE_ERROR", "no API key was given")
                .hint("type it at the prompt, or pipe it in: `mediagen login < key.txt`")
                .into(),
        );
    }
    config::check(ConfigKey::ApiKey, &key)?;

    // The cheapest call that needs a valid key; a refusal leaves the file as it was.
    let account = ctx
        .client_at(base_url.clone(), Some(key.clone()))?
        .account()
        .get()
        .await
        .context("while checking the key with the service")?;
    let written = config::set(
        global,
        &[(ConfigKey::BaseUrl, &base_url), (ConfigKey::ApiKey, &key)],
    )?;
    let (_, default_profile) = config::get(global, ConfigKey::DefaultProfile)?;
    let in_use_by_default = default_profile.as_deref().unwrap_or("default") == written.profile;
    let who = account
        .email
        .clone()
        .unwrap_or_else(|| format!("account {}", account.id));
    let value = json!({
        "profile": written.profile,
        "configFile": written.config_file,
        "baseUrl": base_url,
        "apiKeyShown": config::shown_key(&key),
        "account": {"id": account.id, "email": account.email},
    });
    ctx.out.emit(&value, |out, w| {
        writeln!(
            w,
            "logged in to {base_url} as {who}; saved to profile `{}` in {}",
            written.profile,
            written.config_file.display()
        )?;
        if !in_use_by_default {
            let hint = format!(
                "use it with --profile {0}, or make it the default: mediagen config set \
                 default_profile {0}",
                written.profile
            );
            writeln!(w, "{}", out.paint(DIM, hint))?;
        }
        Ok(())
    })
}

/// The first line of stdin, for a value piped in.
fn read_stdin(what: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .with_context(|| format!("while reading {what} from stdin"))?;
    Ok(text.lines().next().unwrap_or_default().to_owned())
}

/// `mediagen config set KEY VALUE`.
fn set(ctx: &Context, key: ConfigKey, value: String) -> anyhow::Result<()> {
    let value = if value == "-" {
        read_stdin(&format!("the value of {}", key.name()))?
            .trim()
            .to_owned()
    } else {
        value
    };
    let written = config::set(ctx.global(), &[(key, &value)])?;
    // `default_profile` sits above the profiles and names one: that one is the
    // profile of the answer, not the one this command ran with.
    let profile = match key {
        ConfigKey::DefaultProfile => value.clone(),
        ConfigKey::ApiKey | ConfigKey::BaseUrl => written.profile,
    };
    let shown = match key {
        ConfigKey::ApiKey => config::shown_key(&value),
        _ => value,
    };
    let name = key.name();
    let value = json!({
        "key": name,
        "value": shown,
        "profile": profile,
        "configFile": written.config_file,
    });
    ctx.out.emit(&value, |_, w| {
        let place = match key {
            ConfigKey::DefaultProfile => String::new(),
            _ => format!(" in profile `{profile}`"),
        };
        writeln!(
            w,
            "set {name} = {shown}{place} ({})",
            written.config_file.display()
        )
    })
}

/// `mediagen config get KEY`: the value, or nothing when it is not set.
fn get(ctx: &Context, key: ConfigKey) -> anyhow::Result<()> {
    let (profile, value) = config::get(ctx.global(), key)?;
    let json = json!({ "key": key.name(), "value": value, "profile": profile });
    ctx.out.emit(&json, |_, w| match &value {
        Some(value) => writeln!(w, "{value}"),
        None => Ok(()),
    })
}

/// `mediagen config`: the settings in effect and where each comes from.
fn show(ctx: &Context) -> anyhow::Result<()> {
    let settings = ctx.settings()?;
    ctx.out.emit(&settings, |out, w| {
        let file = match &settings.config_file {
            Some(path) if settings.config_file_exists => path.display().to_string(),
            Some(path) => format!("{} (not there)", path.display()),
            None => "-".to_owned(),
        };
        output::fields(
            out,
            w,
            &[
                ("config file", file),
                ("profile", settings.profile.clone()),
                (
                    "base URL",
                    match (&settings.base_url, settings.base_url_from) {
                        (Some(url), Some(from)) => format!("{url} (from {from})"),
                        _ => "not set".to_owned(),
                    },
                ),
                (
                    "API key",
                    match (&settings.api_key_shown, settings.api_key_from) {
                        (Some(key), Some(from)) => format!("{key} (from {from})"),
                        _ => "not set".to_owned(),
                    },
                ),
            ],
        )
    })
}
