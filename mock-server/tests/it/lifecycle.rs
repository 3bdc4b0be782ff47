//! The worker: PENDING → PROCESSING → SUCCEEDED or FAILED, driven by the clock.

use mediagen_mock_server::{FailureCode, ForcedOutcome, OutcomeKind};
use reqwest::Method;
use serde_json::json;

use crate::{App, assert_conforms, image_request};

async fn status(app: &App, id: &str) -> serde_json::Value {
    let reply = app.get(&format!("/v1/generations/{id}")).await;
    assert_eq!(reply.status, 200);
    assert_conforms("Generation", &reply.body);
    reply.body
}

#[tokio::test]
async fn task_goes_pending_processing_succeeded_as_the_clock_moves() {
    let app = App::start().await;
    let id = app.create(image_request("a lighthouse")).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(status(&app, &id).await["status"], "PENDING");
    app.mock.advance_clock(1.0).unwrap();
    let processing = status(&app, &id).await;
    assert_eq!(processing["status"], "PROCESSING");
    assert!(processing["startedAt"].is_string());
    assert_eq!(processing["outputUrls"], json!([]));
    app.mock.advance_clock(4.0).unwrap();
    let done = status(&app, &id).await;
    assert_eq!(done["status"], "SUCCEEDED");
    assert!(done["errorCode"].is_null());
    assert_eq!(app.balance(), (997.5, 0.0), "the charge is kept");
    app.mock.check_ledger().expect("ledger holds");
}

#[tokio::test]
async fn output_urls_serve_real_files_of_the_media_type() {
    let app = App::start().await;
    let image = app.create(image_request("a lighthouse")).await.body["id"].clone();
    let voice = app
        .create(json!({"modelSlug": "yandex-speechkit", "prompt": "Привет"}))
        .await
        .body["id"]
        .clone();
    let video = app
        .create(json!({"modelSlug": "kling-2-1", "prompt": "waves"}))
        .await
        .body["id"]
        .clone();
    app.mock.advance_clock(300.0).unwrap();
    for (id, content_type, magic) in [
        (image, "image/png", &b"\x89PNG"[..]),
        (voice, "audio/wav", &b"RIFF"[..]),
        (video, "video/mp4", &b"ftyp"[..]),
    ] {
        let body = status(&app, id.as_str().expect("id")).await;
        let url = body["outputUrls"][0]
            .as_str()
            .expect("an output URL")
            .to_owned();
        let file = app.http.get(&url).send().await.expect("download");
        assert_eq!(file.status(), 200);
        assert_eq!(file.headers()["content-type"], content_type);
        let bytes = file.bytes().await.expect("bytes");
        let found = bytes.windows(magic.len()).take(16).any(|w| w == magic);
        assert!(found, "{content_type} file starts with {magic:?}");
    }
}

#[tokio::test]
async fn provider_failure_uses_three_attempts_then_fails_and_refunds() {
    let app = App::start().await;
    app.mock
        .force_outcome(ForcedOutcome {
            user_id: Some(app.user_id),
            model_slug: None,
            outcome: OutcomeKind::Fail,
            error_code: Some(FailureCode::ProviderUnavailable),
            count: 1,
        })
        .unwrap();
    let id = app.create(image_request("p")).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    // flux-schnell attempts take 4 s: start at 1 s, attempts end at 5, 9 and 13 s.
    app.mock.advance_clock(12.0).unwrap();
    assert_eq!(
        status(&app, &id).await["status"],
        "PROCESSING",
        "third attempt still running"
    );
    assert_eq!(app.balance(), (997.5, 2.5));
    app.mock.advance_clock(1.0).unwrap();
    let failed = status(&app, &id).await;
    assert_eq!(failed["status"], "FAILED");
    assert_eq!(failed["errorCode"], "provider_unavailable");
    assert!(failed["errorMessage"].is_string());
    assert_eq!(app.balance(), (1000.0, 0.0), "the reserve is back");
    app.mock.check_ledger().expect("one charge, one refund");
}

#[tokio::test]
async fn forced_outcome_through_the_control_api_applies_to_matching_tasks_only() {
    let app = App::start().await;
    let reply = app
        .control(
            Method::POST,
            "/_mock/outcomes",
            json!({"modelSlug": "imagen-4", "outcome": "fail", "errorCode": "content_policy"}),
        )
        .await;
    assert_eq!(reply.status, 201);
    let other = app.create(image_request("p")).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let target = app
        .create(json!({"modelSlug": "imagen-4", "prompt": "p"}))
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    app.mock.advance_clock(60.0).unwrap();
    assert_eq!(status(&app, &other).await["status"], "SUCCEEDED");
    let failed = status(&app, &target).await;
    assert_eq!(
        (failed["status"].as_str(), failed["errorCode"].as_str()),
        (Some("FAILED"), Some("content_policy"))
    );
}

#[tokio::test]
async fn every_failure_code_can_be_typed_as_a_magic_prompt() {
    let app = App::unlimited().await;
    for code in FailureCode::ALL {
        let code = serde_json::to_value(code).expect("code");
        let code = code.as_str().expect("text");
        let id = app
            .create(image_request(&format!("mock:fail={code}")))
            .await
            .body["id"]
            .as_str()
            .expect("id")
            .to_owned();
        app.mock.advance_clock(60.0).unwrap();
        assert_eq!(status(&app, &id).await["errorCode"], code);
    }
    assert_eq!(app.balance(), (1000.0, 0.0), "every failure refunded");
    app.mock.check_ledger().expect("ledger holds");
}

#[tokio::test]
async fn prompt_longer_than_the_model_accepts_fails_with_prompt_too_long() {
    let app = App::start().await;
    let id = app
        .create(json!({"modelSlug": "stable-audio-2", "prompt": "a".repeat(1001)}))
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    app.mock.advance_clock(60.0).unwrap();
    assert_eq!(status(&app, &id).await["errorCode"], "prompt_too_long");
}

#[tokio::test]
async fn finished_task_frees_a_slot_under_the_concurrency_limit() {
    let app = App::start().await;
    for i in 0..5 {
        app.create(image_request(&format!("p{i}"))).await;
    }
    assert_eq!(app.create(image_request("sixth")).await.status, 429);
    app.mock.advance_clock(5.0).unwrap();
    assert_eq!(app.create(image_request("sixth")).await.status, 202);
}
