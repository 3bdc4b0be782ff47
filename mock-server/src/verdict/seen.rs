//! One answered request, as the edge saw it and the verdict reads it: what
//! the contract says of its operation, whom it came from, and what its answer
//! showed.

use chrono::{DateTime, Utc};
use mediagen_openapi::operations::{LimitScope, OperationId};
use mediagen_openapi::policy::Repeat;
use uuid::Uuid;

use super::findings::Client;
use crate::domain::UserId;

/// How the connection of a request ended, when not with the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Cut {
    /// The answer was sent.
    #[default]
    No,
    /// An injected fault closed the connection before the service acted.
    Dropped,
    /// An injected fault closed the connection after the service acted.
    DroppedAfter,
}

/// What a `GET /v1/generations/{id}` answered 200 showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shown {
    pub id: Uuid,
    /// `SUCCEEDED`, `FAILED` or another final state.
    pub final_state: Option<&'static str>,
}

/// One answered request, as the edge saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seen<'a> {
    /// `x-request-id`.
    pub id: &'a str,
    /// When it arrived, on the world's clock.
    pub at: DateTime<Utc>,
    /// Edge seconds when it arrived.
    pub sent: f64,
    /// Edge seconds when its answer went out (later than `sent` under a
    /// delaying fault).
    pub answered: f64,
    /// Real seconds when it arrived and when its answer went out: whether a
    /// repeat came while the answer was held back is told in these, since a
    /// client's wait on a manual clock moves the edge but not the answer.
    pub real_sent: f64,
    pub real_answered: f64,
    pub method: &'a str,
    pub path: &'a str,
    /// The contract's operation, when the path is one of its.
    pub op: Option<OperationId>,
    pub ip: &'a str,
    pub user: Option<UserId>,
    pub key: Option<&'a str>,
    /// A digest of the query and the body.
    pub digest: u64,
    pub status: Option<u16>,
    pub code: Option<&'a str>,
    /// Seconds of `retry-after`, when the answer had one.
    pub retry_after: Option<u64>,
    pub cut: Cut,
    /// For a windowed 429: the limit that refused it.
    pub window: Option<LimitScope>,
    /// For a generation read answered 200: what it showed.
    pub shown: Option<Shown>,
    /// The user's active tasks when it arrived.
    pub active: usize,
}

impl Seen<'_> {
    pub(super) fn is_create(&self) -> bool {
        self.op == Some(OperationId::CreateGeneration)
    }

    /// Whether the contract says it carries an `Idempotency-Key`.
    pub(super) fn keyed(&self) -> bool {
        self.op.is_some_and(|op| op.repeat() == Repeat::Keyed)
    }

    /// Whether sending it twice may act twice: what the contract says may act
    /// (`x-repeat: once`); outside it, a `POST` or a `PATCH`.
    pub(super) fn unsafe_to_repeat(&self) -> bool {
        match self.op {
            Some(op) => op.repeat() == Repeat::Once,
            None => matches!(self.method, "POST" | "PATCH"),
        }
    }

    /// The client: its user, or its address.
    pub(super) fn client(&self) -> Client {
        match self.user {
            Some(user) => Client::User(user),
            None => Client::Address(self.ip.to_owned()),
        }
    }

    /// The area of its path (`webhook-endpoints` of
    /// `/v1/webhook-endpoints/{id}/rotate-secret`): a read of it tells a
    /// client whether a request of the area took effect.
    pub(super) fn area(&self) -> &str {
        area(self.path)
    }

    /// The generation a read reads, from its path.
    pub(super) fn read_generation(&self) -> Option<Uuid> {
        if self.op != Some(OperationId::GetGeneration) {
            return None;
        }
        // An answered read says which: its handler parsed the id already.
        if let Some(shown) = self.shown {
            return Some(shown.id);
        }
        let id = self.path.trim_end_matches('/').rsplit('/').next()?;
        Uuid::parse_str(id).ok()
    }
}

/// The part of a path after its version (`webhook-endpoints` of
/// `/v1/webhook-endpoints/{id}`); empty for a path with none.
fn area(path: &str) -> &str {
    path.split('/')
        .filter(|segment| !segment.is_empty())
        .nth(1)
        .unwrap_or_default()
}

/// The path with its ids as `{id}`, to group findings by route.
pub(super) fn route(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment != "v1" && segment.bytes().any(|b| b.is_ascii_digit()) {
                "{id}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}
