#![doc = include_str!("../README.md")]
// docs.rs builds with `--cfg docsrs` and all features: each item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Written by the generator from openapi/openapi.json; see openapi/README.md.
#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_debug_implementations, missing_docs, unused_qualifications, unused_imports)]
mod generated;

pub mod areas;
mod batch;
mod bridge;
mod call;
mod client;
mod clock;
mod deprecated;
mod download;
mod error;
mod events;
mod generation_request;
mod host;
mod hub;
mod journal;
mod limits;
mod model;
mod open_enum;
mod operation;
mod options;
mod pagination;
mod progress;
mod rate_limit;
mod read;
mod receiver;
mod request;
mod retry;
mod roots;
mod side_channel;
mod timing;
mod transport;
mod wait;

pub use areas::billing::HistoryFilter;
pub use areas::files::{Upload, output_paths};
pub use areas::webhooks::{WebhookEndpointRequest, WebhookEndpointUpdate};
pub use batch::{Batch, BatchEvent, BatchOutcome, BatchProgress};
pub use call::Call;
pub use client::{Client, ClientBuilder, ENV_API_KEY, ENV_BASE_URL, ENV_SHARED_PACE};
pub use clock::{Clock, Sleep, TokioClock};
pub use download::{Download, DownloadBytes, DownloadTo};
pub use error::{ApiError, Error, ErrorCode, ErrorKind, FieldError, Result};
pub use events::{
    CompletedGeneration, Delivery, EventType, FailedGeneration, WebhookEvent, WebhookVerifier,
};
// `types` is the 0.1.0 path of the generated records, deprecated with the 0.1.0
// names of the records the SDK writes by hand; it goes in 0.3.0.
#[allow(deprecated)]
pub use deprecated::types;
#[allow(deprecated)]
pub use deprecated::{Auth, Billing, Files, Generations, WebhookEndpoints};
// Every record of the contract that the generator writes (`Invoice`, `Account`,
// `Catalog`, …), beside the ones written by hand above and below: one namespace
// for records. An item of the root's own never shares a name with one of these
// (a test in this file checks it), so the glob hides none.
pub use generated::records::*;
pub use generation_request::{CreatedGeneration, GenerationFilter, GenerationRequest};
#[cfg(feature = "journal")]
pub use journal::SqliteJournal;
pub use journal::{Journal, JournalEntry, item_names};
pub use limits::{LimitScope, RateLimit};
pub use model::billing::{
    BillingOperationStatus, BillingOperationType, Currency, InvoiceStatus, TopupStatus,
};
pub use model::catalog::{HealthStatus, ModelParameterType, ModelStatus, PriceUnit};
pub use model::file::{FileContentType, FileStatus, UploadMethod, UploadedFile};
pub use model::generation::{
    FailureAdvice, FailureCode, Generation, GenerationFailure, GenerationStatus, MediaType,
};
pub use model::webhook::{
    CreatedWebhookEndpoint, DeliveryOutcome, DeliveryTrigger, EventTypeFilter, RotatedSecret,
    WebhookSecret,
};
pub use operation::OperationId;
pub use options::RequestOptions;
pub use pagination::Page;
pub use progress::Progress;
pub use receiver::WebhookReceiver;
pub use request::RawResponse;
pub use retry::RetryPolicy;
pub use roots::build_http_client;
pub use wait::{CreateAndWait, Wait, WaitOptions};
#[cfg(feature = "inbox")]
pub use webhook_inbox;

/// The generated client underneath [`Client`], for what the hand-written layer does
/// not cover. Its requests pass through the same [`Transport`](raw::Transport):
/// authentication, `Idempotency-Key`, pacing and retries.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let mock = mediagen_mock_server::MockServer::start().await;
/// let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// let answer: mediagen::raw::ResponseValue<mediagen::Catalog> =
///     client.raw().list_catalog().send().await?;
/// assert!(!answer.models.is_empty());
/// # Ok(())
/// # }
/// ```
pub mod raw {
    /// The generated client: [`Client::raw`](crate::Client::raw) gives it.
    pub use crate::generated::Client as GeneratedClient;
    /// The error of a generated call.
    pub use crate::generated::Error as GeneratedError;
    pub use crate::generated::builder;
    /// The builders of the contract's records (`Invoice::builder()` gives one).
    pub use crate::generated::types::builder as record_builders;
    /// The error of a record's conversion from its builder or from text.
    pub use crate::generated::types::error::ConversionError;
    pub use crate::generated::{ByteStream, ClientInfo, ResponseValue};
    pub use crate::transport::Transport;

    /// The generated client, by its 0.1.0 name: [`GeneratedClient`].
    #[deprecated(
        since = "0.2.0",
        note = "renamed `mediagen::raw::GeneratedClient` (`mediagen::Client` is the SDK's client); this alias goes in 0.3.0"
    )]
    pub type Client = GeneratedClient;

    /// The error of a generated call, by its 0.1.0 name: [`GeneratedError`].
    #[deprecated(
        since = "0.2.0",
        note = "renamed `mediagen::raw::GeneratedError` (`mediagen::Error` is the SDK's error); this alias goes in 0.3.0"
    )]
    pub type Error<E = ()> = GeneratedError<E>;
}

/// The code of the workspace's README as this crate's doc-tests, so that no
/// example there can rot: each block compiled, and run unless it needs the
/// service (`no_run`), which `scripts/readme-check.py` runs against the mock.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct WorkspaceReadme;

#[cfg(test)]
mod tests {
    /// The last name of each path of `pub use` lines (`a::{B, C as D}` gives `B`
    /// and `D`), or of `pub mod` lines; globs give none.
    fn public_names(source: &str) -> Vec<String> {
        let mut names = Vec::new();
        for statement in source.split("pub use ").skip(1) {
            let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
            let list = match (statement.find('{'), statement.rfind('}')) {
                (Some(open), Some(close)) => &statement[open + 1..close],
                _ => statement,
            };
            for path in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let name = path.rsplit(" as ").next().unwrap_or(path);
                let name = name.rsplit("::").next().unwrap_or(name).trim();
                if name != "*" {
                    names.push(name.to_owned());
                }
            }
        }
        for line in source.lines() {
            if let Some(module) = line.strip_prefix("pub mod ") {
                names.push(module.trim_end_matches([' ', '{', ';']).to_owned());
            }
        }
        names
    }

    #[test]
    fn no_generated_record_is_hidden_by_a_name_of_the_root() {
        let generated = include_str!("generated.rs");
        let records = &generated[generated.find("pub mod records").expect("records")..];
        let records = &records[..records.find("pub mod deprecated_types").expect("aliases")];
        let records = public_names(records);
        assert!(records.contains(&"Invoice".to_owned()), "{records:?}");
        // The root's own names: those before its first module of items of its own.
        let root = include_str!("lib.rs");
        let root = &root[..root.find("pub mod raw {").expect("raw")];
        let taken: Vec<String> = public_names(root)
            .into_iter()
            .filter(|name| records.contains(name))
            .collect();
        assert!(taken.is_empty(), "the root hides these records: {taken:?}");
    }
}
