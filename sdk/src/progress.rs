//! Progress of a transfer (an upload, a download), for callbacks.

/// Bytes moved so far, for progress callbacks.
///
/// ```
/// let progress = mediagen::Progress { bytes: 512, total: Some(2048) };
/// assert_eq!(progress.fraction(), Some(0.25));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes sent or received.
    pub bytes: u64,
    /// The whole size, when known.
    pub total: Option<u64>,
}

impl Progress {
    /// `bytes / total`, when the total is known and not zero.
    ///
    /// ```
    /// assert_eq!(mediagen::Progress { bytes: 1, total: None }.fraction(), None);
    /// ```
    pub fn fraction(&self) -> Option<f64> {
        match self.total {
            Some(total) if total > 0 => Some(self.bytes as f64 / total as f64),
            _ => None,
        }
    }
}
