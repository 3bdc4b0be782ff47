//! The request's scope: its id and the time it arrived, for the whole of its
//! handling, and a state-changing request finished when its client goes away.
//!
//! A tower layer of its own rather than `axum::middleware::from_fn`: every
//! request of a world passes it, and `from_fn` clones the service below it,
//! boxes it again as `Next` and boxes its own future, three allocations a
//! request for a layer whose work is two lines.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::extract::Request;
use axum::http::Method;
use futures::future::Either;
use tokio::task::futures::TaskLocalFuture;
use tower::{Layer, Service};

use crate::error::{REQUEST, RequestContext};
use crate::state::AppState;

/// Gives each request its id and the time it arrived on the world's clock,
/// for the whole of its handling: every error answer of the world, the
/// service's and the control API's alike, carries that time as its
/// `timestamp`, the clock of every record it is about.
///
/// A request that may change state is finished even when its client goes
/// away (a client time-out, a closed connection), as the service finishes it:
/// a create's `Idempotency-Key` is never left in flight, nor a reservation
/// held or a task half made, when the client disconnects during a slow
/// answer. A read is dropped with its connection.
#[derive(Clone)]
pub(crate) struct RequestScope {
    state: AppState,
}

impl RequestScope {
    /// The scope of the requests of the world whose state is `state`.
    pub(crate) fn new(state: AppState) -> Self {
        Self { state }
    }
}

impl<S> Layer<S> for RequestScope {
    type Service = Scoped<S>;

    fn layer(&self, inner: S) -> Scoped<S> {
        Scoped {
            state: self.state.clone(),
            inner,
        }
    }
}

/// A service whose requests run in their [`RequestScope`].
#[derive(Clone)]
pub(crate) struct Scoped<S> {
    state: AppState,
    inner: S,
}

type InScope<F> = TaskLocalFuture<RequestContext, F>;

impl<S> Service<Request> for Scoped<S>
where
    S: Service<Request>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Either<InScope<S::Future>, Finished<InScope<S::Future>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let changes_state = !matches!(*request.method(), Method::GET | Method::HEAD);
        // The services below do their work when polled (axum's routes and
        // the service middleware call nothing before), so the scope around
        // the future covers all of it.
        let work = REQUEST.scope(
            RequestContext::at(self.state.now()),
            self.inner.call(request),
        );
        if changes_state {
            Either::Right(Finished(Some(Box::pin(work))))
        } else {
            Either::Left(work)
        }
    }
}

/// A request's handling that goes on when its client goes away: polled in
/// place while the client waits (no task of its own, so no cost), and left
/// to a task of its own where it stood if the connection is dropped first.
pub(crate) struct Finished<F: Future + Send + 'static>(Option<Pin<Box<F>>>)
where
    F::Output: Send + 'static;

impl<F: Future + Send + 'static> Future for Finished<F>
where
    F::Output: Send + 'static,
{
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let work = self
            .0
            .as_mut()
            .expect("a request's handling polled after it ended");
        let response = ready!(work.as_mut().poll(cx));
        self.0 = None;
        Poll::Ready(response)
    }
}

impl<F: Future + Send + 'static> Drop for Finished<F>
where
    F::Output: Send + 'static,
{
    fn drop(&mut self) {
        if let Some(work) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(work);
        }
    }
}
