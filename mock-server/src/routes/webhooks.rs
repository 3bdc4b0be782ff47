//! Webhook endpoints: create, list, get, update, delete, rotate-secret, test,
//! delivery attempts and redelivery.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use webhook_verify::Webhook;

use super::{AuthUser, Path, Query, json_body, json_value};
use crate::contract::FieldError;
use crate::delivery;
use crate::domain::UserId;
use crate::domain::address;
use crate::domain::webhook::{
    self, EVENT_FILTERS, Endpoint, EndpointRefusal, MAX_ENDPOINTS, Trigger,
};
use crate::error::{ApiError, Result};
use crate::state::AppState;
use crate::store::EndpointChange;
use crate::wire::{events, webhooks as view};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/webhook-endpoints",
            post(create_webhook_endpoint).get(list_webhook_endpoints),
        )
        .route(
            "/v1/webhook-endpoints/{id}",
            get(get_webhook_endpoint)
                .patch(update_webhook_endpoint)
                .delete(delete_webhook_endpoint),
        )
        .route(
            "/v1/webhook-endpoints/{id}/rotate-secret",
            post(rotate_webhook_endpoint_secret),
        )
        .route("/v1/webhook-endpoints/{id}/test", post(send_test_webhook))
        .route(
            "/v1/webhook-endpoints/{id}/deliveries",
            get(list_webhook_deliveries),
        )
        .route(
            "/v1/webhook-endpoints/{id}/deliveries/{message_id}/redeliver",
            post(redeliver_webhook_message),
        )
}

/// An endpoint rule refused: 400 `VALIDATION_ERROR` with the document's message.
fn refused(refusal: EndpointRefusal) -> ApiError {
    match refusal {
        EndpointRefusal::TooMany => ApiError::validation(
            refusal.to_string(),
            vec![FieldError::new(
                "",
                "maxItems",
                refusal.to_string(),
                json!({"limit": MAX_ENDPOINTS}),
            )],
        ),
        EndpointRefusal::UnknownEvents(ref unknown) => ApiError::Validation {
            fields: unknown
                .iter()
                .map(|(i, _)| FieldError {
                    path: format!("/eventTypes/{i}"),
                    keyword: "enum".into(),
                    message: "must be equal to one of the allowed values".into(),
                    params: json!({"allowedValues": EVENT_FILTERS}),
                })
                .collect(),
            message: refusal.to_string(),
            details: Some(json!({"allowedValues": EVENT_FILTERS})),
        },
    }
}

/// The `eventTypes` of a body, if it has them; unknown names give 400 with the
/// allowed values listed.
fn event_types(body: &Value) -> Result<Option<Vec<String>>> {
    body.get("eventTypes")
        .and_then(Value::as_array)
        .map(|list| webhook::event_types(list).map_err(refused))
        .transpose()
}

/// Checks a URL with the address rules; the document's messages, 400.
async fn check_url(state: &AppState, url: &str) -> Result<()> {
    address::check_webhook_url(
        url,
        state.deliverer().resolver.as_ref(),
        state.config().allow_private_webhooks,
    )
    .await
    .map(drop)
    .map_err(|refused| {
        ApiError::validation(
            refused.to_string(),
            vec![FieldError {
                path: "/url".into(),
                keyword: "url".into(),
                message: refused.to_string(),
                params: json!({}),
            }],
        )
    })
}

async fn create_webhook_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>)> {
    let raw = json_value(&state, &headers, body)?;
    // The cap comes first, as the document's table lists it; it is counted again
    // when the endpoint is added.
    if state.store().endpoint_count(user.user_id) >= MAX_ENDPOINTS {
        return Err(refused(EndpointRefusal::TooMany));
    }
    let event_types = event_types(&raw)?.unwrap_or_default();
    let body = super::validated(&state, raw, "CreateWebhookEndpointRequest")?;
    let url = body["url"].as_str().unwrap_or_default().to_owned();
    check_url(&state, &url).await?;
    let endpoint = Endpoint {
        id: webhook::new_endpoint_id(),
        user_id: user.user_id,
        url,
        description: body["description"].as_str().map(str::to_owned),
        event_types,
        active: true,
        disabled_reason: None,
        failure_count: 0,
        last_delivery_at: None,
        created_at: state.now(),
        secret: Webhook::generate_secret(),
    };
    let answer = view::created(&endpoint);
    state.store().add_endpoint(endpoint).map_err(refused)?;
    Ok((StatusCode::CREATED, Json(answer)))
}

/// The caller's endpoint `id`; another user's is answered as missing.
fn own_endpoint(state: &AppState, user_id: UserId, id: &str) -> Result<Endpoint> {
    state
        .store()
        .own_endpoint(user_id, id)
        .cloned()
        .ok_or_else(|| not_found(id))
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("Webhook endpoint {id} not found"))
}

async fn list_webhook_endpoints(State(state): State<AppState>, user: AuthUser) -> Json<Value> {
    let store = state.store();
    let data: Vec<Value> = store
        .endpoints_of(user.user_id)
        .into_iter()
        .map(view::endpoint)
        .collect();
    Json(json!({ "data": data }))
}

async fn get_webhook_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id).map(|e| Json(view::endpoint(&e)))
}

async fn update_webhook_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let raw = json_value(&state, &headers, body)?;
    let event_types = event_types(&raw)?;
    let body = super::validated(&state, raw, "UpdateWebhookEndpointRequest")?;
    let url = body["url"].as_str().map(str::to_owned);
    if let Some(url) = &url {
        check_url(&state, url).await?;
    }
    let change = EndpointChange {
        url,
        event_types,
        description: body
            .get("description")
            .map(|d| d.as_str().map(str::to_owned)),
        active: body.get("active").and_then(Value::as_bool),
    };
    let updated = state
        .store()
        .update_endpoint(user.user_id, &id, change)
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(view::endpoint(&updated)))
}

async fn delete_webhook_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    if state.store().remove_endpoint(user.user_id, &id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(&id))
    }
}

async fn rotate_webhook_endpoint_secret(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let secret = Webhook::generate_secret();
    let now = state.now();
    if !state
        .store()
        .rotate_secret(user.user_id, &id, secret.clone())
    {
        return Err(not_found(&id));
    }
    Ok(Json(view::rotated(&id, &secret, now)))
}

fn require_active(endpoint: &Endpoint) -> Result<()> {
    if endpoint.active {
        Ok(())
    } else {
        Err(ApiError::Conflict(format!(
            "Webhook endpoint {} is disabled; set active to true with PATCH to turn it back on",
            endpoint.id
        )))
    }
}

async fn send_test_webhook(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>)> {
    let endpoint = own_endpoint(&state, user.user_id, &id)?;
    require_active(&endpoint)?;
    let empty = body.as_ref().is_ok_and(Bytes::is_empty);
    let event_type = if empty {
        webhook::EVENT_TYPES[0]
    } else {
        let body = json_body(&state, &headers, body, "TestWebhookRequest")?;
        match body.get("eventType").and_then(Value::as_str) {
            Some("generation.failed") => webhook::EVENT_TYPES[1],
            _ => webhook::EVENT_TYPES[0],
        }
    };
    let now = state.now();
    let event_id = webhook::new_event_id();
    let body = events::sample(event_type, state.base_url(), &event_id, now);
    let mut store = state.store();
    let bytes = events::body_bytes(&body, store.responses());
    let message_id = store.enqueue_message(&endpoint, event_type, event_id, bytes.into(), now);
    let answer = store.message(message_id).map(|m| view::queued(m, now));
    let wake = store.worker_wake_needed();
    drop(store);
    if wake {
        state.worker_notify().notify_one();
    }
    answer
        .map(|queued| (StatusCode::ACCEPTED, Json(queued)))
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("queued message {message_id} vanished")))
}

/// Attempts of the endpoint's messages, newest first; the cursor is the id of
/// the last attempt of the previous page.
async fn list_webhook_deliveries(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let store = state.store();
    let mut rows: Vec<Value> = store
        .messages_of(&id)
        .flat_map(|m| m.attempts.iter().map(move |a| view::attempt(m, a)))
        .collect();
    rows.reverse();
    super::page(
        &query,
        &rows,
        |r| r["id"].as_str().unwrap_or_default().to_owned(),
        Clone::clone,
    )
    .map(Json)
}

async fn redeliver_webhook_message(
    State(state): State<AppState>,
    user: AuthUser,
    Path((id, message_id)): Path<(String, String)>,
) -> Result<(StatusCode, Json<Value>)> {
    let endpoint = own_endpoint(&state, user.user_id, &id)?;
    let message_id = super::uuid_param(&message_id, "messageId")?;
    let message = state
        .store()
        .message(message_id)
        .filter(|m| m.endpoint_id == id)
        .cloned()
        .ok_or_else(|| {
            ApiError::not_found(format!("Message {message_id} not found for endpoint {id}"))
        })?;
    require_active(&endpoint)?;
    let now = state.now();
    delivery::spawn_attempt(&state, message_id, Trigger::Manual);
    Ok((StatusCode::ACCEPTED, Json(view::queued(&message, now))))
}
