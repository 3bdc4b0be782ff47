//! Downloads of result files (the links in `outputUrls`), without the API key:
//! to a file (its folder made, a partial download resumed with `Range`), to
//! any writer, or to bytes in memory, each with a progress callback.
//!
//! One loop serves the three: an attempt fails when the request does and when
//! the body breaks off, and the next attempt asks for the rest (`Range: bytes=N-`)
//! instead of starting over; a server that ignores the range sends it all, and
//! the target starts again from nothing (a writer cannot, and says so).

use std::future::{Future, IntoFuture};
use std::path::{Path, PathBuf};
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use http::StatusCode;
use http::header::{CONTENT_RANGE, RANGE, USER_AGENT};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tracing::Instrument;

use crate::call::within;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::operation::Operation;
use crate::options::RequestOptions;
use crate::progress::Progress;
use crate::retry::Decision;
use crate::side_channel;

type ProgressCallback<'a> = Box<dyn FnMut(Progress) + Send + 'a>;
type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// Where the bytes go.
trait Target: Send {
    /// Bytes already there to go on from, before the first attempt.
    fn resume_from(&mut self) -> Boxed<'_, u64>;
    /// The server sent the whole file again: drop what is there.
    fn restart(&mut self) -> Boxed<'_, ()>;
    fn write<'s>(&'s mut self, chunk: &'s [u8]) -> Boxed<'s, ()>;
    /// The last byte arrived.
    fn finish(&mut self) -> Boxed<'_, ()>;
}

/// What all three downloads share: the URL, the progress callback, the options.
struct Transfer<'a> {
    client: &'a Client,
    url: String,
    on_progress: Option<ProgressCallback<'a>>,
    options: RequestOptions,
}

impl<'a> Transfer<'a> {
    fn new(client: &'a Client, url: String) -> Self {
        Self {
            client,
            url,
            on_progress: None,
            options: RequestOptions::default(),
        }
    }

    /// The download, in a `mediagen.operation` span like every call (`-v` tells
    /// it), which ends with a `downloaded` event of its size. The signed URL is
    /// never a field: it is a credential of its own.
    async fn run(self, target: &mut dyn Target) -> Result<u64> {
        let url = reqwest::Url::parse(&self.url)
            .map_err(|err| Error::InvalidRequest(format!("download URL {:?}: {err}", self.url)))?;
        let operation = Operation::storage("download_file");
        let span = crate::transport::span(&operation, &reqwest::Method::GET, &url);
        async {
            let bytes = self.transfer(operation, url, target).await?;
            tracing::info!(bytes, "downloaded");
            Ok(bytes)
        }
        .instrument(span)
        .await
    }

    async fn transfer(
        mut self,
        operation: Operation,
        url: reqwest::Url,
        target: &mut dyn Target,
    ) -> Result<u64> {
        let shared = self.client.shared();
        let options = side_channel::options(&shared.defaults);
        let mut have = target.resume_from().await?;
        let mut attempt = 1;
        loop {
            tracing::Span::current().record("attempt", attempt);
            let mut request = reqwest::Request::new(reqwest::Method::GET, url.clone());
            let headers = request.headers_mut();
            headers.insert(USER_AGENT, shared.user_agent.clone());
            if have > 0 {
                headers.insert(RANGE, range_from(have));
            }
            let (answer, decision) = shared.attempt_once(operation, request).await;
            let (failure, decision) = match answer {
                Ok(response) => {
                    match self.receive(response, target, &mut have).await {
                        Ok(()) => {
                            target.finish().await?;
                            return Ok(have);
                        }
                        Err(Broken::Final(err)) => return Err(err),
                        // What arrived stays: the next attempt asks for the rest.
                        Err(Broken::Body(err)) => {
                            (Error::Body(err), Decision::Retry { retry_after: None })
                        }
                        Err(Broken::RangeRefused) => {
                            target.restart().await?;
                            have = 0;
                            (
                                Error::InvalidRequest("the server refused the range".into()),
                                Decision::Retry { retry_after: None },
                            )
                        }
                    }
                }
                Err(err) => (err, decision),
            };
            match shared.delay(attempt, decision, &options) {
                Some(delay) => {
                    tracing::warn!(
                        attempt,
                        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        resume_at = have,
                        reason = "the download broke off",
                        error = %failure,
                        "retrying"
                    );
                    shared.clock.sleep(delay).await;
                    attempt += 1;
                }
                None => return Err(failure.with_attempts(attempt)),
            }
        }
    }

    /// Writes the body of `response` on after `have` bytes, or from the start
    /// when the server sent the whole file.
    async fn receive(
        &mut self,
        response: reqwest::Response,
        target: &mut dyn Target,
        have: &mut u64,
    ) -> std::result::Result<(), Broken> {
        let status = response.status();
        if status == StatusCode::RANGE_NOT_SATISFIABLE {
            return Err(Broken::RangeRefused);
        }
        let resumed =
            status == StatusCode::PARTIAL_CONTENT && range_start(response.headers()) == Some(*have);
        if !resumed && *have > 0 {
            target.restart().await.map_err(Broken::Final)?;
            *have = 0;
        }
        let total = response.content_length().map(|rest| rest + *have);
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(Broken::Body)?;
            target.write(&chunk).await.map_err(Broken::Final)?;
            *have += chunk.len() as u64;
            if let Some(callback) = self.on_progress.as_mut() {
                callback(Progress {
                    bytes: *have,
                    total,
                });
            }
        }
        Ok(())
    }
}

/// Why receiving a body stopped.
enum Broken {
    /// Writing failed, or the target cannot start again: final.
    Final(Error),
    /// The body broke off: worth another attempt, from where it broke.
    Body(reqwest::Error),
    /// The server cannot serve the rest (416): start again from nothing.
    RangeRefused,
}

fn range_from(offset: u64) -> http::HeaderValue {
    http::HeaderValue::from_str(&format!("bytes={offset}-"))
        .unwrap_or_else(|_| http::HeaderValue::from_static("bytes=0-"))
}

/// The first byte of a `Content-Range: bytes <start>-<end>/<size>` answer.
fn range_start(headers: &http::HeaderMap) -> Option<u64> {
    let value = headers.get(CONTENT_RANGE)?.to_str().ok()?;
    let range = value.strip_prefix("bytes ")?;
    range.split(['-', '/']).next()?.trim().parse().ok()
}

/// The methods every download builder has.
macro_rules! download_options {
    () => {
        /// Called as the bytes arrive (`total` from `Content-Length`, when sent).
        pub fn on_progress(mut self, callback: impl FnMut(Progress) + Send + 'a) -> Self {
            self.transfer.on_progress = Some(Box::new(callback));
            self
        }

        /// Attempts at most (1: no retry after a failure or a broken body).
        pub fn max_attempts(mut self, attempts: u32) -> Self {
            self.transfer.options = self.transfer.options.max_attempts(attempts);
            self
        }
    };
}

/// A download to a file: set a progress callback, then await it for the number
/// of bytes the file has. Made by [`Files::download`](crate::areas::Files::download).
///
/// The folder is made if it does not exist; the bytes go to `<path>.part`, which
/// is renamed to `path` once whole, so a file at `path` is always complete. A
/// `.part` left by an earlier run is resumed where it stopped (turn that off
/// with [`resume`](Self::resume)).
///
/// ```no_run
/// # async fn demo(client: mediagen::Client, url: String) -> Result<(), mediagen::Error> {
/// let bytes = client.files().download(url, "out/video.mp4").await?;
/// println!("{bytes} bytes");
/// # Ok(())
/// # }
/// ```
#[must_use = "nothing is downloaded until it is awaited"]
pub struct Download<'a> {
    transfer: Transfer<'a>,
    path: PathBuf,
    resume: bool,
}

impl std::fmt::Debug for Download<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("url", &self.transfer.url)
            .field("path", &self.path)
            .field("resume", &self.resume)
            .finish_non_exhaustive()
    }
}

impl<'a> Download<'a> {
    pub(crate) fn new(client: &'a Client, url: String, path: PathBuf) -> Self {
        Self {
            transfer: Transfer::new(client, url),
            path,
            resume: true,
        }
    }

    download_options!();

    /// Whether a `.part` left by an earlier run is resumed (default) or the
    /// download starts from nothing.
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }
}

impl<'a> IntoFuture for Download<'a> {
    type Output = Result<u64>;
    type IntoFuture = Boxed<'a, u64>;

    fn into_future(self) -> Self::IntoFuture {
        let Self {
            transfer,
            path,
            resume,
        } = self;
        let options = transfer.options.clone();
        Box::pin(within(options, async move {
            transfer.run(&mut FileTarget::new(path, resume)).await
        }))
    }
}

/// A download into memory. Made by [`Files::download_bytes`](crate::areas::Files::download_bytes).
#[must_use = "nothing is downloaded until it is awaited"]
pub struct DownloadBytes<'a> {
    transfer: Transfer<'a>,
}

impl std::fmt::Debug for DownloadBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownloadBytes")
            .field("url", &self.transfer.url)
            .finish_non_exhaustive()
    }
}

impl<'a> DownloadBytes<'a> {
    pub(crate) fn new(client: &'a Client, url: String) -> Self {
        Self {
            transfer: Transfer::new(client, url),
        }
    }

    download_options!();
}

impl<'a> IntoFuture for DownloadBytes<'a> {
    type Output = Result<Bytes>;
    type IntoFuture = Boxed<'a, Bytes>;

    fn into_future(self) -> Self::IntoFuture {
        let options = self.transfer.options.clone();
        Box::pin(within(options, async move {
            let mut buffer = BytesTarget(BytesMut::new());
            self.transfer.run(&mut buffer).await?;
            Ok(buffer.0.freeze())
        }))
    }
}

/// A download into a writer (a socket, a hasher, an archive): the number of
/// bytes written. Made by [`Files::download_to`](crate::areas::Files::download_to).
///
/// A broken body is resumed with a range request, since what went into the
/// writer is known; a server that ignores the range fails the download, as a
/// writer cannot take back what it was given.
#[must_use = "nothing is downloaded until it is awaited"]
pub struct DownloadTo<'a, W> {
    transfer: Transfer<'a>,
    writer: W,
}

impl<W> std::fmt::Debug for DownloadTo<'_, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownloadTo")
            .field("url", &self.transfer.url)
            .finish_non_exhaustive()
    }
}

impl<'a, W: AsyncWrite + Unpin + Send + 'a> DownloadTo<'a, W> {
    pub(crate) fn new(client: &'a Client, url: String, writer: W) -> Self {
        Self {
            transfer: Transfer::new(client, url),
            writer,
        }
    }

    download_options!();
}

impl<'a, W: AsyncWrite + Unpin + Send + 'a> IntoFuture for DownloadTo<'a, W> {
    type Output = Result<u64>;
    type IntoFuture = Boxed<'a, u64>;

    fn into_future(self) -> Self::IntoFuture {
        let options = self.transfer.options.clone();
        Box::pin(within(options, async move {
            let mut target = WriterTarget {
                writer: self.writer,
                written: 0,
            };
            self.transfer.run(&mut target).await
        }))
    }
}

/// `<path>.part`, where a download is written until it is whole.
pub(crate) fn partial_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".part");
    path.with_file_name(name)
}

struct FileTarget {
    path: PathBuf,
    partial: PathBuf,
    resume: bool,
    /// Open once the first byte comes, so that a download that fails before
    /// any leaves nothing behind.
    file: Option<tokio::fs::File>,
    /// Whether the next open starts the `.part` over.
    truncate: bool,
}

impl FileTarget {
    fn new(path: PathBuf, resume: bool) -> Self {
        Self {
            partial: partial_path(&path),
            path,
            resume,
            file: None,
            truncate: !resume,
        }
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.partial.clone(),
            source,
        }
    }

    async fn open(&mut self) -> Result<&mut tokio::fs::File> {
        let file = match self.file.take() {
            Some(file) => file,
            None => {
                if let Some(dir) = self.partial.parent().filter(|d| !d.as_os_str().is_empty()) {
                    tokio::fs::create_dir_all(dir)
                        .await
                        .map_err(|source| Error::Io {
                            path: dir.to_owned(),
                            source,
                        })?;
                }
                let file = tokio::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(!self.truncate)
                    .truncate(self.truncate)
                    .open(&self.partial)
                    .await
                    .map_err(|e| self.io(e))?;
                self.truncate = false;
                file
            }
        };
        Ok(self.file.insert(file))
    }
}

impl Target for FileTarget {
    fn resume_from(&mut self) -> Boxed<'_, u64> {
        Box::pin(async move {
            if !self.resume {
                return Ok(0);
            }
            Ok(tokio::fs::metadata(&self.partial)
                .await
                .map_or(0, |meta| meta.len()))
        })
    }

    fn restart(&mut self) -> Boxed<'_, ()> {
        Box::pin(async move {
            self.file = None;
            self.truncate = true;
            Ok(())
        })
    }

    fn write<'s>(&'s mut self, chunk: &'s [u8]) -> Boxed<'s, ()> {
        Box::pin(async move {
            let written = self.open().await?.write_all(chunk).await;
            written.map_err(|e| self.io(e))
        })
    }

    fn finish(&mut self) -> Boxed<'_, ()> {
        Box::pin(async move {
            // An empty body still makes a file.
            let file = self.open().await?;
            let synced = match file.flush().await {
                Ok(()) => file.sync_all().await,
                Err(err) => Err(err),
            };
            synced.map_err(|e| self.io(e))?;
            self.file = None;
            tokio::fs::rename(&self.partial, &self.path)
                .await
                .map_err(|source| Error::Io {
                    path: self.path.clone(),
                    source,
                })
        })
    }
}

struct BytesTarget(BytesMut);

impl Target for BytesTarget {
    fn resume_from(&mut self) -> Boxed<'_, u64> {
        Box::pin(async move { Ok(self.0.len() as u64) })
    }

    fn restart(&mut self) -> Boxed<'_, ()> {
        Box::pin(async move {
            self.0.clear();
            Ok(())
        })
    }

    fn write<'s>(&'s mut self, chunk: &'s [u8]) -> Boxed<'s, ()> {
        Box::pin(async move {
            self.0.extend_from_slice(chunk);
            Ok(())
        })
    }

    fn finish(&mut self) -> Boxed<'_, ()> {
        Box::pin(async { Ok(()) })
    }
}

struct WriterTarget<W> {
    writer: W,
    written: u64,
}

impl<W: AsyncWrite + Unpin + Send> WriterTarget<W> {
    fn io(source: std::io::Error) -> Error {
        Error::Io {
            path: PathBuf::from("<writer>"),
            source,
        }
    }
}

impl<W: AsyncWrite + Unpin + Send> Target for WriterTarget<W> {
    fn resume_from(&mut self) -> Boxed<'_, u64> {
        Box::pin(async move { Ok(self.written) })
    }

    fn restart(&mut self) -> Boxed<'_, ()> {
        Box::pin(async {
            Err(Error::InvalidRequest(
                "the server sent the file again from the start, and a writer cannot take back \
                 what it was given; download to a file or to bytes instead"
                    .into(),
            ))
        })
    }

    fn write<'s>(&'s mut self, chunk: &'s [u8]) -> Boxed<'s, ()> {
        Box::pin(async move {
            self.writer.write_all(chunk).await.map_err(Self::io)?;
            self.written += chunk.len() as u64;
            Ok(())
        })
    }

    fn finish(&mut self) -> Boxed<'_, ()> {
        Box::pin(async move { self.writer.flush().await.map_err(Self::io) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_is_written_beside_its_target() {
        assert_eq!(
            partial_path(Path::new("/tmp/x/0.png")),
            Path::new("/tmp/x/0.png.part")
        );
    }

    #[test]
    fn the_start_of_a_partial_answer_is_read_from_its_content_range() {
        let mut headers = http::HeaderMap::new();
        headers.insert(CONTENT_RANGE, "bytes 1000-4999/5000".parse().unwrap());
        assert_eq!(range_start(&headers), Some(1000));
        headers.insert(CONTENT_RANGE, "bytes */5000".parse().unwrap());
        assert_eq!(range_start(&headers), None);
        assert_eq!(range_from(42), "bytes=42-");
    }
}
