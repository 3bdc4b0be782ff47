//! What a create sends and answers, and which generations a list returns: the
//! types every way of creating (one call, a wait, a batch) shares.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::generated::types;
use crate::model::generation::GenerationStatus;
use crate::transport::new_idempotency_key;

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
    label: Option<String>,
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
            label: None,
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

    /// A name for the request in a batch's [`Journal`](crate::Journal), which
    /// stays the same across runs (the name of a line of a manifest, say);
    /// without one, the journal names it by its model, prompt and params.
    ///
    /// ```
    /// let request = mediagen::GenerationRequest::new("flux-schnell", "a fox").label("line-12");
    /// # drop(request);
    /// ```
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// The request's label, or a digest of its model, prompt and params.
    pub(crate) fn label_or_digest(&self) -> String {
        if let Some(label) = &self.label {
            return label.clone();
        }
        let mut hash = Sha256::new();
        hash.update(self.model_slug.as_bytes());
        hash.update([0]);
        hash.update(self.prompt.as_bytes());
        hash.update([0]);
        // In key order, whatever order the map keeps them in.
        let params: std::collections::BTreeMap<_, _> = self.params.iter().collect();
        hash.update(serde_json::to_vec(&params).unwrap_or_default());
        hash.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
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
    pub(crate) fn body<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
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

/// Which generations [`Generations::list`](crate::areas::Generations::list) returns.
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
    pub(crate) status: Option<GenerationStatus>,
    pub(crate) model_slug: Option<String>,
    pub(crate) page_size: Option<u32>,
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
