//! Waiting for generations: status changes, typed failures, deadlines and
//! resuming, the growing interval, create-and-wait, the status stream.

use std::time::Duration;

use futures::TryStreamExt;
use mediagen::{
    Error, FailureAdvice, FailureCode, GenerationRequest, GenerationStatus, WaitOptions,
};

use crate::{App, within_deadline};

fn fox() -> GenerationRequest {
    GenerationRequest::new("flux-schnell", "a red fox")
}

#[tokio::test]
async fn wait_returns_the_succeeded_generation_and_reports_each_status_change() {
    let app = App::start().await;
    let created = app.client.generations().create(fox()).await.unwrap();
    let mut seen = Vec::new();

    let generation = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .wait(created.id)
                .on_status(|g| seen.push(g.status.clone())),
        ),
    )
    .await
    .unwrap();

    assert_eq!(generation.status, GenerationStatus::Succeeded);
    assert_eq!(generation.output_urls.len(), 1);
    assert_eq!(
        seen,
        [
            GenerationStatus::Pending,
            GenerationStatus::Processing,
            GenerationStatus::Succeeded
        ]
    );
}

#[tokio::test]
async fn the_polling_interval_grows_between_reads() {
    let app = App::start().await;
    let created = app
        .client
        .generations()
        .create(GenerationRequest::new("suno-v4", "a sea shanty"))
        .await
        .unwrap();

    within_deadline(app.clock.run(app.client.generations().wait(created.id)))
        .await
        .unwrap();

    let reads: Vec<_> = app
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .map(|r| r.at)
        .collect();
    let gaps: Vec<f64> = reads
        .windows(2)
        .map(|w| (w[1] - w[0]).as_seconds_f64())
        .collect();
    assert!(gaps.len() >= 5, "{gaps:?}");
    assert!(gaps.windows(2).all(|w| w[1] >= w[0] - 1e-3), "{gaps:?}");
    assert!(gaps.last().unwrap() > &gaps[0], "{gaps:?}");
    assert!(
        gaps.iter().all(|g| *g <= 15.0 + 1e-3),
        "capped at the maximum: {gaps:?}"
    );
}

#[tokio::test]
async fn a_failed_generation_is_a_typed_failure_that_says_whether_trying_again_helps() {
    let app = App::start().await;
    for (code, expected, retryable, advice) in [
        ("timeout", FailureCode::Timeout, true, FailureAdvice::Retry),
        (
            "content_policy",
            FailureCode::ContentPolicy,
            false,
            FailureAdvice::ChangeRequest,
        ),
        (
            "insufficient_credit",
            FailureCode::InsufficientCredit,
            true,
            FailureAdvice::RetryLaterOrOtherModel,
        ),
        (
            "input_fetch_failed",
            FailureCode::InputFetchFailed,
            false,
            FailureAdvice::CheckInputs,
        ),
    ] {
        let request = GenerationRequest::new("flux-schnell", format!("mock:fail={code} a fox"));

        let err = within_deadline(
            app.clock
                .run(app.client.generations().create_and_wait(request)),
        )
        .await
        .unwrap_err();

        let Error::GenerationFailed(failure) = err else {
            panic!("{code}: expected a failure, got {err:?}");
        };
        assert_eq!(failure.code, expected);
        assert_eq!(failure.retryable(), retryable, "{code}");
        assert_eq!(failure.advice(), advice, "{code}");
        assert!(!failure.message.is_empty());
        assert_eq!(failure.generation.status, GenerationStatus::Failed);
    }
    // Every failed task was refunded.
    assert_eq!(app.mock.balance(app.user.user_id), Some((1000.0, 0.0)));
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn a_deadline_stops_the_wait_and_waiting_again_resumes_it() {
    let app = App::start().await;
    let created = app
        .client
        .generations()
        .create(GenerationRequest::new("veo-3", "waves at dusk"))
        .await
        .unwrap();

    let err = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .wait(created.id)
                .timeout(Duration::from_secs(30)),
        ),
    )
    .await
    .unwrap_err();

    match err {
        Error::WaitTimeout { id, status, .. } => {
            assert_eq!(id, created.id);
            assert_eq!(status, GenerationStatus::Processing);
        }
        other => panic!("expected a time-out, got {other:?}"),
    }
    let waited = app.clock.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(32),
        "{waited:?}"
    );

    let generation = within_deadline(app.clock.run(app.client.generations().wait(created.id)))
        .await
        .unwrap();
    assert_eq!(generation.status, GenerationStatus::Succeeded);
    // One task, one charge: waiting again created nothing.
    assert_eq!(
        app.requests().iter().filter(|r| r.method == "POST").count(),
        1
    );
}

#[tokio::test]
async fn create_and_wait_creates_once_and_returns_the_result() {
    let app = App::start().await;
    let mut statuses = Vec::new();

    let generation = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .create_and_wait(fox())
                .options(WaitOptions::default().max_interval(Duration::from_secs(2)))
                .on_status(|g| statuses.push(g.status.clone())),
        ),
    )
    .await
    .unwrap();

    assert_eq!(generation.status, GenerationStatus::Succeeded);
    assert_eq!(statuses.last(), Some(&GenerationStatus::Succeeded));
    assert_eq!(
        app.requests().iter().filter(|r| r.method == "POST").count(),
        1
    );
    assert_eq!(app.mock.balance(app.user.user_id), Some((997.5, 0.0)));
}

#[tokio::test]
async fn watch_streams_each_status_once_and_ends_at_the_final_one() {
    let app = App::start().await;
    let created = app.client.generations().create(fox()).await.unwrap();

    let statuses: Vec<GenerationStatus> = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .watch(created.id, WaitOptions::default())
                .map_ok(|g| g.status)
                .try_collect::<Vec<_>>(),
        ),
    )
    .await
    .unwrap();

    assert_eq!(
        statuses,
        [
            GenerationStatus::Pending,
            GenerationStatus::Processing,
            GenerationStatus::Succeeded
        ]
    );
}

#[tokio::test]
async fn a_wait_on_a_finished_generation_answers_at_the_first_read() {
    let app = App::start().await;
    let created = app.client.generations().create(fox()).await.unwrap();
    app.mock.advance_clock(60.0).unwrap();

    let generation = within_deadline(app.clock.run(app.client.generations().wait(created.id)))
        .await
        .unwrap();

    assert_eq!(generation.status, GenerationStatus::Succeeded);
    assert_eq!(
        app.requests().iter().filter(|r| r.method == "GET").count(),
        1
    );
}

#[tokio::test]
async fn waiting_on_an_unknown_id_fails_at_once_with_not_found() {
    let app = App::start().await;

    let err = within_deadline(
        app.clock
            .run(app.client.generations().wait(uuid::Uuid::new_v4())),
    )
    .await
    .unwrap_err();

    assert_eq!(err.kind(), Some(&mediagen::ErrorKind::NotFound));
}
