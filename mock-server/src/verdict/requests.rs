//! The client's side: each request judged against what came before it from the
//! same client.
//!
//! "The same request" is the same client (its user, or its address when it has
//! none), method, path, query and body; the `Idempotency-Key` is not part of it,
//! so that a create sent again with another key is the same create.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash, Hasher};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::findings::{Client, Findings, Made, Places, Subject};
use super::rules::Rule;
use super::{Bounded, Facts};
use crate::domain::UserId;

/// Seconds of slack on a wait told in whole seconds: a client that waits
/// exactly `retry-after` from the moment it read the answer is never early.
const SLACK: f64 = 0.01;
/// Seconds after a 429 within which another request of the client may still
/// have been on its way before the client read the 429. A repeat of the
/// refused request itself gets no such grace.
const GRACE: f64 = 0.25;
/// The first delay the document recommends before a retry (Limits, rule 5).
const FIRST_DELAY: f64 = 1.0;
/// Attempts of one request the document allows (Limits, rule 5).
const MAX_ATTEMPTS: u32 = 5;
/// Retries before the delays between them are judged.
const JUDGED_RETRIES: usize = 3;
/// A later delay at least this many times the first, plus [`GROWTH_NOISE`],
/// shows the delays grow.
const GROWTH: f64 = 1.5;
/// Seconds of scheduling noise a delay may differ by.
const GROWTH_NOISE: f64 = 0.005;
/// The general limit: requests per window, and the window in seconds.
const GENERAL_MAX: usize = 60;
const GENERAL_WINDOW: f64 = 60.0;

/// How the connection of a request ended, when not with the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Cut {
    /// The answer was sent.
    #[default]
    No,
    /// An injected fault closed the connection before the service acted.
    Dropped,
    /// An injected fault closed the connection after the service acted.
    DroppedAfter,
}

/// The scope of a windowed limit that refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum WindowScope {
    /// The general limit: every request from the address.
    General,
    /// A route's own limit per address or per user, by the limit's name.
    Route(&'static str),
}

/// What a `GET /v1/generations/{id}` answered 200 showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shown {
    pub id: Uuid,
    /// `SUCCEEDED`, `FAILED` or another final state.
    pub final_state: Option<&'static str>,
}

/// One answered request, as the edge saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seen<'a> {
    /// `x-request-id`.
    pub id: &'a str,
    /// When it arrived, on the world's clock.
    pub at: DateTime<Utc>,
    /// Edge seconds when it arrived.
    pub sent: f64,
    /// Edge seconds when its answer went out (later than `sent` under a
    /// delaying fault).
    pub answered: f64,
    pub method: &'a str,
    pub path: &'a str,
    pub ip: &'a str,
    pub user: Option<UserId>,
    pub key: Option<&'a str>,
    /// A digest of the query and the body.
    pub digest: u64,
    pub status: Option<u16>,
    pub code: Option<&'a str>,
    /// Seconds of `retry-after`, when the answer had one.
    pub retry_after: Option<u64>,
    pub cut: Cut,
    /// For a windowed 429: the limit that refused it.
    pub window: Option<WindowScope>,
    /// For a generation read answered 200: what it showed.
    pub shown: Option<Shown>,
    /// The user's active tasks when it arrived.
    pub active: usize,
}

impl Seen<'_> {
    fn is_create(&self) -> bool {
        self.method == "POST" && self.path.trim_end_matches('/') == "/v1/generations"
    }

    /// Whether sending it twice may act twice: any `POST` but a create with
    /// its key and the estimate (a computation), and `PATCH`.
    fn unsafe_to_repeat(&self) -> bool {
        match self.method {
            "PATCH" => true,
            "POST" => !self.is_create() && !self.path.ends_with("/estimate"),
            _ => false,
        }
    }

    /// The client: its user, or its address.
    fn client(&self) -> Client {
        match self.user {
            Some(user) => Client::User(user),
            None => Client::Address(self.ip.to_owned()),
        }
    }

    /// The generation a read reads, from its path.
    fn read_generation(&self) -> Option<Uuid> {
        if self.method != "GET" {
            return None;
        }
        // An answered read says which: its handler parsed the id already.
        if let Some(shown) = self.shown {
            return Some(shown.id);
        }
        let id = self.path.strip_prefix("/v1/generations/")?;
        Uuid::parse_str(id.trim_end_matches('/')).ok()
    }
}

/// The path with its ids as `{id}`, to group findings by route.
fn route(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment != "v1" && segment.bytes().any(|b| b.is_ascii_digit()) {
                "{id}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// What the last answer to one request was.
#[derive(Debug, Clone)]
struct Last {
    id: String,
    key: Option<String>,
    sent: f64,
    answered: f64,
    status: Option<u16>,
    code: Option<String>,
    retry_after: Option<u64>,
    cut: Cut,
    /// The user's available kopecks when a 402 was answered.
    available: Option<i64>,
    chain: Chain,
}

/// Attempts of one request after answers the document says to retry.
#[derive(Debug, Clone, Default)]
struct Chain {
    attempts: u32,
    /// Delays before each retry not held up by a `retry-after`, in edge seconds.
    free_delays: Vec<f64>,
    judged: bool,
}

impl Last {
    /// How the client cannot know whether it acted: `None` when it can.
    fn unknown_outcome(&self, resent_at: f64) -> Option<String> {
        if resent_at < self.answered {
            // Sent again while the first hung: after a time-out, unless the
            // two were sent together (two creates of one prompt, each with
            // its own key, are two generations).
            return (resent_at - self.sent >= GRACE).then(|| "a time-out".to_owned());
        }
        match (self.cut, self.status) {
            (Cut::Dropped | Cut::DroppedAfter, _) => Some("a dropped connection".to_owned()),
            // The document says these did not act (no generation, no money).
            _ if matches!(
                self.code.as_deref(),
                Some("MARGIN_GUARD" | "UPSTREAM_CIRCUIT_OPEN")
            ) =>
            {
                None
            }
            (_, Some(status)) if status >= 500 => Some(format!("a {status}")),
            _ => None,
        }
    }

    fn retryable(&self) -> bool {
        retryable(self.code.as_deref(), self.retry_after)
    }

    fn final_error(&self) -> bool {
        final_error(self.status, self.code.as_deref())
    }

    fn answer(&self) -> String {
        match (self.status, self.code.as_deref()) {
            (Some(status), Some(code)) => format!("{status} {code}"),
            (Some(status), None) => status.to_string(),
            (None, _) => "no answer".to_owned(),
        }
    }
}

/// Whether the document says to retry this answer with a growing delay.
fn retryable(code: Option<&str>, retry_after: Option<u64>) -> bool {
    match code {
        Some("RATE_LIMIT_ERROR") => retry_after.is_some(),
        Some("SERVICE_UNAVAILABLE") => true,
        Some(code) => code.starts_with("GATEWAY_") || code.starts_with("BILLING_"),
        None => false,
    }
}

/// Whether the document says a retry of the same request does not fix it.
fn final_error(status: Option<u16>, code: Option<&str>) -> bool {
    matches!(status, Some(402 | 404 | 410))
        || matches!(
            code,
            Some("VALIDATION_ERROR" | "MODEL_UNAVAILABLE" | "MODEL_NOT_AVAILABLE")
        )
}

/// A windowed 429 the client got, until its `retry-after` passed.
#[derive(Debug, Clone)]
struct Closed {
    id: String,
    request: u64,
    answered: f64,
    retry_after: u64,
}

/// A concurrency 429 of a user, until one of its tasks ends.
#[derive(Debug, Clone)]
struct Full {
    id: String,
    request: u64,
    answered: f64,
    active: Vec<Uuid>,
    /// How long the create it answered waited after the 429 before it (0
    /// for the first).
    waited: f64,
}

#[derive(Debug)]
pub(super) struct Requests {
    hasher: foldhash::fast::FixedState,
    last: Bounded<u64, Last>,
    closed: Bounded<(Client, WindowScope), Closed>,
    full: Bounded<UserId, Full>,
    /// Edge seconds of the recent reads of each active generation.
    reads: Bounded<(UserId, Uuid), VecDeque<f64>>,
    /// Generations an answer showed in a final state.
    ended: Bounded<(UserId, Uuid), ()>,
}

impl Requests {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            hasher: foldhash::fast::FixedState::default(),
            last: Bounded::new(cap),
            closed: Bounded::new(cap),
            full: Bounded::new(cap),
            reads: Bounded::new(cap),
            ended: Bounded::new(cap),
        }
    }

    fn identity(&self, seen: &Seen<'_>) -> u64 {
        let mut h = self.hasher.build_hasher();
        seen.user.hash(&mut h);
        if seen.user.is_none() {
            seen.ip.hash(&mut h);
        }
        seen.method.hash(&mut h);
        seen.path.hash(&mut h);
        seen.digest.hash(&mut h);
        h.finish()
    }

    /// Judges one request against what came before it from the same client.
    /// The common requests (a first create, a read) take only the checks
    /// written here; each rule that needs an earlier answer or a closed
    /// window is a function of its own, out of the way of the hot path.
    pub(super) fn judge(
        &mut self,
        seen: &Seen<'_>,
        facts: &dyn Facts,
        findings: &mut Findings,
    ) -> Places {
        let identity = self.identity(seen);
        let client = seen.client();
        let mut found = Found {
            findings,
            at: seen.at,
            places: Places::new(),
        };
        // Taken out, not copied: `remember` puts this request's record in its
        // place, when it keeps one.
        let prev = self.last.remove(&identity);

        if let Some(p) = &prev {
            repeat_of_unknown_outcome(p, seen, &client, &mut found);
        }
        if seen.is_create() && seen.key.is_none() {
            found.find(
                Rule::CreateWithoutKey,
                Subject::Client(client.clone()),
                &[seen.id],
                &|| {
                    "POST /v1/generations was sent without an Idempotency-Key: a retry of it could charge twice".to_owned()
                },
            );
        }
        if !self.closed.is_empty() {
            self.inside_closed_windows(seen, identity, &client, &mut found);
        }
        let chain = match prev.as_ref().filter(|p| p.retryable()) {
            Some(p) => retry_chain(p, seen, &client, &mut found),
            None => Chain {
                attempts: 1,
                ..Chain::default()
            },
        };
        let full_wait = match seen.user {
            Some(user) if seen.is_create() && !self.full.is_empty() => {
                self.concurrency_loop(seen, user, identity, &client, facts, &mut found)
            }
            _ => None,
        };
        if let Some(p) = prev.as_ref().filter(|p| p.final_error()) {
            repeat_final_error(p, seen, &client, facts, &mut found);
        }
        if let Some(user) = seen.user
            && let Some(generation) = seen.read_generation()
        {
            self.reads_of(seen, (user, generation), &client, &mut found);
        }

        self.remember(seen, identity, chain, client, full_wait, facts);
        found.places
    }

    /// A request inside a window a 429 closed, before its `retry-after`.
    #[cold]
    fn inside_closed_windows(
        &mut self,
        seen: &Seen<'_>,
        identity: u64,
        client: &Client,
        found: &mut Found<'_>,
    ) {
        for scope in scopes(seen) {
            let key = (client.clone(), scope);
            let Some(closed) = self.closed.get(&key).cloned() else {
                continue;
            };
            let until = closed.answered + closed.retry_after as f64;
            if seen.sent >= until - SLACK {
                self.closed.remove(&key);
                continue;
            }
            let waited = seen.sent - closed.answered;
            if closed.request == identity || waited > GRACE {
                let limit = match scope {
                    WindowScope::General => "the general limit".to_owned(),
                    WindowScope::Route(name) => format!("the {name} limit"),
                };
                found.find(
                    Rule::RetryBeforeRetryAfter,
                    Subject::Text(format!("{client}: {limit}")),
                    &[&closed.id, seen.id],
                    &|| {
                        format!(
                            "{} {} was sent {:.2} s after a 429 of {limit} whose retry-after was {} s",
                            seen.method,
                            seen.path,
                            waited.max(0.0),
                            closed.retry_after
                        )
                    },
                );
            }
        }
    }

    /// A create while the user's 5 tasks are all still active, in a loop:
    /// sooner than the first delay the document recommends, or at a pace
    /// that does not slow down. A client that cannot see the tasks that hold
    /// the slots (another process made them) can only try again; one that
    /// backs off is not looping. Returns how long it waited after the 429.
    #[cold]
    fn concurrency_loop(
        &mut self,
        seen: &Seen<'_>,
        user: UserId,
        identity: u64,
        client: &Client,
        facts: &dyn Facts,
        found: &mut Found<'_>,
    ) -> Option<f64> {
        let full = self.full.get(&user)?;
        if seen.sent < full.answered {
            return None;
        }
        if facts.any_ended(&full.active) {
            self.full.remove(&user);
            return None;
        }
        let waited = seen.sent - full.answered;
        let looping = waited < FIRST_DELAY - SLACK || waited < full.waited + GROWTH_NOISE;
        if looping && (full.request == identity || waited > GRACE) {
            found.find(
                Rule::ConcurrencyRetryLoop,
                Subject::Client(client.clone()),
                &[&full.id, seen.id],
                &|| {
                    let before = if full.waited > 0.0 {
                        format!(", after a wait of {:.2} s before", full.waited)
                    } else {
                        String::new()
                    };
                    format!(
                        "POST /v1/generations was sent {waited:.2} s after the 429 of 5 active tasks, before any of them ended{before}"
                    )
                },
            );
        }
        Some(waited)
    }

    /// Reads of one generation: after an answer showed it ended, or more
    /// often than the general limit sustains.
    fn reads_of(
        &mut self,
        seen: &Seen<'_>,
        key: (UserId, Uuid),
        client: &Client,
        found: &mut Found<'_>,
    ) {
        let generation = key.1;
        if self.ended.get(&key).is_some() {
            found.find(
                Rule::ReadAfterFinal,
                Subject::Client(client.clone()),
                &[seen.id],
                &|| {
                    format!(
                        "generation {generation} was read again after an answer showed it in a final state"
                    )
                },
            );
            return;
        }
        if seen.status != Some(200) {
            return;
        }
        let mut reads = self.reads.remove(&key).unwrap_or_default();
        reads.push_back(seen.sent);
        while reads
            .front()
            .is_some_and(|&t| t <= seen.sent - GENERAL_WINDOW)
        {
            reads.pop_front();
        }
        let allowed = poll_allowance(seen.active);
        // Whether the reads pass `allowed` is all that is judged: a client
        // hammering one generation keeps no more than that.
        while reads.len() > allowed + 1 {
            reads.pop_front();
        }
        if reads.len() > allowed {
            found.find(
                Rule::PollRate,
                Subject::Client(client.clone()),
                &[seen.id],
                &|| {
                    format!(
                        "generation {generation} was read more than {allowed} times within 60 s while the user had {} active task(s): {allowed} is its share of the general limit of {GENERAL_MAX} a minute",
                        seen.active.max(1)
                    )
                },
            );
        }
        if seen.shown.is_some_and(|s| s.final_state.is_some()) {
            self.ended.insert(key, ());
        } else {
            self.reads.insert(key, reads);
        }
    }

    /// Keeps what later requests are judged against.
    fn remember(
        &mut self,
        seen: &Seen<'_>,
        identity: u64,
        chain: Chain,
        client: Client,
        full_wait: Option<f64>,
        facts: &dyn Facts,
    ) {
        if seen.status == Some(429) && seen.code == Some("RATE_LIMIT_ERROR") {
            match (seen.retry_after, seen.window) {
                (Some(retry_after), Some(scope)) => self.closed.insert(
                    (client, scope),
                    Closed {
                        id: seen.id.to_owned(),
                        request: identity,
                        answered: seen.answered,
                        retry_after,
                    },
                ),
                (None, _) if seen.is_create() => {
                    if let Some(user) = seen.user {
                        self.full.insert(
                            user,
                            Full {
                                id: seen.id.to_owned(),
                                request: identity,
                                answered: seen.answered,
                                active: facts.active_tasks(user),
                                waited: full_wait.unwrap_or(0.0),
                            },
                        );
                    }
                }
                _ => {}
            }
        }
        // Only an answer a repeat is judged against is kept: one whose
        // outcome the client cannot know (none, a 5xx, one that hung long
        // enough for a time-out), one to retry, one a retry does not fix.
        // Keeping nothing for any other (successes above all) is the same
        // as keeping it, and the most frequent answers cost no record.
        let unknown = seen.cut != Cut::No
            || seen.status.is_none_or(|status| status >= 500)
            || seen.answered - seen.sent >= GRACE;
        if !unknown
            && !retryable(seen.code, seen.retry_after)
            && !final_error(seen.status, seen.code)
        {
            return;
        }
        let available = match (seen.status, seen.user) {
            (Some(402), Some(user)) => Some(facts.available(user)),
            _ => None,
        };
        self.last.insert(
            identity,
            Last {
                id: seen.id.to_owned(),
                key: seen.key.map(str::to_owned),
                sent: seen.sent,
                answered: seen.answered,
                status: seen.status,
                code: seen.code.map(str::to_owned),
                retry_after: seen.retry_after,
                cut: seen.cut,
                available,
                chain,
            },
        );
    }
}

/// The findings one request makes, as they are made.
struct Found<'a> {
    findings: &'a mut Findings,
    at: DateTime<Utc>,
    places: Places,
}

impl Found<'_> {
    fn find(&mut self, rule: Rule, subject: Subject, ids: &[&str], message: &dyn Fn() -> String) {
        self.places.push(self.findings.make(Made {
            rule,
            subject,
            at: self.at,
            ids,
            message,
        }));
    }
}

/// A client and the route of its request, as a finding's subject.
fn on_route(client: &Client, seen: &Seen<'_>) -> Subject {
    Subject::Text(format!("{client}: {} {}", seen.method, route(seen.path)))
}

/// A repeat whose first attempt may have acted: a create with another key
/// or none, or a request that is not safe to repeat.
#[cold]
fn repeat_of_unknown_outcome(p: &Last, seen: &Seen<'_>, client: &Client, found: &mut Found<'_>) {
    let Some(outcome) = p.unknown_outcome(seen.sent) else {
        return;
    };
    if seen.is_create() && (seen.key.is_none() || seen.key != p.key.as_deref()) {
        let with = if seen.key.is_none() {
            "no Idempotency-Key"
        } else {
            "another Idempotency-Key"
        };
        found.find(
            Rule::CreateRetryNewKey,
            Subject::Client(client.clone()),
            &[&p.id, seen.id],
            &|| {
                format!(
                    "POST /v1/generations was sent again after {outcome} with {with}: the service may charge twice"
                )
            },
        );
    } else if seen.unsafe_to_repeat() {
        found.find(
            Rule::UnsafeRepeat,
            on_route(client, seen),
            &[&p.id, seen.id],
            &|| {
                format!(
                    "{} {} was sent again with the same body after {outcome}: it may have acted twice",
                    seen.method, seen.path
                )
            },
        );
    }
}

/// A retry of an answer to be retried: with a growing delay, 5 attempts at
/// most. Returns the chain of attempts this one continues.
#[cold]
fn retry_chain(p: &Last, seen: &Seen<'_>, client: &Client, found: &mut Found<'_>) -> Chain {
    let mut chain = p.chain.clone();
    chain.attempts += 1;
    let delay = seen.sent - p.answered;
    let held = p
        .retry_after
        .is_some_and(|secs| delay >= secs as f64 - SLACK);
    if !held {
        chain.free_delays.push(delay.max(0.0));
    }
    let code = p.code.as_deref().unwrap_or_default();
    if chain.attempts == MAX_ATTEMPTS + 1 {
        found.find(
            Rule::RetryWithoutBackoff,
            on_route(client, seen),
            &[&p.id, seen.id],
            &|| {
                format!(
                    "{} {} was sent a {}th time after {code}: more than {MAX_ATTEMPTS} attempts",
                    seen.method, seen.path, chain.attempts
                )
            },
        );
    } else if !chain.judged && chain.free_delays.len() >= JUDGED_RETRIES {
        chain.judged = true;
        if !grows(&chain.free_delays) {
            let delays: Vec<String> = chain
                .free_delays
                .iter()
                .map(|d| format!("{d:.3}"))
                .collect();
            found.find(
                Rule::RetryWithoutBackoff,
                on_route(client, seen),
                &[&p.id, seen.id],
                &|| {
                    format!(
                        "{} {} was retried after {code} with delays of {} s that do not grow",
                        seen.method,
                        seen.path,
                        delays.join(", ")
                    )
                },
            );
        }
    }
    chain
}

/// The same request after an answer a retry does not fix, answered the same
/// again: had the client fixed what was wrong elsewhere (its requisites, a
/// model's state, its balance), the answer would differ.
#[cold]
fn repeat_final_error(
    p: &Last,
    seen: &Seen<'_>,
    client: &Client,
    facts: &dyn Facts,
    found: &mut Found<'_>,
) {
    if p.status != seen.status || p.code.as_deref() != seen.code {
        return;
    }
    let topped_up = match (p.available, seen.user) {
        (Some(before), Some(user)) => facts.available(user) > before,
        _ => false,
    };
    if !topped_up {
        found.find(
            Rule::RepeatFinalError,
            on_route(client, seen),
            &[&p.id, seen.id],
            &|| {
                format!(
                    "{} {} was sent again unchanged after {}, which a retry does not fix",
                    seen.method,
                    seen.path,
                    p.answer()
                )
            },
        );
    }
}

/// The windows a request counts in: the general one, and its route's own.
fn scopes(seen: &Seen<'_>) -> impl Iterator<Item = WindowScope> {
    let own = crate::domain::rate_limit::route_limit(seen.method, seen.path)
        .map(|limit| limit.name)
        .or_else(|| {
            (seen.method == "POST" && seen.path.trim_end_matches('/') == "/v1/billing/topup")
                .then_some(crate::domain::rate_limit::TOPUP.name)
        });
    std::iter::once(WindowScope::General).chain(own.map(WindowScope::Route))
}

/// Reads of one active generation a minute that the general limit sustains
/// for a client with `active` active tasks: its share of 60 a minute.
pub(crate) fn poll_allowance(active: usize) -> usize {
    GENERAL_MAX / active.max(1)
}

/// Whether some delay after the first is at least 1.5 times the first (plus
/// 5 ms of scheduling noise): exponential back-off with jitter always shows
/// it by the third retry; a fixed pace or none never does.
fn grows(delays: &[f64]) -> bool {
    let Some((&first, later)) = delays.split_first() else {
        return true;
    };
    later
        .iter()
        .any(|&delay| delay >= first * GROWTH + GROWTH_NOISE)
}
