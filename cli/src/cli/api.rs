//! `api METHOD PATH`.

use std::path::PathBuf;

use clap::Args;

use crate::parse;

#[derive(Debug, Args)]
pub struct ApiArgs {
    /// The HTTP method
    #[arg(value_parser = parse::method())]
    pub method: reqwest::Method,
    /// A path of the service, with its query if any, such as /v1/catalog/; never a URL,
    /// since the key goes only to the configured base URL
    #[arg(value_parser = parse::service_path)]
    pub path: String,
    /// A field of the JSON body (for GET, a query parameter); VALUE is read as JSON when it
    /// parses, else as text; `a.b=1` sets b inside object a
    #[arg(short, long = "field", value_name = "KEY=VALUE", value_parser = parse::param)]
    pub fields: Vec<(String, serde_json::Value)>,
    /// Send this file's JSON as the body; `-` reads it from stdin
    #[arg(long, value_name = "FILE", conflicts_with = "fields")]
    pub input: Option<PathBuf>,
    /// A header to send too, such as "Idempotency-Key: order-17"
    #[arg(short = 'H', long = "header", value_name = "NAME:VALUE", value_parser = parse::header)]
    pub headers: Vec<(String, String)>,
}
