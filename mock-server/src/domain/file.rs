//! Uploaded input files (`POST /v1/files`): limits and the signed upload URL.

use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use mediagen_openapi::sets::FileContentType;
use sha2::Sha256;
use uuid::Uuid;

use super::UserId;

/// Minutes a presigned upload URL stays valid (the contract's design).
pub const UPLOAD_URL_MINUTES: i64 = 15;

const MIB: u64 = 1024 * 1024;

/// The largest file of each content type the contract names: a type it gains
/// does not compile until it has its limit here.
fn limit(content_type: FileContentType) -> u64 {
    match content_type {
        FileContentType::ImagePng | FileContentType::ImageJpeg | FileContentType::ImageWebp => {
            20 * MIB
        }
        FileContentType::AudioWav | FileContentType::AudioMpeg => 50 * MIB,
        FileContentType::VideoMp4 => 100 * MIB,
    }
}

/// The content types the service takes: the contract's `FileContentType`.
pub fn content_types() -> impl Iterator<Item = &'static str> {
    FileContentType::NAMES.into_iter()
}

/// The largest file accepted for a content type, or `None` for an unsupported type.
pub fn max_size(content_type: &str) -> Option<u64> {
    FileContentType::from_wire(content_type).map(limit)
}

/// Why an upload was refused (400 `VALIDATION_ERROR` at `POST /v1/files`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UploadRefusal {
    /// A type the service does not take.
    #[error("Unsupported file type {0}")]
    Unsupported(String),
    /// Larger than the limit of its type.
    #[error("File too large: {size} bytes; {content_type} files may have at most {max} bytes")]
    TooLarge {
        /// The declared type.
        content_type: String,
        /// The declared size.
        size: u64,
        /// The limit of the type.
        max: u64,
    },
}

/// The limit for an upload of `size` bytes of `content_type`, or why it is refused.
pub fn check_upload(content_type: &str, size: u64) -> Result<u64, UploadRefusal> {
    let max = max_size(content_type)
        .ok_or_else(|| UploadRefusal::Unsupported(content_type.to_owned()))?;
    if size > max {
        return Err(UploadRefusal::TooLarge {
            content_type: content_type.to_owned(),
            size,
            max,
        });
    }
    Ok(max)
}

/// Why the bytes PUT to an upload URL were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadError {
    /// The file was deleted after its URL was issued.
    #[error("The file was deleted")]
    Deleted,
    /// Another content type than the one declared.
    #[error("Content-Type must be {0} as declared")]
    WrongType(String),
    /// More bytes than declared.
    #[error("The upload has {given} bytes; {declared} were declared")]
    TooLarge {
        /// Bytes sent.
        given: u64,
        /// Bytes declared.
        declared: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    AwaitingUpload,
    Uploaded,
}

#[derive(Clone, serde::Deserialize, serde::Serialize)]
pub struct StoredFile {
    pub id: Uuid,
    pub user_id: UserId,
    pub filename: String,
    pub content_type: String,
    pub size_bytes: u64,
    pub status: FileStatus,
    pub created_at: DateTime<Utc>,
    pub uploaded_at: Option<DateTime<Utc>>,
    pub upload_expires_at: DateTime<Utc>,
    #[serde(with = "super::persist::base64_bytes")]
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for StoredFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredFile")
            .field("id", &self.id)
            .field("content_type", &self.content_type)
            .field("size_bytes", &self.size_bytes)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl StoredFile {
    pub fn new(
        user_id: UserId,
        filename: String,
        content_type: String,
        size_bytes: u64,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id: Uuid::new_v4(),
            user_id,
            filename,
            content_type,
            size_bytes,
            status: FileStatus::AwaitingUpload,
            created_at: now,
            uploaded_at: None,
            upload_expires_at: now + Duration::minutes(UPLOAD_URL_MINUTES),
            bytes: Vec::new(),
        }
    }
}

/// The signature of an upload URL: HMAC-SHA256 of the file id and expiry
/// under the server's key, hex. Only the mock can make one, so the URL is the
/// permission to upload that one file until it expires.
pub fn upload_signature(key: &[u8], file_id: Uuid, expires: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(file_id.as_bytes());
    mac.update(&expires.to_be_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `signature` is the one for this file and expiry, in constant time.
pub fn upload_signature_matches(key: &[u8], file_id: Uuid, expires: i64, signature: &str) -> bool {
    use subtle::ConstantTimeEq;
    upload_signature(key, file_id, expires)
        .as_bytes()
        .ct_eq(signature.as_bytes())
        .into()
}

/// The file a presigned upload URL names, if it may be used at `now`: signed,
/// its signature, then its expiry; the refusal (403) says which.
pub fn check_presigned(
    key: &[u8],
    file_id: &str,
    expires: Option<i64>,
    signature: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Uuid, &'static str> {
    let (Ok(file_id), Some(expires), Some(signature)) =
        (Uuid::parse_str(file_id), expires, signature)
    else {
        return Err("Upload URL is not signed; request one with POST /v1/files");
    };
    if !upload_signature_matches(key, file_id, expires, signature) {
        return Err("Upload URL signature does not match");
    }
    if now.timestamp() > expires {
        return Err("Upload URL has expired; request a new one with POST /v1/files");
    }
    Ok(file_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_the_contract_by_kind() {
        assert_eq!(max_size("image/png"), Some(20 * MIB));
        assert_eq!(max_size("audio/mpeg"), Some(50 * MIB));
        assert_eq!(max_size("video/mp4"), Some(100 * MIB));
        assert_eq!(max_size("application/pdf"), None);
    }

    #[test]
    fn upload_signature_binds_the_file_and_the_expiry() {
        let (key, id) = (b"k".as_slice(), Uuid::new_v4());
        let signature = upload_signature(key, id, 100);
        assert!(upload_signature_matches(key, id, 100, &signature));
        assert!(!upload_signature_matches(key, id, 101, &signature));
        assert!(!upload_signature_matches(
            key,
            Uuid::new_v4(),
            100,
            &signature
        ));
        assert!(!upload_signature_matches(b"other", id, 100, &signature));
    }
}
