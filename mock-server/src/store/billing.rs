//! Billing: the balance history as the public API shows it, requisites,
//! invoices (issued, paid), and top-ups within their caps.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use crate::domain::UserId;
use crate::domain::billing::{self, BillingRefusal, Invoice, InvoiceStatus, Topup};
use crate::domain::ledger::{Charge, Entry, EntryKind};
use crate::domain::money::Kopecks;
use crate::domain::rate_limit::{Decision, TOPUP};
use crate::domain::requisites::Requisites;

/// An entry of the balance history as the public API shows it.
#[derive(Debug, Clone)]
pub struct HistoryRow {
    /// The ledger's entry.
    pub entry: Entry,
    /// `RESERVED`, `CHARGED`, `REFUNDED` or `COMPLETED`.
    pub status: &'static str,
    /// What it finally amounts to: 0 once refunded.
    pub net: Kopecks,
    /// Human-readable text.
    pub description: String,
    /// When the charge was refunded.
    pub refunded_at: Option<DateTime<Utc>>,
}

impl Store {
    /// The balance history of a user, newest first. A refund is never an entry of
    /// its own (`GENERATION_REFUND` is internal): the charge it returned shows as
    /// `REFUNDED` with `refunded_at`, and its net amount is 0.
    pub fn history(&self, user_id: UserId) -> Vec<HistoryRow> {
        let entries: Vec<&Entry> = self.ledger.entries(user_id).collect();
        let refunded_at: HashMap<Uuid, DateTime<Utc>> = entries
            .iter()
            .filter(|e| e.kind == EntryKind::GenerationRefund)
            .filter_map(|e| e.generation_id.map(|g| (g, e.at)))
            .collect();
        entries
            .iter()
            .rev()
            .filter(|e| e.kind != EntryKind::GenerationRefund)
            .map(|e| {
                let charge = e.generation_id.and_then(|g| self.ledger.charge(g));
                let (status, net) = match (e.kind, charge) {
                    (EntryKind::GenerationCharge, Some(Charge::Reserved(_))) => {
                        ("RESERVED", e.amount)
                    }
                    (EntryKind::GenerationCharge, Some(Charge::Refunded(_))) => {
                        ("REFUNDED", Kopecks::ZERO)
                    }
                    (EntryKind::GenerationCharge, _) => ("CHARGED", e.amount),
                    _ => ("COMPLETED", e.amount),
                };
                let description = match e.kind {
                    EntryKind::Topup => "Balance top-up".to_owned(),
                    EntryKind::Adjustment => "Balance adjustment".to_owned(),
                    _ => e
                        .generation_id
                        .and_then(|g| self.generations.get(&g))
                        .map_or_else(
                            || "Generation".to_owned(),
                            |g| format!("Generation with {}", g.model_slug),
                        ),
                };
                HistoryRow {
                    entry: (*e).clone(),
                    status,
                    net,
                    description,
                    refunded_at: e.generation_id.and_then(|g| refunded_at.get(&g).copied()),
                }
            })
            .collect()
    }

    /// A user's requisites, with when they were set.
    pub fn requisites(&self, user_id: UserId) -> Option<&(Requisites, DateTime<Utc>)> {
        self.requisites.get(&user_id)
    }

    /// Sets a user's requisites (already validated).
    pub fn set_requisites(&mut self, user_id: UserId, requisites: Requisites, now: DateTime<Utc>) {
        self.requisites.insert(user_id, (requisites, now));
    }

    /// Issues an invoice for `amount` to a user whose requisites are set.
    pub fn create_invoice(
        &mut self,
        user_id: UserId,
        amount: Kopecks,
        now: DateTime<Utc>,
    ) -> Result<Invoice, BillingRefusal> {
        if !self.requisites.contains_key(&user_id) {
            return Err(BillingRefusal::NoRequisites);
        }
        let seq = self.invoices.len() as u64 + 1;
        let invoice = Invoice::for_topup(user_id, amount, seq, now);
        self.invoices.push(invoice.clone());
        Ok(invoice)
    }

    /// A user's invoices, newest first.
    pub fn invoices_of(&self, user_id: UserId) -> Vec<&Invoice> {
        self.invoices
            .iter()
            .rev()
            .filter(|i| i.user_id == user_id)
            .collect()
    }

    /// The caller's invoice and the requisites it is made out to.
    pub fn own_invoice(&self, user_id: UserId, id: Uuid) -> Option<(Invoice, Requisites)> {
        let invoice = self
            .invoices
            .iter()
            .find(|i| i.id == id && i.user_id == user_id)?;
        let (buyer, _) = self.requisites.get(&user_id)?;
        Some((invoice.clone(), buyer.clone()))
    }

    /// Marks an invoice paid, as the bank transfer arriving would: the balance is
    /// credited and the closing act becomes available. `None` when there is no
    /// such invoice, `Err` with it when it is not awaiting payment.
    pub fn pay_invoice(
        &mut self,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Option<Result<Invoice, Invoice>> {
        let invoice = self.invoices.iter_mut().find(|i| i.id == id)?;
        if invoice.status != InvoiceStatus::Issued {
            return Some(Err(invoice.clone()));
        }
        invoice.status = InvoiceStatus::Paid;
        invoice.paid_at = Some(now);
        let paid = invoice.clone();
        // The invoice's user has an account: it was authenticated to create it.
        self.ledger.top_up(paid.user_id, paid.amount, now).ok();
        Some(Ok(paid))
    }

    /// Counts a top-up request against its per-user window (5 per 600 s); the
    /// window's state, for the route's refusal and headers.
    pub fn count_topup(&mut self, user_id: UserId, now: DateTime<Utc>) -> Decision {
        self.rate.hit(TOPUP, &user_id.to_string(), now)
    }

    /// A top-up by card: within the daily cap, the balance is credited at once
    /// (the mock has no payment page).
    pub fn top_up(
        &mut self,
        user_id: UserId,
        amount: Kopecks,
        now: DateTime<Utc>,
    ) -> Result<Topup, BillingRefusal> {
        if !billing::within_daily_cap(&self.topups, user_id, amount, now) {
            return Err(BillingRefusal::DailyCapExceeded);
        }
        let record = Topup {
            id: Uuid::new_v4(),
            user_id,
            amount,
            at: now,
        };
        // The user was authenticated, so its account exists.
        self.ledger.top_up(user_id, amount, now).ok();
        self.topups.push(record.clone());
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::billing::DAILY_TOPUP_CAP;
    use crate::store::tests::{at, with_user};

    #[test]
    fn a_top_up_credits_the_balance_and_shows_as_a_completed_entry() {
        let (mut store, user) = with_user(0.0);
        let topup = store.top_up(user.user_id, Kopecks(50_000), at(1));

        assert_eq!(topup.unwrap().amount, Kopecks(50_000));
        assert_eq!(
            store.account(user.user_id).unwrap().available,
            Kopecks(50_000)
        );
        let history = store.history(user.user_id);
        assert_eq!(
            (history[0].status, history[0].net),
            ("COMPLETED", Kopecks(50_000))
        );
        store.check_invariants().unwrap();
    }

    #[test]
    fn the_sixth_top_up_in_ten_minutes_is_over_the_window_which_reopens_after() {
        let (mut store, user) = with_user(0.0);
        for n in 0..TOPUP.max {
            assert!(store.count_topup(user.user_id, at(i64::from(n))).allowed);
        }
        let refused = store.count_topup(user.user_id, at(10));

        assert!(!refused.allowed);
        assert_eq!(
            BillingRefusal::TooManyTopups(refused).to_string(),
            format!(
                "At most 5 top-ups per 600 seconds; retry after {} s",
                refused.reset_secs
            )
        );
        assert!(store.count_topup(user.user_id, at(600)).allowed);
    }

    #[test]
    fn the_daily_cap_counts_the_days_top_ups() {
        let (mut store, user) = with_user(0.0);
        store.top_up(user.user_id, DAILY_TOPUP_CAP, at(0)).unwrap();
        assert_eq!(
            store.top_up(user.user_id, Kopecks(100), at(1)).unwrap_err(),
            BillingRefusal::DailyCapExceeded
        );
        // The next UTC day starts afresh.
        assert!(store.top_up(user.user_id, Kopecks(100), at(86_400)).is_ok());
    }

    #[test]
    fn an_invoice_needs_requisites_and_paying_it_credits_the_balance_once() {
        let (mut store, user) = with_user(0.0);
        assert_eq!(
            store
                .create_invoice(user.user_id, Kopecks(1_000_000), at(0))
                .unwrap_err(),
            BillingRefusal::NoRequisites
        );
        store.set_requisites(user.user_id, crate::render::pdf::seller(), at(0));
        let invoice = store
            .create_invoice(user.user_id, Kopecks(1_000_000), at(1))
            .unwrap();

        assert!(store.own_invoice(UserId::new_v4(), invoice.id).is_none());
        assert!(store.pay_invoice(invoice.id, at(2)).unwrap().is_ok());
        assert!(
            store.pay_invoice(invoice.id, at(3)).unwrap().is_err(),
            "not twice"
        );
        assert!(store.pay_invoice(Uuid::new_v4(), at(3)).is_none());
        assert_eq!(
            store.account(user.user_id).unwrap().available,
            Kopecks(1_000_000)
        );
        assert_eq!(
            store.invoices_of(user.user_id)[0].status,
            InvoiceStatus::Paid
        );
    }
}
