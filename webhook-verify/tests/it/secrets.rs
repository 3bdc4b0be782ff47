//! Reading, generating and hiding secrets.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use webhook_verify::{SecretError, Webhook, WebhookError};

use crate::{MSG_ID, SECRET};

fn signs_like_secret(wh: &Webhook) -> bool {
    wh.sign(MSG_ID, 1, b"x").unwrap()
        == Webhook::new(SECRET).unwrap().sign(MSG_ID, 1, b"x").unwrap()
}

#[test]
fn prefix_is_optional() {
    assert!(signs_like_secret(
        &Webhook::new(SECRET.trim_start_matches("whsec_")).unwrap()
    ));
}

#[test]
fn surrounding_whitespace_is_ignored() {
    assert!(signs_like_secret(
        &Webhook::new(&format!("  {SECRET}\n")).unwrap()
    ));
}

#[test]
fn missing_base64_padding_is_accepted() {
    let padded = "whsec_5XhVnU1OdcTTkDYG5AEUaIVhBZ5HMvXyMUJOQ/nyEcA=";
    let unpadded = padded.trim_end_matches('=');
    assert_eq!(
        Webhook::new(padded).unwrap().sign(MSG_ID, 1, b"x").unwrap(),
        Webhook::new(unpadded)
            .unwrap()
            .sign(MSG_ID, 1, b"x")
            .unwrap()
    );
}

#[test]
fn from_bytes_uses_the_decoded_key() {
    let key = STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .unwrap();
    assert!(signs_like_secret(&Webhook::from_bytes(key).unwrap()));
}

#[test]
fn empty_secrets_are_refused() {
    let empty = WebhookError::InvalidSecret(SecretError::Empty);
    for secret in ["", "whsec_", "   ", "whsec_\n"] {
        assert_eq!(Webhook::new(secret).unwrap_err(), empty, "{secret:?}");
    }
    assert_eq!(Webhook::from_bytes(Vec::new()).unwrap_err(), empty);
}

#[test]
fn malformed_base64_is_refused() {
    for secret in [
        "whsec_***",
        "whsec_a",
        "whsec_MfKQ 9r8G",
        "whsec_====",
        "whsec_Mf-_9r8G",
        "wh sec",
    ] {
        assert_eq!(
            Webhook::new(secret).unwrap_err(),
            WebhookError::InvalidSecret(SecretError::Base64),
            "{secret:?}"
        );
    }
}

#[test]
fn generated_secret_is_prefixed_base64_of_32_bytes() {
    let secret = Webhook::generate_secret();
    let encoded = secret.strip_prefix("whsec_").unwrap();
    assert_eq!(STANDARD.decode(encoded).unwrap().len(), 32);
}

#[test]
fn generated_secrets_differ() {
    let secrets: std::collections::HashSet<_> =
        (0..64).map(|_| Webhook::generate_secret()).collect();
    assert_eq!(secrets.len(), 64);
}

#[test]
fn debug_output_never_shows_the_secret() {
    let encoded = SECRET.trim_start_matches("whsec_");
    let raw = STANDARD.decode(encoded).unwrap();
    for wh in [
        Webhook::new(SECRET).unwrap(),
        Webhook::from_bytes(raw.clone()).unwrap(),
        Webhook::from_secrets([SECRET, SECRET]).unwrap(),
    ] {
        for shown in [format!("{wh:?}"), format!("{wh:#?}")] {
            assert!(!shown.contains(encoded), "{shown}");
            assert!(!shown.contains(&encoded[..8]), "{shown}");
            assert!(!shown.contains(&format!("{raw:?}")), "{shown}");
            assert!(!shown.contains(&format!("{:?}", &raw[..4])), "{shown}");
            assert!(shown.contains("redacted"), "{shown}");
        }
    }
}

#[test]
fn debug_output_shows_the_tolerance() {
    assert!(format!("{:?}", Webhook::new(SECRET).unwrap()).contains("300s"));
}

#[test]
fn secret_errors_do_not_echo_the_secret() {
    let err = Webhook::new("whsec_sup3r+secret!").unwrap_err();
    assert!(!format!("{err} {err:?}").contains("sup3r"));
}

#[cfg(not(feature = "ed25519"))]
#[test]
fn ed25519_keys_without_the_feature_say_which_feature_is_missing() {
    for (key, prefix) in [("whsk_AAAA", "whsk_"), ("whpk_AAAA", "whpk_")] {
        let err = Webhook::new(key).unwrap_err();
        assert_eq!(
            err,
            WebhookError::InvalidSecret(SecretError::Ed25519Disabled(prefix))
        );
        assert!(err.to_string().contains("`ed25519` feature"));
    }
}

#[test]
fn webhook_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<Webhook>();
}
