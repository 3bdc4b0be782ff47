//! The public methods: liveness, the catalogue and the contract itself.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::{Value, json};

use crate::state::AppState;
use crate::wire::{Json, timestamp};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/health", get(get_health))
        .route("/v1/catalog/", get(list_catalog))
        .route("/api/openapi.json", get(get_openapi_document))
}

async fn get_health(State(state): State<AppState>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "time": timestamp(state.now()),
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// The catalogue, with each model's availability as the control API last set it.
async fn list_catalog(State(state): State<AppState>) -> Json<Value> {
    // From creation to a final status: the queue, then one worker attempt. What
    // crosses the network is told in real seconds: under a clock running `scale`
    // times faster, a model takes `1 / scale` of its time.
    let scale = state.clock().edge_scale();
    let queue = state.config().queue_seconds;
    let store = state.store();
    let models: Vec<Value> = state
        .catalog()
        .models
        .iter()
        .map(|model| {
            let status = store.model_state(&model.slug).public_status(model);
            let mut value = json!(model);
            value["status"] = json!(status);
            value["averageDurationSeconds"] =
                json!((queue + model.average_duration_seconds) / scale);
            value
        })
        .collect();
    Json(json!({ "models": models }))
}

async fn get_openapi_document() -> impl IntoResponse {
    // Served verbatim, so clients see the committed contract byte for byte.
    (
        [(header::CONTENT_TYPE, "application/json")],
        mediagen_openapi::OPENAPI_JSON,
    )
}
