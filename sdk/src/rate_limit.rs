//! The service's request limits as the client sees them: the `x-ratelimit-*`
//! headers of each answer, and the pacer that keeps the client inside them.
//!
//! Limits rule 2: every answer carries `x-ratelimit-limit`, `x-ratelimit-remaining`
//! and `x-ratelimit-reset` (seconds until the window resets) for the limit of its
//! route. The pacer counts what is left of each window, takes off the requests it
//! sends, and holds a request back until the window resets rather than spend one
//! on a 429. Waiting generations also space their polls from `remaining` and
//! `reset` (see [`Pacer::poll_floor`]).
//!
//! Rule 1 counts the general limit per IP address, so what the pacer knows is
//! shared with the other processes of the host when it can be (`shared.rs`).

mod shared;
mod window;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::HeaderMap;

use self::window::Table;
use crate::clock::Clock;
use crate::limits::{LimitScope, RateLimit};

pub(crate) use self::shared::default_dir;

#[derive(Debug)]
struct State {
    table: Table,
    /// The host's state file, while the pace is shared with other processes.
    shared: Option<shared::Store>,
}

/// Keeps the client inside the service's limits; shared by every clone of a client.
#[derive(Debug)]
pub(crate) struct Pacer {
    enabled: bool,
    state: Mutex<State>,
    last: Mutex<Option<RateLimit>>,
}

/// A request counted against its limits; answer it with [`Pacer::answered`].
/// Dropped without an answer (the request failed or was cancelled), it frees its
/// place in flight.
#[derive(Debug)]
pub(crate) struct Permit {
    pacer: Option<Arc<Pacer>>,
    scopes: Scopes,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Scopes {
    own: Option<LimitScope>,
}

impl Scopes {
    /// The general limit, and `own` when the route has a limit of its own.
    pub(crate) fn of(own: Option<LimitScope>) -> Self {
        Self { own }
    }

    /// The limits a request counts against: the general one, and the route's own.
    fn iter(self) -> impl Iterator<Item = LimitScope> {
        std::iter::once(LimitScope::General).chain(self.own)
    }

    /// The limit the `x-ratelimit-*` headers of the answer describe.
    fn reported(self) -> LimitScope {
        self.own.unwrap_or(LimitScope::General)
    }
}

impl Pacer {
    /// A pace of this process's own.
    pub(crate) fn new(enabled: bool) -> Self {
        Self::with_store(enabled, None)
    }

    /// A pace shared with every process of the host that keeps its state for
    /// `origin` in `dir`; this process's own when `dir` cannot hold it.
    pub(crate) fn shared(dir: &Path, origin: &str) -> Self {
        let store = shared::Store::open(dir, origin)
            .inspect_err(|err| {
                tracing::debug!(
                    dir = %dir.display(),
                    error = %err,
                    "the pace is this process's own: the directory cannot hold a shared one"
                );
            })
            .ok();
        Self::with_store(true, store)
    }

    fn with_store(enabled: bool, shared: Option<shared::Store>) -> Self {
        Self {
            enabled,
            state: Mutex::new(State {
                table: Table::default(),
                shared,
            }),
            last: Mutex::new(None),
        }
    }

    /// Runs `f` on what the pace knows: for a shared pace, as the state file
    /// says, under its lock, and written back. A state file that fails leaves
    /// the pace to this process for the rest of its life.
    fn with<R>(&self, now: Instant, f: impl FnOnce(&mut Table) -> R) -> R {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let State { table, shared } = &mut *state;
        let Some(store) = shared else {
            return f(table);
        };
        let (ran, failure) = match store.lock(table, now) {
            Ok(session) => {
                let result = f(table);
                (Ok(result), session.commit(table).err())
            }
            Err(err) => (Err(f), Some(err)),
        };
        if let Some(err) = failure {
            fall_back(shared, table, &err);
        }
        ran.unwrap_or_else(|f| f(table))
    }

    /// Waits until a request counted against `scopes` can be sent, and counts it.
    ///
    /// A window that resets later than `max_wait` (the top-up limit's ten
    /// minutes, say) does not hold the request: it goes, and the service's 429
    /// with its `retry-after` reaches the caller, who decides.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        scopes: Scopes,
        clock: &dyn Clock,
        max_wait: Duration,
    ) -> Permit {
        loop {
            let now = clock.now();
            let held = self.with(now, |table| {
                let mut wait = Duration::ZERO;
                for scope in scopes.iter() {
                    let window = table.window(scope);
                    window.roll(now);
                    if self.enabled {
                        wait = wait.max(window.wait(now));
                    }
                }
                if wait.is_zero() || wait > max_wait {
                    for scope in scopes.iter() {
                        table.window(scope).take();
                    }
                    return None;
                }
                Some(wait)
            });
            let Some(wait) = held else {
                return Permit {
                    pacer: Some(Arc::clone(self)),
                    scopes,
                };
            };
            tracing::debug!(
                delay_ms = wait.as_millis() as u64,
                reason = "the rate-limit window is used up",
                "holding a request back"
            );
            clock.sleep(wait).await;
        }
    }

    /// Records the answer to a permitted request.
    pub(crate) fn answered(&self, mut permit: Permit, now: Instant, headers: Option<&HeaderMap>) {
        permit.pacer = None;
        let seen = headers.and_then(RateLimit::from_headers);
        let reported = permit.scopes.reported();
        self.with(now, |table| {
            for scope in permit.scopes.iter() {
                table
                    .window(scope)
                    .answered(now, if scope == reported { seen } else { None });
            }
        });
        if seen.is_some() {
            *self.last.lock().unwrap_or_else(|p| p.into_inner()) = seen;
        }
    }

    fn release(&self, scopes: Scopes) {
        self.with(Instant::now(), |table| {
            for scope in scopes.iter() {
                let window = table.window(scope);
                window.in_flight = window.in_flight.saturating_sub(1);
            }
        });
    }

    /// The `x-ratelimit-*` values of the latest answer.
    pub(crate) fn last(&self) -> Option<RateLimit> {
        *self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The latest values of one limit.
    pub(crate) fn last_of(&self, scope: LimitScope) -> Option<RateLimit> {
        self.with(Instant::now(), |table| {
            table.windows.get(&scope).and_then(|w| w.last)
        })
    }

    /// Counts a generation being awaited while the guard lives.
    pub(crate) fn waiter(self: &Arc<Self>) -> WaiterGuard {
        self.with(Instant::now(), |table| table.waiters += 1);
        WaiterGuard {
            pacer: Arc::clone(self),
        }
    }

    /// The shortest interval between two polls of one awaited generation that
    /// keeps all the waiters sharing the pace inside the general limit: what is
    /// left of the window shared out over what remains of it.
    pub(crate) fn poll_floor(&self, now: Instant) -> Duration {
        if !self.enabled {
            return Duration::ZERO;
        }
        self.with(now, |table| {
            let waiters = table.waiters.max(1);
            let Some(window) = table.windows.get(&LimitScope::General) else {
                return Duration::ZERO;
            };
            let (Some(remaining), Some(reset_at)) = (window.remaining, window.reset_at) else {
                return Duration::ZERO;
            };
            let left = reset_at.saturating_duration_since(now);
            if remaining == 0 {
                return left;
            }
            (left * waiters) / remaining
        })
    }
}

/// Leaves the pace to this process: what it has under way stays counted, the
/// others' is forgotten.
fn fall_back(shared: &mut Option<shared::Store>, table: &mut Table, err: &std::io::Error) {
    if let Some(store) = shared.take() {
        tracing::debug!(
            error = %err,
            "the pace is this process's own from now on: the shared state file failed"
        );
        store.keep_own(table);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(pacer) = self.pacer.take() {
            pacer.release(self.scopes);
        }
    }
}

/// Keeps a generation counted among the awaited ones; see [`Pacer::poll_floor`].
#[derive(Debug)]
pub(crate) struct WaiterGuard {
    pacer: Arc<Pacer>,
}

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        self.pacer.with(Instant::now(), |table| {
            table.waiters = table.waiters.saturating_sub(1);
        });
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::window::Window;
    use super::*;
    use crate::clock::Sleep;

    /// A clock that never moves and never wakes a sleeper.
    #[derive(Debug)]
    pub(super) struct Frozen(pub(super) Instant);

    impl Clock for Frozen {
        fn now(&self) -> Instant {
            self.0
        }
        fn sleep(&self, _: Duration) -> Sleep {
            Box::pin(std::future::pending())
        }
    }

    pub(super) fn headers(limit: u32, remaining: u32, reset: u64) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert("x-ratelimit-limit", limit.into());
        map.insert("x-ratelimit-remaining", remaining.into());
        map.insert("x-ratelimit-reset", reset.into());
        map
    }

    pub(super) const LONG: Duration = Duration::from_secs(60);

    pub(super) fn general() -> Scopes {
        Scopes::of(None)
    }

    impl Pacer {
        pub(super) fn window(&self, scope: LimitScope) -> Window {
            self.state.lock().unwrap().table.windows[&scope].clone()
        }
    }

    #[tokio::test]
    async fn a_request_is_held_back_when_the_window_is_used_up() {
        let now = Instant::now();
        let clock = Frozen(now);
        let pacer = Arc::new(Pacer::new(true));
        let permit = pacer.acquire(general(), &clock, LONG).await;
        pacer.answered(permit, now, Some(&headers(60, 0, 30)));
        let window = pacer.window(LimitScope::General);
        assert_eq!(window.wait(now), Duration::from_secs(30));
    }

    #[tokio::test]
    async fn requests_in_flight_are_taken_off_what_remains() {
        let now = Instant::now();
        let clock = Frozen(now);
        let pacer = Arc::new(Pacer::new(true));
        let first = pacer.acquire(general(), &clock, LONG).await;
        let second = pacer.acquire(general(), &clock, LONG).await;
        let third = pacer.acquire(general(), &clock, LONG).await;
        // The first answer says 2 remain, but two requests are still in flight.
        pacer.answered(first, now, Some(&headers(60, 2, 30)));
        assert_eq!(pacer.window(LimitScope::General).remaining, Some(0));
        drop((second, third));
    }

    #[tokio::test]
    async fn a_late_answer_from_the_same_window_never_raises_the_count() {
        let now = Instant::now();
        let clock = Frozen(now);
        let pacer = Arc::new(Pacer::new(true));
        let a = pacer.acquire(general(), &clock, LONG).await;
        let b = pacer.acquire(general(), &clock, LONG).await;
        // b's answer: 3 left, and a still in flight may not be counted yet: 2.
        pacer.answered(b, now, Some(&headers(60, 3, 30)));
        assert_eq!(pacer.window(LimitScope::General).remaining, Some(2));
        // a's answer was written earlier and says 4: it must not raise the count.
        pacer.answered(a, now, Some(&headers(60, 4, 30)));
        assert_eq!(pacer.window(LimitScope::General).remaining, Some(2));
    }

    #[tokio::test]
    async fn the_answers_of_one_window_narrow_down_when_it_resets() {
        let now = Instant::now();
        let pacer = Arc::new(Pacer::new(true));
        let first = pacer.acquire(general(), &Frozen(now), LONG).await;
        // Whole seconds, rounded up: "30" says the window resets within 30 s.
        pacer.answered(first, now, Some(&headers(60, 50, 30)));
        let later = now + Duration::from_millis(700);
        let second = pacer.acquire(general(), &Frozen(later), LONG).await;
        // 0.7 s later the same window says "29": it resets by 29.7 s, not 30.
        pacer.answered(second, later, Some(&headers(60, 49, 29)));
        let window = pacer.window(LimitScope::General).reset_at;
        assert_eq!(window, Some(later + Duration::from_secs(29)));
        // An answer of the window before, late: it tells nothing of this one
        // (its request was counted when it was sent: 48 left).
        let stale = pacer.acquire(general(), &Frozen(later), LONG).await;
        pacer.answered(
            stale,
            later - Duration::from_secs(30),
            Some(&headers(60, 0, 1)),
        );
        let general = pacer.window(LimitScope::General);
        assert_eq!(general.reset_at, window);
        assert_eq!(general.remaining, Some(48));
    }

    #[tokio::test]
    async fn a_reset_window_opens_again() {
        let now = Instant::now();
        let pacer = Arc::new(Pacer::new(true));
        let permit = pacer.acquire(general(), &Frozen(now), LONG).await;
        pacer.answered(permit, now, Some(&headers(60, 0, 10)));
        let later = now + Duration::from_secs(10);
        let permit = pacer.acquire(general(), &Frozen(later), LONG).await;
        assert_eq!(pacer.window(LimitScope::General).remaining, Some(59));
        drop(permit);
    }

    #[tokio::test]
    async fn a_window_resetting_beyond_the_longest_wait_does_not_hold_the_request() {
        let now = Instant::now();
        let pacer = Arc::new(Pacer::new(true));
        let topup = Scopes::of(Some(LimitScope::Topup));
        let permit = pacer.acquire(topup, &Frozen(now), LONG).await;
        pacer.answered(permit, now, Some(&headers(5, 0, 600)));
        // Frozen never wakes a sleeper: this returns only if it does not wait.
        let permit = pacer.acquire(topup, &Frozen(now), LONG).await;
        drop(permit);
    }

    #[tokio::test]
    async fn a_route_with_its_own_limit_counts_against_both() {
        let now = Instant::now();
        let pacer = Arc::new(Pacer::new(true));
        let files = Scopes::of(Some(LimitScope::Files));
        let permit = pacer.acquire(files, &Frozen(now), LONG).await;
        pacer.answered(permit, now, Some(&headers(20, 19, 60)));
        assert_eq!(pacer.window(LimitScope::Files).remaining, Some(19));
        let general = pacer.window(LimitScope::General);
        assert_eq!(general.remaining, None);
        assert_eq!(general.in_flight, 0);
    }

    #[tokio::test]
    async fn polls_are_spread_over_what_is_left_of_the_window() {
        let now = Instant::now();
        let pacer = Arc::new(Pacer::new(true));
        let permit = pacer.acquire(general(), &Frozen(now), LONG).await;
        pacer.answered(permit, now, Some(&headers(60, 10, 50)));
        let guards: Vec<_> = (0..5).map(|_| pacer.waiter()).collect();
        // 10 requests left for 50 seconds and 5 waiters: one poll each 25 seconds.
        assert_eq!(pacer.poll_floor(now), Duration::from_secs(25));
        drop(guards);
        assert_eq!(pacer.poll_floor(now), Duration::from_secs(5));
    }
}
