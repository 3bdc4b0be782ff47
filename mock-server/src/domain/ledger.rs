//! The balance ledger: reserve at creation, keep on success, return on failure.
//!
//! Service document: "The cost of a task is reserved on the balance at creation
//! and is returned if the task finally fails"; "One task gives one charge and at
//! most one refund". Every movement is an entry; GENERATION_REFUND entries are
//! internal and the public history hides them.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::money::Kopecks;
use super::{FastMap, UserId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EntryKind {
    Topup,
    Adjustment,
    GenerationCharge,
    GenerationRefund,
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Entry {
    pub id: Uuid,
    pub user_id: UserId,
    pub kind: EntryKind,
    /// Signed: credits are positive, debits negative.
    pub amount: Kopecks,
    pub generation_id: Option<Uuid>,
    pub at: DateTime<Utc>,
    /// The account right after the row, so that the dashboard opened later
    /// shows each row with the balance it left. A snapshot taken before these
    /// were kept reads them as zero.
    #[serde(default)]
    pub available_after: Kopecks,
    #[serde(default)]
    pub reserved_after: Kopecks,
}

/// Where the money of one task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum Charge {
    Reserved(Kopecks),
    Kept(Kopecks),
    Refunded(Kopecks),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct Account {
    pub available: Kopecks,
    pub reserved: Kopecks,
    /// Top-ups and adjustments: every credit that did not come from a refund.
    pub credited: Kopecks,
    /// Charges of tasks that finished without a refund.
    pub kept: Kopecks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("balance {available} RUB is below the cost {required} RUB")]
pub struct Insufficient {
    pub required: Kopecks,
    pub available: Kopecks,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error("no account for user {0}")]
    NoAccount(UserId),
    #[error("generation {0} has no reservation")]
    NoCharge(Uuid),
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Ledger {
    accounts: FastMap<UserId, Account>,
    charges: FastMap<Uuid, (UserId, Charge)>,
    /// Oldest first; the oldest are forgotten beyond the retention bounds.
    entries: VecDeque<Entry>,
    /// Rows written since the store's lock was taken, for the live journal.
    #[serde(skip)]
    fresh: Vec<Entry>,
}

impl Ledger {
    pub fn open(&mut self, user_id: UserId) {
        self.accounts.entry(user_id).or_default();
    }

    pub fn account(&self, user_id: UserId) -> Option<Account> {
        self.accounts.get(&user_id).copied()
    }

    pub fn charge(&self, generation_id: Uuid) -> Option<Charge> {
        self.charges.get(&generation_id).map(|(_, c)| *c)
    }

    pub fn entries(&self, user_id: UserId) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(move |e| e.user_id == user_id)
    }

    /// Every user's rows, oldest first.
    pub fn all_entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    /// Forgets the oldest history entries while `past(entries kept, oldest's
    /// time)` says so. Balances live in the accounts, so they do not change.
    pub fn forget_entries(&mut self, past: impl Fn(usize, DateTime<Utc>) -> bool) {
        super::forget_oldest(&mut self.entries, |entry| entry.at, past, drop);
    }

    /// Forgets the settled charge of a task that is itself forgotten; an open
    /// reservation is never forgotten.
    pub fn forget_charge(&mut self, generation_id: Uuid) {
        if let Some((_, charge)) = self.charges.get(&generation_id)
            && !matches!(charge, Charge::Reserved(_))
        {
            self.charges.remove(&generation_id);
        }
    }

    fn record(
        &mut self,
        user_id: UserId,
        kind: EntryKind,
        amount: Kopecks,
        generation_id: Option<Uuid>,
        at: DateTime<Utc>,
    ) {
        // Every caller changed the account first.
        let after = self.account(user_id).unwrap_or_default();
        let entry = Entry {
            id: Uuid::new_v4(),
            user_id,
            kind,
            amount,
            generation_id,
            at,
            available_after: after.available,
            reserved_after: after.reserved,
        };
        self.fresh.push(entry.clone());
        self.entries.push_back(entry);
    }

    /// The rows written since the last call, oldest first; their room is
    /// kept for the next ones.
    pub fn drain_fresh(&mut self) -> std::vec::Drain<'_, Entry> {
        self.fresh.drain(..)
    }

    fn account_mut(&mut self, user_id: UserId) -> Result<&mut Account, LedgerError> {
        self.accounts
            .get_mut(&user_id)
            .ok_or(LedgerError::NoAccount(user_id))
    }

    /// Adds money to the balance.
    pub fn top_up(
        &mut self,
        user_id: UserId,
        amount: Kopecks,
        at: DateTime<Utc>,
    ) -> Result<(), LedgerError> {
        let account = self.account_mut(user_id)?;
        account.available += amount;
        account.credited += amount;
        self.record(user_id, EntryKind::Topup, amount, None, at);
        Ok(())
    }

    /// Sets the available balance to `target` with an adjustment entry (control API).
    pub fn set_available(
        &mut self,
        user_id: UserId,
        target: Kopecks,
        at: DateTime<Utc>,
    ) -> Result<(), LedgerError> {
        let account = self.account_mut(user_id)?;
        let delta = target - account.available;
        account.available = target;
        account.credited += delta;
        self.record(user_id, EntryKind::Adjustment, delta, None, at);
        Ok(())
    }

    /// Reserves the cost of a new task (rule 2 of create), or says what is missing (rule 6).
    pub fn reserve(
        &mut self,
        user_id: UserId,
        generation_id: Uuid,
        cost: Kopecks,
        at: DateTime<Utc>,
    ) -> Result<(), ReserveError> {
        let account = self.account_mut(user_id)?;
        if account.available < cost {
            return Err(ReserveError::Insufficient(Insufficient {
                required: cost,
                available: account.available,
            }));
        }
        account.available -= cost;
        account.reserved += cost;
        self.charges
            .insert(generation_id, (user_id, Charge::Reserved(cost)));
        self.record(
            user_id,
            EntryKind::GenerationCharge,
            Kopecks(-cost.0),
            Some(generation_id),
            at,
        );
        Ok(())
    }

    /// Keeps the reserved cost of a task that succeeded. Idempotent.
    pub fn keep(&mut self, generation_id: Uuid) -> Result<(), LedgerError> {
        let (user_id, charge) = *self
            .charges
            .get(&generation_id)
            .ok_or(LedgerError::NoCharge(generation_id))?;
        if let Charge::Reserved(cost) = charge {
            let account = self.account_mut(user_id)?;
            account.reserved -= cost;
            account.kept += cost;
            self.charges
                .insert(generation_id, (user_id, Charge::Kept(cost)));
        }
        Ok(())
    }

    /// Returns the reserved cost of a task that failed or was cancelled.
    ///
    /// At most one refund per task: a second call, or a call after the charge was
    /// kept, changes nothing and answers `false`.
    pub fn refund(&mut self, generation_id: Uuid, at: DateTime<Utc>) -> Result<bool, LedgerError> {
        let (user_id, charge) = *self
            .charges
            .get(&generation_id)
            .ok_or(LedgerError::NoCharge(generation_id))?;
        let Charge::Reserved(cost) = charge else {
            return Ok(false);
        };
        let account = self.account_mut(user_id)?;
        account.reserved -= cost;
        account.available += cost;
        self.charges
            .insert(generation_id, (user_id, Charge::Refunded(cost)));
        self.record(
            user_id,
            EntryKind::GenerationRefund,
            cost,
            Some(generation_id),
            at,
        );
        Ok(true)
    }

    /// Checks the ledger's invariants for every account:
    /// `available + reserved = credits − kept charges`, the reserve equals the
    /// sum of open reservations, and no task has more than one charge or refund entry.
    pub fn check(&self) -> Result<(), String> {
        // Open reservations per user, summed in one pass over the charges.
        let mut open_by_user: HashMap<UserId, Kopecks> = HashMap::new();
        for (user_id, charge) in self.charges.values() {
            if let Charge::Reserved(cost) = charge {
                *open_by_user.entry(*user_id).or_insert(Kopecks::ZERO) += *cost;
            }
        }
        for (user_id, account) in &self.accounts {
            if account.available + account.reserved != account.credited - account.kept {
                return Err(format!(
                    "user {user_id}: available {} + reserved {} is not credited {} - kept {} RUB",
                    account.available, account.reserved, account.credited, account.kept
                ));
            }
            let open = open_by_user.get(user_id).copied().unwrap_or(Kopecks::ZERO);
            if open != account.reserved {
                return Err(format!(
                    "user {user_id}: reserved {} RUB but open reservations sum to {open} RUB",
                    account.reserved
                ));
            }
        }
        let mut per_task: HashMap<(Uuid, bool), usize> = HashMap::new();
        for entry in &self.entries {
            if let Some(id) = entry.generation_id {
                *per_task
                    .entry((id, entry.kind == EntryKind::GenerationRefund))
                    .or_default() += 1;
            }
        }
        match per_task.iter().find(|(_, n)| **n > 1) {
            Some(((id, refund), n)) => Err(format!(
                "generation {id} has {n} {} entries",
                if *refund { "refund" } else { "charge" }
            )),
            None => Ok(()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReserveError {
    #[error(transparent)]
    Insufficient(Insufficient),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger_with(balance: i64) -> (Ledger, UserId) {
        let mut ledger = Ledger::default();
        let user = UserId::new_v4();
        ledger.open(user);
        ledger
            .top_up(user, Kopecks(balance), Utc::now())
            .expect("account");
        (ledger, user)
    }

    #[test]
    fn reserve_moves_cost_from_available_to_reserved() {
        let (mut ledger, user) = ledger_with(1000);
        ledger
            .reserve(user, Uuid::new_v4(), Kopecks(300), Utc::now())
            .expect("enough");
        let account = ledger.account(user).expect("account");
        assert_eq!(
            (account.available, account.reserved),
            (Kopecks(700), Kopecks(300))
        );
        ledger.check().expect("invariant");
    }

    #[test]
    fn reserve_above_balance_reports_required_and_available() {
        let (mut ledger, user) = ledger_with(100);
        let err = ledger.reserve(user, Uuid::new_v4(), Kopecks(250), Utc::now());
        assert_eq!(
            err,
            Err(ReserveError::Insufficient(Insufficient {
                required: Kopecks(250),
                available: Kopecks(100)
            }))
        );
    }

    #[test]
    fn a_task_is_refunded_at_most_once_and_never_after_it_was_kept() {
        let (mut ledger, user) = ledger_with(1000);
        let (failed, kept) = (Uuid::new_v4(), Uuid::new_v4());
        ledger
            .reserve(user, failed, Kopecks(100), Utc::now())
            .expect("enough");
        ledger
            .reserve(user, kept, Kopecks(200), Utc::now())
            .expect("enough");
        assert_eq!(ledger.refund(failed, Utc::now()), Ok(true));
        assert_eq!(ledger.refund(failed, Utc::now()), Ok(false));
        ledger.keep(kept).expect("charge");
        assert_eq!(ledger.refund(kept, Utc::now()), Ok(false));
        let account = ledger.account(user).expect("account");
        assert_eq!(
            (account.available, account.reserved, account.kept),
            (Kopecks(800), Kopecks(0), Kopecks(200))
        );
        ledger.check().expect("invariant");
    }

    #[test]
    fn setting_the_balance_keeps_the_invariant() {
        let (mut ledger, user) = ledger_with(1000);
        ledger
            .reserve(user, Uuid::new_v4(), Kopecks(100), Utc::now())
            .expect("enough");
        ledger
            .set_available(user, Kopecks(5), Utc::now())
            .expect("account");
        assert_eq!(ledger.account(user).map(|a| a.available), Some(Kopecks(5)));
        ledger.check().expect("invariant");
    }
}
