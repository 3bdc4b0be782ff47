//! `mock`: the mock server's own options, plus `--port`.

#[cfg(feature = "mock")]
use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct MockArgs {
    /// Port on 127.0.0.1 (0 picks a free one); --listen chooses the address too
    #[cfg(feature = "mock")]
    #[arg(short, long, conflicts_with = "listen")]
    pub port: Option<u16>,
    /// A TOML file of options (see the mock server's config.default.toml)
    #[cfg(feature = "mock")]
    #[arg(
        long = "mock-config",
        env = "MEDIAGEN_MOCK_CONFIG",
        value_name = "FILE"
    )]
    pub config: Option<PathBuf>,
    #[cfg(feature = "mock")]
    #[command(flatten)]
    pub options: mediagen_mock_server::config::Options,
    /// Options of a mock this build does not have: taken so that the answer is where
    /// to get the mock, not an unknown flag.
    #[cfg(not(feature = "mock"))]
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ignored: Vec<String>,
}
