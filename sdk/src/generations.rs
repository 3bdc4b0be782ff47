//! The generation area: create, get, list, cancel, estimate; waiting and
//! batches are in `wait.rs` and `batch.rs`.

use futures::Stream;
use serde::Deserialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::batch::Batch;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::generation::{Generation, GenerationStatus};
use crate::options::Call;
use crate::pagination::{Page, paginate};
use crate::transport::{call, call_as, new_idempotency_key};
use crate::types;
use crate::wait::{CreateAndWait, Wait, WaitOptions, watch};

/// The answer to a create: the task's id, status and reserved cost, and the
/// `Idempotency-Key` it was created with.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// let created = client
///     .generations()
///     .create(mediagen::GenerationRequest::new("flux-schnell", "a red fox"))
///     .await?;
/// assert_eq!(created.status, mediagen::GenerationStatus::Pending);
/// assert_eq!(created.cost_rub, 2.5);
/// assert_eq!(created.idempotency_key.len(), 36); // a UUID v4, made for the call
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CreatedGeneration {
    /// Identifier of the task.
    pub id: Uuid,
    /// `PENDING` for a new task; the current status when the key was used before.
    pub status: GenerationStatus,
    /// Cost in roubles reserved on the balance.
    pub cost_rub: f64,
    /// The key the request carried: the caller's, or a UUID v4 made for the call.
    /// Creating again with it returns this task, not a new one.
    pub idempotency_key: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedBody {
    id: Uuid,
    status: GenerationStatus,
    cost_rub: f64,
}

/// What to generate: the model, the prompt, the model's params, and optionally
/// the `Idempotency-Key`.
///
/// ```
/// use mediagen::GenerationRequest;
///
/// let request = GenerationRequest::new("kling-2-1", "waves at dusk")
///     .aspect_ratio("16:9")
///     .param("duration", 5)
///     .idempotency_key("order-4711-teaser");
/// assert_eq!(request.model_slug(), "kling-2-1");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationRequest {
    model_slug: String,
    prompt: String,
    params: Map<String, Value>,
    idempotency_key: Option<String>,
}

impl GenerationRequest {
    /// A request for `model_slug` (see the catalogue) with `prompt`.
    ///
    /// ```
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a red fox");
    /// assert_eq!(request.prompt(), "a red fox");
    /// ```
    pub fn new(model_slug: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            model_slug: model_slug.into(),
            prompt: prompt.into(),
            params: Map::new(),
            idempotency_key: None,
        }
    }

    /// Sets one of the model's params (see its `parameters` in the catalogue).
    ///
    /// ```
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a fox").param("seed", 42);
    /// assert_eq!(request.params()["seed"], 42);
    /// ```
    pub fn param(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(name.into(), value.into());
        self
    }

    /// Sets the params from the contract's typed `GenerationParams`, over any set
    /// before.
    ///
    /// ```
    /// let params: mediagen::types::GenerationParams =
    ///     serde_json::from_value(serde_json::json!({"resolution": "2k", "seed": 7}))?;
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a fox").with_params(params);
    /// assert_eq!(request.params()["resolution"], "2k");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn with_params(mut self, params: types::GenerationParams) -> Self {
        if let Ok(Value::Object(map)) = serde_json::to_value(params) {
            self.params.extend(map);
        }
        self
    }

    /// Frame proportions, such as `16:9`.
    ///
    /// ```
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a fox").aspect_ratio("1:1");
    /// assert_eq!(request.params()["aspect_ratio"], "1:1");
    /// ```
    pub fn aspect_ratio(self, ratio: impl Into<String>) -> Self {
        self.param("aspect_ratio", ratio.into())
    }

    /// Output resolution, such as `2k` or `1080p`.
    ///
    /// ```
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a fox").resolution("1k");
    /// assert_eq!(request.params()["resolution"], "1k");
    /// ```
    pub fn resolution(self, resolution: impl Into<String>) -> Self {
        self.param("resolution", resolution.into())
    }

    /// The `Idempotency-Key` (1 to 255 characters). Without one, a UUID v4 is made
    /// for each create call; with one, repeating the create (even from another
    /// process) returns the first task and charges nothing more.
    ///
    /// ```
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a fox").idempotency_key("job-17");
    /// assert_eq!(request.key(), Some("job-17"));
    /// ```
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// The model.
    ///
    /// ```
    /// assert_eq!(mediagen::GenerationRequest::new("veo-3", "x").model_slug(), "veo-3");
    /// ```
    pub fn model_slug(&self) -> &str {
        &self.model_slug
    }

    /// The prompt.
    ///
    /// ```
    /// assert_eq!(mediagen::GenerationRequest::new("veo-3", "x").prompt(), "x");
    /// ```
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The params set so far.
    ///
    /// ```
    /// assert!(mediagen::GenerationRequest::new("veo-3", "x").params().is_empty());
    /// ```
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The `Idempotency-Key`, if one was set.
    ///
    /// ```
    /// assert_eq!(mediagen::GenerationRequest::new("veo-3", "x").key(), None);
    /// ```
    pub fn key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }

    /// Gives the request a key if it has none, so that every later create of it
    /// finds the same task.
    pub(crate) fn ensure_key(&mut self) -> &str {
        self.idempotency_key.get_or_insert_with(|| {
            new_idempotency_key()
                .to_str()
                .map(str::to_owned)
                .unwrap_or_default()
        })
    }

    /// The body, checked against the contract's constraints.
    fn body<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        let mut body = Map::new();
        body.insert("modelSlug".into(), self.model_slug.clone().into());
        body.insert("prompt".into(), self.prompt.clone().into());
        if !self.params.is_empty() {
            body.insert("params".into(), Value::Object(self.params.clone()));
        }
        serde_json::from_value(Value::Object(body))
            .map_err(|err| Error::InvalidRequest(err.to_string()))
    }
}

/// Which generations [`Generations::list`] returns.
///
/// ```
/// use mediagen::{GenerationFilter, GenerationStatus};
///
/// let filter = GenerationFilter::new()
///     .status(GenerationStatus::Succeeded)
///     .model_slug("flux-schnell")
///     .page_size(50);
/// # drop(filter);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenerationFilter {
    status: Option<GenerationStatus>,
    model_slug: Option<String>,
    page_size: Option<u32>,
}

impl GenerationFilter {
    /// Every generation, newest first.
    ///
    /// ```
    /// assert_eq!(mediagen::GenerationFilter::new(), mediagen::GenerationFilter::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Only generations in this status.
    ///
    /// ```
    /// let filter = mediagen::GenerationFilter::new().status(mediagen::GenerationStatus::Failed);
    /// # drop(filter);
    /// ```
    pub fn status(mut self, status: GenerationStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Only generations of this model.
    ///
    /// ```
    /// let filter = mediagen::GenerationFilter::new().model_slug("veo-3");
    /// # drop(filter);
    /// ```
    pub fn model_slug(mut self, slug: impl Into<String>) -> Self {
        self.model_slug = Some(slug.into());
        self
    }

    /// Items per request, 1 to 100 (default 20, the service's).
    ///
    /// ```
    /// let filter = mediagen::GenerationFilter::new().page_size(100);
    /// # drop(filter);
    /// ```
    pub fn page_size(mut self, size: u32) -> Self {
        self.page_size = Some(size);
        self
    }
}

/// The generation area of a [`Client`].
///
/// ```
/// # let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
/// let generations = client.generations();
/// # drop(generations);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Generations<'a> {
    client: &'a Client,
}

impl<'a> Generations<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// Creates a generation task (`POST /v1/generations`); the cost is reserved on
    /// the balance at once.
    ///
    /// The request always carries an `Idempotency-Key` (the request's, or a fresh
    /// UUID v4), and every retry of the call sends the same one, so a create retried
    /// after a lost answer returns the first task instead of charging twice. To make
    /// a create safe across restarts of your process, give the key yourself.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use mediagen::GenerationRequest;
    ///
    /// let request = GenerationRequest::new("flux-schnell", "a red fox").idempotency_key("order-17");
    /// let first = client.generations().create(request.clone()).await?;
    /// let again = client.generations().create(request).await?;
    /// assert_eq!(first.id, again.id); // the same task, charged once
    /// # Ok(())
    /// # }
    /// ```
    pub fn create(&self, mut request: GenerationRequest) -> Call<'a, CreatedGeneration> {
        let this = *self;
        Call::new(async move {
            let key = request.ensure_key().to_owned();
            let body: types::CreateGenerationRequest = request.body()?;
            let created: CreatedBody = call_as(
                this.client
                    .raw()
                    .create_generation()
                    .idempotency_key(key.as_str())
                    .body(body)
                    .send(),
            )
            .await?;
            Ok(CreatedGeneration {
                id: created.id,
                status: created.status,
                cost_rub: created.cost_rub,
                idempotency_key: key,
            })
        })
    }

    /// Reads a generation (`GET /v1/generations/{id}`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// # let id = client.generations().create(mediagen::GenerationRequest::new("flux-schnell", "a fox")).await?.id;
    /// let generation = client.generations().get(id).await?;
    /// assert_eq!(generation.model_slug.as_deref(), Some("flux-schnell"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, id: Uuid) -> Call<'a, Generation> {
        let this = *self;
        Call::new(async move {
            call_as::<types::Generation, _>(this.client.raw().get_generation().id(id).send()).await
        })
    }

    /// Every generation matching `filter`, newest first, as a stream that fetches
    /// page after page (`GET /v1/generations`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use futures::TryStreamExt;
    /// use mediagen::GenerationFilter;
    ///
    /// # client.generations().create(mediagen::GenerationRequest::new("flux-schnell", "a fox")).await?;
    /// let all: Vec<_> = client.generations().list(GenerationFilter::new()).try_collect().await?;
    /// assert_eq!(all.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn list(
        &self,
        filter: GenerationFilter,
    ) -> impl Stream<Item = Result<Generation>> + Send + Unpin + 'a {
        let this = *self;
        paginate(move |cursor| {
            let filter = filter.clone();
            async move { this.list_page(&filter, cursor.as_deref()).await }
        })
    }

    /// One page of [`list`](Self::list), from `cursor` (the `next_cursor` of the page
    /// before; `None` for the first).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let page = client.generations().list_page(&mediagen::GenerationFilter::new(), None).await?;
    /// assert!(page.items.is_empty() && !page.has_more);
    /// # Ok(())
    /// # }
    /// ```
    pub fn list_page<'c>(
        &self,
        filter: &'c GenerationFilter,
        cursor: Option<&'c str>,
    ) -> Call<'c, Page<Generation>>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let mut builder = this.client.raw().list_generations();
            if let Some(status) = &filter.status {
                builder = builder.status(status.clone());
            }
            if let Some(slug) = &filter.model_slug {
                builder = builder.model_slug(slug.clone());
            }
            if let Some(size) = filter.page_size {
                builder = builder.limit(u64::from(size));
            }
            if let Some(cursor) = cursor {
                builder = builder.cursor(cursor.to_owned());
            }
            call_as::<types::GenerationList, Page<Generation>>(builder.send()).await
        })
    }

    /// Cancels a task that is still `PENDING` (`POST /v1/generations/{id}/cancel`);
    /// the reserved cost returns to the balance. A task already running or finished
    /// gives [`ErrorKind::Conflict`](crate::ErrorKind::Conflict).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let created = client.generations().create(mediagen::GenerationRequest::new("flux-schnell", "a fox")).await?;
    /// let cancelled = client.generations().cancel(created.id).await?;
    /// assert_eq!(cancelled.status, mediagen::GenerationStatus::Cancelled);
    /// # Ok(())
    /// # }
    /// ```
    pub fn cancel(&self, id: Uuid) -> Call<'a, Generation> {
        let this = *self;
        Call::new(async move {
            call_as::<types::Generation, _>(this.client.raw().cancel_generation().id(id).send())
                .await
        })
    }

    /// Prices a request without creating anything (`POST /v1/generations/estimate`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a red fox");
    /// let estimate = client.generations().estimate(&request).await?;
    /// assert!(estimate.sufficient);
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimate<'c>(&self, request: &'c GenerationRequest) -> Call<'c, types::Estimate>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let body: types::EstimateRequest = request.body()?;
            call(this.client.raw().estimate_generation().body(body).send()).await
        })
    }

    /// Waits until a generation ends; see [`Wait`]. Works on any existing id, so a
    /// wait cut short (by a deadline or a restart) resumes with another call.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use std::time::Duration;
    ///
    /// let created = client.generations().create(mediagen::GenerationRequest::new("flux-schnell", "a fox")).await?;
    /// let done = client
    ///     .generations()
    ///     .wait(created.id)
    ///     .timeout(Duration::from_secs(120))
    ///     .on_status(|g| println!("{} is {}", g.id, g.status))
    ///     .await?;
    /// assert_eq!(done.output_urls.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn wait(&self, id: Uuid) -> Wait<'a> {
        Wait::new(self.client, id)
    }

    /// Each status a generation takes, from the first read to a final one, as a
    /// stream; it ends after the final status (or the first error).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use futures::TryStreamExt;
    /// use mediagen::{GenerationStatus, WaitOptions};
    ///
    /// let created = client.generations().create(mediagen::GenerationRequest::new("flux-schnell", "a fox")).await?;
    /// let seen: Vec<GenerationStatus> = client
    ///     .generations()
    ///     .watch(created.id, WaitOptions::default())
    ///     .map_ok(|g| g.status)
    ///     .try_collect()
    ///     .await?;
    /// assert_eq!(seen.last(), Some(&GenerationStatus::Succeeded));
    /// # Ok(())
    /// # }
    /// ```
    pub fn watch(
        &self,
        id: Uuid,
        options: WaitOptions,
    ) -> impl Stream<Item = Result<Generation>> + Send + Unpin + 'a {
        watch(self.client, id, options)
    }

    /// Creates a generation and waits until it ends, in one call; see [`CreateAndWait`].
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
    /// println!("{}", done.output_urls[0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_and_wait(&self, request: GenerationRequest) -> CreateAndWait<'a> {
        CreateAndWait::new(self.client, request)
    }

    /// Runs many requests with at most 5 active at once; see [`Batch`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::builder().real_clock(200.0).start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// use mediagen::GenerationRequest;
    ///
    /// let requests = (0..3).map(|i| GenerationRequest::new("flux-schnell", format!("fox number {i}")));
    /// let results = client.generations().batch(requests).await;
    /// assert!(results.iter().all(|r| r.is_ok()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn batch(&self, requests: impl IntoIterator<Item = GenerationRequest>) -> Batch<'a> {
        Batch::new(self.client, requests.into_iter().collect())
    }
}
