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

pub use account::AccountArea;
pub use billing::Billing;
pub use catalog::{Auth, CatalogArea};
pub use files::Files;
pub use generations::Generations;
pub use webhooks::WebhookEndpoints;

/// The account area: [`AccountArea`], by its 0.1.0 name.
#[deprecated(
    since = "0.2.0",
    note = "renamed `mediagen::areas::AccountArea` (`mediagen::Account` is the record); this alias goes in 0.3.0"
)]
pub type Account<'a> = AccountArea<'a>;

/// The catalogue area: [`CatalogArea`], by its 0.1.0 name.
#[deprecated(
    since = "0.2.0",
    note = "renamed `mediagen::areas::CatalogArea` (`mediagen::Catalog` is the record); this alias goes in 0.3.0"
)]
pub type Catalog<'a> = CatalogArea<'a>;
