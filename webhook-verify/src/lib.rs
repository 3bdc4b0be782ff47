#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod header;
mod key;

use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use subtle::ConstantTimeEq as _;

pub use crate::error::{SecretError, WebhookError};
use crate::header::{Scheme, TIMESTAMP_BUFFER};
use crate::key::{Key, SignedContent};

/// Name of the header that carries the message id.
///
/// ```
/// assert_eq!(webhook_verify::HEADER_WEBHOOK_ID, "webhook-id");
/// ```
pub const HEADER_WEBHOOK_ID: &str = "webhook-id";

/// Name of the header that carries the space-separated signatures.
///
/// ```
/// assert_eq!(webhook_verify::HEADER_WEBHOOK_SIGNATURE, "webhook-signature");
/// ```
pub const HEADER_WEBHOOK_SIGNATURE: &str = "webhook-signature";

/// Name of the header that carries the Unix time, in seconds, of signing.
///
/// ```
/// assert_eq!(webhook_verify::HEADER_WEBHOOK_TIMESTAMP, "webhook-timestamp");
/// ```
pub const HEADER_WEBHOOK_TIMESTAMP: &str = "webhook-timestamp";

/// How far a `webhook-timestamp` may be from the receiver's clock, either way, unless
/// [`Webhook::with_tolerance`] says otherwise: the spec's 5 minutes.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(webhook_verify::DEFAULT_TOLERANCE, Duration::from_secs(300));
/// ```
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// Signs and verifies webhooks with one or more keys.
///
/// Build it once (at start-up) and share it: the keys are prepared when it is built,
/// so each verification only hashes the message. It is `Clone`, `Send` and `Sync`.
/// Its `Debug` output names the kinds of keys but never shows a secret.
///
/// ```
/// use webhook_verify::Webhook;
///
/// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
/// let signature = wh.sign("msg_1", 1_700_000_000, b"{}")?;
/// wh.verify_parts_at(b"{}", "msg_1", "1700000000", &signature, 1_700_000_000)?;
/// # Ok::<(), webhook_verify::WebhookError>(())
/// ```
#[derive(Clone)]
pub struct Webhook {
    /// Never empty: every constructor rejects an empty list.
    keys: Vec<Key>,
    tolerance_secs: u64,
}

impl fmt::Debug for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhook")
            .field("keys", &self.keys)
            .field("tolerance", &self.tolerance())
            .finish()
    }
}

impl Webhook {
    /// Reads a secret: `whsec_` followed by base64 (the prefix may be left out), or,
    /// with the `ed25519` feature, a `whsk_` secret key or a `whpk_` public key.
    ///
    /// Surrounding whitespace is ignored and base64 padding is optional. An empty key
    /// is refused.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let with_prefix = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let without = Webhook::new("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// assert_eq!(with_prefix.sign("id", 1, b"")?, without.sign("id", 1, b"")?);
    /// assert!(Webhook::new("whsec_not base64!").is_err());
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn new(secret: &str) -> Result<Self, WebhookError> {
        Ok(Self::with_keys(vec![Key::parse(secret)?]))
    }

    /// Uses raw bytes as the HMAC key, for secrets that are not kept in base64.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let raw = Webhook::from_bytes(b"a shared secret of 24+ bytes".to_vec())?;
    /// assert!(Webhook::from_bytes(Vec::new()).is_err());
    /// # drop(raw);
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn from_bytes(secret: Vec<u8>) -> Result<Self, WebhookError> {
        Ok(Self::with_keys(vec![Key::hmac(&secret)?]))
    }

    /// Uses several secrets at once, for rotation: [`sign`](Self::sign) signs with each
    /// (in the order given) and verification accepts a signature by any of them.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    /// let new = "whsec_5XhVnU1OdcTTkDYG5AEUaIVhBZ5HMvXyMUJOQ/nyEcA=";
    /// let sender = Webhook::from_secrets([new, old])?;
    /// let header = sender.sign("msg_1", 1_700_000_000, b"{}")?;
    /// assert_eq!(header.split(' ').count(), 2);
    ///
    /// // A receiver that still only knows the old secret accepts it.
    /// Webhook::new(old)?.verify_parts_at(b"{}", "msg_1", "1700000000", &header, 1_700_000_000)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn from_secrets<I>(secrets: I) -> Result<Self, WebhookError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let keys = secrets
            .into_iter()
            .map(|secret| Key::parse(secret.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        if keys.is_empty() {
            return Err(SecretError::NoSecrets.into());
        }
        Ok(Self::with_keys(keys))
    }

    fn with_keys(keys: Vec<Key>) -> Self {
        Self {
            keys,
            tolerance_secs: DEFAULT_TOLERANCE.as_secs(),
        }
    }

    /// Sets how far, in either direction, `webhook-timestamp` may be from the clock.
    /// Whole seconds count; [`DEFAULT_TOLERANCE`] is 5 minutes.
    ///
    /// ```
    /// use std::time::Duration;
    /// use webhook_verify::{Webhook, WebhookError};
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?
    ///     .with_tolerance(Duration::from_secs(30));
    /// let sig = wh.sign("msg_1", 1_000, b"{}")?;
    /// assert_eq!(wh.verify_parts_at(b"{}", "msg_1", "1000", &sig, 1_030), Ok(()));
    /// assert_eq!(
    ///     wh.verify_parts_at(b"{}", "msg_1", "1000", &sig, 1_031),
    ///     Err(WebhookError::TimestampTooOldError)
    /// );
    /// # Ok::<(), WebhookError>(())
    /// ```
    #[must_use]
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance_secs = tolerance.as_secs();
        self
    }

    /// The tolerance in force.
    ///
    /// ```
    /// use webhook_verify::{DEFAULT_TOLERANCE, Webhook};
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// assert_eq!(wh.tolerance(), DEFAULT_TOLERANCE);
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn tolerance(&self) -> Duration {
        Duration::from_secs(self.tolerance_secs)
    }

    /// Makes a fresh secret: `whsec_` and the base64 of 32 random bytes from the
    /// operating system's cryptographic generator (by way of `rand`'s thread-local
    /// generator, which it seeds).
    ///
    /// # Panics
    ///
    /// If the operating system cannot provide random bytes.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let secret = Webhook::generate_secret();
    /// assert!(secret.starts_with("whsec_"));
    /// assert_ne!(secret, Webhook::generate_secret());
    /// Webhook::new(&secret)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn generate_secret() -> String {
        let bytes: [u8; 32] = rand::random();
        format!("{}{}", key::SECRET_PREFIX, STANDARD.encode(bytes))
    }

    /// Makes a fresh ed25519 secret key: `whsk_` and the base64 of the 32-byte seed
    /// followed by the 32-byte public key (the form Svix writes). Give receivers its
    /// public key, from [`public_keys`](Self::public_keys).
    ///
    /// # Panics
    ///
    /// If the operating system cannot provide random bytes.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let secret = Webhook::generate_ed25519_key();
    /// assert!(secret.starts_with("whsk_"));
    /// let sender = Webhook::new(&secret)?;
    /// let public = sender.public_keys();
    /// assert!(public[0].starts_with("whpk_"));
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    #[cfg(feature = "ed25519")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ed25519")))]
    pub fn generate_ed25519_key() -> String {
        let seed: [u8; 32] = rand::random();
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        format!(
            "{}{}",
            key::SIGNING_KEY_PREFIX,
            STANDARD.encode(key.to_keypair_bytes())
        )
    }

    /// The `whpk_` public keys of this webhook's ed25519 keys, in order; HMAC secrets
    /// have none.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let sender = Webhook::new(&Webhook::generate_ed25519_key())?;
    /// let receiver = Webhook::new(&sender.public_keys()[0])?;
    /// let sig = sender.sign("msg_1", 1_700_000_000, b"{}")?;
    /// receiver.verify_parts_at(b"{}", "msg_1", "1700000000", &sig, 1_700_000_000)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    #[cfg(feature = "ed25519")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ed25519")))]
    pub fn public_keys(&self) -> Vec<String> {
        self.keys.iter().filter_map(Key::public_key).collect()
    }

    /// Signs a message and returns the value of the `webhook-signature` header: one
    /// `v1,<base64>` entry (or `v1a,` for an ed25519 key) per key that can sign,
    /// separated by spaces.
    ///
    /// Any payload bytes can be signed, UTF-8 or not. Fails only when every key is a
    /// `whpk_` public key.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let header = wh.sign("msg_1", 1_700_000_000, br#"{"type":"task.completed"}"#)?;
    /// assert!(header.starts_with("v1,"));
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn sign(
        &self,
        msg_id: &str,
        timestamp: i64,
        payload: &[u8],
    ) -> Result<String, WebhookError> {
        let mut buf = [0; TIMESTAMP_BUFFER];
        let content = SignedContent {
            id: msg_id.as_bytes(),
            timestamp: header::format_timestamp(timestamp, &mut buf),
            payload,
        };
        let mut out = String::new();
        for key in &self.keys {
            let mark = out.len();
            if !out.is_empty() {
                out.push(' ');
            }
            if !key.sign_into(&content, &mut out) {
                out.truncate(mark);
            }
        }
        if out.is_empty() {
            return Err(SecretError::PublicKeyCannotSign.into());
        }
        Ok(out)
    }

    /// Verifies a webhook from its body and headers against the system clock.
    ///
    /// The body must be the raw bytes received: re-serialised JSON will not match.
    /// Passes when any `v1` (or, with the `ed25519` feature, `v1a`) entry of
    /// `webhook-signature` matches any key and `webhook-timestamp` is within the
    /// [tolerance](Self::with_tolerance) of now. Other versions are skipped.
    ///
    /// ```
    /// use http::HeaderMap;
    /// use std::time::{SystemTime, UNIX_EPOCH};
    /// use webhook_verify::Webhook;
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    /// let body = br#"{"type":"task.completed"}"#;
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("webhook-id", "msg_1".parse().unwrap());
    /// headers.insert("webhook-timestamp", now.into());
    /// headers.insert("webhook-signature", wh.sign("msg_1", now, body)?.parse().unwrap());
    ///
    /// wh.verify(body, &headers)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn verify(&self, payload: &[u8], headers: &http::HeaderMap) -> Result<(), WebhookError> {
        self.verify_at(payload, headers, unix_now())
    }

    /// [`verify`](Self::verify) against a given clock, `now` in Unix seconds: for tests,
    /// and for callers whose clock is not the system's.
    ///
    /// ```
    /// use http::HeaderMap;
    /// use webhook_verify::{Webhook, WebhookError};
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let mut headers = HeaderMap::new();
    /// headers.insert("webhook-id", "msg_1".parse().unwrap());
    /// headers.insert("webhook-timestamp", "1700000000".parse().unwrap());
    /// headers.insert("webhook-signature", wh.sign("msg_1", 1_700_000_000, b"{}")?.parse().unwrap());
    ///
    /// assert_eq!(wh.verify_at(b"{}", &headers, 1_700_000_060), Ok(()));
    /// assert_eq!(
    ///     wh.verify_at(b"{}", &headers, 1_700_000_000 + 301),
    ///     Err(WebhookError::TimestampTooOldError)
    /// );
    /// # Ok::<(), WebhookError>(())
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn verify_at(
        &self,
        payload: &[u8],
        headers: &http::HeaderMap,
        now: i64,
    ) -> Result<(), WebhookError> {
        self.verify_header_map(payload, headers, Some(now))
    }

    /// [`verify`](Self::verify) without the timestamp's tolerance check, for replaying
    /// stored messages. It still has to be an integer: it is part of what was signed.
    ///
    /// Without the check, a captured message can be replayed at any time; prefer
    /// `verify` for live traffic.
    ///
    /// ```
    /// use http::HeaderMap;
    /// use webhook_verify::Webhook;
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let mut headers = HeaderMap::new();
    /// headers.insert("webhook-id", "msg_1".parse().unwrap());
    /// headers.insert("webhook-timestamp", "1000".parse().unwrap());
    /// headers.insert("webhook-signature", wh.sign("msg_1", 1000, b"{}")?.parse().unwrap());
    ///
    /// wh.verify_ignoring_timestamp(b"{}", &headers)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn verify_ignoring_timestamp(
        &self,
        payload: &[u8],
        headers: &http::HeaderMap,
    ) -> Result<(), WebhookError> {
        self.verify_header_map(payload, headers, None)
    }

    /// Verifies a webhook from the values of its three headers, as plain strings,
    /// against the system clock: for callers that do not use the `http` crate. The
    /// rules are those of `verify`: any matching entry passes, and the timestamp must
    /// be within the [tolerance](Self::with_tolerance).
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let now = std::time::SystemTime::now()
    ///     .duration_since(std::time::UNIX_EPOCH)
    ///     .unwrap()
    ///     .as_secs() as i64;
    /// let signature = wh.sign("msg_1", now, b"{}")?;
    ///
    /// wh.verify_parts(b"{}", "msg_1", &now.to_string(), &signature)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn verify_parts(
        &self,
        payload: &[u8],
        msg_id: &str,
        timestamp: &str,
        signature: &str,
    ) -> Result<(), WebhookError> {
        self.verify_parts_at(payload, msg_id, timestamp, signature, unix_now())
    }

    /// [`verify_parts`](Self::verify_parts) against a given clock, `now` in Unix seconds.
    ///
    /// ```
    /// use webhook_verify::{Webhook, WebhookError};
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let signature = wh.sign("msg_1", 1_700_000_000, b"{}")?;
    /// assert_eq!(
    ///     wh.verify_parts_at(b"{}", "msg_1", "1700000000", &signature, 1_699_999_000),
    ///     Err(WebhookError::FutureTimestampError)
    /// );
    /// # Ok::<(), WebhookError>(())
    /// ```
    pub fn verify_parts_at(
        &self,
        payload: &[u8],
        msg_id: &str,
        timestamp: &str,
        signature: &str,
        now: i64,
    ) -> Result<(), WebhookError> {
        self.verify_values(
            payload,
            msg_id.as_bytes(),
            timestamp.as_bytes(),
            Some(now),
            || std::iter::once(signature.as_bytes()),
        )
    }

    /// [`verify_parts`](Self::verify_parts) without the tolerance check, for replaying
    /// stored messages. A captured message then passes at any time: prefer
    /// `verify_parts` for live traffic.
    ///
    /// ```
    /// use webhook_verify::Webhook;
    ///
    /// let wh = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let signature = wh.sign("msg_1", 1000, b"{}")?;
    /// wh.verify_parts_ignoring_timestamp(b"{}", "msg_1", "1000", &signature)?;
    /// # Ok::<(), webhook_verify::WebhookError>(())
    /// ```
    pub fn verify_parts_ignoring_timestamp(
        &self,
        payload: &[u8],
        msg_id: &str,
        timestamp: &str,
        signature: &str,
    ) -> Result<(), WebhookError> {
        self.verify_values(
            payload,
            msg_id.as_bytes(),
            timestamp.as_bytes(),
            None,
            || std::iter::once(signature.as_bytes()),
        )
    }

    #[cfg(feature = "http")]
    fn verify_header_map(
        &self,
        payload: &[u8],
        headers: &http::HeaderMap,
        now: Option<i64>,
    ) -> Result<(), WebhookError> {
        use crate::header::Signatures;

        let found = header::find(headers)?;
        let (id, timestamp) = (found.id, found.timestamp);
        // One instance per case, so that the usual single value is read as simply as
        // the string `verify_parts` is given.
        match found.signatures {
            Signatures::One(value) => {
                self.verify_values(payload, id, timestamp, now, || std::iter::once(value))
            }
            Signatures::Many(values) => self.verify_values(payload, id, timestamp, now, || {
                values.iter().map(http::HeaderValue::as_bytes)
            }),
        }
    }

    /// The one verification routine behind every public `verify*`; `now` is `None`
    /// when the timestamp is not checked. `signatures` is called once per key, so a
    /// header is walked again rather than copied, and with several HMAC keys an entry
    /// is decoded once per key: decoding takes tens of nanoseconds, while decoding
    /// each entry only once would need every key's MAC first, a whole HMAC per key
    /// even when the first key matches.
    fn verify_values<'h, I>(
        &self,
        payload: &[u8],
        id: &[u8],
        timestamp: &[u8],
        now: Option<i64>,
        signatures: impl Fn() -> I,
    ) -> Result<(), WebhookError>
    where
        I: Iterator<Item = &'h [u8]>,
    {
        let parsed = header::parse_timestamp(timestamp).ok_or(WebhookError::InvalidTimestamp)?;
        if let Some(now) = now {
            self.check_timestamp(parsed.seconds, now)?;
        }

        let mut buf = [0; TIMESTAMP_BUFFER];
        let content = SignedContent {
            id,
            timestamp: parsed.signed_text(timestamp, &mut buf),
            payload,
        };
        // Only entries of the wanted scheme are decoded; the rest are skipped unread.
        let candidates =
            |scheme: Scheme| signatures().flat_map(move |value| header::signatures(value, scheme));

        #[cfg(feature = "ed25519")]
        let mut message: Option<Vec<u8>> = None;
        for key in &self.keys {
            let matched = match key {
                Key::Hmac(keyed) => {
                    // One MAC per key, however many entries the header carries.
                    let expected = content.hmac(keyed);
                    // Early exit on a match reveals only that it matched, which the
                    // caller learns anyway; each comparison itself is constant-time.
                    candidates(Scheme::V1).any(|encoded| {
                        header::decode_mac(encoded)
                            .is_some_and(|candidate| mac_eq(&expected, &candidate))
                    })
                }
                #[cfg(feature = "ed25519")]
                Key::Ed25519Signing(signing) => {
                    let message = message.get_or_insert_with(|| content.to_vec());
                    verify_ed25519(&signing.verifying_key(), message, candidates(Scheme::V1a))
                }
                #[cfg(feature = "ed25519")]
                Key::Ed25519Public(public) => {
                    let message = message.get_or_insert_with(|| content.to_vec());
                    verify_ed25519(public, message, candidates(Scheme::V1a))
                }
            };
            if matched {
                return Ok(());
            }
        }
        Err(WebhookError::InvalidSignature)
    }

    fn check_timestamp(&self, timestamp: i64, now: i64) -> Result<(), WebhookError> {
        // abs_diff cannot overflow, even between i64::MIN and i64::MAX, unlike the
        // `now - timestamp` of the reference crate.
        if timestamp.abs_diff(now) <= self.tolerance_secs {
            Ok(())
        } else if timestamp < now {
            Err(WebhookError::TimestampTooOldError)
        } else {
            Err(WebhookError::FutureTimestampError)
        }
    }
}

/// Constant-time equality of a computed MAC and a received one. The words'
/// differences are folded with `|`, which has no branch to leak through, and only
/// the result goes through `subtle`: one optimisation barrier instead of the one per
/// element that comparing slices with `ct_eq` costs.
fn mac_eq(expected: &[u8; 32], candidate: &[u8; 32]) -> bool {
    let (expected, _) = expected.as_chunks::<8>();
    let (candidate, _) = candidate.as_chunks::<8>();
    let difference = expected
        .iter()
        .zip(candidate)
        .fold(0, |difference, (a, b)| {
            difference | (u64::from_ne_bytes(*a) ^ u64::from_ne_bytes(*b))
        });
    bool::from(difference.ct_eq(&0))
}

#[cfg(feature = "ed25519")]
fn verify_ed25519<'h>(
    key: &ed25519_dalek::VerifyingKey,
    message: &[u8],
    mut candidates: impl Iterator<Item = &'h [u8]>,
) -> bool {
    candidates.any(|encoded| {
        let Some(bytes) = header::decode_signature(encoded) else {
            return false;
        };
        // verify_strict also refuses malleable signatures and weak keys.
        key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&bytes))
            .is_ok()
    })
}

/// The system clock in Unix seconds: `CLOCK_REALTIME`, what `SystemTime` reads.
/// rustix calls the vDSO directly, skipping libc and the `Duration` that
/// `SystemTime::now().duration_since(UNIX_EPOCH)` builds: a third of the clock's
/// cost, and 2-3 % of verifying a 1 KiB message.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn unix_now() -> i64 {
    rustix::time::clock_gettime(rustix::time::ClockId::Realtime).tv_sec
}

/// The system clock in Unix seconds, saturating instead of failing at the extremes.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn unix_now() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};

    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |secs| -secs),
    }
}
