use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use mediagen_mock_server::{AppState, Config, config::Options};

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
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("while binding {}", config.listen))?;
    let addr = listener.local_addr()?;
    let state = AppState::new(config);
    println!("mediagen-mock listening on http://{addr}");
    println!("demo API key: {}", state.demo_api_key());
    println!(
        "try: curl -H 'Authorization: Bearer {}' http://{addr}/v1/generations",
        state.demo_api_key()
    );
    mediagen_mock_server::run(state, listener, shutdown_signal())
        .await
        .context("while serving")
}

/// Ctrl-C or SIGTERM: stop accepting, finish the requests in flight, exit.
async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
