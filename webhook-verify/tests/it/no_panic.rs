//! No input makes the crate panic: property tests over arbitrary input, then the
//! inputs known to break other implementations, one by one.

use std::time::Duration;

use proptest::prelude::*;
use webhook_verify::{Webhook, WebhookError};

use crate::{BODY, MSG_ID, NOW, webhook};

/// Pieces a broken or hostile sender might put in `webhook-signature`: a version
/// prefix (or none) and a body drawn from one alphabet. Built from plain bytes
/// because proptest's regex and union strategies are slow in debug builds.
fn signature_entry() -> impl Strategy<Value = String> {
    const PREFIXES: &[&str] = &["", "v1,", "v1a,", "v1", "v2,", ",", "V1,", "v1,v1,"];
    const BASE64: &[char] = &[
        'A', 'Q', 'g', 'w', 'z', 'Z', '0', '9', '+', '/', '=', 'a', 'b', 'c', 'd', 'e',
    ];
    const ODD: &[char] = &[
        ',', ' ', '=', 'ä', '😀', '\u{0}', '\u{7f}', '\t', 'é', '\u{ffff}',
    ];
    (
        0..PREFIXES.len(),
        0u8..4,
        prop::collection::vec(any::<u8>(), 0..100),
    )
        .prop_map(|(prefix, alphabet, body)| {
            let mut entry = PREFIXES[prefix].to_owned();
            entry.extend(body.into_iter().map(|b| match alphabet {
                0 => BASE64[usize::from(b) % BASE64.len()],
                1 => char::from(b' ' + b % 95),
                2 => ODD[usize::from(b) % ODD.len()],
                _ => char::from(b),
            }));
            entry
        })
}

/// Any text, cheaply: mostly visible ASCII, with digits, signs, separators and
/// multi-byte characters mixed in.
fn text() -> impl Strategy<Value = String> {
    const MIXED: &[char] = &[
        '0', '1', '9', '-', '+', '.', ',', ' ', 'v', 'ü', '١', '😀', '\u{0}', '\u{202e}', '\n',
    ];
    (any::<bool>(), prop::collection::vec(any::<u8>(), 0..64)).prop_map(|(ascii, bytes)| {
        bytes
            .into_iter()
            .map(|b| {
                if ascii {
                    char::from(b' ' + b % 95)
                } else {
                    MIXED[usize::from(b) % MIXED.len()]
                }
            })
            .collect()
    })
}

fn signature_header() -> impl Strategy<Value = String> {
    prop::collection::vec(signature_entry(), 0..8).prop_map(|entries| entries.join(" "))
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn any_secret_text_is_accepted_or_refused_without_panic(secret in any::<String>()) {
        let _ = Webhook::new(&secret);
        let _ = Webhook::new(&format!("whsec_{secret}"));
    }

    #[test]
    fn any_secret_bytes_sign_without_panic(key in prop::collection::vec(any::<u8>(), 0..200)) {
        let empty = key.is_empty();
        match Webhook::from_bytes(key) {
            Ok(wh) => prop_assert!(wh.sign(MSG_ID, NOW, BODY).is_ok()),
            Err(_) => prop_assert!(empty),
        }
    }

    #[test]
    fn arbitrary_strings_never_panic_verification(
        id in text(),
        timestamp in text(),
        signature in text(),
        payload in prop::collection::vec(any::<u8>(), 0..256),
        now in any::<i64>(),
    ) {
        let result = webhook().verify_parts_at(&payload, &id, &timestamp, &signature, now);
        // Without the key, random input cannot carry a valid signature.
        prop_assert!(result.is_err());
    }

    #[test]
    fn garbled_signature_headers_are_rejected_without_panic(header in signature_header()) {
        let ts = NOW.to_string();
        prop_assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, &ts, &header, NOW),
            Err(WebhookError::InvalidSignature)
        );
    }

    #[test]
    fn one_valid_entry_among_garbage_is_found(
        before in signature_header(),
        after in signature_header(),
    ) {
        let valid = webhook().sign(MSG_ID, NOW, BODY).unwrap();
        let header = format!("{before} {valid} {after}");
        let ts = NOW.to_string();
        prop_assert_eq!(webhook().verify_parts_at(BODY, MSG_ID, &ts, &header, NOW), Ok(()));
    }

    /// The window check agrees with exact arithmetic everywhere, including both ends
    /// of i64 and a tolerance of up to u64::MAX seconds.
    #[test]
    fn timestamp_window_matches_exact_arithmetic(
        timestamp in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), -1000i64..1000],
        now in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), -1000i64..1000],
        tolerance in prop_oneof![any::<u64>(), 0u64..1000, Just(u64::MAX)],
    ) {
        let wh = webhook().with_tolerance(Duration::from_secs(tolerance));
        let signature = wh.sign(MSG_ID, timestamp, BODY).unwrap();
        let result = wh.verify_parts_at(BODY, MSG_ID, &timestamp.to_string(), &signature, now);

        let distance = (i128::from(timestamp) - i128::from(now)).unsigned_abs();
        let expected = if distance <= u128::from(tolerance) {
            Ok(())
        } else if timestamp < now {
            Err(WebhookError::TimestampTooOldError)
        } else {
            Err(WebhookError::FutureTimestampError)
        };
        prop_assert_eq!(result, expected);
    }

    #[test]
    fn numeric_looking_timestamps_never_panic(timestamp in "[+-]?[0-9]{0,40}", now in any::<i64>()) {
        let result = webhook().verify_parts_at(BODY, MSG_ID, &timestamp, "v1,AAAA", now);
        prop_assert!(result.is_err());
    }
}

#[cfg(feature = "http")]
mod header_map {
    use http::{HeaderMap, HeaderValue};

    use super::*;

    /// Bytes `http` allows in a header value: visible ASCII, space, tab and obs-text.
    fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(any::<u8>(), 0..100).prop_map(|bytes| {
            bytes
                .into_iter()
                // Control bytes become letters and punctuation; all else stays.
                .map(|b| {
                    if (b < 0x20 && b != b'\t') || b == 0x7f {
                        b ^ 0x40
                    } else {
                        b
                    }
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(crate::config())]

        #[test]
        fn arbitrary_header_bytes_never_panic_verification(
            id in header_bytes(),
            timestamp in header_bytes(),
            signature in header_bytes(),
            payload in prop::collection::vec(any::<u8>(), 0..256),
            now in any::<i64>(),
        ) {
            let mut headers = HeaderMap::new();
            for (name, value) in [("webhook-id", id), ("webhook-timestamp", timestamp), ("webhook-signature", signature)] {
                let value = HeaderValue::from_bytes(&value).unwrap();
                headers.insert(name, value);
            }
            prop_assert!(webhook().verify_at(&payload, &headers, now).is_err());
            prop_assert!(webhook().verify_ignoring_timestamp(&payload, &headers).is_err());
        }
    }
}

/// The named inputs from the issue, each on its own.
mod regressions {
    use super::*;

    fn signed_at(timestamp: i64) -> String {
        webhook().sign(MSG_ID, timestamp, BODY).unwrap()
    }

    #[test]
    fn lowest_i64_timestamp_is_too_old_instead_of_overflowing() {
        // standardwebhooks 1.0.1 computes `now - timestamp` here and panics in debug builds.
        let ts = "-9223372036854775808";
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, ts, &signed_at(i64::MIN), NOW),
            Err(WebhookError::TimestampTooOldError)
        );
        assert_eq!(
            webhook().verify_parts(BODY, MSG_ID, ts, &signed_at(i64::MIN)),
            Err(WebhookError::TimestampTooOldError)
        );
    }

    #[test]
    fn lowest_i64_timestamp_verifies_when_the_clock_agrees() {
        let ts = "-9223372036854775808";
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, ts, &signed_at(i64::MIN), i64::MIN),
            Ok(())
        );
    }

    #[test]
    fn highest_i64_timestamp_is_in_the_future_instead_of_overflowing() {
        let ts = i64::MAX.to_string();
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, &ts, &signed_at(i64::MAX), i64::MIN),
            Err(WebhookError::FutureTimestampError)
        );
    }

    #[test]
    fn timestamp_beyond_i64_is_invalid() {
        for ts in [
            "99999999999999999999",
            "9223372036854775808",
            "-9223372036854775809",
        ] {
            assert_eq!(
                webhook().verify_parts_at(BODY, MSG_ID, ts, "v1,AAAA", NOW),
                Err(WebhookError::InvalidTimestamp),
                "{ts}"
            );
        }
    }

    #[test]
    fn clock_at_either_end_of_i64_does_not_overflow() {
        for now in [i64::MIN, i64::MAX] {
            assert!(
                webhook()
                    .verify_parts_at(BODY, MSG_ID, &NOW.to_string(), &signed_at(NOW), now)
                    .is_err()
            );
        }
    }

    #[test]
    fn non_utf8_body_signs_and_verifies() {
        let body = [0xff, 0xfe, 0x00, 0xc3, 0x28, 0xa0, 0xa1];
        let sig = webhook().sign(MSG_ID, NOW, &body).unwrap();
        assert_eq!(
            webhook().verify_parts_at(&body, MSG_ID, &NOW.to_string(), &sig, NOW),
            Ok(())
        );
    }

    #[test]
    fn empty_and_malformed_secrets_are_errors() {
        for secret in [
            "",
            "whsec_",
            "whsec_=",
            "whsec_A",
            "whsec_AB=C",
            "whsec_\u{0}",
            "whsec_ü",
            "whsk_",
            "whpk_",
        ] {
            assert!(Webhook::new(secret).is_err(), "{secret:?}");
        }
    }

    #[test]
    fn huge_signature_header_is_rejected_quickly() {
        let header = "v1,AAAA ".repeat(200_000) + &"A".repeat(1 << 20);
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, &NOW.to_string(), &header, NOW),
            Err(WebhookError::InvalidSignature)
        );
    }

    #[test]
    fn huge_message_id_and_body_verify() {
        let id = "i".repeat(1 << 20);
        let body = vec![b'b'; 1 << 20];
        let sig = webhook().sign(&id, NOW, &body).unwrap();
        assert_eq!(
            webhook().verify_parts_at(&body, &id, &NOW.to_string(), &sig, NOW),
            Ok(())
        );
    }

    #[test]
    fn non_ascii_header_values_are_rejected() {
        let ts = NOW.to_string();
        for sig in ["v1,ÄÖÜ", "v1,😀😀😀😀😀😀😀😀😀😀😀", "v1a,ü", "ü,AAAA"]
        {
            assert_eq!(
                webhook().verify_parts_at(BODY, MSG_ID, &ts, sig, NOW),
                Err(WebhookError::InvalidSignature)
            );
        }
        assert_eq!(
            webhook().verify_parts_at(BODY, MSG_ID, "１７０００", "v1,AAAA", NOW),
            Err(WebhookError::InvalidTimestamp)
        );
    }

    #[test]
    fn signatures_with_wrong_base64_lengths_are_rejected() {
        let ts = NOW.to_string();
        for len in [
            0, 1, 2, 3, 4, 42, 43, 44, 45, 46, 48, 86, 87, 88, 89, 92, 1000,
        ] {
            for fill in ["A", "/", "="] {
                let sig = format!("v1,{}", fill.repeat(len));
                assert_eq!(
                    webhook().verify_parts_at(BODY, MSG_ID, &ts, &sig, NOW),
                    Err(WebhookError::InvalidSignature),
                    "{sig}"
                );
            }
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn non_ascii_header_bytes_are_rejected() {
        let mut headers = crate::headers(MSG_ID, &NOW.to_string(), "v1,AAAA");
        headers.insert(
            "webhook-signature",
            http::HeaderValue::from_bytes(b"v1,\xff\xfe\x80").unwrap(),
        );
        assert_eq!(
            webhook().verify_at(BODY, &headers, NOW),
            Err(WebhookError::InvalidSignature)
        );
    }
}
