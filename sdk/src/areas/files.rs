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
use futures::{Stream, StreamExt, stream};
use http::header::{CONTENT_LENGTH, HeaderName, HeaderValue, USER_AGENT};
use tokio::io::AsyncReadExt;
use uuid::Uuid;

use crate::bridge::call;
use crate::call::{Call, within};
use crate::client::Client;
use crate::download::{Download, DownloadBytes, DownloadTo};
use crate::error::{ApiError, Error, Result};
use crate::generated::types;
use crate::model::file::{FileContentType, UploadedFile};
use crate::model::generation::Generation;
use crate::operation::Operation;
use crate::options::{RequestOptions, request_options};
use crate::progress::Progress;
use crate::side_channel;

const CHUNK: usize = 64 * 1024;

type ProgressCallback<'a> = Box<dyn FnMut(Progress) + Send + 'a>;

/// The files area of a [`Client`].
///
/// ```
/// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
/// let files = client.files();
/// # drop(files);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Files<'a> {
    client: &'a Client,
}

impl Client {
    /// Input files: upload through presigned URLs, and download results.
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let files = client.files();
    /// # drop(files);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn files(&self) -> Files<'_> {
        Files::new(self)
    }
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
    /// use mediagen::FileContentType;
    ///
    /// let upload = client.files().create_upload("cat.png", FileContentType::ImagePng, 48_213).await?;
    /// println!("PUT the bytes to {}", upload.upload_url);
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_upload<'c>(
        &self,
        filename: &'c str,
        content_type: FileContentType,
        size_bytes: u64,
    ) -> Call<'c, types::FileUpload>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let body = types::FileUploadRequest {
                content_type,
                filename: filename.try_into().map_err(|err| {
                    Error::InvalidRequest(format!("filename {filename:?}: {err}"))
                })?,
                size_bytes: size_bytes.try_into().map_err(|_| {
                    Error::InvalidRequest("an empty file cannot be uploaded".into())
                })?,
            };
            call(this.client.raw().create_file_upload().body(body).send()).await
        })
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
            request_options: RequestOptions::default(),
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
            request_options: RequestOptions::default(),
        }
    }

    /// Reads an input file and whether its bytes have arrived (`GET /v1/files/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, id: uuid::Uuid) -> Result<(), mediagen::Error> {
    /// let file = client.files().get(id).await?;
    /// println!("{} is {}", file.id, file.status);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, id: Uuid) -> Call<'a, types::File> {
        let this = *self;
        Call::new(async move { call(this.client.raw().get_file().id(id).send()).await })
    }

    /// Deletes an input file (`DELETE /v1/files/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, id: uuid::Uuid) -> Result<(), mediagen::Error> {
    /// client.files().delete(id).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete(&self, id: Uuid) -> Call<'a, ()> {
        let this = *self;
        Call::new(async move { call(this.client.raw().delete_file().id(id).send()).await })
    }

    /// Downloads `url` (an entry of `outputUrls`) to `path`, streaming, without the
    /// API key. The folder is made if needed; the file appears whole or not at all
    /// (it is written beside `path` and renamed at the end); a download cut off,
    /// in this run or an earlier one, goes on where it stopped. See [`Download`].
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
    /// let path = std::env::temp_dir().join(format!("{}/fox.png", done.id));
    /// let bytes = client
    ///     .files()
    ///     .download(&done.output_urls[0], &path)
    ///     .on_progress(|p| eprintln!("{:?}", p.fraction()))
    ///     .await?;
    /// assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes);
    /// # std::fs::remove_dir_all(path.parent().unwrap()).ok();
    /// # Ok(())
    /// # }
    /// ```
    pub fn download(&self, url: impl Into<String>, path: impl Into<PathBuf>) -> Download<'a> {
        Download::new(self.client, url.into(), path.into())
    }

    /// Downloads `url` into memory. See [`DownloadBytes`].
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
    /// let png = client.files().download_bytes(&done.output_urls[0]).await?;
    /// assert!(png.starts_with(b"\x89PNG"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn download_bytes(&self, url: impl Into<String>) -> DownloadBytes<'a> {
        DownloadBytes::new(self.client, url.into())
    }

    /// Downloads `url` into `writer` (any `tokio::io::AsyncWrite`). See [`DownloadTo`].
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
    /// let mut sink = Vec::new();
    /// let written = client.files().download_to(&done.output_urls[0], &mut sink).await?;
    /// assert_eq!(written, sink.len() as u64);
    /// # Ok(())
    /// # }
    /// ```
    pub fn download_to<W>(&self, url: impl Into<String>, writer: W) -> DownloadTo<'a, W>
    where
        W: tokio::io::AsyncWrite + Unpin + Send + 'a,
    {
        DownloadTo::new(self.client, url.into(), writer)
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
    pub fn download_outputs<'c>(
        &self,
        generation: &'c Generation,
        dir: impl AsRef<Path> + Send + 'c,
    ) -> Call<'c, Vec<PathBuf>>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let mut paths = Vec::with_capacity(generation.output_urls.len());
            for (url, path) in output_paths(generation, dir.as_ref()) {
                this.download(url, path.clone()).await?;
                paths.push(path);
            }
            Ok(paths)
        })
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
/// use mediagen::FileContentType;
///
/// let uploaded = client
///     .files()
///     .upload("scan.bin")
///     .content_type(FileContentType::ImagePng)
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
    content_type: Option<FileContentType>,
    on_progress: Option<ProgressCallback<'a>>,
    request_options: RequestOptions,
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
    request_options!(request_options);

    /// The file's type (by default from the extension: png, jpg/jpeg, webp, wav,
    /// mp3, mp4).
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
    /// let upload = client.files().upload("x").content_type(mediagen::FileContentType::VideoMp4);
    /// # drop(upload);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn content_type(mut self, content_type: FileContentType) -> Self {
        self.content_type = Some(content_type);
        self
    }

    /// The name the service records (by default the path's file name).
    ///
    /// ```
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
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
    /// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
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
            request_options: _,
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
            .create_upload(&filename, content_type.clone(), size)
            .await?;

        let url = reqwest::Url::parse(&upload.upload_url).map_err(|err| {
            Error::InvalidRequest(format!("upload URL {:?}: {err}", upload.upload_url))
        })?;
        // Without a method the upload is a PUT (the contract's FileUpload).
        let method = match &upload.upload_method {
            Some(method) => reqwest::Method::from_bytes(method.as_str().as_bytes())
                .map_err(|_| Error::InvalidRequest(format!("upload method {method:?}")))?,
            None => reqwest::Method::PUT,
        };
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
        let options = side_channel::options(&shared.defaults);
        let put = shared.run(
            Operation::storage("upload_file"),
            first,
            || build().ok(),
            &options,
        );
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
        let (result, record) = result;
        let response = result.map_err(|source| {
            record.into_error(|record| Error::Connection {
                attempts: record.attempts,
                source,
            })
        })?;
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
        let options = self.request_options.clone();
        Box::pin(within(options, self.run()))
    }
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

fn guess_content_type(filename: &str) -> Option<FileContentType> {
    use FileContentType as Type;
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
        use FileContentType as Type;
        assert_eq!(guess_content_type("a.PNG"), Some(Type::ImagePng));
        assert_eq!(guess_content_type("clip.mp4"), Some(Type::VideoMp4));
        assert_eq!(guess_content_type("notes.txt"), None);
        assert_eq!(guess_content_type("no-extension"), None);
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
