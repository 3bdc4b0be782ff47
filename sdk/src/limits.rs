//! What the service says about its limits in the headers of an answer: the
//! `x-ratelimit-*` values (Limits rule 2) and `retry-after` (rule 3). The pacer
//! (`rate_limit.rs`) and the errors (`error.rs`) both read them from here.

use std::time::Duration;

use chrono::{DateTime, Utc};
use http::HeaderMap;

/// The `x-ratelimit-*` values of one answer.
///
/// ```
/// use std::time::Duration;
///
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-ratelimit-limit", "60".parse().unwrap());
/// headers.insert("x-ratelimit-remaining", "57".parse().unwrap());
/// headers.insert("x-ratelimit-reset", "42".parse().unwrap());
/// let limit = mediagen::RateLimit::from_headers(&headers).unwrap();
/// assert_eq!((limit.limit, limit.remaining, limit.reset), (60, 57, Duration::from_secs(42)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimit {
    /// Requests allowed in the window (`x-ratelimit-limit`).
    pub limit: u32,
    /// Requests left in the window (`x-ratelimit-remaining`).
    pub remaining: u32,
    /// Time until the window resets (`x-ratelimit-reset`), as sent.
    pub reset: Duration,
}

impl RateLimit {
    /// Reads the three headers; `None` unless all three are there and numeric.
    ///
    /// ```
    /// assert_eq!(mediagen::RateLimit::from_headers(&http::HeaderMap::new()), None);
    /// ```
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let number = |name| header_str(headers, name)?.parse::<u64>().ok();
        Some(Self {
            limit: u32::try_from(number("x-ratelimit-limit")?).ok()?,
            remaining: u32::try_from(number("x-ratelimit-remaining")?).ok()?,
            reset: Duration::from_secs(number("x-ratelimit-reset")?),
        })
    }
}

/// Which limit of the service a request counts against (Limits): the
/// contract's `x-rate-limits`, with each limit's size and window.
///
/// ```
/// use mediagen::LimitScope;
///
/// assert_eq!(LimitScope::General.default_limit(), 60);
/// assert_eq!(LimitScope::Topup.window().as_secs(), 600);
/// ```
pub use mediagen_openapi::operations::LimitScope;

pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// `retry-after` in seconds, or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = header_str(headers, "retry-after")?;
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&Utc) - Utc::now())
            .to_std()
            .unwrap_or_default(),
    )
}
