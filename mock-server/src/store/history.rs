//! The live journal's history: what a world holds, told as the events that
//! made it, for a reader that comes after them (the dashboard opened after a
//! test run). Built from the records themselves, so it keeps what they keep,
//! within the retention bounds, and costs nothing while nobody asks.
//!
//! A record keeps its times, not every state it passed through: a
//! generation's steps come from its creation, start, attempt and end times; a
//! message's attempts but its last left it `pending`; top-ups and invoices
//! are told at creation and again once settled.

use chrono::{DateTime, Utc};

use super::Store;
use super::journal::{
    attempt_event, generation_event, invoice_event, ledger_event, message_event, topup_event,
};
use crate::clock::seconds;
use crate::domain::billing::{InvoiceStatus, TopupStatus};
use crate::domain::generation::{Generation, Status};
use crate::domain::webhook::MessageState;
use crate::events::EventKind;

type Told = (DateTime<Utc>, EventKind);

impl Store {
    /// Every event the world's records tell, oldest first; events of the
    /// same moment in the order the live journal tells them (a charge
    /// before its task, a task's end before its messages).
    pub(crate) fn journal_history(&self) -> Vec<Told> {
        let mut events: Vec<Told> = self
            .ledger
            .all_entries()
            .map(|entry| (entry.at, ledger_event(entry)))
            .collect();
        for user in self.users.values() {
            for g in user
                .generations
                .iter()
                .filter_map(|id| self.generations.get(id))
            {
                self.generation_history(g, &mut events);
            }
        }
        for message in self
            .message_order
            .iter()
            .filter_map(|id| self.messages.get(id))
        {
            // The task a message tells of is in its body; a test delivery's
            // sample names none that exists.
            let generation_id = serde_json::from_slice::<serde_json::Value>(&message.payload)
                .ok()
                .and_then(|body| body["data"]["generation"]["id"].as_str()?.parse().ok())
                .filter(|id| self.generations.contains_key(id));
            let queued = if message.attempts.is_empty() {
                message.state
            } else {
                MessageState::Pending
            };
            events.push((
                message.created_at,
                message_event(message, generation_id, queued),
            ));
            let last = message.attempts.len().saturating_sub(1);
            for (i, attempt) in message.attempts.iter().enumerate() {
                let (state, disabled) = if i == last {
                    (message.state, self.endpoint_disabled(&message.endpoint_id))
                } else {
                    (MessageState::Pending, None)
                };
                events.push((
                    attempt.attempted_at,
                    attempt_event(message, attempt, state, disabled),
                ));
            }
        }
        for topup in &self.topups {
            events.push((topup.at, topup_event(topup, TopupStatus::Pending)));
            if let Some(at) = topup.finished_at {
                events.push((at, topup_event(topup, topup.status)));
            }
        }
        for invoice in &self.invoices {
            events.push((
                invoice.issued_at,
                invoice_event(invoice, InvoiceStatus::Issued),
            ));
            if let Some(at) = invoice.paid_at {
                events.push((at, invoice_event(invoice, invoice.status)));
            }
        }
        for mail in &self.outbox {
            let kind = EventKind::Mail {
                to: mail.to.clone(),
                subject: mail.subject.clone(),
                link: mail.link.clone(),
            };
            events.push((mail.sent_at, kind));
        }
        // Stable: ties keep the order above.
        events.sort_by_key(|(at, _)| *at);
        events
    }

    /// A task's steps: created, started, each attempt that failed and was
    /// tried again (the worker ends one every `attempt_secs`), ended or
    /// cancelled.
    fn generation_history(&self, g: &Generation, events: &mut Vec<Told>) {
        events.push((
            g.created_at,
            generation_event(g, "created", Status::Pending, 0, None),
        ));
        if let Some(started) = g.started_at {
            events.push((
                started,
                generation_event(g, "started", Status::Processing, 1, None),
            ));
            for failed in 1..g.attempts {
                // As the worker chains them, to the microsecond.
                let at = started + seconds(g.attempt_secs) * i32::from(failed);
                let step =
                    generation_event(g, "attempt_failed", Status::Processing, failed + 1, None);
                events.push((at, step));
            }
        }
        if let Some(finished) = g.finished_at {
            let change = if g.status == Status::Cancelled {
                "cancelled"
            } else {
                "ended"
            };
            let refund = self.refund_rub(g.id);
            events.push((
                finished,
                generation_event(g, change, g.status, g.attempts, refund),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::money::Kopecks;
    use crate::store::generations::tests::request;
    use crate::store::tests::{at, run_due, with_user};

    #[test]
    fn the_history_of_a_cancel_a_run_and_a_paid_invoice_is_what_the_journal_told() {
        let (mut store, user) = with_user(10.0);
        store.listen(true);
        let id = user.user_id;

        let cancelled = store
            .create_generation(id, request("a lighthouse", 2.5), at(0), 1.0)
            .unwrap();
        store.cancel_generation(id, cancelled.id, at(5));
        store
            .create_generation(id, request("a harbour", 2.5), at(10), 1.0)
            .unwrap();
        run_due(&mut store, at(60));
        store.set_requisites(id, crate::render::pdf::seller(), at(70));
        let invoice = store
            .create_invoice(id, Kopecks::from_rub(1000.0), at(80))
            .unwrap();
        store.pay_invoice(invoice.id, at(90));
        let told = store.take_journal();

        assert_eq!(store.journal_history(), told);
        // The first top-up, then charge, created, refund, cancelled; charge,
        // created, started, ended; issued, top-up, paid.
        assert_eq!(told.len(), 12, "{told:#?}");
    }
}
