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
use crate::cli::config::ConfigKey;
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
    Ok(read_text(path)?.map(|(file, _)| file))
}

/// The file and its text, checked; `None` when there is no file.
fn read_text(path: &Path) -> anyhow::Result<Option<(File, String)>> {
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
    Ok(Some((file, text)))
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
    let (profile_name, named) = profile_name(global, &file);
    let profile = match file.profiles.get(&profile_name) {
        Some(profile) => profile,
        // Asking for a profile by name and not finding it is a mistake; the implicit
        // "default" may well be absent.
        None if named => {
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

/// The profile in use: `--profile`/`MEDIAGEN_PROFILE`, else the file's
/// `default_profile`, else "default"; and whether it was named.
fn profile_name(global: &Global, file: &File) -> (String, bool) {
    match global.profile.clone().or(file.default_profile.clone()) {
        Some(name) => (name, true),
        None => ("default".to_owned(), false),
    }
}

/// The config file's path, or a usage error when there is no place for one.
fn path_or_refuse(global: &Global) -> anyhow::Result<PathBuf> {
    global.config.clone().or_else(default_path).ok_or_else(|| {
        Failure::new(
            Exit::Usage,
            "CONFIG_ERROR",
            "there is no place for a config file: neither HOME nor XDG_CONFIG_HOME is set",
        )
        .hint("pass --config FILE or set MEDIAGEN_CONFIG")
        .into()
    })
}

/// A value of the config file as it is there, and the profile it was read from.
pub fn get(global: &Global, key: ConfigKey) -> anyhow::Result<(String, Option<String>)> {
    let path = path_or_refuse(global)?;
    let file = read(&path)?.unwrap_or_default();
    let (name, _) = profile_name(global, &file);
    let profile = file.profiles.get(&name);
    let value = match key {
        ConfigKey::DefaultProfile => file.default_profile.clone(),
        ConfigKey::BaseUrl => profile.and_then(|p| p.base_url.clone()),
        ConfigKey::ApiKey => profile.and_then(|p| p.api_key.as_deref().map(shown_key)),
    };
    Ok((name, value))
}

/// Where [`set`] wrote.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Written {
    pub config_file: PathBuf,
    pub profile: String,
}

/// Sets values in the profile in use (`default_profile` at the top), keeping the
/// file's comments and layout. The file is written whole beside the old one and then
/// renamed over it, so a failure never leaves half a file.
pub fn set(global: &Global, values: &[(ConfigKey, &str)]) -> anyhow::Result<Written> {
    let path = path_or_refuse(global)?;
    let (file, text) = read_text(&path)?.unwrap_or_default();
    let (profile, _) = profile_name(global, &file);
    // The text parsed as a config file just now, so it parses as TOML.
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("while reading {}", path.display()))?;
    for (key, value) in values {
        check(*key, value)?;
        let value = toml_edit::value(*value);
        match key {
            ConfigKey::DefaultProfile => doc["default_profile"] = value,
            ConfigKey::ApiKey | ConfigKey::BaseUrl => {
                let profiles = doc["profiles"].or_insert(toml_edit::table());
                // `[profiles.work]` rather than an empty `[profiles]` above it.
                if let Some(table) = profiles.as_table_mut() {
                    table.set_implicit(true);
                }
                let section = &mut profiles[profile.as_str()];
                if section.is_none() {
                    *section = toml_edit::table();
                }
                section[key.name().as_str()] = value;
            }
        }
    }
    write_private(&path, doc.to_string().as_bytes())?;
    Ok(Written {
        config_file: path,
        profile,
    })
}

/// Refuses a value the file could not use.
pub fn check(key: ConfigKey, value: &str) -> anyhow::Result<()> {
    let refuse = |why: &str| {
        Failure::new(
            Exit::Usage,
            "INVALID_VALUE",
            format!("{}: {why}", key.name()),
        )
    };
    match key {
        ConfigKey::BaseUrl => {
            let url = url::Url::parse(value)
                .map_err(|err| refuse(&format!("`{value}` is not a URL: {err}")))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(refuse(&format!("`{value}` is not an http or https URL")).into());
            }
        }
        ConfigKey::ApiKey if value.is_empty() || value.contains(char::is_whitespace) => {
            return Err(refuse("an API key is one word, without spaces").into());
        }
        ConfigKey::DefaultProfile if value.is_empty() => {
            return Err(refuse("a profile needs a name").into());
        }
        _ => {}
    }
    Ok(())
}

/// Writes `bytes` to `path` through a file beside it that only its owner can read
/// (tempfile creates it so), renamed over `path` once complete.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .with_context(|| format!("while creating {}", dir.display()))?;
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("while writing in {}", dir.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .with_context(|| format!("while writing {}", file.path().display()))?;
    file.persist(path)
        .with_context(|| format!("while writing {}", path.display()))?;
    Ok(())
}

/// `mg_live_<public>_<secret>` shown as `mg_live_<public>_…`.
pub fn shown_key(key: &str) -> String {
    // Cut at the first `_` after `_live_`, so a secret holding `_` stays whole.
    let parts = key
        .split_once("_live_")
        .and_then(|(prefix, rest)| Some((prefix, rest.split_once('_')?.0)));
    match parts {
        Some((prefix, public)) => format!("{prefix}_live_{public}_…"),
        None => "…".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_key_never_contains_the_secret() {
        assert_eq!(shown_key("mg_live_abc123_s3cr3t"), "mg_live_abc123_…");
        assert_eq!(shown_key("mg_live_abc123_s3_cr3t"), "mg_live_abc123_…");
        assert_eq!(shown_key("garbage"), "…");
        assert_eq!(shown_key("x_y"), "…");
    }
}
