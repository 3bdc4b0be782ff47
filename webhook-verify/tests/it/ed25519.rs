//! `v1a` signatures with ed25519 keys: `whsk_` signs, `whpk_` verifies.
//!
//! Needs the `ed25519` feature: `cargo test -p webhook-verify --all-features`.
#![cfg(feature = "ed25519")]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use proptest::prelude::*;
use webhook_verify::{SecretError, Webhook, WebhookError};

use crate::{BODY, MSG_ID, NOW, SECRET};

// RFC 8032, section 7.1, test 1: the seed and the public key it must give.
const SEED_HEX: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const RFC_SEED_KEY: &str = "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
const RFC_PAIR_KEY: &str =
    "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2DXWpgBgrEKt9VL/tPJZAc6DuFy89qmIyWvAhpo9wdRGg==";
const RFC_PUBLIC_KEY: &str = "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";

/// Signed with the RFC key by Python's `cryptography` over
/// `msg_2KWPBgLlAfxdpx2AI54pPJ85f4W.1674087231.{"type":"contact.created"}`.
const PYTHON_SIGNATURE: &str =
    "v1a,4ny2FhNoAyIFn4d0z3ProW0u46dYkaQ/Nz6GCqjRWVesje7/Lx5vYGuLoJRThHUBlnWSaiPaGHQO8meB4t40AQ==";
const PYTHON_BODY: &[u8] = br#"{"type":"contact.created"}"#;
const PYTHON_TS: i64 = 1_674_087_231;

/// The `webhook-signature` value `key` gives `BODY` from `MSG_ID` at `NOW`.
fn signed_by(key: &str) -> String {
    Webhook::new(key).unwrap().sign(MSG_ID, NOW, BODY).unwrap()
}

fn verify(receiver: &Webhook, header: &str) -> Result<(), WebhookError> {
    receiver.verify_parts_at(BODY, MSG_ID, &NOW.to_string(), header, NOW)
}

#[test]
fn rfc_8032_seed_gives_its_public_key() {
    assert_eq!(SEED_HEX.len(), 64);
    for secret in [RFC_SEED_KEY, RFC_PAIR_KEY] {
        assert_eq!(
            Webhook::new(secret).unwrap().public_keys(),
            vec![RFC_PUBLIC_KEY.to_owned()]
        );
    }
}

#[test]
fn signature_matches_an_independent_implementation() {
    let wh = Webhook::new(RFC_PAIR_KEY).unwrap();
    assert_eq!(
        wh.sign(MSG_ID, PYTHON_TS, PYTHON_BODY).unwrap(),
        PYTHON_SIGNATURE
    );
}

#[test]
fn independent_signature_verifies_with_the_public_key() {
    let receiver = Webhook::new(RFC_PUBLIC_KEY).unwrap();
    let ts = PYTHON_TS.to_string();
    assert_eq!(
        receiver.verify_parts_at(PYTHON_BODY, MSG_ID, &ts, PYTHON_SIGNATURE, PYTHON_TS),
        Ok(())
    );
}

#[test]
fn seed_and_keypair_forms_sign_identically() {
    let from_seed = signed_by(RFC_SEED_KEY);
    let from_pair = signed_by(RFC_PAIR_KEY);
    assert_eq!(from_seed, from_pair);
}

#[test]
fn secret_key_signs_v1a_and_public_key_verifies() {
    let sender = Webhook::new(&Webhook::generate_ed25519_key()).unwrap();
    let header = sender.sign(MSG_ID, NOW, BODY).unwrap();
    assert!(header.starts_with("v1a,"));
    assert_eq!(header.len(), "v1a,".len() + 88);

    let receiver = Webhook::new(&sender.public_keys()[0]).unwrap();
    assert_eq!(verify(&receiver, &header), Ok(()));
    assert_eq!(verify(&sender, &header), Ok(()));
}

#[test]
fn tampered_body_fails_v1a() {
    let sender = Webhook::new(RFC_PAIR_KEY).unwrap();
    let header = sender.sign(MSG_ID, NOW, BODY).unwrap();
    let receiver = Webhook::new(RFC_PUBLIC_KEY).unwrap();
    assert_eq!(
        receiver.verify_parts_at(b"{}", MSG_ID, &NOW.to_string(), &header, NOW),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn another_public_key_rejects_the_signature() {
    let header = signed_by(RFC_PAIR_KEY);
    let stranger = Webhook::new(&Webhook::generate_ed25519_key()).unwrap();
    let receiver = Webhook::new(&stranger.public_keys()[0]).unwrap();
    assert_eq!(
        verify(&receiver, &header),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn mixed_header_verifies_for_hmac_and_ed25519_receivers() {
    let sender = Webhook::from_secrets([SECRET, RFC_PAIR_KEY]).unwrap();
    let header = sender.sign(MSG_ID, NOW, BODY).unwrap();
    let entries: Vec<_> = header.split(' ').collect();
    assert_eq!(entries.len(), 2);
    assert!(entries[0].starts_with("v1,") && entries[1].starts_with("v1a,"));

    assert_eq!(verify(&Webhook::new(SECRET).unwrap(), &header), Ok(()));
    assert_eq!(
        verify(&Webhook::new(RFC_PUBLIC_KEY).unwrap(), &header),
        Ok(())
    );
}

#[test]
fn hmac_receiver_ignores_v1a_entries_and_ed25519_receiver_ignores_v1() {
    let v1 = signed_by(SECRET);
    let v1a = signed_by(RFC_PAIR_KEY);
    assert_eq!(
        verify(&Webhook::new(SECRET).unwrap(), &v1a),
        Err(WebhookError::InvalidSignature)
    );
    assert_eq!(
        verify(&Webhook::new(RFC_PUBLIC_KEY).unwrap(), &v1),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn entries_of_the_other_scheme_mixed_in_are_skipped() {
    let v1 = signed_by(SECRET);
    let v1a = signed_by(RFC_PAIR_KEY);
    let mac = v1.trim_start_matches("v1,");
    let ed = v1a.trim_start_matches("v1a,");

    // Each scheme's signature under the other's version, then a garbled entry of
    // the right scheme, then the valid one.
    let for_hmac = format!("v1a,{mac} v1,{ed} {v1a} v1,{} {v1}", "A".repeat(44));
    assert_eq!(verify(&Webhook::new(SECRET).unwrap(), &for_hmac), Ok(()));
    let for_ed25519 = format!("v1,{ed} v1a,{mac} {v1} v1a,{} {v1a}", "A".repeat(88));
    assert_eq!(
        verify(&Webhook::new(RFC_PUBLIC_KEY).unwrap(), &for_ed25519),
        Ok(())
    );

    // Without the valid entry of its own scheme, neither receiver is fooled.
    let swapped = format!("v1a,{mac} v1,{ed}");
    for receiver in [SECRET, RFC_PUBLIC_KEY] {
        assert_eq!(
            verify(&Webhook::new(receiver).unwrap(), &swapped),
            Err(WebhookError::InvalidSignature),
            "{receiver}"
        );
    }
    let both = Webhook::from_secrets([RFC_PUBLIC_KEY, SECRET]).unwrap();
    assert_eq!(verify(&both, &swapped), Err(WebhookError::InvalidSignature));
    assert_eq!(verify(&both, &format!("{swapped} {v1}")), Ok(()));
    assert_eq!(verify(&both, &format!("{swapped} {v1a}")), Ok(()));
}

#[test]
fn receiver_trusting_several_keys_accepts_any() {
    let receiver = Webhook::from_secrets([SECRET, RFC_PUBLIC_KEY]).unwrap();
    let v1 = signed_by(SECRET);
    let v1a = signed_by(RFC_PAIR_KEY);
    assert_eq!(verify(&receiver, &v1), Ok(()));
    assert_eq!(verify(&receiver, &v1a), Ok(()));
}

#[test]
fn public_key_alone_cannot_sign() {
    assert_eq!(
        Webhook::new(RFC_PUBLIC_KEY)
            .unwrap()
            .sign(MSG_ID, NOW, BODY),
        Err(WebhookError::InvalidSecret(
            SecretError::PublicKeyCannotSign
        ))
    );
}

#[test]
fn public_keys_are_skipped_when_signing_with_a_mix() {
    let mixed = Webhook::from_secrets([RFC_PUBLIC_KEY, SECRET]).unwrap();
    let hmac_only = Webhook::new(SECRET).unwrap();
    assert_eq!(
        mixed.sign(MSG_ID, NOW, BODY),
        hmac_only.sign(MSG_ID, NOW, BODY)
    );
}

#[test]
fn keys_of_the_wrong_length_are_refused() {
    let encoded = |len: usize| STANDARD.encode(vec![7u8; len]);
    for len in [1, 31, 33, 63, 65, 96] {
        assert!(matches!(
            Webhook::new(&format!("whsk_{}", encoded(len))).unwrap_err(),
            WebhookError::InvalidSecret(SecretError::KeyLength { kind: "secret", found, .. }) if found == len
        ));
    }
    for len in [1, 31, 33, 64] {
        assert!(matches!(
            Webhook::new(&format!("whpk_{}", encoded(len))).unwrap_err(),
            WebhookError::InvalidSecret(SecretError::KeyLength { kind: "public", found, .. }) if found == len
        ));
    }
}

#[test]
fn keypair_whose_halves_disagree_is_refused() {
    let mut pair = STANDARD
        .decode(RFC_PAIR_KEY.trim_start_matches("whsk_"))
        .unwrap();
    pair[40] ^= 1;
    assert_eq!(
        Webhook::new(&format!("whsk_{}", STANDARD.encode(pair))).unwrap_err(),
        WebhookError::InvalidSecret(SecretError::InvalidEd25519Key)
    );
}

#[test]
fn public_key_that_is_not_a_curve_point_is_refused() {
    // About half of all 32-byte strings are not points; some of the first few are not.
    let refused = (0u8..16)
        .map(|first| {
            let mut bytes = [0u8; 32];
            bytes[0] = first;
            bytes[31] = 0x7f;
            Webhook::new(&format!("whpk_{}", STANDARD.encode(bytes)))
        })
        .filter(|r| {
            matches!(
                r,
                Err(WebhookError::InvalidSecret(SecretError::InvalidEd25519Key))
            )
        })
        .count();
    assert!(refused > 0);
}

#[test]
fn debug_output_hides_the_secret_key_and_shows_the_public_one() {
    let shown = format!(
        "{:?}",
        Webhook::from_secrets([RFC_PAIR_KEY, RFC_PUBLIC_KEY]).unwrap()
    );
    let seed_b64 = &RFC_SEED_KEY["whsk_".len()..][..20];
    assert!(!shown.contains(seed_b64), "{shown}");
    assert!(shown.contains("redacted"), "{shown}");
    assert!(shown.contains(RFC_PUBLIC_KEY), "{shown}");
}

#[test]
fn generated_key_is_a_seed_and_its_public_key() {
    let secret = Webhook::generate_ed25519_key();
    let bytes = STANDARD
        .decode(secret.strip_prefix("whsk_").unwrap())
        .unwrap();
    assert_eq!(bytes.len(), 64);
    let public = Webhook::new(&secret).unwrap().public_keys().remove(0);
    assert_eq!(
        STANDARD
            .decode(public.strip_prefix("whpk_").unwrap())
            .unwrap(),
        &bytes[32..]
    );
}

#[test]
fn hmac_secret_has_no_public_key() {
    assert!(Webhook::new(SECRET).unwrap().public_keys().is_empty());
}

#[cfg(feature = "http")]
#[test]
fn mixed_header_verifies_through_a_header_map() {
    let header = Webhook::from_secrets([SECRET, RFC_PAIR_KEY])
        .unwrap()
        .sign(MSG_ID, NOW, BODY)
        .unwrap();
    let headers = crate::headers(MSG_ID, &NOW.to_string(), &header);
    assert_eq!(
        Webhook::new(RFC_PUBLIC_KEY)
            .unwrap()
            .verify_at(BODY, &headers, NOW),
        Ok(())
    );
}

proptest! {
    // ed25519 is slow in a debug build; fewer cases keep the suite quick.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn v1a_round_trip_holds_and_any_body_change_fails(
        payload in prop::collection::vec(any::<u8>(), 1..256),
        at in any::<prop::sample::Index>(),
        mask in 1u8..=255,
    ) {
        let sender = Webhook::new(RFC_PAIR_KEY).unwrap();
        let receiver = Webhook::new(RFC_PUBLIC_KEY).unwrap();
        let header = sender.sign(MSG_ID, NOW, &payload).unwrap();
        let ts = NOW.to_string();
        prop_assert_eq!(receiver.verify_parts_at(&payload, MSG_ID, &ts, &header, NOW), Ok(()));

        let mut changed = payload;
        let i = at.index(changed.len());
        changed[i] ^= mask;
        prop_assert!(receiver.verify_parts_at(&changed, MSG_ID, &ts, &header, NOW).is_err());
    }

    #[test]
    fn garbled_v1a_entries_never_panic(header in "(v1a,[A-Za-z0-9+/=]{0,100} ?){0,4}") {
        let receiver = Webhook::new(RFC_PUBLIC_KEY).unwrap();
        let ts = NOW.to_string();
        prop_assert!(receiver.verify_parts_at(BODY, MSG_ID, &ts, &header, NOW).is_err());
    }
}
