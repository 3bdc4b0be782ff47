//! The words the contract says each operation's and each error code's policy
//! in: how an operation may be repeated (`x-repeat`), whether an error is
//! worth trying again (`x-retry` of `ErrorCode`), and whom a rate limit
//! counts (`per` of `x-rate-limits`). The generator reads the contract's
//! values with [`Repeat::from_wire`], [`Retry::from_wire`] and
//! [`LimitPer::from_wire`], so a value outside these fails `cargo codegen`;
//! [`operations`](crate::operations) and [`sets`](crate::sets) answer in them.

/// Whether sending an operation again can make it act twice (`x-repeat`).
///
/// ```
/// use mediagen_openapi::operations::OperationId;
/// use mediagen_openapi::policy::Repeat;
///
/// assert_eq!(OperationId::CreateGeneration.repeat(), Repeat::Keyed);
/// assert_eq!(OperationId::CreateTopup.repeat(), Repeat::Once);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repeat {
    /// Idempotent by nature: twice has the effect of once (a read, a `PUT` of
    /// a whole resource, a `DELETE`, a computation sent as `POST`).
    Safe,
    /// Carries an `Idempotency-Key`: a repeat with the same key returns what
    /// the first attempt made.
    Keyed,
    /// May act (charge, send, change a secret): sent again only when it
    /// surely did not act, because it never reached the service or was
    /// refused before acting.
    Once,
}

impl Repeat {
    /// The value of `x-repeat`: `safe`, `keyed` or `once`.
    pub fn from_wire(text: &str) -> Option<Self> {
        Some(match text {
            "safe" => Self::Safe,
            "keyed" => Self::Keyed,
            "once" => Self::Once,
            _ => return None,
        })
    }
}

/// Whether an error is worth trying again, and how (`x-retry` of `ErrorCode`).
///
/// ```
/// use mediagen_openapi::policy::Retry;
/// use mediagen_openapi::sets::ErrorCode;
///
/// assert_eq!(ErrorCode::RateLimitError.retry(), Retry::AfterRetryAfter);
/// assert_eq!(ErrorCode::ServiceUnavailable.retry(), Retry::Backoff);
/// assert_eq!(ErrorCode::ValidationError.retry(), Retry::Never);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retry {
    /// A limit: wait the seconds of `retry-after` (Limits, rule 3). The
    /// concurrency limit's 429 sends none: the client waits for one of its
    /// tasks to end (rule 4).
    AfterRetryAfter,
    /// Temporary: try again with an exponential delay and jitter (Errors,
    /// Client handling 2; Limits, rule 5).
    Backoff,
    /// The same request fails again: change it (fix the parameters, choose
    /// another model, top up) first.
    Never,
}

impl Retry {
    /// The value of `x-retry`: `retry-after`, `backoff` or `never`.
    pub fn from_wire(text: &str) -> Option<Self> {
        Some(match text {
            "retry-after" => Self::AfterRetryAfter,
            "backoff" => Self::Backoff,
            "never" => Self::Never,
            _ => return None,
        })
    }
}

/// Whom a rate limit counts (`per` of `x-rate-limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitPer {
    /// Every request from one IP address, whatever its key (Limits, rule 1).
    Ip,
    /// Every request of one user.
    User,
}

impl LimitPer {
    /// The value of `per`: `ip` or `user`.
    pub fn from_wire(text: &str) -> Option<Self> {
        Some(match text {
            "ip" => Self::Ip,
            "user" => Self::User,
            _ => return None,
        })
    }
}
