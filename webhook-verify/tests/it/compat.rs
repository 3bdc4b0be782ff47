//! Drop-in compatibility with `standardwebhooks` 1.0.1, both ways.

use proptest::prelude::*;
use webhook_verify::Webhook;

#[cfg(feature = "http")]
use crate::system_now;
use crate::{BODY, MSG_ID, SECRET};

#[cfg(feature = "http")]
#[test]
fn headers_signed_by_standardwebhooks_verify_here() {
    let theirs = standardwebhooks::Webhook::new(SECRET).unwrap();
    let now = system_now();
    let signature = theirs.sign(MSG_ID, now, BODY).unwrap();
    let headers = crate::headers(MSG_ID, &now.to_string(), &signature);

    assert_eq!(Webhook::new(SECRET).unwrap().verify(BODY, &headers), Ok(()));
}

#[cfg(feature = "http")]
#[test]
fn headers_signed_here_verify_with_standardwebhooks() {
    let now = system_now();
    let signature = Webhook::new(SECRET)
        .unwrap()
        .sign(MSG_ID, now, BODY)
        .unwrap();
    let headers = crate::headers(MSG_ID, &now.to_string(), &signature);

    let theirs = standardwebhooks::Webhook::new(SECRET).unwrap();
    assert!(theirs.verify(BODY, &headers).is_ok());
}

#[cfg(feature = "http")]
#[test]
fn rotation_header_signed_here_verifies_with_standardwebhooks_for_each_secret() {
    let other = "whsec_5XhVnU1OdcTTkDYG5AEUaIVhBZ5HMvXyMUJOQ/nyEcA=";
    let now = system_now();
    let signature = Webhook::from_secrets([SECRET, other])
        .unwrap()
        .sign(MSG_ID, now, BODY)
        .unwrap();
    let headers = crate::headers(MSG_ID, &now.to_string(), &signature);

    for secret in [SECRET, other] {
        let theirs = standardwebhooks::Webhook::new(secret).unwrap();
        assert!(theirs.verify(BODY, &headers).is_ok(), "{secret}");
    }
}

#[test]
fn from_bytes_signs_like_standardwebhooks_from_bytes() {
    let key = b"raw secret bytes, not base64".to_vec();
    let ours = Webhook::from_bytes(key.clone()).unwrap();
    let theirs = standardwebhooks::Webhook::from_bytes(key).unwrap();
    assert_eq!(
        ours.sign(MSG_ID, 1, BODY).unwrap(),
        theirs.sign(MSG_ID, 1, BODY).unwrap()
    );
}

#[test]
fn error_variants_keep_the_names_standardwebhooks_code_matches_on() {
    use webhook_verify::WebhookError;
    // Written as for standardwebhooks::WebhookError: it must compile unchanged.
    let describe = |err: WebhookError| match err {
        WebhookError::InvalidTimestamp => "timestamp",
        WebhookError::InvalidSecret(_) => "secret",
        WebhookError::InvalidHeader(_) => "header",
        WebhookError::TimestampTooOldError => "old",
        WebhookError::FutureTimestampError => "future",
        WebhookError::MissingHeader(_) => "missing",
        WebhookError::InvalidSignature => "signature",
        WebhookError::InvalidPayload => "payload",
    };
    assert_eq!(describe(WebhookError::InvalidSignature), "signature");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Any UTF-8 message (standardwebhooks signs only those) gets the same header from
    /// both crates.
    #[test]
    fn any_utf8_message_signs_identically_in_both_crates(
        id in "\\PC{0,40}",
        timestamp in any::<i64>(),
        payload in "\\PC{0,200}",
    ) {
        let ours = Webhook::new(SECRET).unwrap().sign(&id, timestamp, payload.as_bytes()).unwrap();
        let theirs = standardwebhooks::Webhook::new(SECRET)
            .unwrap()
            .sign(&id, timestamp, payload.as_bytes())
            .unwrap();
        prop_assert_eq!(ours, theirs);
    }
}
