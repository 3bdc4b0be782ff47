//! `mcp`: the service as tools for AI agents, over the Model Context Protocol.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::parse;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at this loopback address (such as 127.0.0.1:8931; port 0
    /// picks a free one, told on stderr) instead of stdio
    #[arg(long, value_name = "ADDR", value_parser = parse::loopback)]
    pub listen: Option<SocketAddr>,
    /// Spend at most this many roubles over the server's lifetime: each generate is
    /// refused when its estimate, with what was charged and what is in flight, would
    /// pass it
    #[arg(long, value_name = "RUB", value_parser = parse::amount)]
    pub max_spend: Option<f64>,
    /// Refuse any single generation whose estimate is above this many roubles
    #[arg(long, value_name = "RUB", value_parser = parse::amount)]
    pub max_cost: Option<f64>,
    /// Save the results of each generate here, under names the server makes
    /// (`<generation id>-<n>.<ext>`), and return them as resource links
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// How long a tool call waits for a generation before it returns the id and how to
    /// resume, such as 90s or 10m (0 returns at once after the create)
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse::duration)]
    pub wait_limit: Duration,
}
