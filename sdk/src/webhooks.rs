//! Webhook endpoints, managed through the API. Receiving and verifying
//! deliveries is in `events.rs`.

use std::fmt;

use chrono::{DateTime, Utc};
use futures::Stream;
use serde::Deserialize;
use uuid::Uuid;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::events::{EventType, WebhookVerifier};
use crate::open_enum::open_enum;
use crate::options::Call;
use crate::pagination::{Page, page, paginate};
use crate::transport::{call, call_as};
use crate::types;

open_enum! {
    /// An entry of an endpoint's `eventTypes`: an event name, `generation.*` (the
    /// group) or `*` (every event). An empty list means every event.
    ///
    /// ```
    /// use mediagen::EventTypeFilter;
    /// assert_eq!(EventTypeFilter::from("generation.*"), EventTypeFilter::Generation);
    /// assert_eq!(EventTypeFilter::All.as_str(), "*");
    /// ```
    pub enum EventTypeFilter {
        /// `generation.completed`.
        GenerationCompleted = "generation.completed",
        /// `generation.failed`.
        GenerationFailed = "generation.failed",
        /// `generation.*`: every generation event.
        Generation = "generation.*",
        /// `*`: every event.
        All = "*",
    }
}

open_enum! {
    /// What started a delivery attempt (`trigger`).
    ///
    /// ```
    /// assert_eq!(mediagen::DeliveryTrigger::from("manual"), mediagen::DeliveryTrigger::Manual);
    /// ```
    pub enum DeliveryTrigger {
        /// The first try or an automatic retry.
        Scheduled = "scheduled",
        /// A redelivery asked for.
        Manual = "manual",
    }
}

open_enum! {
    /// How a delivery attempt ended (`outcome`).
    ///
    /// ```
    /// assert_eq!(mediagen::DeliveryOutcome::Failed.as_str(), "failed");
    /// ```
    pub enum DeliveryOutcome {
        /// The receiver answered below 400.
        Succeeded = "succeeded",
        /// 400 or above, no answer within 10 seconds, or no connection.
        Failed = "failed",
    }
}

/// A signing secret (`whsec_…`). Shown by the service once, at creation and at
/// rotation: store it then. Its `Debug` output never shows it.
///
/// ```
/// let secret = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
/// assert_eq!(format!("{secret:?}"), "WebhookSecret(\"whsec_…\")");
/// let verifier = secret.verifier()?;
/// # drop(verifier);
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct WebhookSecret(String);

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WebhookSecret").field(&"whsec_…").finish()
    }
}

impl WebhookSecret {
    /// Wraps a secret read from storage.
    ///
    /// ```
    /// let secret = mediagen::WebhookSecret::new(std::env::var("WEBHOOK_SECRET").unwrap_or_default());
    /// # drop(secret);
    /// ```
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself, to store.
    ///
    /// ```
    /// let secret = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    /// assert!(secret.expose().starts_with("whsec_"));
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A verifier of deliveries signed with this secret.
    ///
    /// ```
    /// let verifier = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verifier()?;
    /// # drop(verifier);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn verifier(&self) -> Result<WebhookVerifier> {
        WebhookVerifier::new(&self.0)
    }
}

/// A registered endpoint, with its secret (the answer to creation).
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// let created = client
///     .webhooks()
///     .create(mediagen::WebhookEndpointRequest::new("https://example.com/hooks/mediagen"))
///     .await?;
/// store_secret(&created.id, created.secret.expose()); // shown only now
/// # Ok(())
/// # }
/// # fn store_secret(_: &str, _: &str) {}
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreatedWebhookEndpoint {
    /// The endpoint's id (`we_…`).
    pub id: String,
    /// The target address.
    pub url: String,
    /// The signing secret.
    pub secret: WebhookSecret,
    /// Subscribed events; empty means all.
    #[serde(default)]
    pub event_types: Vec<EventTypeFilter>,
}

/// A new signing secret (the answer to rotation). The old one is invalid at once.
///
/// ```no_run
/// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
/// let rotated = client.webhooks().rotate_secret("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds").await?;
/// store_secret(rotated.secret.expose()); // shown only now; the old one is invalid
/// # fn store_secret(_: &str) {}
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RotatedSecret {
    /// The new signing secret: the only field the service document guarantees.
    pub secret: WebhookSecret,
    /// The endpoint's id (designed; may be absent).
    #[serde(default)]
    pub id: Option<String>,
    /// When it was rotated (designed; may be absent).
    #[serde(default)]
    pub rotated_at: Option<DateTime<Utc>>,
}

/// An endpoint to register.
///
/// ```
/// use mediagen::EventTypeFilter;
///
/// let request = mediagen::WebhookEndpointRequest::new("https://example.com/hooks/mediagen")
///     .events([EventTypeFilter::GenerationCompleted, EventTypeFilter::GenerationFailed])
///     .description("production receiver");
/// # drop(request);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookEndpointRequest {
    url: String,
    events: Vec<EventTypeFilter>,
    description: Option<String>,
}

impl WebhookEndpointRequest {
    /// An endpoint at `url` (http or https; not localhost nor a private address),
    /// subscribed to every event.
    ///
    /// ```
    /// let request = mediagen::WebhookEndpointRequest::new("https://example.com/hooks");
    /// # drop(request);
    /// ```
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            events: Vec::new(),
            description: None,
        }
    }

    /// The events to subscribe to (exact names, `generation.*` or `*`); none means all.
    ///
    /// ```
    /// let request = mediagen::WebhookEndpointRequest::new("https://example.com/hooks")
    ///     .events([mediagen::EventTypeFilter::GenerationFailed]);
    /// # drop(request);
    /// ```
    pub fn events(mut self, events: impl IntoIterator<Item = EventTypeFilter>) -> Self {
        self.events = events.into_iter().collect();
        self
    }

    /// Free text for the owner.
    ///
    /// ```
    /// let request = mediagen::WebhookEndpointRequest::new("https://example.com/hooks").description("staging");
    /// # drop(request);
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Changes to an endpoint; only the members set change.
///
/// ```
/// let update = mediagen::WebhookEndpointUpdate::new().active(true);
/// # drop(update);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebhookEndpointUpdate {
    body: types::UpdateWebhookEndpointRequest,
    description: Option<String>,
}

impl WebhookEndpointUpdate {
    /// No change yet.
    ///
    /// ```
    /// let update = mediagen::WebhookEndpointUpdate::new();
    /// # drop(update);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// A new target address (checked as at creation).
    ///
    /// ```
    /// let update = mediagen::WebhookEndpointUpdate::new().url("https://example.com/v2/hooks");
    /// # drop(update);
    /// ```
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.body.url = Some(url.into());
        self
    }

    /// New subscriptions.
    ///
    /// ```
    /// let update = mediagen::WebhookEndpointUpdate::new().events([mediagen::EventTypeFilter::All]);
    /// # drop(update);
    /// ```
    pub fn events(mut self, events: impl IntoIterator<Item = EventTypeFilter>) -> Self {
        self.body.event_types = events.into_iter().collect();
        self
    }

    /// A new description.
    ///
    /// ```
    /// let update = mediagen::WebhookEndpointUpdate::new().description("moved to k8s");
    /// # drop(update);
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// `false` disables deliveries; `true` re-enables an endpoint disabled by a 410
    /// answer or after repeated failures, and resets its failure count.
    ///
    /// ```
    /// let update = mediagen::WebhookEndpointUpdate::new().active(false);
    /// # drop(update);
    /// ```
    pub fn active(mut self, active: bool) -> Self {
        self.body.active = Some(active);
        self
    }
}

/// The webhook endpoints of a [`Client`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let mock = mediagen_mock_server::MockServer::start().await;
/// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
/// # mock.set_dns("hooks.example.com", vec!["93.184.216.34".parse().unwrap()]);
/// use mediagen::WebhookEndpointRequest;
///
/// let created = client.webhooks().create(WebhookEndpointRequest::new("https://hooks.example.com/mediagen")).await?;
/// assert!(created.secret.expose().starts_with("whsec_"));
/// let listed = client.webhooks().list().await?;
/// assert_eq!(listed[0].id, created.id);
/// client.webhooks().delete(&created.id).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct WebhookEndpoints<'a> {
    client: &'a Client,
}

impl<'a> WebhookEndpoints<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// Registers an endpoint (`POST /v1/webhook-endpoints`); the answer holds its
    /// secret, shown this once. At most 5 per account.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let created = client
    ///     .webhooks()
    ///     .create(mediagen::WebhookEndpointRequest::new("https://example.com/hooks"))
    ///     .await?;
    /// # drop(created);
    /// # Ok(())
    /// # }
    /// ```
    pub fn create(&self, request: WebhookEndpointRequest) -> Call<'a, CreatedWebhookEndpoint> {
        let this = *self;
        Call::new(async move {
            let description = request
                .description
                .map(|d| d.as_str().try_into())
                .transpose()
                .map_err(|err| Error::InvalidRequest(format!("description: {err}")))?;
            let body = types::CreateWebhookEndpointRequest {
                url: request.url,
                event_types: request.events,
                description,
            };
            call_as::<types::WebhookEndpointCreated, _>(
                this.client
                    .raw()
                    .create_webhook_endpoint()
                    .body(body)
                    .send(),
            )
            .await
        })
    }

    /// The account's endpoints, without secrets (`GET /v1/webhook-endpoints`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// for endpoint in client.webhooks().list().await? {
    ///     println!("{} {} active={}", endpoint.id, endpoint.url, endpoint.active);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn list(&self) -> Call<'a, Vec<types::WebhookEndpoint>> {
        let this = *self;
        Call::new(async move {
            Ok(call(this.client.raw().list_webhook_endpoints().send())
                .await?
                .data)
        })
    }

    /// One endpoint (`GET /v1/webhook-endpoints/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let endpoint = client.webhooks().get("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds").await?;
    /// println!("{} failures in a row", endpoint.failure_count);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get<'c>(&self, id: &'c str) -> Call<'c, types::WebhookEndpoint>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move { call(this.client.raw().get_webhook_endpoint().id(id).send()).await })
    }

    /// Changes an endpoint (`PATCH /v1/webhook-endpoints/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let update = mediagen::WebhookEndpointUpdate::new().active(true);
    /// let endpoint = client.webhooks().update("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds", update).await?;
    /// assert!(endpoint.active);
    /// # Ok(())
    /// # }
    /// ```
    pub fn update<'c>(
        &self,
        id: &'c str,
        update: WebhookEndpointUpdate,
    ) -> Call<'c, types::WebhookEndpoint>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let mut body = update.body;
            if let Some(description) = update.description {
                body.description = Some(
                    description
                        .as_str()
                        .try_into()
                        .map_err(|err| Error::InvalidRequest(format!("description: {err}")))?,
                );
            }
            call(
                this.client
                    .raw()
                    .update_webhook_endpoint()
                    .id(id)
                    .body(body)
                    .send(),
            )
            .await
        })
    }

    /// Deletes an endpoint (`DELETE /v1/webhook-endpoints/{id}`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// client.webhooks().delete("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds").await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete<'c>(&self, id: &'c str) -> Call<'c, ()>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(
            async move { call(this.client.raw().delete_webhook_endpoint().id(id).send()).await },
        )
    }

    /// Issues a new signing secret, shown this once; the old one stops working at
    /// once (`POST /v1/webhook-endpoints/{id}/rotate-secret`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let rotated = client.webhooks().rotate_secret("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds").await?;
    /// # drop(rotated);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rotate_secret<'c>(&self, id: &'c str) -> Call<'c, RotatedSecret>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            call_as::<types::WebhookSecret, _>(
                this.client
                    .raw()
                    .rotate_webhook_endpoint_secret()
                    .id(id)
                    .send(),
            )
            .await
        })
    }

    /// Queues a signed test delivery of `event` (default `generation.completed`)
    /// to the endpoint (`POST /v1/webhook-endpoints/{id}/test`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let queued = client.webhooks().send_test("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds", None).await?;
    /// println!("watch for webhook-id {}", queued.message_id);
    /// # Ok(())
    /// # }
    /// ```
    pub fn send_test<'c>(
        &self,
        id: &'c str,
        event: Option<EventType>,
    ) -> Call<'c, types::WebhookMessageQueued>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let body = types::TestWebhookRequest { event_type: event };
            call(
                this.client
                    .raw()
                    .send_test_webhook()
                    .id(id)
                    .body(body)
                    .send(),
            )
            .await
        })
    }

    /// The delivery attempts to the endpoint, newest first, page after page
    /// (`GET /v1/webhook-endpoints/{id}/deliveries`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// use futures::TryStreamExt;
    ///
    /// let attempts: Vec<_> = client.webhooks().deliveries("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds").try_collect().await?;
    /// # drop(attempts);
    /// # Ok(())
    /// # }
    /// ```
    pub fn deliveries(
        &self,
        id: &str,
    ) -> impl Stream<Item = Result<types::WebhookDeliveryAttempt>> + Send + Unpin + 'a {
        let this = *self;
        let id = id.to_owned();
        paginate(move |cursor| {
            let id = id.clone();
            async move { this.deliveries_page(&id, cursor.as_deref()).await }
        })
    }

    /// One page of [`deliveries`](Self::deliveries).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// let first = client.webhooks().deliveries_page("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds", None).await?;
    /// # drop(first);
    /// # Ok(())
    /// # }
    /// ```
    pub fn deliveries_page<'c>(
        &self,
        id: &'c str,
        cursor: Option<&'c str>,
    ) -> Call<'c, Page<types::WebhookDeliveryAttempt>>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            let mut builder = this.client.raw().list_webhook_deliveries().id(id);
            if let Some(cursor) = cursor {
                builder = builder.cursor(cursor.to_owned());
            }
            let list = call(builder.send()).await?;
            Ok(page(
                list.data,
                list.next_cursor,
                list.has_more,
                |attempt| attempt,
            ))
        })
    }

    /// Queues one manual attempt of an earlier message, with the same body and
    /// `webhook-id` (`POST /v1/webhook-endpoints/{id}/deliveries/{messageId}/redeliver`).
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client, message_id: uuid::Uuid) -> Result<(), mediagen::Error> {
    /// client.webhooks().redeliver("we_2Hk9Qm4Xr7Tb1Nc5Vz8Lp3Ds", message_id).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn redeliver<'c>(
        &self,
        id: &'c str,
        message_id: Uuid,
    ) -> Call<'c, types::WebhookMessageQueued>
    where
        'a: 'c,
    {
        let this = *self;
        Call::new(async move {
            call(
                this.client
                    .raw()
                    .redeliver_webhook_message()
                    .id(id)
                    .message_id(message_id)
                    .send(),
            )
            .await
        })
    }
}
