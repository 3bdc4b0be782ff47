//! The mock's verdict on a client: what the requests and deliveries of one world
//! show about the client's handling of the service document's rules.
//!
//! The middleware hands each request to the [`Judge`] once it is answered (or
//! dropped), and the deliverer each delivery attempt; the judge keeps what the
//! rules need of them and makes its findings at once, so that reading the
//! verdict costs the number of findings, not the number of requests. What it
//! keeps is bounded like the request log (`--retain`).
//!
//! Timing is judged as the client lives it, in seconds at the network edge
//! ([`Clock::edge_time`](crate::clock::Clock::edge_time)): real seconds,
//! plus the seconds a manual clock was moved forward, whatever the world's
//! clock does. `retry-after` is given in those seconds.
//!
//! Plain Rust: the middleware and the deliverer feed it (`judged.rs`), and
//! `control/verdict.rs` serves it.

mod deliveries;
mod findings;
mod requests;
pub(crate) mod rules;
mod seen;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::hash::Hash;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::domain::{FastMap, UserId};
pub(crate) use deliveries::{DeliverySeen, Probe};
use findings::Findings;
pub(crate) use findings::Places;
pub use rules::{Severity, Strict, UnknownRule, known_ids};
pub(crate) use seen::{Cut, Seen, Shown};

/// The verdict on a world's client (`GET /_mock/verdict`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Verdict {
    /// True when no finding is a violation; advice does not spoil it.
    pub clean: bool,
    /// Every finding, in the order they were first made.
    pub findings: Vec<Finding>,
    /// What the verdict read.
    pub checked: Checked,
}

/// What a verdict read since the world started or the verdict was reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Checked {
    /// Requests of the service.
    pub requests: u64,
    /// Webhook delivery attempts, probes included.
    pub deliveries: u64,
}

/// One way the client breaks, or strays from, a rule of the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Finding {
    /// The rule's id, such as `create-retry-new-key`.
    pub rule: String,
    /// `violation` or `advice`.
    pub severity: Severity,
    /// What happened, in words, the first time.
    pub message: String,
    /// The rule of the service document it rests on.
    pub document_rule: String,
    /// What a correct client does.
    pub advice: String,
    /// The requests that show it: the first ones. A receiver's finding
    /// carries its `message_ids` here too, until the next release.
    pub request_ids: Vec<String>,
    /// For a receiver's finding: the webhook endpoint it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
    /// For a receiver's finding: the `webhook-id`s of the deliveries that
    /// show it, the first ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_ids: Option<Vec<String>>,
    /// When it was first made, on the world's clock.
    pub first_at: DateTime<Utc>,
    /// How many times it was made.
    pub count: u64,
    /// Whether it spoils `clean`: a violation, or a rule the reader chose
    /// to be strict on ([`Strict`]).
    #[serde(default)]
    pub fails: bool,
}

/// The webhook endpoint a receiver's finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Endpoint {
    /// Its id.
    pub id: String,
    /// The URL the deliveries went to.
    pub url: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let severity = match self.severity {
            Severity::Violation => "violation",
            Severity::Advice => "advice",
        };
        write!(
            f,
            "{} ({severity}, x{}): {} [{}] -> {}; ",
            self.rule, self.count, self.message, self.document_rule, self.advice,
        )?;
        match (&self.endpoint, &self.message_ids) {
            (Some(endpoint), Some(ids)) => write!(
                f,
                "endpoint {} ({}), messages {}",
                endpoint.id,
                endpoint.url,
                ids.join(", ")
            ),
            _ => write!(f, "requests {}", self.request_ids.join(", ")),
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} after {} requests and {} deliveries",
            if self.clean { "clean" } else { "not clean" },
            self.checked.requests,
            self.checked.deliveries
        )?;
        for finding in &self.findings {
            write!(f, "\n  - {finding}")?;
        }
        Ok(())
    }
}

/// What the judge asks the world's store about, at the moment it judges.
pub(crate) trait Facts {
    /// The user's generations in `PENDING` or `PROCESSING`.
    fn active_tasks(&self, user: UserId) -> Vec<Uuid>;
    /// Whether any of `ids` has reached a final state (or is forgotten).
    fn any_ended(&self, ids: &[Uuid]) -> bool;
    /// The user's available balance, in kopecks.
    fn available(&self, user: UserId) -> i64;
}

/// The verdict's bookkeeping for one world.
#[derive(Debug)]
pub(crate) struct Judge {
    /// Records of each kind kept at most (the request log's `--retain` count).
    cap: usize,
    checked: Checked,
    findings: Findings,
    requests: requests::Requests,
}

/// Records kept when `--retain` sets no count.
const DEFAULT_CAP: usize = 100_000;

impl Judge {
    /// A judge keeping at most `cap` records of each kind (`None`: the default).
    pub(crate) fn new(cap: Option<usize>) -> Self {
        let cap = cap.unwrap_or(DEFAULT_CAP).max(1);
        Self {
            cap,
            checked: Checked {
                requests: 0,
                deliveries: 0,
            },
            findings: Findings::default(),
            requests: requests::Requests::new(cap),
        }
    }

    /// Starts over: no finding, nothing checked (`DELETE /_mock/verdict`).
    pub(crate) fn reset(&mut self) {
        *self = Self::new(Some(self.cap));
    }

    /// Judges one answered request; returns the places of the findings it
    /// made, for [`current`](Self::current).
    pub(crate) fn request(&mut self, seen: &Seen<'_>, facts: &dyn Facts) -> Places {
        self.checked.requests += 1;
        self.requests.judge(seen, facts, &mut self.findings)
    }

    /// Judges one delivery attempt or probe; returns the places of the
    /// findings it made.
    pub(crate) fn delivery(&mut self, seen: &DeliverySeen) -> Places {
        self.checked.deliveries += 1;
        deliveries::judge(seen, &mut self.findings)
    }

    /// The findings at `places`, as they stand now. Copied only for a reader
    /// of the live journal: the request path pays for none otherwise.
    pub(crate) fn current(&self, places: &[usize]) -> Vec<Finding> {
        self.findings.current(places)
    }

    /// The verdict as it stands, failing on violations and the rules
    /// `strict` chooses.
    pub(crate) fn verdict(&self, strict: &Strict) -> Verdict {
        let mut findings = self.findings.all();
        for finding in &mut findings {
            finding.fails = strict.fails(&finding.rule, finding.severity);
        }
        Verdict {
            clean: !findings.iter().any(|f| f.fails),
            findings,
            checked: self.checked,
        }
    }
}

/// A map that forgets its oldest-inserted keys beyond `cap`.
#[derive(Debug)]
pub(crate) struct Bounded<K, V> {
    cap: usize,
    /// Each value with the stamp of its insertion.
    map: FastMap<K, (u64, V)>,
    /// Keys in the order of insertion, with their stamps: a key removed and
    /// inserted again has a newer stamp, so its old place forgets nothing.
    order: VecDeque<(K, u64)>,
    stamp: u64,
}

impl<K: Hash + Eq + Clone, V> Bounded<K, V> {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            map: FastMap::default(),
            order: VecDeque::new(),
            stamp: 0,
        }
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key).map(|(_, v)| v)
    }

    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.map.get_mut(key).map(|(_, v)| v)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        self.map.remove(key).map(|(_, v)| v)
    }

    /// Inserts or replaces; a replaced value keeps its place in the order.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        if let Some(slot) = self.map.get_mut(&key) {
            slot.1 = value;
            return;
        }
        self.stamp += 1;
        self.map.insert(key.clone(), (self.stamp, value));
        self.order.push_back((key, self.stamp));
        // Places of removed keys go as they reach the front, so `order`
        // stays within twice the cap.
        while self.map.len() > self.cap || self.order.len() > 2 * self.cap {
            let Some((oldest, stamp)) = self.order.pop_front() else {
                break;
            };
            if self.map.get(&oldest).is_some_and(|(s, _)| *s == stamp) {
                self.map.remove(&oldest);
            }
        }
    }
}
