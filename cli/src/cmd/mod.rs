//! One module per noun; each `run` takes its parsed arguments and the context.

mod account;
mod api;
mod batch;
mod billing;
mod config;
mod context;
mod files;
mod generations;
#[cfg(feature = "mock")]
mod logs;
mod mcp;
mod mock;
mod mock_control;
mod models;
mod requisites;
mod webhooks;

use clap::CommandFactory;

use self::context::Context;
use crate::cli::{Cli, Command};
use crate::output::Output;
use crate::verbose;

/// Runs the command of `cli`, telling what it does through `out`.
pub fn run(cli: Cli, out: &Output) -> anyhow::Result<()> {
    verbose::install(cli.global.verbose, out)?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        // Made and dropped inside the runtime: the embedded mock's server runs on it.
        let ctx = Context::new(cli.global, out.clone());
        dispatch(&ctx, cli.command).await
    })
}

async fn dispatch(ctx: &Context, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Generations(command) => generations::run(ctx, command).await,
        Command::Batch(args) => batch::run(ctx, args).await,
        Command::Models { slug } => models::run(ctx, slug).await,
        Command::Billing(command) => billing::run(ctx, command).await,
        Command::Account(command) => account::run(ctx, command).await,
        Command::Files(command) => files::run(ctx, command).await,
        Command::Webhooks(command) => webhooks::run(ctx, command).await,
        // Reads a running mock, as a client: with the context, unlike the mock itself.
        #[cfg(feature = "mock")]
        Command::Mock(crate::cli::mock::MockArgs {
            command: Some(crate::cli::mock::MockCommand::Logs(args)),
            ..
        }) => logs::run(ctx, args).await,
        Command::Mock(args) => mock::run(args).await,
        Command::Mcp(args) => mcp::run(ctx, args).await,
        Command::Api(args) => api::run(ctx, args).await,
        Command::Config(command) => config::run(ctx, command).await,
        Command::Completions { shell } => {
            // Written whole and then printed, so a closed pipe is an error and not a panic.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "mediagen", &mut script);
            ctx.out.bytes(&script)
        }
    }
}
