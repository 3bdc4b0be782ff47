//! Where the API key and the base URL come from: flags and environment first, then a
//! named profile of the config file. There is no default for either: the key goes
//! only to the host it was configured with.
//!
//! ```toml
//! default_profile = "work"
//!
//! [profiles.work]
//! api_key = "mg_live_…"
//! base_url = "https://media.example.com"
//!
//! [profiles.staging]
//! api_key = "mg_live_…"
//! base_url = "https://staging.example.com"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::cli::Global;
use crate::error::{Exit, Failure};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    default_profile: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    api_key: Option<String>,
    base_url: Option<String>,
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("base_url", &self.base_url)
            .finish()
    }
}

/// The settings in effect, and where each came from (`mediagen config`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub config_file: Option<PathBuf>,
    pub config_file_exists: bool,
    pub profile: String,
    pub base_url: Option<String>,
    pub base_url_from: Option<&'static str>,
    #[serde(skip)]
    pub api_key: Option<String>,
    /// The key as `mg_live_<public>_…`: enough to tell keys apart, never the secret.
    pub api_key_shown: Option<String>,
    pub api_key_from: Option<&'static str>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("profile", &self.profile)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key_shown)
            .finish_non_exhaustive()
    }
}

/// The config file's path: `--config`/`MEDIAGEN_CONFIG`, else the XDG location.
fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|home| home.join(".config")))?;
    Some(base.join("mediagen").join("config.toml"))
}

fn read(path: &Path) -> anyhow::Result<Option<File>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("while reading {}", path.display())),
    };
    let file = toml::from_str(&text).map_err(|err| {
        Failure::new(
            Exit::Usage,
            "CONFIG_ERROR",
            format!("{} is not a valid config file: {err}", path.display()),
        )
        .hint("see `mediagen config --help` for the format")
    })?;
    Ok(Some(file))
}

/// Resolves the settings from the flags, the environment and the config file.
pub fn resolve(global: &Global) -> anyhow::Result<Settings> {
    let explicit = global.config.is_some();
    let path = global.config.clone().or_else(default_path);
    let file = match &path {
        Some(path) => read(path)?,
        None => None,
    };
    if explicit && file.is_none() {
        let shown = path.as_deref().map(Path::display);
        return Err(Failure::new(
            Exit::Usage,
            "CONFIG_ERROR",
            format!(
                "the config file {} does not exist",
                shown.map(|p| p.to_string()).unwrap_or_default()
            ),
        )
        .into());
    }
    let exists = file.is_some();
    let file = file.unwrap_or_default();
    let named = global.profile.clone().or(file.default_profile.clone());
    let profile_name = named.clone().unwrap_or_else(|| "default".to_owned());
    let profile = match file.profiles.get(&profile_name) {
        Some(profile) => profile,
        // Asking for a profile by name and not finding it is a mistake; the implicit
        // "default" may well be absent.
        None if named.is_some() => {
            let known: Vec<&str> = file.profiles.keys().map(String::as_str).collect();
            return Err(Failure::new(
                Exit::Usage,
                "CONFIG_ERROR",
                format!("no profile `{profile_name}` in the config file"),
            )
            .hint(if known.is_empty() {
                "the config file has no profiles".to_owned()
            } else {
                format!("profiles: {}", known.join(", "))
            })
            .into());
        }
        None => &Profile::default(),
    };
    let (base_url, base_url_from) = match (&global.base_url, &profile.base_url) {
        (Some(url), _) => (Some(url.clone()), Some("--base-url or MEDIAGEN_BASE_URL")),
        (None, Some(url)) => (Some(url.clone()), Some("profile")),
        (None, None) => (None, None),
    };
    let (api_key, api_key_from) = match (&global.api_key, &profile.api_key) {
        (Some(key), _) => (Some(key.clone()), Some("--api-key or MEDIAGEN_API_KEY")),
        (None, Some(key)) => (Some(key.clone()), Some("profile")),
        (None, None) => (None, None),
    };
    Ok(Settings {
        config_file: path,
        config_file_exists: exists,
        profile: profile_name,
        base_url,
        base_url_from,
        api_key_shown: api_key.as_deref().map(shown_key),
        api_key,
        api_key_from,
    })
}

/// `mg_live_<public>_<secret>` shown as `mg_live_<public>_…`.
fn shown_key(key: &str) -> String {
    match key.rsplit_once('_') {
        Some((public, _)) if public.contains("_live_") => format!("{public}_…"),
        _ => "…".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_key_never_contains_the_secret() {
        assert_eq!(shown_key("mg_live_abc123_s3cr3t"), "mg_live_abc123_…");
        assert_eq!(shown_key("garbage"), "…");
        assert_eq!(shown_key("x_y"), "…");
    }
}
