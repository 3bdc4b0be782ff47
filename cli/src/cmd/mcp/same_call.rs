//! When two `generate` calls are one, and so get one `Idempotency-Key` (the
//! service's rule 7 of `POST /v1/generations` then returns the first generation
//! and charges once):
//!
//! 1. The same `requestId` and the same arguments (model, prompt, params, compared
//!    as JSON values, key order aside): the key is derived from them alone, so it
//!    holds across reconnections and restarts of the server.
//! 2. Without a `requestId`: a call with the same arguments as a call the client
//!    abandoned (cancelled, as a client does when its request times out) before it
//!    returned, on this server. The abandoned call's key is used once more.
//!
//! Anything else is a new call and a new generation.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// What names a call: its model, prompt and params, in one canonical text.
pub fn fingerprint(model: &str, prompt: &str, params: &Map<String, Value>) -> String {
    let mut text = String::new();
    canonical(
        &serde_json::json!({ "model": model, "prompt": prompt, "params": params }),
        &mut text,
    );
    text
}

/// The `Idempotency-Key` of a call with `request_id` and `fingerprint`: a UUID
/// (the shape the service's keys have elsewhere) of their SHA-256.
pub fn derived_key(request_id: &str, fingerprint: &str) -> String {
    let mut hash = Sha256::new();
    // Lengths first, so that no two pairs of texts give the same input.
    hash.update(b"mediagen mcp generate v1\0");
    hash.update((request_id.len() as u64).to_be_bytes());
    hash.update(request_id.as_bytes());
    hash.update(fingerprint.as_bytes());
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// Whether the client has abandoned a call (cancelled it).
pub type Abandoned = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// The calls without a `requestId` that run, or were abandoned, by fingerprint,
/// for rule 2. A client cancels a call before it sends it again, so the first is
/// known as abandoned by then, even if it has not yet returned.
#[derive(Default)]
pub struct Calls {
    next: u64,
    calls: HashMap<String, Vec<Call>>,
}

struct Call {
    id: u64,
    key: String,
    abandoned: Abandoned,
}

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls")
            .field("fingerprints", &self.calls.len())
            .finish_non_exhaustive()
    }
}

impl Calls {
    /// Enters a call with `fingerprint`: its number, for [`finish`](Self::finish),
    /// and its key, which is an abandoned call's with the same arguments when there
    /// is one (taken over, so only once), else a new one.
    pub fn start(&mut self, fingerprint: &str, abandoned: Abandoned) -> (u64, String) {
        let calls = self.calls.entry(fingerprint.to_owned()).or_default();
        let key = match calls.iter().position(|call| (call.abandoned)()) {
            Some(at) => calls.remove(at).key,
            None => Uuid::new_v4().to_string(),
        };
        self.next += 1;
        calls.push(Call {
            id: self.next,
            key: key.clone(),
            abandoned,
        });
        (self.next, key)
    }

    /// The call `id` returned: unless it was abandoned, nothing can resume it.
    pub fn finish(&mut self, fingerprint: &str, id: u64) {
        if let Some(calls) = self.calls.get_mut(fingerprint) {
            calls.retain(|call| call.id != id || (call.abandoned)());
            if calls.is_empty() {
                self.calls.remove(fingerprint);
            }
        }
    }
}

/// JSON with the members of every object in the order of their names.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(members) => {
            let mut names: Vec<&String> = members.keys().collect();
            names.sort();
            out.push('{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(&members[name], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_same_request_id_and_arguments_give_the_same_key_whatever_the_order() {
        let a = fingerprint(
            "flux-schnell",
            "a fox",
            &params(json!({"aspect_ratio": "1:1", "resolution": "1k"})),
        );
        let b = fingerprint(
            "flux-schnell",
            "a fox",
            &params(json!({"resolution": "1k", "aspect_ratio": "1:1"})),
        );
        assert_eq!(derived_key("r1", &a), derived_key("r1", &b));
        assert!(Uuid::parse_str(&derived_key("r1", &a)).is_ok());
    }

    #[test]
    fn another_request_id_or_other_arguments_give_another_key() {
        let a = fingerprint("flux-schnell", "a fox", &Map::new());
        let b = fingerprint("flux-schnell", "a fox ", &Map::new());
        assert_ne!(derived_key("r1", &a), derived_key("r2", &a));
        assert_ne!(derived_key("r1", &a), derived_key("r1", &b));
    }

    #[test]
    fn an_abandoned_call_is_taken_over_once_by_the_next_with_its_arguments() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};

        let mut calls = Calls::default();
        let cancelled = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancelled);
        let (first, key) = calls.start("f", Arc::new(move || flag.load(Ordering::SeqCst)));
        let running: Abandoned = Arc::new(|| false);
        // Running and not abandoned: a second call with the same arguments is another.
        let (second, other) = calls.start("f", Arc::clone(&running));
        assert_ne!(other, key);
        calls.finish("f", second);
        cancelled.store(true, Ordering::SeqCst);
        let (third, again) = calls.start("f", Arc::clone(&running));
        assert_eq!(again, key);
        calls.finish("f", first);
        calls.finish("f", third);
        assert_ne!(calls.start("f", Arc::clone(&running)).1, key);
        assert_ne!(calls.start("g", running).1, key);
    }
}
