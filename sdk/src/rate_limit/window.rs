//! What the client knows of each limit's window: the counts the pacer keeps
//! (`rate_limit.rs`) and the shared pace carries between processes
//! (`shared.rs`). Both build on these; they build on neither.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::limits::{LimitScope, RateLimit};

/// What the client knows of one limit's current window.
#[derive(Debug, Clone)]
pub(super) struct Window {
    pub(super) scope: LimitScope,
    pub(super) limit: u32,
    /// Requests the client may still send in the window, after taking off those it
    /// sent since the last answer; `None` before the first answer.
    pub(super) remaining: Option<u32>,
    /// When the window resets; `None` when unknown.
    pub(super) reset_at: Option<Instant>,
    /// Requests sent and not answered yet.
    pub(super) in_flight: u32,
    pub(super) last: Option<RateLimit>,
}

impl Window {
    pub(super) fn new(scope: LimitScope) -> Self {
        Self {
            scope,
            limit: scope.default_limit(),
            remaining: None,
            reset_at: None,
            in_flight: 0,
            last: None,
        }
    }

    /// Forgets a window that has reset. Requests still in flight may count in
    /// the new one, so they are taken off it.
    pub(super) fn roll(&mut self, now: Instant) {
        if self.reset_at.is_some_and(|at| now >= at) {
            self.remaining = Some(self.limit.saturating_sub(self.in_flight));
            self.reset_at = None;
        }
    }

    /// How long to hold a request back; zero when it may go now.
    pub(super) fn wait(&self, now: Instant) -> Duration {
        let free = match self.remaining {
            Some(remaining) => remaining > 0,
            // Nothing heard yet: at most the documented limit at once.
            None => self.in_flight < self.limit,
        };
        if free {
            return Duration::ZERO;
        }
        match self.reset_at {
            Some(at) => at.saturating_duration_since(now),
            // The window reset and every slot is taken by requests in flight: their
            // answers will say more. Check again shortly.
            None => Duration::from_millis(250).min(self.scope.window()),
        }
    }

    pub(super) fn take(&mut self) {
        self.in_flight += 1;
        if let Some(remaining) = &mut self.remaining {
            *remaining = remaining.saturating_sub(1);
        }
    }

    pub(super) fn answered(&mut self, now: Instant, seen: Option<RateLimit>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let Some(seen) = seen else {
            return;
        };
        self.last = Some(seen);
        self.limit = seen.limit;
        let reset_at = now + seen.reset;
        // Requests still in flight may not be counted in `seen.remaining` yet.
        let fresh = seen.remaining.saturating_sub(self.in_flight);
        // `x-ratelimit-reset` is whole seconds, rounded up, and answers arrive out
        // of order: an answer whose reset is within a couple of seconds of the one
        // known belongs to the same window, and the lower count wins. Each answer
        // says the window resets at the latest `reset` after it was received, so
        // the earliest of those bounds is the closest: many answers in one window
        // narrow the rounding down to the time between two of them.
        match self.reset_at {
            // An answer from a window that has reset since: nothing new.
            Some(known) if reset_at + Duration::from_secs(2) < known => {}
            Some(known) if reset_at <= known + Duration::from_secs(2) => {
                self.remaining = Some(self.remaining.map_or(fresh, |r| r.min(fresh)));
                self.reset_at = Some(known.min(reset_at));
            }
            _ => {
                self.remaining = Some(fresh);
                self.reset_at = Some(reset_at);
            }
        }
    }
}

/// What a pace knows of the service's limits.
#[derive(Debug, Default)]
pub(super) struct Table {
    pub(super) windows: HashMap<LimitScope, Window>,
    /// Generations being awaited by every client sharing the pace.
    pub(super) waiters: u32,
}

impl Table {
    pub(super) fn window(&mut self, scope: LimitScope) -> &mut Window {
        self.windows
            .entry(scope)
            .or_insert_with(|| Window::new(scope))
    }
}
