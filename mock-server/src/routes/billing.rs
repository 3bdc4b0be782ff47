//! Billing: balance, history of operations, requisites, invoices with their
//! PDF and closing act, and top-ups.

use std::collections::HashMap;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use mediagen_openapi::sets::BillingOperationType as OperationType;
use serde::Deserialize;
use serde_json::Value;

use crate::domain::UserId;
use crate::domain::billing::{BillingRefusal, Invoice, InvoiceStatus};
use crate::domain::ledger::EntryKind;
use crate::domain::money::Kopecks;
use crate::domain::refusal::{Conflict, Invalid, Missing};
use crate::domain::requisites::{self, Requisites};
use crate::error::Result;
use crate::extract::{
    AuthUser, Body, BodyHeaders, ContractBody, Path, Query, RawBody, enum_param, page, parse,
    time_param, uuid_param,
};
use crate::render::pdf::{self, InvoiceDoc, Line};
use crate::state::AppState;
use crate::wire::{Json, billing as view};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/billing/balance", get(get_balance))
        .route("/v1/billing/history", get(list_billing_history))
        .route(
            "/v1/billing/requisites",
            get(get_requisites).put(set_requisites),
        )
        .route(
            "/v1/billing/invoices",
            get(list_invoices).post(create_invoice),
        )
        .route("/v1/billing/invoices/{id}/pdf", get(get_invoice_pdf))
        .route("/v1/billing/invoices/{id}/act", get(get_invoice_act))
        .route("/v1/billing/topup", post(create_topup))
}

/// The body of `PUT /v1/billing/requisites`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
struct RequisitesInput(Requisites);

impl ContractBody for RequisitesInput {
    const SCHEMA: &'static str = "RequisitesInput";
}

/// The body of `POST /v1/billing/invoices`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateInvoiceRequest {
    amount_rub: f64,
}

impl ContractBody for CreateInvoiceRequest {
    const SCHEMA: &'static str = "CreateInvoiceRequest";
}

/// The body of `POST /v1/billing/topup`; `returnUrl` is where the payment page
/// sends the payer back, which the mock's page does not need.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TopupRequest {
    amount_rub: f64,
}

impl ContractBody for TopupRequest {
    const SCHEMA: &'static str = "TopupRequest";
}

async fn get_balance(State(state): State<AppState>, user: AuthUser) -> Json<Value> {
    let account = state.store().account(user.user_id).unwrap_or_default();
    Json(view::balance(&account, state.now()))
}

/// Top-ups, adjustments and generation charges, newest first. A refund is never
/// an entry of its own (GENERATION_REFUND is internal): the charge it returned
/// shows as REFUNDED with `refundedAt`, and its net amount is 0.
async fn list_billing_history(
    State(state): State<AppState>,
    user: AuthUser,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>> {
    let kind = enum_param(&query, "type", &OperationType::NAMES)?
        .and_then(OperationType::from_wire)
        .map(|kind| match kind {
            OperationType::Topup => EntryKind::Topup,
            OperationType::GenerationCharge => EntryKind::GenerationCharge,
            OperationType::Adjustment => EntryKind::Adjustment,
        });
    let (from, to) = (time_param(&query, "from")?, time_param(&query, "to")?);
    let rows: Vec<Value> = state
        .store()
        .history(user.user_id)
        .iter()
        .filter(|row| kind.is_none_or(|k| row.entry.kind == k))
        .filter(|row| from.is_none_or(|f| row.entry.at >= f) && to.is_none_or(|t| row.entry.at < t))
        .map(view::history_row)
        .collect();
    page(
        &query,
        &rows,
        |r| r["id"].as_str().unwrap_or_default().to_owned(),
        Clone::clone,
    )
    .map(Json)
}

async fn get_requisites(State(state): State<AppState>, user: AuthUser) -> Result<Json<Value>> {
    let store = state.store();
    let (r, at) = store.requisites(user.user_id).ok_or(Missing::Requisites)?;
    Ok(Json(view::requisites(r, *at)))
}

async fn set_requisites(
    State(state): State<AppState>,
    user: AuthUser,
    Body(RequisitesInput(given)): Body<RequisitesInput>,
) -> Result<Json<Value>> {
    // Stored trimmed, so documents print what was meant.
    let given = given.normalized();
    let fields = requisites::validate(&given);
    if !fields.is_empty() {
        return Err(Invalid::new("Requisites are not valid", fields).into());
    }
    let now = state.now();
    state
        .store()
        .set_requisites(user.user_id, given.clone(), now);
    Ok(Json(view::requisites(&given, now)))
}

async fn list_invoices(
    State(state): State<AppState>,
    user: AuthUser,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>> {
    let store = state.store();
    page(
        &query,
        &store.invoices_of(user.user_id),
        |i| i.id.to_string(),
        |i| view::invoice(state.base_url(), i),
    )
    .map(Json)
}

async fn create_invoice(
    State(state): State<AppState>,
    user: AuthUser,
    Body(body): Body<CreateInvoiceRequest>,
) -> Result<(StatusCode, Json<Value>)> {
    let amount = Kopecks::exact(body.amount_rub, "amountRub")?;
    let now = state.now();
    let invoice = state.store().create_invoice(user.user_id, amount, now)?;
    Ok((
        StatusCode::CREATED,
        Json(view::invoice(state.base_url(), &invoice)),
    ))
}

fn own_invoice(state: &AppState, user_id: UserId, id: &str) -> Result<(Invoice, Requisites)> {
    let id = uuid_param(id, "id")?;
    state
        .store()
        .own_invoice(user_id, id)
        .ok_or_else(|| Missing::Invoice(id).into())
}

fn pdf(bytes: Vec<u8>, filename: &str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "application/pdf")], bytes).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("inline; filename=\"{filename}\"")) {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

fn document(invoice: &Invoice, buyer: &Requisites, render: fn(&InvoiceDoc) -> Vec<u8>) -> Vec<u8> {
    let lines: Vec<Line> = invoice
        .lines
        .iter()
        .map(|l| Line {
            description: l.description.clone(),
            quantity: l.quantity,
            unit: l.unit.clone(),
            unit_price_kopecks: l.unit_price.0,
            amount_kopecks: l.amount.0,
        })
        .collect();
    render(&InvoiceDoc {
        number: &invoice.number,
        issued_at: invoice.issued_at,
        due_at: invoice.due_at,
        paid_at: invoice.paid_at,
        buyer,
        lines: &lines,
        total_kopecks: invoice.amount.0,
    })
}

async fn get_invoice_pdf(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Response> {
    let (invoice, buyer) = own_invoice(&state, user.user_id, &id)?;
    Ok(pdf(
        document(&invoice, &buyer, pdf::invoice_pdf),
        &format!("{}.pdf", invoice.number),
    ))
}

/// The closing act exists once the invoice is paid (the contract's design).
async fn get_invoice_act(
    State(state): State<AppState>,
    user: AuthUser,
    Path(id): Path<String>,
) -> Result<Response> {
    let (invoice, buyer) = own_invoice(&state, user.user_id, &id)?;
    if invoice.status != InvoiceStatus::Paid {
        return Err(Conflict::InvoiceUnpaid(invoice.number).into());
    }
    Ok(pdf(
        document(&invoice, &buyer, pdf::act_pdf),
        &format!("{}-act.pdf", invoice.number),
    ))
}

/// A top-up: 5 per 600 seconds per user, the daily cap, then a `PENDING`
/// top-up whose `paymentUrl` is the mock's payment page; paying it there (or
/// `POST /_mock/topups/{id}/pay`, or the auto-pay setting) credits the balance.
async fn create_topup(
    State(state): State<AppState>,
    user: AuthUser,
    headers: BodyHeaders,
    body: RawBody,
) -> Result<Response> {
    let now = state.now();
    let scale = state.clock().edge_scale();
    let window = state.store().count_topup(user.user_id, now);
    let result = if window.allowed || !state.config().rate_limits {
        topup(&state, user.user_id, &headers, body, now)
    } else {
        Err(BillingRefusal::TooManyTopups {
            retry_after: window.retry_after(scale),
        }
        .into())
    };
    // A top-up that pays itself (auto-pay) is a job the worker may not expect yet.
    if result.is_ok() && state.store().worker_wake_needed() {
        state.worker_notify().notify_one();
    }
    let mut response = match result {
        Ok(value) => (StatusCode::CREATED, Json(value)).into_response(),
        Err(error) => error.into_response(),
    };
    // This route reports its own, per-user limit rather than the general one.
    super::headers::limit_headers(response.headers_mut(), &window, scale);
    Ok(response)
}

fn topup(
    state: &AppState,
    user_id: UserId,
    headers: &BodyHeaders,
    body: RawBody,
    now: DateTime<Utc>,
) -> Result<Value> {
    // Counted against the window whether or not the body is valid.
    let body: TopupRequest = parse(state, headers, body)?;
    let amount = Kopecks::exact(body.amount_rub, "amountRub")?;
    let record = state.store().top_up(user_id, amount, now)?;
    Ok(view::topup(state.base_url(), &record))
}
