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

use super::{AuthUser, Path, Query, json_body, json_value, timestamp};
use crate::contract::FieldError;
use crate::delivery::{self, payload};
use crate::domain::UserId;
use crate::domain::address;
use crate::domain::webhook::{
    self, DisabledReason, EVENT_FILTERS, Endpoint, MAX_ENDPOINTS, Message, Trigger,
};
use crate::error::{ApiError, Result};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/webhook-endpoints",
            post(create_endpoint).get(list_endpoints),
        )
        .route(
            "/v1/webhook-endpoints/{id}",
            get(get_endpoint)
                .patch(update_endpoint)
                .delete(delete_endpoint),
        )
        .route(
            "/v1/webhook-endpoints/{id}/rotate-secret",
            post(rotate_secret),
        )
        .route("/v1/webhook-endpoints/{id}/test", post(send_test))
        .route(
            "/v1/webhook-endpoints/{id}/deliveries",
            get(list_deliveries),
        )
        .route(
            "/v1/webhook-endpoints/{id}/deliveries/{message_id}/redeliver",
            post(redeliver),
        )
}

/// An endpoint as lists and reads show it: never the secret.
fn view(endpoint: &Endpoint) -> Value {
    json!({
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "eventTypes": endpoint.event_types,
        "active": endpoint.active,
        "disabledReason": endpoint.disabled_reason,
        "failureCount": endpoint.failure_count,
        "lastDeliveryAt": endpoint.last_delivery_at.map(timestamp),
        "createdAt": timestamp(endpoint.created_at),
    })
}

/// Unknown names in `eventTypes` give 400 with the allowed values listed.
fn check_event_types(body: &Value) -> Result<Option<Vec<String>>> {
    let Some(list) = body.get("eventTypes").and_then(Value::as_array) else {
        return Ok(None);
    };
    let names: Vec<String> = list
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let fields: Vec<FieldError> = list
        .iter()
        .enumerate()
        .filter(|(_, v)| v.as_str().is_none_or(|name| !EVENT_FILTERS.contains(&name)))
        .map(|(i, _)| FieldError {
            path: format!("/eventTypes/{i}"),
            keyword: "enum".into(),
            message: "must be equal to one of the allowed values".into(),
            params: json!({"allowedValues": EVENT_FILTERS}),
        })
        .collect();
    if fields.is_empty() {
        return Ok(Some(names));
    }
    let unknown: Vec<_> = list
        .iter()
        .filter(|v| v.as_str().is_none_or(|n| !EVENT_FILTERS.contains(&n)))
        .collect();
    Err(ApiError::Validation {
        message: format!(
            "Unknown event type {}; allowed values: {}",
            unknown
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            EVENT_FILTERS.join(", ")
        ),
        fields,
        details: Some(json!({"allowedValues": EVENT_FILTERS})),
    })
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

async fn create_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>)> {
    let raw = json_value(&state, &headers, body)?;
    if own_count(&state, user.user_id) >= MAX_ENDPOINTS {
        return Err(ApiError::validation(
            "Maximum 5 webhook endpoints allowed",
            Vec::new(),
        ));
    }
    let event_types = check_event_types(&raw)?.unwrap_or_default();
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
    let answer = json!({"id": endpoint.id, "url": endpoint.url, "secret": endpoint.secret, "eventTypes": endpoint.event_types});
    {
        let mut store = state.store();
        // Counted again under the lock: parallel creates must not pass 5 together.
        if store
            .endpoints
            .values()
            .filter(|e| e.user_id == user.user_id)
            .count()
            >= MAX_ENDPOINTS
        {
            return Err(ApiError::validation(
                "Maximum 5 webhook endpoints allowed",
                Vec::new(),
            ));
        }
        store.endpoints.insert(endpoint.id.clone(), endpoint);
    }
    Ok((StatusCode::CREATED, Json(answer)))
}

fn own_count(state: &AppState, user_id: UserId) -> usize {
    state
        .store()
        .endpoints
        .values()
        .filter(|e| e.user_id == user_id)
        .count()
}

/// The caller's endpoint `id`; another user's is answered as missing.
fn own_endpoint(state: &AppState, user_id: UserId, id: &str) -> Result<Endpoint> {
    state
        .store()
        .endpoints
        .get(id)
        .filter(|e| e.user_id == user_id)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("Webhook endpoint {id} not found")))
}

async fn list_endpoints(State(state): State<AppState>, user: AuthUser) -> Json<Value> {
    let store = state.store();
    let mut own: Vec<&Endpoint> = store
        .endpoints
        .values()
        .filter(|e| e.user_id == user.user_id)
        .collect();
    own.sort_by_key(|e| e.created_at);
    Json(json!({"data": own.into_iter().map(view).collect::<Vec<_>>()}))
}

async fn get_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id).map(|e| Json(view(&e)))
}

async fn update_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let raw = json_value(&state, &headers, body)?;
    let event_types = check_event_types(&raw)?;
    let body = super::validated(&state, raw, "UpdateWebhookEndpointRequest")?;
    let url = body["url"].as_str().map(str::to_owned);
    if let Some(url) = &url {
        check_url(&state, url).await?;
    }
    let mut store = state.store();
    let endpoint = store
        .endpoints
        .get_mut(&id)
        .filter(|e| e.user_id == user.user_id)
        .ok_or_else(|| ApiError::not_found(format!("Webhook endpoint {id} not found")))?;
    if let Some(url) = url {
        endpoint.url = url;
    }
    if let Some(event_types) = event_types {
        endpoint.event_types = event_types;
    }
    if let Some(description) = body.get("description") {
        endpoint.description = description.as_str().map(str::to_owned);
    }
    match body.get("active").and_then(Value::as_bool) {
        Some(true) => endpoint.reactivate(),
        Some(false) => endpoint.disable(DisabledReason::Manual),
        None => {}
    }
    Ok(Json(view(endpoint)))
}

async fn delete_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    own_endpoint(&state, user.user_id, &id)?;
    state.store().endpoints.remove(&id);
    Ok(StatusCode::NO_CONTENT)
}

async fn rotate_secret(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let secret = Webhook::generate_secret();
    let now = state.now();
    let mut store = state.store();
    if let Some(endpoint) = store.endpoints.get_mut(&id) {
        // Deliveries sign when they are sent, so the old secret stops at once.
        endpoint.secret.clone_from(&secret);
    }
    Ok(Json(
        json!({"id": id, "secret": secret, "rotatedAt": timestamp(now)}),
    ))
}

fn queued(message: &Message, at: chrono::DateTime<chrono::Utc>) -> (StatusCode, Json<Value>) {
    (
        StatusCode::ACCEPTED,
        Json(json!({
            "messageId": message.id,
            "eventId": message.event_id,
            "eventType": message.event_type,
            "scheduledAt": timestamp(at),
        })),
    )
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

async fn send_test(
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
    let body = payload::sample(event_type, state.base_url(), &event_id, now);
    let mut store = state.store();
    let message_id = store.enqueue_message(
        &endpoint,
        event_type,
        event_id,
        serde_json::to_vec(&body).unwrap_or_default(),
        now,
    );
    let answer = store.messages.get(&message_id).map(|m| queued(m, now));
    drop(store);
    state.worker_notify().notify_one();
    answer
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("queued message {message_id} vanished")))
}

/// Attempts of the endpoint's messages, newest first; the cursor is the id of
/// the last attempt of the previous page.
async fn list_deliveries(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let store = state.store();
    let mut rows: Vec<Value> = store
        .message_order
        .iter()
        .filter_map(|m| store.messages.get(m))
        .filter(|m| m.endpoint_id == id)
        .flat_map(|m| {
            m.attempts.iter().map(move |a| {
                json!({
                    "id": a.id,
                    "messageId": m.id,
                    "eventId": m.event_id,
                    "eventType": m.event_type,
                    "attempt": a.attempt,
                    "trigger": a.trigger,
                    "attemptedAt": timestamp(a.attempted_at),
                    "outcome": if a.succeeded { "succeeded" } else { "failed" },
                    "responseStatus": a.response_status,
                    "error": a.error,
                    "durationMs": a.duration_ms,
                    "responseExcerpt": a.response_excerpt,
                    "nextAttemptAt": a.next_attempt_at.map(timestamp),
                })
            })
        })
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

async fn redeliver(
    State(state): State<AppState>,
    user: AuthUser,
    Path((id, message_id)): Path<(String, String)>,
) -> Result<(StatusCode, Json<Value>)> {
    let endpoint = own_endpoint(&state, user.user_id, &id)?;
    let message_id = super::uuid_param(&message_id, "messageId")?;
    let message = state
        .store()
        .messages
        .get(&message_id)
        .filter(|m| m.endpoint_id == id)
        .cloned()
        .ok_or_else(|| {
            ApiError::not_found(format!("Message {message_id} not found for endpoint {id}"))
        })?;
    require_active(&endpoint)?;
    let now = state.now();
    delivery::spawn_attempt(&state, message_id, Trigger::Manual);
    Ok(queued(&message, now))
}
