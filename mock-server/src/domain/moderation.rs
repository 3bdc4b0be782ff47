//! MODERATION_REPEAT_BLOCKED: after consecutive moderation rejections on a
//! model, requests to it are stopped for a while.
//!
//! The service document names the error and its `details.streak`; the
//! threshold and the pause are not shown. The mock blocks a user on a model
//! after 3 rejections in a row, for 15 minutes after the last one; a success
//! ends the series.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};

use super::UserId;

pub const THRESHOLD: u32 = 3;
pub const PAUSE_MINUTES: i64 = 15;

#[derive(Debug, Clone, Copy, serde::Deserialize, serde::Serialize)]
struct Streak {
    count: u32,
    last: DateTime<Utc>,
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Moderation {
    #[serde(with = "super::persist::pairs")]
    streaks: HashMap<(UserId, String), Streak>,
}

impl Moderation {
    pub fn rejected(&mut self, user_id: UserId, model: &str, at: DateTime<Utc>) {
        let streak = self
            .streaks
            .entry((user_id, model.to_owned()))
            .or_insert(Streak { count: 0, last: at });
        streak.count += 1;
        streak.last = at;
    }

    pub fn succeeded(&mut self, user_id: UserId, model: &str) {
        self.streaks.remove(&(user_id, model.to_owned()));
    }

    /// The length of the series when the user is blocked on the model now.
    pub fn blocked(&self, user_id: UserId, model: &str, now: DateTime<Utc>) -> Option<u32> {
        let streak = self.streaks.get(&(user_id, model.to_owned()))?;
        (streak.count >= THRESHOLD && now < streak.last + Duration::minutes(PAUSE_MINUTES))
            .then_some(streak.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_rejections_in_a_row_block_the_model_for_a_while() {
        let mut m = Moderation::default();
        let (user, t0) = (UserId::new_v4(), Utc::now());
        m.rejected(user, "a", t0);
        m.rejected(user, "a", t0);
        assert_eq!(m.blocked(user, "a", t0), None);
        m.rejected(user, "a", t0);
        assert_eq!(m.blocked(user, "a", t0), Some(3));
        assert_eq!(m.blocked(user, "b", t0), None);
        assert_eq!(
            m.blocked(user, "a", t0 + Duration::minutes(PAUSE_MINUTES)),
            None
        );
    }

    #[test]
    fn a_success_ends_the_series() {
        let mut m = Moderation::default();
        let (user, t0) = (UserId::new_v4(), Utc::now());
        m.rejected(user, "a", t0);
        m.rejected(user, "a", t0);
        m.succeeded(user, "a");
        m.rejected(user, "a", t0);
        assert_eq!(m.blocked(user, "a", t0), None);
    }
}
