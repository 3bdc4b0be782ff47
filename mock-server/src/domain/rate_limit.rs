//! Windowed request limits (service document, Limits).
//!
//! Each limit counts requests in fixed windows that open at the first request
//! and last `window` seconds of the mock's clock. A decision carries what the
//! `x-ratelimit-*` headers report: the limit, what remains, and the time until
//! the reset. Times stay on the mock's clock here; a client waits in real
//! seconds, so the edge turns them into real seconds with [`edge_seconds`].

use chrono::{DateTime, Duration, Utc};
use mediagen_openapi::operations::{LimitScope, OperationId};
use mediagen_openapi::policy::LimitPer;

use super::FastMap;

/// The length of `scope`'s window on the mock's clock.
fn length(scope: LimitScope) -> Duration {
    Duration::seconds(i64::try_from(scope.window_secs()).unwrap_or(i64::MAX / 1000))
}

/// What a limit decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The limit the headers report: the route's own when it has one.
    pub limit: u32,
    /// Requests left in that window.
    pub remaining: u32,
    /// Milliseconds of the mock's clock until that window resets.
    pub reset_ms: i64,
    /// Whether the request may go on.
    pub allowed: bool,
    /// Milliseconds of the mock's clock until the window that refused the
    /// request resets (the reported one unless the general limit refused).
    pub retry_ms: i64,
    /// The limit whose window decided: the general one when it refused.
    pub decided_by: LimitScope,
}

impl Decision {
    /// `x-ratelimit-reset`: real seconds until the reported window resets.
    pub fn reset_secs(&self, scale: f64) -> u64 {
        edge_seconds(self.reset_ms, scale)
    }

    /// `retry-after` and `details.retryAfter`: real seconds until the window
    /// that refused the request resets.
    pub fn retry_after(&self, scale: f64) -> u64 {
        edge_seconds(self.retry_ms, scale)
    }

    /// The message of a windowed 429 (Limits, rule 3).
    pub fn refusal_message(&self, scale: f64) -> String {
        format!(
            "Rate limit of {} requests exceeded; retry after {} s",
            self.decided_by.default_limit(),
            self.retry_after(scale)
        )
    }
}

/// The limit of `op`'s own that counts per IP address beside the general
/// one, if it has one.
pub fn own_limit_per_ip(op: OperationId) -> Option<LimitScope> {
    op.own_limit().filter(|scope| scope.per() == LimitPer::Ip)
}

/// Real seconds a client waits for `mock_ms` milliseconds of the mock's clock
/// running `scale` times faster than real time (`Clock::edge_scale`): rounded
/// up, at least 1, so that a client which waits that long finds the window
/// open again.
pub fn edge_seconds(mock_ms: i64, scale: f64) -> u64 {
    let scale = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let secs = (mock_ms.max(0) as f64 / 1000.0 / scale).ceil();
    // `as` saturates, so an absurd window cannot wrap.
    (secs as u64).max(1)
}

#[derive(Debug, Clone, Copy)]
struct Window {
    opened: DateTime<Utc>,
    count: u32,
}

#[derive(Debug, Default)]
pub struct RateLimiter {
    /// Windows by limit, then by subject: a request that finds its window
    /// looks it up by `&str` and allocates nothing.
    windows: FastMap<LimitScope, FastMap<String, Window>>,
    pruned: super::EveryMinute,
}

impl RateLimiter {
    /// Counts one request of `subject` (an IP address or a user id) against
    /// `scope` at time `now`. A refused request is not counted.
    pub fn hit(&mut self, scope: LimitScope, subject: &str, now: DateTime<Utc>) -> Decision {
        let (max, length) = (scope.default_limit(), length(scope));
        let subjects = self.windows.entry(scope).or_default();
        let window = match subjects.get_mut(subject) {
            Some(window) => window,
            None => subjects.entry(subject.to_owned()).or_insert(Window {
                opened: now,
                count: 0,
            }),
        };
        if now >= window.opened + length || now < window.opened {
            *window = Window {
                opened: now,
                count: 0,
            };
        }
        let allowed = window.count < max;
        if allowed {
            window.count += 1;
        }
        let left = (window.opened + length - now).num_milliseconds().max(0);
        Decision {
            limit: max,
            remaining: max - window.count,
            reset_ms: left,
            allowed,
            retry_ms: left,
            decided_by: scope,
        }
    }

    /// The state of `subject`'s window of `scope` at `now`, without counting.
    fn peek(&self, scope: LimitScope, subject: &str, now: DateTime<Utc>) -> Decision {
        let (max, length) = (scope.default_limit(), length(scope));
        let open = self
            .windows
            .get(&scope)
            .and_then(|subjects| subjects.get(subject))
            .filter(|w| now >= w.opened && now < w.opened + length);
        let (count, left) = open.map_or((0, length.num_milliseconds()), |w| {
            (w.count, (w.opened + length - now).num_milliseconds())
        });
        Decision {
            limit: max,
            remaining: max - count,
            reset_ms: left,
            allowed: count < max,
            retry_ms: left,
            decided_by: scope,
        }
    }

    /// One request of the service from `ip`: the general limit, and the
    /// operation's own per address when it has one (Limits, rules 1 and 2);
    /// a route outside the contract (`op` `None`) has the general one only.
    /// The answer reports the operation's limit when there is one, the
    /// general one otherwise. A limit per user is its route's to count.
    ///
    /// A request the general limit refuses never reaches the route, so the
    /// route's window does not count it; the wait it is told is the general
    /// window's.
    pub fn admit(&mut self, op: Option<OperationId>, ip: &str, now: DateTime<Utc>) -> Decision {
        let general = self.hit(LimitScope::General, ip, now);
        match op.and_then(own_limit_per_ip) {
            Some(limit) if general.allowed => self.hit(limit, ip, now),
            Some(limit) => Decision {
                allowed: false,
                retry_ms: general.retry_ms,
                decided_by: general.decided_by,
                ..self.peek(limit, ip, now)
            },
            None => general,
        }
    }

    /// The general window of `ip` at `now`, not counting a request: what a
    /// request no limit counts (one the service has no route for) reports in
    /// its `x-ratelimit-*` headers. Never a refusal.
    pub fn standing(&self, ip: &str, now: DateTime<Utc>) -> Decision {
        Decision {
            allowed: true,
            ..self.peek(LimitScope::General, ip, now)
        }
    }

    /// Forgets windows that have closed, so the map does not grow without bound
    /// (one window per address and per user); at most once a minute of the clock.
    pub fn prune(&mut self, now: DateTime<Utc>) {
        if !self.pruned.due(now) {
            return;
        }
        for (scope, subjects) in &mut self.windows {
            let length = length(*scope);
            subjects.retain(|_, w| now < w.opened + length);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_requests_pass_and_the_sixty_first_is_refused_until_the_window_resets() {
        let mut limiter = RateLimiter::default();
        let t0 = Utc::now();
        for i in 0..60 {
            let d = limiter.hit(LimitScope::General, "127.0.0.1", t0);
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 59 - i);
        }
        let refused = limiter.hit(LimitScope::General, "127.0.0.1", t0 + Duration::seconds(20));
        assert!(!refused.allowed);
        assert_eq!((refused.remaining, refused.reset_secs(1.0)), (0, 40));
        assert!(
            limiter
                .hit(LimitScope::General, "127.0.0.1", t0 + Duration::seconds(60))
                .allowed
        );
    }

    #[test]
    fn subjects_are_counted_apart() {
        let mut limiter = RateLimiter::default();
        let now = Utc::now();
        for _ in 0..5 {
            limiter.hit(LimitScope::Topup, "user-a", now);
        }
        assert!(!limiter.hit(LimitScope::Topup, "user-a", now).allowed);
        assert!(limiter.hit(LimitScope::Topup, "user-b", now).allowed);
    }

    #[test]
    fn a_request_the_general_limit_refuses_is_not_counted_by_the_route_and_waits_for_the_general_window()
     {
        let mut limiter = RateLimiter::default();
        let t0 = Utc::now();
        for _ in 0..60 {
            assert!(
                limiter
                    .admit(Some(OperationId::ListGenerations), "10.0.0.1", t0)
                    .allowed
            );
        }
        // 30 s later the general window has 30 s left; the files window is new.
        let later = t0 + Duration::seconds(30);
        let refused = limiter.admit(Some(OperationId::CreateFileUpload), "10.0.0.1", later);
        assert!(!refused.allowed);
        assert_eq!(
            refused.limit,
            LimitScope::Files.default_limit(),
            "the headers report the route's limit"
        );
        assert_eq!(
            refused.remaining,
            LimitScope::Files.default_limit(),
            "the route did not count it"
        );
        assert_eq!(refused.reset_secs(1.0), 60, "a fresh files window");
        assert_eq!(refused.retry_after(1.0), 30, "the general window refused");
        assert_eq!(refused.decided_by, LimitScope::General);
        // Once the general window reopens, all 20 files requests are there.
        let reopened = t0 + Duration::seconds(60);
        for _ in 0..LimitScope::Files.default_limit() {
            assert!(
                limiter
                    .admit(Some(OperationId::CreateFileUpload), "10.0.0.1", reopened)
                    .allowed
            );
        }
    }

    #[test]
    fn waits_are_real_seconds_rounded_up_and_at_least_one() {
        assert_eq!(edge_seconds(57_000, 1.0), 57);
        assert_eq!(edge_seconds(57_000, 60.0), 1);
        assert_eq!(edge_seconds(600_000, 60.0), 10);
        assert_eq!(edge_seconds(600_001, 60.0), 11);
        assert_eq!(edge_seconds(0, 1.0), 1);
        assert_eq!(edge_seconds(1_500, 0.0), 2, "no scale counts as 1");
    }

    #[test]
    fn only_the_limits_of_an_address_are_counted_here() {
        let own: Vec<_> = OperationId::ALL
            .into_iter()
            .filter_map(|op| own_limit_per_ip(op).map(|scope| (op, scope)))
            .collect();
        assert!(own.contains(&(OperationId::CreateFileUpload, LimitScope::Files)));
        assert!(own.contains(&(OperationId::GetInvoicePdf, LimitScope::InvoiceDocuments)));
        assert!(own.contains(&(OperationId::RequestMagicLink, LimitScope::MagicLink)));
        // The top-up's limit counts per user, in its route.
        assert_eq!(own_limit_per_ip(OperationId::CreateTopup), None);
        assert_eq!(own_limit_per_ip(OperationId::ListGenerations), None);
    }
}
