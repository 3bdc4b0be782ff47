#![doc = include_str!("../README.md")]

// Written by the generator from openapi/openapi.json; see openapi/README.md.
#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_debug_implementations, missing_docs, unused_qualifications, unused_imports)]
mod generated;

mod account;
mod batch;
mod billing;
mod catalog;
mod client;
mod clock;
mod download;
mod error;
mod events;
mod files;
mod generation;
mod generations;
mod limits;
mod open_enum;
mod options;
mod pagination;
mod rate_limit;
mod read;
mod request;
mod retry;
mod transport;
mod wait;
mod webhooks;

pub use account::Account;
pub use batch::{Batch, BatchEvent, BatchOutcome, BatchProgress};
pub use billing::{
    Billing, BillingOperationStatus, BillingOperationType, Currency, HistoryFilter, InvoiceStatus,
    TopupStatus,
};
pub use catalog::{Auth, Catalog, HealthStatus, ModelParameterType, ModelStatus, PriceUnit};
pub use client::{Client, ClientBuilder, ENV_API_KEY, ENV_BASE_URL};
pub use clock::{Clock, Sleep, TokioClock};
pub use download::{Download, DownloadBytes, DownloadTo};
pub use error::{ApiError, Error, ErrorCode, ErrorKind, FieldError, Result};
pub use events::{
    CompletedGeneration, Delivery, EventType, FailedGeneration, WebhookEvent, WebhookVerifier,
};
pub use files::{
    FileContentType, FileStatus, Files, Progress, Upload, UploadMethod, UploadedFile, output_paths,
};
pub use generated::types;
pub use generation::{
    FailureAdvice, FailureCode, Generation, GenerationFailure, GenerationStatus, MediaType,
};
pub use generations::{CreatedGeneration, GenerationFilter, GenerationRequest, Generations};
pub use limits::{LimitScope, RateLimit};
pub use options::{Call, RequestOptions};
pub use pagination::Page;
pub use request::RawResponse;
pub use retry::RetryPolicy;
pub use wait::{CreateAndWait, Wait, WaitOptions};
pub use webhooks::{
    CreatedWebhookEndpoint, DeliveryOutcome, DeliveryTrigger, EventTypeFilter, RotatedSecret,
    WebhookEndpointRequest, WebhookEndpointUpdate, WebhookEndpoints, WebhookSecret,
};

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

/// The code of the workspace's README, compiled and run against the mock as
/// this crate's doc-tests, so that no example there can rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct WorkspaceReadme;
