//! Each rule: a bad example named by its id, and a correct client not accused.

use std::cell::RefCell;

use chrono::Utc;
use mediagen_openapi::operations::{LimitScope, OperationId};
use uuid::Uuid;

use super::*;

/// The store as a test sets it: the active tasks and which of them ended.
#[derive(Default)]
struct Store {
    active: Vec<Uuid>,
    ended: RefCell<Vec<Uuid>>,
    available: RefCell<i64>,
}

impl Facts for Store {
    fn active_tasks(&self, _: UserId) -> Vec<Uuid> {
        self.active.clone()
    }
    fn any_ended(&self, ids: &[Uuid]) -> bool {
        ids.iter().any(|id| self.ended.borrow().contains(id))
    }
    fn available(&self, _: UserId) -> i64 {
        *self.available.borrow()
    }
}

fn user() -> UserId {
    Uuid::from_u128(7)
}

/// Text that lives as long as the test.
fn kept(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// A request of the test user at edge second `sent`, answered at once.
fn request(n: u32, method: &'static str, path: &'static str, sent: f64) -> Seen<'static> {
    Seen {
        id: kept(format!("req_{n}")),
        at: Utc::now(),
        sent,
        answered: sent + 0.001,
        real_sent: sent,
        real_answered: sent + 0.001,
        method,
        path,
        op: OperationId::from_path(method, path),
        ip: "127.0.0.1",
        user: Some(user()),
        digest: 42,
        status: Some(200),
        ..Seen::default()
    }
}

fn create(n: u32, key: Option<&'static str>, sent: f64) -> Seen<'static> {
    Seen {
        key,
        status: Some(202),
        ..request(n, "POST", "/v1/generations", sent)
    }
}

fn answered(mut seen: Seen<'static>, status: u16, code: &'static str) -> Seen<'static> {
    seen.status = Some(status);
    seen.code = Some(code);
    seen
}

fn windowed(seen: Seen<'static>, retry_after: u64) -> Seen<'static> {
    Seen {
        retry_after: Some(retry_after),
        window: Some(LimitScope::General),
        ..answered(seen, 429, "RATE_LIMIT_ERROR")
    }
}

/// The rule ids the judge names for `requests`, in order, once each.
fn named(requests: Vec<Seen<'static>>, store: &Store) -> Vec<String> {
    let mut judge = Judge::new(None);
    for seen in requests {
        judge.request(&seen, store);
    }
    judge
        .verdict(&Strict::violations())
        .findings
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

fn violations(requests: Vec<Seen<'static>>, store: &Store) -> Vec<String> {
    let mut judge = Judge::new(None);
    for seen in requests {
        judge.request(&seen, store);
    }
    let verdict = judge.verdict(&Strict::violations());
    assert_eq!(
        verdict.clean,
        verdict
            .findings
            .iter()
            .all(|f| f.severity == Severity::Advice)
    );
    verdict
        .findings
        .into_iter()
        .filter(|f| f.severity == Severity::Violation)
        .map(|f| f.rule)
        .collect()
}

#[test]
fn a_create_sent_again_after_a_503_with_another_key_is_named() {
    let store = Store::default();
    let found = violations(
        vec![
            answered(create(1, Some("k1"), 0.0), 503, "SERVICE_UNAVAILABLE"),
            create(2, Some("k2"), 1.0),
        ],
        &store,
    );
    assert_eq!(found, ["create-retry-new-key"]);
}

#[test]
fn a_create_sent_again_after_a_dropped_connection_without_a_key_is_named() {
    let store = Store::default();
    let mut first = create(1, None, 0.0);
    first.status = None;
    first.cut = Cut::Dropped;
    let found = named(vec![first, create(2, None, 1.0)], &store);
    assert!(
        found.contains(&"create-retry-new-key".to_owned()),
        "{found:?}"
    );
}

#[test]
fn a_create_sent_again_while_the_first_hangs_is_a_time_out() {
    let store = Store::default();
    let mut first = create(1, Some("k1"), 0.0);
    first.answered = 30.0;
    first.real_answered = 30.0;
    let found = violations(vec![first, create(2, Some("k2"), 10.0)], &store);
    assert_eq!(found, ["create-retry-new-key"]);
}

#[test]
fn a_create_sent_again_with_another_key_while_the_first_is_held_back_is_named_whatever_the_clock_did()
 {
    let store = Store::default();
    // The answer is held back 1.5 real seconds; the client gives up after
    // 0.5 s and waits 1 s on a manual clock, which moves the edge 1 s.
    let mut first = create(1, Some("k1"), 0.0);
    first.answered = 1.5;
    first.real_answered = 1.5;
    let mut again = create(2, Some("k2"), 1.5);
    again.real_sent = 0.5;
    let found = violations(vec![first, again], &store);
    assert_eq!(found, ["create-retry-new-key"]);
}

#[test]
fn two_creates_of_one_prompt_sent_together_are_not_a_time_out() {
    let store = Store::default();
    // The second arrives 2 ms after the first, before the first's answer
    // went out: two generations wanted, each with its own key.
    let mut first = create(1, Some("k1"), 0.0);
    first.answered = 0.05;
    first.real_answered = 0.05;
    let found = violations(vec![first, create(2, Some("k2"), 0.002)], &store);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn the_same_key_after_a_503_or_a_drop_is_fine() {
    let store = Store::default();
    let mut dropped = create(2, Some("k1"), 1.0);
    dropped.status = None;
    dropped.cut = Cut::DroppedAfter;
    let found = named(
        vec![
            answered(create(1, Some("k1"), 0.0), 503, "SERVICE_UNAVAILABLE"),
            dropped,
            create(3, Some("k1"), 3.0),
        ],
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_new_key_after_an_answer_that_says_nothing_was_made_is_fine() {
    let store = Store::default();
    let found = named(
        vec![
            answered(create(1, Some("k1"), 0.0), 503, "MARGIN_GUARD"),
            create(2, Some("k2"), 1.0),
            create(3, Some("k3"), 2.0),
        ],
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_create_without_a_key_is_advice_and_keeps_the_verdict_clean() {
    let store = Store::default();
    let mut judge = Judge::new(None);
    judge.request(&create(1, None, 0.0), &store);
    let verdict = judge.verdict(&Strict::violations());
    assert!(verdict.clean);
    assert_eq!(verdict.findings[0].rule, "create-without-key");
    assert_eq!(verdict.findings[0].severity, Severity::Advice);
}

#[test]
fn a_request_before_retry_after_has_passed_is_named() {
    let store = Store::default();
    let found = violations(
        vec![
            windowed(request(1, "GET", "/v1/account", 0.0), 10),
            request(2, "GET", "/v1/account", 2.0),
        ],
        &store,
    );
    assert_eq!(found, ["retry-before-retry-after"]);
}

#[test]
fn another_request_of_the_client_inside_the_window_is_named_past_the_grace() {
    let store = Store::default();
    let found = violations(
        vec![
            windowed(request(1, "GET", "/v1/account", 0.0), 10),
            // On its way before the client read the 429: not judged.
            request(2, "GET", "/v1/catalog/", 0.1),
            request(3, "GET", "/v1/billing/balance", 5.0),
        ],
        &store,
    );
    assert_eq!(found, ["retry-before-retry-after"]);
}

#[test]
fn a_retry_after_retry_after_has_passed_is_fine_and_another_user_is_not_bound() {
    let store = Store::default();
    let mut other = request(2, "GET", "/v1/account", 3.0);
    other.user = Some(Uuid::from_u128(8));
    let found = named(
        vec![
            windowed(request(1, "GET", "/v1/account", 0.0), 10),
            other,
            request(3, "GET", "/v1/account", 10.001),
        ],
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn retries_at_a_fixed_pace_are_named() {
    let store = Store::default();
    let failing = |n, at| {
        answered(
            request(n, "GET", "/v1/account", at),
            503,
            "SERVICE_UNAVAILABLE",
        )
    };
    let found = violations(
        vec![
            failing(1, 0.0),
            failing(2, 0.5),
            failing(3, 1.0),
            failing(4, 1.5),
            failing(5, 2.0),
        ],
        &store,
    );
    assert_eq!(found, ["retry-without-backoff"]);
}

#[test]
fn a_sixth_attempt_is_named_even_with_growing_delays() {
    let store = Store::default();
    let failing = |n, at| answered(request(n, "GET", "/v1/account", at), 502, "GATEWAY_TIMEOUT");
    let found = violations(
        (0..6)
            .map(|n| failing(n, f64::from((1u32 << n) - 1)))
            .collect(),
        &store,
    );
    assert_eq!(found, ["too-many-attempts"]);
}

/// A request answered 503 at `sent`, of a client whose waits are `waits`.
fn chain(waits: &[f64]) -> Vec<Seen<'static>> {
    let failing = |n, at| {
        answered(
            request(n, "GET", "/v1/account", at),
            503,
            "SERVICE_UNAVAILABLE",
        )
    };
    let mut at = 0.0;
    let mut requests = vec![failing(0, at)];
    for (n, wait) in waits.iter().enumerate() {
        // Each wait starts when the answer went out, 1 ms after it came.
        at += 0.001 + wait;
        requests.push(failing(n as u32 + 1, at));
    }
    requests
}

#[test]
fn growing_delays_with_jitter_are_fine() {
    let store = Store::default();
    // Equal jitter at its worst: the first delay at its cap, the next ones at half theirs.
    let found = named(chain(&[1.0, 1.0, 2.0, 4.0]), &store);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn draws_of_full_and_decorrelated_jitter_that_do_not_grow_are_fine() {
    let store = Store::default();
    // Draws a "delays that grow" rule named: each under the bound that grows.
    for waits in [
        [0.80, 0.90, 1.10, 0.5],
        [2.6, 1.2, 3.4, 1.9],
        [0.4, 0.3, 0.2, 5.0],
    ] {
        let found = named(chain(&waits), &store);
        assert!(found.is_empty(), "{waits:?}: {found:?}");
    }
}

#[test]
fn a_slow_fixed_wait_backs_off_more_than_the_schedule_and_is_fine() {
    let store = Store::default();
    let found = named(chain(&[10.0, 10.0, 10.0, 10.0]), &store);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn no_wait_or_a_short_fixed_wait_is_named_with_what_the_schedule_waits() {
    let store = Store::default();
    for waits in [
        &[0.0, 0.0, 0.0][..],
        &[0.2, 0.2, 0.2, 0.2],
        &[1.0, 1.0, 1.0, 1.0],
    ] {
        let mut judge = Judge::new(None);
        for seen in chain(waits) {
            judge.request(&seen, &store);
        }
        let verdict = judge.verdict(&Strict::violations());
        assert_eq!(verdict.findings.len(), 1, "{waits:?}: {verdict}");
        let finding = &verdict.findings[0];
        assert_eq!(finding.rule, "retry-without-backoff");
        assert!(finding.message.contains("schedule"), "{}", finding.message);
    }
    // Fixed at 1.5 s: the schedule's pace shows by the fourth wait.
    assert_eq!(
        violations(chain(&[1.5, 1.5, 1.5, 1.5]), &store),
        ["retry-without-backoff"]
    );
}

/// Chains of waits drawn by a seeded generator: the number of them judged
/// not to back off.
fn accused(runs: u64, draw: impl Fn(&mut rand::rngs::StdRng, usize, f64) -> f64) -> u64 {
    use rand::SeedableRng;
    let store = Store::default();
    (0..runs)
        .filter(|&seed| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut waits = Vec::new();
            let mut last = 1.0;
            for attempt in 0..4 {
                last = draw(&mut rng, attempt, last);
                waits.push(last);
            }
            !named(chain(&waits), &store).is_empty()
        })
        .count() as u64
}

/// The jitter strategies the document's schedule allows are never accused
/// in many seeded chains; `MEDIAGEN_VERDICT_RUNS` sets how many.
#[test]
fn jitter_strategies_are_not_accused_in_many_seeded_chains() {
    use rand::Rng;
    let runs = std::env::var("MEDIAGEN_VERDICT_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let full = accused(runs, |rng, attempt, _| {
        rng.random_range(0.0..f64::from(1u32 << attempt))
    });
    let decorrelated = accused(runs, |rng, _, last: f64| {
        rng.random_range(1.0..(3.0 * last).max(1.0 + f64::EPSILON))
            .min(60.0)
    });
    let equal = accused(runs, |rng, attempt, _| {
        let cap = f64::from(1u32 << attempt);
        cap / 2.0 + rng.random_range(0.0..cap / 2.0)
    });
    assert_eq!(
        (full, decorrelated, equal),
        (0, 0, 0),
        "accused of {runs} chains each"
    );
}

#[test]
fn retries_that_wait_out_each_retry_after_are_fine_at_a_fixed_pace() {
    let store = Store::default();
    let found = named(
        (0..5)
            .map(|n| windowed(request(n, "GET", "/v1/account", f64::from(n) * 2.0), 2))
            .collect(),
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_create_tried_again_in_a_loop_before_any_active_task_ended_is_named() {
    let store = Store {
        active: vec![Uuid::from_u128(1)],
        ..Store::default()
    };
    let full = |n, at| answered(create(n, Some("k1"), at), 429, "RATE_LIMIT_ERROR");
    let looping = (0..5).map(|n| full(n, f64::from(n) * 0.05)).collect();
    assert_eq!(violations(looping, &store), ["concurrency-retry-loop"]);
}

#[test]
fn one_early_try_after_a_concurrency_429_then_waits_that_back_off_are_fine() {
    let store = Store {
        active: vec![Uuid::from_u128(1)],
        ..Store::default()
    };
    let full = |n, at| answered(create(n, Some("k1"), at), 429, "RATE_LIMIT_ERROR");
    // Full jitter's first draw 0.40 s, then 1.3, 2.5 and 4 s.
    let early = vec![
        full(1, 0.0),
        full(2, 0.40),
        full(3, 1.70),
        full(4, 4.20),
        full(5, 8.20),
    ];
    let found = named(early, &store);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn creates_again_with_growing_waits_while_foreign_tasks_hold_the_slots_are_fine() {
    let store = Store {
        active: vec![Uuid::from_u128(1)],
        ..Store::default()
    };
    let full = |n, at| answered(create(n, Some("k1"), at), 429, "RATE_LIMIT_ERROR");
    // Waits of 1, 1.5 and 2.25 s, as the SDK's batch takes them.
    let backing_off = vec![full(1, 0.0), full(2, 1.01), full(3, 2.52), full(4, 4.78)];
    assert!(named(backing_off, &store).is_empty());
    // A fixed pace of half a second is a loop.
    let fixed = (0..5).map(|n| full(n, f64::from(n) * 0.5)).collect();
    assert_eq!(violations(fixed, &store), ["concurrency-retry-loop"]);
}

#[test]
fn a_request_that_fixed_what_was_wrong_elsewhere_is_no_repeat() {
    let store = Store::default();
    let found = named(
        vec![
            answered(
                request(1, "POST", "/v1/billing/invoices", 0.0),
                400,
                "VALIDATION_ERROR",
            ),
            // The requisites were set meanwhile: the same body now succeeds.
            Seen {
                status: Some(201),
                ..request(2, "POST", "/v1/billing/invoices", 1.0)
            },
        ],
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_create_again_once_a_task_ended_is_fine() {
    let store = Store {
        active: vec![Uuid::from_u128(1)],
        ..Store::default()
    };
    let mut judge = Judge::new(None);
    judge.request(
        &answered(create(1, Some("k1"), 0.0), 429, "RATE_LIMIT_ERROR"),
        &store,
    );
    store.ended.borrow_mut().push(Uuid::from_u128(1));
    judge.request(&create(2, Some("k1"), 5.0), &store);
    assert!(judge.verdict(&Strict::violations()).findings.is_empty());
}

#[test]
fn the_same_request_after_an_answer_a_retry_does_not_fix_is_named() {
    let store = Store::default();
    for (status, code) in [
        (400, "VALIDATION_ERROR"),
        (404, "NOT_FOUND"),
        (410, "MODEL_UNAVAILABLE"),
        (403, "MODEL_NOT_AVAILABLE"),
        (402, "INSUFFICIENT_BALANCE"),
    ] {
        let found = violations(
            vec![
                answered(create(1, Some("k1"), 0.0), status, code),
                answered(create(2, Some("k2"), 1.0), status, code),
            ],
            &store,
        );
        assert_eq!(found, ["repeat-final-error"], "{code}");
    }
}

#[test]
fn a_code_the_contract_marks_never_is_final_and_a_keyed_409_is_asked_again_freely() {
    let store = Store::default();
    let cancel = |n: u32, sent: f64| {
        answered(
            request(n, "POST", "/v1/generations/0b7f3a52/cancel", sent),
            409,
            "CONFLICT_ERROR",
        )
    };
    let found = violations(vec![cancel(1, 0.0), cancel(2, 1.0)], &store);
    assert_eq!(
        found,
        ["repeat-final-error"],
        "a cancel of a task that ended"
    );
    // Rule 8 of POST /v1/generations: the first request with this key still runs.
    let found = violations(
        vec![
            answered(create(1, Some("k1"), 0.0), 409, "CONFLICT_ERROR"),
            answered(create(2, Some("k1"), 1.0), 409, "CONFLICT_ERROR"),
            answered(create(3, Some("k1"), 3.0), 409, "CONFLICT_ERROR"),
        ],
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_create_again_after_a_402_and_a_top_up_is_fine() {
    let store = Store::default();
    let mut judge = Judge::new(None);
    judge.request(
        &answered(create(1, Some("k1"), 0.0), 402, "INSUFFICIENT_BALANCE"),
        &store,
    );
    *store.available.borrow_mut() = 100_000;
    judge.request(&create(2, Some("k2"), 60.0), &store);
    assert!(judge.verdict(&Strict::violations()).findings.is_empty());
}

#[test]
fn a_top_up_sent_again_after_a_500_is_named_and_a_read_again_is_fine() {
    let store = Store::default();
    let found = violations(
        vec![
            answered(
                request(1, "POST", "/v1/billing/topup", 0.0),
                500,
                "INTERNAL_ERROR",
            ),
            request(2, "POST", "/v1/billing/topup", 1.0),
            answered(request(3, "GET", "/v1/account", 2.0), 500, "INTERNAL_ERROR"),
            request(4, "GET", "/v1/account", 3.0),
            answered(
                request(5, "POST", "/v1/generations/estimate", 4.0),
                500,
                "INTERNAL_ERROR",
            ),
            request(6, "POST", "/v1/generations/estimate", 5.0),
        ],
        &store,
    );
    assert_eq!(found, ["unsafe-repeat"]);
}

#[test]
fn an_unsafe_request_sent_again_after_a_read_of_its_area_is_fine() {
    let store = Store::default();
    let body = |n| Seen {
        status: Some(503),
        code: Some("SERVICE_UNAVAILABLE"),
        ..request(n, "POST", "/v1/webhook-endpoints", f64::from(n))
    };
    let found = named(
        vec![
            body(1),
            request(2, "GET", "/v1/webhook-endpoints", 2.0),
            Seen {
                status: Some(201),
                ..request(3, "POST", "/v1/webhook-endpoints", 3.0)
            },
        ],
        &store,
    );
    assert!(found.is_empty(), "{found:?}");
    // A read of another area checks nothing.
    let found = violations(
        vec![
            body(1),
            request(2, "GET", "/v1/account", 2.0),
            request(3, "POST", "/v1/webhook-endpoints", 3.0),
        ],
        &store,
    );
    assert_eq!(found, ["unsafe-repeat"]);
}

fn read(n: u32, generation: Uuid, sent: f64, final_state: Option<&'static str>) -> Seen<'static> {
    Seen {
        shown: Some(Shown {
            id: generation,
            final_state,
        }),
        active: 1,
        ..request(
            n,
            "GET",
            kept(format!("/v1/generations/{generation}")),
            sent,
        )
    }
}

#[test]
fn a_read_after_a_final_state_is_advice() {
    let store = Store::default();
    let id = Uuid::from_u128(3);
    let found = named(
        vec![
            read(1, id, 0.0, None),
            read(2, id, 1.0, Some("SUCCEEDED")),
            read(3, id, 2.0, Some("SUCCEEDED")),
        ],
        &store,
    );
    assert_eq!(found, ["read-after-final"]);
}

#[test]
fn polling_faster_than_the_general_limit_allows_is_advice_and_once_a_second_is_fine() {
    let store = Store::default();
    let id = Uuid::from_u128(3);
    let fast: Vec<Seen> = (0..100)
        .map(|n| read(n, id, f64::from(n) * 0.5, None))
        .collect();
    assert_eq!(named(fast, &store), ["poll-rate"]);
    let paced: Vec<Seen> = (0..200)
        .map(|n| read(n, id, f64::from(n) * 1.0, None))
        .collect();
    assert!(named(paced, &store).is_empty());
    assert_eq!(requests::poll_allowance(5), 12);
}

#[test]
fn polling_at_exactly_the_share_is_fine_with_a_ticker_s_jitter_and_with_several_tasks() {
    let store = Store::default();
    let id = Uuid::from_u128(3);
    // 61 reads in 59.998 s: a ticker at 1 Hz whose first read came late.
    let ticker: Vec<Seen> = (0..61)
        .map(|n| read(n, id, f64::from(n) + if n == 0 { 0.002 } else { 0.0 }, None))
        .collect();
    assert!(named(ticker, &store).is_empty());
    // Jitter of ±0.3 s around each second.
    let jittered: Vec<Seen> = (0..120)
        .map(|n| read(n, id, f64::from(n) + 0.3 * (f64::from(n) * 1.7).sin(), None))
        .collect();
    assert!(named(jittered, &store).is_empty());
    // Two tasks, each read every 2 s.
    let other = Uuid::from_u128(4);
    let two: Vec<Seen> = (0..61)
        .flat_map(|n| {
            let at = f64::from(n) * 2.0;
            [
                read(2 * n, id, at, None),
                read(2 * n + 1, other, at + 1.0, None),
            ]
        })
        .map(|seen| Seen { active: 2, ..seen })
        .collect();
    assert!(named(two, &store).is_empty());
}

#[test]
fn polling_that_runs_into_the_general_limit_is_a_violation_counted_per_429() {
    let store = Store::default();
    let id = Uuid::from_u128(3);
    // 10 reads a second; the limit refuses the 60th request of the window.
    let mut requests: Vec<Seen> = (0..59)
        .map(|n| read(n, id, f64::from(n) * 0.1, None))
        .collect();
    for n in 59..62 {
        requests.push(windowed(
            request(
                n,
                "GET",
                kept(format!("/v1/generations/{id}")),
                5.9 + f64::from(n - 59) * 54.0 / 3.0,
            ),
            54,
        ));
    }
    let mut judge = Judge::new(None);
    for seen in requests {
        judge.request(&seen, &store);
    }
    let verdict = judge.verdict(&Strict::violations());
    let rules: Vec<&str> = verdict.findings.iter().map(|f| f.rule.as_str()).collect();
    assert!(rules.contains(&"poll-rate"), "{verdict}");
    let limited = verdict
        .findings
        .iter()
        .find(|f| f.rule == "poll-rate-limited")
        .expect("poll-rate-limited");
    assert!(limited.fails && !verdict.clean);
    assert_eq!(limited.count, 3, "one for each 429 within the window");
}

#[test]
fn strict_on_chosen_advice_fails_the_verdict_and_marks_the_finding() {
    let store = Store::default();
    let mut judge = Judge::new(None);
    judge.request(&create(1, None, 0.0), &store);
    let lenient = judge.verdict(&Strict::violations());
    assert!(lenient.clean && !lenient.findings[0].fails);
    let strict = judge.verdict(&Strict::parse("create-without-key").expect("a rule"));
    assert!(!strict.clean && strict.findings[0].fails);
    let unknown = Strict::parse("poll-rate,no-such-rule").expect_err("unknown");
    assert_eq!(unknown.id, "no-such-rule");
    // The old id of more than 5 attempts chooses the rule it became.
    assert!(
        Strict::parse("retry-without-backoff")
            .expect("an alias")
            .chooses("too-many-attempts")
    );
}

fn delivery(status: Option<u16>, duration_ms: u64, probe: Option<Probe>) -> DeliverySeen {
    DeliverySeen {
        message_id: Uuid::from_u128(9).to_string(),
        endpoint: Endpoint {
            id: "we_1".into(),
            url: "https://receiver.example/hooks".into(),
        },
        at: Utc::now(),
        status,
        timed_out: status.is_none(),
        duration_ms,
        probe,
    }
}

fn judged_deliveries(deliveries: &[DeliverySeen]) -> Vec<String> {
    let mut judge = Judge::new(None);
    for seen in deliveries {
        judge.delivery(seen);
    }
    judge
        .verdict(&Strict::violations())
        .findings
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

#[test]
fn a_receiver_that_fails_or_is_slow_is_named_and_a_quick_2xx_or_410_is_fine() {
    assert_eq!(
        judged_deliveries(&[delivery(Some(500), 10, None)]),
        ["receiver-failed"]
    );
    assert_eq!(
        judged_deliveries(&[delivery(None, 10_000, None)]),
        ["receiver-failed"]
    );
    assert_eq!(
        judged_deliveries(&[delivery(Some(200), 2500, None)]),
        ["receiver-slow"]
    );
    assert!(
        judged_deliveries(&[delivery(Some(204), 30, None), delivery(Some(410), 5, None)])
            .is_empty()
    );
    // A receiver not listening at all is no receiver to judge.
    let mut refused = delivery(None, 1, None);
    refused.timed_out = false;
    assert!(judged_deliveries(&[refused]).is_empty());
}

#[test]
fn each_probe_names_its_rule_and_a_verifying_receiver_passes_them() {
    assert_eq!(
        judged_deliveries(&[
            delivery(Some(200), 5, Some(Probe::BadSignature)),
            delivery(Some(204), 5, Some(Probe::StaleTimestamp)),
            delivery(Some(400), 5, Some(Probe::Duplicate)),
        ]),
        [
            "receiver-accepts-bad-signature",
            "receiver-accepts-stale-timestamp",
            "receiver-refuses-duplicate"
        ]
    );
    assert!(
        judged_deliveries(&[
            delivery(Some(401), 5, Some(Probe::BadSignature)),
            delivery(Some(400), 5, Some(Probe::StaleTimestamp)),
            delivery(Some(200), 5, Some(Probe::Duplicate)),
        ])
        .is_empty()
    );
}

#[test]
fn a_finding_made_again_is_counted_with_its_first_requests() {
    let store = Store::default();
    let mut judge = Judge::new(None);
    for n in 0..15 {
        judge.request(&create(n, None, f64::from(n) * 10.0), &store);
    }
    let verdict = judge.verdict(&Strict::violations());
    assert_eq!(verdict.findings.len(), 1);
    assert_eq!(verdict.findings[0].count, 15);
    assert_eq!(verdict.findings[0].request_ids.len(), 10);
    assert_eq!(verdict.checked.requests, 15);
    judge.reset();
    assert_eq!(judge.verdict(&Strict::violations()).checked.requests, 0);
}

#[test]
fn every_rule_has_its_id_once() {
    let ids: std::collections::HashSet<_> = rules::Rule::ALL.iter().map(|r| r.id()).collect();
    assert_eq!(ids.len(), rules::Rule::ALL.len());
}

#[test]
fn the_bookkeeping_forgets_its_oldest_beyond_the_cap() {
    let mut map = Bounded::new(2);
    map.insert(1, "a");
    map.insert(2, "b");
    map.remove(&1);
    map.insert(1, "a again");
    map.insert(3, "c");
    assert_eq!(map.get(&2), None);
    assert_eq!(map.get(&1), Some(&"a again"));
    assert_eq!(map.get(&3), Some(&"c"));
}
