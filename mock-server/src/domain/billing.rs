//! Top-ups, invoices and their documents' data (the contract's billing design).

use chrono::{DateTime, Datelike, Duration, Utc};
use uuid::Uuid;

use super::UserId;
use super::money::Kopecks;
use super::rate_limit::{Decision, TOPUP};

/// The daily top-up cap per user and UTC day (the contract's design).
pub const DAILY_TOPUP_CAP: Kopecks = Kopecks(300_000 * 100);
/// Days an issued invoice stays payable.
pub const INVOICE_DUE_DAYS: i64 = 5;
/// VAT rate included in invoice amounts, percent.
pub const VAT_PERCENT: i64 = 20;

#[derive(Debug, Clone)]
pub struct Topup {
    pub id: Uuid,
    pub user_id: UserId,
    pub amount: Kopecks,
    pub at: DateTime<Utc>,
}

/// Why a top-up or an invoice was refused; each message is the one answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BillingRefusal {
    /// The per-user window of `POST /v1/billing/topup` (5 per 600 s) is used up.
    #[error(
        "At most {} top-ups per {} seconds; retry after {} s",
        TOPUP.max,
        TOPUP.window_secs,
        .0.reset_secs.max(1)
    )]
    TooManyTopups(Decision),
    /// The daily cap (429 `DAILY_CAP_EXCEEDED`).
    #[error(
        "The daily top-up cap of {DAILY_TOPUP_CAP} RUB is used up; try again after 00:00 UTC or pay by invoice"
    )]
    DailyCapExceeded,
    /// Invoices are issued to a legal entity: its requisites come first.
    #[error("Set the requisites of the legal entity first (PUT /v1/billing/requisites)")]
    NoRequisites,
}

/// Whether `amount` more today would pass the cap, given the user's earlier top-ups.
pub fn within_daily_cap(
    topups: &[Topup],
    user_id: UserId,
    amount: Kopecks,
    now: DateTime<Utc>,
) -> bool {
    let today = now.date_naive();
    let used: Kopecks = topups
        .iter()
        .filter(|t| t.user_id == user_id && t.at.date_naive() == today)
        .map(|t| t.amount)
        .sum();
    used + amount <= DAILY_TOPUP_CAP
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InvoiceStatus {
    Issued,
    Paid,
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct InvoiceLine {
    pub description: String,
    pub quantity: f64,
    pub unit: String,
    pub unit_price: Kopecks,
    pub amount: Kopecks,
}

#[derive(Debug, Clone)]
pub struct Invoice {
    pub id: Uuid,
    pub user_id: UserId,
    pub number: String,
    pub amount: Kopecks,
    pub vat: Kopecks,
    pub status: InvoiceStatus,
    pub lines: Vec<InvoiceLine>,
    pub issued_at: DateTime<Utc>,
    pub paid_at: Option<DateTime<Utc>>,
    pub due_at: DateTime<Utc>,
}

impl Invoice {
    /// An invoice for a balance top-up of `amount`, VAT included; `seq` numbers it.
    pub fn for_topup(user_id: UserId, amount: Kopecks, seq: u64, now: DateTime<Utc>) -> Self {
        Self {
            id: Uuid::new_v4(),
            user_id,
            number: format!("MG-{}-{seq:06}", now.year()),
            amount,
            vat: vat_included(amount),
            status: InvoiceStatus::Issued,
            lines: vec![InvoiceLine {
                description: "Пополнение баланса сервиса генерации медиа".into(),
                quantity: 1.0,
                unit: "усл.".into(),
                unit_price: amount,
                amount,
            }],
            issued_at: now,
            paid_at: None,
            due_at: now + Duration::days(INVOICE_DUE_DAYS),
        }
    }
}

/// The VAT inside an amount that includes it: amount × 20 / 120, to the kopeck.
pub fn vat_included(amount: Kopecks) -> Kopecks {
    let numerator = i128::from(amount.0) * i128::from(VAT_PERCENT);
    let denominator = i128::from(100 + VAT_PERCENT);
    Kopecks(i64::try_from((numerator + denominator / 2) / denominator).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_is_a_sixth_of_an_amount_that_includes_it() {
        assert_eq!(vat_included(Kopecks(120_000)), Kopecks(20_000));
        assert_eq!(vat_included(Kopecks(100)), Kopecks(17));
        assert!(vat_included(Kopecks(i64::MAX)).0 > 0);
    }

    #[test]
    fn daily_cap_counts_only_the_same_user_and_utc_day() {
        let user = UserId::new_v4();
        let now = Utc::now();
        let topups = vec![
            Topup {
                id: Uuid::new_v4(),
                user_id: user,
                amount: Kopecks(250_000 * 100),
                at: now,
            },
            Topup {
                id: Uuid::new_v4(),
                user_id: UserId::new_v4(),
                amount: Kopecks(300_000 * 100),
                at: now,
            },
            Topup {
                id: Uuid::new_v4(),
                user_id: user,
                amount: Kopecks(300_000 * 100),
                at: now - Duration::days(1),
            },
        ];
        assert!(within_daily_cap(&topups, user, Kopecks(50_000 * 100), now));
        assert!(!within_daily_cap(
            &topups,
            user,
            Kopecks(50_000 * 100 + 1),
            now
        ));
    }
}
