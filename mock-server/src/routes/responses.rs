//! The response modes at the edge: a JSON answer of the service is cut to
//! what the document guarantees (`minimal`) or given a member and a header no
//! client knows (`extra`), by the contract's schema of that answer.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;

use crate::config::Responses;
use crate::contract::shape::{self, EXTRA_HEADER, EXTRA_HEADER_VALUE};

/// Bytes of an answer read to reshape it at most: far above any JSON answer of
/// the service, whose lists have 100 items a page.
const MAX_JSON: usize = 16 * 1024 * 1024;

/// `response` as `mode` sends it (`full` sends it as it is).
pub async fn shaped(mode: Responses, method: &str, path: &str, response: Response) -> Response {
    if mode == Responses::Full {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    if mode == Responses::Extra {
        parts
            .headers
            .insert(EXTRA_HEADER, HeaderValue::from_static(EXTRA_HEADER_VALUE));
    }
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let shapes = shape::shapes();
    let schema = shapes.response_schema(method, path, parts.status.as_u16());
    let (true, Some(schema)) = (is_json, schema) else {
        return Response::from_parts(parts, body);
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_JSON).await else {
        // A body that cannot be read is sent as the failure it is.
        return Response::from_parts(parts, Body::empty());
    };
    let Ok(value) = serde_json::from_slice(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let value = match mode {
        Responses::Minimal => shapes.minimal(schema, &value),
        _ => shapes.extra(schema, &value),
    };
    let bytes = serde_json::to_vec(&value).unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}
