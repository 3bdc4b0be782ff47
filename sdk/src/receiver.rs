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
/// It remembers the messages it received in memory, so a restart forgets
/// them. With the feature `inbox`, [`with_inbox`](Self::with_inbox) stores
/// each delivery in a durable `webhook_inbox::Inbox` before it is answered:
/// the application's workers take the events from there, and its waits still
/// end on them.
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
    #[cfg(feature = "inbox")]
    inbox: Option<webhook_inbox::Inbox>,
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
            #[cfg(feature = "inbox")]
            inbox: None,
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
    /// runs before the answer. With an [inbox](Self::with_inbox), 204 comes
    /// only once the delivery's row is committed, and a store that cannot
    /// write answers 503, so that the service sends the delivery again.
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
            #[cfg(feature = "inbox")]
            let answer = receiver
                .accept(&headers, &body)
                .await
                .map_err(|err| (err.status(), err.to_string()));
            #[cfg(not(feature = "inbox"))]
            let answer = receiver
                .receive(&headers, &body)
                .map_err(|err| (400, err.to_string()));
            match answer {
                Ok(_) => StatusCode::NO_CONTENT,
                Err((status, error)) => {
                    tracing::warn!(%error, "a webhook delivery was not accepted");
                    StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST)
                }
            }
        }
        axum::Router::new()
            .route("/", axum::routing::post(delivered))
            .with_state(self)
    }
}

#[cfg(feature = "inbox")]
impl WebhookReceiver {
    /// Stores each delivery in `inbox` (feature `inbox`) before it is
    /// answered, under its `webhook-id`: once across restarts, for the
    /// inbox's retention. The application's workers claim the messages from
    /// the inbox; the client's waits still end on the events.
    ///
    /// ```
    /// # fn demo(client: mediagen::Client, secret: mediagen::WebhookSecret) -> Result<(), Box<dyn std::error::Error>> {
    /// let inbox = mediagen::webhook_inbox::Inbox::open("webhooks.db")?;
    /// let receiver = client.webhook_receiver([secret])?.with_inbox(inbox.clone());
    /// // Mount `receiver.router()`; workers call `inbox.wait_claim(…)`.
    /// # drop(receiver);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_inbox(mut self, inbox: webhook_inbox::Inbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// Verifies one delivery, stores it in the [inbox](Self::with_inbox) and
    /// hands its event to the client's waits: `Some(event)` the first time
    /// the message is stored, `None` for a repeat, or for a body this
    /// version cannot read as an event (stored all the same: it verified).
    /// Answer 2xx for `Ok`, and the error's [`status`](webhook_inbox::AcceptError::status)
    /// otherwise: 400 for a delivery that does not verify, 503 for a store
    /// that cannot write now. Without an inbox, the message is remembered in
    /// memory only, as [`receive`](Self::receive) does.
    ///
    /// ```
    /// # async fn demo(receiver: &mediagen::WebhookReceiver) {
    /// let refused = receiver.accept(&http::HeaderMap::new(), b"{}").await.unwrap_err();
    /// assert_eq!(refused.status(), 400); // no signature
    /// # }
    /// ```
    pub async fn accept(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> std::result::Result<Option<WebhookEvent>, webhook_inbox::AcceptError> {
        use webhook_inbox::{AcceptError, Accepted};

        let delivery = match self.verifier.verify(body, headers) {
            Ok(delivery) => Some(delivery),
            Err(crate::Error::WebhookVerification(err)) => return Err(AcceptError::Refused(err)),
            // Any other error comes after the signature passed: a body that is
            // not an event this version reads. The service sent it; refusing it
            // would only bring it back for days.
            Err(_) => None,
        };
        let stored = match &self.inbox {
            Some(inbox) => {
                let id = crate::limits::header_str(headers, webhook_verify::HEADER_WEBHOOK_ID);
                let timestamp =
                    crate::limits::header_str(headers, webhook_verify::HEADER_WEBHOOK_TIMESTAMP)
                        .and_then(|t| t.parse().ok())
                        .unwrap_or_default();
                let accepted = inbox
                    .accept_verified(id.unwrap_or_default(), timestamp, body)
                    .await?;
                Some(accepted == Accepted::Stored)
            }
            None => None,
        };
        let Some(delivery) = delivery else {
            return Ok(None);
        };
        let event = delivery.event.clone();
        // Handed over on a repeat too: after a restart, the retry of a message
        // stored before is what ends a new wait. The hub drops its own repeats.
        let new_to_waits = self.hub.deliver(delivery);
        Ok(stored.unwrap_or(new_to_waits).then_some(event))
    }
}

#[cfg(all(test, feature = "inbox"))]
mod tests {
    use uuid::Uuid;
    use webhook_verify::Webhook;

    use super::*;
    use crate::model::webhook::WebhookSecret;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const GENERATION: &str = "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19";
    const BODY: &[u8] = br#"{"id":"evt_1","type":"generation.completed","created_at":"2026-11-22T10:15:30.123Z","data":{"generation":{"id":"3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19","status":"SUCCEEDED","media_type":"IMAGE","output_urls":["https://cdn.example/0.png"],"cost_rub":2.5,"completed_at":"2026-11-22T10:15:30.000Z"}}}"#;

    fn signed(id: &str, body: &[u8]) -> HeaderMap {
        let now = chrono::Utc::now().timestamp();
        let signature = Webhook::new(SECRET).unwrap().sign(id, now, body).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("webhook-id", id.parse().unwrap());
        headers.insert("webhook-timestamp", now.into());
        headers.insert("webhook-signature", signature.parse().unwrap());
        headers
    }

    #[tokio::test]
    async fn with_an_inbox_a_delivery_is_stored_once_and_still_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = webhook_inbox::Inbox::open(dir.path().join("inbox.db")).unwrap();
        let client = Client::new("http://127.0.0.1:9", "mg_live_demo_secret").unwrap();
        let receiver = client
            .webhook_receiver([WebhookSecret::new(SECRET)])
            .unwrap()
            .with_inbox(inbox.clone());
        let wait = receiver
            .hub
            .subscribe(GENERATION.parse::<Uuid>().unwrap())
            .unwrap();

        let headers = signed("msg_1", BODY);
        assert!(receiver.accept(&headers, BODY).await.unwrap().is_some());
        assert!(receiver.accept(&headers, BODY).await.unwrap().is_none());
        assert!(matches!(
            wait.await.unwrap(),
            WebhookEvent::GenerationCompleted { .. }
        ));
        let claim = inbox.claim().unwrap().unwrap();
        assert_eq!(claim.message.webhook_id, "msg_1");
        assert!(inbox.claim().unwrap().is_none(), "stored once");
    }

    #[tokio::test]
    async fn with_an_inbox_a_forgery_is_refused_and_an_unreadable_body_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = webhook_inbox::Inbox::open(dir.path().join("inbox.db")).unwrap();
        let client = Client::new("http://127.0.0.1:9", "mg_live_demo_secret").unwrap();
        let receiver = client
            .webhook_receiver([WebhookSecret::new(SECRET)])
            .unwrap()
            .with_inbox(inbox.clone());

        let mut forged = signed("msg_1", BODY);
        forged.insert("webhook-signature", "v1,Zm9yZ2Vk".parse().unwrap());
        assert_eq!(
            receiver.accept(&forged, BODY).await.unwrap_err().status(),
            400
        );

        let unreadable = br#"{"type":"generation.completed","data":{}}"#;
        let stored = receiver
            .accept(&signed("msg_2", unreadable), unreadable)
            .await
            .unwrap();
        assert!(stored.is_none(), "no event to hand to the waits");
        let claim = inbox.claim().unwrap().unwrap();
        assert_eq!(claim.message.webhook_id, "msg_2");
        assert_eq!(inbox.stats().unwrap().waiting, 1, "the forgery left no row");
    }
}
