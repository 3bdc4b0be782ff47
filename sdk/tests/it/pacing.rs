//! Rate-limit pacing against the mock's real limits (60 requests a minute per
//! address, fixed windows): the client spends no request on a 429.

use std::time::Duration;

use futures::future::join_all;
use mediagen::{GenerationRequest, GenerationStatus, LimitScope, WaitOptions};

use crate::{App, within_deadline};

/// The most requests the mock saw in any 60 seconds.
fn busiest_minute(app: &App) -> usize {
    let times: Vec<_> = app.requests().into_iter().map(|r| r.at).collect();
    times
        .iter()
        .map(|start| {
            times
                .iter()
                .filter(|t| **t >= *start && (**t - *start).as_seconds_f64() < 60.0)
                .count()
        })
        .max()
        .unwrap_or(0)
}

async fn wait_on_five(app: &App, options: WaitOptions) {
    let mut ids = Vec::new();
    for n in 0..5 {
        let request =
            GenerationRequest::new("flux-schnell", format!("mock:delay=150 fox number {n}"));
        ids.push(app.client.generations().create(request).await.unwrap().id);
    }
    let waits = ids.iter().map(|id| {
        app.clock
            .run(app.client.generations().wait(*id).options(options.clone()))
    });
    let results = within_deadline(join_all(waits)).await;
    for result in results {
        assert_eq!(result.unwrap().status, GenerationStatus::Succeeded);
    }
}

#[tokio::test]
async fn waiting_on_five_tasks_at_once_under_the_default_limit_gets_no_429() {
    let app = App::start().await;

    wait_on_five(&app, WaitOptions::default()).await;

    assert_eq!(app.rate_limited(), 0, "the mock answered 429");
    assert!(busiest_minute(&app) <= 60);
}

#[tokio::test]
async fn eager_polling_of_five_tasks_is_paced_to_the_limit_instead_of_hitting_it() {
    // Polling every second, five waiters would send 300 requests a minute; the
    // client spreads what is left of each window over the waiters instead.
    let app = App::start().await;
    let eager = WaitOptions::default()
        .initial_interval(Duration::from_secs(1))
        .max_interval(Duration::from_secs(1));

    wait_on_five(&app, eager).await;

    let requests = app.requests().len();
    assert!(
        requests > 60,
        "pacing was not exercised: only {requests} requests"
    );
    assert_eq!(app.rate_limited(), 0, "the mock answered 429");
    assert!(busiest_minute(&app) <= 60);
}

#[tokio::test]
async fn a_used_up_window_holds_requests_back_until_it_resets() {
    let app = App::start().await;

    within_deadline(app.clock.run(async {
        for _ in 0..75 {
            app.client.health().await.unwrap();
        }
    }))
    .await;

    assert_eq!(app.requests().len(), 75);
    assert_eq!(app.rate_limited(), 0);
    assert!(
        app.clock.elapsed() >= Duration::from_secs(60),
        "{:?}",
        app.clock.elapsed()
    );
}

#[tokio::test]
async fn the_rate_limit_values_follow_each_answer_of_the_mock() {
    let app = App::start().await;

    app.client.health().await.unwrap();
    let first = app.client.rate_limit().unwrap();
    app.client.catalog().get().await.unwrap();
    let second = app.client.rate_limit().unwrap();

    assert_eq!((first.limit, first.remaining), (60, 59));
    assert_eq!(second.remaining, 58);
    assert!(second.reset <= Duration::from_secs(60));
    assert_eq!(app.client.rate_limit_of(LimitScope::General), Some(second));
}

#[tokio::test]
async fn without_pacing_the_client_waits_out_retry_after_on_a_429() {
    let app = App::start().await;
    let client = mediagen::Client::builder()
        .base_url(app.mock.uri())
        .api_key(&app.user.api_key)
        .clock(app.clock.clone())
        .pacing(false)
        .build()
        .unwrap();

    within_deadline(app.clock.run(async {
        for _ in 0..61 {
            client.health().await.unwrap();
        }
    }))
    .await;

    // The 61st request was refused once, then retried after the window reset.
    assert_eq!(app.rate_limited(), 1);
    assert_eq!(app.requests().len(), 62);
}
