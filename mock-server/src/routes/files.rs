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

use super::{AuthUser, Path, Query, json_body, uuid_param};
use crate::contract::FieldError;
use crate::domain::UserId;
use crate::domain::file::{self, StoredFile, UploadRefusal};
use crate::error::{ApiError, Result};
use crate::state::AppState;
use crate::store::UploadError;
use crate::wire::files as view;

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

async fn create_file_upload(
    State(state): State<AppState>,
    user: AuthUser,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>)> {
    let body = json_body(&state, &headers, body, "FileUploadRequest")?;
    let content_type = body["contentType"].as_str().unwrap_or_default().to_owned();
    let size = body["sizeBytes"].as_u64().unwrap_or(0);
    let max = file::check_upload(&content_type, size).map_err(|refusal| match refusal {
        UploadRefusal::Unsupported(_) => ApiError::validation(
            refusal.to_string(),
            vec![FieldError::new(
                "/contentType",
                "enum",
                "must be equal to one of the allowed values",
                json!({"allowedValues": file::content_types().collect::<Vec<_>>()}),
            )],
        ),
        UploadRefusal::TooLarge { max, .. } => ApiError::Validation {
            message: refusal.to_string(),
            fields: vec![FieldError {
                path: "/sizeBytes".into(),
                keyword: "maximum".into(),
                message: format!("must be <= {max}"),
                params: json!({"comparison": "<=", "limit": max}),
            }],
            details: Some(json!({"maxSizeBytes": max})),
        },
    })?;
    let filename = body["filename"].as_str().unwrap_or_default().to_owned();
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
        .ok_or_else(|| not_found(id))
}

fn not_found(id: uuid::Uuid) -> ApiError {
    ApiError::not_found(format!("File {id} not found"))
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
        Err(not_found(id))
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
            let message = format!("Could not read the upload: {rejection}");
            return ApiError::validation(
                message.clone(),
                vec![FieldError::new("", "body", message, json!({}))],
            )
            .into_response();
        }
    };
    let given_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let now = state.now();
    let received = state
        .store()
        .receive_upload(id, given_type, bytes.to_vec(), now);
    match received {
        Ok(()) => StatusCode::OK.into_response(),
        Err(UploadError::Deleted) => {
            ApiError::not_found(UploadError::Deleted.to_string()).into_response()
        }
        Err(refused) => {
            let field = match &refused {
                UploadError::WrongType(declared) => FieldError::new(
                    "/headers/Content-Type",
                    "const",
                    "must be equal to constant",
                    json!({"allowedValue": declared}),
                ),
                UploadError::TooLarge { declared, .. } => FieldError::new(
                    "",
                    "maxLength",
                    format!("must NOT have more than {declared} bytes"),
                    json!({"limit": declared}),
                ),
                UploadError::Deleted => {
                    FieldError::new("", "invalid", refused.to_string(), json!({}))
                }
            };
            ApiError::validation(refused.to_string(), vec![field]).into_response()
        }
    }
}

async fn download(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let file = uuid::Uuid::parse_str(&id)
        .ok()
        .and_then(|id| state.store().uploaded_file(id).cloned());
    match file {
        Some(file) => ([(header::CONTENT_TYPE, file.content_type)], file.bytes).into_response(),
        None => ApiError::not_found("No such file").into_response(),
    }
}
