//! The state file's format, `mediagen-pace/1`, and how its records carry
//! windows and reservations from one process to another.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::slot::{SLOTS, Slot};
use crate::limits::{LimitScope, RateLimit};
use crate::rate_limit::window::Window;

/// The format of the state file; another version of the SDK that writes
/// another format names its file after it, so the two never fight over one.
pub(super) const FORMAT: &str = "mediagen-pace/1";
pub(super) const STATE_FILE: &str = "pace-1.json";
/// The service's longest window is ten minutes: a reset further off than a
/// day is no answer of it.
const FARTHEST_RESET: Duration = Duration::from_secs(24 * 60 * 60);

/// What one process has under way against a service.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) in_flight: HashMap<LimitScope, u32>,
    pub(super) waiters: u32,
}

impl Counts {
    pub(super) fn in_flight(&self, scope: LimitScope) -> u32 {
        self.in_flight.get(&scope).copied().unwrap_or(0)
    }

    pub(super) fn add(&mut self, other: &Self) {
        for (scope, n) in &other.in_flight {
            let count = self.in_flight.entry(*scope).or_default();
            *count = count.saturating_add(*n);
        }
        self.waiters = self.waiters.saturating_add(other.waiters);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.waiters == 0 && self.in_flight.values().all(|n| *n == 0)
    }
}

/// The state file as written: one entry per service origin.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Document {
    format: String,
    pub(super) origins: BTreeMap<String, Entry>,
}

impl Document {
    pub(super) fn new() -> Self {
        Self {
            format: FORMAT.to_owned(),
            origins: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Entry {
    /// By [`LimitScope::as_str`].
    pub(super) windows: BTreeMap<String, WindowRecord>,
    pub(super) owners: Vec<Owner>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct WindowRecord {
    limit: u32,
    remaining: Option<u32>,
    /// Nanoseconds since the Unix epoch on the host's wall clock, the one
    /// clock its processes read alike.
    pub(super) reset_at: Option<u64>,
    /// The latest `x-ratelimit-limit`, `-remaining` and `-reset`.
    last: Option<(u32, u32, u64)>,
}

/// What one process has under way, under its slot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Owner {
    pub(super) slot: u32,
    pub(super) nonce: u64,
    /// By [`LimitScope::as_str`].
    in_flight: BTreeMap<String, u32>,
    waiters: u32,
}

impl Owner {
    pub(super) fn new(slot: &Slot, counts: &Counts) -> Self {
        Self {
            slot: slot.index,
            nonce: slot.nonce,
            in_flight: counts
                .in_flight
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(scope, n)| (scope.as_str().to_owned(), *n))
                .collect(),
            waiters: counts.waiters,
        }
    }

    pub(super) fn counts(&self) -> Counts {
        Counts {
            in_flight: self
                .in_flight
                .iter()
                .filter_map(|(key, n)| Some((LimitScope::from_wire(key)?, *n)))
                .collect(),
            waiters: self.waiters,
        }
    }
}

/// One moment on the client's clock and on the wall clock, to carry times
/// from one process to another.
#[derive(Debug, Clone, Copy)]
pub(super) struct Now {
    pub(super) instant: Instant,
    pub(super) wall: u64,
}

impl Now {
    pub(super) fn at(instant: Instant) -> Self {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, nanos);
        Self { instant, wall }
    }

    pub(super) fn wall(self, at: Instant) -> u64 {
        if at >= self.instant {
            self.wall.saturating_add(nanos(at - self.instant))
        } else {
            self.wall.saturating_sub(nanos(self.instant - at))
        }
    }

    /// A time already past is now: all that matters of it is that it passed.
    pub(super) fn instant(self, wall: u64) -> Instant {
        self.instant + Duration::from_nanos(wall.saturating_sub(self.wall))
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

pub(super) fn record(window: &Window, now: Now) -> WindowRecord {
    WindowRecord {
        limit: window.limit,
        remaining: window.remaining,
        reset_at: window.reset_at.map(|at| now.wall(at)),
        last: window
            .last
            .map(|last| (last.limit, last.remaining, last.reset.as_secs())),
    }
}

pub(super) fn window(scope: LimitScope, record: &WindowRecord, now: Now) -> Window {
    Window {
        limit: record.limit,
        remaining: record.remaining,
        reset_at: record.reset_at.map(|at| now.instant(at)),
        last: record.last.map(|(limit, remaining, reset)| RateLimit {
            limit,
            remaining,
            reset: Duration::from_secs(reset),
        }),
        ..Window::new(scope)
    }
}

/// The state file read as this format, or why it cannot be trusted.
pub(super) fn parse(bytes: &[u8], now: Now) -> Result<Document, String> {
    if bytes.is_empty() {
        return Ok(Document::new());
    }
    let document: Document = serde_json::from_slice(bytes).map_err(|err| err.to_string())?;
    if document.format != FORMAT {
        return Err(format!("its format is {:?}", document.format));
    }
    let farthest = now.wall.saturating_add(nanos(FARTHEST_RESET));
    for entry in document.origins.values() {
        for (key, record) in &entry.windows {
            if LimitScope::from_wire(key).is_none() {
                return Err(format!("it names a limit {key:?}"));
            }
            if record.reset_at.is_some_and(|at| at > farthest) {
                return Err(format!("the {key} window resets more than a day from now"));
            }
        }
        for owner in &entry.owners {
            if owner.slot >= SLOTS {
                return Err(format!("it names a slot {}", owner.slot));
            }
            if let Some(key) = owner
                .in_flight
                .keys()
                .find(|key| LimitScope::from_wire(key).is_none())
            {
                return Err(format!("it names a limit {key:?}"));
            }
        }
    }
    Ok(document)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_carried_through_the_wall_clock_comes_back_the_same() {
        let now = Now::at(Instant::now());
        let at = now.instant + Duration::from_millis(1234);
        assert_eq!(now.instant(now.wall(at)), at);
        // A time past is now.
        let past = now.instant.checked_sub(Duration::from_secs(5)).unwrap();
        assert_eq!(now.instant(now.wall(past)), now.instant);
    }
}
