//! What the store's operations write into the live journal (`events/`): the
//! changes they made, as events, in the order they made them.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use crate::domain::billing::{Invoice, Topup};
use crate::domain::ledger::Charge;
use crate::domain::webhook::{Attempt, Message};
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
        let fresh = self.ledger.take_fresh();
        // At every lock's end: with nobody listening, no event is built.
        if !self.journal.is_on() {
            return;
        }
        for entry in fresh {
            let account = self.ledger.account(entry.user_id).unwrap_or_default();
            self.journal.push(
                entry.at,
                EventKind::Ledger {
                    entry_id: entry.id,
                    user_id: entry.user_id,
                    kind: name(entry.kind),
                    amount_rub: entry.amount.rub(),
                    generation_id: entry.generation_id,
                    balance_rub: account.available.rub(),
                    reserved_rub: account.reserved.rub(),
                },
            );
        }
    }

    fn note(&mut self, at: DateTime<Utc>, kind: EventKind) {
        self.note_ledger_rows();
        self.journal.push(at, kind);
    }

    /// A generation as it stands after `change`.
    pub(super) fn note_generation(&mut self, id: Uuid, change: &str, at: DateTime<Utc>) {
        if !self.journal.is_on() {
            return;
        }
        let Some(g) = self.generations.get(&id) else {
            return;
        };
        let refund_rub = match self.ledger.charge(id) {
            Some(Charge::Refunded(amount)) => Some(amount.rub()),
            _ => None,
        };
        let kind = EventKind::Generation {
            generation_id: id,
            user_id: g.user_id,
            change: change.to_owned(),
            status: g.status.as_str().to_owned(),
            attempts: g.attempts,
            model_slug: g.model_slug.clone(),
            cost_rub: g.cost.rub(),
            refund_rub,
            error_code: g.error_code.map(|c| c.as_str().to_owned()),
            prompt: g.prompt.clone(),
        };
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
        let kind = EventKind::Message {
            message_id: message.id,
            event_id: message.event_id.clone(),
            event_type: message.event_type.to_string(),
            endpoint_id: message.endpoint_id.clone(),
            user_id: message.user_id,
            generation_id,
            state: message.state.as_str().to_owned(),
        };
        self.note(at, kind);
    }

    /// A delivery attempt of `message`, the last one it records.
    pub(super) fn note_attempt(&mut self, message: &Message, attempt: &Attempt) {
        if !self.journal.is_on() {
            return;
        }
        let endpoint_disabled = self
            .endpoints
            .get(&message.endpoint_id)
            .and_then(|e| e.disabled_reason)
            .map(name);
        let kind = EventKind::Attempt {
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
            state: message.state.as_str().to_owned(),
            endpoint_disabled,
        };
        self.note(attempt.attempted_at, kind);
    }

    pub(super) fn note_topup(&mut self, topup: &Topup, at: DateTime<Utc>) {
        let kind = EventKind::Topup {
            topup_id: topup.id,
            user_id: topup.user_id,
            amount_rub: topup.amount.rub(),
            status: name(topup.status),
        };
        self.note(at, kind);
    }

    pub(super) fn note_invoice(&mut self, invoice: &Invoice, at: DateTime<Utc>) {
        let kind = EventKind::Invoice {
            invoice_id: invoice.id,
            user_id: invoice.user_id,
            number: invoice.number.clone(),
            amount_rub: invoice.amount.rub(),
            status: name(invoice.status),
        };
        self.note(at, kind);
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
