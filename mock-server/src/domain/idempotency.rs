//! `Idempotency-Key` on create (rules 7 and 8).
//!
//! Keys are per user and kept 24 hours (the contract's design). A key whose
//! first request failed is released, so the client may retry with it.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::{FastMap, UserId};

const KEPT_HOURS: i64 = 24;

/// The longest `Idempotency-Key` taken (the contract's design: 1 to 255 characters).
pub const MAX_KEY_LEN: usize = 255;

/// A key outside those bounds, or not text: 400 at the header.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize,
)]
#[error("Idempotency-Key must be 1 to {MAX_KEY_LEN} visible ASCII characters")]
pub struct BadKey;

/// `key` as an `Idempotency-Key`, if it is usable as one (`None`: not text).
pub fn key(key: Option<&str>) -> Result<&str, BadKey> {
    key.filter(|k| (1..=MAX_KEY_LEN).contains(&k.len()))
        .ok_or(BadKey)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Entry {
    InFlight,
    Done {
        generation_id: Uuid,
        at: DateTime<Utc>,
    },
}

/// What an incoming request with a key must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Begin {
    /// First use: go on, then `finish` or `release`.
    Fresh,
    /// Answer with this existing generation; no new task, no charge.
    Existing(Uuid),
    /// The first request with this key is still executing: 409.
    InFlight,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Idempotency {
    keys: FastMap<(UserId, String), Entry>,
    pruned: super::EveryMinute,
}

impl Idempotency {
    pub fn begin(&mut self, user_id: UserId, key: &str, now: DateTime<Utc>) -> Begin {
        let slot = (user_id, key.to_owned());
        match self.keys.get(&slot) {
            Some(Entry::InFlight) => Begin::InFlight,
            Some(Entry::Done { generation_id, at }) if now < *at + Duration::hours(KEPT_HOURS) => {
                Begin::Existing(*generation_id)
            }
            _ => {
                self.keys.insert(slot, Entry::InFlight);
                Begin::Fresh
            }
        }
    }

    pub fn finish(&mut self, user_id: UserId, key: &str, generation_id: Uuid, now: DateTime<Utc>) {
        self.keys.insert(
            (user_id, key.to_owned()),
            Entry::Done {
                generation_id,
                at: now,
            },
        );
    }

    /// Forgets a key whose generation is gone, so that it starts afresh.
    pub fn release_done(&mut self, user_id: UserId, key: &str) {
        let slot = (user_id, key.to_owned());
        if matches!(self.keys.get(&slot), Some(Entry::Done { .. })) {
            self.keys.remove(&slot);
        }
    }

    /// Forgets keys past their 24 hours, so the map does not grow without
    /// bound; at most once a minute of the clock.
    pub fn prune(&mut self, now: DateTime<Utc>) {
        if !self.pruned.due(now) {
            return;
        }
        self.keys.retain(|_, entry| match entry {
            Entry::InFlight => true,
            Entry::Done { at, .. } => now < *at + Duration::hours(KEPT_HOURS),
        });
    }

    /// Frees a key whose request ended without creating anything.
    pub fn release(&mut self, user_id: UserId, key: &str) {
        if self.keys.get(&(user_id, key.to_owned())) == Some(&Entry::InFlight) {
            self.keys.remove(&(user_id, key.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_1_to_255_characters_of_text() {
        assert_eq!(key(Some("k")), Ok("k"));
        assert_eq!(key(Some(&"k".repeat(MAX_KEY_LEN))).map(str::len), Ok(255));
        assert_eq!(key(Some(&"k".repeat(MAX_KEY_LEN + 1))), Err(BadKey));
        assert_eq!(key(Some("")), Err(BadKey));
        assert_eq!(key(None), Err(BadKey), "a header that is not text");
    }

    #[test]
    fn same_key_returns_the_generation_of_the_first_request() {
        let mut keys = Idempotency::default();
        let (user, now, id) = (UserId::new_v4(), Utc::now(), Uuid::new_v4());
        assert_eq!(keys.begin(user, "k", now), Begin::Fresh);
        assert_eq!(keys.begin(user, "k", now), Begin::InFlight);
        keys.finish(user, "k", id, now);
        assert_eq!(keys.begin(user, "k", now), Begin::Existing(id));
    }

    #[test]
    fn keys_belong_to_one_user() {
        let mut keys = Idempotency::default();
        let now = Utc::now();
        keys.begin(UserId::new_v4(), "k", now);
        assert_eq!(keys.begin(UserId::new_v4(), "k", now), Begin::Fresh);
    }

    #[test]
    fn a_released_key_can_be_used_again_and_old_keys_expire() {
        let mut keys = Idempotency::default();
        let (user, now) = (UserId::new_v4(), Utc::now());
        keys.begin(user, "k", now);
        keys.release(user, "k");
        assert_eq!(keys.begin(user, "k", now), Begin::Fresh);
        keys.finish(user, "k", Uuid::new_v4(), now);
        assert_eq!(
            keys.begin(user, "k", now + Duration::hours(25)),
            Begin::Fresh
        );
    }
}
