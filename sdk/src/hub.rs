//! Where a client's waits meet the webhooks its receiver (`receiver.rs`)
//! verified: each wait subscribes to its generation's event; an event that
//! comes before anyone waits for it (a task faster than its create's answer)
//! is kept for the wait that follows.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::oneshot;
use uuid::Uuid;

use crate::events::{Delivery, WebhookEvent};

/// Events and message ids remembered: enough for every generation of a large
/// batch, bounded so that a long-running receiver does not grow.
const REMEMBERED: usize = 16_384;

/// Where the client's waits meet the webhooks it receives.
#[derive(Debug, Default)]
pub(crate) struct Hub {
    state: Mutex<HubState>,
}

#[derive(Debug, Default)]
struct HubState {
    /// Whether a receiver hands events to this client.
    listening: bool,
    /// Waits for a generation's event.
    waiting: HashMap<Uuid, Vec<oneshot::Sender<WebhookEvent>>>,
    /// Events that came before anyone waited (a task faster than its create's
    /// answer), oldest first.
    arrived: HashMap<Uuid, WebhookEvent>,
    arrival_order: VecDeque<Uuid>,
    /// `webhook-id`s handled, oldest first.
    seen: HashSet<String>,
    seen_order: VecDeque<String>,
}

impl Hub {
    fn state(&self) -> MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on, a receiver hands events to this client.
    pub(crate) fn listen(&self) {
        self.state().listening = true;
    }

    /// The event of generation `id`, when it comes; `None` when no receiver
    /// hands events to this client.
    pub(crate) fn subscribe(&self, id: Uuid) -> Option<oneshot::Receiver<WebhookEvent>> {
        let mut state = self.state();
        if !state.listening {
            return None;
        }
        let (sender, receiver) = oneshot::channel();
        match state.arrived.remove(&id) {
            Some(event) => {
                let _ = sender.send(event);
            }
            None => state.waiting.entry(id).or_default().push(sender),
        }
        Some(receiver)
    }

    /// Hands a verified delivery to the waits; false for a message already
    /// handled (a retry of the service's).
    pub(crate) fn deliver(&self, delivery: Delivery) -> bool {
        let mut state = self.state();
        if !state.seen.insert(delivery.message_id.clone()) {
            return false;
        }
        state.seen_order.push_back(delivery.message_id);
        if state.seen_order.len() > REMEMBERED
            && let Some(oldest) = state.seen_order.pop_front()
        {
            state.seen.remove(&oldest);
        }
        let Some(id) = generation_of(&delivery.event) else {
            return true;
        };
        let event = delivery.event;
        match state.waiting.remove(&id) {
            Some(waits) => {
                for wait in waits {
                    let _ = wait.send(event.clone());
                }
            }
            None => {
                if state.arrived.insert(id, event).is_none() {
                    state.arrival_order.push_back(id);
                }
                if state.arrival_order.len() > REMEMBERED
                    && let Some(oldest) = state.arrival_order.pop_front()
                {
                    state.arrived.remove(&oldest);
                }
            }
        }
        true
    }
}

/// The generation an event is about, if it is about one.
fn generation_of(event: &WebhookEvent) -> Option<Uuid> {
    match event {
        WebhookEvent::GenerationCompleted { generation, .. } => Some(generation.id),
        WebhookEvent::GenerationFailed { generation, .. } => Some(generation.id),
        _ => None,
    }
}
