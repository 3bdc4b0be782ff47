//! The inbox behind an axum route (feature `axum`).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use bytes::Bytes;
use webhook_verify::Webhook;

use crate::{AcceptError, Inbox};

impl Inbox {
    /// An axum router that answers `POST /` (mount it with `nest` at the
    /// endpoint's path): 204 once the delivery is verified and its row
    /// committed, a repeat included; 400 for one that does not verify, with
    /// nothing stored; 503 when the database is locked past
    /// [`lock_wait`](crate::InboxConfig::lock_wait), full or read-only, so
    /// that the service sends it again later. Never a 2xx without the row.
    ///
    /// ```
    /// # fn demo(inbox: webhook_inbox::Inbox) -> Result<(), webhook_verify::WebhookError> {
    /// let webhook = webhook_verify::Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let app: axum::Router = axum::Router::new().nest("/webhooks", inbox.router(webhook));
    /// # drop(app);
    /// # Ok(())
    /// # }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
    pub fn router(&self, webhook: Webhook) -> Router {
        Router::new()
            .route("/", post(deliver))
            .with_state((self.clone(), Arc::new(webhook)))
    }
}

async fn deliver(
    State((inbox, webhook)): State<(Inbox, Arc<Webhook>)>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    match inbox.accept_async(&webhook, &headers, &body).await {
        Ok(_) => StatusCode::NO_CONTENT,
        Err(err) => {
            match &err {
                AcceptError::Refused(why) => {
                    tracing::warn!(error = %why, "a webhook delivery did not verify");
                }
                AcceptError::Unavailable(why) => {
                    tracing::warn!(error = %why, "a webhook delivery could not be stored");
                }
            }
            StatusCode::from_u16(err.status()).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
        }
    }
}
