//! `files`: input files for generations.

use anyhow::Context as _;
use mediagen::types::FileUploadRequestContentType;

use super::Context;
use crate::cli::FilesCommand;
use crate::error::{Exit, Failure};
use crate::output::{self, DIM};

pub async fn run(ctx: &Context, command: FilesCommand) -> anyhow::Result<()> {
    let files = ctx.client().await?.files();
    match command {
        FilesCommand::Upload { path, content_type } => {
            let mut upload = files.upload(&path);
            if let Some(mime) = content_type {
                let mime = FileUploadRequestContentType::try_from(mime.as_str()).map_err(|_| {
                    Failure::new(Exit::Usage, "INVALID_REQUEST", format!("unsupported type `{mime}`"))
                        .hint("types: image/png, image/jpeg, image/webp, audio/wav, audio/mpeg, video/mp4")
                })?;
                upload = upload.content_type(mime);
            }
            let bar = ctx.out.bytes_bar(&format!("uploading {}", path.display()));
            let uploaded = upload
                .on_progress(|progress| {
                    if let Some(total) = progress.total {
                        bar.set_length(total);
                    }
                    bar.set_position(progress.bytes);
                })
                .await
                .with_context(|| format!("while uploading {}", path.display()))?;
            bar.finish_and_clear();
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
                        ("expires", output::time(&uploaded.expires_at)),
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
                        ("name", file.filename.clone()),
                        ("type", file.content_type.clone()),
                        ("size", format!("{} bytes", file.size_bytes)),
                        ("status", out.status(&file.status.to_string())),
                        ("created", output::time(&file.created_at)),
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
