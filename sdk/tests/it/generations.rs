//! The generation area against the mock: create (idempotent), get, list, cancel,
//! estimate.

use futures::TryStreamExt;
use mediagen::{ErrorKind, GenerationFilter, GenerationRequest, GenerationStatus, MediaType};
use uuid::Uuid;

use crate::{App, within_deadline};

fn fox(n: usize) -> GenerationRequest {
    GenerationRequest::new("flux-schnell", format!("fox number {n}"))
}

#[tokio::test]
async fn create_answers_with_the_task_and_reserves_its_cost() {
    let app = App::start().await;

    let created = app.client.generations().create(fox(1)).await.unwrap();

    assert_eq!(created.status, GenerationStatus::Pending);
    assert_eq!(created.cost_rub, 2.5);
    assert_eq!(app.mock.balance(app.user.user_id), Some((997.5, 2.5)));
}

#[tokio::test]
async fn a_create_without_a_key_sends_a_fresh_uuid_v4() {
    let app = App::start().await;

    let created = app.client.generations().create(fox(1)).await.unwrap();

    let logged = app.requests();
    let key = logged[0]
        .idempotency_key
        .as_deref()
        .expect("a key was sent");
    assert_eq!(key, created.idempotency_key);
    assert_eq!(Uuid::parse_str(key).unwrap().get_version_num(), 4);
}

#[tokio::test]
async fn creating_twice_with_one_key_returns_one_task_charged_once() {
    let app = App::start().await;
    let request = fox(1).idempotency_key("order-4711");

    let first = app
        .client
        .generations()
        .create(request.clone())
        .await
        .unwrap();
    let second = app
        .client
        .generations()
        .create(request.clone())
        .await
        .unwrap();
    // Rule 7: the body is not compared.
    let third = app
        .client
        .generations()
        .create(GenerationRequest::new("veo-3", "something else").idempotency_key("order-4711"))
        .await
        .unwrap();

    assert_eq!(first.id, second.id);
    assert_eq!(first.id, third.id);
    assert_eq!(app.mock.balance(app.user.user_id), Some((997.5, 2.5)));
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn get_reads_the_generation_as_the_contract_describes_it() {
    let app = App::start().await;
    let created = app
        .client
        .generations()
        .create(fox(1).aspect_ratio("16:9"))
        .await
        .unwrap();

    let generation = app.client.generations().get(created.id).await.unwrap();

    assert_eq!(generation.id, created.id);
    assert_eq!(generation.status, GenerationStatus::Pending);
    assert_eq!(generation.media_type, Some(MediaType::Image));
    assert_eq!(generation.prompt.as_deref(), Some("fox number 1"));
    assert_eq!(generation.params.unwrap()["aspect_ratio"], "16:9");
    assert!(generation.output_urls.is_empty());
}

#[tokio::test]
async fn a_missing_or_foreign_generation_is_not_found() {
    let app = App::start().await;
    let other = app.mock.create_user(100.0).unwrap();
    let other_client = mediagen::Client::new(app.mock.uri(), &other.api_key).unwrap();
    let theirs = other_client.generations().create(fox(1)).await.unwrap();

    for id in [Uuid::new_v4(), theirs.id] {
        let err = app.client.generations().get(id).await.unwrap_err();
        assert_eq!(err.kind(), Some(&ErrorKind::NotFound));
    }
}

#[tokio::test]
async fn list_streams_every_page_newest_first() {
    let app = App::start().await;
    let mut ids = Vec::new();
    for round in 0..3 {
        for n in 0..4 {
            ids.push(
                app.client
                    .generations()
                    .create(fox(round * 4 + n))
                    .await
                    .unwrap()
                    .id,
            );
        }
        // Let this round finish, so the next stays under the 5 active tasks.
        app.mock.advance_clock(60.0).unwrap();
    }

    let listed: Vec<Uuid> = app
        .client
        .generations()
        .list(GenerationFilter::new().page_size(5))
        .map_ok(|g| g.id)
        .try_collect()
        .await
        .unwrap();

    ids.reverse();
    assert_eq!(listed, ids);
    let pages = app
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/v1/generations")
        .count();
    assert_eq!(pages, 3);
}

#[tokio::test]
async fn list_filters_by_status_and_model() {
    let app = App::start().await;
    let done = app.client.generations().create(fox(1)).await.unwrap();
    app.mock.advance_clock(60.0).unwrap();
    let pending = app.client.generations().create(fox(2)).await.unwrap();

    let succeeded: Vec<_> = app
        .client
        .generations()
        .list(GenerationFilter::new().status(GenerationStatus::Succeeded))
        .try_collect()
        .await
        .unwrap();
    let other_model: Vec<_> = app
        .client
        .generations()
        .list(GenerationFilter::new().model_slug("veo-3"))
        .try_collect()
        .await
        .unwrap();

    assert_eq!(
        succeeded.iter().map(|g| g.id).collect::<Vec<_>>(),
        [done.id]
    );
    assert!(other_model.is_empty());
    assert_ne!(done.id, pending.id);
}

#[tokio::test]
async fn cancel_returns_the_reserve_and_a_running_task_cannot_be_cancelled() {
    let app = App::start().await;
    let queued = app.client.generations().create(fox(1)).await.unwrap();

    let cancelled = app.client.generations().cancel(queued.id).await.unwrap();

    assert_eq!(cancelled.status, GenerationStatus::Cancelled);
    assert_eq!(app.mock.balance(app.user.user_id), Some((1000.0, 0.0)));

    let running = app.client.generations().create(fox(2)).await.unwrap();
    app.mock.advance_clock(2.0).unwrap();
    let err = app
        .client
        .generations()
        .cancel(running.id)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some(&ErrorKind::Conflict));
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn a_cancelled_generation_ends_a_wait_with_cancelled() {
    let app = App::start().await;
    let queued = app.client.generations().create(fox(1)).await.unwrap();
    app.client.generations().cancel(queued.id).await.unwrap();

    let err = within_deadline(app.clock.run(app.client.generations().wait(queued.id)))
        .await
        .unwrap_err();

    assert!(
        matches!(err, mediagen::Error::GenerationCancelled { id, idempotency_key: None } if id == queued.id)
    );
}

#[tokio::test]
async fn estimate_prices_a_request_without_creating_anything() {
    let app = App::start().await;
    let request = GenerationRequest::new("veo-3", "waves at dusk").param("duration", 6);

    let estimate = app.client.generations().estimate(&request).await.unwrap();

    assert_eq!(estimate.cost_rub, 270.0);
    assert!(estimate.sufficient);
    assert_eq!(estimate.available_rub, 1000.0);
    assert_eq!(app.mock.balance(app.user.user_id), Some((1000.0, 0.0)));
}
