//! `batch` and `batch status`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::parse;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BatchArgs {
    #[command(subcommand)]
    pub command: Option<BatchCommand>,
    #[command(flatten)]
    pub run: BatchRunArgs,
}

#[derive(Debug, Subcommand)]
pub enum BatchCommand {
    /// How many lines of a manifest are in each state, from its journal
    Status {
        /// The manifest
        manifest: PathBuf,
        /// The journal [default: MANIFEST.journal]
        #[arg(long, value_name = "PATH")]
        state: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct BatchRunArgs {
    /// The manifest; - reads it from stdin (then --state is required)
    #[arg(required = true)]
    pub manifest: Option<PathBuf>,
    /// The model of lines that name none
    ///
    /// See `mediagen models`.
    #[arg(short, long, value_name = "SLUG")]
    pub model: Option<String>,
    /// A parameter for every line
    ///
    /// A line's own params win; VALUE is read as JSON when it parses, else as text.
    #[arg(short, long = "param", value_name = "KEY=VALUE", value_parser = parse::param)]
    pub params: Vec<(String, serde_json::Value)>,
    /// Download each result into DIR as it ends
    ///
    /// As the line's "output", else LINE-ID-N.EXT, N counting from 1. Without -o,
    /// only the lines that name an "output" are saved, in the current directory.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Generations active at once
    ///
    /// The service allows 5 active generations per user.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub max_active: u16,
    /// Stop creating before the reserved total passes this
    ///
    /// In roubles; each create is priced first. What was left out is told, and the
    /// exit code is 4.
    #[arg(long, value_name = "RUB", value_parser = parse::amount, allow_hyphen_values = true)]
    pub max_cost: Option<f64>,
    /// The journal [default: MANIFEST.journal]
    ///
    /// The results go beside it, in MANIFEST.results.jsonl (or PATH.results.jsonl).
    #[arg(long, value_name = "PATH")]
    pub state: Option<PathBuf>,
    // The webhook options are in --help only: -h stays within a screen.
    /// Receive the service's webhooks at ADDR: each wait ends on its event
    ///
    /// HOST:PORT, such as 127.0.0.1:8787 (port 0 picks a free one). Each
    /// generation's wait ends on its verified generation.completed or
    /// generation.failed, with a slow read left in case a delivery is lost.
    #[arg(
        long,
        value_name = "ADDR",
        help_heading = "Webhooks",
        hide_short_help = true
    )]
    pub listen: Option<String>,
    /// With --listen: the URL that reaches ADDR from the service
    ///
    /// A tunnel's public URL [default: http://ADDR/]. Without --webhook-secret the
    /// batch registers an endpoint for it for the run, and deletes it at the end.
    #[arg(
        long,
        value_name = "URL",
        requires = "listen",
        help_heading = "Webhooks",
        hide_short_help = true
    )]
    pub webhook_url: Option<url::Url>,
    /// With --listen: the secret of an endpoint you registered for the URL
    ///
    /// The batch uses that endpoint and registers none.
    #[arg(
        long,
        value_name = "WHSEC",
        requires = "listen",
        help_heading = "Webhooks",
        hide_short_help = true
    )]
    pub webhook_secret: Option<String>,
}
