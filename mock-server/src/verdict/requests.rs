//! The client's side: each request judged against what came before it from the
//! same client.
//!
//! "The same request" is the same client (its user, or its address when it has
//! none), method, path, query and body; the `Idempotency-Key` is not part of it,
//! so that a create sent again with another key is the same create.

use std::hash::{BuildHasher, Hash, Hasher};

use chrono::{DateTime, Utc};
use mediagen_openapi::operations::{LimitScope, OperationId};
use mediagen_openapi::policy::Retry;
use mediagen_openapi::sets::ErrorCode;
use uuid::Uuid;

use super::findings::{Client, Findings, Made, Places, Subject};
use super::rules::Rule;
use super::seen::{Cut, Seen, route};
use super::{Bounded, Facts};
use crate::domain::UserId;

/// Seconds of slack on a wait told in whole seconds: a client that waits
/// exactly `retry-after` from the moment it read the answer is never early.
const SLACK: f64 = 0.01;
/// Seconds after a 429 within which another request of the client may still
/// have been on its way before the client read the 429. A repeat of the
/// refused request itself gets no such grace.
const GRACE: f64 = 0.25;
/// Attempts of one request the document allows (Limits, rule 5).
const MAX_ATTEMPTS: u32 = 5;
/// Tries after the first before the waits between them are judged: a single
/// draw says nothing of the schedule a client follows.
const JUDGED_RETRIES: usize = 3;
/// The general limit: requests per window, and the window in seconds.
const GENERAL_MAX: usize = 60;
const GENERAL_WINDOW: f64 = 60.0;
/// Reads of one generation a poller may run ahead of its share, as a burst
/// of the general limit's pace (a read at once after the create, a ticker's
/// jitter).
const POLL_BURST: f64 = 2.0;

/// What the last answer to one request was.
#[derive(Debug, Clone)]
struct Last {
    id: String,
    key: Option<String>,
    sent: f64,
    answered: f64,
    real_answered: f64,
    status: Option<u16>,
    code: Option<String>,
    retry_after: Option<u64>,
    cut: Cut,
    /// The user's available kopecks when a 402 was answered.
    available: Option<i64>,
    chain: Chain,
    /// The client read the request's area after it: a repeat then is a
    /// decision made on what it read, not a blind one.
    checked: bool,
}

/// Attempts of one request after answers the document says to retry.
#[derive(Debug, Clone, Default)]
struct Chain {
    attempts: u32,
    /// Delays before each retry not held up by a `retry-after`, in edge seconds.
    free_delays: Vec<f64>,
    /// A finding was made of its waits.
    judged: bool,
}

impl Last {
    /// How the client cannot know whether it acted: `None` when it can.
    fn unknown_outcome(&self, resent: &Seen<'_>) -> Option<String> {
        if resent.real_sent < self.real_answered {
            // Sent again while the first hung: after a time-out, unless the
            // two were sent together (two creates of one prompt, each with
            // its own key, are two generations).
            return (resent.sent - self.sent >= GRACE).then(|| "a time-out".to_owned());
        }
        match (self.cut, self.status) {
            (Cut::Dropped | Cut::DroppedAfter, _) => Some("a dropped connection".to_owned()),
            // The document says these did not act (no generation, no money).
            _ if matches!(
                self.code.as_deref().and_then(ErrorCode::from_wire),
                Some(ErrorCode::MarginGuard | ErrorCode::UpstreamCircuitOpen)
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

    /// A keyed request's 409 while its first request with that key still runs:
    /// asking again with the same key is the document's way to get its result
    /// (rule 8 of `POST /v1/generations`), however often it answers 409.
    fn still_running(&self, resent: &Seen<'_>) -> bool {
        self.status == Some(409)
            && resent.keyed()
            && self.key.is_some()
            && resent.key == self.key.as_deref()
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

/// Whether the answer is one to retry with a growing delay: a windowed limit,
/// after its `retry-after`, or a temporary failure.
fn retryable(code: Option<&str>, retry_after: Option<u64>) -> bool {
    match code.and_then(Retry::of_code) {
        Some(Retry::AfterRetryAfter) => retry_after.is_some(),
        Some(Retry::Backoff) => true,
        Some(Retry::Never) | None => false,
    }
}

/// Whether a retry of the same request does not fix the answer: the code's
/// class says so, or, for a code the contract does not name, its status does
/// (402, 404, 410: Errors, HTTP statuses).
fn final_error(status: Option<u16>, code: Option<&str>) -> bool {
    match code.and_then(Retry::of_code) {
        Some(class) => class == Retry::Never,
        None => matches!(status, Some(402 | 404 | 410)),
    }
}

/// A windowed 429 the client got, until its `retry-after` passed.
#[derive(Debug, Clone)]
struct Closed {
    id: String,
    request: u64,
    answered: f64,
    retry_after: u64,
}

/// A create the concurrency limit refused, until one of the tasks active
/// then ends.
#[derive(Debug, Clone)]
struct Full {
    id: String,
    answered: f64,
    active: Vec<Uuid>,
    /// The waits before each try of the create after a 429 of this chain.
    waits: Vec<f64>,
    /// A finding was made of its waits.
    judged: bool,
}

/// The pace of the reads of one active generation, as the general limit
/// would meter it: each read is due one share's interval after the last.
#[derive(Debug, Clone, Copy)]
struct Pace {
    /// Edge seconds when the next read is due.
    due: f64,
    /// Reads answered, and when the first was sent.
    reads: u32,
    first: f64,
}

/// The last read of one of a user's generations that came faster than its
/// share: general 429s within a window of it are its doing.
#[derive(Debug, Clone, Copy)]
struct Overread {
    generation: Uuid,
    at: f64,
    /// Seconds between reads that the share allows.
    interval: f64,
}

#[derive(Debug)]
pub(super) struct Requests {
    hasher: foldhash::fast::FixedState,
    last: Bounded<u64, Last>,
    closed: Bounded<(Client, LimitScope), Closed>,
    /// Chains of creates the concurrency limit refused, by user and request.
    full: Bounded<(UserId, u64), Full>,
    /// The pace of the reads of each active generation.
    reads: Bounded<(UserId, Uuid), Pace>,
    /// Each user's last read above its share.
    overread: Bounded<UserId, Overread>,
    /// Generations an answer showed in a final state.
    ended: Bounded<(UserId, Uuid), ()>,
    /// Requests not safe to repeat whose outcome the client cannot know,
    /// by client: their record and area, until the client reads the area.
    unsure: Bounded<Client, Vec<(u64, String)>>,
}

impl Requests {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            hasher: foldhash::fast::FixedState::default(),
            last: Bounded::new(cap),
            closed: Bounded::new(cap),
            full: Bounded::new(cap),
            reads: Bounded::new(cap),
            overread: Bounded::new(cap),
            ended: Bounded::new(cap),
            unsure: Bounded::new(cap),
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
        if seen.keyed() && seen.key.is_none() {
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
        let full = match seen.user {
            Some(user) if seen.is_create() && !self.full.is_empty() => {
                self.concurrency_loop(seen, (user, identity), &client, facts, &mut found)
            }
            _ => None,
        };
        if let Some(p) = prev
            .as_ref()
            .filter(|p| p.final_error() && !p.still_running(seen))
        {
            repeat_final_error(p, seen, &client, facts, &mut found);
        }
        if let Some(user) = seen.user
            && let Some(generation) = seen.read_generation()
        {
            self.reads_of(seen, (user, generation), &client, &mut found);
        }
        if seen.method == "GET" && !self.unsure.is_empty() {
            self.read_of_area(seen, &client);
        }
        if let Some(user) = seen.user
            && seen.window == Some(LimitScope::General)
            && !self.overread.is_empty()
        {
            self.refused_after_overreads(seen, user, &client, &mut found);
        }

        self.remember(seen, identity, chain, client, full, facts);
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
                let limit = format!("the {scope} limit");
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

    /// A create tried again while the tasks active at its 429 are all still
    /// active, in a loop: at a pace that does not back off, judged over at
    /// least three tries, as a pattern and not one draw. A client that
    /// cannot see the tasks that hold the slots (another process made them)
    /// can only try again; one that backs off is not looping, whatever its
    /// first wait. Returns the chain this try continues.
    #[cold]
    fn concurrency_loop(
        &mut self,
        seen: &Seen<'_>,
        key: (UserId, u64),
        client: &Client,
        facts: &dyn Facts,
        found: &mut Found<'_>,
    ) -> Option<Full> {
        let mut full = self.full.remove(&key)?;
        if seen.sent < full.answered || facts.any_ended(&full.active) {
            return None;
        }
        full.waits.push(seen.sent - full.answered);
        if !full.judged
            && let Some(why) = backs_off_not(&full.waits)
        {
            full.judged = true;
            found.find(
                Rule::ConcurrencyRetryLoop,
                Subject::Client(client.clone()),
                &[&full.id, seen.id],
                &|| {
                    format!(
                        "POST /v1/generations was tried {} times after the 429 of 5 active tasks, before any of them ended, with waits of {} s: {why}",
                        full.waits.len() + 1,
                        seconds_list(&full.waits)
                    )
                },
            );
        }
        Some(full)
    }

    /// Reads of one generation: after an answer showed it ended, or faster
    /// than its share of the general limit, metered as the limit meters a
    /// steady client: one read every `60 / share` seconds, a short burst
    /// ahead allowed. A poller at exactly its share never runs ahead.
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
        let allowed = poll_allowance(seen.active);
        let interval = GENERAL_WINDOW / allowed as f64;
        let mut pace = self.reads.remove(&key).unwrap_or(Pace {
            due: seen.sent,
            reads: 0,
            first: seen.sent,
        });
        pace.reads += 1;
        if seen.sent < pace.due - POLL_BURST * interval {
            // Ahead of its share: the read is not counted towards the pace,
            // as a metered limit would not have let it through.
            self.overread.insert(
                key.0,
                Overread {
                    generation,
                    at: seen.sent,
                    interval,
                },
            );
            let (reads, span) = (pace.reads, seen.sent - pace.first);
            found.find(
                Rule::PollRate,
                Subject::Client(client.clone()),
                &[seen.id],
                &|| {
                    format!(
                        "generation {generation} was read {reads} times in {span:.1} s while the user had {} active task(s): its share of the general limit of {GENERAL_MAX} a minute is one read every {interval:.0} s",
                        seen.active.max(1)
                    )
                },
            );
        } else {
            pace.due = pace.due.max(seen.sent) + interval;
        }
        if seen.shown.is_some_and(|s| s.final_state.is_some()) {
            self.ended.insert(key, ());
        } else {
            self.reads.insert(key, pace);
        }
    }

    /// A read of an area a request not safe to repeat may have acted in:
    /// the client checked before sending it again.
    #[cold]
    fn read_of_area(&mut self, seen: &Seen<'_>, client: &Client) {
        if !seen.status.is_some_and(|s| s < 300 || s == 404) {
            return;
        }
        let Some(mut unsure) = self.unsure.remove(client) else {
            return;
        };
        unsure.retain(|(identity, area)| {
            if area != seen.area() {
                return true;
            }
            if let Some(last) = self.last.get_mut(identity) {
                last.checked = true;
            }
            false
        });
        if !unsure.is_empty() {
            self.unsure.insert(client.clone(), unsure);
        }
    }

    /// A request the general limit refused within a window of reads above
    /// their share: the polling used what the address's other calls need.
    #[cold]
    fn refused_after_overreads(
        &mut self,
        seen: &Seen<'_>,
        user: UserId,
        client: &Client,
        found: &mut Found<'_>,
    ) {
        let Some(over) = self.overread.get(&user).copied() else {
            return;
        };
        if seen.sent - over.at >= GENERAL_WINDOW {
            self.overread.remove(&user);
            return;
        }
        found.find(
            Rule::PollRateLimited,
            Subject::Text(format!("{client}: generation {}", over.generation)),
            &[seen.id],
            &|| {
                format!(
                    "generation {} was read faster than its share (one read every {:.0} s), and the general limit of {GENERAL_MAX} a minute then refused {} {}: the polling used up what the address's other calls need",
                    over.generation, over.interval, seen.method, seen.path
                )
            },
        );
    }

    /// Keeps what later requests are judged against.
    fn remember(
        &mut self,
        seen: &Seen<'_>,
        identity: u64,
        chain: Chain,
        client: Client,
        full: Option<Full>,
        facts: &dyn Facts,
    ) {
        if seen.status == Some(429) && seen.code == Some(ErrorCode::RateLimitError.as_str()) {
            match (seen.retry_after, seen.window) {
                (Some(retry_after), Some(scope)) => self.closed.insert(
                    (client.clone(), scope),
                    Closed {
                        id: seen.id.to_owned(),
                        request: identity,
                        answered: seen.answered,
                        retry_after,
                    },
                ),
                (None, _) if seen.is_create() => {
                    if let Some(user) = seen.user {
                        let full = full.unwrap_or_else(|| Full {
                            id: seen.id.to_owned(),
                            answered: 0.0,
                            active: facts.active_tasks(user),
                            waits: Vec::new(),
                            judged: false,
                        });
                        self.full.insert(
                            (user, identity),
                            Full {
                                answered: seen.answered,
                                ..full
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
        if unknown && seen.unsafe_to_repeat() {
            let mut unsure = self.unsure.remove(&client).unwrap_or_default();
            unsure.push((identity, seen.area().to_owned()));
            self.unsure.insert(client, unsure);
        }
        self.last.insert(
            identity,
            Last {
                id: seen.id.to_owned(),
                key: seen.key.map(str::to_owned),
                sent: seen.sent,
                answered: seen.answered,
                real_answered: seen.real_answered,
                status: seen.status,
                code: seen.code.map(str::to_owned),
                retry_after: seen.retry_after,
                cut: seen.cut,
                available,
                chain,
                checked: false,
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
            endpoint: None,
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
    let Some(outcome) = p.unknown_outcome(seen) else {
        return;
    };
    if seen.keyed() && (seen.key.is_none() || seen.key != p.key.as_deref()) {
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
    } else if seen.unsafe_to_repeat() && !p.checked {
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

/// A retry of an answer to be retried: with delays that back off, 5
/// attempts at most. Returns the chain of attempts this one continues.
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
            Rule::TooManyAttempts,
            on_route(client, seen),
            &[&p.id, seen.id],
            &|| {
                format!(
                    "{} {} was sent a {}th time after {code}: the document stops after {MAX_ATTEMPTS} attempts",
                    seen.method, seen.path, chain.attempts
                )
            },
        );
    } else if !chain.judged
        && let Some(why) = backs_off_not(&chain.free_delays)
    {
        chain.judged = true;
        found.find(
            Rule::RetryWithoutBackoff,
            on_route(client, seen),
            &[&p.id, seen.id],
            &|| {
                format!(
                    "{} {} was retried after {code} with delays of {} s: {why}",
                    seen.method,
                    seen.path,
                    seconds_list(&chain.free_delays)
                )
            },
        );
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

/// The windows a request counts in: the general one, and its operation's own.
fn scopes(seen: &Seen<'_>) -> impl Iterator<Item = LimitScope> {
    let own = seen.op.and_then(OperationId::own_limit);
    std::iter::once(LimitScope::General).chain(own)
}

/// Reads of one active generation a minute that the general limit sustains
/// for a client with `active` active tasks: its share of 60 a minute.
pub(crate) fn poll_allowance(active: usize) -> usize {
    GENERAL_MAX / active.max(1)
}

/// The most seconds in all that `waits` waits may take and still show a
/// client that does not wait: the schedule's own jitter (a draw from 0 up to
/// 1, 2, 4, 8 s) comes this low about twice in a million chains (the unit
/// test `jitter_strategies_are_not_accused_in_many_seeded_chains`, with
/// `MEDIAGEN_VERDICT_RUNS=1000000`, finds 4 of a million accused in all).
fn no_wait(waits: usize) -> f64 {
    match waits {
        0..=3 => 0.05,
        4 => 0.25,
        n => 0.1 * n as f64,
    }
}

/// Four waits or more that differ by at most this many seconds are one fixed
/// wait with scheduling noise; random draws come this close about once in
/// 500,000 chains. Three waits are too few to tell one fixed wait from three
/// draws that came close; from five on, the noise allowed grows.
fn fixed_noise(waits: usize) -> Option<f64> {
    match waits {
        0..=3 => None,
        4 => Some(0.02),
        _ => Some(0.05),
    }
}

/// Why waits between tries do not back off, judged as the schedule a client
/// follows, never a single draw: `None` while fewer than three were seen, or
/// when they back off.
///
/// The document's schedule waits 1, 2, 4, 8 s "with jitter". Full jitter
/// (each wait drawn from 0 up to that bound), decorrelated and equal jitter
/// and plain doubling are such schedules, whatever order their draws come
/// in, and a slower fixed wait backs off more than the schedule asks. What
/// they never do is wait almost nothing in all, or keep one fixed wait
/// shorter than the schedule's pace: the two ways a client does not back off.
fn backs_off_not(waits: &[f64]) -> Option<String> {
    let tries = waits.len();
    if tries < JUDGED_RETRIES {
        return None;
    }
    let total: f64 = waits.iter().sum();
    // 1 + 2 + 4 + 8, then 8 s a try.
    let schedule: f64 = (0..tries).map(|i| f64::from(1u32 << i.min(3))).sum();
    if total <= no_wait(tries) {
        return Some(format!(
            "{} tries within {total:.2} s, where the document's schedule (1, 2, 4, 8 s, with jitter) spreads them over about {:.0} s",
            tries + 1,
            schedule / 2.0
        ));
    }
    let (least, most) = waits
        .iter()
        .fold((f64::MAX, 0.0_f64), |(l, m), &w| (l.min(w), m.max(w)));
    let mean = total / tries as f64;
    let fixed = fixed_noise(tries).is_some_and(|noise| most - least <= noise);
    if fixed && total < schedule / 2.0 {
        return Some(format!(
            "one fixed wait of {mean:.2} s, where the document's schedule grows (1, 2, 4, 8 s, with jitter)"
        ));
    }
    None
}

/// Seconds, as a list for a message.
fn seconds_list(waits: &[f64]) -> String {
    waits
        .iter()
        .map(|w| format!("{w:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}
