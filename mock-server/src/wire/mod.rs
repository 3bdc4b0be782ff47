//! The JSON the service speaks: the shapes of its answers and of its webhook
//! events, built from the records of `domain/` and `store/`. Routes and the
//! deliverer both use them, so no answer is shaped in two places.

pub mod account;
pub mod billing;
pub mod events;
pub mod files;
pub mod generation;
pub mod webhooks;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::Serialize;

/// Timestamps as the contract writes them: RFC 3339, milliseconds, UTC.
///
/// Written digit by digit: every generation read writes up to three, and
/// chrono's formatter costs some 750 instructions each. Years chrono writes
/// with a sign (before 0 or after 9999) and leap seconds are left to it.
pub fn timestamp(at: DateTime<Utc>) -> String {
    let (date, time) = (at.date_naive(), at.time());
    let nanos = time.nanosecond();
    let year = match u32::try_from(date.year()) {
        Ok(year) if year <= 9999 && nanos < 1_000_000_000 => year,
        _ => return at.to_rfc3339_opts(SecondsFormat::Millis, true),
    };
    let mut text = *b"0000-00-00T00:00:00.000Z";
    for (at, digits, value) in [
        (0, 4, year),
        (5, 2, date.month()),
        (8, 2, date.day()),
        (11, 2, time.hour()),
        (14, 2, time.minute()),
        (17, 2, time.second()),
        (20, 3, nanos / 1_000_000),
    ] {
        let mut value = value;
        for place in text[at..at + digits].iter_mut().rev() {
            *place = b'0' + (value % 10) as u8;
            value /= 10;
        }
    }
    std::str::from_utf8(&text)
        .expect("ASCII digits and separators")
        .to_owned()
}

/// A JSON answer, as `axum::Json` makes one, serialized into a buffer that
/// holds a generation at once (larger answers grow it): axum's starts at 128
/// bytes, grows by copies, and takes each token through `BytesMut` (some 5,000
/// instructions of a 60,000-instruction generation read, measured with
/// callgrind).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(512);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                body,
            )
                .into_response(),
            // As axum answers a value that will not serialize; the service's
            // answers are maps with text keys, which always do.
            Err(err) => (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()).into_response(),
        }
    }
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

#[cfg(test)]
mod tests {
    use chrono::{DateTime, SecondsFormat, TimeZone, Timelike, Utc};

    use super::timestamp;

    #[test]
    fn timestamps_are_written_as_chrono_writes_them_to_the_millisecond() {
        let chrono = |at: DateTime<Utc>| at.to_rfc3339_opts(SecondsFormat::Millis, true);
        let mut seconds = -62_198_755_200_i64; // the year -1
        // Steps that are prime to every calendar period reach each field's
        // values, the years 0 and 9999 and the far side of both among them.
        while seconds < 253_402_300_800 + 86_400 * 800 {
            let nanos = u32::try_from(seconds.rem_euclid(1_000_000_007)).unwrap() % 1_000_000_000;
            let at = Utc.timestamp_opt(seconds, nanos).unwrap();
            assert_eq!(timestamp(at), chrono(at), "{seconds} s {nanos} ns");
            seconds += 7_777_777_777 / 97;
        }
        let leap = Utc
            .with_ymd_and_hms(2016, 12, 31, 23, 59, 59)
            .unwrap()
            .with_nanosecond(1_500_000_000)
            .unwrap();
        assert_eq!(timestamp(leap), chrono(leap));
        assert_eq!(timestamp(leap), "2016-12-31T23:59:60.500Z");
    }
}
