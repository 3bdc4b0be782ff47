//! The result files of succeeded tasks: what `outputUrls` point at.
//!
//! Like files on a storage service, they need no API key and do not count
//! against the API's limits; an unguessable task id is the capability. Like
//! one, they answer a single byte range (`Range: bytes=N-`, `bytes=N-M`), so a
//! download cut off can go on where it stopped.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::domain::generation::Status;
use crate::domain::refusal::Missing;
use crate::error::Result;
use crate::extract::Path;
use crate::render::media;
use crate::state::AppState;
use crate::wire::generation::media_kind;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/outputs/{id}/{file}", get(get_output))
        .method_not_allowed_fallback(super::missing::method_not_allowed)
}

async fn get_output(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response> {
    let generation = uuid::Uuid::parse_str(&id)
        .ok()
        .and_then(|id| state.store().generation(id).cloned())
        .filter(|g| g.status == Status::Succeeded)
        .ok_or(Missing::Output)?;
    let kind = media_kind(generation.media_type);
    file.strip_suffix(kind.extension())
        .and_then(|stem| stem.strip_suffix('.'))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|index| *index < generation.outputs)
        .ok_or(Missing::Output)?;
    let seconds = state
        .catalog()
        .get(&generation.model_slug)
        .map_or(3.0, |m| m.output_seconds(&generation.params));
    let bytes = media::render(kind, generation.seed(), seconds);
    let len = bytes.len();
    let common = [
        (header::CONTENT_TYPE, kind.content_type().to_owned()),
        (header::ACCEPT_RANGES, "bytes".to_owned()),
    ];
    Ok(
        match headers
            .get(header::RANGE)
            .map(|v| byte_range(v.as_bytes(), len))
        {
            None | Some(Range::Ignored) => (common, bytes).into_response(),
            Some(Range::Unsatisfiable) => (
                StatusCode::RANGE_NOT_SATISFIABLE,
                common,
                [(header::CONTENT_RANGE, format!("bytes */{len}"))],
            )
                .into_response(),
            Some(Range::Slice(start, end)) => (
                StatusCode::PARTIAL_CONTENT,
                common,
                [(header::CONTENT_RANGE, format!("bytes {start}-{end}/{len}"))],
                bytes[start..=end].to_vec(),
            )
                .into_response(),
        },
    )
}

/// What a `Range` header asks of a body of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
enum Range {
    /// Bytes `start..=end`.
    Slice(usize, usize),
    /// A range that starts past the end (416).
    Unsatisfiable,
    /// Not one range of bytes the mock serves (several, or suffix): the whole body.
    Ignored,
}

fn byte_range(value: &[u8], len: usize) -> Range {
    let Some((start, end)) = std::str::from_utf8(value)
        .ok()
        .and_then(|v| v.trim().strip_prefix("bytes="))
        .filter(|spec| !spec.contains(','))
        .and_then(|spec| spec.split_once('-'))
    else {
        return Range::Ignored;
    };
    let Ok(start) = start.trim().parse::<usize>() else {
        return Range::Ignored;
    };
    if start >= len {
        return Range::Unsatisfiable;
    }
    let end = match end.trim() {
        "" => len - 1,
        end => match end.parse::<usize>() {
            Ok(end) if end >= start => end.min(len - 1),
            _ => return Range::Ignored,
        },
    };
    Range::Slice(start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte_range_is_served_and_anything_else_is_the_whole_body() {
        assert_eq!(byte_range(b"bytes=10-", 100), Range::Slice(10, 99));
        assert_eq!(byte_range(b"bytes=10-19", 100), Range::Slice(10, 19));
        assert_eq!(byte_range(b"bytes=90-200", 100), Range::Slice(90, 99));
        assert_eq!(byte_range(b"bytes=100-", 100), Range::Unsatisfiable);
        for ignored in [
            &b"bytes=-5"[..],
            b"bytes=1-2,4-5",
            b"items=1-2",
            b"bytes=5-1",
            b"\xff",
        ] {
            assert_eq!(byte_range(ignored, 100), Range::Ignored);
        }
    }
}
