//! What the service middleware and the deliverer tell the world's verdict
//! (`verdict/`): each request with the digest of its body and the edge's time,
//! each delivery attempt; and the findings it makes, on the live journal.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use mediagen_openapi::operations::LimitScope;
use uuid::Uuid;

use crate::domain::UserId;
use crate::events::EventKind;
use crate::state::AppState;
use crate::store::LoggedRequest;
use crate::verdict::{Cut, DeliverySeen, Facts, Finding, Judge, Seen, Shown};

/// A digest of bytes that arrive in chunks: the same however they are cut.
/// It reads eight bytes at a time (a multiply and a shift each), keeping the
/// bytes of a word a chunk ended in until the next chunk fills it.
#[derive(Debug, Clone, Copy)]
struct Digester {
    hash: u64,
    /// The bytes of an unfinished word, little-endian, and how many.
    tail: u64,
    tail_len: u32,
    len: u64,
}

const SEED: u64 = 0xcbf2_9ce4_8422_2325;
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl Digester {
    const fn new() -> Self {
        Self {
            hash: SEED,
            tail: 0,
            tail_len: 0,
            len: 0,
        }
    }

    fn word(&mut self, word: u64) {
        let hash = (self.hash ^ word).wrapping_mul(MIX);
        self.hash = hash ^ (hash >> 29);
    }

    fn write(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        while self.tail_len > 0 && !bytes.is_empty() {
            self.tail |= u64::from(bytes[0]) << (8 * self.tail_len);
            self.tail_len += 1;
            bytes = &bytes[1..];
            if self.tail_len == 8 {
                self.word(self.tail);
                (self.tail, self.tail_len) = (0, 0);
            }
        }
        if bytes.is_empty() {
            return;
        }
        // The unfinished word is empty from here on.
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.word(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        for (i, &byte) in words.remainder().iter().enumerate() {
            self.tail |= u64::from(byte) << (8 * i);
        }
        self.tail_len = words.remainder().len() as u32;
    }

    /// The digest of the bytes written so far.
    fn finish(&self) -> u64 {
        let mut last = *self;
        last.word(self.tail);
        last.word(self.len);
        last.hash
    }
}

/// The digest of a request's query and of the body bytes read so far.
#[derive(Debug, Clone)]
pub(crate) enum Digest {
    /// A request without a body: its query's, known at once (no allocation
    /// on the reads, the most frequent requests).
    Query(u64),
    /// Fed by the body as the handler reads it.
    Body(Arc<AtomicU64>),
}

impl Digest {
    pub(crate) fn value(&self) -> u64 {
        match self {
            Self::Query(digest) => *digest,
            Self::Body(digest) => digest.load(Ordering::Relaxed),
        }
    }
}

/// Digests the query, and the body as the handler reads it: a request with a
/// body (not `GET` or `HEAD`) gets a body that digests each chunk on its way.
pub(crate) fn digest(request: &mut Request) -> Digest {
    let mut digester = Digester::new();
    digester.write(request.uri().query().unwrap_or("").as_bytes());
    if matches!(*request.method(), Method::GET | Method::HEAD) {
        return Digest::Query(digester.finish());
    }
    let digest = Arc::new(AtomicU64::new(digester.finish()));
    let inner = std::mem::take(request.body_mut());
    *request.body_mut() = Body::new(Digesting {
        inner,
        digester,
        digest: digest.clone(),
    });
    Digest::Body(digest)
}

/// A request body that feeds the digest with each chunk the handler reads,
/// and tells the handler its size as the body it wraps does.
struct Digesting {
    inner: Body,
    digester: Digester,
    /// Where the middleware reads the digest once the handler is done.
    digest: Arc<AtomicU64>,
}

impl http_body::Body for Digesting {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &frame
            && let Some(bytes) = frame.data_ref()
        {
            self.digester.write(bytes);
            self.digest.store(self.digester.finish(), Ordering::Relaxed);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Reads the body of a request no handler will read (refused by a limit or a
/// fault), so that its digest is whole.
pub(crate) async fn drain(request: Request, limit: usize) {
    axum::body::to_bytes(request.into_body(), limit).await.ok();
}

/// The store, as the judge asks it.
struct StoreFacts<'a>(&'a AppState);

impl Facts for StoreFacts<'_> {
    fn active_tasks(&self, user: UserId) -> Vec<Uuid> {
        let store = self.0.store();
        let want = store.active_count(user);
        store
            .user(user)
            .map(|u| {
                // The newest first: active tasks are among the last made.
                u.generations
                    .iter()
                    .rev()
                    .filter(|id| store.generation(**id).is_some_and(|g| g.status.is_active()))
                    .take(want)
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }

    fn any_ended(&self, ids: &[Uuid]) -> bool {
        let store = self.0.store();
        ids.iter()
            .any(|id| store.generation(*id).is_none_or(|g| !g.status.is_active()))
    }

    fn available(&self, user: UserId) -> i64 {
        self.0.store().account(user).map_or(0, |a| a.available.0)
    }
}

/// What the edge measured of a request, beside what the log keeps.
#[derive(Debug, Default)]
pub(crate) struct Edge {
    /// Edge seconds when it arrived, and when its answer went out.
    pub sent: f64,
    pub answered: f64,
    /// The same in real seconds.
    pub real_sent: f64,
    pub real_answered: f64,
    pub digest: u64,
    pub cut: Cut,
    pub retry_after: Option<u64>,
    pub window: Option<LimitScope>,
    pub shown: Option<Shown>,
    /// The user's active tasks, for a read.
    pub active: usize,
}

impl Edge {
    /// What the answer tells: its `retry-after`, the limit whose window
    /// refused it (`refused_by`; the general one for a 429 that names none, as
    /// an injected one), and what a generation read showed.
    pub(crate) fn of(response: &Response, refused_by: Option<LimitScope>) -> Self {
        let retry_after = (response.status() == StatusCode::TOO_MANY_REQUESTS)
            .then(|| response.headers().get(header::RETRY_AFTER))
            .flatten()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let window = retry_after.map(|_| refused_by.unwrap_or(LimitScope::General));
        Self {
            retry_after,
            window,
            shown: response.extensions().get::<Shown>().copied(),
            ..Self::default()
        }
    }
}

/// Logs an answered request and, when the verdict is on (`edge` is what the
/// edge measured of it), judges it, both under the ledger's one lock, under
/// which the journal is told the request and then its findings: a reset of
/// the verdict comes before or after them all.
pub(crate) fn log(
    state: &AppState,
    entry: LoggedRequest,
    edge: Option<&Edge>,
    duration_ms: Option<u64>,
) {
    let mut ledger = state.ledger();
    let made = match edge {
        Some(edge) => {
            let seen = Seen {
                id: &entry.request_id,
                at: entry.at,
                sent: edge.sent,
                answered: edge.answered,
                real_sent: edge.real_sent,
                real_answered: edge.real_answered,
                method: &entry.method,
                path: &entry.path,
                op: entry.operation,
                ip: &entry.ip,
                user: entry.user_id,
                key: entry.idempotency_key.as_deref(),
                digest: edge.digest,
                status: entry.status,
                code: entry.error_code.as_deref(),
                retry_after: edge.retry_after,
                cut: edge.cut,
                window: edge.window,
                shown: edge.shown,
                active: edge.active,
            };
            let places = ledger.judge.request(&seen, &StoreFacts(state));
            told(state, &ledger.judge, &places)
        }
        None => Vec::new(),
    };
    state.log_request(&mut ledger.log, entry, duration_ms);
    publish(state, made);
}

/// The findings at `places`, for the live journal; none when no one reads it.
fn told(state: &AppState, judge: &Judge, places: &[usize]) -> Vec<Finding> {
    if places.is_empty() || !state.events().listening() {
        return Vec::new();
    }
    judge.current(places)
}

/// Judges a delivery attempt or probe and tells the journal what it found.
pub(crate) fn delivery(state: &AppState, seen: &DeliverySeen) {
    let mut ledger = state.ledger();
    let places = ledger.judge.delivery(seen);
    let made = told(state, &ledger.judge, &places);
    publish(state, made);
}

/// Tells the journal the findings a request or delivery made.
fn publish(state: &AppState, made: Vec<Finding>) {
    let events = state.events();
    if !events.listening() {
        return;
    }
    for finding in made {
        events.publish(
            state.now(),
            EventKind::VerdictFinding {
                rule: finding.rule,
                severity: finding.severity,
                message: finding.message,
                document_rule: finding.document_rule,
                advice: finding.advice,
                request_ids: finding.request_ids,
                endpoint: finding.endpoint,
                message_ids: finding.message_ids,
                count: finding.count,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::Digester;

    fn digest(chunks: &[&[u8]]) -> u64 {
        let mut digester = Digester::new();
        for chunk in chunks {
            digester.write(chunk);
        }
        digester.finish()
    }

    #[test]
    fn a_body_digests_alike_however_it_is_cut() {
        let body: &[u8] = br#"{"modelSlug":"flux-schnell","prompt":"a lighthouse at dusk"}"#;
        let whole = digest(&[body]);
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(digest(&[a, b]), whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(digest(&bytes), whole);
        let threes: Vec<&[u8]> = body.chunks(3).collect();
        assert_eq!(digest(&threes), whole);
    }

    #[test]
    fn bodies_that_differ_digest_apart() {
        let body = br#"{"prompt":"a lighthouse at dusk"}"#;
        let seen: std::collections::HashSet<u64> = (0..body.len())
            .map(|i| {
                let mut changed = body.to_vec();
                changed[i] ^= 1;
                digest(&[&changed])
            })
            .chain([
                digest(&[body]),
                digest(&[&body[..body.len() - 1]]),
                digest(&[b""]),
                digest(&[b"\0"]),
            ])
            .collect();
        assert_eq!(seen.len(), body.len() + 4);
    }
}
