//! Windowed request limits (service document, Limits).
//!
//! Each limit counts requests in fixed windows that open at the first request
//! and last `window` seconds of the mock's clock. A decision carries what the
//! `x-ratelimit-*` headers report: the limit, what remains, and the time until
//! the reset. Times stay on the mock's clock here; a client waits in real
//! seconds, so the edge turns them into real seconds with [`edge_seconds`].

use chrono::{DateTime, Duration, Utc};

use super::FastMap;

/// A limit of `max` requests per `window_secs` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub name: &'static str,
    pub max: u32,
    pub window_secs: i64,
}

/// 60 requests a minute per IP address, for every route.
pub const GENERAL: Limit = Limit {
    name: "general",
    max: 60,
    window_secs: 60,
};
/// `POST /v1/auth/magic-link/request`: 10 a minute per IP address.
pub const MAGIC_LINK: Limit = Limit {
    name: "magic_link",
    max: 10,
    window_secs: 60,
};
/// `POST /v1/files`: 20 a minute per IP address.
pub const FILES: Limit = Limit {
    name: "files",
    max: 20,
    window_secs: 60,
};
/// Invoice PDF and closing act: 30 a minute per IP address.
pub const INVOICE_DOCUMENTS: Limit = Limit {
    name: "invoice_documents",
    max: 30,
    window_secs: 60,
};
/// `POST /v1/billing/topup`: 5 per 600 seconds per user.
pub const TOPUP: Limit = Limit {
    name: "topup",
    max: 5,
    window_secs: 600,
};

/// The per-IP limit of a route beyond the general one, if it has one.
pub fn route_limit(method: &str, path: &str) -> Option<Limit> {
    let path = path.trim_end_matches('/');
    match (method, path) {
        ("POST", "/v1/auth/magic-link/request") => Some(MAGIC_LINK),
        ("POST", "/v1/files") => Some(FILES),
        ("GET", p)
            if p.starts_with("/v1/billing/invoices/")
                && (p.ends_with("/pdf") || p.ends_with("/act")) =>
        {
            Some(INVOICE_DOCUMENTS)
        }
        _ => None,
    }
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
    /// The limit of the window that decided: the general one when it refused.
    pub decided_by: u32,
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
            self.decided_by,
            self.retry_after(scale)
        )
    }
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
    /// Windows by limit name, then by subject: a request that finds its window
    /// looks it up by `&str` and allocates nothing.
    windows: FastMap<&'static str, FastMap<String, Window>>,
    pruned: super::EveryMinute,
}

impl RateLimiter {
    /// Counts one request of `subject` (an IP address or a user id) against
    /// `limit` at time `now`. A refused request is not counted.
    pub fn hit(&mut self, limit: Limit, subject: &str, now: DateTime<Utc>) -> Decision {
        let length = Duration::seconds(limit.window_secs);
        let subjects = self.windows.entry(limit.name).or_default();
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
        let allowed = window.count < limit.max;
        if allowed {
            window.count += 1;
        }
        let left = (window.opened + length - now).num_milliseconds().max(0);
        Decision {
            limit: limit.max,
            remaining: limit.max - window.count,
            reset_ms: left,
            allowed,
            retry_ms: left,
            decided_by: limit.max,
        }
    }

    /// The state of `subject`'s window of `limit` at `now`, without counting.
    fn peek(&self, limit: Limit, subject: &str, now: DateTime<Utc>) -> Decision {
        let length = Duration::seconds(limit.window_secs);
        let open = self
            .windows
            .get(limit.name)
            .and_then(|subjects| subjects.get(subject))
            .filter(|w| now >= w.opened && now < w.opened + length);
        let (count, left) = open.map_or((0, length.num_milliseconds()), |w| {
            (w.count, (w.opened + length - now).num_milliseconds())
        });
        Decision {
            limit: limit.max,
            remaining: limit.max - count,
            reset_ms: left,
            allowed: count < limit.max,
            retry_ms: left,
            decided_by: limit.max,
        }
    }

    /// One request of the service from `ip`: the general limit, and the route's own
    /// when it has one (Limits, rules 1 and 2). The answer reports the route's limit
    /// when there is one, the general one otherwise.
    ///
    /// A request the general limit refuses never reaches the route, so the
    /// route's window does not count it; the wait it is told is the general
    /// window's.
    pub fn admit(&mut self, method: &str, path: &str, ip: &str, now: DateTime<Utc>) -> Decision {
        let general = self.hit(GENERAL, ip, now);
        match route_limit(method, path) {
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
            ..self.peek(GENERAL, ip, now)
        }
    }

    /// Forgets windows that have closed, so the map does not grow without bound
    /// (one window per address and per user); at most once a minute of the clock.
    pub fn prune(&mut self, now: DateTime<Utc>) {
        if !self.pruned.due(now) {
            return;
        }
        for (name, subjects) in &mut self.windows {
            let secs = [GENERAL, MAGIC_LINK, FILES, INVOICE_DOCUMENTS, TOPUP]
                .iter()
                .find(|l| l.name == *name)
                .map_or(3600, |l| l.window_secs);
            subjects.retain(|_, w| now < w.opened + Duration::seconds(secs));
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
            let d = limiter.hit(GENERAL, "127.0.0.1", t0);
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 59 - i);
        }
        let refused = limiter.hit(GENERAL, "127.0.0.1", t0 + Duration::seconds(20));
        assert!(!refused.allowed);
        assert_eq!((refused.remaining, refused.reset_secs(1.0)), (0, 40));
        assert!(
            limiter
                .hit(GENERAL, "127.0.0.1", t0 + Duration::seconds(60))
                .allowed
        );
    }

    #[test]
    fn subjects_are_counted_apart() {
        let mut limiter = RateLimiter::default();
        let now = Utc::now();
        for _ in 0..5 {
            limiter.hit(TOPUP, "user-a", now);
        }
        assert!(!limiter.hit(TOPUP, "user-a", now).allowed);
        assert!(limiter.hit(TOPUP, "user-b", now).allowed);
    }

    #[test]
    fn a_request_the_general_limit_refuses_is_not_counted_by_the_route_and_waits_for_the_general_window()
     {
        let mut limiter = RateLimiter::default();
        let t0 = Utc::now();
        for _ in 0..60 {
            assert!(
                limiter
                    .admit("GET", "/v1/generations", "10.0.0.1", t0)
                    .allowed
            );
        }
        // 30 s later the general window has 30 s left; the files window is new.
        let later = t0 + Duration::seconds(30);
        let refused = limiter.admit("POST", "/v1/files", "10.0.0.1", later);
        assert!(!refused.allowed);
        assert_eq!(
            refused.limit, FILES.max,
            "the headers report the route's limit"
        );
        assert_eq!(refused.remaining, FILES.max, "the route did not count it");
        assert_eq!(refused.reset_secs(1.0), 60, "a fresh files window");
        assert_eq!(refused.retry_after(1.0), 30, "the general window refused");
        assert_eq!(refused.decided_by, GENERAL.max);
        // Once the general window reopens, all 20 files requests are there.
        let reopened = t0 + Duration::seconds(60);
        for _ in 0..FILES.max {
            assert!(
                limiter
                    .admit("POST", "/v1/files", "10.0.0.1", reopened)
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
    fn routes_with_their_own_limits_are_recognised() {
        assert_eq!(route_limit("POST", "/v1/files"), Some(FILES));
        assert_eq!(
            route_limit("GET", "/v1/billing/invoices/x/pdf"),
            Some(INVOICE_DOCUMENTS)
        );
        assert_eq!(
            route_limit("GET", "/v1/billing/invoices/x/act"),
            Some(INVOICE_DOCUMENTS)
        );
        assert_eq!(
            route_limit("POST", "/v1/auth/magic-link/request"),
            Some(MAGIC_LINK)
        );
        assert_eq!(route_limit("GET", "/v1/generations"), None);
    }
}
