//! Sign then verify passes; changing any one byte of what was signed fails.

use proptest::prelude::*;

use crate::webhook;

/// A byte index into a non-empty value, and a non-zero mask to flip it with.
fn flip() -> impl Strategy<Value = (prop::sample::Index, u8)> {
    (any::<prop::sample::Index>(), 1u8..=255)
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn signed_message_verifies(
        id in any::<String>(),
        timestamp in any::<i64>(),
        payload in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let wh = webhook();
        let signature = wh.sign(&id, timestamp, &payload).unwrap();
        let ts = timestamp.to_string();
        prop_assert_eq!(wh.verify_parts_at(&payload, &id, &ts, &signature, timestamp), Ok(()));
    }

    #[test]
    fn changing_one_body_byte_fails(
        id in "[ -~]{0,40}",
        timestamp in any::<i64>(),
        payload in prop::collection::vec(any::<u8>(), 1..512),
        (at, mask) in flip(),
    ) {
        let wh = webhook();
        let signature = wh.sign(&id, timestamp, &payload).unwrap();
        let mut changed = payload;
        let i = at.index(changed.len());
        changed[i] ^= mask;
        let ts = timestamp.to_string();
        prop_assert!(wh.verify_parts_ignoring_timestamp(&changed, &id, &ts, &signature).is_err());
    }

    #[test]
    fn changing_one_id_byte_fails(
        id in "[ -~]{1,40}",
        timestamp in any::<i64>(),
        payload in prop::collection::vec(any::<u8>(), 0..256),
        at in any::<prop::sample::Index>(),
        replacement in 0x20u8..=0x7e,
    ) {
        let wh = webhook();
        let signature = wh.sign(&id, timestamp, &payload).unwrap();
        let mut changed = id.clone().into_bytes();
        let i = at.index(changed.len());
        prop_assume!(changed[i] != replacement);
        changed[i] = replacement;
        let changed = String::from_utf8(changed).unwrap();
        let ts = timestamp.to_string();
        prop_assert!(wh.verify_parts_ignoring_timestamp(&payload, &changed, &ts, &signature).is_err());
    }

    #[test]
    fn changing_one_timestamp_byte_fails(
        id in "[ -~]{0,40}",
        timestamp in any::<i64>(),
        payload in prop::collection::vec(any::<u8>(), 0..256),
        at in any::<prop::sample::Index>(),
        replacement in 0x20u8..=0x7e,
    ) {
        let wh = webhook();
        let signature = wh.sign(&id, timestamp, &payload).unwrap();
        let mut changed = timestamp.to_string().into_bytes();
        let i = at.index(changed.len());
        prop_assume!(changed[i] != replacement);
        changed[i] = replacement;
        let changed = String::from_utf8(changed).unwrap();
        prop_assert!(wh.verify_parts_ignoring_timestamp(&payload, &id, &changed, &signature).is_err());
    }
}

#[cfg(feature = "http")]
proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn signed_headers_verify(
        id in "[!-~]{1,40}",
        timestamp in any::<i64>(),
        payload in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let wh = webhook();
        let signature = wh.sign(&id, timestamp, &payload).unwrap();
        let headers = crate::headers(&id, &timestamp.to_string(), &signature);
        prop_assert_eq!(wh.verify_at(&payload, &headers, timestamp), Ok(()));
    }
}
