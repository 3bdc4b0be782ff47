//! What the service answers a request no route of it takes: the same 404
//! `NOT_FOUND` for an unknown path and for a method a path does not have.

use axum::http::Method;

use crate::domain::refusal::Missing;
use crate::error::ApiError;

/// A path the service has no route for.
pub(super) async fn fallback(method: Method, uri: axum::http::Uri) -> ApiError {
    Missing::Route {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
    .into()
}

/// A route that exists, asked with a method it does not have: the same 404
/// `NOT_FOUND` as an unknown path (the service document's status table has
/// no 405), with the `Allow` header the router adds, on every router of the mock.
pub(crate) async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> ApiError {
    Missing::Method {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
    .into()
}
