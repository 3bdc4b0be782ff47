//! The enumerations of the files area, and an uploaded file.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::open_enum::open_enum;

mediagen_openapi::file_content_type_values! {
    open_enum! {
        /// Type of an input file.
        ///
        /// ```
        /// assert_eq!(mediagen::FileContentType::from("video/mp4"), mediagen::FileContentType::VideoMp4);
        /// ```
        pub enum FileContentType
    }
}

mediagen_openapi::file_status_values! {
    open_enum! {
        /// State of an input file (`status`).
        ///
        /// ```
        /// assert_eq!(mediagen::FileStatus::Uploaded.as_str(), "uploaded");
        /// ```
        pub enum FileStatus
    }
}

mediagen_openapi::upload_method_values! {
    open_enum! {
        /// The HTTP method of a presigned upload.
        ///
        /// ```
        /// assert_eq!(mediagen::UploadMethod::Put.as_str(), "PUT");
        /// ```
        pub enum UploadMethod
    }
}

/// An uploaded input file: pass `file_id` as `params.image_file_id`.
///
/// ```
/// # fn use_it(uploaded: mediagen::UploadedFile) {
/// let request = mediagen::GenerationRequest::new("imagen-4", "the same cat, in watercolour")
///     .param("image_file_id", uploaded.file_id.to_string());
/// # drop(request);
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UploadedFile {
    /// The file's id (`fileId`).
    pub file_id: Uuid,
    /// Where the stored file is read from, when the service says.
    pub file_url: Option<String>,
    /// Bytes sent.
    pub size_bytes: u64,
    /// The declared type.
    pub content_type: FileContentType,
    /// When the upload URL stops working, when the service says.
    pub expires_at: Option<DateTime<Utc>>,
}
