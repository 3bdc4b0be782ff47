//! The HTTP face of the payments the mock stands in for: a bank transfer
//! paying an invoice, and the card payment page of a top-up.

use axum::extract::State;
use axum::response::Html;
use axum::routing::{get, post};
use axum::{Json, Router};
use uuid::Uuid;

use super::ops::billing::{self, Paid, TopupView};
use crate::domain::billing::TopupStatus;
use crate::error::{ApiError, Result};
use crate::extract::{Path, uuid_param};
use crate::state::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/_mock/invoices/{id}/pay", post(pay_invoice))
        .route("/_mock/topups/{id}/checkout", get(checkout))
        .route("/_mock/topups/{id}/pay", post(pay_topup))
        .route("/_mock/topups/{id}/fail", post(fail_topup))
}

/// Marks an invoice paid, as the bank transfer arriving would.
async fn pay_invoice(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Paid>> {
    Ok(Json(billing::pay_invoice(&state, uuid_param(&id, "id")?)?))
}

fn topup_id(raw: &str) -> Result<Uuid> {
    uuid_param(raw, "id")
}

/// `POST /_mock/topups/{id}/pay`: the user paid on the payment page.
async fn pay_topup(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TopupView>> {
    Ok(Json(billing::settle_topup(&state, topup_id(&id)?, true)?))
}

/// `POST /_mock/topups/{id}/fail`: the payment was declined.
async fn fail_topup(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TopupView>> {
    Ok(Json(billing::settle_topup(&state, topup_id(&id)?, false)?))
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
