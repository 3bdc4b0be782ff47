//! Every `error.code` comes back as a kind with its details typed, with the
//! request id and the HTTP status; unknown codes are kept as text.

use mediagen::{Error, ErrorKind, GenerationRequest};
use mediagen_mock_server::{MockServer, ModelState};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::{App, InstantClock, error_body, wire_client, within_deadline};

fn fox() -> GenerationRequest {
    GenerationRequest::new("flux-schnell", "a red fox")
}

#[tokio::test]
async fn insufficient_balance_carries_the_required_and_available_amounts() {
    let app = App::with(MockServer::start().await, 1.0).await;

    let err = app.client.generations().create(fox()).await.unwrap_err();

    let api = err.api().expect("an answer of the service");
    assert_eq!(
        api.kind,
        ErrorKind::InsufficientBalance {
            required: Some(2.5),
            available: Some(1.0)
        }
    );
    assert_eq!(api.status, 402);
    assert!(
        api.request_id
            .as_deref()
            .is_some_and(|id| id.starts_with("req_"))
    );
    assert!(api.timestamp.is_some());
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn a_validation_error_lists_the_failing_fields() {
    let app = App::start().await;

    let err = app
        .client
        .generations()
        .create(fox().aspect_ratio("7:3").param("colour", "red"))
        .await
        .unwrap_err();

    let Some(ErrorKind::Validation { fields, .. }) = err.kind() else {
        panic!("expected a validation error, got {err:?}");
    };
    let paths: Vec<&str> = fields.iter().map(|f| f.path.as_str()).collect();
    assert!(paths.contains(&"/params/aspect_ratio"), "{fields:?}");
    assert!(
        fields.iter().any(|f| f.keyword == "additionalProperties"),
        "{fields:?}"
    );
    assert_eq!(err.status(), Some(reqwest::StatusCode::BAD_REQUEST));
}

#[tokio::test]
async fn a_request_that_breaks_the_contract_is_refused_before_sending() {
    let app = App::start().await;

    let err = app
        .client
        .generations()
        .create(GenerationRequest::new("flux-schnell", ""))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::InvalidRequest(_)), "{err:?}");
    assert!(app.requests().is_empty());
}

#[tokio::test]
async fn an_unknown_model_is_not_found() {
    let app = App::start().await;

    let err = app
        .client
        .generations()
        .create(GenerationRequest::new("no-such-model", "a fox"))
        .await
        .unwrap_err();

    assert_eq!(err.kind(), Some(&ErrorKind::NotFound));
    assert_eq!(err.status(), Some(reqwest::StatusCode::NOT_FOUND));
    assert!(err.request_id().is_some());
}

#[tokio::test]
async fn model_errors_are_typed_and_tried_once() {
    let app = App::start().await;
    for (state, expected) in [
        (ModelState::Withdrawn, "MODEL_UNAVAILABLE"),
        (ModelState::Disabled, "MODEL_NOT_AVAILABLE"),
        (ModelState::MarginGuard, "MARGIN_GUARD"),
    ] {
        app.mock.set_model_state("flux-schnell", state).unwrap();
        let before = app.requests().len();

        let err = app.client.generations().create(fox()).await.unwrap_err();

        let api = err.api().unwrap();
        assert_eq!(api.code.as_str(), expected);
        assert!(matches!(
            api.kind,
            ErrorKind::ModelUnavailable { .. }
                | ErrorKind::ModelNotAvailable { .. }
                | ErrorKind::MarginGuard
        ));
        assert_eq!(app.requests().len(), before + 1, "{expected} was retried");
    }
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn moderation_repeat_blocked_names_the_model_and_the_streak() {
    let app = App::start().await;
    for _ in 0..3 {
        let request = GenerationRequest::new("flux-schnell", "mock:fail=moderation_rejected a fox");
        let created = app.client.generations().create(request).await.unwrap();
        let outcome =
            within_deadline(app.clock.run(app.client.generations().wait(created.id))).await;
        assert!(matches!(outcome, Err(Error::GenerationFailed(_))));
    }

    let err = app.client.generations().create(fox()).await.unwrap_err();

    assert_eq!(
        err.kind(),
        Some(&ErrorKind::ModerationRepeatBlocked {
            model_slug: Some("flux-schnell".into()),
            streak: Some(3)
        })
    );
    assert_eq!(err.status(), Some(reqwest::StatusCode::CONFLICT));
}

#[tokio::test]
async fn a_bad_key_is_an_authentication_error() {
    let app = App::start().await;
    let client = mediagen::Client::new(app.mock.uri(), "mg_live_nobody_nothing").unwrap();

    let err = client.billing().balance().await.unwrap_err();

    assert_eq!(err.kind(), Some(&ErrorKind::Authentication));
    assert_eq!(err.status(), Some(reqwest::StatusCode::UNAUTHORIZED));
}

#[tokio::test]
async fn an_unknown_code_is_kept_as_text_without_a_panic() {
    let server = wiremock::MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/account"))
        .respond_with(
            ResponseTemplate::new(418).set_body_json(error_body("TEAPOT_OVERHEATED", "too hot")),
        )
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client.account().get().await.unwrap_err();

    let api = err.api().unwrap();
    assert_eq!(
        (&api.kind, api.code.as_str(), api.status.as_u16()),
        (&ErrorKind::Unknown, "TEAPOT_OVERHEATED", 418)
    );
    assert_eq!(api.message, "too hot");
    assert!(err.to_string().contains("TEAPOT_OVERHEATED"));
    assert!(err.to_string().contains("req_0123456789abcdef01234567"));
}

#[tokio::test]
async fn a_success_that_breaks_the_contract_is_a_decode_error() {
    let server = wiremock::MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/account"))
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"unexpected\": true}"))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client.account().get().await.unwrap_err();

    assert!(
        matches!(
            err,
            Error::Decode {
                operation: "get_account",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_new_generation_status_is_read_not_refused() {
    let server = wiremock::MockServer::start().await;
    let id = uuid::Uuid::new_v4();
    Mock::given(method("GET"))
        .and(path(format!("/v1/generations/{id}")))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(crate::generation_body(id, "ARCHIVED")),
        )
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());

    let generation = client.generations().get(id).await.unwrap();
    let waited = client.generations().wait(id).await.unwrap_err();

    assert_eq!(
        generation.status,
        mediagen::GenerationStatus::Other("ARCHIVED".into())
    );
    assert!(
        matches!(waited, Error::UnknownGenerationStatus { .. }),
        "{waited:?}"
    );
}
