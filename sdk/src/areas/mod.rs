//! The areas of the service, each a handle borrowed from a [`Client`] by the
//! accessor of the same name (`client.generations()`, `client.billing()`, …):
//! the operations of that area, typed.
//!
//! [`Client`]: crate::Client

pub(crate) mod account;
pub(crate) mod billing;
pub(crate) mod catalog;
pub(crate) mod files;
pub(crate) mod generations;
pub(crate) mod webhooks;

#[allow(deprecated)]
pub use crate::deprecated::{Account, Catalog};
pub use account::AccountArea;
pub use billing::Billing;
pub use catalog::{Auth, CatalogArea};
pub use files::Files;
pub use generations::Generations;
pub use webhooks::WebhookEndpoints;
