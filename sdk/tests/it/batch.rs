//! Batches: at most 5 active at once, each started as soon as a slot frees,
//! results in input order, progress reported.

use std::sync::{Arc, Mutex};

use mediagen::{BatchEvent, BatchProgress, Error, GenerationRequest, GenerationStatus};

use crate::{App, within_deadline};

/// A request that takes `seconds` of work per attempt on the mock.
fn taking(seconds: u32, n: usize) -> GenerationRequest {
    GenerationRequest::new(
        "flux-schnell",
        format!("mock:delay={seconds} fox number {n}"),
    )
}

#[tokio::test]
async fn a_batch_keeps_at_most_five_active_and_returns_results_in_input_order() {
    let app = App::start().await;
    let requests: Vec<_> = (0..12)
        .map(|n| taking([7, 3, 11, 5, 2][n % 5], n))
        .collect();
    let peak = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&peak);

    let results = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests)
                .on_progress(move |p| {
                    let mut peak = seen.lock().unwrap();
                    *peak = (*peak).max(p.active);
                }),
        ),
    )
    .await;

    assert_eq!(results.len(), 12);
    for (n, result) in results.iter().enumerate() {
        let generation = result.as_ref().unwrap_or_else(|e| panic!("#{n}: {e}"));
        assert_eq!(generation.status, GenerationStatus::Succeeded);
        assert!(
            generation
                .prompt
                .as_deref()
                .unwrap()
                .ends_with(&format!("fox number {n}")),
            "result {n} is out of order"
        );
    }
    assert_eq!(*peak.lock().unwrap(), 5);
    // The service never saw a sixth active task: no create was refused.
    let creates: Vec<_> = app
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(creates.len(), 12);
    assert!(creates.iter().all(|r| r.status == Some(202)));
    assert_eq!(app.rate_limited(), 0);
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn the_next_request_starts_as_soon_as_a_slot_frees() {
    let app = App::start().await;
    // One quick request among four slow ones, then a sixth that waits for a slot.
    let mut requests = vec![taking(2, 0)];
    requests.extend((1..5).map(|n| taking(300, n)));
    requests.push(taking(2, 5));

    let results = within_deadline(app.clock.run(app.client.generations().batch(requests))).await;

    let generations: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    let quick_done = generations[0].finished_at.unwrap();
    let sixth_created = generations[5].created_at.unwrap();
    let slow_done = generations[1..5]
        .iter()
        .map(|g| g.finished_at.unwrap())
        .min()
        .unwrap();
    assert!(
        sixth_created >= quick_done,
        "the sixth started before a slot was free"
    );
    assert!(
        sixth_created < slow_done,
        "the sixth waited for the whole first round instead of the first free slot"
    );
    assert!((sixth_created - quick_done).as_seconds_f64() < 20.0);
}

#[tokio::test]
async fn progress_is_told_when_the_counts_change_and_only_then() {
    let app = App::start().await;
    let requests: Vec<_> = (0..3).map(|n| taking(20, n)).collect();
    let events: Arc<Mutex<Vec<BatchProgress>>> = Arc::default();
    let sink = Arc::clone(&events);

    within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests)
                .on_progress(move |p| sink.lock().unwrap().push(p.clone())),
        ),
    )
    .await;

    let events = events.lock().unwrap();
    for index in 0..3 {
        let mine: Vec<_> = events
            .iter()
            .filter(|p| p.index == index)
            .map(|p| &p.event)
            .collect();
        assert!(
            matches!(
                mine.as_slice(),
                [BatchEvent::Created { .. }, BatchEvent::Succeeded { .. }]
            ),
            "{mine:?}"
        );
    }
    // Three creates, then three ends; no status read that changes nothing is told.
    let counts: Vec<_> = events.iter().map(|p| (p.finished, p.active)).collect();
    assert_eq!(counts, [(0, 1), (0, 2), (0, 3), (1, 2), (2, 1), (3, 0)]);
    let last = events.last().unwrap();
    assert_eq!((last.total, last.succeeded, last.failed), (3, 3, 0));
}

#[tokio::test]
async fn a_failed_request_does_not_stop_the_others() {
    let app = App::start().await;
    let requests = vec![
        taking(2, 0),
        GenerationRequest::new("flux-schnell", "mock:fail=invalid_input fox number 1"),
        GenerationRequest::new("no-such-model", "fox number 2"),
        taking(2, 3),
    ];

    let results = within_deadline(
        app.clock
            .run(app.client.generations().batch(requests).max_active(2)),
    )
    .await;

    assert!(results[0].is_ok());
    assert!(matches!(&results[1], Err(Error::GenerationFailed(f)) if !f.retryable()));
    assert_eq!(
        results[2].as_ref().unwrap_err().kind(),
        Some(&mediagen::ErrorKind::NotFound)
    );
    assert!(results[3].is_ok());
}

#[tokio::test]
async fn a_create_refused_for_a_slot_goes_again_as_soon_as_a_task_of_the_batch_ends() {
    let app = App::start().await;
    // The user's other tasks hold 3 of the 5 slots for ten minutes.
    for n in 0..3 {
        app.client
            .generations()
            .create(taking(600, 100 + n))
            .await
            .unwrap();
    }
    // Two of these fit; the third is refused until the short one ends, and
    // meanwhile sleeps through the wait schedule's pauses (1, 1.5, 2.25, 3.4 s…),
    // which end at other moments than the reads that find the short one ended.
    let requests = vec![taking(5, 0), taking(600, 1), taking(5, 2)];

    let results = within_deadline(app.clock.run(app.client.generations().batch(requests))).await;

    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let log = app.requests();
    let refused_key = log
        .iter()
        .find(|r| r.method == "POST" && r.status == Some(429))
        .and_then(|r| r.idempotency_key.clone())
        .expect("a create refused with the concurrency limit");
    let accepted = log
        .iter()
        .find(|r| r.status == Some(202) && r.idempotency_key.as_ref() == Some(&refused_key))
        .expect("the refused create accepted later, with its key");
    // It went the moment the batch read one of its own tasks ended: at that
    // read's instant on the mock's clock, not at the end of a pause.
    let batch_reads: Vec<_> = log
        .iter()
        .filter(|r| r.method == "GET" && r.at <= accepted.at)
        .filter(|r| {
            results[..2]
                .iter()
                .any(|g| r.path == format!("/v1/generations/{}", g.as_ref().unwrap().id))
        })
        .collect();
    let last_read = batch_reads.last().expect("the batch read its tasks");
    assert_eq!(
        last_read.at, accepted.at,
        "the create waited after the read that showed a slot free"
    );
}

#[tokio::test]
async fn a_batch_waits_for_slots_held_by_the_users_other_tasks() {
    let app = App::start().await;
    for n in 0..3 {
        app.client
            .generations()
            .create(taking(40, 100 + n))
            .await
            .unwrap();
    }
    let requests: Vec<_> = (0..4).map(|n| taking(2, n)).collect();

    let results = within_deadline(app.clock.run(app.client.generations().batch(requests))).await;

    assert!(results.iter().all(Result::is_ok), "{results:?}");
    // Two of the four fitted at once; the others were refused with the
    // concurrency limit, waited, and were created with their first key.
    let creates: Vec<_> = app
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && !r.idempotency_key.as_deref().unwrap_or("").is_empty())
        .collect();
    assert!(creates.iter().any(|r| r.status == Some(429)));
    let accepted: std::collections::HashSet<_> = creates
        .iter()
        .filter(|r| r.status == Some(202))
        .map(|r| r.idempotency_key.clone())
        .collect();
    assert_eq!(accepted.len(), 3 + 4);
    app.mock.check_ledger().unwrap();
}
