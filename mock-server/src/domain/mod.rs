//! The service's rules as plain Rust, with no HTTP in them: each rule of the
//! service document lives in one place here, and routes only call it.

pub mod address;
pub mod auth;
pub mod billing;
pub mod catalog;
pub mod fault;
pub mod file;
pub mod generation;
pub mod idempotency;
pub mod ledger;
pub mod moderation;
pub mod money;
pub mod outcome;
pub mod persist;
pub mod rate_limit;
pub mod refusal;
pub mod requisites;
pub mod user;
pub mod webhook;

#[cfg(test)]
mod contract_sets;

/// A clean-up that runs at most once a minute of the mock's clock, so that
/// keeping a map bounded costs no scan per request.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct EveryMinute(Option<chrono::DateTime<chrono::Utc>>);

impl EveryMinute {
    /// Whether the clean-up is due at `now`; if so, it counts as done.
    pub fn due(&mut self, now: chrono::DateTime<chrono::Utc>) -> bool {
        if self
            .0
            .is_some_and(|at| now < at + chrono::Duration::seconds(60))
        {
            return false;
        }
        self.0 = Some(now);
        true
    }
}

/// Takes the oldest of `items` (kept oldest first) off while `past(how many
/// are kept, the oldest's time)` says so, handing each to `forget`: how every
/// bounded record of the mock is trimmed.
pub fn forget_oldest<T>(
    items: &mut std::collections::VecDeque<T>,
    at: impl Fn(&T) -> chrono::DateTime<chrono::Utc>,
    past: impl Fn(usize, chrono::DateTime<chrono::Utc>) -> bool,
    mut forget: impl FnMut(T),
) {
    while let Some(oldest) = items.front()
        && past(items.len(), at(oldest))
        && let Some(oldest) = items.pop_front()
    {
        forget(oldest);
    }
}

/// The maps of the store: every request looks keys up in several of them, and
/// foldhash hashes a UUID or a short string several times faster than SipHash.
/// Seeded per map, as the standard one is.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Users are identified by a UUID.
pub type UserId = uuid::Uuid;
