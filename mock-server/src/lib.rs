#![doc = include_str!("../README.md")]

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;

/// The router of the mock service.
pub fn build_app() -> Router {
    Router::new()
        .route("/health", get(get_health))
        .route("/api/openapi.json", get(get_openapi_document))
}

/// Serves the mock on `listener` until the process ends.
pub async fn run(listener: TcpListener) -> std::io::Result<()> {
    axum::serve(listener, build_app()).await
}

async fn get_health() -> impl IntoResponse {
    axum::Json(serde_json::json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

async fn get_openapi_document() -> impl IntoResponse {
    // Served verbatim so clients see the committed contract byte for byte.
    (
        [(header::CONTENT_TYPE, "application/json")],
        mediagen_openapi::OPENAPI_JSON,
    )
}
