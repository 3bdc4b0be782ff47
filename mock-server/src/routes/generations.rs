//! The generation area: create, list, get, cancel, estimate.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::{AuthUser, Path, Query, json_body, query_error};
use crate::clock::seconds;
use crate::contract::{FieldError, validate_params};
use crate::domain::UserId;
use crate::domain::catalog::{ModelState, PRICING_MISSING};
use crate::domain::generation::{Accepted, CreateRefusal, Status};
use crate::domain::idempotency::{self, Begin};
use crate::domain::money::Kopecks;
use crate::domain::outcome::MagicPrompt;
use crate::error::{ApiError, Result};
use crate::state::AppState;
use crate::store::CreateRequest;
use crate::wire::generation::{self as view, GenerationView};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/generations",
            post(create_generation).get(list_generations),
        )
        .route("/v1/generations/estimate", post(estimate_generation))
        .route("/v1/generations/{id}", get(get_generation))
        .route("/v1/generations/{id}/cancel", post(cancel_generation))
}

/// Validates a create or estimate body and prices it: schema (rule 3), the
/// model (rule 4), its state (rule 9), its params, then the cost.
fn prepare<'a>(
    state: &'a AppState,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
    schema: &str,
) -> Result<CreateRequest<'a>> {
    let value = json_body(state, headers, body, schema)?;
    let slug = value["modelSlug"].as_str().unwrap_or_default();
    let model = state.catalog().get(slug).ok_or_else(|| {
        ApiError::not_found(format!(
            "Model '{slug}' not found; GET /v1/catalog/ lists the models"
        ))
    })?;
    match state.store().model_state(slug).in_force(model) {
        ModelState::Available => {}
        ModelState::Disabled => return Err(ApiError::ModelNotAvailable(model.slug.clone())),
        ModelState::Withdrawn => return Err(ApiError::ModelUnavailable(model.slug.clone())),
        ModelState::CircuitOpen => return Err(ApiError::UpstreamCircuitOpen(model.slug.clone())),
        ModelState::MarginGuard => return Err(ApiError::MarginGuard(model.slug.clone())),
        ModelState::PricingMissing => {
            return Err(ApiError::Validation {
                message: PRICING_MISSING.into(),
                fields: vec![FieldError::new(
                    "/modelSlug",
                    "pricing",
                    PRICING_MISSING,
                    json!({"modelSlug": model.slug}),
                )],
                details: Some(json!({"modelSlug": model.slug})),
            });
        }
    }
    let params = value["params"].as_object().cloned().unwrap_or_default();
    let fields = validate_params(model, &params);
    if !fields.is_empty() {
        return Err(ApiError::validation(
            "Parameters do not fit the model",
            fields,
        ));
    }
    let prompt = value["prompt"].as_str().unwrap_or_default().to_owned();
    let cost = model.cost(&prompt, &params);
    Ok(CreateRequest {
        magic: MagicPrompt::parse(&prompt),
        model,
        prompt,
        params,
        cost,
    })
}

/// The `Idempotency-Key` header, when it is usable as one.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let text = value.to_str().ok().filter(|t| idempotency::valid_key(t));
    text.map(|t| Some(t.to_owned())).ok_or_else(|| {
        ApiError::validation(
            idempotency::BAD_KEY,
            vec![FieldError {
                path: "/headers/Idempotency-Key".into(),
                keyword: "maxLength".into(),
                message: format!(
                    "must NOT have more than {} characters",
                    idempotency::MAX_KEY_LEN
                ),
                params: json!({"limit": idempotency::MAX_KEY_LEN}),
            }],
        )
    })
}

/// Rule 1: 202 with exactly `{id, status, costRub}`.
fn accepted(accepted: Accepted) -> (StatusCode, Json<Accepted>) {
    (StatusCode::ACCEPTED, Json(accepted))
}

async fn create_generation(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Accepted>)> {
    let Some(key) = idempotency_key(&headers)? else {
        return create_now(&state, user.user_id, &headers, body).map(accepted);
    };
    // Rule 7 comes first: a repeated key answers with the existing generation,
    // whatever the body says.
    let arrived = state.now();
    let begin = state
        .store()
        .begin_keyed_create(user.user_id, &key, arrived);
    match begin {
        Begin::Existing(id) => {
            let store = state.store();
            let generation = store.generation(id).ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!(
                    "idempotency key points at a missing generation {id}"
                ))
            })?;
            Ok(accepted(generation.accepted()))
        }
        Begin::InFlight => Err(ApiError::Conflict(
            "A request with this Idempotency-Key is still being executed; retry shortly".into(),
        )),
        Begin::Fresh => {
            let latency = state.store().create_latency_secs();
            if latency > 0.0 {
                state.clock().sleep_until(arrived + seconds(latency)).await;
            }
            let result = create_now(&state, user.user_id, &headers, body);
            let made = result.as_ref().ok().map(|a| a.id);
            let now = state.now();
            state
                .store()
                .end_keyed_create(user.user_id, &key, made, now);
            result.map(accepted)
        }
    }
}

fn create_now(
    state: &AppState,
    user_id: UserId,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Accepted> {
    let request = prepare(state, headers, body, "CreateGenerationRequest")?;
    if let Some(error) = request.magic.http.clone() {
        return Err(ApiError::Injected(error));
    }
    let (created, wake) = {
        let mut store = state.store();
        let created =
            store.create_generation(user_id, request, state.now(), state.config().queue_seconds);
        (created, store.worker_wake_needed())
    };
    if wake {
        state.worker_notify().notify_one();
    }
    let accepted = created.map_err(|refusal| match refusal {
        // Rule 5: no retry-after, since only a task ending frees a slot.
        CreateRefusal::TooManyActive => ApiError::RateLimited {
            message: refusal.to_string(),
            window: None,
        },
        CreateRefusal::Insufficient {
            required,
            available,
        } => ApiError::InsufficientBalance {
            message: refusal.to_string(),
            required,
            available,
        },
        CreateRefusal::ModerationBlocked {
            ref model_slug,
            streak,
        } => ApiError::ModerationRepeatBlocked {
            message: refusal.to_string(),
            model_slug: model_slug.clone(),
            streak,
        },
    })?;
    Ok(accepted)
}

async fn estimate_generation(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Json<Value>> {
    let request = prepare(&state, &headers, body, "EstimateRequest")?;
    let available = state
        .store()
        .account(user.user_id)
        .map_or(Kopecks::ZERO, |a| a.available);
    Ok(Json(view::estimate(request.model, request.cost, available)))
}

/// A generation's id from the path: every id is a UUID, so any other text
/// names a generation that does not exist (404, as the document says of a
/// missing one), not a malformed request.
fn generation_id(raw: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(raw)
        .map_err(|_| ApiError::not_found(format!("Generation {raw} not found")))
}

fn not_found(id: uuid::Uuid) -> ApiError {
    ApiError::not_found(format!("Generation {id} not found"))
}

/// The caller's generation; another user's is answered as missing
/// (Authentication 6). Written while the store is locked, so the answer copies
/// nothing of the task first.
async fn get_generation(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Response> {
    let id = generation_id(&id)?;
    let store = state.store();
    let generation = store
        .own_generation(user.user_id, id)
        .ok_or_else(|| not_found(id))?;
    Ok(Json(GenerationView::new(generation, state.base_url())).into_response())
}

async fn cancel_generation(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Response> {
    let id = generation_id(&id)?;
    let now = state.now();
    let cancelled = state
        .store()
        .cancel_generation(user.user_id, id, now)
        .ok_or_else(|| not_found(id))?
        .map_err(|running| {
            ApiError::Conflict(format!(
                "Generation {} is {}; only a PENDING generation can be cancelled",
                running.id,
                running.status.as_str()
            ))
        })?;
    Ok(Json(GenerationView::new(&cancelled, state.base_url())).into_response())
}

/// Newest first; `cursor` is the id of the last item of the previous page.
async fn list_generations(
    State(state): State<AppState>,
    user: AuthUser,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Result<Json<Value>> {
    let status = match query.get("status") {
        Some(raw) => Some(
            serde_json::from_value::<Status>(Value::from(raw.as_str())).map_err(|_| {
                let allowed: Vec<_> = Status::ALL.iter().map(|s| json!(s)).collect();
                query_error(
                    "status",
                    "enum",
                    "must be equal to one of the allowed values".into(),
                    json!({"allowedValues": allowed}),
                )
            })?,
        ),
        None => None,
    };
    let limit = super::page_limit(&query)?;
    let model_slug = query.get("modelSlug");
    let store = state.store();
    let mut newest_first = store.generations_of(user.user_id).peekable();
    if let Some(cursor) = query.get("cursor") {
        let after = uuid::Uuid::parse_str(cursor)
            .ok()
            .filter(|c| store.own_generation(user.user_id, *c).is_some())
            .ok_or_else(super::bad_cursor)?;
        newest_first.by_ref().find(|g| g.id == after);
    }
    let mut matching = newest_first
        .filter(|g| status.is_none_or(|s| g.status == s))
        .filter(|g| model_slug.is_none_or(|m| &g.model_slug == m));
    let page: Vec<_> = matching.by_ref().take(limit).collect();
    let has_more = matching.next().is_some();
    let next_cursor = if has_more {
        page.last().map(|g| g.id.to_string())
    } else {
        None
    };
    let data: Vec<_> = page
        .iter()
        .map(|g| GenerationView::new(g, state.base_url()))
        .collect();
    Ok(Json(
        json!({"data": data, "nextCursor": next_cursor, "hasMore": has_more}),
    ))
}
