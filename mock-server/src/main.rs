//! `mediagen-mock`: the mock server as a program. Options, configuration file and
//! environment are read in `config.rs`; `serve` binds, prints the address and the
//! demo key, and serves until Ctrl-C or SIGTERM. `mediagen-mock judge -- COMMAND`
//! runs a test suite against a mock and exits by the verdict (`judge/`);
//! `mediagen-mock health` is a container's health check.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use mediagen_mock_server::judge::JudgeArgs;
use mediagen_mock_server::{Config, config::Options};

/// A reference mock of the media generation service, for tests and CI.
#[derive(Debug, Parser)]
#[command(
    name = "mediagen-mock",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// A TOML file of options (see config.default.toml for every option).
    #[arg(long, env = "MEDIAGEN_MOCK_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    options: Options,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    // Without a doc comment here: the help is `JudgeArgs`'s, the same in `mediagen mock judge`.
    Judge(Box<Judge>),
    Health(Health),
}

/// Exit 0 when the mock on this address answers GET /health within 2 s (a
/// container's health check: it needs no shell)
#[derive(Debug, Args)]
struct Health {
    /// The address the mock listens on; a wildcard one is asked on loopback.
    #[arg(
        long,
        env = "MEDIAGEN_MOCK_LISTEN",
        value_name = "ADDR",
        default_value = "127.0.0.1:8080"
    )]
    listen: std::net::SocketAddr,
}

// The serving options first and the judge's last, whose doc comment is the help.
#[derive(Debug, Args)]
#[command(mut_args = mediagen_mock_server::judge::serving_help)]
struct Judge {
    /// A TOML file of options (see config.default.toml for every option).
    #[arg(long, env = "MEDIAGEN_MOCK_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    options: Options,
    #[command(flatten)]
    judge: JudgeArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colours for a terminal only, not in a container's or CI's log.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Judge(judge)) => {
            let code = mediagen_mock_server::judge::run(
                judge.judge,
                judge.config.as_deref(),
                judge.options,
            )
            .await;
            return Ok(ExitCode::from(code));
        }
        Some(Command::Health(health)) => {
            mediagen_mock_server::check_health(health.listen).await?;
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    let config = Config::load(cli.config.as_deref(), cli.options)
        .context("while loading the configuration")?;
    mediagen_mock_server::serve(config).await?;
    Ok(ExitCode::SUCCESS)
}
