//! The account that owns the key, the dashboard summary, and the magic-link request.

use std::collections::HashMap;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Duration;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::domain::catalog::MediaType;
use crate::domain::ledger::Charge;
use crate::domain::money::Kopecks;
use crate::domain::refusal::Invalid;
use crate::error::{ApiError, Result};
use crate::extract::{AuthUser, Body, ContractBody, Query, time_param};
use crate::state::AppState;
use crate::wire::{Json, account as view, timestamp};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/account", get(get_account))
        .route("/v1/stats/summary", get(get_summary))
        .route("/v1/auth/magic-link/request", post(request_magic_link))
}

async fn get_account(State(state): State<AppState>, user: AuthUser) -> Result<Json<Value>> {
    let store = state.store();
    let owner = store.user(user.user_id).ok_or_else(|| {
        ApiError::Internal(anyhow::anyhow!(
            "authenticated user {} has no record",
            user.user_id
        ))
    })?;
    let balance = store.account(user.user_id).unwrap_or_default();
    Ok(Json(view::account(owner, &balance)))
}

/// Generations created in `[from, to]` (default: the last 30 days), counted by
/// status and media type; spending is what was kept, refunds netted out.
async fn get_summary(
    State(state): State<AppState>,
    user: AuthUser,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>> {
    let now = state.now();
    let to = time_param(&query, "to")?.unwrap_or(now);
    let from = time_param(&query, "from")?.unwrap_or(to - Duration::days(30));
    if from > to {
        return Err(Invalid::query("from", "maximum", "must not be after `to`", json!({})).into());
    }
    let store = state.store();
    let in_range: Vec<_> = store
        .generations_of(user.user_id)
        .filter(|g| g.created_at >= from && g.created_at <= to)
        .collect();
    let spent = |kind: Option<MediaType>| -> Kopecks {
        in_range
            .iter()
            .filter(|g| kind.is_none_or(|k| g.media_type == k))
            .filter_map(|g| match store.charge(g.id) {
                Some(Charge::Kept(cost)) => Some(cost),
                _ => None,
            })
            .sum()
    };
    let by_media_type: Vec<Value> = MediaType::ALL
        .iter()
        .map(|&kind| {
            let of_kind: Vec<_> = in_range.iter().filter(|g| g.media_type == kind).collect();
            json!({
                "mediaType": kind,
                "generations": of_kind.len(),
                "spentRub": spent(Some(kind)),
                "byStatus": view::status_counts(of_kind.iter().map(|g| g.status)),
            })
        })
        .collect();
    Ok(Json(json!({
        "from": timestamp(from),
        "to": timestamp(to),
        "spentRub": spent(None),
        "generations": in_range.len(),
        "byStatus": view::status_counts(in_range.iter().map(|g| g.status)),
        "byMediaType": by_media_type,
    })))
}

/// The body of `POST /v1/auth/magic-link/request`.
#[derive(Debug, Deserialize)]
struct MagicLinkRequest {
    email: String,
}

impl ContractBody for MagicLinkRequest {
    const SCHEMA: &'static str = "MagicLinkRequest";
}

/// The same answer whether or not an account has the address, so the request
/// cannot be used to find out who is a customer; the message itself goes to
/// the outbox (`GET /_mock/outbox`) only when there is an account.
async fn request_magic_link(
    State(state): State<AppState>,
    Body(body): Body<MagicLinkRequest>,
) -> Result<(StatusCode, Json<Value>)> {
    let email = body.email.trim().to_lowercase();
    let token = uuid::Uuid::new_v4().simple().to_string();
    let link = format!("{}/auth/magic-link/{token}", state.base_url());
    let now = state.now();
    state.store().send_magic_link(&email, link, now);
    Ok((
        StatusCode::ACCEPTED,
        Json(
            json!({"message": "If an account exists for this address, a sign-in link has been sent."}),
        ),
    ))
}
