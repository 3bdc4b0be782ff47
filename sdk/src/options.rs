//! Options for one call: a time-out, a number of attempts and extra headers
//! that apply to that call alone, over the client's defaults.
//!
//! Every operation returns a [`Call`](crate::Call), which is awaited as it is or first given
//! options (the way `customize()` works in the AWS SDKs):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mediagen::Error> {
//! # let mock = mediagen_mock_server::MockServer::start().await;
//! # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
//! use std::time::Duration;
//!
//! let balance = client
//!     .billing()
//!     .balance()
//!     .timeout(Duration::from_secs(2)) // each attempt of this call
//!     .max_attempts(1)                 // and no retry
//!     .header("x-correlation-id", "order-17")
//!     .await?;
//! # let _ = balance;
//! # Ok(())
//! # }
//! ```
//!
//! [`Client::with_options`](crate::Client::with_options) gives the same options
//! to every call of a client clone (the way `with_options` works in
//! openai-python), lists and streams included.

use std::fmt;
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::{Error, Result};

/// A time-out, a number of attempts and extra headers for some calls.
///
/// Headers go only to the service (the client's base URL), never to the
/// storage URLs of uploads and downloads; a time-out and a number of attempts
/// apply to both.
#[derive(Clone, Default)]
pub struct RequestOptions {
    timeout: Option<Duration>,
    max_attempts: Option<u32>,
    headers: HeaderMap,
    /// A header that could not be one, reported when the call is awaited.
    invalid: Option<String>,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be credentials: only their names are shown.
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_attempts", &self.max_attempts)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl RequestOptions {
    /// No options: the client's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time-out of each attempt, instead of the client's.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Attempts at most (1: never repeated), instead of the retry policy's. A
    /// request is still repeated only when repeating cannot act twice.
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts.max(1));
        self
    }

    /// A header sent with each request to the service, replacing one of the
    /// same name. A name or value that cannot be a header fails the call with
    /// [`Error::InvalidRequest`] when it is awaited.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(mut value)) => {
                if name == http::header::AUTHORIZATION {
                    value.set_sensitive(true);
                }
                self.headers.insert(name, value);
            }
            _ => {
                self.invalid
                    .get_or_insert_with(|| format!("{name:?} cannot be sent as a header"));
            }
        }
        self
    }

    /// These options, with `more`'s settings winning where it has them.
    pub fn options(self, more: RequestOptions) -> Self {
        self.merged(&more)
    }

    /// These options, with `inner`'s settings winning where it has them.
    pub(crate) fn merged(&self, inner: &Self) -> Self {
        let mut headers = self.headers.clone();
        for (name, value) in &inner.headers {
            headers.insert(name.clone(), value.clone());
        }
        Self {
            timeout: inner.timeout.or(self.timeout),
            max_attempts: inner.max_attempts.or(self.max_attempts),
            headers,
            invalid: inner.invalid.clone().or_else(|| self.invalid.clone()),
        }
    }

    pub(crate) fn timeout_or(&self, default: Duration) -> Duration {
        self.timeout.unwrap_or(default)
    }

    pub(crate) fn attempts_or(&self, default: u32) -> u32 {
        self.max_attempts.unwrap_or(default)
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// A header given that could not be one, as the error of the call.
    pub(crate) fn check(&self) -> Result<()> {
        match &self.invalid {
            Some(invalid) => Err(Error::InvalidRequest(invalid.clone())),
            None => Ok(()),
        }
    }
}

/// The options of a builder that runs many requests (a wait, a batch, an
/// upload): the same as a [`Call`]'s, with `request_timeout` for the time-out
/// of each request where `timeout` already bounds the whole.
macro_rules! request_options {
    ($field:ident) => {
        /// The time-out of each request this makes, instead of the client's.
        pub fn request_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.$field = self.$field.timeout(timeout);
            self
        }

        /// Attempts at most for each request this makes (1: never repeated).
        pub fn max_attempts(mut self, attempts: u32) -> Self {
            self.$field = self.$field.max_attempts(attempts);
            self
        }

        /// A header sent with each request this makes to the service.
        pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
            self.$field = self.$field.header(name, value);
            self
        }
    };
}
pub(crate) use request_options;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_options_win_and_headers_add_up() {
        let outer = RequestOptions::new()
            .timeout(Duration::from_secs(9))
            .max_attempts(3)
            .header("x-a", "outer")
            .header("x-b", "outer");
        let inner = RequestOptions::new().max_attempts(1).header("x-b", "inner");
        let merged = outer.merged(&inner);
        assert_eq!(merged.timeout_or(Duration::ZERO), Duration::from_secs(9));
        assert_eq!(merged.attempts_or(5), 1);
        assert_eq!(merged.headers()["x-a"], "outer");
        assert_eq!(merged.headers()["x-b"], "inner");
    }

    #[test]
    fn a_credential_in_a_header_is_never_shown() {
        let options = RequestOptions::new().header("authorization", "Bearer mg_live_x_secret");
        assert!(options.headers()["authorization"].is_sensitive());
        assert!(!format!("{options:?}").contains("secret"));
    }
}
