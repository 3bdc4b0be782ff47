//! What a handler reads from a request, each piece read the way the service
//! reads it and refused in its envelope: the authenticated caller (401, 403),
//! path and query parameters (400), and a JSON body (415, 413, 400), checked
//! against its schema of the contract and deserialized into a typed struct.

use std::collections::HashMap;
use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::contract::FieldError;
use crate::domain::UserId;
use crate::domain::auth::{AuthRefusal, Scope};
use crate::domain::refusal::Invalid;
use crate::error::{ApiError, Result};
use crate::state::AppState;

/// The caller as authentication found it, put in the request's extensions by
/// the service middleware so that the key is checked once.
#[derive(Debug, Clone, Copy)]
pub enum Caller {
    Authenticated { user_id: UserId, scope: Scope },
    Refused(AuthRefusal),
}

/// The authenticated user of a request; rejects with 401 or 403 otherwise.
#[derive(Debug, Clone, Copy)]
pub struct AuthUser {
    pub user_id: UserId,
}

impl<S: Sync> FromRequestParts<S> for AuthUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self> {
        match parts.extensions.get::<Caller>().copied() {
            Some(Caller::Authenticated { user_id, scope }) => {
                if scope == Scope::ReadOnly && !matches!(parts.method, Method::GET | Method::HEAD) {
                    return Err(ApiError::Authorization(AuthRefusal::ReadOnly.message()));
                }
                Ok(Self { user_id })
            }
            Some(Caller::Refused(why)) => Err(ApiError::Authentication(why.message())),
            None => Err(ApiError::Authentication(AuthRefusal::Missing.message())),
        }
    }
}

/// Path parameters, as `axum::extract::Path` reads them, but a path it cannot
/// read (percent-encoded bytes that are not UTF-8) is a 400 in the envelope.
#[derive(Debug, Clone, Copy)]
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Self(value))
            .map_err(|rejection| unreadable("path", rejection.body_text()).into())
    }
}

/// Query parameters, as `axum::extract::Query` reads them, with a query it
/// cannot read answered as a 400 in the envelope.
#[derive(Debug, Clone)]
pub struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Self(value))
            .map_err(|rejection| unreadable("query", rejection.body_text()).into())
    }
}

/// The 400 for a path or a query string the router could not read.
fn unreadable(part: &str, message: String) -> Invalid {
    Invalid::new(
        format!("The {part} parameters are invalid"),
        vec![FieldError::new(
            format!("/{part}"),
            "format",
            message,
            json!({}),
        )],
    )
}

/// A request body the contract describes: the name of its schema.
pub trait ContractBody: DeserializeOwned {
    /// The schema of `components.schemas` the body must match.
    const SCHEMA: &'static str;
}

/// A JSON body checked against its schema of the contract (400 with
/// `details.fields[]` when it does not match), then deserialized.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<T: ContractBody> FromRequest<AppState> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self> {
        let Json(value) = Json::from_request(request, state).await?;
        checked(state, value).map(Self)
    }
}

/// A JSON body not yet checked against a schema, for a route that applies a
/// rule of its own first (the webhook endpoint limit), then calls [`checked`].
#[derive(Debug)]
pub struct Json(pub Value);

impl FromRequest<AppState> for Json {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self> {
        let (parts, body) = request.into_parts();
        let bytes = Bytes::from_request(Request::from_parts(parts.clone(), body), state).await;
        json_value(state, &BodyHeaders::of(&parts.headers), bytes).map(Self)
    }
}

/// The body read when a handler has decided to read it: for a create, whose
/// `Idempotency-Key` is looked at before its body (rule 7), and for a route
/// that may be called without a body at all.
pub type RawBody = std::result::Result<Bytes, BytesRejection>;

/// The header a create's key comes in.
pub(crate) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The headers a handler that reads its body itself ([`RawBody`]) looks at:
/// its `Content-Type`, and for a create its `Idempotency-Key`. Read alone,
/// where the `HeaderMap` extractor copies every header of the request.
#[derive(Debug, Clone, Default)]
pub struct BodyHeaders {
    content_type: Option<HeaderValue>,
    /// The `Idempotency-Key` as it came; a create checks it itself.
    pub idempotency_key: Option<HeaderValue>,
}

impl BodyHeaders {
    fn of(headers: &HeaderMap) -> Self {
        Self {
            content_type: headers.get(header::CONTENT_TYPE).cloned(),
            idempotency_key: headers.get(IDEMPOTENCY_KEY).cloned(),
        }
    }
}

impl<S: Sync> FromRequestParts<S> for BodyHeaders {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _state: &S,
    ) -> std::result::Result<Self, Infallible> {
        Ok(Self::of(&parts.headers))
    }
}

/// A body read from `body` as [`Body`] reads it.
pub fn parse<T: ContractBody>(state: &AppState, headers: &BodyHeaders, body: RawBody) -> Result<T> {
    checked(state, json_value(state, headers, body)?)
}

/// 415 for another content type, 413 over the size limit, 400 for text that
/// is not JSON.
fn json_value(state: &AppState, headers: &BodyHeaders, body: RawBody) -> Result<Value> {
    let is_json = headers
        .content_type
        .as_ref()
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
    if !is_json {
        return Err(ApiError::UnsupportedMediaType);
    }
    let bytes = body.map_err(|rejection| body_refusal(state, &rejection))?;
    serde_json::from_slice(&bytes).map_err(|err| {
        Invalid::new(
            "Request body is not valid JSON",
            vec![FieldError::new(
                "",
                "json",
                err.to_string(),
                json!({"line": err.line(), "column": err.column()}),
            )],
        )
        .into()
    })
}

/// A body that could not be read: over the size limit (413), or broken.
pub fn body_refusal(state: &AppState, rejection: &BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge {
            limit: state.config().body_limit_bytes,
        }
    } else {
        Invalid::field(
            "",
            "body",
            format!("Could not read the request body: {rejection}"),
        )
        .into()
    }
}

/// `value` as a `T`, if it matches the contract's schema of `T`; else 400 with
/// the fields.
pub fn checked<T: ContractBody>(state: &AppState, value: Value) -> Result<T> {
    state
        .schemas()
        .validate(T::SCHEMA, &value)
        .map_err(|fields| Invalid::new("Request body does not match the schema", fields))?;
    // The schema passed: a type that still refuses is stricter than its schema.
    serde_json::from_value(value).map_err(|err| {
        Invalid::field(
            "",
            "type",
            format!("Request body does not match the schema: {err}"),
        )
        .into()
    })
}

/// Items per page of a list when `limit` is not given, and the most allowed.
const DEFAULT_PAGE: usize = 20;
const MAX_PAGE: usize = 100;

/// The `limit` query parameter of a list: 20 when absent, 1 to 100.
pub fn page_limit(query: &HashMap<String, String>) -> Result<usize> {
    match query.get("limit") {
        Some(raw) => raw
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE).contains(n))
            .ok_or_else(|| {
                Invalid::query(
                    "limit",
                    "maximum",
                    format!("must be an integer from 1 to {MAX_PAGE}"),
                    json!({"minimum": 1, "maximum": MAX_PAGE}),
                )
                .into()
            }),
        None => Ok(DEFAULT_PAGE),
    }
}

/// The 400 for a `cursor` that no previous page gave.
pub fn bad_cursor() -> Invalid {
    Invalid::query(
        "cursor",
        "format",
        "must be a cursor from a previous page",
        json!({}),
    )
}

/// One page of a list, `{data, nextCursor, hasMore}`: the items after the one
/// whose id is the `cursor` query parameter, `limit` of them. `items` are in
/// list order; `id` gives an item's cursor and `view` its JSON.
pub fn page<T>(
    query: &HashMap<String, String>,
    items: &[T],
    id: impl Fn(&T) -> String,
    view: impl Fn(&T) -> Value,
) -> Result<Value> {
    let limit = page_limit(query)?;
    let start = match query.get("cursor") {
        Some(cursor) => {
            items
                .iter()
                .position(|i| id(i) == *cursor)
                .ok_or_else(bad_cursor)?
                + 1
        }
        None => 0,
    };
    let page = &items[start..items.len().min(start + limit)];
    let has_more = items.len() > start + page.len();
    let next_cursor = page.last().filter(|_| has_more).map(&id);
    Ok(json!({
        "data": page.iter().map(view).collect::<Vec<_>>(),
        "nextCursor": next_cursor,
        "hasMore": has_more,
    }))
}

/// A date-time query parameter (`from`, `to`), if given.
pub fn time_param(query: &HashMap<String, String>, name: &str) -> Result<Option<DateTime<Utc>>> {
    query
        .get(name)
        .map(|raw| {
            DateTime::parse_from_rfc3339(raw)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| {
                    Invalid::query(
                        name,
                        "format",
                        "must match format \"date-time\"",
                        json!({"format": "date-time"}),
                    )
                    .into()
                })
        })
        .transpose()
}

/// A query parameter that must be one of `allowed`.
pub fn enum_param<'a>(
    query: &HashMap<String, String>,
    name: &str,
    allowed: &[&'a str],
) -> Result<Option<&'a str>> {
    query
        .get(name)
        .map(|raw| {
            allowed
                .iter()
                .find(|value| **value == raw)
                .copied()
                .ok_or_else(|| {
                    Invalid::new(
                        format!(
                            "Query parameter {name} must be one of {}; got '{raw}'",
                            allowed.join(", ")
                        ),
                        vec![FieldError::new(
                            format!("/query/{name}"),
                            "enum",
                            "must be equal to one of the allowed values",
                            json!({ "allowedValues": allowed }),
                        )],
                    )
                    .into()
                })
        })
        .transpose()
}

/// A path parameter that must be a UUID; 400 with the failing field otherwise.
pub fn uuid_param(raw: &str, name: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(raw).map_err(|_| {
        Invalid::new(
            format!("Path parameter {name} must be a UUID"),
            vec![FieldError::new(
                format!("/path/{name}"),
                "format",
                "must match format \"uuid\"",
                json!({"format": "uuid"}),
            )],
        )
        .into()
    })
}
