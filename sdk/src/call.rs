//! The future every operation returns: awaited as it is, or first given
//! options for that one call.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use crate::error::Result;
use crate::options::RequestOptions;
use crate::side_channel;

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// One operation, ready to be awaited, with options of its own; see
/// [`RequestOptions`].
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<'a, T> {
    future: Boxed<'a, T>,
    options: RequestOptions,
}

impl<T> fmt::Debug for Call<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<'a, T> Call<'a, T> {
    pub(crate) fn new(future: impl Future<Output = Result<T>> + Send + 'a) -> Self {
        Self {
            future: Box::pin(future),
            options: RequestOptions::default(),
        }
    }

    /// The time-out of each attempt of this call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options = self.options.timeout(timeout);
        self
    }

    /// Attempts at most for this call (1: never repeated).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.options = self.options.max_attempts(attempts);
        self
    }

    /// A header sent with this call's requests to the service.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        self.options = self.options.header(name, value);
        self
    }

    /// All of `options` for this call.
    pub fn options(mut self, options: RequestOptions) -> Self {
        self.options = self.options.options(options);
        self
    }
}

impl<'a, T: 'a> IntoFuture for Call<'a, T> {
    type Output = Result<T>;
    type IntoFuture = Boxed<'a, T>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(within(self.options, self.future))
    }
}

/// Runs `future` with `options` for every request it makes, inside any
/// options of a call around it; a header that cannot be one fails it.
pub(crate) async fn within<T>(
    options: RequestOptions,
    future: impl Future<Output = Result<T>>,
) -> Result<T> {
    options.check()?;
    side_channel::with_options(options, future).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[tokio::test]
    async fn a_header_that_cannot_be_one_fails_the_call_when_awaited() {
        let call = Call::new(async { Ok(1) }).header("bad name", "v");
        let err = call.await.unwrap_err();
        assert!(
            matches!(err, Error::InvalidRequest(ref m) if m.contains("bad name")),
            "{err:?}"
        );
    }
}
