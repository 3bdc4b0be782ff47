//! Top-ups, invoices and their documents' data (the contract's billing design).

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, TimeDelta, Utc};
use uuid::Uuid;

use super::UserId;
use super::ledger::Entry;
use super::money::Kopecks;
use mediagen_openapi::operations::LimitScope;

/// The daily top-up cap per user and UTC day (the contract's design).
pub const DAILY_TOPUP_CAP: Kopecks = Kopecks(300_000 * 100);
/// Days an issued invoice stays payable.
pub const INVOICE_DUE_DAYS: i64 = 5;
/// The VAT rates of the Russian Federation, percent, each with the day it came
/// into force, newest first: 22% from 1 January 2026 (Federal Law 425-FZ of
/// 28 November 2025), 20% before.
const VAT_RATES: &[((i32, u32, u32), i64)] = &[((2026, 1, 1), 22), ((2019, 1, 1), 20)];

/// Documents are dated in Moscow time, the seller's: the contract's `dueAt`
/// of "…T20:59:59Z" is the end of a Moscow day. Russia has kept UTC+3 all
/// year since 2014.
pub fn moscow(at: DateTime<Utc>) -> NaiveDateTime {
    let utc = at.naive_utc();
    utc.checked_add_signed(TimeDelta::hours(3)).unwrap_or(utc)
}

/// The day a document made at `at` is dated.
pub fn document_date(at: DateTime<Utc>) -> NaiveDate {
    moscow(at).date()
}

/// The VAT rate in force on `day`, percent.
pub fn vat_percent(day: NaiveDate) -> i64 {
    VAT_RATES
        .iter()
        .find(|((y, m, d), _)| NaiveDate::from_ymd_opt(*y, *m, *d).is_some_and(|from| day >= from))
        .or(VAT_RATES.last())
        .map_or(20, |(_, rate)| *rate)
}

/// Where a top-up by card stands (the contract's `TopupStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TopupStatus {
    /// Waiting for the user to pay on the payment page.
    Pending,
    /// Paid: the balance is credited.
    Succeeded,
    /// The payment failed; nothing is credited.
    Failed,
}

impl TopupStatus {
    /// The name the API gives the state.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Succeeded => "SUCCEEDED",
            Self::Failed => "FAILED",
        }
    }
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Topup {
    pub id: Uuid,
    pub user_id: UserId,
    pub amount: Kopecks,
    pub status: TopupStatus,
    pub at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// Why a top-up or an invoice was refused; each message is the one answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BillingRefusal {
    /// The per-user window of `POST /v1/billing/topup` (5 per 600 s) is used up;
    /// the client is told to wait this many real seconds.
    #[error(
        "At most {} top-ups per {} seconds; retry after {} s",
        LimitScope::Topup.default_limit(),
        LimitScope::Topup.window_secs(),
        .retry_after
    )]
    TooManyTopups { retry_after: u64 },
    /// The daily cap (429 `DAILY_CAP_EXCEEDED`).
    #[error(
        "The daily top-up cap of {DAILY_TOPUP_CAP} RUB is used up; try again after 00:00 UTC or pay by invoice"
    )]
    DailyCapExceeded,
    /// Invoices are issued to a legal entity: its requisites come first.
    #[error("Set the requisites of the legal entity first (PUT /v1/billing/requisites)")]
    NoRequisites,
}

/// Whether `amount` more today would pass the cap, given the user's earlier
/// top-ups: those created the same UTC day, paid or still waiting for payment
/// (a failed payment takes nothing from the cap).
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
        .filter(|t| t.status != TopupStatus::Failed)
        .map(|t| t.amount)
        .sum();
    used + amount <= DAILY_TOPUP_CAP
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InvoiceStatus {
    Issued,
    Paid,
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct InvoiceLine {
    pub description: String,
    pub quantity: f64,
    pub unit: String,
    pub unit_price: Kopecks,
    pub amount: Kopecks,
}

#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Invoice {
    pub id: Uuid,
    pub user_id: UserId,
    pub number: String,
    pub amount: Kopecks,
    /// The VAT rate in force on the issue date, percent.
    pub vat_percent: i64,
    pub vat: Kopecks,
    pub status: InvoiceStatus,
    pub lines: Vec<InvoiceLine>,
    pub issued_at: DateTime<Utc>,
    pub paid_at: Option<DateTime<Utc>>,
    pub due_at: DateTime<Utc>,
}

impl Invoice {
    /// An invoice for a balance top-up of `amount`, VAT included at the rate in
    /// force on `now`; `seq` numbers it.
    pub fn for_topup(user_id: UserId, amount: Kopecks, seq: u64, now: DateTime<Utc>) -> Self {
        let vat_percent = vat_percent(document_date(now));
        Self {
            id: Uuid::new_v4(),
            user_id,
            number: format!("MG-{}-{seq:06}", now.year()),
            amount,
            vat_percent,
            vat: vat_included(amount, vat_percent),
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

/// The VAT inside an amount that includes it at `percent`: amount × 22 / 122
/// at 22%, to the kopeck.
pub fn vat_included(amount: Kopecks, percent: i64) -> Kopecks {
    let numerator = i128::from(amount.0) * i128::from(percent);
    let denominator = i128::from(100 + percent);
    Kopecks(i64::try_from((numerator + denominator / 2) / denominator).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_is_the_share_of_an_amount_that_includes_it() {
        assert_eq!(vat_included(Kopecks(120_000), 20), Kopecks(20_000));
        assert_eq!(vat_included(Kopecks(122_000), 22), Kopecks(22_000));
        assert_eq!(vat_included(Kopecks(100), 20), Kopecks(17));
        assert_eq!(vat_included(Kopecks(100), 22), Kopecks(18));
        assert!(vat_included(Kopecks(i64::MAX), 22).0 > 0);
    }

    #[test]
    fn the_vat_rate_is_22_percent_from_2026_and_20_before() {
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).expect("a date");
        assert_eq!(vat_percent(day(2025, 12, 31)), 20);
        assert_eq!(vat_percent(day(2026, 1, 1)), 22);
        assert_eq!(vat_percent(day(2026, 11, 23)), 22);
        assert_eq!(
            vat_percent(day(2010, 6, 1)),
            20,
            "the oldest rate of the table"
        );
    }

    #[test]
    fn daily_cap_counts_only_the_same_user_and_utc_day() {
        let user = UserId::new_v4();
        let now = Utc::now();
        let topup = |user_id, rub: i64, status, at| Topup {
            id: Uuid::new_v4(),
            user_id,
            amount: Kopecks(rub * 100),
            status,
            at,
            finished_at: None,
        };
        let topups = vec![
            topup(user, 200_000, TopupStatus::Succeeded, now),
            topup(user, 50_000, TopupStatus::Pending, now),
            topup(user, 300_000, TopupStatus::Failed, now),
            topup(UserId::new_v4(), 300_000, TopupStatus::Succeeded, now),
            topup(
                user,
                300_000,
                TopupStatus::Succeeded,
                now - Duration::days(1),
            ),
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
