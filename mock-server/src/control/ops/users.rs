//! Users, their keys and their balance.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::rub;
use crate::domain::UserId;
use crate::domain::auth::Scope;
use crate::error::ControlError;
use crate::state::AppState;
use crate::store::{KeyView, NewUser};

/// A user to create (`POST /_mock/users`): a balance and, if given, its
/// sign-in address. A number of roubles alone converts into one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct CreateUser {
    /// Roubles available, at least 0.
    #[serde(default)]
    pub balance_rub: f64,
    /// The sign-in address; `user-…@mediagen.test` when absent.
    pub email: Option<String>,
}

impl CreateUser {
    /// A user with `balance_rub` roubles and a sign-in address of its own.
    pub fn new(balance_rub: f64) -> Self {
        Self {
            balance_rub,
            email: None,
        }
    }

    /// Its sign-in address.
    #[must_use]
    pub fn email(mut self, email: impl Into<String>) -> Self {
        self.email = Some(email.into());
        self
    }
}

impl From<f64> for CreateUser {
    fn from(balance_rub: f64) -> Self {
        Self::new(balance_rub)
    }
}

/// A user as the mock knows it (`GET /_mock/users/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UserView {
    /// The user's id.
    pub user_id: UserId,
    /// The sign-in address.
    pub email: String,
    /// Roubles available for new tasks.
    pub balance_rub: f64,
    /// Roubles reserved by active tasks.
    pub reserved_rub: f64,
    /// Tasks in `PENDING` or `PROCESSING`.
    pub active_generations: usize,
    /// How many generations the user made.
    pub generations: usize,
    /// The user's keys, by their public parts: never a secret.
    pub keys: Vec<KeyView>,
    /// When the user was made, on the mock's clock.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub created_at: DateTime<Utc>,
}

/// A key just issued (`POST /_mock/users/{id}/keys`): its whole value, shown once.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewKey {
    /// The full API key.
    pub api_key: String,
    /// Its public part, which names it (`DELETE /_mock/keys/{publicPart}`).
    pub public_part: String,
    /// What it may do.
    pub scope: Scope,
}

fn no_user(id: UserId) -> ControlError {
    ControlError::NotFound(format!("User {id} not found"))
}

/// Creates a user with a first key.
pub(crate) fn create_user(state: &AppState, user: CreateUser) -> Result<NewUser, ControlError> {
    let balance = rub(user.balance_rub, "balanceRub")?;
    Ok(state.create_user(balance, user.email))
}

pub(crate) fn get_user(state: &AppState, id: UserId) -> Result<UserView, ControlError> {
    let store = state.store();
    let user = store.user(id).ok_or_else(|| no_user(id))?;
    let account = store.account(id).unwrap_or_default();
    Ok(UserView {
        user_id: id,
        email: user.email.clone(),
        balance_rub: account.available.rub(),
        reserved_rub: account.reserved.rub(),
        active_generations: store.active_count(id),
        generations: user.generations.len(),
        keys: store.keys_of(id),
        created_at: user.created_at,
    })
}

/// Issues a further key for a user.
pub(crate) fn create_key(
    state: &AppState,
    id: UserId,
    scope: Scope,
) -> Result<NewKey, ControlError> {
    let key = state
        .store()
        .issue_key(id, scope)
        .ok_or_else(|| no_user(id))?;
    Ok(NewKey {
        api_key: key.full,
        public_part: key.public,
        scope,
    })
}

/// Sets a user's available balance; answers the user.
pub(crate) fn set_balance(
    state: &AppState,
    id: UserId,
    balance_rub: f64,
) -> Result<UserView, ControlError> {
    let amount = rub(balance_rub, "balanceRub")?;
    let now = state.now();
    if !state.store().set_balance(id, amount, now) {
        return Err(no_user(id));
    }
    get_user(state, id)
}

/// Revokes a key by its public part.
pub(crate) fn revoke_key(state: &AppState, public_part: &str) -> Result<(), ControlError> {
    if state.store().revoke_key(public_part) {
        Ok(())
    } else {
        Err(ControlError::NotFound(format!(
            "No key with the public part '{public_part}'"
        )))
    }
}
