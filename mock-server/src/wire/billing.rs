//! The balance, its history, requisites, invoices and top-ups.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::timestamp;
use crate::domain::billing::HistoryRow;
use crate::domain::billing::{Invoice, InvoiceStatus, Topup, TopupStatus};
use crate::domain::ledger::Account;
use crate::domain::requisites::Requisites;

/// The single balance of the account.
pub fn balance(account: &Account, now: DateTime<Utc>) -> Value {
    json!({
        "availableRub": account.available,
        "reservedRub": account.reserved,
        "currency": "RUB",
        "updatedAt": timestamp(now),
    })
}

/// An entry of the balance history.
pub fn history_row(row: &HistoryRow) -> Value {
    let entry = &row.entry;
    json!({
        "id": entry.id.to_string(),
        "type": entry.kind,
        "amountRub": entry.amount,
        "netAmountRub": row.net,
        "status": row.status,
        "generationId": entry.generation_id,
        "description": row.description,
        "createdAt": timestamp(entry.at),
        "refundedAt": row.refunded_at.map(timestamp),
    })
}

/// Requisites with when they were set.
pub fn requisites(requisites: &Requisites, updated_at: DateTime<Utc>) -> Value {
    let mut value = json!(requisites);
    value["updatedAt"] = json!(timestamp(updated_at));
    value
}

/// An invoice, with the addresses of its PDF and, once paid, its closing act.
pub fn invoice(base_url: &str, invoice: &Invoice) -> Value {
    let base = format!("{base_url}/v1/billing/invoices/{}", invoice.id);
    json!({
        "id": invoice.id,
        "number": invoice.number,
        "amountRub": invoice.amount,
        "vatRub": invoice.vat,
        "vatPercent": invoice.vat_percent,
        "status": invoice.status,
        "lines": invoice.lines.iter().map(|l| json!({
            "description": l.description,
            "quantity": l.quantity,
            "unit": l.unit,
            "unitPriceRub": l.unit_price,
            "amountRub": l.amount,
        })).collect::<Vec<_>>(),
        "issuedAt": timestamp(invoice.issued_at),
        "paidAt": invoice.paid_at.map(timestamp),
        "dueAt": timestamp(invoice.due_at),
        "pdfUrl": format!("{base}/pdf"),
        "actUrl": (invoice.status == InvoiceStatus::Paid).then(|| format!("{base}/act")),
    })
}

/// A top-up, with the mock's payment page while it waits for payment.
pub fn topup(base_url: &str, topup: &Topup) -> Value {
    let pending = topup.status == TopupStatus::Pending;
    json!({
        "id": topup.id,
        "amountRub": topup.amount,
        "status": topup.status,
        "paymentUrl": pending.then(|| format!("{base_url}/_mock/topups/{}/checkout", topup.id)),
        "createdAt": timestamp(topup.at),
    })
}
