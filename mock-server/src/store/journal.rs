//! What the store's operations write into the live journal (`events/`): the
//! changes they made, as events, in the order they made them.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use crate::domain::billing::{Invoice, InvoiceStatus, Topup, TopupStatus};
use crate::domain::generation::{Generation, Status};
use crate::domain::ledger::{Charge, Entry};
use crate::domain::webhook::{Attempt, Message, MessageState};
use crate::events::EventKind;

/// A value's name as the contract writes it (its serde form).
fn name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Store {
    /// Starts writing the journal when someone listens (at each lock).
    pub(crate) fn listen(&mut self, on: bool) {
        self.journal.set_on(on);
    }

    /// Everything written since the lock was taken, oldest first.
    pub(crate) fn take_journal(&mut self) -> Vec<(DateTime<Utc>, EventKind)> {
        self.note_ledger_rows();
        self.journal.take()
    }

    /// Ledger rows written so far come before the change about to be noted.
    fn note_ledger_rows(&mut self) {
        let fresh = self.ledger.drain_fresh();
        // At every lock's end: with nobody listening, no event is built.
        if !self.journal.is_on() {
            return;
        }
        for entry in fresh {
            self.journal.push(entry.at, ledger_event(&entry));
        }
    }

    fn note(&mut self, at: DateTime<Utc>, kind: EventKind) {
        self.note_ledger_rows();
        self.journal.push(at, kind);
    }

    /// What the ledger returned for a task, once it did.
    pub(super) fn refund_rub(&self, generation_id: Uuid) -> Option<f64> {
        match self.ledger.charge(generation_id) {
            Some(Charge::Refunded(amount)) => Some(amount.rub()),
            _ => None,
        }
    }

    /// A generation as it stands after `change`.
    pub(super) fn note_generation(&mut self, id: Uuid, change: &str, at: DateTime<Utc>) {
        if !self.journal.is_on() {
            return;
        }
        let Some(g) = self.generations.get(&id) else {
            return;
        };
        let kind = generation_event(g, change, g.status, g.attempts, self.refund_rub(id));
        self.note(at, kind);
    }

    /// A message as it stands: queued, or dropped without an attempt.
    pub(super) fn note_message(
        &mut self,
        message: &Message,
        generation_id: Option<Uuid>,
        at: DateTime<Utc>,
    ) {
        if !self.journal.is_on() {
            return;
        }
        let kind = message_event(message, generation_id, message.state);
        self.note(at, kind);
    }

    /// Why the endpoint of a message is disabled, when it is.
    pub(super) fn endpoint_disabled(&self, endpoint_id: &str) -> Option<String> {
        self.endpoints
            .get(endpoint_id)
            .and_then(|e| e.disabled_reason)
            .map(name)
    }

    /// A delivery attempt of `message`, the last one it records.
    pub(super) fn note_attempt(&mut self, message: &Message, attempt: &Attempt) {
        if !self.journal.is_on() {
            return;
        }
        let disabled = self.endpoint_disabled(&message.endpoint_id);
        let kind = attempt_event(message, attempt, message.state, disabled);
        self.note(attempt.attempted_at, kind);
    }

    pub(super) fn note_topup(&mut self, topup: &Topup, at: DateTime<Utc>) {
        self.note(at, topup_event(topup, topup.status));
    }

    pub(super) fn note_invoice(&mut self, invoice: &Invoice, at: DateTime<Utc>) {
        self.note(at, invoice_event(invoice, invoice.status));
    }
}

// The events of each kind, built the same way for the live journal and for
// its history (`history.rs`), which tells a record's earlier states.

pub(super) fn ledger_event(entry: &Entry) -> EventKind {
    EventKind::Ledger {
        entry_id: entry.id,
        user_id: entry.user_id,
        kind: name(entry.kind),
        amount_rub: entry.amount.rub(),
        generation_id: entry.generation_id,
        balance_rub: entry.available_after.rub(),
        reserved_rub: entry.reserved_after.rub(),
    }
}

/// A generation at one step of its life: the failure code only once it ended.
pub(super) fn generation_event(
    g: &Generation,
    change: &str,
    status: Status,
    attempts: u8,
    refund_rub: Option<f64>,
) -> EventKind {
    EventKind::Generation {
        generation_id: g.id,
        user_id: g.user_id,
        change: change.to_owned(),
        status: status.as_str().to_owned(),
        attempts,
        model_slug: g.model_slug.clone(),
        cost_rub: g.cost.rub(),
        refund_rub,
        error_code: g
            .error_code
            .filter(|_| !status.is_active())
            .map(|c| c.as_str().to_owned()),
        prompt: g.prompt.clone(),
    }
}

pub(super) fn message_event(
    message: &Message,
    generation_id: Option<Uuid>,
    state: MessageState,
) -> EventKind {
    EventKind::Message {
        message_id: message.id,
        event_id: message.event_id.clone(),
        event_type: message.event_type.to_string(),
        endpoint_id: message.endpoint_id.clone(),
        user_id: message.user_id,
        generation_id,
        state: state.as_str().to_owned(),
    }
}

pub(super) fn attempt_event(
    message: &Message,
    attempt: &Attempt,
    state: MessageState,
    endpoint_disabled: Option<String>,
) -> EventKind {
    EventKind::Attempt {
        message_id: message.id,
        endpoint_id: message.endpoint_id.clone(),
        user_id: message.user_id,
        attempt: attempt.attempt,
        trigger: attempt.trigger.as_str().to_owned(),
        response_status: attempt.response_status,
        error: attempt.error.clone(),
        duration_ms: attempt.duration_ms,
        response_excerpt: attempt.response_excerpt.clone(),
        next_attempt_at: attempt.next_attempt_at,
        state: state.as_str().to_owned(),
        endpoint_disabled,
    }
}

pub(super) fn topup_event(topup: &Topup, status: TopupStatus) -> EventKind {
    EventKind::Topup {
        topup_id: topup.id,
        user_id: topup.user_id,
        amount_rub: topup.amount.rub(),
        status: name(status),
    }
}

pub(super) fn invoice_event(invoice: &Invoice, status: InvoiceStatus) -> EventKind {
    EventKind::Invoice {
        invoice_id: invoice.id,
        user_id: invoice.user_id,
        number: invoice.number.clone(),
        amount_rub: invoice.amount.rub(),
        status: name(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::generations::tests::request;
    use crate::store::tests::{at, run_due, with_user};

    fn kinds(journal: &[(DateTime<Utc>, EventKind)]) -> Vec<String> {
        journal
            .iter()
            .map(|(_, kind)| match kind {
                EventKind::Generation { change, .. } => format!("generation {change}"),
                EventKind::Ledger { kind, .. } => format!("ledger {kind}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_create_writes_its_charge_before_the_task_and_a_run_the_tasks_life() {
        let (mut store, user) = with_user(10.0);
        store.take_journal();
        store.listen(true);

        let accepted = store
            .create_generation(user.user_id, request("a lighthouse", 2.5), at(0), 1.0)
            .unwrap();
        let created = store.take_journal();
        run_due(&mut store, at(60));
        let ran = store.take_journal();

        assert_eq!(
            kinds(&created),
            ["ledger GENERATION_CHARGE", "generation created"]
        );
        assert_eq!(kinds(&ran), ["generation started", "generation ended"]);
        let Some((
            _,
            EventKind::Ledger {
                balance_rub,
                reserved_rub,
                ..
            },
        )) = created.first()
        else {
            unreachable!("a charge first");
        };
        assert_eq!((*balance_rub, *reserved_rub), (7.5, 2.5));
        assert!(matches!(
            &ran[1].1,
            EventKind::Generation { generation_id, status, .. }
                if *generation_id == accepted.id && status == "SUCCEEDED"
        ));
    }

    #[test]
    fn nothing_is_written_while_nobody_listens() {
        let (mut store, user) = with_user(10.0);
        store.listen(false);

        store
            .create_generation(user.user_id, request("a lighthouse", 2.5), at(0), 1.0)
            .unwrap();
        run_due(&mut store, at(60));

        assert!(store.take_journal().is_empty());
    }
}
