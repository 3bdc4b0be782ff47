//! `balance`, `history`, `topup`, `invoices` and `requisites`.

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
    /// The legal entity invoices are made out to: show or set its requisites
    #[command(display_order = 13)]
    Requisites(RequisitesArgs),
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
    /// Issue an invoice for a bank transfer (needs the requisites: `mediagen requisites set`)
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

#[derive(Debug, Args)]
pub struct RequisitesArgs {
    #[command(subcommand)]
    pub command: Option<RequisitesCommand>,
}

#[derive(Debug, Subcommand)]
pub enum RequisitesCommand {
    /// Set or replace the requisites, from flags, a JSON file, or both
    ///
    /// The service issues invoices only once they are set. They are replaced whole:
    /// give every one the service requires, as flags or as the keys of a JSON file
    /// (`mediagen requisites --json` writes one), a flag winning over its key. The
    /// INN, the OGRN and the two accounts carry check digits, which the service
    /// checks, the accounts against the BIC.
    ///
    ///   mediagen requisites set --legal-name 'OOO "Romashka Media"' \
    ///     --inn 7712345671 --kpp 771201001 --ogrn 1027700123450 \
    ///     --legal-address '123112, Moscow, Presnenskaya emb. 12, office 401' \
    ///     --bank-name 'AO "Example Bank"' --bic 044525987 \
    ///     --settlement-account 40702810500000012345 \
    ///     --correspondent-account 30101810900000000987
    ///   mediagen requisites set --file requisites.json --email accounting@example.com
    #[command(verbatim_doc_comment)]
    Set(Box<RequisitesSetArgs>),
}

#[derive(Debug, Args)]
pub struct RequisitesSetArgs {
    /// A JSON object of them; `-` reads stdin
    ///
    /// Its keys are the contract's: legalName, inn, kpp, ogrn, legalAddress,
    /// postalAddress, bankName, bic, settlementAccount, correspondentAccount and
    /// email, each a text or null; a flag wins over its key.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub fields: RequisitesFields,
}

/// The requisites as flags, each also a key of `--file`: `RequisitesInput` of the
/// contract. They are checked together once read (`cmd/requisites.rs`), so that a
/// value from the file and one from a flag are told alike.
#[derive(Debug, Args, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequisitesFields {
    /// Full legal name [required]
    ///
    /// Of the organisation or the sole proprietor, as registered [required].
    #[arg(long, value_name = "NAME")]
    pub legal_name: Option<String>,
    /// 10 or 12 digits [required]
    ///
    /// INN: 10 digits for an organisation, 12 for a sole proprietor; its check digits
    /// are checked [required].
    #[arg(long)]
    pub inn: Option<String>,
    /// 9 digits; organisations only
    ///
    /// KPP: 9 digits, for an organisation (a 10-digit INN), which needs one; a sole
    /// proprietor has none.
    #[arg(long)]
    pub kpp: Option<String>,
    /// 13 digits, 15 for an OGRNIP [required]
    ///
    /// OGRN: 13 digits, or a sole proprietor's OGRNIP, 15 digits; its check digit is
    /// checked [required].
    #[arg(long)]
    pub ogrn: Option<String>,
    /// Registered address [required]
    #[arg(long, value_name = "TEXT")]
    pub legal_address: Option<String>,
    /// Postal address, if another
    ///
    /// Postal address, when it differs from the registered one.
    #[arg(long, value_name = "TEXT")]
    pub postal_address: Option<String>,
    /// Name of the bank [required]
    #[arg(long, value_name = "NAME")]
    pub bank_name: Option<String>,
    /// 9 digits starting 04 [required]
    ///
    /// BIC of the bank: 9 digits starting 04 [required].
    #[arg(long)]
    pub bic: Option<String>,
    /// 20 digits [required]
    ///
    /// Settlement account: 20 digits, whose control key is checked against the BIC
    /// [required].
    #[arg(long, value_name = "N")]
    pub settlement_account: Option<String>,
    /// 20 digits starting 301 [required]
    ///
    /// Correspondent account of the bank: 20 digits starting 301, whose control key
    /// is checked against the BIC [required].
    #[arg(long, value_name = "N")]
    pub correspondent_account: Option<String>,
    /// For invoices and closing acts
    ///
    /// The e-mail address invoices and closing acts are sent to.
    #[arg(long, value_name = "ADDRESS")]
    pub email: Option<String>,
}
