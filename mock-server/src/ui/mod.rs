//! `GET /_mock/ui`: the dashboard, a page of the mock itself (one HTML, one
//! script, one style sheet and an icon, embedded in the binary; no build step) that shows
//! a world's live journal (`GET /_mock/events`) beside the control API.
//!
//! The page is served under a Content-Security-Policy that allows only its
//! own script and style sheet and connections to its own origin; it writes
//! every client-sent string as text. With `--admin-token` set, the page needs
//! the token (`?token=` or the header) and its script sends it as the
//! `Authorization` header on the stream and every control call: a page of
//! another origin cannot send that header without a CORS preflight the mock
//! never grants, so it cannot act.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::control::events::admitted;
use crate::error::ApiError;
use crate::state::AppState;

const PAGE: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("app.js");
const STYLE: &str = include_str!("style.css");
const ICON: &str = include_str!("favicon.svg");

const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/ui", get(get_ui))
        // The page's own files hold no data: they need no token, which a
        // `<script src>` could not send.
        .route("/_mock/ui/app.js", get(|| asset(SCRIPT, "text/javascript")))
        .route("/_mock/ui/style.css", get(|| asset(STYLE, "text/css")))
        // Named by the page, so that the browser does not ask the service for
        // `/favicon.ico` and put a 404 in the request log.
        .route(
            "/_mock/ui/favicon.svg",
            get(|| asset(ICON, "image/svg+xml")),
        )
        .method_not_allowed_fallback(crate::routes::method_not_allowed)
}

async fn get_ui(State(state): State<AppState>, request: Request) -> Response {
    if !admitted(&state, &request) {
        return ApiError::Authentication(
            "The dashboard needs '?token=<admin token>' or 'Authorization: Bearer <admin token>'",
        )
        .into_response();
    }
    asset(PAGE, "text/html; charset=utf-8").await
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // The token may be in the page's address: no other site learns it.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
