//! Webhook deliveries: verification of the signature (Standard Webhooks, with
//! `webhook-verify`) and the typed events, in one call.
//!
//! Events (service document): the payload uses snake_case names; the signed
//! text is `<webhook-id>.<webhook-timestamp>.<raw body>`; a receiver answers
//! 2xx quickly and skips duplicates by `webhook-id`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use http::HeaderMap;
use mediagen_openapi::sets::EventType as Contract;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use uuid::Uuid;
use webhook_verify::Webhook;

use crate::error::{Error, Result};
use crate::limits::header_str;
use crate::model::generation::{FailureCode, GenerationStatus, MediaType};
use crate::open_enum::open_enum;

mediagen_openapi::event_type_values! {
    open_enum! {
        /// The name of a webhook event (`type`).
        ///
        /// ```
        /// assert_eq!(mediagen::EventType::from("generation.failed"), mediagen::EventType::GenerationFailed);
        /// ```
        pub enum EventType
    }
}

/// `data.generation` of `generation.completed`.
///
/// ```
/// let generation: mediagen::CompletedGeneration = serde_json::from_value(serde_json::json!({
///     "id": "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19", "status": "SUCCEEDED", "media_type": "IMAGE",
///     "output_urls": ["https://cdn.example/0.png"], "cost_rub": 2.5,
///     "completed_at": "2026-11-22T10:15:30.123Z"
/// }))?;
/// assert_eq!(generation.cost_rub, 2.5);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletedGeneration {
    /// The generation.
    pub id: Uuid,
    /// `SUCCEEDED`.
    pub status: GenerationStatus,
    /// Its kind of media.
    pub media_type: MediaType,
    /// Final result URLs.
    pub output_urls: Vec<String>,
    /// Cost in roubles.
    pub cost_rub: f64,
    /// When it finished.
    pub completed_at: DateTime<Utc>,
}

/// `data.generation` of `generation.failed`.
///
/// ```
/// let generation: mediagen::FailedGeneration = serde_json::from_value(serde_json::json!({
///     "id": "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19", "error_code": "timeout",
///     "error_message": "The provider did not answer in time", "failed_at": "2026-11-22T10:15:30.123Z"
/// }))?;
/// assert!(generation.error_code.is_retryable());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FailedGeneration {
    /// The generation.
    pub id: Uuid,
    /// `FAILED`, when sent.
    #[serde(default)]
    pub status: Option<GenerationStatus>,
    /// Why it failed.
    pub error_code: FailureCode,
    /// Human-readable text.
    pub error_message: String,
    /// When it failed.
    pub failed_at: DateTime<Utc>,
}

/// A webhook event, typed by its `type`.
///
/// ```
/// let body = br#"{"id": "evt_0123456789abcdefghijklmn", "type": "generation.failed",
///     "created_at": "2026-11-22T10:15:30.123Z",
///     "data": {"generation": {"id": "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19",
///         "error_code": "content_policy", "error_message": "Rewrite the prompt",
///         "failed_at": "2026-11-22T10:15:30.000Z"}}}"#;
/// match mediagen::WebhookEvent::parse(body)? {
///     mediagen::WebhookEvent::GenerationFailed { generation, .. } => {
///         assert_eq!(generation.error_code, mediagen::FailureCode::ContentPolicy);
///     }
///     other => panic!("unexpected {other:?}"),
/// }
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WebhookEvent {
    /// `generation.completed`: the task `SUCCEEDED`.
    GenerationCompleted {
        /// The event's id (`evt_…`).
        id: String,
        /// When the event was made.
        created_at: DateTime<Utc>,
        /// The generation.
        generation: CompletedGeneration,
    },
    /// `generation.failed`: the task `FAILED`; its cost is already refunded.
    GenerationFailed {
        /// The event's id (`evt_…`).
        id: String,
        /// When the event was made.
        created_at: DateTime<Utc>,
        /// The generation.
        generation: FailedGeneration,
    },
    /// An event this version does not know: acknowledge it (answer 2xx) and move on.
    Other {
        /// The event's id.
        id: String,
        /// Its `type`.
        event_type: String,
        /// When the event was made.
        created_at: Option<DateTime<Utc>>,
        /// Its `data`, as sent.
        data: Value,
    },
}

/// An event as it comes; its `data` is kept as text until its type says what
/// it holds, so a known event's data is read once, into its own type.
#[derive(Deserialize)]
struct Envelope {
    id: String,
    #[serde(rename = "type")]
    event_type: String,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    data: Option<Box<RawValue>>,
}

impl Envelope {
    /// The data as `T` (absent data reads as `null`, which no known event's
    /// data is).
    fn data<T: DeserializeOwned>(&self) -> Result<T> {
        let text = self.data.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(text).map_err(Error::WebhookPayload)
    }
}

#[derive(Deserialize)]
struct Data<G> {
    generation: G,
}

impl WebhookEvent {
    /// Reads an event from a body, without checking any signature: for bodies
    /// already verified, or stored. Deliveries from the network go through
    /// [`WebhookVerifier::verify`].
    ///
    /// ```
    /// let event = mediagen::WebhookEvent::parse(br#"{"id": "evt_1", "type": "account.updated", "data": {}}"#)?;
    /// assert_eq!(event.event_type(), "account.updated");
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn parse(body: &[u8]) -> Result<Self> {
        let envelope: Envelope = serde_json::from_slice(body).map_err(Error::WebhookPayload)?;
        let created_at = || {
            envelope
                .created_at
                .ok_or_else(|| Error::WebhookPayload(serde::de::Error::missing_field("created_at")))
        };
        // Every event type of the contract has its arm, so one the contract gains
        // does not compile until it is read here.
        Ok(match EventType::from(envelope.event_type.as_str()) {
            EventType::GenerationCompleted => {
                let data: Data<CompletedGeneration> = envelope.data()?;
                Self::GenerationCompleted {
                    created_at: created_at()?,
                    id: envelope.id,
                    generation: data.generation,
                }
            }
            EventType::GenerationFailed => {
                let data: Data<FailedGeneration> = envelope.data()?;
                Self::GenerationFailed {
                    created_at: created_at()?,
                    id: envelope.id,
                    generation: data.generation,
                }
            }
            EventType::Other(_) => Self::Other {
                data: envelope.data()?,
                id: envelope.id,
                event_type: envelope.event_type,
                created_at: envelope.created_at,
            },
        })
    }

    /// The event's id (`evt_…`, the payload's `id`).
    ///
    /// ```
    /// let event = mediagen::WebhookEvent::parse(br#"{"id": "evt_1", "type": "x", "data": {}}"#)?;
    /// assert_eq!(event.id(), "evt_1");
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn id(&self) -> &str {
        match self {
            Self::GenerationCompleted { id, .. }
            | Self::GenerationFailed { id, .. }
            | Self::Other { id, .. } => id,
        }
    }

    /// The event's `type`.
    ///
    /// ```
    /// let event = mediagen::WebhookEvent::parse(br#"{"id": "evt_1", "type": "x", "data": {}}"#)?;
    /// assert_eq!(event.event_type(), "x");
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn event_type(&self) -> &str {
        match self {
            Self::GenerationCompleted { .. } => Contract::GenerationCompleted.as_str(),
            Self::GenerationFailed { .. } => Contract::GenerationFailed.as_str(),
            Self::Other { event_type, .. } => event_type,
        }
    }

    /// The generation the event is about, for the known events.
    ///
    /// ```
    /// let event = mediagen::WebhookEvent::parse(br#"{"id": "evt_1", "type": "x", "data": {}}"#)?;
    /// assert_eq!(event.generation_id(), None);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn generation_id(&self) -> Option<Uuid> {
        match self {
            Self::GenerationCompleted { generation, .. } => Some(generation.id),
            Self::GenerationFailed { generation, .. } => Some(generation.id),
            Self::Other { .. } => None,
        }
    }
}

/// A verified delivery: the message id to deduplicate on, and the event.
///
/// ```
/// # fn handle(delivery: mediagen::Delivery, seen: &mut std::collections::HashSet<String>) {
/// if !seen.insert(delivery.message_id.clone()) {
///     return; // a retry of a message already handled
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Delivery {
    /// `webhook-id`: the same on every retry of one message.
    pub message_id: String,
    /// `webhook-timestamp`, Unix seconds.
    pub timestamp: i64,
    /// The event.
    pub event: WebhookEvent,
}

/// Verifies and reads webhook deliveries for one endpoint's secret.
///
/// Build it once and share it. A delivery that fails verification must be answered
/// with a 4xx and not acted on; a verified event of an unknown type should still be
/// answered 2xx.
///
/// ```
/// use http::HeaderMap;
/// use mediagen::{WebhookEvent, WebhookVerifier};
///
/// let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// let body = br#"{"id": "evt_0123456789abcdefghijklmn", "type": "generation.completed",
///     "created_at": "2026-11-22T10:15:30.123Z",
///     "data": {"generation": {"id": "3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19", "status": "SUCCEEDED",
///         "media_type": "IMAGE", "output_urls": ["https://cdn.example/0.png"], "cost_rub": 2.5,
///         "completed_at": "2026-11-22T10:15:30.000Z"}}}"#;
///
/// // What the service sends (signed here with webhook-verify, as the service does).
/// let now = chrono::Utc::now().timestamp();
/// let signature = webhook_verify::Webhook::new(secret).unwrap().sign("5a7d3e91-0c2b-4f68-9a14-6e8b2d5c7f03", now, body).unwrap();
/// let mut headers = HeaderMap::new();
/// headers.insert("webhook-id", "5a7d3e91-0c2b-4f68-9a14-6e8b2d5c7f03".parse().unwrap());
/// headers.insert("webhook-timestamp", now.into());
/// headers.insert("webhook-signature", signature.parse().unwrap());
///
/// let verifier = WebhookVerifier::new(secret)?;
/// let delivery = verifier.verify(body, &headers)?;
/// match delivery.event {
///     WebhookEvent::GenerationCompleted { generation, .. } => assert_eq!(generation.output_urls.len(), 1),
///     other => panic!("unexpected {other:?}"),
/// }
/// # Ok::<(), mediagen::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct WebhookVerifier {
    webhook: Webhook,
}

impl WebhookVerifier {
    /// A verifier for `secret` (`whsec_…`).
    ///
    /// ```
    /// assert!(mediagen::WebhookVerifier::new("whsec_not base64!").is_err());
    /// ```
    pub fn new(secret: &str) -> Result<Self> {
        Ok(Self {
            webhook: Webhook::new(secret)?,
        })
    }

    /// A verifier that accepts any of several secrets: during a rotation, keep the
    /// old secret next to the new one until deliveries signed with it are over.
    ///
    /// ```
    /// let verifier = mediagen::WebhookVerifier::from_secrets([
    ///     "whsec_5XhVnU1OdcTTkDYG5AEUaIVhBZ5HMvXyMUJOQ/nyEcA=",
    ///     "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    /// ])?;
    /// # drop(verifier);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn from_secrets<I>(secrets: I) -> Result<Self>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Ok(Self {
            webhook: Webhook::from_secrets(secrets)?,
        })
    }

    /// How far `webhook-timestamp` may be from the clock (default 5 minutes, the
    /// service document's).
    ///
    /// ```
    /// let verifier = mediagen::WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?
    ///     .with_tolerance(std::time::Duration::from_secs(60));
    /// # drop(verifier);
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    #[must_use]
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.webhook = self.webhook.with_tolerance(tolerance);
        self
    }

    /// Verifies a delivery against the system clock and reads its event. `body` must
    /// be the raw bytes received.
    ///
    /// ```
    /// let verifier = mediagen::WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let err = verifier.verify(b"{}", &http::HeaderMap::new()).unwrap_err();
    /// assert!(matches!(err, mediagen::Error::WebhookVerification(_)));
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn verify(&self, body: &[u8], headers: &HeaderMap) -> Result<Delivery> {
        self.webhook.verify(body, headers)?;
        delivery(
            body,
            header_str(headers, "webhook-id"),
            header_str(headers, "webhook-timestamp"),
        )
    }

    /// [`verify`](Self::verify) against a given clock, `now` in Unix seconds.
    ///
    /// ```
    /// let verifier = mediagen::WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// assert!(verifier.verify_at(b"{}", &http::HeaderMap::new(), 1_700_000_000).is_err());
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn verify_at(&self, body: &[u8], headers: &HeaderMap, now: i64) -> Result<Delivery> {
        self.webhook.verify_at(body, headers, now)?;
        delivery(
            body,
            header_str(headers, "webhook-id"),
            header_str(headers, "webhook-timestamp"),
        )
    }

    /// [`verify`](Self::verify) from the three header values as strings, for
    /// frameworks without `http::HeaderMap`.
    ///
    /// ```
    /// let verifier = mediagen::WebhookVerifier::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
    /// let err = verifier.verify_parts(b"{}", "msg_1", "1700000000", "v1,bm9wZQ==").unwrap_err();
    /// assert!(matches!(err, mediagen::Error::WebhookVerification(_)));
    /// # Ok::<(), mediagen::Error>(())
    /// ```
    pub fn verify_parts(
        &self,
        body: &[u8],
        message_id: &str,
        timestamp: &str,
        signature: &str,
    ) -> Result<Delivery> {
        self.webhook
            .verify_parts(body, message_id, timestamp, signature)?;
        delivery(body, Some(message_id), Some(timestamp))
    }
}

fn delivery(body: &[u8], message_id: Option<&str>, timestamp: Option<&str>) -> Result<Delivery> {
    Ok(Delivery {
        message_id: message_id.unwrap_or_default().to_owned(),
        timestamp: timestamp.and_then(|t| t.parse().ok()).unwrap_or_default(),
        event: WebhookEvent::parse(body)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const COMPLETED_BODY: &[u8] = br#"{"id":"evt_0123456789abcdefghijklmn","type":"generation.completed","created_at":"2026-11-22T10:15:30.123Z","data":{"generation":{"id":"3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19","status":"SUCCEEDED","media_type":"IMAGE","output_urls":["https://cdn.example/0.png"],"cost_rub":2.5,"completed_at":"2026-11-22T10:15:30.000Z"}}}"#;

    fn signed(body: &[u8], now: i64) -> HeaderMap {
        let signature = Webhook::new(SECRET)
            .unwrap()
            .sign("msg_1", now, body)
            .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("webhook-id", "msg_1".parse().unwrap());
        headers.insert("webhook-timestamp", now.into());
        headers.insert("webhook-signature", signature.parse().unwrap());
        headers
    }

    #[test]
    fn a_signed_delivery_verifies_and_reads_as_a_typed_event() {
        let verifier = WebhookVerifier::new(SECRET).unwrap();
        let delivery = verifier
            .verify_at(COMPLETED_BODY, &signed(COMPLETED_BODY, 1_000), 1_000)
            .unwrap();
        assert_eq!(delivery.message_id, "msg_1");
        assert_eq!(delivery.timestamp, 1_000);
        assert!(matches!(
            delivery.event,
            WebhookEvent::GenerationCompleted { .. }
        ));
    }

    #[test]
    fn a_tampered_body_is_refused_before_it_is_read() {
        let verifier = WebhookVerifier::new(SECRET).unwrap();
        let headers = signed(COMPLETED_BODY, 1_000);
        let mut tampered = COMPLETED_BODY.to_vec();
        tampered[60] ^= 1;
        let err = verifier.verify_at(&tampered, &headers, 1_000).unwrap_err();
        assert!(matches!(
            err,
            Error::WebhookVerification(webhook_verify::WebhookError::InvalidSignature)
        ));
    }

    #[test]
    fn an_old_timestamp_is_refused_as_a_replay() {
        let verifier = WebhookVerifier::new(SECRET).unwrap();
        let err = verifier
            .verify_at(COMPLETED_BODY, &signed(COMPLETED_BODY, 1_000), 1_000 + 301)
            .unwrap_err();
        assert!(matches!(
            err,
            Error::WebhookVerification(webhook_verify::WebhookError::TimestampTooOldError)
        ));
    }

    #[test]
    fn a_verified_body_that_is_not_an_event_is_a_payload_error() {
        let verifier = WebhookVerifier::new(SECRET).unwrap();
        let body = br#"{"type":"generation.completed"}"#;
        let err = verifier
            .verify_at(body, &signed(body, 1_000), 1_000)
            .unwrap_err();
        assert!(matches!(err, Error::WebhookPayload(_)));
    }

    #[test]
    fn unknown_failure_codes_and_event_types_are_kept() {
        let body = br#"{"id":"evt_1","type":"generation.failed","created_at":"2026-11-22T10:15:30.123Z","data":{"generation":{"id":"3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19","error_code":"brand_new","error_message":"m","failed_at":"2026-11-22T10:15:30.000Z"}}}"#;
        let WebhookEvent::GenerationFailed { generation, .. } = WebhookEvent::parse(body).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            generation.error_code,
            FailureCode::Other("brand_new".into())
        );
        let other =
            WebhookEvent::parse(br#"{"id":"evt_2","type":"invoice.paid","data":{"x":1}}"#).unwrap();
        assert_eq!(other.event_type(), "invoice.paid");
    }

    #[test]
    fn an_unknown_events_data_is_kept_whole_and_a_known_one_without_data_is_refused() {
        let body = br#"{"id":"evt_3","type":"invoice.paid","data":{"b":[1,{"c":null}],"a":"x"}}"#;
        let WebhookEvent::Other { data, .. } = WebhookEvent::parse(body).unwrap() else {
            panic!("an unknown type is kept as Other")
        };
        assert_eq!(data, serde_json::json!({"b": [1, {"c": null}], "a": "x"}));
        let WebhookEvent::Other { data, .. } =
            WebhookEvent::parse(br#"{"id":"evt_4","type":"invoice.paid"}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(data, Value::Null, "absent data reads as null");

        let bare =
            br#"{"id":"evt_5","type":"generation.completed","created_at":"2026-11-22T10:15:30Z"}"#;
        assert!(matches!(
            WebhookEvent::parse(bare),
            Err(Error::WebhookPayload(_))
        ));
    }
}
