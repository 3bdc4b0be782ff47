//! The payments the mock stands in for: a bank transfer paying an invoice,
//! and the card payment page of a top-up.

use axum::extract::State;
use axum::response::Html;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::domain::billing::{Topup, TopupStatus};
use crate::error::{ApiError, Result};
use crate::extract::{Path, uuid_param};
use crate::state::AppState;
use crate::wire::timestamp;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/invoices/{id}/pay", post(pay_invoice))
        .route("/_mock/topups/{id}/checkout", get(checkout))
        .route("/_mock/topups/{id}/pay", post(pay_topup))
        .route("/_mock/topups/{id}/fail", post(fail_topup))
}

/// Marks an invoice paid, as the bank transfer arriving would: the balance is
/// credited and the closing act becomes available.
async fn pay_invoice(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let id = uuid_param(&id, "id")?;
    let now = state.now();
    let paid = state
        .store()
        .pay_invoice(id, now)
        .ok_or_else(|| ApiError::not_found(format!("Invoice {id} not found")))?
        .map_err(|invoice| {
            ApiError::Conflict(format!(
                "Invoice {} is not awaiting payment",
                invoice.number
            ))
        })?;
    Ok(Json(json!({
        "id": id,
        "number": paid.number,
        "status": "PAID",
        "paidAt": timestamp(now),
    })))
}

fn topup_id(raw: &str) -> Result<Uuid> {
    uuid_param(raw, "id")
}

fn topup_view(topup: &Topup) -> Value {
    json!({
        "id": topup.id,
        "userId": topup.user_id,
        "amountRub": topup.amount,
        "status": topup.status,
        "createdAt": timestamp(topup.at),
        "finishedAt": topup.finished_at.map(timestamp),
    })
}

/// The card payment went through (`paid`) or failed: a `PENDING` top-up
/// becomes `SUCCEEDED` with the balance credited, or `FAILED`.
fn settle(state: &AppState, raw: &str, paid: bool) -> Result<Json<Value>> {
    let id = topup_id(raw)?;
    let now = state.now();
    let settled = state
        .store()
        .settle_topup(id, paid, now)
        .ok_or_else(|| ApiError::not_found(format!("Top-up {id} not found")))?
        .map_err(|topup| {
            ApiError::Conflict(format!(
                "Top-up {id} is {}; only a PENDING top-up can be paid or failed",
                topup.status.as_str()
            ))
        })?;
    Ok(Json(topup_view(&settled)))
}

/// `POST /_mock/topups/{id}/pay`: the user paid on the payment page.
async fn pay_topup(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
    settle(&state, &id, true)
}

/// `POST /_mock/topups/{id}/fail`: the payment was declined.
async fn fail_topup(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
    settle(&state, &id, false)
}

/// The top-up's `paymentUrl`: a page with a button to pay and one to decline,
/// for a person trying the flow in a browser.
async fn checkout(State(state): State<AppState>, Path(id): Path<String>) -> Result<Html<String>> {
    let id = topup_id(&id)?;
    let topup = state
        .store()
        .topup(id)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("Top-up {id} not found")))?;
    let actions = if topup.status == TopupStatus::Pending {
        format!(
            "<form method=\"post\" action=\"/_mock/topups/{id}/pay\"><button>Pay {} RUB</button></form>\
             <form method=\"post\" action=\"/_mock/topups/{id}/fail\"><button>Decline</button></form>",
            topup.amount
        )
    } else {
        "<p>This top-up is final.</p>".to_owned()
    };
    Ok(Html(format!(
        "<!doctype html><meta charset=\"utf-8\"><title>mediagen mock payment</title>\
         <h1>Top-up of {} RUB</h1><p>Status: {}</p>{actions}",
        topup.amount,
        topup.status.as_str()
    )))
}
