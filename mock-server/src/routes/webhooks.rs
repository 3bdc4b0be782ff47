//! Webhook endpoints: create, list, get, update, delete, rotate-secret, test,
//! delivery attempts and redelivery.

use std::collections::HashMap;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use mediagen_openapi::sets::EventType;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use webhook_verify::Webhook;

use crate::delivery;
use crate::domain::UserId;
use crate::domain::address;
use crate::domain::refusal::{Conflict, Missing};
use crate::domain::webhook::{self, Endpoint, EndpointRefusal, MAX_ENDPOINTS, Trigger};
use crate::error::{ApiError, Result};
use crate::extract::{
    self, AuthUser, ContractBody, Path, Query, RawBody, checked, page, uuid_param,
};
use crate::state::AppState;
use crate::store::EndpointChange;
use crate::wire::{Json, events, webhooks as view};

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
            "/v1/webhook-endpoints/{id}/deliveries/{messageId}/redeliver",
            post(redeliver_webhook_message),
        )
}

/// The body of `POST /v1/webhook-endpoints`; `eventTypes` is read before the
/// schema, so that unknown names are told with the allowed values.
#[derive(Debug, Deserialize)]
struct CreateWebhookEndpointRequest {
    url: String,
    description: Option<String>,
}

impl ContractBody for CreateWebhookEndpointRequest {
    const SCHEMA: &'static str = "CreateWebhookEndpointRequest";
}

/// The body of `PATCH /v1/webhook-endpoints/{id}`: only what is given changes;
/// `description: null` clears it.
#[derive(Debug, Deserialize)]
struct UpdateWebhookEndpointRequest {
    url: Option<String>,
    #[serde(default, deserialize_with = "given")]
    description: Option<Option<String>>,
    active: Option<bool>,
}

impl ContractBody for UpdateWebhookEndpointRequest {
    const SCHEMA: &'static str = "UpdateWebhookEndpointRequest";
}

/// The body of `POST /v1/webhook-endpoints/{id}/test`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TestWebhookRequest {
    event_type: Option<String>,
}

impl ContractBody for TestWebhookRequest {
    const SCHEMA: &'static str = "TestWebhookRequest";
}

/// A member that is present, `null` included, as `Some`.
fn given<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

/// The `eventTypes` of a body, if it has them; unknown names give 400 with the
/// allowed values listed.
fn event_types(body: &Value) -> Result<Option<Vec<String>>> {
    Ok(body
        .get("eventTypes")
        .and_then(Value::as_array)
        .map(|list| webhook::event_types(list))
        .transpose()?)
}

/// Checks a URL with the address rules; the document's messages, 400.
async fn check_url(state: &AppState, url: &str) -> Result<()> {
    address::check_webhook_url(
        url,
        state.deliverer().resolver.as_ref(),
        state.config().allow_private_webhooks,
    )
    .await?;
    Ok(())
}

async fn create_webhook_endpoint(
    State(state): State<AppState>,
    user: AuthUser,
    extract::Json(raw): extract::Json,
) -> Result<(StatusCode, Json<Value>)> {
    // The cap comes first, as the document's table lists it; it is counted again
    // when the endpoint is added.
    if state.store().endpoint_count(user.user_id) >= MAX_ENDPOINTS {
        return Err(EndpointRefusal::TooMany.into());
    }
    let event_types = event_types(&raw)?.unwrap_or_default();
    let CreateWebhookEndpointRequest { url, description } = checked(&state, raw)?;
    check_url(&state, &url).await?;
    let endpoint = Endpoint {
        id: webhook::new_endpoint_id(),
        user_id: user.user_id,
        url,
        description,
        event_types,
        active: true,
        disabled_reason: None,
        failure_count: 0,
        last_delivery_at: None,
        created_at: state.now(),
        secret: Webhook::generate_secret(),
    };
    let answer = view::created(&endpoint);
    state.store().add_endpoint(endpoint)?;
    Ok((StatusCode::CREATED, Json(answer)))
}

/// The caller's endpoint `id`; another user's is answered as missing.
fn own_endpoint(state: &AppState, user_id: UserId, id: &str) -> Result<Endpoint> {
    state
        .store()
        .own_endpoint(user_id, id)
        .cloned()
        .ok_or_else(|| not_found(id).into())
}

fn not_found(id: &str) -> Missing {
    Missing::Endpoint(id.to_owned())
}

async fn list_webhook_endpoints(State(state): State<AppState>, user: AuthUser) -> Json<Value> {
    let store = state.store();
    let data: Vec<Value> = store
        .endpoints_of(user.user_id)
        .into_iter()
        .map(view::listed)
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
    extract::Json(raw): extract::Json,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let event_types = event_types(&raw)?;
    let UpdateWebhookEndpointRequest {
        url,
        description,
        active,
    } = checked(&state, raw)?;
    if let Some(url) = &url {
        check_url(&state, url).await?;
    }
    let change = EndpointChange {
        url,
        event_types,
        description,
        active,
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
        Err(not_found(&id).into())
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
        return Err(not_found(&id).into());
    }
    Ok(Json(view::rotated(&id, &secret, now)))
}

fn require_active(endpoint: &Endpoint) -> Result<(), Conflict> {
    if endpoint.active {
        Ok(())
    } else {
        Err(Conflict::EndpointDisabled(endpoint.id.clone()))
    }
}

async fn send_test_webhook(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
    headers: extract::BodyHeaders,
    body: RawBody,
) -> Result<(StatusCode, Json<Value>)> {
    let endpoint = own_endpoint(&state, user.user_id, &id)?;
    require_active(&endpoint)?;
    // The body is optional: none asks for the default event.
    let asked = match body {
        Ok(bytes) if bytes.is_empty() => None,
        body => extract::parse::<TestWebhookRequest>(&state, &headers, body)?.event_type,
    };
    let event_type = asked
        .as_deref()
        .and_then(EventType::from_wire)
        .unwrap_or(EventType::GenerationCompleted);
    let now = state.now();
    let event_id = webhook::new_event_id();
    let body = events::sample(event_type, state.base_url(), &event_id, now);
    let mut store = state.store();
    let bytes = events::body_bytes(&body, store.responses());
    let message_id =
        store.enqueue_message(&endpoint, event_type.as_str(), event_id, bytes.into(), now);
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
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>> {
    own_endpoint(&state, user.user_id, &id)?;
    let store = state.store();
    let mut rows: Vec<Value> = store
        .messages_of(&id)
        .flat_map(|m| m.attempts.iter().map(move |a| view::attempt(m, a)))
        .collect();
    rows.reverse();
    page(
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
    let message_id = uuid_param(&message_id, "messageId")?;
    let message = state
        .store()
        .message(message_id)
        .filter(|m| m.endpoint_id == id)
        .cloned()
        .ok_or_else(|| Missing::Message {
            endpoint: id.clone(),
            message: message_id,
        })?;
    require_active(&endpoint)?;
    let now = state.now();
    delivery::spawn_attempt(&state, message_id, Trigger::Manual);
    Ok((StatusCode::ACCEPTED, Json(view::queued(&message, now))))
}
