//! The generation area: create, list, get, cancel, estimate.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{AuthUser, Path, Query, json_body, query_error, timestamp, uuid_param};
use crate::contract::{FieldError, validate_params};
use crate::domain::UserId;
use crate::domain::catalog::{MediaType, PublicStatus};
use crate::domain::generation::{FailureCode, Generation, Status};
use crate::domain::idempotency::Begin;
use crate::domain::money::Kopecks;
use crate::error::{ApiError, Result};
use crate::state::{AppState, CreateRefusal, CreateRequest, ModelState, seconds};

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

/// The generation object of the contract.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationView {
    id: uuid::Uuid,
    status: Status,
    model_slug: String,
    media_type: MediaType,
    prompt: String,
    params: Map<String, Value>,
    cost_rub: Kopecks,
    output_urls: Vec<String>,
    error_code: Option<FailureCode>,
    error_message: Option<&'static str>,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
}

impl GenerationView {
    pub fn new(generation: &Generation, base_url: &str) -> Self {
        Self {
            id: generation.id,
            status: generation.status,
            model_slug: generation.model_slug.clone(),
            media_type: generation.media_type,
            prompt: generation.prompt.clone(),
            params: generation.params.clone(),
            cost_rub: generation.cost,
            output_urls: super::outputs::output_urls(base_url, generation),
            error_code: generation.error_code,
            error_message: generation.error_code.map(FailureCode::message),
            created_at: timestamp(generation.created_at),
            started_at: generation.started_at.map(timestamp),
            finished_at: generation.finished_at.map(timestamp),
        }
    }
}

/// Rule 1: exactly `{id, status, costRub}`.
fn created(generation: &Generation) -> (StatusCode, Json<Value>) {
    (
        StatusCode::ACCEPTED,
        Json(json!({"id": generation.id, "status": generation.status, "costRub": generation.cost})),
    )
}

/// Validates a create or estimate body and prices it: schema (rule 3), the
/// model (rule 4), its state (rule 9), its params, then the cost.
fn prepare(
    state: &AppState,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
    schema: &str,
) -> Result<CreateRequest> {
    let value = json_body(state, headers, body, schema)?;
    let slug = value["modelSlug"].as_str().unwrap_or_default();
    let model = state
        .catalog()
        .get(slug)
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "Model '{slug}' not found; GET /v1/catalog/ lists the models"
            ))
        })?
        .clone();
    let model_state = match (state.store().model_state(slug), model.status) {
        (ModelState::Available, PublicStatus::Disabled) => ModelState::Disabled,
        (ModelState::Available, PublicStatus::Withdrawn) => ModelState::Withdrawn,
        (s, _) => s,
    };
    match model_state {
        ModelState::Available => {}
        ModelState::Disabled => return Err(ApiError::ModelNotAvailable(model.slug)),
        ModelState::Withdrawn => return Err(ApiError::ModelUnavailable(model.slug)),
        ModelState::CircuitOpen => return Err(ApiError::UpstreamCircuitOpen(model.slug)),
        ModelState::MarginGuard => return Err(ApiError::MarginGuard(model.slug)),
        ModelState::PricingMissing => {
            return Err(ApiError::validation(
                "Model pricing not configured",
                Vec::new(),
            ));
        }
    }
    let params = value["params"].as_object().cloned().unwrap_or_default();
    let fields = validate_params(&model, &params);
    if !fields.is_empty() {
        return Err(ApiError::validation(
            "Parameters do not fit the model",
            fields,
        ));
    }
    let prompt = value["prompt"].as_str().unwrap_or_default().to_owned();
    let cost = model.cost(&prompt, &params);
    Ok(CreateRequest {
        model,
        prompt,
        params,
        cost,
    })
}

/// A header value usable as an `Idempotency-Key`: 1 to 255 visible characters.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let text = value.to_str().ok().filter(|t| (1..=255).contains(&t.len()));
    text.map(|t| Some(t.to_owned())).ok_or_else(|| {
        ApiError::validation(
            "Idempotency-Key must be 1 to 255 visible ASCII characters",
            vec![FieldError {
                path: "/headers/Idempotency-Key".into(),
                keyword: "maxLength".into(),
                message: "must NOT have more than 255 characters".into(),
                params: json!({"limit": 255}),
            }],
        )
    })
}

async fn create_generation(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>)> {
    let Some(key) = idempotency_key(&headers)? else {
        return create_now(&state, user.user_id, &headers, body).map(|g| created(&g));
    };
    // Rule 7 comes first: a repeated key answers with the existing generation,
    // whatever the body says.
    let arrived = state.now();
    let begin = state.store().idempotency.begin(user.user_id, &key, arrived);
    match begin {
        Begin::Existing(id) => {
            let store = state.store();
            let generation = store.generations.get(&id).ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!(
                    "idempotency key points at a missing generation {id}"
                ))
            })?;
            Ok(created(generation))
        }
        Begin::InFlight => Err(ApiError::Conflict(
            "A request with this Idempotency-Key is still being executed; retry shortly".into(),
        )),
        Begin::Fresh => {
            let latency = state.store().create_latency_secs;
            if latency > 0.0 {
                state.clock().sleep_until(arrived + seconds(latency)).await;
            }
            let result = create_now(&state, user.user_id, &headers, body);
            let mut store = state.store();
            match &result {
                Ok(generation) => {
                    store
                        .idempotency
                        .finish(user.user_id, &key, generation.id, state.now())
                }
                Err(_) => store.idempotency.release(user.user_id, &key),
            }
            result.map(|g| created(&g))
        }
    }
}

fn create_now(
    state: &AppState,
    user_id: UserId,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Generation> {
    let request = prepare(state, headers, body, "CreateGenerationRequest")?;
    let slug = request.model.slug.clone();
    let generation = state
        .store()
        .create_generation(user_id, request, state.now(), state.config().queue_seconds)
        .map_err(|refusal| match refusal {
            CreateRefusal::TooManyActive => ApiError::RateLimited {
                message: "Maximum 5 concurrent generations allowed".into(),
                retry_after: None,
            },
            CreateRefusal::Insufficient {
                required,
                available,
            } => ApiError::InsufficientBalance {
                required,
                available,
            },
            CreateRefusal::ModerationBlocked { streak } => ApiError::ModerationRepeatBlocked {
                model_slug: slug,
                streak,
            },
        })?;
    state.worker_notify().notify_one();
    Ok(generation)
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
        .ledger
        .account(user.user_id)
        .map_or(Kopecks::ZERO, |a| a.available);
    Ok(Json(json!({
        "modelSlug": request.model.slug,
        "mediaType": request.model.media_type,
        "costRub": request.cost,
        "currency": "RUB",
        "availableRub": available,
        "sufficient": available >= request.cost,
    })))
}

/// The caller's generation `id`; another user's is answered as missing (Authentication 6).
fn own_generation(state: &AppState, user_id: UserId, id: &str) -> Result<Generation> {
    let id = uuid_param(id, "id")?;
    state
        .store()
        .generations
        .get(&id)
        .filter(|g| g.user_id == user_id)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("Generation {id} not found")))
}

async fn get_generation(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<GenerationView>> {
    let generation = own_generation(&state, user.user_id, &id)?;
    Ok(Json(GenerationView::new(&generation, state.base_url())))
}

async fn cancel_generation(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<GenerationView>> {
    let generation = own_generation(&state, user.user_id, &id)?;
    let cancelled = state
        .store()
        .cancel_generation(generation.id, state.now())
        .ok_or_else(|| {
            ApiError::Conflict(format!(
                "Generation {} is {:?}; only a PENDING generation can be cancelled",
                generation.id, generation.status
            ))
        })?;
    Ok(Json(GenerationView::new(&cancelled, state.base_url())))
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
    let ids = store
        .users
        .get(&user.user_id)
        .map(|u| u.generations.as_slice())
        .unwrap_or_default();
    let mut newest_first = ids.iter().rev().peekable();
    if let Some(cursor) = query.get("cursor") {
        let after = uuid::Uuid::parse_str(cursor)
            .ok()
            .filter(|c| ids.contains(c))
            .ok_or_else(super::bad_cursor)?;
        newest_first.by_ref().find(|id| **id == after);
    }
    let mut matching = newest_first
        .filter_map(|id| store.generations.get(id))
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
