//! `account` and `summary`.

use clap::{Args, Subcommand};

use crate::parse;

#[derive(Debug, Subcommand)]
pub enum AccountCommands {
    /// The account that owns the API key
    #[command(display_order = 9)]
    Account,
    /// Spending and generations, for a period
    #[command(display_order = 10)]
    Summary(SummaryArgs),
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// From this time (RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = parse::time)]
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    /// Up to this time (RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = parse::time)]
    pub to: Option<chrono::DateTime<chrono::Utc>>,
}
