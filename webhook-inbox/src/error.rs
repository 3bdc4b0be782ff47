//! What can go wrong, sorted by what the caller does about it: a delivery that
//! does not verify is refused for good (4xx); a store that cannot write now is
//! a reason for the service to come back later (503), never a 2xx.

use std::sync::Arc;

use rusqlite::ErrorCode;
use webhook_verify::WebhookError;

/// Why the inbox could not do what it was asked.
///
/// ```
/// use webhook_inbox::InboxError;
///
/// assert!(InboxError::Full.is_unavailable());
/// assert!(!InboxError::ClaimLost.is_unavailable());
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum InboxError {
    /// Another connection held the database's write lock longer than
    /// [`InboxConfig::lock_wait`](crate::InboxConfig::lock_wait).
    #[error("the inbox's database stayed locked by another connection")]
    Locked,
    /// The database reached [`InboxConfig::max_bytes`](crate::InboxConfig::max_bytes),
    /// or its disk is full.
    #[error("the inbox's database is full")]
    Full,
    /// The database cannot be written: a read-only file or file system, or a
    /// file moved or deleted while open.
    #[error("the inbox's database is read-only")]
    ReadOnly,
    /// More deliveries wait to be written than the inbox queues
    /// ([`InboxConfig::queue`](crate::InboxConfig::queue)).
    #[error("too many deliveries are waiting to be stored")]
    Overloaded,
    /// The thread that writes deliveries has stopped.
    #[error("the inbox's writer has stopped")]
    Closed,
    /// The claim's lease ran out and the message was claimed again (or
    /// completed) by another worker: this worker's work is rolled back.
    #[error("the claim was lost: its lease ran out and another worker took the message")]
    ClaimLost,
    /// Any other failure of the database.
    #[error("the inbox's database failed")]
    Database(#[source] Arc<rusqlite::Error>),
    /// The lock file beside the database could not be opened or locked.
    #[error("the inbox's lock file failed")]
    LockFile(#[source] Arc<std::io::Error>),
}

impl InboxError {
    /// Whether the failure is of the store rather than of the message: the
    /// service should send the message again later (answer 503).
    ///
    /// ```
    /// assert!(webhook_inbox::InboxError::Locked.is_unavailable());
    /// ```
    pub fn is_unavailable(&self) -> bool {
        !matches!(self, Self::ClaimLost)
    }
}

impl From<rusqlite::Error> for InboxError {
    fn from(err: rusqlite::Error) -> Self {
        match err.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Self::Locked,
            Some(ErrorCode::DiskFull) => Self::Full,
            Some(ErrorCode::ReadOnly) => Self::ReadOnly,
            _ => Self::Database(Arc::new(err)),
        }
    }
}

/// Why a delivery was not accepted.
///
/// ```
/// use webhook_inbox::{AcceptError, InboxError};
///
/// assert_eq!(AcceptError::Unavailable(InboxError::Locked).status(), 503);
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AcceptError {
    /// The delivery did not verify (signature, headers or timestamp): answer
    /// 400. Nothing was stored.
    #[error("the delivery did not verify")]
    Refused(#[from] WebhookError),
    /// The delivery verified but could not be stored now: answer 503, so that
    /// the service sends it again later. Nothing was stored.
    #[error("the delivery could not be stored")]
    Unavailable(#[from] InboxError),
}

impl AcceptError {
    /// The HTTP status to answer with: 400 for a refusal, 503 for a store
    /// that cannot write now.
    ///
    /// ```
    /// use webhook_inbox::AcceptError;
    /// use webhook_verify::WebhookError;
    ///
    /// assert_eq!(AcceptError::Refused(WebhookError::InvalidSignature).status(), 400);
    /// ```
    pub fn status(&self) -> u16 {
        match self {
            Self::Refused(_) => 400,
            Self::Unavailable(_) => 503,
        }
    }
}
