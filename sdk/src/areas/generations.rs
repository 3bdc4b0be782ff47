//! The generation area: create, get, list, cancel, estimate; waiting and
//! batches are in `wait.rs` and `batch.rs`.

use futures::Stream;
use uuid::Uuid;

use crate::batch::Batch;
use crate::bridge::call;
use crate::call::Call;
use crate::client::Client;
use crate::error::Result;
use crate::generated::types;
use crate::generation_request::{CreatedGeneration, GenerationFilter, GenerationRequest};
use crate::model::generation::Generation;
use crate::pagination::{Page, page, paginate};
use crate::wait::{CreateAndWait, Known, Wait, WaitOptions, watch};

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

impl Client {
    /// Generations: create, get, list, cancel, estimate, wait, batch.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a red fox in snow");
    /// let estimate = client.generations().estimate(&request).await?;
    /// assert!(estimate.cost_rub > 0.0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn generations(&self) -> Generations<'_> {
        Generations::new(self)
    }
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
            let created = call(
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
        Call::new(async move { call(this.client.raw().get_generation().id(id).send()).await })
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
            let list = call(builder.send()).await?;
            Ok(page(
                list.data,
                list.next_cursor,
                list.has_more,
                |generation| generation,
            ))
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
        Call::new(async move { call(this.client.raw().cancel_generation().id(id).send()).await })
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
        watch(self.client, id, options, Known::default())
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
