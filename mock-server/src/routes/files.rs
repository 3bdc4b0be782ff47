//! Input files: the upload request with its presigned PUT URL, the PUT itself,
//! get, delete, and the file's own URL.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{AuthUser, Path, Query, json_body, timestamp, uuid_param};
use crate::contract::FieldError;
use crate::domain::UserId;
use crate::domain::file::{self, FileStatus, StoredFile};
use crate::error::{ApiError, Result};
use crate::state::AppState;

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
        .method_not_allowed_fallback(super::method_not_allowed)
}

fn file_url(state: &AppState, file: &StoredFile) -> String {
    format!("{}/uploads/{}", state.base_url(), file.id)
}

fn view(state: &AppState, file: &StoredFile) -> Value {
    json!({
        "id": file.id,
        "filename": file.filename,
        "contentType": file.content_type,
        "sizeBytes": file.size_bytes,
        "status": file.status,
        "url": file_url(state, file),
        "createdAt": timestamp(file.created_at),
        "uploadedAt": file.uploaded_at.map(timestamp),
    })
}

async fn create_file_upload(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>)> {
    let body = json_body(&state, &headers, body, "FileUploadRequest")?;
    let content_type = body["contentType"].as_str().unwrap_or_default().to_owned();
    let size = body["sizeBytes"].as_u64().unwrap_or(0);
    let max = file::max_size(&content_type).ok_or_else(|| {
        ApiError::validation(format!("Unsupported file type {content_type}"), Vec::new())
    })?;
    if size > max {
        return Err(ApiError::Validation {
            message: format!(
                "File too large: {size} bytes; {content_type} files may have at most {max} bytes"
            ),
            fields: vec![FieldError {
                path: "/sizeBytes".into(),
                keyword: "maximum".into(),
                message: format!("must be <= {max}"),
                params: json!({"comparison": "<=", "limit": max}),
            }],
            details: Some(json!({"maxSizeBytes": max})),
        });
    }
    let filename = body["filename"].as_str().unwrap_or_default().to_owned();
    let stored = StoredFile::new(
        user.user_id,
        filename,
        content_type.clone(),
        size,
        state.now(),
    );
    let expires = stored.upload_expires_at.timestamp();
    let signature = file::upload_signature(state.upload_key(), stored.id, expires);
    let answer = json!({
        "fileId": stored.id,
        "uploadUrl": format!("{}?expires={expires}&signature={signature}", file_url(&state, &stored)),
        "uploadMethod": "PUT",
        "uploadHeaders": {"Content-Type": content_type},
        "expiresAt": timestamp(stored.upload_expires_at),
        "fileUrl": file_url(&state, &stored),
        "maxSizeBytes": max,
    });
    state.store().files.insert(stored.id, stored);
    Ok((StatusCode::CREATED, Json(answer)))
}

fn own_file(state: &AppState, user_id: UserId, id: &str) -> Result<StoredFile> {
    let id = uuid_param(id, "id")?;
    state
        .store()
        .files
        .get(&id)
        .filter(|f| f.user_id == user_id)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("File {id} not found")))
}

async fn get_file(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    own_file(&state, user.user_id, &id).map(|f| Json(view(&state, &f)))
}

async fn delete_file(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let file = own_file(&state, user.user_id, &id)?;
    state.store().files.remove(&file.id);
    Ok(StatusCode::NO_CONTENT)
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
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    let forbidden = |why: &'static str| ApiError::Authorization(why).into_response();
    let (Ok(id), Some(expires), Some(signature)) =
        (uuid::Uuid::parse_str(&id), query.expires, query.signature)
    else {
        return forbidden("Upload URL is not signed; request one with POST /v1/files");
    };
    if !file::upload_signature_matches(state.upload_key(), id, expires, &signature) {
        return forbidden("Upload URL signature does not match");
    }
    if state.now().timestamp() > expires {
        return forbidden("Upload URL has expired; request a new one with POST /v1/files");
    }
    let bytes = match body {
        Ok(bytes) => bytes,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return ApiError::PayloadTooLarge {
                limit: state.config().body_limit_bytes,
            }
            .into_response();
        }
        Err(rejection) => {
            return ApiError::validation(
                format!("Could not read the upload: {rejection}"),
                Vec::new(),
            )
            .into_response();
        }
    };
    let given_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let now = state.now();
    let mut store = state.store();
    let Some(stored) = store.files.get_mut(&id) else {
        return ApiError::not_found("The file was deleted").into_response();
    };
    if given_type != stored.content_type {
        return ApiError::validation(
            format!("Content-Type must be {} as declared", stored.content_type),
            Vec::new(),
        )
        .into_response();
    }
    if bytes.len() as u64 > stored.size_bytes {
        return ApiError::validation(
            format!(
                "The upload has {} bytes; {} were declared",
                bytes.len(),
                stored.size_bytes
            ),
            Vec::new(),
        )
        .into_response();
    }
    stored.bytes = bytes.to_vec();
    stored.status = FileStatus::Uploaded;
    stored.uploaded_at = Some(now);
    StatusCode::OK.into_response()
}

async fn download(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let file = uuid::Uuid::parse_str(&id)
        .ok()
        .and_then(|id| state.store().files.get(&id).cloned())
        .filter(|f| f.status == FileStatus::Uploaded);
    match file {
        Some(file) => ([(header::CONTENT_TYPE, file.content_type)], file.bytes).into_response(),
        None => ApiError::not_found("No such file").into_response(),
    }
}
