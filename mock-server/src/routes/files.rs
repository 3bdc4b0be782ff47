//! Input files: the upload request with its presigned PUT URL, the PUT itself,
//! get, delete, and the file's own URL.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;

use crate::domain::UserId;
use crate::domain::file::{self, StoredFile};
use crate::domain::refusal::Missing;
use crate::error::{ApiError, Result};
use crate::extract::{
    AuthUser, Body, ContractBody, Path, Query, RawBody, body_refusal, uuid_param,
};
use crate::state::AppState;
use crate::wire::{Json, files as view};

/// The API routes, behind the service middleware.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/files", post(create_file_upload))
        .route("/v1/files/{id}", get(get_file).delete(delete_file))
}

/// The storage side: the presigned PUT and the file's URL, which need no API
/// key (the signature, or an unguessable id, is the permission).
pub fn storage_router() -> Router<AppState> {
    Router::new()
        .route("/uploads/{id}", get(download).put(upload))
        .method_not_allowed_fallback(super::missing::method_not_allowed)
}

/// The body of `POST /v1/files`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileUploadRequest {
    filename: String,
    content_type: String,
    size_bytes: u64,
}

impl ContractBody for FileUploadRequest {
    const SCHEMA: &'static str = "FileUploadRequest";
}

async fn create_file_upload(
    State(state): State<AppState>,
    user: AuthUser,
    Body(body): Body<FileUploadRequest>,
) -> Result<(StatusCode, Json<Value>)> {
    let FileUploadRequest {
        filename,
        content_type,
        size_bytes: size,
    } = body;
    let max = file::check_upload(&content_type, size)?;
    let stored = StoredFile::new(user.user_id, filename, content_type, size, state.now());
    let expires = stored.upload_expires_at.timestamp();
    let signature = file::upload_signature(state.upload_key(), stored.id, expires);
    let upload_url = format!(
        "{}?expires={expires}&signature={signature}",
        view::file_url(state.base_url(), &stored)
    );
    let answer = view::upload(state.base_url(), &stored, upload_url, max);
    state.store().add_file(stored);
    Ok((StatusCode::CREATED, Json(answer)))
}

fn own_file(state: &AppState, user_id: UserId, id: &str) -> Result<StoredFile> {
    let id = uuid_param(id, "id")?;
    state
        .store()
        .own_file(user_id, id)
        .cloned()
        .ok_or_else(|| Missing::File(id).into())
}

async fn get_file(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    own_file(&state, user.user_id, &id).map(|f| Json(view::file(state.base_url(), &f)))
}

async fn delete_file(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let id = uuid_param(&id, "id")?;
    if state.store().delete_file(user.user_id, id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Missing::File(id).into())
    }
}

#[derive(Deserialize)]
struct Presigned {
    expires: Option<i64>,
    signature: Option<String>,
}

/// The presigned PUT: the signature and expiry of the URL, the declared
/// content type, and no more bytes than declared.
async fn upload(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<Presigned>,
    headers: HeaderMap,
    body: RawBody,
) -> Result<StatusCode> {
    let id = file::check_presigned(
        state.upload_key(),
        &id,
        query.expires,
        query.signature.as_deref(),
        state.now(),
    )
    .map_err(ApiError::Authorization)?;
    let bytes = body.map_err(|rejection| body_refusal(&state, &rejection))?;
    // Unreadable is not absent: it is another type than the declared one.
    let given_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("(unreadable)"));
    let now = state.now();
    state
        .store()
        .receive_upload(id, given_type, bytes.to_vec(), now)?;
    Ok(StatusCode::OK)
}

async fn download(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    let file = uuid::Uuid::parse_str(&id)
        .ok()
        .and_then(|id| state.store().uploaded_file(id).cloned())
        .ok_or(Missing::FileBytes)?;
    Ok(([(header::CONTENT_TYPE, file.content_type)], file.bytes).into_response())
}
