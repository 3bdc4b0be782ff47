//! `files`: input files for generations.

use anyhow::Context as _;
use std::path::Path;

use mediagen::{FileContentType, UploadedFile};

use super::context::Context;
use crate::cli::files::FilesCommand;
use crate::error::{Exit, Failure};
use crate::output::{self, DIM, Output};

/// Uploads `path` with a progress bar on stderr.
pub async fn upload(
    ctx: &Context,
    path: &Path,
    content_type: Option<FileContentType>,
) -> anyhow::Result<UploadedFile> {
    let bar = ctx.out.bytes_bar(&format!("uploading {}", path.display()));
    let mut upload = ctx.client().await?.files().upload(path);
    let guessed = content_type.is_none();
    if let Some(content_type) = content_type {
        upload = upload.content_type(content_type);
    }
    let uploaded = upload
        .on_progress(Output::track(&bar))
        .await
        .map_err(|err| match err {
            // Without a type, the SDK takes it from the extension, and knows only the
            // service's own types.
            mediagen::Error::InvalidRequest(_) if guessed => Failure::new(
                Exit::Usage,
                "INVALID_REQUEST",
                "the type of the file cannot be told from its extension",
            )
            .fact(format!("allowed: {}", FileContentType::KNOWN.join(", ")))
            .detail("allowedValues", FileContentType::KNOWN)
            .hint("pass --content-type with one of those types")
            .into(),
            other => anyhow::Error::new(other),
        })
        .with_context(|| format!("while uploading {}", path.display()))?;
    bar.finish_and_clear();
    Ok(uploaded)
}

pub async fn run(ctx: &Context, command: FilesCommand) -> anyhow::Result<()> {
    let files = ctx.client().await?.files();
    match command {
        FilesCommand::Upload { path, content_type } => {
            // A type this version does not name is sent as given: the service judges it.
            let content_type = content_type.map(|mime| FileContentType::from(mime.as_str()));
            let uploaded = upload(ctx, &path, content_type).await?;
            let value = serde_json::json!({
                "fileId": uploaded.file_id,
                "fileUrl": uploaded.file_url,
                "sizeBytes": uploaded.size_bytes,
                "contentType": uploaded.content_type,
                "expiresAt": uploaded.expires_at,
            });
            ctx.out.emit(&value, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("file id", uploaded.file_id.to_string()),
                        ("size", format!("{} bytes", uploaded.size_bytes)),
                        ("type", uploaded.content_type.to_string()),
                        (
                            "expires",
                            output::or_absent(uploaded.expires_at.as_ref(), output::time),
                        ),
                    ],
                )?;
                let hint = ctx.command(&format!(
                    "generate -m MODEL --param image_file_id={} \"PROMPT\"",
                    uploaded.file_id
                ));
                writeln!(w, "\n{}", out.paint(DIM, format!("use it: {hint}")))
            })
        }
        FilesCommand::Get { id } => {
            let file = files.get(id).await?;
            ctx.out.emit(&file, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("id", file.id.to_string()),
                        (
                            "name",
                            output::or_absent(file.filename.as_deref(), str::to_owned),
                        ),
                        (
                            "type",
                            output::or_absent(file.content_type.as_ref(), ToString::to_string),
                        ),
                        (
                            "size",
                            output::or_absent(file.size_bytes, |n| format!("{n} bytes")),
                        ),
                        ("status", out.status(&file.status.to_string())),
                        (
                            "created",
                            output::or_absent(file.created_at.as_ref(), output::time),
                        ),
                    ],
                )
            })
        }
        FilesCommand::Delete { id } => {
            files
                .delete(id)
                .await
                .with_context(|| format!("while deleting {id}"))?;
            let value = serde_json::json!({ "id": id, "deleted": true });
            ctx.out.emit(&value, |_, w| writeln!(w, "deleted {id}"))
        }
    }
}
