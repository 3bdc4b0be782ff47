//! The JSON the service speaks: the shapes of its answers and of its webhook
//! events, built from the records of `domain/` and `store/`. Routes and the
//! deliverer both use them, so no answer is shaped in two places.

pub mod account;
pub mod billing;
pub mod events;
pub mod files;
pub mod generation;
pub mod webhooks;

use chrono::{DateTime, SecondsFormat, Utc};

/// Timestamps as the contract writes them: RFC 3339, milliseconds, UTC.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}
