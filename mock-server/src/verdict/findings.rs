//! The findings made so far: one per rule and subject (a client and a route,
//! an endpoint…), counted each time it is made again.

use chrono::{DateTime, Utc};
use smallvec::SmallVec;

use super::rules::Rule;
use super::{Endpoint, Finding};
use crate::domain::{FastMap, UserId};

/// The places of the findings one request or delivery made: rarely more
/// than one, kept without an allocation.
pub(crate) type Places = SmallVec<[usize; 4]>;

/// Request ids a finding keeps: the first ones that showed it.
const IDS_KEPT: usize = 10;
/// Findings kept apart at most; past this, a rule's new subjects count
/// towards the rule's first finding, so that a client with a million users
/// cannot grow the verdict without bound.
const GROUPS: usize = 1000;

/// Who sent a request: its user, or its address when it has none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Client {
    User(UserId),
    Address(String),
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::User(user) => write!(f, "user {user}"),
            Self::Address(ip) => write!(f, "address {ip}"),
        }
    }
}

/// What a finding is about. A client alone, the subject of the findings a
/// busy client can make on every request (creates without a key, reads of an
/// ended generation), is kept as it is: a repeat of such a finding writes
/// nothing out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Subject {
    Client(Client),
    /// A client and a route or a limit, an endpoint…, in words.
    Text(String),
}

#[derive(Debug, Default)]
pub(super) struct Findings {
    list: Vec<Finding>,
    index: FastMap<(Rule, Subject), usize>,
    first_of_rule: FastMap<Rule, usize>,
}

/// One finding made now.
pub(super) struct Made<'a> {
    pub rule: Rule,
    /// What it is about: the client, its route, the endpoint…
    pub subject: Subject,
    pub at: DateTime<Utc>,
    pub ids: &'a [&'a str],
    /// For a receiver's finding, its endpoint: `ids` are then the
    /// deliveries' `webhook-id`s.
    pub endpoint: Option<&'a Endpoint>,
    /// What happened, in words: written only for a new finding.
    pub message: &'a dyn Fn() -> String,
}

impl Findings {
    /// Records a finding; returns its place.
    pub(super) fn make(&mut self, made: Made<'_>) -> usize {
        let Made {
            rule,
            subject,
            at,
            ids,
            endpoint,
            message,
        } = made;
        let key = (rule, subject);
        let kept = match self.index.get(&key) {
            Some(&place) => Some(place),
            None if self.list.len() >= GROUPS => self.first_of_rule.get(&rule).copied(),
            None => None,
        };
        let Some(place) = kept else {
            return self.first(key, at, ids, endpoint, message);
        };
        let finding = &mut self.list[place];
        finding.count += 1;
        keep_ids(&mut finding.request_ids, ids);
        if let Some(kept) = &mut finding.message_ids {
            keep_ids(kept, ids);
        }
        place
    }

    /// A finding made for the first time: written out in words, once.
    #[cold]
    fn first(
        &mut self,
        (rule, subject): (Rule, Subject),
        at: DateTime<Utc>,
        ids: &[&str],
        endpoint: Option<&Endpoint>,
        message: &dyn Fn() -> String,
    ) -> usize {
        let place = self.list.len();
        let mut kept = Vec::new();
        keep_ids(&mut kept, ids);
        self.list.push(Finding {
            rule: rule.id().to_owned(),
            severity: rule.severity(),
            message: message(),
            document_rule: rule.document_rule().to_owned(),
            advice: rule.advice().to_owned(),
            endpoint: endpoint.cloned(),
            message_ids: endpoint.map(|_| kept.clone()),
            request_ids: kept,
            first_at: at,
            count: 1,
            fails: rule.severity() == super::Severity::Violation,
        });
        self.index.insert((rule, subject), place);
        self.first_of_rule.entry(rule).or_insert(place);
        place
    }

    /// The findings at `places`, as they stand.
    pub(super) fn current(&self, places: &[usize]) -> Vec<Finding> {
        places.iter().map(|&p| self.list[p].clone()).collect()
    }

    pub(super) fn all(&self) -> Vec<Finding> {
        self.list.clone()
    }
}

/// Adds the ids not kept yet, up to [`IDS_KEPT`].
fn keep_ids(kept: &mut Vec<String>, ids: &[&str]) {
    for id in ids {
        if kept.len() >= IDS_KEPT {
            break;
        }
        if !kept.iter().any(|k| k == id) {
            kept.push((*id).to_owned());
        }
    }
}
