//! Operations of the contract that the mock does not serve yet answer 501 in
//! the error envelope, never a 404 or a panic. The list comes from the
//! contract itself, so an operation stops being here the moment a module
//! routes it.

use std::collections::HashSet;

use axum::Router;
use axum::http::{Method, Uri};
use axum::routing::{MethodFilter, on};

use crate::error::ApiError;
use crate::state::AppState;

/// Operations the mock serves: (method, path as in the contract).
const IMPLEMENTED: &[(&str, &str)] = &[
    ("get", "/health"),
    ("get", "/v1/catalog/"),
    ("get", "/api/openapi.json"),
    ("post", "/v1/generations"),
    ("get", "/v1/generations"),
    ("get", "/v1/generations/{id}"),
    ("post", "/v1/generations/{id}/cancel"),
    ("post", "/v1/generations/estimate"),
    ("post", "/v1/webhook-endpoints"),
    ("get", "/v1/webhook-endpoints"),
    ("get", "/v1/webhook-endpoints/{id}"),
    ("patch", "/v1/webhook-endpoints/{id}"),
    ("delete", "/v1/webhook-endpoints/{id}"),
    ("post", "/v1/webhook-endpoints/{id}/rotate-secret"),
    ("post", "/v1/webhook-endpoints/{id}/test"),
    ("get", "/v1/webhook-endpoints/{id}/deliveries"),
    (
        "post",
        "/v1/webhook-endpoints/{id}/deliveries/{messageId}/redeliver",
    ),
];

/// Adds a 501 route for every operation of the contract not in `IMPLEMENTED`.
pub fn add_missing(mut router: Router<AppState>) -> Router<AppState> {
    let implemented: HashSet<_> = IMPLEMENTED.iter().copied().collect();
    let doc = mediagen_openapi::document().expect("the embedded contract is JSON");
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, filter) in [
            ("get", MethodFilter::GET),
            ("post", MethodFilter::POST),
            ("put", MethodFilter::PUT),
            ("patch", MethodFilter::PATCH),
            ("delete", MethodFilter::DELETE),
        ] {
            if item.get(method).is_some() && !implemented.contains(&(method, path.as_str())) {
                router = router.route(path, on(filter, not_implemented));
            }
        }
    }
    router
}

async fn not_implemented(method: Method, uri: Uri) -> ApiError {
    ApiError::NotImplemented(format!(
        "{method} {} is part of the service but not of this version of the mock",
        uri.path()
    ))
}
