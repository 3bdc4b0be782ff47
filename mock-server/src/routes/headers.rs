//! The `x-ratelimit-*` headers every answer of the service carries.

use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderName, HeaderValue};

use crate::domain::rate_limit::Decision;

pub(super) const RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
const RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
const RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// The `x-ratelimit-*` headers of the window `decision` reports, which every
/// answer of the service carries.
pub(crate) fn limit_headers(headers: &mut HeaderMap, decision: &Decision, scale: f64) {
    headers.insert(RATELIMIT_LIMIT, number(decision.limit.into()));
    headers.insert(RATELIMIT_REMAINING, number(decision.remaining.into()));
    headers.insert(RATELIMIT_RESET, number(decision.reset_secs(scale)));
}

/// `n` as a header value. The numbers the limit headers carry (limits,
/// requests left, seconds to a reset within the hour) are written once for
/// the life of the process: every answer has three, and a value written
/// anew is an allocation each.
fn number(n: u64) -> HeaderValue {
    static SMALL: OnceLock<Vec<HeaderValue>> = OnceLock::new();
    let small = SMALL.get_or_init(|| {
        (0..=3600u64)
            .map(|n| HeaderValue::from_static(Box::leak(n.to_string().into_boxed_str())))
            .collect()
    });
    usize::try_from(n)
        .ok()
        .and_then(|n| small.get(n))
        .cloned()
        .unwrap_or_else(|| HeaderValue::from(n))
}
