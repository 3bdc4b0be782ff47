//! Input files and the answer to an upload request.

use serde_json::{Value, json};

use super::timestamp;
use crate::domain::file::StoredFile;

/// Where a file is read from once uploaded, and where its bytes are PUT.
pub fn file_url(base_url: &str, file: &StoredFile) -> String {
    format!("{base_url}/uploads/{}", file.id)
}

/// A file as `GET /v1/files/{id}` shows it.
pub fn file(base_url: &str, file: &StoredFile) -> Value {
    json!({
        "id": file.id,
        "filename": file.filename,
        "contentType": file.content_type,
        "sizeBytes": file.size_bytes,
        "status": file.status,
        "url": file_url(base_url, file),
        "createdAt": timestamp(file.created_at),
        "uploadedAt": file.uploaded_at.map(timestamp),
    })
}

/// The answer to `POST /v1/files`: the presigned URL `upload_url` and how to use it.
pub fn upload(base_url: &str, file: &StoredFile, upload_url: String, max_size: u64) -> Value {
    json!({
        "fileId": file.id,
        "uploadUrl": upload_url,
        "uploadMethod": "PUT",
        "uploadHeaders": {"Content-Type": file.content_type},
        "expiresAt": timestamp(file.upload_expires_at),
        "fileUrl": file_url(base_url, file),
        "maxSizeBytes": max_size,
    })
}
