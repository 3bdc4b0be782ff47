//! The payments the mock stands in for: a bank transfer paying an invoice,
//! and the card payment of a top-up.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::domain::UserId;
use crate::domain::billing::Topup;
use crate::error::ControlError;
use crate::state::AppState;

/// An invoice just paid (`POST /_mock/invoices/{id}/pay`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Paid {
    /// The invoice.
    pub id: Uuid,
    /// Its number, as its PDF shows it.
    pub number: String,
    /// `PAID`.
    pub status: &'static str,
    /// When the transfer arrived, on the mock's clock.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub paid_at: DateTime<Utc>,
}

/// A top-up as the control API shows it (`POST /_mock/topups/{id}/pay`, `…/fail`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TopupView {
    /// The top-up.
    pub id: Uuid,
    /// Its user.
    pub user_id: UserId,
    /// The amount in roubles.
    pub amount_rub: f64,
    /// `PENDING`, `SUCCEEDED` or `FAILED`.
    pub status: &'static str,
    /// When it was asked for.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub created_at: DateTime<Utc>,
    /// When it was paid or failed.
    #[serde(serialize_with = "crate::wire::millis::option::serialize")]
    pub finished_at: Option<DateTime<Utc>>,
}

impl TopupView {
    fn of(topup: &Topup) -> Self {
        Self {
            id: topup.id,
            user_id: topup.user_id,
            amount_rub: topup.amount.rub(),
            status: topup.status.as_str(),
            created_at: topup.at,
            finished_at: topup.finished_at,
        }
    }
}

/// Marks an invoice paid, as the bank transfer arriving would: the balance is
/// credited and the closing act becomes available.
pub(crate) fn pay_invoice(state: &AppState, id: Uuid) -> Result<Paid, ControlError> {
    let now = state.now();
    let paid = state
        .store()
        .pay_invoice(id, now)
        .ok_or_else(|| ControlError::NotFound(format!("Invoice {id} not found")))?
        .map_err(|invoice| {
            ControlError::Conflict(format!(
                "Invoice {} is not awaiting payment",
                invoice.number
            ))
        })?;
    Ok(Paid {
        id,
        number: paid.number,
        status: "PAID",
        paid_at: paid.paid_at.unwrap_or(now),
    })
}

/// The card payment went through (`paid`) or failed: a `PENDING` top-up
/// becomes `SUCCEEDED` with the balance credited, or `FAILED`.
pub(crate) fn settle_topup(
    state: &AppState,
    id: Uuid,
    paid: bool,
) -> Result<TopupView, ControlError> {
    let now = state.now();
    let settled = state
        .store()
        .settle_topup(id, paid, now)
        .ok_or_else(|| ControlError::NotFound(format!("Top-up {id} not found")))?
        .map_err(|topup| {
            ControlError::Conflict(format!(
                "Top-up {id} is {}; only a PENDING top-up can be paid or failed",
                topup.status.as_str()
            ))
        })?;
    Ok(TopupView::of(&settled))
}
