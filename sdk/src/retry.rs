//! When and how long to wait before trying a request again.
//!
//! Limits rule 5 of the service: exponential delay with jitter, 1 s, 2 s, 4 s,
//! 8 s, stop after 5 attempts. The delays here are "equal jitter": the n-th retry
//! waits a random time between half of `base × 2ⁿ⁻¹` (capped) and all of it, which
//! spreads the retries of many clients without ever retrying at once (a service
//! that just failed gets at least half the step to recover). A `retry-after` from
//! the service is a floor under that.
//!
//! Which answers are worth another attempt is decided in one place, [`decide`]
//! and [`decide_transport`], for every operation, by its [`Repeat`] rule: an
//! attempt is repeated only when repeating cannot act twice. The loop that
//! applies it is in `transport.rs`.

use std::time::Duration;

use rand::Rng as _;

use crate::error::{ApiError, ErrorKind};
use crate::operation::Repeat;

/// How the client retries a request that failed for a transient reason.
///
/// The default follows the service's advice: up to 5 attempts, waits capped at
/// 1 s, 2 s, 4 s and 8 s with equal jitter (at least half of each), and at least
/// `retry-after` when the
/// service sends one.
///
/// ```
/// use std::time::Duration;
/// use mediagen::{Client, RetryPolicy};
///
/// let policy = RetryPolicy::default()
///     .max_attempts(3)
///     .base_delay(Duration::from_millis(200));
/// assert_eq!(policy.delay_cap(2), Duration::from_millis(400));
///
/// let client = Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .api_key("mg_live_demo_secret")
///     .retry_policy(policy)
///     .build()?;
/// # drop(client);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
    jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries: every request is sent once.
    ///
    /// ```
    /// assert_eq!(mediagen::RetryPolicy::none().attempts(), 1);
    /// ```
    pub fn none() -> Self {
        Self::default().max_attempts(1)
    }

    /// Attempts in all, the first included (at least 1; default 5).
    ///
    /// ```
    /// assert_eq!(mediagen::RetryPolicy::default().max_attempts(0).attempts(), 1);
    /// ```
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The cap of the first retry's delay, doubled for each further one (default 1 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mediagen::RetryPolicy::default().base_delay(Duration::from_millis(10));
    /// assert_eq!(policy.delay_cap(4), Duration::from_millis(80));
    /// ```
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.base_delay = delay;
        self
    }

    /// The largest delay between two attempts, `retry-after` aside (default 30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mediagen::RetryPolicy::default().max_delay(Duration::from_secs(3));
    /// assert_eq!(policy.delay_cap(4), Duration::from_secs(3));
    /// ```
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The longest `retry-after` the client waits out by itself (default 60 s). A
    /// longer one ends the call with [`ErrorKind::RateLimited`], so the caller decides.
    /// It also bounds how long the pacer holds a request back for a rate-limit window
    /// to reset (the top-up limit's window is ten minutes).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mediagen::RetryPolicy::default().max_retry_after(Duration::from_secs(5));
    /// # drop(policy);
    /// ```
    pub fn max_retry_after(mut self, limit: Duration) -> Self {
        self.max_retry_after = limit;
        self
    }

    /// Waits exactly the cap instead of a random time below it (for reproducible
    /// schedules; jitter is on by default).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mediagen::RetryPolicy::default().jitter(false);
    /// assert_eq!(policy.delay(3), Duration::from_secs(4));
    /// ```
    pub fn jitter(mut self, on: bool) -> Self {
        self.jitter = on;
        self
    }

    /// Attempts in all, the first included.
    ///
    /// ```
    /// assert_eq!(mediagen::RetryPolicy::default().attempts(), 5);
    /// ```
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The upper bound of the delay before retry number `retry` (1 is the first
    /// retry): `base × 2^(retry−1)`, at most the maximum delay.
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mediagen::RetryPolicy::default();
    /// let caps: Vec<_> = (1..=4).map(|n| policy.delay_cap(n).as_secs()).collect();
    /// assert_eq!(caps, [1, 2, 4, 8]);
    /// ```
    pub fn delay_cap(&self, retry: u32) -> Duration {
        let doublings = retry.saturating_sub(1).min(30);
        self.base_delay
            .saturating_mul(1 << doublings)
            .min(self.max_delay)
    }

    /// A delay before retry number `retry`: uniformly random between half of
    /// [`delay_cap`](Self::delay_cap) and all of it ("equal jitter"), or the cap
    /// itself without jitter.
    ///
    /// ```
    /// let policy = mediagen::RetryPolicy::default();
    /// for _ in 0..100 {
    ///     let delay = policy.delay(3);
    ///     assert!(delay >= policy.delay_cap(3) / 2 && delay <= policy.delay_cap(3));
    /// }
    /// ```
    pub fn delay(&self, retry: u32) -> Duration {
        let cap = self.delay_cap(retry);
        if !self.jitter || cap.is_zero() {
            return cap;
        }
        let nanos = u64::try_from(cap.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rand::rng().random_range(nanos / 2..=nanos))
    }

    /// The longest the client waits by itself for a window to reset.
    pub(crate) fn longest_wait(&self) -> Duration {
        self.max_retry_after
    }

    /// The delay before retry number `retry` when the service asked for at least
    /// `retry_after`; `None` when that is longer than this policy waits out.
    pub(crate) fn delay_after(
        &self,
        retry: u32,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        match retry_after {
            Some(floor) if floor > self.max_retry_after => None,
            Some(floor) => Some(self.delay(retry).max(floor)),
            None => Some(self.delay(retry)),
        }
    }
}

/// Whether a failed attempt is worth another one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Try again after the back-off, and at least `retry_after`.
    Retry { retry_after: Option<Duration> },
    /// The answer is final.
    Stop,
    /// The request may have acted and its outcome is unknown: not sent again.
    Unknown,
}

/// The one rule for retrying an error answer, for every operation.
pub(crate) fn decide(error: &ApiError, repeat: Repeat) -> Decision {
    // Refused before acting: a windowed limit says when to come back (Limits,
    // rule 3). The concurrency limit has no `retry-after`: waiting for a task to
    // end is the caller's decision.
    if let ErrorKind::RateLimited {
        retry_after: Some(after),
        ..
    } = error.kind
    {
        return Decision::Retry {
            retry_after: Some(after),
        };
    }
    match repeat {
        // Rule 8 of POST /v1/generations: the first request with this key is still
        // being executed; asking again with the same key returns its generation.
        Repeat::Keyed if error.kind == ErrorKind::Conflict && error.status == 409 => {
            Decision::Retry { retry_after: None }
        }
        Repeat::Safe | Repeat::Keyed if error.is_retryable() => Decision::Retry {
            retry_after: error.retry_after(),
        },
        Repeat::Once { .. } if error.status.is_server_error() => Decision::Unknown,
        _ => Decision::Stop,
    }
}

/// The rule for a request that got no answer: a connection that was never made is
/// always tried again; one that broke after the request went out only when the
/// request may be sent twice.
pub(crate) fn decide_transport(error: &reqwest::Error, repeat: Repeat) -> Decision {
    if error.is_connect() {
        return Decision::Retry { retry_after: None };
    }
    if error.is_builder() {
        return Decision::Stop;
    }
    match repeat {
        Repeat::Once { .. } => Decision::Unknown,
        Repeat::Safe | Repeat::Keyed
            if error.is_timeout() || error.is_request() || error.is_body() =>
        {
            Decision::Retry { retry_after: None }
        }
        Repeat::Safe | Repeat::Keyed => Decision::Stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operation::{Operation, OperationId};

    #[test]
    fn the_default_caps_are_the_documents_one_two_four_eight_seconds() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.attempts(), 5);
        let caps: Vec<u64> = (1..=4).map(|n| policy.delay_cap(n).as_secs()).collect();
        assert_eq!(caps, [1, 2, 4, 8]);
    }

    #[test]
    fn jittered_delays_stay_within_half_the_cap_and_the_cap_and_spread_out() {
        let policy = RetryPolicy::default();
        for retry in 1..=4 {
            let cap = policy.delay_cap(retry);
            let delays: Vec<Duration> = (0..500).map(|_| policy.delay(retry)).collect();
            // Never sooner than half the step: 0.5 s, 1 s, 2 s, 4 s.
            assert!(
                delays.iter().all(|d| *d >= cap / 2 && *d <= cap),
                "retry {retry}"
            );
            // Spread over the range, not bunched at either end.
            assert!(delays.iter().any(|d| *d < cap * 5 / 8), "retry {retry}");
            assert!(delays.iter().any(|d| *d > cap * 7 / 8), "retry {retry}");
        }
    }

    #[test]
    fn retry_after_is_a_floor_under_the_back_off() {
        let policy = RetryPolicy::default();
        let delay = policy
            .delay_after(1, Some(Duration::from_secs(17)))
            .unwrap();
        assert!(delay >= Duration::from_secs(17));
    }

    #[test]
    fn a_retry_after_beyond_the_limit_is_left_to_the_caller() {
        let policy = RetryPolicy::default().max_retry_after(Duration::from_secs(10));
        assert_eq!(policy.delay_after(1, Some(Duration::from_secs(600))), None);
    }

    fn api_error(status: u16, body: &str, headers: &[(&str, &str)]) -> ApiError {
        let mut map = http::HeaderMap::new();
        for (name, value) in headers {
            map.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        ApiError::from_response(
            http::StatusCode::from_u16(status).unwrap(),
            &map,
            body.as_bytes(),
        )
    }

    #[test]
    fn a_post_that_may_have_acted_is_never_repeated_after_a_5xx() {
        let once = Operation::of(OperationId::CreateTopup).repeat;
        for (status, code) in [
            (500, "INTERNAL_ERROR"),
            (502, "GATEWAY_TIMEOUT"),
            (503, "SERVICE_UNAVAILABLE"),
            (504, ""),
        ] {
            let body =
                format!(r#"{{"error":{{"code":"{code}","message":"m","requestId":"req_1"}}}}"#);
            assert_eq!(
                decide(&api_error(status, &body, &[]), once),
                Decision::Unknown,
                "{status}"
            );
            assert!(matches!(
                decide(&api_error(status, &body, &[]), Repeat::Keyed),
                Decision::Retry { .. }
            ));
        }
    }

    #[test]
    fn a_refusal_before_acting_is_repeated_for_every_operation() {
        let limited = api_error(
            429,
            r#"{"error":{"code":"RATE_LIMIT_ERROR","message":"slow","requestId":"req_1","details":{"retryAfter":3}}}"#,
            &[("retry-after", "3")],
        );
        for repeat in [
            Repeat::Safe,
            Repeat::Keyed,
            Operation::of(OperationId::CreateTopup).repeat,
        ] {
            assert_eq!(
                decide(&limited, repeat),
                Decision::Retry {
                    retry_after: Some(Duration::from_secs(3))
                }
            );
        }
        // The concurrency limit has no retry-after: waiting for a task is the caller's call.
        let concurrency = api_error(
            429,
            r#"{"error":{"code":"RATE_LIMIT_ERROR","message":"Maximum 5 concurrent generations allowed","requestId":"req_1"}}"#,
            &[],
        );
        assert_eq!(decide(&concurrency, Repeat::Keyed), Decision::Stop);
    }

    #[test]
    fn only_the_keyed_create_repeats_a_conflict() {
        let conflict = api_error(
            409,
            r#"{"error":{"code":"CONFLICT_ERROR","message":"running","requestId":"req_1"}}"#,
            &[],
        );
        assert!(matches!(
            decide(&conflict, Repeat::Keyed),
            Decision::Retry { .. }
        ));
        assert_eq!(decide(&conflict, Repeat::Safe), Decision::Stop);
        let once = Operation::of(OperationId::CancelGeneration).repeat;
        assert_eq!(decide(&conflict, once), Decision::Stop);
    }

    #[test]
    fn huge_retry_counts_do_not_overflow() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay_cap(u32::MAX), Duration::from_secs(30));
    }
}
