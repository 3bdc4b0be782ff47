//! API keys: `<prefix>_live_<public>_<secret>` (service document, Authentication 3).
//!
//! Keys are stored hashed and found by their public part; the secret part is
//! compared in constant time, so neither the store nor the timing of a refusal
//! tells anything about a valid secret.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::UserId;

/// The fixed prefix of every key this mock issues.
pub const KEY_PREFIX: &str = "mg";
const LIVE: &str = "_live_";
const PUBLIC_LEN: usize = 12;
const SECRET_LEN: usize = 32;

/// What a key may do. Scopes of real keys are not shown in the service
/// document; the mock has a read-only scope so that 403 can be exercised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every operation.
    #[default]
    Full,
    /// Reads only: writes answer 403.
    ReadOnly,
}

/// A key as stored: never the secret itself.
#[derive(Clone, serde::Deserialize, serde::Serialize)]
pub struct StoredKey {
    pub user_id: UserId,
    pub scope: Scope,
    pub revoked: bool,
    secret_hash: [u8; 32],
}

impl std::fmt::Debug for StoredKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredKey")
            .field("user_id", &self.user_id)
            .field("scope", &self.scope)
            .field("revoked", &self.revoked)
            .finish_non_exhaustive()
    }
}

/// A newly issued key: the full value is shown once, to its owner.
pub struct IssuedKey {
    pub public: String,
    pub full: String,
    pub stored: StoredKey,
}

impl std::fmt::Debug for IssuedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn random_part(len: usize) -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// Issues a fresh key for `user_id`.
pub fn issue(user_id: UserId, scope: Scope) -> IssuedKey {
    let public = random_part(PUBLIC_LEN);
    let secret = random_part(SECRET_LEN);
    IssuedKey {
        full: format!("{KEY_PREFIX}{LIVE}{public}_{secret}"),
        stored: StoredKey {
            user_id,
            scope,
            revoked: false,
            secret_hash: hash(&secret),
        },
        public,
    }
}

/// Stores a key whose full value is given (the demo user's key, stable across
/// resets). `None` when the value is not of the key form.
pub fn adopt(full: &str, user_id: UserId) -> Option<(String, StoredKey)> {
    let (public, secret) = parse(full)?;
    Some((
        public.to_owned(),
        StoredKey {
            user_id,
            scope: Scope::Full,
            revoked: false,
            secret_hash: hash(secret),
        },
    ))
}

/// Splits a key into its public and secret parts; `None` when malformed.
pub fn parse(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(KEY_PREFIX)?.strip_prefix(LIVE)?;
    let (public, secret) = rest.split_once('_')?;
    let well_formed = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
    (well_formed(public) && well_formed(secret)).then_some((public, secret))
}

impl StoredKey {
    /// Whether `secret` is this key's secret, compared in constant time.
    pub fn matches(&self, secret: &str) -> bool {
        self.secret_hash.ct_eq(&hash(secret)).into()
    }
}

/// Why a request was not authenticated (401) or not allowed (403), as
/// Authentication rules 4 and 5 say; each with the message answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthRefusal {
    /// No `Authorization` header.
    Missing,
    /// A header that is not text.
    Unreadable,
    /// Another scheme than `Bearer`.
    NotBearer,
    /// Not shaped like a key.
    Malformed,
    /// The right key, revoked.
    Revoked,
    /// No such key.
    Invalid,
    /// A read-only key asked to write (403).
    ReadOnly,
}

impl AuthRefusal {
    /// The message answered.
    pub fn message(self) -> &'static str {
        match self {
            Self::Missing => "Missing Authorization header; send 'Authorization: Bearer <API_KEY>'",
            Self::Unreadable => "Authorization header is not readable text",
            Self::NotBearer => "Authorization must be 'Bearer <API_KEY>'",
            Self::Malformed => "Malformed API key; keys look like mg_live_<public>_<secret>",
            Self::Revoked => "This API key was revoked",
            Self::Invalid => "Invalid API key",
            Self::ReadOnly => "This API key may only read; use a key with full access",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_key_has_the_documented_form_and_verifies() {
        let user = UserId::new_v4();
        let key = issue(user, Scope::Full);
        assert!(key.full.starts_with("mg_live_"));
        let (public, secret) = parse(&key.full).expect("well formed");
        assert_eq!(public, key.public);
        assert!(key.stored.matches(secret));
        assert!(!key.stored.matches("wrong"));
    }

    #[test]
    fn malformed_keys_are_rejected() {
        for bad in [
            "",
            "mg_live_",
            "mg_test_abc_def",
            "xx_live_abc_def",
            "mg_live_abc",
            "mg_live_abc_",
            "mg_live_a-b_c",
        ] {
            assert!(parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn stored_key_debug_shows_no_secret_material() {
        let key = issue(UserId::new_v4(), Scope::Full);
        let (_, secret) = parse(&key.full).expect("well formed");
        let shown = format!("{:?}", key.stored);
        assert!(!shown.contains(secret));
        assert!(!shown.contains("secret_hash"));
    }
}
