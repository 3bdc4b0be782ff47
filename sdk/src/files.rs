//! Input files (upload through a presigned URL) and result files (download).
//!
//! `POST /v1/files` gives a presigned URL; the bytes then go there with `PUT`,
//! without the API key. Result files are links in `outputUrls`, read without the
//! key as well. Both stream: nothing holds a whole file in memory, and a progress
//! callback sees the bytes go by.

use std::future::{Future, IntoFuture};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt, stream};
use http::header::{CONTENT_LENGTH, HeaderName, HeaderValue, USER_AGENT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;

use crate::client::Client;
use crate::error::{ApiError, Error, Result};
use crate::generations::Generation;
use crate::transport::{Operation, call};
use crate::types;

const CHUNK: usize = 64 * 1024;

/// Bytes moved so far, for progress callbacks.
///
/// ```
/// let progress = mediagen::Progress { bytes: 512, total: Some(2048) };
/// assert_eq!(progress.fraction(), Some(0.25));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes sent or received.
    pub bytes: u64,
    /// The whole size, when known.
    pub total: Option<u64>,
}

impl Progress {
    /// `bytes / total`, when the total is known and not zero.
    ///
    /// ```
    /// assert_eq!(mediagen::Progress { bytes: 1, total: None }.fraction(), None);
    /// ```
    pub fn fraction(&self) -> Option<f64> {
        match self.total {
            Some(total) if total > 0 => Some(self.bytes as f64 / total as f64),
            _ => None,
        }
    }
}

type ProgressCallback<'a> = Box<dyn FnMut(Progress) + Send + 'a>;

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
    /// Where the stored file is read from.
    pub file_url: String,
    /// Bytes sent.
    pub size_bytes: u64,
    /// The declared type.
    pub content_type: types::FileUploadRequestContentType,
    /// When the upload URL stopped working.
    pub expires_at: DateTime<Utc>,
}

/// The files area of a [`Client`].
///
/// ```
/// # let client = mediagen::Client::new("https://api.mediagen.ru", "mg_live_demo_secret")?;
/// let files = client.files();
/// # drop(files);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Files<'a> {
    client: &'a Client,
}

impl<'a> Files<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// Asks for a presigned upload URL (`POST /v1/files`); [`upload`](Self::upload)
    /// does this and the `PUT` in one call.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// use mediagen::types::FileUploadRequestContentType;
    ///
    /// let upload = client.files().create_upload("cat.png", FileUploadRequestContentType::ImagePng, 48_213).await?;
    /// println!("PUT the bytes to {} before {}", upload.upload_url, upload.expires_at);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn create_upload(
        &self,
        filename: &str,
        content_type: types::FileUploadRequestContentType,
        size_bytes: u64,
    ) -> Result<types::FileUpload> {
        let body = types::FileUploadRequest {
            content_type,
            filename: filename
                .try_into()
                .map_err(|err| Error::InvalidRequest(format!("filename {filename:?}: {err}")))?,
            size_bytes: size_bytes
                .try_into()
                .map_err(|_| Error::InvalidRequest("an empty file cannot be uploaded".into()))?,
        };
        call(self.client.raw().create_file_upload().body(body).send()).await
    }

    /// Uploads a file from disk: asks for the URL, then streams the bytes to it.
    /// The type comes from the extension unless given; see [`Upload`].
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let uploaded = client
    ///     .files()
    ///     .upload("photos/cat.png")
    ///     .on_progress(|p| eprintln!("{} of {:?} bytes", p.bytes, p.total))
    ///     .await?;
    /// println!("file id {}", uploaded.file_id);
    /// # Ok(())
    /// # }
    /// ```
    pub fn upload(&self, path: impl Into<PathBuf>) -> Upload<'a> {
        let path = path.into();
        Upload {
            client: self.client,
            filename: path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned()),
            source: Source::Path(path),
            content_type: None,
            on_progress: None,
        }
    }

    /// Uploads bytes held in memory under `filename`.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, png: Vec<u8>) -> Result<(), mediagen::Error> {
    /// let uploaded = client.files().upload_bytes("cat.png", png).await?;
    /// # drop(uploaded);
    /// # Ok(())
    /// # }
    /// ```
    pub fn upload_bytes(&self, filename: impl Into<String>, bytes: impl Into<Bytes>) -> Upload<'a> {
        Upload {
            client: self.client,
            filename: Some(filename.into()),
            source: Source::Bytes(bytes.into()),
            content_type: None,
            on_progress: None,
        }
    }

    /// Reads an input file and whether its bytes have arrived (`GET /v1/files/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, id: uuid::Uuid) -> Result<(), mediagen::Error> {
    /// let file = client.files().get(id).await?;
    /// println!("{} is {}", file.filename, file.status);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get(&self, id: Uuid) -> Result<types::File> {
        call(self.client.raw().get_file().id(id).send()).await
    }

    /// Deletes an input file (`DELETE /v1/files/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, id: uuid::Uuid) -> Result<(), mediagen::Error> {
    /// client.files().delete(id).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn delete(&self, id: Uuid) -> Result<()> {
        call(self.client.raw().delete_file().id(id).send()).await
    }

    /// Downloads `url` (an entry of `outputUrls`) to `path`, streaming, without the
    /// API key. The file appears whole or not at all: it is written beside `path` and
    /// renamed at the end. See [`Download`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let done = client
    ///     .generations()
    ///     .create_and_wait(mediagen::GenerationRequest::new("flux-schnell", "a red fox"))
    ///     .await?;
    /// let path = std::env::temp_dir().join(format!("{}.png", done.id));
    /// let bytes = client
    ///     .files()
    ///     .download(&done.output_urls[0], &path)
    ///     .on_progress(|p| eprintln!("{:?}", p.fraction()))
    ///     .await?;
    /// assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes);
    /// # std::fs::remove_file(path).ok();
    /// # Ok(())
    /// # }
    /// ```
    pub fn download(&self, url: impl Into<String>, path: impl Into<PathBuf>) -> Download<'a> {
        Download {
            client: self.client,
            url: url.into(),
            path: path.into(),
            on_progress: None,
        }
    }

    /// Downloads every result file of a generation into `dir`, named
    /// `<generation id>-<file name>`, and returns the paths.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let done = client
    ///     .generations()
    ///     .create_and_wait(mediagen::GenerationRequest::new("flux-schnell", "a red fox"))
    ///     .await?;
    /// let paths = client.files().download_outputs(&done, std::env::temp_dir()).await?;
    /// assert_eq!(paths.len(), done.output_urls.len());
    /// # for path in paths { std::fs::remove_file(path).ok(); }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn download_outputs(
        &self,
        generation: &Generation,
        dir: impl AsRef<Path>,
    ) -> Result<Vec<PathBuf>> {
        let mut paths = Vec::with_capacity(generation.output_urls.len());
        for (url, path) in output_paths(generation, dir.as_ref()) {
            self.download(url, path.clone()).await?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// Where [`Files::download_outputs`] puts each result of `generation` in `dir`:
/// `<generation id>-<last segment of the URL>`, so results of several generations
/// share a folder without clashing. For downloads of your own, with progress.
///
/// ```
/// let generation: mediagen::Generation = serde_json::from_value(serde_json::json!({
///     "id": "7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47", "status": "SUCCEEDED",
///     "modelSlug": "flux-schnell", "mediaType": "IMAGE", "costRub": 2.5,
///     "outputUrls": ["https://cdn.example/outputs/0.png"], "createdAt": "2026-11-22T10:15:30Z"
/// }))?;
/// let paths = mediagen::output_paths(&generation, std::path::Path::new("out"));
/// assert_eq!(paths[0].1, std::path::Path::new("out/7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47-0.png"));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn output_paths(generation: &Generation, dir: &Path) -> Vec<(String, PathBuf)> {
    generation
        .output_urls
        .iter()
        .enumerate()
        .map(|(index, url)| {
            // The last segment only: a URL can never lead the file out of `dir`.
            let name = reqwest::Url::parse(url)
                .ok()
                .and_then(|u| u.path_segments()?.next_back().map(str::to_owned))
                .filter(|name| !name.is_empty() && name != "." && name != "..")
                .unwrap_or_else(|| format!("{index}"));
            (url.clone(), dir.join(format!("{}-{name}", generation.id)))
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Source {
    Path(PathBuf),
    Bytes(Bytes),
}

/// An upload in preparation: set the type, the name or a progress callback, then
/// await it. Made by [`Files::upload`] and [`Files::upload_bytes`].
///
/// A `PUT` that fails for a transient reason is sent again from the start, within
/// the client's retry policy; progress then starts again from zero.
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// use mediagen::types::FileUploadRequestContentType;
///
/// let uploaded = client
///     .files()
///     .upload("scan.bin")
///     .content_type(FileUploadRequestContentType::ImagePng)
///     .filename("scan.png")
///     .await?;
/// # drop(uploaded);
/// # Ok(())
/// # }
/// ```
#[must_use = "nothing is uploaded until it is awaited"]
pub struct Upload<'a> {
    client: &'a Client,
    source: Source,
    filename: Option<String>,
    content_type: Option<types::FileUploadRequestContentType>,
    on_progress: Option<ProgressCallback<'a>>,
}

impl std::fmt::Debug for Upload<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("source", &self.source)
            .field("filename", &self.filename)
            .field("content_type", &self.content_type)
            .finish_non_exhaustive()
    }
}

impl<'a> Upload<'a> {
    /// The file's type (by default from the extension: png, jpg/jpeg, webp, wav,
    /// mp3, mp4).
    ///
    /// ```
    /// # let client = mediagen::Client::new("https://api.mediagen.ru", "mg_live_demo_secret")?;
    /// let upload = client.files().upload("x").content_type(mediagen::types::FileUploadRequestContentType::VideoMp4);
    /// # drop(upload);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn content_type(mut self, content_type: types::FileUploadRequestContentType) -> Self {
        self.content_type = Some(content_type);
        self
    }

    /// The name the service records (by default the path's file name).
    ///
    /// ```
    /// # let client = mediagen::Client::new("https://api.mediagen.ru", "mg_live_demo_secret")?;
    /// let upload = client.files().upload("/tmp/upload-17").filename("cat.png");
    /// # drop(upload);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Called as the bytes go out.
    ///
    /// ```
    /// # let client = mediagen::Client::new("https://api.mediagen.ru", "mg_live_demo_secret")?;
    /// let upload = client.files().upload("cat.png").on_progress(|p| eprintln!("{} bytes", p.bytes));
    /// # drop(upload);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn on_progress(mut self, callback: impl FnMut(Progress) + Send + 'a) -> Self {
        self.on_progress = Some(Box::new(callback));
        self
    }

    async fn run(self) -> Result<UploadedFile> {
        let Self {
            client,
            source,
            filename,
            content_type,
            mut on_progress,
        } = self;
        let filename =
            filename.ok_or_else(|| Error::InvalidRequest("the upload has no file name".into()))?;
        let content_type = match content_type {
            Some(content_type) => content_type,
            None => guess_content_type(&filename).ok_or_else(|| {
                Error::InvalidRequest(format!(
                    "cannot tell the type of {filename:?} from its extension; set it with content_type()"
                ))
            })?,
        };
        let size = match &source {
            Source::Path(path) => tokio::fs::metadata(path)
                .await
                .map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?
                .len(),
            Source::Bytes(bytes) => bytes.len() as u64,
        };
        let upload = client
            .files()
            .create_upload(&filename, content_type, size)
            .await?;

        let url = reqwest::Url::parse(&upload.upload_url).map_err(|err| {
            Error::InvalidRequest(format!("upload URL {:?}: {err}", upload.upload_url))
        })?;
        let method = reqwest::Method::from_bytes(upload.upload_method.to_string().as_bytes())
            .unwrap_or(reqwest::Method::PUT);
        let mut headers = http::HeaderMap::new();
        for (name, value) in &upload.upload_headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                Error::InvalidRequest(format!("upload header {name:?} is not a header name"))
            })?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                Error::InvalidRequest(format!("upload header {name} has an unusable value"))
            })?;
            headers.insert(name, value);
        }
        headers.insert(CONTENT_LENGTH, HeaderValue::from(size));
        headers.insert(USER_AGENT, client.shared().user_agent.clone());

        let (sent, mut seen) = tokio::sync::watch::channel(0_u64);
        let sent = Arc::new(sent);
        let build = || -> Result<reqwest::Request> {
            sent.send_replace(0);
            let body = match &source {
                Source::Path(path) => {
                    let file = std::fs::File::open(path).map_err(|err| Error::Io {
                        path: path.clone(),
                        source: err,
                    })?;
                    reqwest::Body::wrap_stream(counted(
                        file_chunks(tokio::fs::File::from_std(file)),
                        Arc::clone(&sent),
                    ))
                }
                Source::Bytes(bytes) => reqwest::Body::wrap_stream(counted(
                    byte_chunks(bytes.clone()),
                    Arc::clone(&sent),
                )),
            };
            let mut request = reqwest::Request::new(method.clone(), url.clone());
            *request.headers_mut() = headers.clone();
            *request.body_mut() = Some(body);
            Ok(request)
        };
        let first = build()?;
        let shared = client.shared();
        let put = shared.run(Operation::storage("upload_file"), first, || build().ok());
        let mut put = std::pin::pin!(put);
        let result = loop {
            tokio::select! {
                result = &mut put => break result,
                Ok(()) = seen.changed() => {
                    let bytes = *seen.borrow_and_update();
                    if let Some(callback) = on_progress.as_mut() {
                        callback(Progress { bytes, total: Some(size) });
                    }
                }
            }
        };
        let (result, attempts) = result;
        let response = result.map_err(|source| Error::Connection { attempts, source })?;
        check(response).await?;
        if let Some(callback) = on_progress.as_mut() {
            callback(Progress {
                bytes: size,
                total: Some(size),
            });
        }
        Ok(UploadedFile {
            file_id: upload.file_id,
            file_url: upload.file_url,
            size_bytes: size,
            content_type,
            expires_at: upload.expires_at,
        })
    }
}

impl<'a> IntoFuture for Upload<'a> {
    type Output = Result<UploadedFile>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<UploadedFile>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// A download in preparation: set a progress callback, then await it for the
/// number of bytes written. Made by [`Files::download`].
///
/// A failure before or during the transfer is retried from the start within the
/// client's retry policy.
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
    client: &'a Client,
    url: String,
    path: PathBuf,
    on_progress: Option<ProgressCallback<'a>>,
}

impl std::fmt::Debug for Download<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("url", &self.url)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl<'a> Download<'a> {
    /// Called as the bytes arrive (`total` from `Content-Length`, when sent).
    ///
    /// ```
    /// # let client = mediagen::Client::new("https://api.mediagen.ru", "mg_live_demo_secret")?;
    /// let download = client
    ///     .files()
    ///     .download("https://cdn.example/0.png", "0.png")
    ///     .on_progress(|p| eprintln!("{} bytes", p.bytes));
    /// # drop(download);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn on_progress(mut self, callback: impl FnMut(Progress) + Send + 'a) -> Self {
        self.on_progress = Some(Box::new(callback));
        self
    }

    async fn run(self) -> Result<u64> {
        let Self {
            client,
            url,
            path,
            mut on_progress,
        } = self;
        let url = reqwest::Url::parse(&url)
            .map_err(|err| Error::InvalidRequest(format!("download URL {url:?}: {err}")))?;
        let shared = client.shared();
        let partial = partial_path(&path);
        let io = |source| Error::Io {
            path: partial.clone(),
            source,
        };
        let mut attempt = 1;
        loop {
            let mut request = reqwest::Request::new(reqwest::Method::GET, url.clone());
            request
                .headers_mut()
                .insert(USER_AGENT, shared.user_agent.clone());
            let again = {
                let url = url.clone();
                let agent = shared.user_agent.clone();
                move || {
                    let mut request = reqwest::Request::new(reqwest::Method::GET, url.clone());
                    request.headers_mut().insert(USER_AGENT, agent.clone());
                    Some(request)
                }
            };
            let (result, attempts) = shared
                .run(Operation::storage("download_file"), request, again)
                .await;
            let response = result.map_err(|source| Error::Connection { attempts, source })?;
            let response = check(response).await?;
            let total = response.content_length();
            let mut file = tokio::fs::File::create(&partial).await.map_err(io)?;
            let mut written = 0_u64;
            let mut body = response.bytes_stream();
            let mut broken = None;
            while let Some(chunk) = body.next().await {
                match chunk {
                    Ok(chunk) => {
                        file.write_all(&chunk).await.map_err(io)?;
                        written += chunk.len() as u64;
                        if let Some(callback) = on_progress.as_mut() {
                            callback(Progress {
                                bytes: written,
                                total,
                            });
                        }
                    }
                    Err(err) => {
                        broken = Some(err);
                        break;
                    }
                }
            }
            if let Some(err) = broken {
                drop(file);
                let _ = tokio::fs::remove_file(&partial).await;
                if attempt < shared.retry.attempts() {
                    let delay = shared.retry.delay(attempt);
                    tracing::warn!(url = %url, attempt, error = %err, "download broke off; starting again");
                    shared.clock.sleep(delay).await;
                    attempt += 1;
                    continue;
                }
                return Err(Error::Body(err));
            }
            file.flush().await.map_err(io)?;
            file.sync_all().await.map_err(io)?;
            drop(file);
            tokio::fs::rename(&partial, &path)
                .await
                .map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?;
            return Ok(written);
        }
    }
}

impl<'a> IntoFuture for Download<'a> {
    type Output = Result<u64>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<u64>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// `<path>.part`, where a download is written until it is whole.
fn partial_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".part");
    path.with_file_name(name)
}

/// The response if its status is below 400, else its error.
async fn check(response: reqwest::Response) -> Result<reqwest::Response> {
    let status = response.status();
    if status.as_u16() < 400 {
        return Ok(response);
    }
    let headers = response.headers().clone();
    let body = response.bytes().await.map_err(Error::Body)?;
    Err(ApiError::from_response(status, &headers, &body).into())
}

fn guess_content_type(filename: &str) -> Option<types::FileUploadRequestContentType> {
    use types::FileUploadRequestContentType as Type;
    let extension = Path::new(filename)
        .extension()?
        .to_str()?
        .to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => Type::ImagePng,
        "jpg" | "jpeg" => Type::ImageJpeg,
        "webp" => Type::ImageWebp,
        "wav" => Type::AudioWav,
        "mp3" => Type::AudioMpeg,
        "mp4" => Type::VideoMp4,
        _ => return None,
    })
}

fn file_chunks(
    file: tokio::fs::File,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    stream::try_unfold(file, |mut file| async move {
        let mut buffer = vec![0_u8; CHUNK];
        let read = file.read(&mut buffer).await?;
        if read == 0 {
            return Ok(None);
        }
        buffer.truncate(read);
        Ok(Some((Bytes::from(buffer), file)))
    })
}

fn byte_chunks(bytes: Bytes) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    stream::iter(
        (0..bytes.len())
            .step_by(CHUNK)
            .map(move |start| Ok(bytes.slice(start..(start + CHUNK).min(bytes.len())))),
    )
}

/// Reports the bytes a body stream has handed out.
fn counted(
    chunks: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
    sent: Arc<tokio::sync::watch::Sender<u64>>,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    chunks.inspect(move |chunk| {
        if let Ok(chunk) = chunk {
            sent.send_modify(|total| *total += chunk.len() as u64);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_comes_from_the_extension() {
        use types::FileUploadRequestContentType as Type;
        assert_eq!(guess_content_type("a.PNG"), Some(Type::ImagePng));
        assert_eq!(guess_content_type("clip.mp4"), Some(Type::VideoMp4));
        assert_eq!(guess_content_type("notes.txt"), None);
        assert_eq!(guess_content_type("no-extension"), None);
    }

    #[test]
    fn a_download_is_written_beside_its_target() {
        assert_eq!(
            partial_path(Path::new("/tmp/x/0.png")),
            Path::new("/tmp/x/0.png.part")
        );
    }

    #[tokio::test]
    async fn bytes_are_cut_into_chunks_without_loss() {
        let bytes = Bytes::from(vec![7_u8; CHUNK * 2 + 5]);
        let chunks: Vec<_> = byte_chunks(bytes.clone()).collect().await;
        assert_eq!(chunks.len(), 3);
        let joined: Vec<u8> = chunks
            .into_iter()
            .flat_map(|c| c.unwrap().to_vec())
            .collect();
        assert_eq!(joined, bytes);
    }
}
