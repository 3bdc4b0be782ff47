//! The crate's errors.
//!
//! `WebhookError` keeps the name and the variants of `standardwebhooks::WebhookError`
//! (1.0.1), so a `match` written for that crate compiles against this one.

/// Why signing or verifying a webhook failed.
///
/// The variants and their names are those of the `standardwebhooks` crate, so code
/// written for it keeps compiling; the payloads say more.
///
/// ```
/// use webhook_verify::{Webhook, WebhookError};
///
/// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
/// let err = wh
///     .verify_parts_at(b"{}", "msg_1", "1700000000", "v1,bm9wZQ==", 1_700_000_000)
///     .unwrap_err();
/// assert_eq!(err, WebhookError::InvalidSignature);
/// # Ok::<(), WebhookError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// The `webhook-timestamp` header is not an integer number of seconds that fits
    /// in an `i64`.
    #[error("the webhook-timestamp header is not a Unix time in seconds")]
    InvalidTimestamp,

    /// The secret or key could not be used; the inner error says why.
    #[error("invalid secret: {0}")]
    InvalidSecret(#[from] SecretError),

    /// The header named (one of [`HEADER_WEBHOOK_ID`](crate::HEADER_WEBHOOK_ID),
    /// [`HEADER_WEBHOOK_TIMESTAMP`](crate::HEADER_WEBHOOK_TIMESTAMP)) appears more than
    /// once, so which value was signed is ambiguous.
    #[error("header {0} appears more than once")]
    InvalidHeader(&'static str),

    /// The timestamp is further in the past than the tolerance allows: the message may
    /// be a replay.
    #[error("signature timestamp is older than the tolerance allows")]
    TimestampTooOldError,

    /// The timestamp is further in the future than the tolerance allows.
    #[error("signature timestamp is further in the future than the tolerance allows")]
    FutureTimestampError,

    /// The header named (one of [`HEADER_WEBHOOK_ID`](crate::HEADER_WEBHOOK_ID),
    /// [`HEADER_WEBHOOK_TIMESTAMP`](crate::HEADER_WEBHOOK_TIMESTAMP),
    /// [`HEADER_WEBHOOK_SIGNATURE`](crate::HEADER_WEBHOOK_SIGNATURE)) is absent.
    #[error("missing header {0}")]
    MissingHeader(&'static str),

    /// No entry of the `webhook-signature` header matches any of the keys.
    #[error("no signature matches")]
    InvalidSignature,

    /// Never returned: this crate signs any bytes, UTF-8 or not. The variant stays so
    /// that code written for `standardwebhooks`, whose `sign` rejects non-UTF-8
    /// payloads, still compiles.
    #[error("payload invalid")]
    InvalidPayload,
}

/// Why a secret or key was rejected.
///
/// It never carries any part of the secret, so it can be logged.
///
/// ```
/// use webhook_verify::{SecretError, Webhook, WebhookError};
///
/// let err = Webhook::new("whsec_").unwrap_err();
/// assert_eq!(err, WebhookError::InvalidSecret(SecretError::Empty));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The key is empty; an HMAC with an empty key authenticates nothing.
    #[error("the key is empty")]
    Empty,

    /// The text after the prefix is not standard base64.
    #[error("the key is not valid base64")]
    Base64,

    /// No secret was given to [`Webhook::from_secrets`](crate::Webhook::from_secrets).
    #[error("no secret was given")]
    NoSecrets,

    /// A `whsk_` or `whpk_` key was given but the crate was built without its `ed25519`
    /// feature.
    #[error("{0} keys need the `ed25519` feature of webhook-verify")]
    Ed25519Disabled(&'static str),

    /// An ed25519 key decodes to a length other than the format's (32 bytes for
    /// `whpk_`, 32 or 64 for `whsk_`).
    #[error("an ed25519 {kind} key must be {expected} bytes long, not {found}")]
    KeyLength {
        /// `"secret"` or `"public"`.
        kind: &'static str,
        /// The lengths allowed.
        expected: &'static str,
        /// The decoded length.
        found: usize,
    },

    /// The bytes are not an ed25519 key: a public key that is not a curve point, or a
    /// 64-byte secret key whose second half is not the public key of its first.
    #[error("the bytes are not a valid ed25519 key")]
    InvalidEd25519Key,

    /// Signing needs a secret, and every key given is a `whpk_` public key.
    #[error("a whpk_ public key can verify but not sign")]
    PublicKeyCannotSign,
}
