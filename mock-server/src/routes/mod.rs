//! The service's HTTP surface: one module per area, the request middleware
//! (request id, rate limits, authentication, request log, limit headers) and
//! the extractors every handler shares.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::config::Responses;
use crate::contract::FieldError;
use crate::domain::UserId;
use crate::domain::auth::{self, AuthRefusal, Scope};
use crate::domain::fault::Effect;
use crate::error::{ApiError, REQUEST, RequestContext, Result, Window, new_request_id};
use crate::state::AppState;
use crate::store::{KeyCheck, LoggedRequest, Store};

pub mod account;
pub mod billing;
pub mod faults;
pub mod files;
pub mod generations;
pub mod meta;
pub mod outputs;
pub mod responses;
pub mod webhooks;

/// Every route of the service (not the control API), behind the service middleware.
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(meta::router())
        .merge(generations::router())
        .merge(webhooks::router())
        .merge(files::router())
        .merge(billing::router())
        .merge(account::router())
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            service_middleware,
        ))
}

async fn fallback(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("No route for {method} {}", uri.path()))
}

/// A route that exists, asked with a method it does not have: also in the
/// envelope, on every router of the mock.
pub(crate) async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

/// The caller as authentication found it, put in the request's extensions by
/// the middleware so that the key is checked once.
#[derive(Debug, Clone, Copy)]
enum Caller {
    Authenticated { user_id: UserId, scope: Scope },
    Refused(AuthRefusal),
}

/// The authenticated user of a request; rejects with 401 or 403 otherwise.
#[derive(Debug, Clone, Copy)]
pub struct AuthUser {
    pub user_id: UserId,
}

impl FromRequestParts<AppState> for AuthUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &AppState) -> Result<Self> {
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

fn authenticate(store: &Store, headers: &HeaderMap) -> Option<Caller> {
    let value = headers.get(header::AUTHORIZATION)?;
    let refused = |why| Some(Caller::Refused(why));
    let Ok(text) = value.to_str() else {
        return refused(AuthRefusal::Unreadable);
    };
    let Some((scheme, key)) = text.split_once(' ') else {
        return refused(AuthRefusal::NotBearer);
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return refused(AuthRefusal::NotBearer);
    }
    let Some((public, secret)) = auth::parse(key.trim()) else {
        return refused(AuthRefusal::Malformed);
    };
    match store.check_key(public, secret) {
        KeyCheck::Valid { user_id, scope } => Some(Caller::Authenticated { user_id, scope }),
        KeyCheck::Revoked => refused(AuthRefusal::Revoked),
        KeyCheck::Unknown => refused(AuthRefusal::Invalid),
    }
}

/// Request id, faults, rate limits, authentication, the request log and the
/// `x-ratelimit-*` headers, for every request of the service.
///
/// A fault rule comes before every rule of the service, so it applies under
/// the limits, authentication and validation alike; only a connection dropped
/// before acting skips the limits too, since such a request never reaches the
/// service.
async fn service_middleware(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let ctx = RequestContext {
        request_id: new_request_id(),
        received_at: state.now(),
    };
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |c| c.0.ip().to_string());
    let method = request.method().clone();
    let path = request.uri().path().to_owned();

    // One lock for the key, the faults, the limits and the response mode:
    // every request takes it.
    let (caller, fault, decision, mode) = {
        let mut store = state.store();
        let caller = authenticate(&store, request.headers());
        let user_id = match caller {
            Some(Caller::Authenticated { user_id, .. }) => Some(user_id),
            _ => None,
        };
        let fault = store.take_fault(method.as_str(), &path, user_id);
        let decision = match fault {
            Some((_, Effect::Drop)) => None,
            _ => Some(store.admit(method.as_str(), &path, &ip, ctx.received_at)),
        };
        (caller, fault, decision, store.responses())
    };
    let user_id = match caller {
        Some(Caller::Authenticated { user_id, .. }) => Some(user_id),
        _ => None,
    };
    if let Some(caller) = caller {
        request.extensions_mut().insert(caller);
    }
    let (fault_id, effect) = fault.unzip();
    let mut entry = LoggedRequest {
        request_id: ctx.request_id.clone(),
        at: ctx.received_at,
        method: method.to_string(),
        path,
        status: None,
        ip,
        user_id,
        idempotency_key: request
            .headers()
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        fault: fault_id,
    };
    let Some(decision) = decision else {
        state.log_request(entry);
        return faults::dropped();
    };

    let scale = state.clock().edge_scale();
    let mut response = match effect {
        Some(Effect::Error(ref error)) => {
            let error = ApiError::Injected(error.clone());
            REQUEST
                .scope(ctx.clone(), async { error.into_response() })
                .await
        }
        _ if decision.allowed || !state.config().rate_limits => {
            REQUEST.scope(ctx.clone(), next.run(request)).await
        }
        _ => {
            let error = ApiError::RateLimited {
                message: decision.refusal_message(scale),
                window: Some(Window {
                    limit: decision.decided_by,
                    retry_after: decision.retry_after(scale),
                }),
            };
            REQUEST
                .scope(ctx.clone(), async { error.into_response() })
                .await
        }
    };

    if mode != Responses::Full {
        response = responses::shaped(mode, method.as_str(), &entry.path, response).await;
    }
    let headers = response.headers_mut();
    // A route with a limit of its own per user (top-up) has set these already.
    if !headers.contains_key("x-ratelimit-limit") {
        headers.insert("x-ratelimit-limit", HeaderValue::from(decision.limit));
        headers.insert(
            "x-ratelimit-remaining",
            HeaderValue::from(decision.remaining),
        );
        headers.insert(
            "x-ratelimit-reset",
            HeaderValue::from(decision.reset_secs(scale)),
        );
    }
    if let Ok(id) = HeaderValue::from_str(&ctx.request_id) {
        headers.insert("x-request-id", id);
    }

    // The status is the one the service decided on, even when a fault then
    // drops the answer: the log tells what happened on the service's side.
    entry.status = Some(response.status().as_u16());
    state.log_request(entry);
    match effect {
        Some(Effect::DropAfter) => faults::dropped(),
        Some(Effect::Delay { seconds }) => {
            faults::delay(seconds).await;
            response
        }
        _ => response,
    }
}

/// Path parameters, as `axum::extract::Path` reads them, but a path it cannot
/// read (percent-encoded bytes that are not UTF-8) is a 400 in the envelope:
/// every rejection speaks the service's error format.
#[derive(Debug, Clone, Copy)]
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Self(value))
            .map_err(|rejection| unreadable("path", rejection.body_text()))
    }
}

/// Query parameters, as `axum::extract::Query` reads them, with a query it
/// cannot read answered as a 400 in the envelope.
#[derive(Debug, Clone, Copy)]
pub struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Self(value))
            .map_err(|rejection| unreadable("query", rejection.body_text()))
    }
}

/// The 400 for a path or a query string the router could not read.
fn unreadable(part: &str, message: String) -> ApiError {
    ApiError::validation(
        format!("The {part} parameters are invalid"),
        vec![FieldError {
            path: format!("/{part}"),
            keyword: "format".into(),
            message,
            params: serde_json::json!({}),
        }],
    )
}

/// Reads a JSON body the way the service does: 415 for another content type,
/// 413 over the size limit, 400 for text that is not JSON or does not match
/// the contract's schema `schema` (with `details.fields[]`).
pub fn json_body(
    state: &AppState,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
    schema: &str,
) -> Result<Value> {
    validated(state, json_value(state, headers, body)?, schema)
}

/// A JSON body not yet checked against a schema, for routes that apply a rule
/// of their own first (such as the webhook endpoint limit).
pub fn json_value(
    state: &AppState,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Value> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
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
    let bytes = body.map_err(|rejection| {
        if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge {
                limit: state.config().body_limit_bytes,
            }
        } else {
            let message = format!("Could not read the request body: {rejection}");
            ApiError::validation(
                message.clone(),
                vec![FieldError::new("", "body", message, serde_json::json!({}))],
            )
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|err| {
        ApiError::validation(
            "Request body is not valid JSON",
            vec![FieldError {
                path: String::new(),
                keyword: "json".into(),
                message: err.to_string(),
                params: serde_json::json!({"line": err.line(), "column": err.column()}),
            }],
        )
    })
}

/// `value` if it matches the contract's schema `schema`, else 400 with the fields.
pub fn validated(state: &AppState, value: Value, schema: &str) -> Result<Value> {
    state
        .schemas()
        .validate(schema, &value)
        .map_err(|fields| ApiError::validation("Request body does not match the schema", fields))?;
    Ok(value)
}

/// A 400 for one query parameter.
pub fn query_error(name: &str, keyword: &str, message: String, params: Value) -> ApiError {
    ApiError::validation(
        format!("Query parameter {name} is invalid"),
        vec![FieldError {
            path: format!("/query/{name}"),
            keyword: keyword.into(),
            message,
            params,
        }],
    )
}

/// Items per page of a list when `limit` is not given, and the most allowed.
const DEFAULT_PAGE: usize = 20;
const MAX_PAGE: usize = 100;

/// The `limit` query parameter of a list: 20 when absent, 1 to 100.
pub fn page_limit(query: &std::collections::HashMap<String, String>) -> Result<usize> {
    match query.get("limit") {
        Some(raw) => raw
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE).contains(n))
            .ok_or_else(|| {
                query_error(
                    "limit",
                    "maximum",
                    format!("must be an integer from 1 to {MAX_PAGE}"),
                    serde_json::json!({"minimum": 1, "maximum": MAX_PAGE}),
                )
            }),
        None => Ok(DEFAULT_PAGE),
    }
}

/// The 400 for a `cursor` that no previous page gave.
pub fn bad_cursor() -> ApiError {
    query_error(
        "cursor",
        "format",
        "must be a cursor from a previous page".into(),
        serde_json::json!({}),
    )
}

/// One page of a list, `{data, nextCursor, hasMore}`: the items after the one
/// whose id is the `cursor` query parameter, `limit` of them. `items` are in
/// list order; `id` gives an item's cursor and `view` its JSON.
pub fn page<T>(
    query: &std::collections::HashMap<String, String>,
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
    Ok(serde_json::json!({
        "data": page.iter().map(view).collect::<Vec<_>>(),
        "nextCursor": next_cursor,
        "hasMore": has_more,
    }))
}

/// A date-time query parameter (`from`, `to`), if given.
pub fn time_param(
    query: &std::collections::HashMap<String, String>,
    name: &str,
) -> Result<Option<DateTime<Utc>>> {
    query
        .get(name)
        .map(|raw| {
            DateTime::parse_from_rfc3339(raw)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| {
                    query_error(
                        name,
                        "format",
                        "must match format \"date-time\"".into(),
                        serde_json::json!({"format": "date-time"}),
                    )
                })
        })
        .transpose()
}

/// A path parameter that must be a UUID; 400 with the failing field otherwise.
pub fn uuid_param(raw: &str, name: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(raw).map_err(|_| {
        ApiError::validation(
            format!("Path parameter {name} must be a UUID"),
            vec![FieldError {
                path: format!("/path/{name}"),
                keyword: "format".into(),
                message: "must match format \"uuid\"".into(),
                params: serde_json::json!({"format": "uuid"}),
            }],
        )
    })
}
