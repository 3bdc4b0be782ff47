//! The enumerations of the files area, and an uploaded file.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::open_enum::open_enum;

open_enum! {
    /// Type of an input file.
    ///
    /// ```
    /// assert_eq!(mediagen::FileContentType::from("video/mp4"), mediagen::FileContentType::VideoMp4);
    /// ```
    pub enum FileContentType {
        /// PNG image.
        ImagePng = "image/png",
        /// JPEG image.
        ImageJpeg = "image/jpeg",
        /// WebP image.
        ImageWebp = "image/webp",
        /// WAV audio.
        AudioWav = "audio/wav",
        /// MPEG audio (mp3).
        AudioMpeg = "audio/mpeg",
        /// MP4 video.
        VideoMp4 = "video/mp4",
    }
}

open_enum! {
    /// State of an input file (`status`).
    ///
    /// ```
    /// assert_eq!(mediagen::FileStatus::Uploaded.as_str(), "uploaded");
    /// ```
    pub enum FileStatus {
        /// The upload URL was issued; the bytes have not arrived.
        AwaitingUpload = "awaiting_upload",
        /// The bytes arrived.
        Uploaded = "uploaded",
    }
}

open_enum! {
    /// The HTTP method of a presigned upload.
    ///
    /// ```
    /// assert_eq!(mediagen::UploadMethod::Put.as_str(), "PUT");
    /// ```
    pub enum UploadMethod {
        /// `PUT`.
        Put = "PUT",
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
