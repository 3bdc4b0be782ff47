//! Webhook endpoints, managed through the API. Receiving and verifying
//! deliveries is in `events.rs`.

use futures::Stream;
use uuid::Uuid;

use crate::bridge::call;
use crate::call::Call;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::generated::types;
use crate::model::webhook::{CreatedWebhookEndpoint, EventTypeFilter, RotatedSecret};
use crate::pagination::{Page, page, paginate};

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

impl Client {
    /// Webhook endpoints: register, list, update, rotate secrets, test, redeliver.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mediagen::Error> {
    /// # let mock = mediagen_mock_server::MockServer::start().await;
    /// # let client = mediagen::Client::new(&mock.uri(), mock.demo_api_key())?;
    /// let endpoints = client.webhooks().list().await?;
    /// assert!(endpoints.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn webhooks(&self) -> WebhookEndpoints<'_> {
        WebhookEndpoints::new(self)
    }
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
            call(
                this.client
                    .raw()
                    .create_webhook_endpoint()
                    .body(body)
                    .send(),
            )
            .await
        })
    }

    /// The account's endpoints, without secrets (`GET /v1/webhook-endpoints`):
    /// the seven fields the service document names for the list; [`get`](Self::get)
    /// one for its description and the reason it was disabled.
    ///
    /// ```no_run
    /// # async fn demo(client: mediagen::Client) -> Result<(), mediagen::Error> {
    /// for endpoint in client.webhooks().list().await? {
    ///     println!("{} {} active={}", endpoint.id, endpoint.url, endpoint.active);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn list(&self) -> Call<'a, Vec<types::WebhookEndpointSummary>> {
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
            call(
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
