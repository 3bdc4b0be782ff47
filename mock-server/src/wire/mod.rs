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

/// Serializes a time as [`timestamp`] writes it (`#[serde(serialize_with)]`).
pub fn at<S: serde::Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&timestamp(*at))
}

/// Serializes a time that may be absent as [`timestamp`] writes it, `null` when absent.
pub fn maybe_at<S: serde::Serializer>(
    at: &Option<DateTime<Utc>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&at.map(timestamp), serializer)
}
