//! Several secrets at once, for zero-downtime rotation.

use webhook_verify::{SecretError, Webhook, WebhookError};

use crate::{BODY, MSG_ID, NOW, SECRET};

const NEW: &str = "whsec_5XhVnU1OdcTTkDYG5AEUaIVhBZ5HMvXyMUJOQ/nyEcA=";

fn verify(receiver: &Webhook, header: &str) -> Result<(), WebhookError> {
    receiver.verify_parts_at(BODY, MSG_ID, &NOW.to_string(), header, NOW)
}

#[test]
fn sender_with_two_secrets_signs_with_both_in_order() {
    let header = Webhook::from_secrets([NEW, SECRET])
        .unwrap()
        .sign(MSG_ID, NOW, BODY)
        .unwrap();
    let new_only = Webhook::new(NEW).unwrap().sign(MSG_ID, NOW, BODY).unwrap();
    let old_only = Webhook::new(SECRET)
        .unwrap()
        .sign(MSG_ID, NOW, BODY)
        .unwrap();
    assert_eq!(header, format!("{new_only} {old_only}"));
}

#[test]
fn receivers_on_either_secret_accept_a_header_signed_with_both() {
    let header = Webhook::from_secrets([NEW, SECRET])
        .unwrap()
        .sign(MSG_ID, NOW, BODY)
        .unwrap();
    assert_eq!(verify(&Webhook::new(NEW).unwrap(), &header), Ok(()));
    assert_eq!(verify(&Webhook::new(SECRET).unwrap(), &header), Ok(()));
}

#[test]
fn receiver_with_two_secrets_accepts_a_signature_by_either() {
    let receiver = Webhook::from_secrets([NEW, SECRET]).unwrap();
    for secret in [NEW, SECRET] {
        let header = Webhook::new(secret)
            .unwrap()
            .sign(MSG_ID, NOW, BODY)
            .unwrap();
        assert_eq!(verify(&receiver, &header), Ok(()), "{secret}");
    }
}

#[test]
fn receiver_with_two_secrets_rejects_a_third() {
    let receiver = Webhook::from_secrets([NEW, SECRET]).unwrap();
    let stranger = Webhook::new(&Webhook::generate_secret()).unwrap();
    let header = stranger.sign(MSG_ID, NOW, BODY).unwrap();
    assert_eq!(
        verify(&receiver, &header),
        Err(WebhookError::InvalidSignature)
    );
}

#[test]
fn secrets_can_be_given_as_owned_strings() {
    let secrets: Vec<String> = vec![NEW.to_owned(), SECRET.to_owned()];
    assert!(Webhook::from_secrets(&secrets).is_ok());
    assert!(Webhook::from_secrets(secrets).is_ok());
}

#[test]
fn empty_list_of_secrets_is_refused() {
    let none: [&str; 0] = [];
    assert_eq!(
        Webhook::from_secrets(none).unwrap_err(),
        WebhookError::InvalidSecret(SecretError::NoSecrets)
    );
}

#[test]
fn one_bad_secret_in_the_list_refuses_the_whole_list() {
    assert_eq!(
        Webhook::from_secrets([NEW, "whsec_%%%"]).unwrap_err(),
        WebhookError::InvalidSecret(SecretError::Base64)
    );
}
