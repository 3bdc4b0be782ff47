//! `mediagen mcp`: the service as tools for AI agents (Model Context Protocol),
//! over stdio or streamable HTTP on loopback. The tools are in `tools.rs`, the
//! cap in `ledger.rs`, when two calls are one in `same_call.rs`, and the protocol
//! (the only user of `rmcp`) in `rmcp.rs`. See "For AI agents" in cli/README.md.
//! All of it comes with the default cargo feature `mcp`; a build without it is
//! smaller, and there `mediagen mcp` says so.

#[cfg(feature = "mcp")]
mod ledger;
#[cfg(feature = "mcp")]
mod rmcp;
#[cfg(feature = "mcp")]
mod same_call;
#[cfg(feature = "mcp")]
mod tools;

#[cfg(feature = "mcp")]
use std::sync::Arc;

#[cfg(feature = "mcp")]
use anyhow::Context as _;

#[cfg(feature = "mcp")]
use self::ledger::{Ledger, kopecks};
#[cfg(feature = "mcp")]
use self::tools::{Settings, Tools, VerdictFn};
use super::context::Context;
use crate::cli::mcp::McpArgs;
#[cfg(feature = "mcp")]
use crate::signal::Signals;

/// Refuses: this build has no MCP server.
#[cfg(not(feature = "mcp"))]
pub async fn run(_ctx: &Context, _args: McpArgs) -> anyhow::Result<()> {
    use crate::error::{Exit, Failure};
    Err(Failure::new(
        Exit::Usage,
        "MCP_NOT_BUILT",
        "this mediagen was built without the MCP server (the cargo feature `mcp` is off)",
    )
    .hint("install mediagen with the default features (`cargo install mediagen-cli`)")
    .into())
}

#[cfg(feature = "mcp")]
pub async fn run(ctx: &Context, args: McpArgs) -> anyhow::Result<()> {
    // Connected before the first call: a missing key or base URL is told now, on
    // stderr, and not as every tool's failure.
    let client = ctx.client().await?.clone();
    let output_dir = match &args.output_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("while creating --output-dir {}", dir.display()))?;
            // Absolute, so that resource links name the file wherever the client runs.
            Some(
                std::fs::canonicalize(dir)
                    .with_context(|| format!("while resolving --output-dir {}", dir.display()))?,
            )
        }
        None => None,
    };
    let settings = Settings {
        wait_limit: args.wait_limit,
        task_wait_limit: args.task_wait_limit,
        output_dir,
        embedded_mock: ctx.global().mock,
    };
    let ledger = Ledger::new(args.max_spend.map(kopecks), args.max_cost.map(kopecks));
    let tools = Arc::new(Tools::new(
        client,
        ctx.out.clone(),
        settings,
        ledger,
        verdict(ctx),
    ));
    let mut interrupt = Signals::interrupt_or_terminate()?;
    match args.listen {
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("while listening on {address}"))?;
            let address = listener.local_addr()?;
            ctx.out.note(format!(
                "mcp: serving streamable HTTP at http://{address}/mcp"
            ));
            rmcp::serve_http(tools, listener, async move { interrupt.recv().await }).await?;
        }
        None => {
            tokio::select! {
                served = rmcp::serve_stdio(tools) => served?,
                () = interrupt.recv() => {}
            }
        }
    }
    tell_verdict(ctx);
    Ok(())
}

/// The mock's verdict on this server's traffic, as the `mock_verdict` tool gives it.
#[cfg(all(feature = "mcp", feature = "mock"))]
fn verdict(ctx: &Context) -> Option<VerdictFn> {
    let world = ctx.embedded_world()?;
    Some(Arc::new(move || {
        serde_json::to_value(world.get_verdict()).unwrap_or_default()
    }))
}

#[cfg(all(feature = "mcp", not(feature = "mock")))]
fn verdict(_ctx: &Context) -> Option<VerdictFn> {
    None
}

/// With `--mock`, the verdict of the mock on everything this server sent, on stderr:
/// the server is judged like any client.
#[cfg(all(feature = "mcp", feature = "mock"))]
fn tell_verdict(ctx: &Context) {
    if let Some(world) = ctx.embedded_world() {
        ctx.out.note(format!(
            "mcp: the mock's verdict on this server's traffic: {}",
            world.get_verdict()
        ));
    }
}

#[cfg(all(feature = "mcp", not(feature = "mock")))]
fn tell_verdict(_ctx: &Context) {}
