//! The names of 0.1.0 that moved, kept for one release so that a program builds
//! (with a warning that names the new home) while it moves to the new ones.
//! Each is an alias of the item it became. They go in 0.3.0; see `CHANGELOG.md`.
//!
//! `mediagen::Account` and `mediagen::Catalog` were the handles in 0.1.0 and
//! are the records now, so those two handles have no alias at their old paths:
//! they are `mediagen::areas::AccountArea` and `mediagen::areas::CatalogArea`,
//! with aliases at `mediagen::areas::Account` and `mediagen::areas::Catalog`
//! (in `areas/mod.rs`, beside the handles).

/// The generations area: [`areas::Generations`](crate::areas::Generations).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mediagen::areas::Generations`; this alias goes in 0.3.0"
)]
pub type Generations<'a> = crate::areas::Generations<'a>;

/// The files area: [`areas::Files`](crate::areas::Files).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mediagen::areas::Files`; this alias goes in 0.3.0"
)]
pub type Files<'a> = crate::areas::Files<'a>;

/// The billing area: [`areas::Billing`](crate::areas::Billing).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mediagen::areas::Billing`; this alias goes in 0.3.0"
)]
pub type Billing<'a> = crate::areas::Billing<'a>;

/// The webhook endpoints area: [`areas::WebhookEndpoints`](crate::areas::WebhookEndpoints).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mediagen::areas::WebhookEndpoints`; this alias goes in 0.3.0"
)]
pub type WebhookEndpoints<'a> = crate::areas::WebhookEndpoints<'a>;

/// Sign-in links: [`areas::Auth`](crate::areas::Auth).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mediagen::areas::Auth`; this alias goes in 0.3.0"
)]
pub type Auth<'a> = crate::areas::Auth<'a>;

/// The records of the contract as the generator writes them, by their 0.1.0
/// path: every one is at the crate root now (`mediagen::Invoice`), beside the
/// records the SDK writes by hand, whose generated names of 0.1.0 are kept here
/// as deprecated aliases. The module goes in 0.3.0.
#[deprecated(
    since = "0.2.0",
    note = "every record is at the crate root now (`mediagen::Invoice`, `mediagen::ErrorEnvelope` for `types::Error`); this module goes in 0.3.0"
)]
pub mod types {
    #[allow(deprecated)]
    pub use crate::generated::deprecated_types::*;

    /// A generation: [`mediagen::Generation`](crate::Generation).
    #[deprecated(
        since = "0.2.0",
        note = "use `mediagen::Generation`, the one type of the schema; this alias goes in 0.3.0"
    )]
    pub type Generation = crate::Generation;

    /// A field that failed validation: [`mediagen::FieldError`](crate::FieldError).
    #[deprecated(
        since = "0.2.0",
        note = "use `mediagen::FieldError`, the one type of the schema; this alias goes in 0.3.0"
    )]
    pub type FieldError = crate::FieldError;

    /// The answer to creating an endpoint:
    /// [`mediagen::CreatedWebhookEndpoint`](crate::CreatedWebhookEndpoint).
    #[deprecated(
        since = "0.2.0",
        note = "use `mediagen::CreatedWebhookEndpoint`; this alias goes in 0.3.0"
    )]
    pub type WebhookEndpointCreated = crate::CreatedWebhookEndpoint;

    /// The answer to rotating a secret: [`mediagen::RotatedSecret`](crate::RotatedSecret)
    /// (not [`mediagen::WebhookSecret`](crate::WebhookSecret), which is the secret itself).
    #[deprecated(
        since = "0.2.0",
        note = "use `mediagen::RotatedSecret`; this alias goes in 0.3.0"
    )]
    pub type WebhookSecret = crate::RotatedSecret;

    /// The secret of a created endpoint: [`mediagen::WebhookSecret`](crate::WebhookSecret).
    #[deprecated(
        since = "0.2.0",
        note = "use `mediagen::WebhookSecret` (`expose()` gives the text); this alias goes in 0.3.0"
    )]
    pub type WebhookEndpointCreatedSecret = crate::WebhookSecret;

    /// The secret of a rotation: [`mediagen::WebhookSecret`](crate::WebhookSecret).
    #[deprecated(
        since = "0.2.0",
        note = "use `mediagen::WebhookSecret` (`expose()` gives the text); this alias goes in 0.3.0"
    )]
    pub type WebhookSecretSecret = crate::WebhookSecret;
}
