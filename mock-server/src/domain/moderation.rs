//! MODERATION_REPEAT_BLOCKED: after consecutive moderation rejections on a
//! model, requests to it are stopped for a while.
//!
//! The service document names the error and its `details.streak`; the
//! threshold and the pause are not shown. The mock blocks a user on a model
//! after 3 rejections in a row, for 15 minutes after the last one; a success
//! ends the series.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::UserId;

pub const THRESHOLD: u32 = 3;
pub const PAUSE_MINUTES: i64 = 15;

#[derive(Debug, Clone, Copy, serde::Deserialize, serde::Serialize)]
struct Streak {
    count: u32,
    last: DateTime<Utc>,
}

/// Ordered by user, so that a create looks its user's series up without
/// making a key: most users have none, and every create asks.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct Moderation {
    #[serde(with = "super::persist::pairs")]
    streaks: BTreeMap<(UserId, String), Streak>,
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
        if let Some((key, _)) = self.streak(user_id, model) {
            let key = key.clone();
            self.streaks.remove(&key);
        }
    }

    /// The length of the series when the user is blocked on the model now.
    pub fn blocked(&self, user_id: UserId, model: &str, now: DateTime<Utc>) -> Option<u32> {
        let (_, streak) = self.streak(user_id, model)?;
        (streak.count >= THRESHOLD && now < streak.last + Duration::minutes(PAUSE_MINUTES))
            .then_some(streak.count)
    }

    /// The user's series on the model, found among the user's own (the empty
    /// name sorts first and costs no allocation).
    fn streak(&self, user_id: UserId, model: &str) -> Option<(&(UserId, String), &Streak)> {
        self.streaks
            .range((user_id, String::new())..)
            .take_while(|((user, _), _)| *user == user_id)
            .find(|((_, name), _)| name == model)
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

    #[test]
    fn a_series_is_the_users_own_on_its_model() {
        let mut m = Moderation::default();
        let t0 = Utc::now();
        let users = [
            UserId::from_u128(1),
            UserId::from_u128(2),
            UserId::from_u128(3),
        ];
        for user in users {
            for model in ["a", "b", "c"] {
                m.rejected(user, model, t0);
                m.rejected(user, model, t0);
                m.rejected(user, model, t0);
            }
        }
        m.succeeded(users[1], "b");

        assert_eq!(m.blocked(users[1], "b", t0), None, "ended by its success");
        for (user, model) in [
            (users[1], "a"),
            (users[1], "c"),
            (users[0], "b"),
            (users[2], "b"),
        ] {
            assert_eq!(m.blocked(user, model, t0), Some(3), "{user} on {model}");
        }
        assert_eq!(m.blocked(UserId::from_u128(4), "a", t0), None);
    }
}
