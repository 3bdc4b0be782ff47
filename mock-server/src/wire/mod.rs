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

/// A time of the mock's own JSON (the live journal, the request log) written
/// as the contract writes its times, to the millisecond; read as any RFC 3339
/// time. For `#[serde(with = "crate::wire::millis")]`.
pub mod millis {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::timestamp(*at))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<DateTime<Utc>, D::Error> {
        DateTime::deserialize(deserializer)
    }

    /// The same, for a time that may be absent.
    pub mod option {
        use chrono::{DateTime, Utc};
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(
            at: &Option<DateTime<Utc>>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => serializer.serialize_str(&super::super::timestamp(*at)),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            Option::deserialize(deserializer)
        }
    }
}
