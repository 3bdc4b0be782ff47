//! Waits that end on a webhook: a receiver that verifies each delivery, drops
//! the repeats, and hands the event to the client, whose waits and batches end
//! on it instead of polling.
//!
//! The service document recommends webhooks for long tasks, and a receiver
//! answers 2xx quickly and skips duplicates by `webhook-id` (Signature, rule 4):
//! the service retries a delivery it thinks failed, so the same message may
//! arrive twice.

use std::sync::Arc;

use http::HeaderMap;

use crate::client::Client;
use crate::error::Result;
use crate::events::{WebhookEvent, WebhookVerifier};
use crate::hub::Hub;
use crate::model::webhook::WebhookSecret;

/// Receives the service's webhooks for a [`Client`]: verifies each delivery
/// with the endpoint's secret (any of several, during a rotation), drops a
/// message already received, and ends the client's waits and batches on the
/// events, so that they no longer poll (a slow read remains, in case a
/// delivery is late or lost). Made by [`Client::webhook_receiver`].
///
/// Mount `router` (feature `axum`) at the endpoint's path, or
/// call [`receive`](Self::receive) from a handler of your own framework.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mediagen::Error> {
/// # let secret = mediagen::WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
/// let client = mediagen::Client::new("http://127.0.0.1:8080", "mg_live_demo_secret")?;
/// let receiver = client.webhook_receiver([secret])?;
/// // In a handler: the raw body and its headers, byte for byte.
/// # let (headers, body) = (http::HeaderMap::new(), b"{}");
/// match receiver.receive(&headers, body) {
///     Ok(Some(event)) => println!("{event:?}"), // also handed to the client's waits
///     Ok(None) => {}                            // a repeat: answer 2xx, do nothing
///     Err(err) => eprintln!("refused: {err}"), // answer 400
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct WebhookReceiver {
    verifier: Arc<WebhookVerifier>,
    hub: Arc<Hub>,
}

impl Client {
    /// A receiver of this client's webhooks, for the endpoints signed with
    /// `secrets`. From now on the waits and batches of this client (and its
    /// clones) end on the events it receives.
    ///
    /// Fails with [`Error::WebhookVerification`](crate::Error::WebhookVerification) for a secret that is not one
    /// (or none at all).
    ///
    /// ```
    /// # fn demo(client: mediagen::Client, stored: &str) -> Result<(), mediagen::Error> {
    /// let receiver = client.webhook_receiver([mediagen::WebhookSecret::new(stored)])?;
    /// # drop(receiver);
    /// # Ok(())
    /// # }
    /// ```
    pub fn webhook_receiver(
        &self,
        secrets: impl IntoIterator<Item = WebhookSecret>,
    ) -> Result<WebhookReceiver> {
        let secrets: Vec<WebhookSecret> = secrets.into_iter().collect();
        let verifier = WebhookVerifier::from_secrets(secrets.iter().map(WebhookSecret::expose))?;
        let hub = Arc::clone(&self.shared().hub);
        hub.listen();
        Ok(WebhookReceiver {
            verifier: Arc::new(verifier),
            hub,
        })
    }
}

impl WebhookReceiver {
    /// Verifies one delivery (the raw body, byte for byte, and its headers)
    /// and hands its event to the client's waits: `Some(event)` the first time
    /// a message arrives, `None` for a repeat of it. An error means the
    /// delivery must be answered with a 4xx and not acted on.
    ///
    /// ```
    /// # fn demo(receiver: &mediagen::WebhookReceiver) {
    /// let refused = receiver.receive(&http::HeaderMap::new(), b"{}");
    /// assert!(refused.is_err()); // no signature
    /// # }
    /// ```
    pub fn receive(&self, headers: &HeaderMap, body: &[u8]) -> Result<Option<WebhookEvent>> {
        let delivery = self.verifier.verify(body, headers)?;
        let event = delivery.event.clone();
        Ok(self.hub.deliver(delivery).then_some(event))
    }

    /// An axum router that answers `POST /` (mount it with `nest` at the
    /// endpoint's path): 204 once the delivery is verified and handed over, a
    /// repeat included, and 400 for one that does not verify. Nothing slow
    /// runs before the answer.
    ///
    /// ```
    /// # fn demo(receiver: mediagen::WebhookReceiver) {
    /// let app: axum::Router = axum::Router::new().nest("/hooks/mediagen", receiver.router());
    /// # drop(app);
    /// # }
    /// ```
    #[cfg(feature = "axum")]
    pub fn router(self) -> axum::Router {
        use axum::extract::State;
        use axum::http::StatusCode;

        async fn delivered(
            State(receiver): State<WebhookReceiver>,
            headers: HeaderMap,
            body: bytes::Bytes,
        ) -> StatusCode {
            match receiver.receive(&headers, &body) {
                Ok(_) => StatusCode::NO_CONTENT,
                Err(err) => {
                    tracing::warn!(error = %err, "a webhook delivery did not verify");
                    StatusCode::BAD_REQUEST
                }
            }
        }
        axum::Router::new()
            .route("/", axum::routing::post(delivered))
            .with_state(self)
    }
}
