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
// `types` is the generated module with the 0.1.0 names of the records the SDK
// writes by hand beside it, deprecated; back to `generated::types` in 0.3.0.
pub use deprecated::types;
#[allow(deprecated)]
pub use deprecated::{Auth, Billing, Files, Generations, WebhookEndpoints};
/// The account that owns the API key (`GET /v1/account`).
pub use generated::types::Account;
/// The public catalogue of models (`GET /v1/catalog/`).
pub use generated::types::Catalog;
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
pub use options::RequestOptions;
pub use pagination::Page;
pub use progress::Progress;
pub use receiver::WebhookReceiver;
pub use request::RawResponse;
pub use retry::RetryPolicy;
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
/// let answer: mediagen::raw::ResponseValue<mediagen::types::Catalog> =
///     client.raw().list_catalog().send().await?;
/// assert!(!answer.models.is_empty());
/// # Ok(())
/// # }
/// ```
pub mod raw {
    pub use crate::generated::builder;
    pub use crate::generated::{ByteStream, Client, ClientInfo, Error, ResponseValue};
    pub use crate::transport::Transport;
}

/// The code of the workspace's README as this crate's doc-tests, so that no
/// example there can rot: each block compiled, and run unless it needs the
/// service (`no_run`), which `scripts/readme-check.py` runs against the mock.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct WorkspaceReadme;
