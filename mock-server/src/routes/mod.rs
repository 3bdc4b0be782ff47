//! The service's HTTP surface: one module per area, and the request middleware
//! (request id, rate limits, authentication, request log, limit headers). What
//! handlers read from a request is in `extract.rs`; the refusals they return
//! become the error envelope in `refusal.rs`.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath, Request};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::Route;
use mediagen_openapi::operations::{LimitScope, OperationId};
use tower::{Layer, Service, ServiceBuilder};
use tower_http::catch_panic::CatchPanicLayer;

use crate::clock::EdgeTime;
use crate::config::Responses;
use crate::contract::shape;
use crate::domain::UserId;
use crate::domain::auth::{self, AuthRefusal};
use crate::domain::fault::Effect;
use crate::domain::rate_limit::Decision;
use crate::error::{ApiError, REQUEST, RequestContext, Window};
use crate::extract::{Caller, IDEMPOTENCY_KEY};
use crate::judged;
use crate::state::AppState;
use crate::store::{KeyCheck, LoggedRequest, Store};
use crate::verdict::Cut;

pub mod account;
pub mod billing;
pub mod faults;
pub mod files;
pub mod generations;
mod headers;
pub mod meta;
mod missing;
pub mod outputs;
pub mod responses;
mod scope;
pub mod webhooks;

use headers::{RATELIMIT_LIMIT, limit_headers};
use missing::fallback;
pub(crate) use missing::method_not_allowed;
pub(crate) use scope::RequestScope;

/// The layers every route of a world runs in, given to axum as one layer:
/// each `Router::layer` boxes every route again, and each request clones
/// every box of its route. Outermost first: the request's scope, a panic
/// answered in the envelope, the body limit, then `innermost` (the service
/// middleware for the service's routes, `Identity` for the rest).
pub(crate) fn around<L>(
    router: Router<AppState>,
    state: &AppState,
    innermost: L,
) -> Router<AppState>
where
    L: Layer<Route> + Clone + Send + Sync + 'static,
    L::Service: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync,
    <L::Service as Service<Request>>::Future: Send + 'static,
{
    router.layer(
        ServiceBuilder::new()
            .layer(RequestScope::new(state.clone()))
            .layer(CatchPanicLayer::custom(|_| {
                ApiError::Internal(anyhow::anyhow!("a handler panicked")).into_response()
            }))
            .layer(DefaultBodyLimit::max(state.config().body_limit_bytes))
            .layer(innermost),
    )
}

/// Every route of the service (not the control API); `build_app` puts the
/// service middleware ([`ServiceLayer`]) around them.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(meta::router())
        .merge(generations::router())
        .merge(webhooks::router())
        .merge(files::router())
        .merge(billing::router())
        .merge(account::router())
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
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

/// [`service_middleware`] around each route of the service, as a layer for
/// [`around`]. Written out rather than made with `from_fn`, which boxes the
/// route below again as its `Next` and takes the request apart and back
/// together for its extractors, on every request.
#[derive(Clone)]
pub(crate) struct ServiceLayer(pub(crate) AppState);

impl Layer<Route> for ServiceLayer {
    type Service = Served;

    fn layer(&self, route: Route) -> Served {
        Served {
            state: self.0.clone(),
            route,
        }
    }
}

/// A route of the service behind [`service_middleware`].
#[derive(Clone)]
pub(crate) struct Served {
    state: AppState,
    route: Route,
}

impl Service<Request> for Served {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // A route is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let (state, route) = (self.state.clone(), self.route.clone());
        Box::pin(async move { Ok(service_middleware(state, request, route).await) })
    }
}

/// Request id, faults, rate limits, authentication, the request log and the
/// `x-ratelimit-*` headers, for every request of the service: a list of steps.
///
/// A fault rule comes before every rule of the service, so it applies under
/// the limits, authentication and validation alike; only a connection dropped
/// before acting skips the limits too, since such a request never reaches the
/// service.
async fn service_middleware(state: AppState, mut request: Request, route: Route) -> Response {
    let arrival = Arrival::of(&state, &mut request);
    let admitted = admit(&state, &arrival, &mut request);
    let (mut entry, measured) = arrival.logged(&admitted, request.headers());
    let Some(decision) = admitted.decision else {
        return dropped_before_acting(&state, &measured, entry, request).await;
    };
    let response = answer(&state, &measured, &admitted, &decision, request, route).await;
    let (response, refused_by) =
        finish(&state, &mut entry, &decision, admitted.mode, response).await;
    let edge = measured.edge(&state, &admitted, &response, refused_by);
    judged::log(&state, entry, edge.as_ref(), measured.duration_ms());
    match admitted.effect {
        Some(Effect::DropAfter) => faults::dropped(),
        Some(Effect::Delay { seconds }) => {
            faults::delay(seconds).await;
            response
        }
        _ => response,
    }
}

/// A client's address as the log keeps it and the limits count it, as
/// `Display` writes it; an IPv4 address digit by digit, since `Display`
/// takes some 1,300 instructions of every request on its padding logic.
fn address_text(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut text = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            text.push('.');
        }
        if octet >= 100 {
            text.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            text.push(char::from(b'0' + octet / 10 % 10));
        }
        text.push(char::from(b'0' + octet % 10));
    }
    text
}

/// What the middleware knows of a request as it arrives: its id and time,
/// whence it came, the operation of the contract its route is, and (for the
/// verdict) the edge's time and the digest of its query and body.
struct Arrival {
    ctx: RequestContext,
    ip: String,
    method: Method,
    path: String,
    /// The contract's operation, looked up once from the matched route.
    op: Option<OperationId>,
    /// Whether the service has a route for it; a request it has none for is
    /// answered 404, never counted or refused by a limit (the limits are the
    /// routes' own); its headers tell the general window as it stands.
    routed: bool,
    measured: Measured,
}

/// What the verdict needs of a request beyond its log entry: the edge's
/// time when it arrived, and the digest of its query and body when the
/// verdict is on.
struct Measured {
    sent: EdgeTime,
    digest: Option<judged::Digest>,
    /// When it arrived, in real time, for the journal's `durationMs`: read
    /// only while someone follows the journal.
    started: Option<std::time::Instant>,
}

impl Measured {
    /// The real milliseconds from arrival until now, when measured.
    fn duration_ms(&self) -> Option<u64> {
        self.started
            .map(|started| u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX))
    }
}

impl Arrival {
    fn of(state: &AppState, request: &mut Request) -> Self {
        // Made by the request's scope (`scope.rs`), which every request of a
        // world passes first and which stays in scope for all that runs
        // below: the handler and the refusals made here read it from there.
        let ctx = REQUEST
            .try_with(Clone::clone)
            .unwrap_or_else(|_| RequestContext::at(state.now()));
        let ip = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or_else(|| "unknown".to_owned(), |c| address_text(c.0.ip()));
        let method = request.method().clone();
        let route = request.extensions().get::<MatchedPath>();
        let op = route.and_then(|route| OperationId::from_route(method.as_str(), route.as_str()));
        // A route outside the contract (a storage URL) is the router's to know.
        let routed = op.is_some()
            || route.is_some_and(|route| shape::shapes().serves(method.as_str(), route.as_str()));
        Self {
            ctx,
            ip,
            path: request.uri().path().to_owned(),
            method,
            op,
            routed,
            measured: Measured {
                sent: state.clock().edge_time(),
                digest: state.config().verdict.then(|| judged::digest(request)),
                started: state.events().listening().then(std::time::Instant::now),
            },
        }
    }

    /// The request as the log keeps it, before its answer, and what the
    /// verdict measured of it.
    fn logged(self, admitted: &Admitted, headers: &HeaderMap) -> (LoggedRequest, Measured) {
        let entry = LoggedRequest {
            request_id: self.ctx.request_id,
            at: self.ctx.received_at,
            method: self.method.to_string(),
            path: self.path,
            operation: self.op,
            status: None,
            ip: self.ip,
            user_id: admitted.user_id,
            idempotency_key: headers
                .get(IDEMPOTENCY_KEY)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            fault: admitted.fault_id.clone(),
            error_code: None,
        };
        (entry, self.measured)
    }
}

impl Measured {
    /// What the edge measured of an answered request, when the verdict is on.
    fn edge(
        &self,
        state: &AppState,
        admitted: &Admitted,
        response: &Response,
        refused_by: Option<LimitScope>,
    ) -> Option<judged::Edge> {
        let digest = self.digest.as_ref()?;
        let held = match admitted.effect {
            Some(Effect::Delay { seconds }) => seconds,
            _ => 0.0,
        };
        let answered = state.clock().edge_time();
        Some(judged::Edge {
            sent: self.sent.edge,
            real_sent: self.sent.real,
            answered: answered.edge + held,
            real_answered: answered.real + held,
            digest: digest.value(),
            cut: match admitted.effect {
                Some(Effect::DropAfter) => Cut::DroppedAfter,
                _ => Cut::No,
            },
            active: admitted.active,
            ..judged::Edge::of(response, refused_by)
        })
    }
}

/// What the store decided of a request under its one lock.
struct Admitted {
    user_id: Option<UserId>,
    fault_id: Option<String>,
    effect: Option<Effect>,
    /// The limits' decision; `None` when a fault drops the connection before
    /// the service acts.
    decision: Option<Decision>,
    mode: Responses,
    /// The user's active tasks, for the verdict's share of the general limit
    /// for a read.
    active: usize,
}

/// The key, the faults, the limits and the response mode, under one lock
/// that every request takes; the caller goes into the request's extensions.
fn admit(state: &AppState, arrival: &Arrival, request: &mut Request) -> Admitted {
    let mut store = state.store();
    let caller = authenticate(&store, request.headers());
    let user_id = match caller {
        Some(Caller::Authenticated { user_id, .. }) => Some(user_id),
        _ => None,
    };
    let active = match user_id {
        Some(user) if arrival.method == Method::GET => store.active_count(user),
        _ => 0,
    };
    let fault = store.take_fault(arrival.method.as_str(), &arrival.path, user_id);
    let at = arrival.ctx.received_at;
    let decision = match fault {
        Some((_, Effect::Drop)) => None,
        _ if !arrival.routed => Some(store.rate_standing(&arrival.ip, at)),
        _ => Some(store.admit(arrival.op, &arrival.ip, at)),
    };
    let mode = store.responses();
    drop(store);
    if let Some(caller) = caller {
        request.extensions_mut().insert(caller);
    }
    let (fault_id, effect) = fault.unzip();
    Admitted {
        user_id,
        fault_id,
        effect,
        decision,
        mode,
        active,
    }
}

/// A connection a fault drops before the service acts: logged (and judged,
/// its body read for the digest), answered with nothing.
async fn dropped_before_acting(
    state: &AppState,
    measured: &Measured,
    entry: LoggedRequest,
    request: Request,
) -> Response {
    let edge = match &measured.digest {
        Some(digest) => {
            judged::drain(request, state.config().body_limit_bytes).await;
            let answered = state.clock().edge_time();
            Some(judged::Edge {
                sent: measured.sent.edge,
                real_sent: measured.sent.real,
                answered: answered.edge,
                real_answered: answered.real,
                digest: digest.value(),
                cut: Cut::Dropped,
                ..judged::Edge::default()
            })
        }
        None => None,
    };
    // No answer: nothing to time.
    judged::log(state, entry, edge.as_ref(), None);
    faults::dropped()
}

/// The service's answer: an injected error, the handler's, or the limit's
/// refusal. A request no handler reads has its body read for the digest.
async fn answer(
    state: &AppState,
    measured: &Measured,
    admitted: &Admitted,
    decision: &Decision,
    request: Request,
    mut route: Route,
) -> Response {
    let refusal = match &admitted.effect {
        Some(Effect::Error(error)) => ApiError::from(error.clone()),
        _ if decision.allowed || !state.config().rate_limits => {
            let Ok(response) = route.call(request).await;
            return response;
        }
        _ => ApiError::RateLimited {
            message: decision.refusal_message(state.clock().edge_scale()),
            window: Some(Window {
                scope: decision.decided_by,
                retry_after: decision.retry_after(state.clock().edge_scale()),
            }),
        },
    };
    if measured.digest.is_some() {
        judged::drain(request, state.config().body_limit_bytes).await;
    }
    refusal.into_response()
}

/// Notes the answer's code in the log entry, shapes the answer as the world
/// asks, and adds the limit headers and the request id. Returns the answer and
/// the limit that refused it, if one did.
async fn finish(
    state: &AppState,
    entry: &mut LoggedRequest,
    decision: &Decision,
    mode: Responses,
    mut response: Response,
) -> (Response, Option<LimitScope>) {
    entry.error_code = response
        .extensions()
        .get::<crate::error::ErrorCode>()
        .map(|code| code.0.clone());
    let refused_by = response.extensions().get::<LimitScope>().copied();
    if mode != Responses::Full {
        response = responses::shaped(mode, &entry.method, &entry.path, response).await;
    }
    let scale = state.clock().edge_scale();
    let headers = response.headers_mut();
    // A route with a limit of its own per user (top-up) has set these already.
    if !headers.contains_key(RATELIMIT_LIMIT) {
        limit_headers(headers, decision, scale);
    }
    if let Ok(id) = HeaderValue::from_str(&entry.request_id) {
        headers.insert("x-request-id", id);
    }
    // The status is the one the service decided on, even when a fault then
    // drops the answer: the log tells what happened on the service's side.
    entry.status = Some(response.status().as_u16());
    (response, refused_by)
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    use super::address_text;

    #[test]
    fn an_address_is_written_as_display_writes_it() {
        for octet in 0..=255 {
            let v4 = IpAddr::V4(Ipv4Addr::new(octet, 255 - octet, octet / 7, 10));
            assert_eq!(address_text(v4), v4.to_string());
        }
        let v6 = IpAddr::V6(Ipv6Addr::LOCALHOST);
        assert_eq!(address_text(v6), "::1");
    }
}
