//! What every command gets: the output, the settings, the client, and with
//! `--mock` the embedded mock.

use mediagen::Client;
use tokio::sync::OnceCell;

use super::mock;
use crate::cli::Global;
use crate::config::Settings;
use crate::error::{Exit, Failure};
use crate::output::Output;

/// What every command gets: the output, and on first use the settings, the client
/// and (with `--mock`) the embedded mock.
#[derive(Debug)]
pub struct Context {
    pub out: Output,
    global: Global,
    client: OnceCell<Client>,
    // Kept alive for the whole command; its server stops when the context drops.
    mock: mock::Embedded,
}

impl Context {
    pub fn new(global: Global, out: Output) -> Self {
        Self {
            out,
            global,
            client: OnceCell::new(),
            mock: mock::Embedded::default(),
        }
    }

    /// The settings in effect: flags, environment, profile.
    pub fn settings(&self) -> anyhow::Result<Settings> {
        crate::config::resolve(&self.global)
    }

    /// The client of the service, or of the embedded mock.
    pub async fn client(&self) -> anyhow::Result<&Client> {
        self.client.get_or_try_init(|| self.connect(true)).await
    }

    /// A client for the public operations (the catalog): with the key when one is
    /// set, without one otherwise.
    pub async fn public_client(&self) -> anyhow::Result<Client> {
        match self.client.get() {
            Some(client) => Ok(client.clone()),
            None => self.connect(false).await,
        }
    }

    async fn connect(&self, key_required: bool) -> anyhow::Result<Client> {
        let (base_url, api_key) = if self.global.mock {
            let (base_url, api_key) = self.mock.connect().await?;
            (base_url, Some(api_key))
        } else {
            let settings = self.settings()?;
            let base_url = Self::base_url_of(&settings)?;
            let key = match (settings.api_key, key_required) {
                (Some(key), _) => Some(key),
                (None, false) => None,
                (None, true) => {
                    return Err(Failure::new(
                        Exit::Authentication,
                        mediagen::ErrorCode::AuthenticationError.as_str(),
                        "no API key is set",
                    )
                    .hint(
                        "set MEDIAGEN_API_KEY, pass --api-key, or add api_key to a profile of the \
                         config file (`mediagen config` shows where it is); add --mock to try the \
                         command against a local mock",
                    )
                    .into());
                }
            };
            (base_url, key)
        };
        self.client_at(base_url, api_key)
    }

    /// The base URL the user configured: no host is assumed, so that a key goes
    /// only where the user said.
    pub fn base_url(&self) -> anyhow::Result<String> {
        Self::base_url_of(&self.settings()?)
    }

    /// The address of the mock a control call goes to: the embedded one with
    /// `--mock`, else the configured base URL (a mock's, or a world's).
    pub async fn mock_base_url(&self) -> anyhow::Result<String> {
        if self.global.mock {
            return Ok(self.mock.connect().await?.0);
        }
        self.base_url()
    }

    fn base_url_of(settings: &Settings) -> anyhow::Result<String> {
        let config_file = settings.config_file.as_ref().map_or_else(
            || "see `mediagen config`".to_owned(),
            |path| path.display().to_string(),
        );
        settings.base_url.clone().ok_or_else(|| {
            Failure::new(
                Exit::Usage,
                "CONFIGURATION_ERROR",
                "no base URL is set: the service's address is not built in",
            )
            .hint(format!(
                "pass --base-url URL, set MEDIAGEN_BASE_URL, or add base_url to a profile of \
                 the config file ({config_file}); add --mock to try the command against a \
                 local mock"
            ))
            .into()
        })
    }

    /// A client of the service at `base_url`, with this command's retry policy.
    pub fn client_at(&self, base_url: String, api_key: Option<String>) -> anyhow::Result<Client> {
        let mut builder = Client::builder().base_url(base_url);
        if let Some(api_key) = api_key {
            builder = builder.api_key(api_key);
        }
        Ok(builder
            .user_agent(concat!("mediagen-cli/", env!("CARGO_PKG_VERSION")))
            .retry_policy(mediagen::RetryPolicy::default().max_attempts(self.global.max_attempts))
            .build()?)
    }

    /// The embedded mock's world, when `--mock` started one.
    #[cfg(all(feature = "mock", feature = "mcp"))]
    pub fn embedded_world(&self) -> Option<mediagen_mock_server::World> {
        self.mock.world()
    }

    /// The global options: where the config file is, which profile.
    pub fn global(&self) -> &Global {
        &self.global
    }

    /// `mediagen <args>` with the same connection options, for hints.
    pub fn command(&self, args: &str) -> String {
        if self.global.mock {
            format!("mediagen --mock {args}")
        } else {
            format!("mediagen {args}")
        }
    }
}
