//! Windowed request limits (service document, Limits).
//!
//! Each limit counts requests in fixed windows that open at the first request
//! and last `window` seconds. A decision carries what the `x-ratelimit-*`
//! headers report: the limit, what remains, and the seconds until the reset.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};

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

impl Decision {
    /// The seconds `retry-after` says: until the window resets, at least 1.
    pub fn retry_after(&self) -> u64 {
        self.reset_secs.max(1)
    }

    /// The message of a windowed 429 (Limits, rule 3).
    pub fn refusal_message(&self) -> String {
        format!(
            "Rate limit of {} requests exceeded; retry after {} s",
            self.limit,
            self.retry_after()
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window resets (rounded up).
    pub reset_secs: u64,
    pub allowed: bool,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    opened: DateTime<Utc>,
    count: u32,
}

#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: HashMap<(&'static str, String), Window>,
    pruned_at: Option<DateTime<Utc>>,
}

impl RateLimiter {
    /// Counts one request of `subject` (an IP address or a user id) against
    /// `limit` at time `now`. A refused request is not counted.
    pub fn hit(&mut self, limit: Limit, subject: &str, now: DateTime<Utc>) -> Decision {
        let length = Duration::seconds(limit.window_secs);
        let window = self
            .windows
            .entry((limit.name, subject.to_owned()))
            .or_insert(Window {
                opened: now,
                count: 0,
            });
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
            reset_secs: (left as u64).div_ceil(1000),
            allowed,
        }
    }

    /// One request of the service from `ip`: the general limit, and the route's own
    /// when it has one (Limits, rules 1 and 2). The answer reports the route's limit
    /// when there is one, the general one otherwise.
    pub fn admit(&mut self, method: &str, path: &str, ip: &str, now: DateTime<Utc>) -> Decision {
        let general = self.hit(GENERAL, ip, now);
        match route_limit(method, path) {
            Some(limit) if general.allowed => self.hit(limit, ip, now),
            Some(limit) => {
                // The general limit refused: report the route's own limit.
                let own = self.hit(limit, ip, now);
                Decision {
                    allowed: false,
                    ..own
                }
            }
            None => general,
        }
    }

    /// Forgets windows that have closed, so the map does not grow without bound
    /// (one window per address and per user); at most once a minute of the clock.
    pub fn prune(&mut self, now: DateTime<Utc>) {
        if self
            .pruned_at
            .is_some_and(|at| now < at + Duration::seconds(60))
        {
            return;
        }
        self.pruned_at = Some(now);
        self.windows.retain(|(name, _), w| {
            let secs = [GENERAL, MAGIC_LINK, FILES, INVOICE_DOCUMENTS, TOPUP]
                .iter()
                .find(|l| l.name == *name)
                .map_or(3600, |l| l.window_secs);
            now < w.opened + Duration::seconds(secs)
        });
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
        assert_eq!((refused.remaining, refused.reset_secs), (0, 40));
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
