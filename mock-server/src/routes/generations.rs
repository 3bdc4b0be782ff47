//! The generation area: create, list, get, cancel, estimate.

use std::collections::HashMap;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::clock::seconds;
use crate::contract::validate_params;
use crate::domain::UserId;
use crate::domain::generation::{self, Accepted, Status};
use crate::domain::idempotency::{self, BadKey, Begin};
use crate::domain::money::Kopecks;
use crate::domain::outcome::MagicPrompt;
use crate::domain::refusal::{Conflict, Invalid, Missing};
use crate::error::{ApiError, Result};
use crate::extract::{
    AuthUser, Body, BodyHeaders, ContractBody, Path, Query, RawBody, bad_cursor, enum_param,
    page_limit, parse,
};
use crate::state::AppState;
use crate::store::CreateRequest;
use crate::wire::Json;
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

/// What a create or an estimate asks for.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GenerationBody {
    model_slug: String,
    #[serde(default)]
    prompt: String,
    #[serde(default)]
    params: Map<String, Value>,
}

/// The body of `POST /v1/generations`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
struct CreateGenerationRequest(GenerationBody);

impl ContractBody for CreateGenerationRequest {
    const SCHEMA: &'static str = "CreateGenerationRequest";
}

/// The body of `POST /v1/generations/estimate`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
struct EstimateRequest(GenerationBody);

impl ContractBody for EstimateRequest {
    const SCHEMA: &'static str = "EstimateRequest";
}

/// Prices a valid body: the model (rule 4), its state (rule 9), its params,
/// then the cost.
fn prepare(state: &AppState, body: GenerationBody) -> Result<CreateRequest<'_>> {
    let model = state
        .catalog()
        .get(&body.model_slug)
        .ok_or_else(|| Missing::Model(body.model_slug.clone()))?;
    state.store().model_state(&model.slug).admits(model)?;
    let fields = validate_params(model, &body.params);
    if !fields.is_empty() {
        return Err(Invalid::new("Parameters do not fit the model", fields).into());
    }
    let cost = model.cost(&body.prompt, &body.params);
    Ok(CreateRequest {
        magic: MagicPrompt::parse(&body.prompt),
        reference_outside: generation::reference_outside(&body.params, state.base_url()),
        model,
        prompt: body.prompt,
        params: body.params,
        cost,
    })
}

/// The `Idempotency-Key` header, when one is sent; checked here, after the
/// body is read, so that a refused key is judged on the whole request as any
/// other refusal is.
fn idempotency_key(headers: &BodyHeaders) -> Result<Option<String>, BadKey> {
    headers
        .idempotency_key
        .as_ref()
        .map(|value| idempotency::key(value.to_str().ok()).map(str::to_owned))
        .transpose()
}

/// Rule 1: 202 with exactly `{id, status, costRub}`.
fn accepted(accepted: Accepted) -> (StatusCode, Json<Accepted>) {
    (StatusCode::ACCEPTED, Json(accepted))
}

async fn create_generation(
    State(state): State<AppState>,
    user: AuthUser,
    headers: BodyHeaders,
    body: RawBody,
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
        Begin::InFlight => Err(Conflict::KeyInFlight.into()),
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
    headers: &BodyHeaders,
    body: RawBody,
) -> Result<Accepted> {
    let CreateGenerationRequest(body) = parse(state, headers, body)?;
    let request = prepare(state, body)?;
    if let Some(error) = request.magic.http.clone() {
        return Err(error.into());
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
    Ok(created?)
}

async fn estimate_generation(
    State(state): State<AppState>,
    user: AuthUser,
    Body(EstimateRequest(body)): Body<EstimateRequest>,
) -> Result<Json<Value>> {
    let request = prepare(&state, body)?;
    let available = state
        .store()
        .account(user.user_id)
        .map_or(Kopecks::ZERO, |a| a.available);
    Ok(Json(view::estimate(request.model, request.cost, available)))
}

/// A generation's id from the path: every id is a UUID, so any other text
/// names a generation that does not exist (404, as the document says of a
/// missing one), not a malformed request.
fn generation_id(raw: &str) -> Result<uuid::Uuid, Missing> {
    uuid::Uuid::parse_str(raw).map_err(|_| Missing::Generation(raw.to_owned()))
}

fn not_found(id: uuid::Uuid) -> Missing {
    Missing::Generation(id.to_string())
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
    let shown = crate::verdict::Shown {
        id,
        final_state: (!generation.status.is_active()).then(|| generation.status.as_str()),
    };
    let mut response = Json(GenerationView::new(generation, state.base_url())).into_response();
    // The verdict reads what this answer showed, not the state a moment later.
    response.extensions_mut().insert(shown);
    Ok(response)
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
        .map_err(|running| Conflict::NotPending {
            id: running.id,
            status: running.status.as_str(),
        })?;
    Ok(Json(GenerationView::new(&cancelled, state.base_url())).into_response())
}

/// Newest first; `cursor` is the id of the last item of the previous page.
async fn list_generations(
    State(state): State<AppState>,
    user: AuthUser,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>> {
    let names = Status::ALL.map(Status::as_str);
    let status = enum_param(&query, "status", &names)?
        .and_then(|name| Status::ALL.into_iter().find(|s| s.as_str() == name));
    let limit = page_limit(&query)?;
    let model_slug = query.get("modelSlug");
    let store = state.store();
    let mut newest_first = store.generations_of(user.user_id).peekable();
    if let Some(cursor) = query.get("cursor") {
        let after = uuid::Uuid::parse_str(cursor)
            .ok()
            .filter(|c| store.own_generation(user.user_id, *c).is_some())
            .ok_or_else(bad_cursor)?;
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
