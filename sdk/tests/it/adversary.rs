//! The SDK against the mock at its worst: faults injected into the real
//! service rules (a create answered 503, a create whose answer is lost after
//! it acted, a poll dropped, a top-up answered 500) and answers cut to what
//! the service document guarantees, or padded with what no client knows.
//! Each ends as the rules promise: one generation, one charge, nothing paid
//! twice, the id never lost.

use mediagen::{Error, Generation, GenerationRequest, GenerationStatus};
use mediagen_mock_server::{Fault, MockServer, Responses};

use crate::{App, within_deadline};

fn fox() -> GenerationRequest {
    GenerationRequest::new("flux-schnell", "a red fox")
}

/// The mock's view of the test user: generations and (available, reserved).
fn ledger(app: &App) -> (usize, (f64, f64)) {
    let generations = app
        .mock
        .get_user(app.user.user_id)
        .map_or(0, |u| u.generations);
    let balance = app.mock.balance(app.user.user_id).expect("the user");
    (generations, balance)
}

#[tokio::test]
async fn a_create_whose_answer_is_lost_after_it_acted_is_repeated_with_its_key_once() {
    let app = App::start().await;
    let fault = app
        .mock
        .inject_fault(Fault::drop_after().on("POST", "/v1/generations"))
        .unwrap();

    let created = within_deadline(app.clock.run(app.client.generations().create(fox())))
        .await
        .unwrap();

    assert_eq!(fault.remaining(), 0, "the first answer was lost");
    let posts: Vec<_> = app
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 2, "sent again after the lost answer");
    assert!(
        posts
            .iter()
            .all(|r| r.idempotency_key.as_deref() == Some(created.idempotency_key.as_str())),
        "{posts:?}"
    );
    let (generations, (available, reserved)) = ledger(&app);
    assert_eq!(generations, 1, "one generation");
    assert_eq!(reserved, created.cost_rub, "one charge");
    assert_eq!(available + reserved, 1000.0);
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn a_create_refused_with_503_is_retried_and_made_once() {
    let app = App::start().await;
    app.mock
        .inject_fault(
            Fault::error(503, "SERVICE_UNAVAILABLE")
                .on("POST", "/v1/generations")
                .times(2),
        )
        .unwrap();

    let done = within_deadline(
        app.clock
            .run(app.client.generations().create_and_wait(fox())),
    )
    .await
    .unwrap();

    assert_eq!(done.status, GenerationStatus::Succeeded);
    let (generations, (available, _)) = ledger(&app);
    assert_eq!(generations, 1);
    assert_eq!(available, 1000.0 - done.cost_rub, "charged once");
}

#[tokio::test]
async fn a_wait_goes_on_through_dropped_and_failed_polls() {
    let app = App::start().await;
    let created = app.client.generations().create(fox()).await.unwrap();
    app.mock
        .inject_fault(Fault::drop_connection().on("GET", "/v1/generations/*"))
        .unwrap();
    app.mock
        .inject_fault(
            Fault::error(502, "GATEWAY_TIMEOUT")
                .on("GET", "/v1/generations/*")
                .times(2),
        )
        .unwrap();

    let done = within_deadline(app.clock.run(app.client.generations().wait(created.id)))
        .await
        .unwrap();

    assert_eq!(done.status, GenerationStatus::Succeeded);
}

#[tokio::test]
async fn a_top_up_answered_500_is_sent_once_and_said_to_be_unknown() {
    let app = App::start().await;
    app.mock
        .inject_fault(
            Fault::error(500, "INTERNAL_ERROR")
                .on("POST", "/v1/billing/topup")
                .times(5),
        )
        .unwrap();

    let err = within_deadline(app.clock.run(app.client.billing().topup(1000.0, None)))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::OutcomeUnknown { .. }), "{err:?}");
    let sent = app
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/billing/topup")
        .count();
    assert_eq!(sent, 1, "a payment is never sent twice");
}

/// A mock answering in `mode`, and a generation made and followed to its end.
async fn generated_in(mode: Responses) -> (App, Generation) {
    let mock = MockServer::builder().responses(mode).start().await;
    let app = App::with(mock, 1000.0).await;
    let done = within_deadline(
        app.clock
            .run(app.client.generations().create_and_wait(fox())),
    )
    .await
    .unwrap();
    assert_eq!(done.status, GenerationStatus::Succeeded);
    (app, done)
}

#[tokio::test]
async fn create_wait_and_download_work_with_only_the_guaranteed_fields() {
    let (app, done) = generated_in(Responses::Minimal).await;
    assert!(
        done.model_slug.is_none(),
        "a designed field the mock left out"
    );
    let dir = tempdir();
    let paths = within_deadline(
        app.clock
            .run(app.client.files().download_outputs(&done, &dir)),
    )
    .await
    .unwrap();
    assert_eq!(paths.len(), 1);
    assert!(std::fs::metadata(&paths[0]).unwrap().len() > 0);
    std::fs::remove_dir_all(dir).ok();

    let balance = app.client.billing().balance().await.unwrap();
    assert_eq!(balance.available_rub, 1000.0 - done.cost_rub);
}

#[tokio::test]
async fn every_area_reads_answers_padded_with_what_no_client_knows() {
    let (app, done) = generated_in(Responses::Extra).await;
    assert!(done.model_slug.is_some(), "designed fields still read");
    app.client.billing().balance().await.unwrap();
    app.client.account().get().await.unwrap();
    app.client.catalog().get().await.unwrap();
    app.client.webhooks().list().await.unwrap();
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mediagen-adversary-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
