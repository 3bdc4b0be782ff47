//! `mcp`: the service as tools for AI agents, over the Model Context Protocol.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::parse;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at this loopback address instead of stdio
    ///
    /// Such as 127.0.0.1:8931, at /mcp; port 0 picks a free one, told on stderr.
    #[arg(long, value_name = "ADDR", value_parser = parse::loopback)]
    pub listen: Option<SocketAddr>,
    /// Spend at most this many roubles over the server's lifetime
    ///
    /// Each generate is refused when its estimate, with what was charged and what is in
    /// flight, would pass it.
    #[arg(long, value_name = "RUB", value_parser = parse::amount)]
    pub max_spend: Option<f64>,
    /// Refuse any generation whose estimate is above this many roubles
    #[arg(long, value_name = "RUB", value_parser = parse::amount)]
    pub max_cost: Option<f64>,
    /// Save results here and return them as resource links
    ///
    /// Under names the server makes: `<generation id>-<n>.<ext>`.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// How long a held-open call waits for a generation
    ///
    /// Then it answers with how to resume. Such as 90s or 10m; 0s returns at once
    /// after the create.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse::duration)]
    pub wait_limit: Duration,
    /// How long a call run as an MCP task waits
    ///
    /// For clients that support tasks (the io.modelcontextprotocol/tasks extension): they
    /// poll the task instead of holding the call open. The task is kept 10 minutes
    /// longer, so its answer can be read.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse::duration)]
    pub task_wait_limit: Duration,
}
