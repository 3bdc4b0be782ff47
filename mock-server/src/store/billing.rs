//! Billing: the balance history as the public API shows it, requisites,
//! invoices (issued, paid), and top-ups within their caps.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Store;
use super::jobs::JobKind;
use crate::clock::seconds;
use crate::domain::UserId;
use crate::domain::billing::{
    self, BillingRefusal, HistoryRow, Invoice, InvoiceStatus, Topup, TopupStatus,
};
use crate::domain::ledger::{Charge, Entry, EntryKind};
use crate::domain::money::Kopecks;
use mediagen_openapi::operations::LimitScope;

use crate::domain::rate_limit::Decision;
use crate::domain::requisites::Requisites;

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
        self.note_invoice(&invoice, now);
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
        self.note_invoice(&paid, now);
        Some(Ok(paid))
    }

    /// Counts a top-up request against its per-user window (5 per 600 s); the
    /// window's state, for the route's refusal and headers.
    pub fn count_topup(&mut self, user_id: UserId, now: DateTime<Utc>) -> Decision {
        self.rate.hit(LimitScope::Topup, &user_id.to_string(), now)
    }

    /// A top-up by card: within the daily cap, a `PENDING` top-up waiting for the
    /// user to pay on its payment page (`settle_topup`), or paid by itself after
    /// the auto-pay time when one is set.
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
            status: TopupStatus::Pending,
            at: now,
            finished_at: None,
        };
        if let Some(secs) = self.auto_pay_secs {
            self.jobs
                .schedule(now + seconds(secs), record.id, JobKind::PayTopup);
        }
        self.topups.push(record.clone());
        self.note_topup(&record, now);
        Ok(record)
    }

    /// A top-up by its id.
    pub fn topup(&self, id: Uuid) -> Option<&Topup> {
        self.topups.iter().find(|t| t.id == id)
    }

    /// The payment of a `PENDING` top-up went through (`paid`: the balance is
    /// credited, it is `SUCCEEDED`) or failed (`FAILED`, nothing credited).
    /// `None` when there is no such top-up, `Err` with it when it is already final.
    pub fn settle_topup(
        &mut self,
        id: Uuid,
        paid: bool,
        now: DateTime<Utc>,
    ) -> Option<Result<Topup, Topup>> {
        let topup = self.topups.iter_mut().find(|t| t.id == id)?;
        if topup.status != TopupStatus::Pending {
            return Some(Err(topup.clone()));
        }
        topup.status = if paid {
            TopupStatus::Succeeded
        } else {
            TopupStatus::Failed
        };
        topup.finished_at = Some(now);
        let settled = topup.clone();
        if paid {
            // The top-up's user was authenticated to create it, so it has an account.
            self.ledger
                .top_up(settled.user_id, settled.amount, now)
                .ok();
        }
        self.note_topup(&settled, now);
        Some(Ok(settled))
    }

    /// Seconds after which a new top-up pays itself, if set.
    pub fn auto_pay_secs(&self) -> Option<f64> {
        self.auto_pay_secs
    }

    /// Sets (or with `None` clears) the time after which new top-ups pay themselves.
    pub fn set_auto_pay_secs(&mut self, secs: Option<f64>) {
        self.auto_pay_secs = secs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::billing::DAILY_TOPUP_CAP;
    use crate::store::tests::{at, run_due, with_user};

    #[test]
    fn a_top_up_waits_for_payment_then_credits_the_balance_once() {
        let (mut store, user) = with_user(0.0);
        let entries = store.history(user.user_id).len();
        let topup = store.top_up(user.user_id, Kopecks(50_000), at(1)).unwrap();
        assert_eq!(
            (topup.amount, topup.status),
            (Kopecks(50_000), TopupStatus::Pending)
        );
        assert_eq!(store.account(user.user_id).unwrap().available, Kopecks(0));
        assert_eq!(
            store.history(user.user_id).len(),
            entries,
            "nothing paid yet"
        );

        let paid = store.settle_topup(topup.id, true, at(2)).unwrap().unwrap();
        assert_eq!(paid.status, TopupStatus::Succeeded);
        assert!(
            store.settle_topup(topup.id, true, at(3)).unwrap().is_err(),
            "not twice"
        );
        assert!(
            store.settle_topup(topup.id, false, at(3)).unwrap().is_err(),
            "a paid top-up does not fail later"
        );
        assert!(store.settle_topup(Uuid::new_v4(), true, at(3)).is_none());
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
        for n in 0..LimitScope::Topup.default_limit() {
            assert!(store.count_topup(user.user_id, at(i64::from(n))).allowed);
        }
        let refused = store.count_topup(user.user_id, at(10));

        assert!(!refused.allowed);
        assert_eq!(refused.retry_after(1.0), 590);
        assert_eq!(
            BillingRefusal::TooManyTopups { retry_after: 590 }.to_string(),
            "At most 5 top-ups per 600 seconds; retry after 590 s"
        );
        assert!(store.count_topup(user.user_id, at(600)).allowed);
    }

    #[test]
    fn the_daily_cap_counts_the_days_top_ups_paid_or_waiting_but_not_failed() {
        let (mut store, user) = with_user(0.0);
        let waiting = store.top_up(user.user_id, DAILY_TOPUP_CAP, at(0)).unwrap();
        assert_eq!(
            store.top_up(user.user_id, Kopecks(100), at(1)).unwrap_err(),
            BillingRefusal::DailyCapExceeded
        );
        store
            .settle_topup(waiting.id, false, at(2))
            .unwrap()
            .unwrap();
        let paid = store.top_up(user.user_id, DAILY_TOPUP_CAP, at(3)).unwrap();
        store.settle_topup(paid.id, true, at(4)).unwrap().unwrap();
        assert_eq!(
            store.top_up(user.user_id, Kopecks(100), at(5)).unwrap_err(),
            BillingRefusal::DailyCapExceeded
        );
        // The next UTC day starts afresh.
        assert!(store.top_up(user.user_id, Kopecks(100), at(86_400)).is_ok());
    }

    #[test]
    fn with_auto_pay_a_top_up_pays_itself_when_its_time_comes() {
        let (mut store, user) = with_user(0.0);
        store.set_auto_pay_secs(Some(30.0));
        let topup = store.top_up(user.user_id, Kopecks(10_000), at(0)).unwrap();
        run_due(&mut store, at(29));
        assert_eq!(store.topup(topup.id).unwrap().status, TopupStatus::Pending);
        run_due(&mut store, at(30));
        assert_eq!(
            store.topup(topup.id).unwrap().status,
            TopupStatus::Succeeded
        );
        assert_eq!(
            store.account(user.user_id).unwrap().available,
            Kopecks(10_000)
        );
        store.check_invariants().unwrap();
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
