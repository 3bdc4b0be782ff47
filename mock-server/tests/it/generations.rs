//! Creation, one test per rule of `POST /v1/generations`, plus estimate, list and cancel.

use std::time::Duration;

use mediagen_mock_server::ModelState;
use reqwest::Method;
use serde_json::json;

use crate::{App, assert_conforms, image_request};

#[tokio::test]
async fn accepted_create_answers_202_with_exactly_id_status_and_cost() {
    let app = App::start().await;
    let reply = app.create(image_request("a lighthouse")).await;
    assert_eq!(reply.status, 202);
    let body = reply.body.as_object().expect("object");
    let mut keys: Vec<_> = body.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["costRub", "id", "status"]);
    assert_eq!(reply.body["status"], "PENDING");
    assert!(uuid::Uuid::parse_str(reply.body["id"].as_str().expect("id")).is_ok());
    assert_conforms("CreateGenerationResponse", &reply.body);
}

#[tokio::test]
async fn cost_is_reserved_at_the_moment_of_the_answer() {
    let app = App::start().await;
    let reply = app
        .create(json!({"modelSlug": "flux-schnell", "prompt": "p", "params": {"resolution": "2k"}}))
        .await;
    assert_eq!(reply.body["costRub"], 5.0, "2.5 RUB × 2 for 2k");
    assert_eq!(app.balance(), (995.0, 5.0));
}

#[tokio::test]
async fn missing_required_property_is_400_with_missing_property() {
    let app = App::start().await;
    let reply = app.create(json!({"prompt": "p"})).await;
    reply.assert_error(400, "VALIDATION_ERROR");
    let fields = reply.body["error"]["details"]["fields"]
        .as_array()
        .expect("fields");
    assert!(
        fields
            .iter()
            .any(|f| f["keyword"] == "required" && f["params"]["missingProperty"] == "modelSlug"),
        "{fields:?}"
    );
    assert_eq!(app.balance(), (1000.0, 0.0));
}

#[tokio::test]
async fn params_outside_the_model_are_400_with_each_field() {
    let app = App::start().await;
    let reply = app
        .create(json!({"modelSlug": "flux-schnell", "prompt": "p", "params": {"resolution": "8k", "colour": "red"}}))
        .await;
    reply.assert_error(400, "VALIDATION_ERROR");
    let fields = reply.body["error"]["details"]["fields"]
        .as_array()
        .expect("fields");
    assert!(
        fields
            .iter()
            .any(|f| f["path"] == "/params/resolution" && f["keyword"] == "enum"),
        "{fields:?}"
    );
    // As Ajv reports it: the object's path, the extra name in params.
    assert!(
        fields
            .iter()
            .any(|f| f["path"] == "/params" && f["params"]["additionalProperty"] == "colour"),
        "{fields:?}"
    );
}

#[tokio::test]
async fn unknown_model_slug_is_404_not_found() {
    let app = App::start().await;
    app.create(json!({"modelSlug": "no-such-model", "prompt": "p"}))
        .await
        .assert_error(404, "NOT_FOUND");
}

#[tokio::test]
async fn sixth_active_task_is_429_without_retry_after() {
    let app = App::start().await;
    for i in 0..5 {
        assert_eq!(
            app.create(image_request(&format!("p{i}"))).await.status,
            202
        );
    }
    let reply = app.create(image_request("one too many")).await;
    reply.assert_error(429, "RATE_LIMIT_ERROR");
    assert_eq!(
        reply.body["error"]["message"],
        "Maximum 5 concurrent generations allowed"
    );
    assert!(reply.header("retry-after").is_none());
    assert!(reply.body["error"]["details"]["retryAfter"].is_null());
    assert!(
        reply.header("x-ratelimit-limit").is_some(),
        "limit headers on errors too"
    );
}

#[tokio::test]
async fn balance_below_cost_is_402_with_required_and_available() {
    let mock = mediagen_mock_server::MockServer::start().await;
    let app = App::with(mock).await;
    let poor = app.mock.create_user(1.0).unwrap();
    let reply = app
        .send(
            Method::POST,
            "/v1/generations",
            Some(&poor.api_key),
            Some(image_request("p")),
        )
        .await;
    reply.assert_error(402, "INSUFFICIENT_BALANCE");
    assert_eq!(reply.body["error"]["details"]["required"], 2.5);
    assert_eq!(reply.body["error"]["details"]["available"], 1.0);
}

#[tokio::test]
async fn same_idempotency_key_returns_the_existing_generation_and_charges_once_whatever_the_body() {
    let app = App::start().await;
    let first = app
        .create_with_key(&app.key, "order-42", image_request("first"))
        .await;
    let again = app
        .create_with_key(
            &app.key,
            "order-42",
            json!({"modelSlug": "veo-3", "prompt": "a different body"}),
        )
        .await;
    assert_eq!(again.status, 202);
    assert_eq!(again.body["id"], first.body["id"]);
    assert_eq!(again.body["costRub"], first.body["costRub"]);
    assert_eq!(app.balance(), (997.5, 2.5));
    let listed = app.get("/v1/generations").await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn idempotency_keys_are_per_user() {
    let app = App::start().await;
    let other = app.mock.create_user(100.0).unwrap();
    let mine = app
        .create_with_key(&app.key, "shared", image_request("p"))
        .await;
    let theirs = app
        .create_with_key(&other.api_key, "shared", image_request("p"))
        .await;
    assert_eq!(theirs.status, 202);
    assert_ne!(mine.body["id"], theirs.body["id"]);
}

#[tokio::test]
async fn replay_reports_the_current_status() {
    let app = App::start().await;
    let first = app.create_with_key(&app.key, "k", image_request("p")).await;
    app.mock.advance_clock(60.0).unwrap();
    let again = app.create_with_key(&app.key, "k", image_request("p")).await;
    assert_eq!(again.body["id"], first.body["id"]);
    assert_eq!(again.body["status"], "SUCCEEDED");
}

#[tokio::test]
async fn a_key_longer_than_255_characters_is_refused_at_its_header_and_creates_nothing() {
    let app = App::start().await;
    let reply = app
        .create_with_key(&app.key, &"k".repeat(256), image_request("p"))
        .await;
    reply.assert_error(400, "VALIDATION_ERROR");
    assert_eq!(
        reply.body["error"]["details"]["fields"][0]["path"],
        "/headers/Idempotency-Key"
    );
    assert_eq!(app.balance(), (1000.0, 0.0), "nothing reserved");
}

#[tokio::test]
async fn key_still_executing_is_409_conflict() {
    let app = App::start().await;
    app.control(
        Method::PUT,
        "/_mock/settings",
        json!({"createLatencySeconds": 5}),
    )
    .await;
    let send = || {
        let (http, url, key) = (
            app.http.clone(),
            app.url("/v1/generations"),
            app.key.clone(),
        );
        tokio::spawn(async move {
            let response = http
                .post(url)
                .bearer_auth(key)
                .header("Idempotency-Key", "slow")
                .json(&image_request("p"))
                .send()
                .await;
            response.map(|r| r.status().as_u16())
        })
    };
    let (a, b) = (send(), send());
    // Whichever arrives second is refused at once; the first stays parked on
    // the manual clock until it moves.
    while !a.is_finished() && !b.is_finished() {
        tokio::task::yield_now().await;
    }
    app.mock.advance_clock(5.0).unwrap();
    let mut statuses = [
        a.await.expect("joined").expect("sent"),
        b.await.expect("joined").expect("sent"),
    ];
    statuses.sort_unstable();
    assert_eq!(statuses, [202, 409]);
    assert_eq!(
        app.create_with_key(&app.key, "slow", image_request("p"))
            .await
            .status,
        202
    );
    assert_eq!(app.balance(), (997.5, 2.5), "one charge");
}

#[tokio::test]
async fn failed_create_releases_its_key_for_a_retry() {
    let app = App::start().await;
    let reply = app
        .create_with_key(
            &app.key,
            "retry-me",
            json!({"modelSlug": "no-such", "prompt": "p"}),
        )
        .await;
    reply.assert_error(404, "NOT_FOUND");
    let reply = app
        .create_with_key(&app.key, "retry-me", image_request("p"))
        .await;
    assert_eq!(reply.status, 202);
}

#[tokio::test]
async fn model_states_give_their_documented_errors_and_take_no_money() {
    let app = App::start().await;
    for (state, status, code) in [
        (ModelState::Disabled, 403, "MODEL_NOT_AVAILABLE"),
        (ModelState::Withdrawn, 410, "MODEL_UNAVAILABLE"),
        (ModelState::MarginGuard, 503, "MARGIN_GUARD"),
        (ModelState::CircuitOpen, 503, "UPSTREAM_CIRCUIT_OPEN"),
        (ModelState::PricingMissing, 400, "VALIDATION_ERROR"),
    ] {
        app.mock.set_model_state("flux-schnell", state).unwrap();
        let reply = app.create(image_request("p")).await;
        reply.assert_error(status, code);
        assert_eq!(
            reply.body["error"]["details"]["modelSlug"], "flux-schnell",
            "a model error names the model"
        );
        if state == ModelState::PricingMissing {
            assert_eq!(
                reply.body["error"]["message"],
                "Model pricing not configured"
            );
            assert_eq!(
                reply.body["error"]["details"]["fields"][0]["path"],
                "/modelSlug"
            );
        }
    }
    assert_eq!(app.balance(), (1000.0, 0.0));
    app.mock
        .set_model_state("flux-schnell", ModelState::Available)
        .unwrap();
    assert_eq!(app.create(image_request("p")).await.status, 202);
}

#[tokio::test]
async fn consecutive_moderation_rejections_block_the_model_with_409() {
    let app = App::start().await;
    for _ in 0..3 {
        assert_eq!(
            app.create(image_request("mock:fail=moderation_rejected"))
                .await
                .status,
            202
        );
        app.mock.advance_clock(60.0).unwrap();
    }
    let reply = app.create(image_request("a calm sea")).await;
    reply.assert_error(409, "MODERATION_REPEAT_BLOCKED");
    let details = &reply.body["error"]["details"];
    assert_eq!(details["modelSlug"], "flux-schnell");
    assert_eq!(details["streak"], 3);
    assert!(details["modelId"].is_string());
    let other_model = app
        .create(json!({"modelSlug": "imagen-4", "prompt": "a calm sea"}))
        .await;
    assert_eq!(other_model.status, 202, "other models stay open");
}

#[tokio::test]
async fn estimate_prices_a_request_without_creating_or_charging() {
    let app = App::start().await;
    let reply = app
        .post("/v1/generations/estimate", json!({"modelSlug": "kling-2-1", "prompt": "waves", "params": {"duration": 10, "resolution": "1080p"}}))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_conforms("Estimate", &reply.body);
    assert_eq!(reply.body["costRub"], 140.0, "8 RUB × 10 s × 1.75");
    assert_eq!(reply.body["sufficient"], true);
    assert_eq!(app.balance(), (1000.0, 0.0));
    assert_eq!(app.get("/v1/generations").await.body["data"], json!([]));
}

#[tokio::test]
async fn list_pages_newest_first_with_a_cursor_and_filters() {
    let app = App::unlimited().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(app.create(image_request(&format!("p{i}"))).await.body["id"].clone());
    }
    let first = app.get("/v1/generations?limit=2").await;
    assert_conforms("GenerationList", &first.body);
    assert_eq!(first.body["data"][0]["id"], ids[4]);
    assert_eq!(first.body["hasMore"], true);
    let cursor = first.body["nextCursor"]
        .as_str()
        .expect("cursor")
        .to_owned();
    let second = app
        .get(&format!("/v1/generations?limit=2&cursor={cursor}"))
        .await;
    assert_eq!(second.body["data"][0]["id"], ids[2]);
    let pending = app
        .get("/v1/generations?status=PENDING&modelSlug=flux-schnell&limit=100")
        .await;
    assert_eq!(pending.body["data"].as_array().map(Vec::len), Some(5));
    assert_eq!(pending.body["hasMore"], false);
    assert!(pending.body["nextCursor"].is_null());
    app.get("/v1/generations?status=DONE")
        .await
        .assert_error(400, "VALIDATION_ERROR");
    app.get("/v1/generations?limit=0")
        .await
        .assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn cancel_of_a_pending_task_returns_the_reserve_and_later_cancel_is_409() {
    let app = App::start().await;
    let id = app.create(image_request("p")).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let reply = app
        .post(&format!("/v1/generations/{id}/cancel"), json!({}))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["status"], "CANCELLED");
    assert_conforms("Generation", &reply.body);
    assert_eq!(app.balance(), (1000.0, 0.0));
    app.mock.advance_clock(60.0).unwrap();
    assert_eq!(
        app.get(&format!("/v1/generations/{id}")).await.body["status"],
        "CANCELLED",
        "never starts"
    );
    app.post(&format!("/v1/generations/{id}/cancel"), json!({}))
        .await
        .assert_error(409, "CONFLICT_ERROR");
    app.mock.check_ledger().expect("ledger holds");
}

/// Sends a create with `key` that the client gives up on after `patience`:
/// `None` when it timed out, the status otherwise.
async fn create_giving_up_after(app: &App, key: &str, patience: Duration) -> Option<u16> {
    app.http
        .post(app.url("/v1/generations"))
        .bearer_auth(&app.key)
        .header("Idempotency-Key", key)
        .json(&image_request("a slow lighthouse"))
        .timeout(patience)
        .send()
        .await
        .ok()
        .map(|r| r.status().as_u16())
}

/// Retries the create with `key` until the first attempt's work is done on
/// the service's side (409 while it is in flight), within a bound.
async fn retry_until_done(app: &App, key: &str) -> crate::Reply {
    for _ in 0..500 {
        let reply = app
            .create_with_key(&app.key, key, image_request("a slow lighthouse"))
            .await;
        if reply.status != 409 {
            return reply;
        }
        tokio::task::yield_now().await;
    }
    panic!("the key {key} stayed in flight after its create's latency passed");
}

/// The service finishes a request whose client went away: a client that
/// times out during a slow create, then retries with its key, gets its one
/// generation and one charge (rule 7), never a key stuck in flight.
#[tokio::test]
async fn a_create_whose_client_gave_up_during_its_latency_is_finished_and_its_key_answers_it() {
    let app = App::start().await;
    let mut update = mediagen_mock_server::SettingsUpdate::default();
    update.create_latency_seconds = Some(3.0);
    app.mock.update_settings(update).unwrap();

    // The manual clock holds the create in its latency until it moves.
    assert_eq!(
        create_giving_up_after(&app, "gave-up", Duration::from_millis(500)).await,
        None,
        "the client times out"
    );
    assert_eq!(
        create_giving_up_after(&app, "gave-up", Duration::from_secs(5)).await,
        Some(409),
        "the first attempt is still in flight (rule 8)"
    );
    app.mock.advance_clock(3.0).unwrap();
    let reply = retry_until_done(&app, "gave-up").await;

    assert_one_generation_charged_once(&app, &reply).await;
}

/// The retry's answer is the user's only generation, charged once.
async fn assert_one_generation_charged_once(app: &App, reply: &crate::Reply) {
    assert_eq!(reply.status, 202, "{}", reply.body);
    assert_eq!(app.balance(), (997.5, 2.5), "one charge");
    let listed = app.get("/v1/generations").await;
    assert_eq!(
        listed.body["data"].as_array().map(Vec::len),
        Some(1),
        "{}",
        listed.body
    );
    assert_eq!(listed.body["data"][0]["id"], reply.body["id"]);
}

/// The same when the answer is held back after the service acted (a delay
/// fault): the retry finds the generation the first attempt made.
#[tokio::test]
async fn a_create_whose_client_gave_up_during_a_delayed_answer_is_found_by_its_key() {
    let app = App::start().await;
    app.mock
        .inject_fault(
            mediagen_mock_server::Fault::delay(30.0)
                .on("POST", "/v1/generations")
                .times(1),
        )
        .unwrap();

    assert_eq!(
        create_giving_up_after(&app, "held", Duration::from_millis(500)).await,
        None,
        "the client times out"
    );
    let reply = retry_until_done(&app, "held").await;

    assert_one_generation_charged_once(&app, &reply).await;
}
