//! The enumerations and records of webhook endpoints that this crate writes by hand:
//! the signing secret, and the answers that carry it.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::error::Result;
use crate::events::WebhookVerifier;
use crate::open_enum::open_enum;

mediagen_openapi::event_type_filter_values! {
    open_enum! {
        /// An entry of an endpoint's `eventTypes`: an event name, `generation.*` (the
        /// group) or `*` (every event). An empty list means every event.
        ///
        /// ```
        /// use mediagen::EventTypeFilter;
        /// assert_eq!(EventTypeFilter::from("generation.*"), EventTypeFilter::Generation);
        /// assert_eq!(EventTypeFilter::All.as_str(), "*");
        /// ```
        pub enum EventTypeFilter
    }
}

mediagen_openapi::delivery_trigger_values! {
    open_enum! {
        /// What started a delivery attempt (`trigger`).
        ///
        /// ```
        /// assert_eq!(mediagen::DeliveryTrigger::from("manual"), mediagen::DeliveryTrigger::Manual);
        /// ```
        pub enum DeliveryTrigger
    }
}

mediagen_openapi::delivery_outcome_values! {
    open_enum! {
        /// How a delivery attempt ended (`outcome`).
        ///
        /// ```
        /// assert_eq!(mediagen::DeliveryOutcome::Failed.as_str(), "failed");
        /// ```
        pub enum DeliveryOutcome
    }
}

/// A signing secret (`whsec_…`). Shown by the service once, at creation and at
/// rotation: store it then. Its `Debug` output never shows it.
///
/// ```
/// let secret = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
/// assert_eq!(format!("{secret:?}"), "WebhookSecret(\"whsec_…\")");
/// let verifier = secret.verifier()?;
/// # drop(verifier);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct WebhookSecret(String);

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WebhookSecret").field(&"whsec_…").finish()
    }
}

impl WebhookSecret {
    /// Wraps a secret read from storage.
    ///
    /// ```
    /// let secret = mediagen::WebhookSecret::new(std::env::var("WEBHOOK_SECRET").unwrap_or_default());
    /// # drop(secret);
    /// ```
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself, to store.
    ///
    /// ```
    /// let secret = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    /// assert!(secret.expose().starts_with("whsec_"));
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A verifier of deliveries signed with this secret.
    ///
    /// ```
    /// let verifier = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verifier()?;
    /// # drop(verifier);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn verifier(&self) -> Result<WebhookVerifier> {
        WebhookVerifier::new(&self.0)
    }
}

/// A registered endpoint, with its secret (the answer to creation).
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// let created = client
///     .webhooks()
///     .create(mediagen::WebhookEndpointRequest::new("https://example.com/hooks/mediagen"))
///     .await?;
/// store_secret(&created.id, created.secret.expose()); // shown only now
/// # Ok(())
/// # }
/// # fn store_secret(_: &str, _: &str) {}
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreatedWebhookEndpoint {
    /// The endpoint's id (`we_…`).
    pub id: String,
    /// The target address.
    pub url: String,
    /// The signing secret.
    pub secret: WebhookSecret,
    /// Subscribed events; empty means all.
    #[serde(default)]
    pub event_types: Vec<EventTypeFilter>,
}

/// A new signing secret (the answer to rotation). The old one is invalid at once.
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// let rotated = client.webhooks().rotate_secret("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds").await?;
/// store_secret(rotated.secret.expose()); // shown only now; the old one is invalid
/// # fn store_secret(_: &str) {}
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RotatedSecret {
    /// The new signing secret: the only field the service document guarantees.
    pub secret: WebhookSecret,
    /// The endpoint's id (designed; may be absent).
    #[serde(default)]
    pub id: Option<String>,
    /// When it was rotated (designed; may be absent).
    #[serde(default)]
    pub rotated_at: Option<DateTime<Utc>>,
}
