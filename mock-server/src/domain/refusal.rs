//! The refusals that are not the rule of one area: what the caller asked for
//! and does not have (404), what the state of a thing does not allow (409),
//! and input that breaks a rule, with the fields it breaks (400). Each area's
//! own refusals (`CreateRefusal`, `EndpointRefusal`, `BillingRefusal`, …) live
//! beside its rules; `refusal.rs` at the crate root turns every one of them
//! into the service's error envelope, once.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::contract::FieldError;

/// What the caller asked for and does not have: 404 `NOT_FOUND`. Another
/// user's resource is answered the same way (Authentication, rule 6).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    /// A world of the mock (`/worlds/{id}`), ended or never made.
    #[error("No world {0}; POST /_mock/worlds makes one")]
    World(String),
    /// A path the service does not have.
    #[error("No route for {method} {path}")]
    Route {
        /// The method asked.
        method: String,
        /// The path asked.
        path: String,
    },
    /// A path the service has, with a method it does not have.
    #[error("No route for {method} {path}; the Allow header lists the methods of this path")]
    Method {
        /// The method asked.
        method: String,
        /// The path asked.
        path: String,
    },
    /// An unknown `modelSlug` (rule 4 of `POST /v1/generations`).
    #[error("Model '{0}' not found; GET /v1/catalog/ lists the models")]
    Model(String),
    /// A generation, by the id as given.
    #[error("Generation {0} not found")]
    Generation(String),
    /// A webhook endpoint.
    #[error("Webhook endpoint {0} not found")]
    Endpoint(String),
    /// A message of an endpoint.
    #[error("Message {message} not found for endpoint {endpoint}")]
    Message {
        /// The endpoint.
        endpoint: String,
        /// The message (`webhook-id`).
        message: Uuid,
    },
    /// An input file, by id.
    #[error("File {0} not found")]
    File(Uuid),
    /// An input file's bytes, at its URL.
    #[error("No such file")]
    FileBytes,
    /// A file deleted after its upload URL was issued.
    #[error("The file was deleted")]
    DeletedFile,
    /// A result file.
    #[error("No such output file")]
    Output,
    /// An invoice.
    #[error("Invoice {0} not found")]
    Invoice(Uuid),
    /// The requisites, never set.
    #[error("No requisites are set; set them with PUT /v1/billing/requisites")]
    Requisites,
}

/// A request the state of a thing does not allow: 409 `CONFLICT_ERROR`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// A create with this `Idempotency-Key` is still running (rule 8).
    #[error("A request with this Idempotency-Key is still being executed; retry shortly")]
    KeyInFlight,
    /// Only a `PENDING` generation can be cancelled.
    #[error("Generation {id} is {status}; only a PENDING generation can be cancelled")]
    NotPending {
        /// The generation.
        id: Uuid,
        /// Its status.
        status: &'static str,
    },
    /// A test or a redelivery to a disabled endpoint.
    #[error("Webhook endpoint {0} is disabled; set active to true with PATCH to turn it back on")]
    EndpointDisabled(String),
    /// The closing act of an unpaid invoice.
    #[error("Invoice {0} is not paid yet; the closing act is issued after payment")]
    InvoiceUnpaid(String),
}

/// Input that breaks a rule: 400 `VALIDATION_ERROR` with the fields it breaks
/// (`details.fields[]`) and, for some rules, more details.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// `error.message`.
    pub message: String,
    /// One element per violation.
    pub fields: Vec<FieldError>,
    /// Details beside `fields`, such as `maxSizeBytes`.
    pub details: Option<Value>,
}

impl Invalid {
    /// `message`, with the violations `fields`.
    pub fn new(message: impl Into<String>, fields: Vec<FieldError>) -> Self {
        Self {
            message: message.into(),
            fields,
            details: None,
        }
    }

    /// One violation at `path`, whose text is also the message.
    pub fn field(path: impl Into<String>, keyword: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::new(
            message.clone(),
            vec![FieldError::new(path, keyword, message, json!({}))],
        )
    }

    /// A query parameter that cannot be read.
    pub fn query(name: &str, keyword: &str, message: impl Into<String>, params: Value) -> Self {
        Self::new(
            format!("Query parameter {name} is invalid"),
            vec![FieldError::new(
                format!("/query/{name}"),
                keyword,
                message,
                params,
            )],
        )
    }
}
