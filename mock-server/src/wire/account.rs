//! The account that owns the key, and the dashboard summary.

use serde_json::{Map, Value, json};

use super::timestamp;
use crate::domain::generation::{MAX_ACTIVE, Status};
use crate::domain::ledger::Account;
use crate::domain::user::User;
use crate::domain::webhook::MAX_ENDPOINTS;
use mediagen_openapi::operations::LimitScope;

/// The account: its owner, balance and limits.
pub fn account(owner: &User, balance: &Account) -> Value {
    json!({
        "id": owner.id,
        "email": owner.email,
        "name": null,
        "balanceRub": balance.available,
        "reservedRub": balance.reserved,
        "limits": {
            "concurrentGenerations": MAX_ACTIVE,
            "webhookEndpoints": MAX_ENDPOINTS,
            "requestsPerMinute": LimitScope::General.default_limit(),
        },
        "createdAt": timestamp(owner.created_at),
    })
}

/// Generations counted by status, every status present.
pub fn status_counts(statuses: impl Iterator<Item = Status>) -> Value {
    let mut map = Map::new();
    for status in Status::ALL {
        map.insert(status_name(status), json!(0));
    }
    for status in statuses {
        let key = status_name(status);
        let n = map.get(&key).and_then(Value::as_u64).unwrap_or(0);
        map.insert(key, json!(n + 1));
    }
    Value::Object(map)
}

fn status_name(status: Status) -> String {
    json!(status).as_str().unwrap_or_default().to_owned()
}
