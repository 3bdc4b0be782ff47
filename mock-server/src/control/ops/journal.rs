//! What the world saw and holds: its request log, its outbox, its whole state
//! as a snapshot, and the reset that forgets it.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::error::ControlError;
use crate::events::{EventKind, EventStream};
use crate::snapshot::Snapshot;
use crate::state::AppState;
use crate::store::{LoggedRequest, OutboxMessage};

/// The requests the service received, oldest first.
pub(crate) fn list_requests(state: &AppState) -> Vec<LoggedRequest> {
    state.ledger().log.iter().cloned().collect()
}

/// The e-mails the service would have sent (magic links), oldest first.
pub(crate) fn list_outbox(state: &AppState) -> Vec<OutboxMessage> {
    state.store().outbox().to_vec()
}

/// Forgets everything and starts again as at start; the clock keeps its time.
pub(crate) fn reset(state: &AppState) {
    state.reset();
}

/// A reader of the world's events from now on and, when `history` is
/// wanted, what the world's records tell of the time before (oldest first).
/// Both are taken under the store's lock, which every change holds until its
/// events are published: each change is in the history or comes to the
/// reader, once.
pub(crate) fn stream_events(
    state: &AppState,
    history: bool,
) -> (Vec<(DateTime<Utc>, EventKind)>, EventStream) {
    let store = state.store();
    let history = if history {
        store.journal_history()
    } else {
        Vec::new()
    };
    (history, state.events().subscribe())
}

/// A reader that comes back after the event numbered `after` (an SSE
/// client's `Last-Event-ID`): the events kept since, then the live ones.
pub(crate) fn resume_events(state: &AppState, after: u64) -> crate::events::Resumed {
    state.events().resume(after)
}

/// The world's whole state as one JSON document.
pub(crate) fn get_snapshot(state: &AppState) -> Value {
    state.take_snapshot()
}

/// Replaces the world's state with `snapshot`'s; a broken one changes nothing.
pub(crate) fn put_snapshot(state: &AppState, snapshot: Value) -> Result<(), ControlError> {
    state.restore(Snapshot::read(snapshot)?);
    Ok(())
}
