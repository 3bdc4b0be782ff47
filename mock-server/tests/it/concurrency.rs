//! Truly parallel requests: the concurrency cap, idempotency and the ledger.

use futures::future::join_all;
use rand::{Rng, SeedableRng};
use reqwest::Method;
use serde_json::json;

use crate::{App, image_request};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_parallel_creates_for_one_user_accept_exactly_five() {
    let app = App::unlimited().await;
    let replies = join_all((0..100).map(|i| app.create(image_request(&format!("p{i}"))))).await;
    let accepted = replies.iter().filter(|r| r.status == 202).count();
    let refused = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!((accepted, refused), (5, 95));
    assert_eq!(app.balance(), (1000.0 - 5.0 * 2.5, 5.0 * 2.5));
    app.mock.check_ledger().expect("ledger holds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_parallel_creates_with_one_key_make_one_generation_and_one_charge() {
    let app = App::unlimited().await;
    let replies =
        join_all((0..100).map(|_| app.create_with_key(&app.key, "one-key", image_request("p"))))
            .await;
    let ids: std::collections::HashSet<_> = replies
        .iter()
        .filter(|r| r.status == 202)
        .map(|r| r.body["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 1, "one generation");
    assert!(
        replies.iter().all(|r| r.status == 202 || r.status == 409),
        "only 202 or 409"
    );
    assert_eq!(app.balance(), (997.5, 2.5), "one charge");
    let listed = app.get("/v1/generations").await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(1));
}

/// Random interleavings of creates, cancels, outcomes, balance changes and
/// clock moves across several users; after each round the ledger invariant
/// holds and every task has one charge and at most one refund.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ledger_invariant_holds_after_random_parallel_sequences() {
    let app = &App::unlimited().await;
    let users: Vec<_> = (0..4)
        .map(|_| app.mock.create_user(60.0).unwrap())
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6d65_6469_6167_656e);
    let prompts = [
        "a",
        "mock:fail=timeout",
        "mock:fail=content_policy",
        "mock:delay=30",
        "b",
    ];
    let models = [
        "flux-schnell",
        "imagen-4",
        "stable-audio-2",
        "yandex-speechkit",
    ];
    for round in 0..12 {
        let mut calls = Vec::new();
        for _ in 0..24 {
            let user = &users[rng.random_range(0..users.len())];
            let body = json!({
                "modelSlug": models[rng.random_range(0..models.len())],
                "prompt": prompts[rng.random_range(0..prompts.len())],
            });
            let key = user.api_key.clone();
            let idem = format!("k{}", rng.random_range(0..6));
            let use_key = rng.random_bool(0.5);
            calls.push(async move {
                let reply = if use_key {
                    app.create_with_key(&key, &idem, body).await
                } else {
                    app.send(Method::POST, "/v1/generations", Some(&key), Some(body))
                        .await
                };
                (key, reply)
            });
        }
        let replies = join_all(calls).await;
        for (_, reply) in &replies {
            assert!(
                [202, 402, 409, 429].contains(&reply.status.as_u16()),
                "round {round}: {:?} {}",
                reply.status,
                reply.body
            );
        }
        let cancels = replies
            .iter()
            .filter_map(|(key, r)| {
                r.body["id"]
                    .as_str()
                    .map(|id| (key.clone(), format!("/v1/generations/{id}/cancel")))
            })
            .take(rng.random_range(0..4))
            .map(|(key, path)| async move {
                app.send(Method::POST, &path, Some(&key), Some(json!({})))
                    .await
            });
        for reply in join_all(cancels).await {
            assert!(
                [200, 409].contains(&reply.status.as_u16()),
                "cancel: {}",
                reply.body
            );
        }
        if rng.random_bool(0.3) {
            let user = &users[rng.random_range(0..users.len())];
            app.control(
                Method::PUT,
                &format!("/_mock/users/{}/balance", user.user_id),
                json!({"balanceRub": 40}),
            )
            .await;
        }
        app.mock.advance_clock(rng.random_range(0.0..40.0)).unwrap();
        app.mock
            .check_ledger()
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
    }
    app.mock.advance_clock(3600.0).unwrap();
    app.mock.check_ledger().expect("ledger holds at the end");
    for user in &users {
        let (_, reserved) = app.mock.balance(user.user_id).expect("user");
        assert_eq!(
            reserved, 0.0,
            "nothing stays reserved once every task is final"
        );
    }
}
