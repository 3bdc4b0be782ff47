//! Secrets and keys: parsing their text forms and computing signatures.

use std::fmt;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use hmac::{Hmac, Mac as _};
use sha2::Sha256;

use crate::SecretError;

pub(crate) const SECRET_PREFIX: &str = "whsec_";
pub(crate) const SIGNING_KEY_PREFIX: &str = "whsk_";
pub(crate) const PUBLIC_KEY_PREFIX: &str = "whpk_";

/// Secrets are typed or pasted by people, and some tools drop the `=` padding, so
/// both forms are accepted. Signatures, which machines write, are decoded strictly.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One key of a [`Webhook`](crate::Webhook).
#[derive(Clone)]
pub(crate) enum Key {
    /// The HMAC state after absorbing the key: cloning it skips the two key blocks
    /// that a fresh `Hmac::new` hashes for every message.
    Hmac(Hmac<Sha256>),
    #[cfg(feature = "ed25519")]
    Ed25519Signing(ed25519_dalek::SigningKey),
    #[cfg(feature = "ed25519")]
    Ed25519Public(ed25519_dalek::VerifyingKey),
}

impl Key {
    /// Reads a secret in any of the spec's text forms; the prefix picks the scheme,
    /// as the spec intends ("allows implementations to use the correct scheme without
    /// additional configuration"). A bare base64 string is an HMAC secret, as in the
    /// reference crate.
    pub(crate) fn parse(secret: &str) -> Result<Self, SecretError> {
        // Secrets read from files and environment variables often end in a newline.
        let secret = secret.trim();
        if let Some(encoded) = secret.strip_prefix(SIGNING_KEY_PREFIX) {
            return Self::ed25519_signing(encoded);
        }
        if let Some(encoded) = secret.strip_prefix(PUBLIC_KEY_PREFIX) {
            return Self::ed25519_public(encoded);
        }
        let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
        Self::hmac(&decode(encoded)?)
    }

    pub(crate) fn hmac(key: &[u8]) -> Result<Self, SecretError> {
        if key.is_empty() {
            return Err(SecretError::Empty);
        }
        // HMAC takes keys of any length (long ones are hashed first), so this only
        // fails if the hmac crate changes its contract.
        let mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| SecretError::Empty)?;
        Ok(Self::Hmac(mac))
    }

    #[cfg(not(feature = "ed25519"))]
    fn ed25519_signing(_: &str) -> Result<Self, SecretError> {
        Err(SecretError::Ed25519Disabled(SIGNING_KEY_PREFIX))
    }

    #[cfg(not(feature = "ed25519"))]
    fn ed25519_public(_: &str) -> Result<Self, SecretError> {
        Err(SecretError::Ed25519Disabled(PUBLIC_KEY_PREFIX))
    }

    /// A `whsk_` key is either the 32-byte seed or, as Svix writes it, the 64-byte
    /// seed followed by its public key.
    #[cfg(feature = "ed25519")]
    fn ed25519_signing(encoded: &str) -> Result<Self, SecretError> {
        use ed25519_dalek::SigningKey;

        let bytes = decode(encoded)?;
        let key = if let Ok(seed) = <&[u8; 32]>::try_from(bytes.as_slice()) {
            SigningKey::from_bytes(seed)
        } else if let Ok(pair) = <&[u8; 64]>::try_from(bytes.as_slice()) {
            SigningKey::from_keypair_bytes(pair).map_err(|_| SecretError::InvalidEd25519Key)?
        } else {
            return Err(SecretError::KeyLength {
                kind: "secret",
                expected: "32 or 64",
                found: bytes.len(),
            });
        };
        Ok(Self::Ed25519Signing(key))
    }

    #[cfg(feature = "ed25519")]
    fn ed25519_public(encoded: &str) -> Result<Self, SecretError> {
        let bytes = decode(encoded)?;
        let bytes =
            <&[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| SecretError::KeyLength {
                kind: "public",
                expected: "32",
                found: bytes.len(),
            })?;
        let key = ed25519_dalek::VerifyingKey::from_bytes(bytes)
            .map_err(|_| SecretError::InvalidEd25519Key)?;
        Ok(Self::Ed25519Public(key))
    }

    /// The `whpk_` text of this key's public half, if it has one.
    #[cfg(feature = "ed25519")]
    pub(crate) fn public_key(&self) -> Option<String> {
        let key = match self {
            Self::Hmac(_) => return None,
            Self::Ed25519Signing(key) => key.verifying_key(),
            Self::Ed25519Public(key) => *key,
        };
        Some(format!(
            "{PUBLIC_KEY_PREFIX}{}",
            STANDARD.encode(key.as_bytes())
        ))
    }

    /// Appends this key's `<version>,<base64>` entry for the signed content to `out`,
    /// or returns `false` when the key cannot sign (a public key).
    pub(crate) fn sign_into(&self, content: &SignedContent<'_>, out: &mut String) -> bool {
        match self {
            Self::Hmac(mac) => {
                out.push_str("v1,");
                STANDARD.encode_string(content.hmac(mac), out);
                true
            }
            #[cfg(feature = "ed25519")]
            Self::Ed25519Signing(key) => {
                use ed25519_dalek::Signer as _;
                let signature = key.sign(&content.to_vec());
                out.push_str("v1a,");
                STANDARD.encode_string(signature.to_bytes(), out);
                true
            }
            #[cfg(feature = "ed25519")]
            Self::Ed25519Public(_) => false,
        }
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hmac(_) => f.write_str("v1 hmac-sha256 secret (redacted)"),
            #[cfg(feature = "ed25519")]
            Self::Ed25519Signing(_) => f.write_str("v1a ed25519 secret key (redacted)"),
            // A public key is public: showing it helps tell keys apart in logs.
            #[cfg(feature = "ed25519")]
            Self::Ed25519Public(_) => match self.public_key() {
                Some(text) => write!(f, "v1a ed25519 public key {text}"),
                None => Ok(()),
            },
        }
    }
}

fn decode(encoded: &str) -> Result<Vec<u8>, SecretError> {
    let bytes = LENIENT.decode(encoded).map_err(|_| SecretError::Base64)?;
    if bytes.is_empty() {
        return Err(SecretError::Empty);
    }
    Ok(bytes)
}

/// `<webhook-id>.<webhook-timestamp>.<body>`, kept as its three parts so it can be
/// fed to a MAC without first being copied into one buffer.
pub(crate) struct SignedContent<'a> {
    pub(crate) id: &'a [u8],
    pub(crate) timestamp: &'a [u8],
    pub(crate) payload: &'a [u8],
}

impl SignedContent<'_> {
    pub(crate) fn hmac(&self, keyed: &Hmac<Sha256>) -> [u8; 32] {
        let mut mac = keyed.clone();
        mac.update(self.id);
        mac.update(b".");
        mac.update(self.timestamp);
        mac.update(b".");
        mac.update(self.payload);
        mac.finalize().into_bytes().into()
    }

    /// The ed25519 API takes the message as one slice.
    #[cfg(feature = "ed25519")]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let mut all =
            Vec::with_capacity(self.id.len() + self.timestamp.len() + self.payload.len() + 2);
        all.extend_from_slice(self.id);
        all.push(b'.');
        all.extend_from_slice(self.timestamp);
        all.push(b'.');
        all.extend_from_slice(self.payload);
        all
    }
}
