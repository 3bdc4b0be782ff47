//! `mediagen-mock`: the mock server as a program. Options, configuration file and
//! environment are read in `config.rs`; `serve` binds, prints the address and the
//! demo key, and serves until Ctrl-C or SIGTERM.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use mediagen_mock_server::{Config, config::Options};

/// A reference mock of the media generation service, for tests and CI.
#[derive(Debug, Parser)]
#[command(name = "mediagen-mock", version, about)]
struct Cli {
    /// A TOML file of options (see config.default.toml for every option).
    #[arg(long, env = "MEDIAGEN_MOCK_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    options: Options,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let config = Config::load(cli.config.as_deref(), cli.options)
        .context("while loading the configuration")?;
    mediagen_mock_server::serve(config).await
}
