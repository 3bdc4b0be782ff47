//! A user of the mock: who owns keys, a balance and generations.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::UserId;

/// A user of the mock.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct User {
    /// The user's id.
    pub id: UserId,
    /// The sign-in address.
    pub email: String,
    /// When the user was created.
    pub created_at: DateTime<Utc>,
    /// Generation ids, oldest first.
    pub generations: Vec<Uuid>,
}
