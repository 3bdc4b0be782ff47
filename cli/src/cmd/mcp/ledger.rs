//! The spending cap of `mediagen mcp`: `--max-spend` for the server's lifetime and
//! `--max-cost` per call, in kopecks so that sums are exact.
//!
//! Every create is entered under its `Idempotency-Key` before it is sent, at its
//! estimate, and checked against the cap with everything already entered: what was
//! charged, and what is in flight. So concurrent calls cannot pass the cap between
//! them, and a create sent again with the same key (a retried tool call) is the
//! same entry, counted once, as the service charges it once.

use std::collections::HashMap;

/// Roubles as whole kopecks.
pub type Kopecks = i64;

/// Kopecks of an amount in roubles, rounded to the nearest one.
pub fn kopecks(rub: f64) -> Kopecks {
    // Amounts are roubles with kopecks (at most two decimals); any float error is
    // far below half a kopeck.
    #[expect(clippy::cast_possible_truncation, reason = "roubles of a balance fit")]
    let kopecks = (rub * 100.0).round() as Kopecks;
    kopecks
}

/// Roubles of `kopecks`, for answers.
pub fn rub(kopecks: Kopecks) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "roubles of a balance fit")]
    let rub = kopecks as f64 / 100.0;
    rub
}

/// What one create counts against the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// Sent, or about to be, with no answer yet: its estimate.
    InFlight(Kopecks),
    /// Answered: what the service reserved for it.
    Charged(Kopecks),
    /// Failed, and the service gave the money back (its document's refund rule).
    Refunded,
}

impl Entry {
    fn counted(self) -> Kopecks {
        match self {
            Self::InFlight(amount) | Self::Charged(amount) => amount,
            Self::Refunded => 0,
        }
    }
}

/// Why a create may not be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The estimate is above `--max-cost`.
    AboveMaxCost { cost: Kopecks, max_cost: Kopecks },
    /// The estimate, with what is charged and in flight, would pass `--max-spend`.
    AboveMaxSpend {
        cost: Kopecks,
        max_spend: Kopecks,
        left: Kopecks,
    },
}

/// The cap and every create entered against it, by `Idempotency-Key`.
#[derive(Debug, Default)]
pub struct Ledger {
    max_spend: Option<Kopecks>,
    max_cost: Option<Kopecks>,
    entries: HashMap<String, Entry>,
}

/// The state of the cap, for answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub charged: Kopecks,
    pub in_flight: Kopecks,
    /// What `--max-spend` leaves; `None` without one.
    pub left: Option<Kopecks>,
}

impl Ledger {
    pub fn new(max_spend: Option<Kopecks>, max_cost: Option<Kopecks>) -> Self {
        Self {
            max_spend,
            max_cost,
            entries: HashMap::new(),
        }
    }

    pub fn max_spend(&self) -> Option<Kopecks> {
        self.max_spend
    }

    pub fn max_cost(&self) -> Option<Kopecks> {
        self.max_cost
    }

    /// What is charged and in flight, and what the cap leaves.
    pub fn standing(&self) -> Standing {
        let (mut charged, mut in_flight) = (0, 0);
        for entry in self.entries.values() {
            match entry {
                Entry::InFlight(amount) => in_flight += amount,
                Entry::Charged(amount) => charged += amount,
                Entry::Refunded => {}
            }
        }
        Standing {
            charged,
            in_flight,
            left: self.max_spend.map(|max| (max - charged - in_flight).max(0)),
        }
    }

    /// Enters the create of `key` at its estimate `cost`, or refuses it. A key
    /// already entered is the same create sent again: the service returns what the
    /// first made, so nothing more is counted and nothing refused.
    pub fn reserve(&mut self, key: &str, cost: Kopecks) -> Result<(), Refusal> {
        if self.entries.contains_key(key) {
            return Ok(());
        }
        if let Some(max_cost) = self.max_cost.filter(|max| cost > *max) {
            return Err(Refusal::AboveMaxCost { cost, max_cost });
        }
        if let Some(max_spend) = self.max_spend {
            let counted: Kopecks = self.entries.values().map(|e| e.counted()).sum();
            if counted + cost > max_spend {
                return Err(Refusal::AboveMaxSpend {
                    cost,
                    max_spend,
                    left: (max_spend - counted).max(0),
                });
            }
        }
        self.entries.insert(key.to_owned(), Entry::InFlight(cost));
        Ok(())
    }

    /// The service answered the create of `key` and reserved `charged` for it.
    pub fn settle(&mut self, key: &str, charged: Kopecks) {
        self.entries.insert(key.to_owned(), Entry::Charged(charged));
    }

    /// The service refused the create of `key`: nothing was made or charged.
    pub fn release(&mut self, key: &str) {
        if matches!(self.entries.get(key), Some(Entry::InFlight(_))) {
            self.entries.remove(key);
        }
    }

    /// The generation of `key` failed, and the service returned its cost.
    pub fn refund(&mut self, key: &str) {
        if let Some(entry) = self.entries.get_mut(key) {
            *entry = Entry::Refunded;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_that_would_pass_the_cap_is_refused_with_what_is_left() {
        let mut ledger = Ledger::new(Some(1000), None);
        ledger.reserve("a", 400).unwrap();
        ledger.reserve("b", 400).unwrap();
        assert_eq!(
            ledger.reserve("c", 400),
            Err(Refusal::AboveMaxSpend {
                cost: 400,
                max_spend: 1000,
                left: 200
            })
        );
        assert_eq!(ledger.standing().in_flight, 800);
    }

    #[test]
    fn the_same_key_again_is_counted_once() {
        let mut ledger = Ledger::new(Some(500), None);
        ledger.reserve("a", 400).unwrap();
        ledger.reserve("a", 400).unwrap();
        ledger.settle("a", 400);
        ledger.reserve("a", 400).unwrap();
        assert_eq!(ledger.standing().charged, 400);
        assert_eq!(ledger.standing().left, Some(100));
    }

    #[test]
    fn a_refused_create_frees_its_reservation_and_a_refund_frees_its_charge() {
        let mut ledger = Ledger::new(Some(500), None);
        ledger.reserve("a", 400).unwrap();
        ledger.release("a");
        ledger.reserve("b", 400).unwrap();
        ledger.settle("b", 400);
        ledger.refund("b");
        ledger.reserve("c", 500).unwrap();
        assert_eq!(ledger.standing().left, Some(0));
    }

    #[test]
    fn a_settled_create_is_not_released_by_a_late_refusal() {
        let mut ledger = Ledger::new(Some(500), None);
        ledger.reserve("a", 400).unwrap();
        ledger.settle("a", 400);
        ledger.release("a");
        assert_eq!(ledger.standing().charged, 400);
    }

    #[test]
    fn max_cost_refuses_one_expensive_call_without_touching_the_total() {
        let mut ledger = Ledger::new(None, Some(300));
        assert_eq!(
            ledger.reserve("a", 301),
            Err(Refusal::AboveMaxCost {
                cost: 301,
                max_cost: 300
            })
        );
        assert_eq!(ledger.standing().in_flight, 0);
    }

    #[test]
    fn kopecks_are_exact_for_amounts_in_roubles() {
        assert_eq!(kopecks(2.5), 250);
        assert_eq!(kopecks(0.1 + 0.2), 30);
        assert!((rub(1999) - 19.99).abs() < f64::EPSILON);
    }
}
