//! `generate`, `get`, `list` and `cancel`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::parse::{self, Suggest};

#[derive(Debug, Subcommand)]
pub enum GenerationsCommands {
    /// Start a generation; with --wait, follow it to the end and print its results
    #[command(visible_alias = "gen", display_order = 1)]
    Generate(GenerateArgs),
    /// Show a generation; with --wait, follow it to the end
    #[command(display_order = 3)]
    Get(GetArgs),
    /// List generations, newest first
    #[command(visible_alias = "ls", display_order = 4)]
    List(ListArgs),
    /// Cancel a generation that is still PENDING; the reserved cost returns
    #[command(display_order = 5)]
    Cancel {
        /// Generation id
        #[arg(value_parser = parse::generation_id)]
        id: uuid::Uuid,
    },
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Model slug (see `mediagen models`)
    #[arg(short, long, value_name = "SLUG")]
    pub model: String,
    /// A model parameter, such as aspect_ratio=16:9
    ///
    /// VALUE is read as JSON when it parses (numbers, true), else as text.
    #[arg(short, long = "param", value_name = "KEY=VALUE", value_parser = parse::param)]
    pub params: Vec<(String, serde_json::Value)>,
    /// Upload a file as the model's input
    ///
    /// It is passed as the model's file parameter (image_file_id by default).
    #[arg(short, long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// The prompt; `-` reads it from stdin
    pub prompt: String,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Never start or charge twice for this key
    ///
    /// Running the command again with the same key returns the first generation
    /// [default: a new random key].
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// Show the cost and the balance; start nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Refuse to start above this cost in roubles
    #[arg(long, value_name = "RUB", value_parser = parse::amount, allow_hyphen_values = true)]
    pub max_cost: Option<f64>,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Wait until the generation ends
    ///
    /// A spinner on stderr shows its status, the time and the cost.
    #[arg(short, long)]
    pub wait: bool,
    /// Download the results into DIR (implies --wait)
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Stop waiting after this long, such as 90s
    ///
    /// Such as 90s, 10m or 1h30m; the generation goes on on the service.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    pub timeout: Option<Duration>,
}

impl WaitArgs {
    pub fn waits(&self) -> bool {
        self.wait || self.output.is_some()
    }
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// Generation id
    #[arg(value_parser = parse::generation_id)]
    pub id: uuid::Uuid,
    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only generations in this status
    #[arg(long, value_parser = Suggest::text(mediagen::GenerationStatus::KNOWN))]
    pub status: Option<String>,
    /// Only generations of this model
    #[arg(short, long, value_name = "SLUG")]
    pub model: Option<String>,
    /// At most this many
    #[arg(short = 'n', long, default_value_t = 20, conflicts_with = "all")]
    pub limit: usize,
    /// Every generation, page after page
    #[arg(long)]
    pub all: bool,
}
