//! `balance`, `history`, `topup` and `invoices`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::parse::{self, Suggest};

#[derive(Debug, Subcommand)]
pub enum BillingCommands {
    /// The balance: available and reserved
    #[command(display_order = 7)]
    Balance,
    /// Billing history: top-ups, generation charges and refunds, adjustments
    #[command(display_order = 8)]
    History(HistoryArgs),
    /// Start a card top-up and print the payment link
    #[command(display_order = 11)]
    Topup {
        /// Amount in roubles
        #[arg(value_parser = parse::amount, allow_hyphen_values = true)]
        amount: f64,
        /// Where the payment page sends the user back to
        #[arg(long, value_name = "URL")]
        return_url: Option<String>,
    },
    /// Invoices for bank transfer: list, create, and their PDF documents
    #[command(subcommand, display_order = 12)]
    Invoices(InvoicesCommand),
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only operations of this type
    #[arg(long = "type", value_name = "TYPE",
          value_parser = Suggest::text(mediagen::BillingOperationType::KNOWN))]
    pub kind: Option<String>,
    /// From this time (RFC 3339, such as 2026-11-01T00:00:00Z)
    #[arg(long, value_name = "TIME", value_parser = parse::time)]
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    /// Up to this time (RFC 3339)
    #[arg(long, value_name = "TIME", value_parser = parse::time)]
    pub to: Option<chrono::DateTime<chrono::Utc>>,
    /// At most this many
    #[arg(short = 'n', long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Debug, Subcommand)]
pub enum InvoicesCommand {
    /// List invoices, newest first
    List,
    /// Issue an invoice for a bank transfer (needs requisites on the account)
    Create {
        /// Amount in roubles
        #[arg(value_parser = parse::amount, allow_hyphen_values = true)]
        amount: f64,
    },
    /// Save the invoice as PDF
    Pdf(DocumentArgs),
    /// Save the closing act of a paid invoice as PDF
    Act(DocumentArgs),
}

#[derive(Debug, Args)]
pub struct DocumentArgs {
    /// Invoice id
    #[arg(value_parser = parse::invoice_id)]
    pub id: uuid::Uuid,
    /// The file to write [default: invoice-<ID>.pdf or act-<ID>.pdf]; `-` writes to stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
