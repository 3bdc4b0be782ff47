use reqwest::Method;
use serde_json::json;

use crate::{App, image_request};

#[tokio::test]
async fn control_api_creates_users_and_reports_their_balance() {
    let app = App::start().await;
    let created = app
        .control(Method::POST, "/_mock/users", json!({"balanceRub": 500}))
        .await;
    assert_eq!(created.status, 201);
    let (id, key) = (
        created.body["userId"].as_str().expect("id"),
        created.body["apiKey"].as_str().expect("key"),
    );
    let reply = app
        .send(
            Method::POST,
            "/v1/generations",
            Some(key),
            Some(image_request("p")),
        )
        .await;
    assert_eq!(reply.status, 202);
    let user = app
        .send(Method::GET, &format!("/_mock/users/{id}"), None, None)
        .await;
    assert_eq!(
        (
            user.body["balanceRub"].as_f64(),
            user.body["reservedRub"].as_f64()
        ),
        (Some(497.5), Some(2.5))
    );
    let set = app
        .control(
            Method::PUT,
            &format!("/_mock/users/{id}/balance"),
            json!({"balanceRub": 0}),
        )
        .await;
    assert_eq!(set.body["balanceRub"], 0.0);
}

#[tokio::test]
async fn clock_advance_answers_the_new_time() {
    let app = App::start().await;
    let before = app.send(Method::GET, "/_mock/clock", None, None).await;
    assert_eq!(before.body["mode"], "manual");
    let after = app
        .control(
            Method::POST,
            "/_mock/clock/advance",
            json!({"seconds": 12.5}),
        )
        .await;
    let t0 = chrono::DateTime::parse_from_rfc3339(before.body["now"].as_str().expect("now"))
        .expect("time");
    let t1 = chrono::DateTime::parse_from_rfc3339(after.body["now"].as_str().expect("now"))
        .expect("time");
    assert_eq!((t1 - t0).num_milliseconds(), 12_500);
    app.control(Method::POST, "/_mock/clock/advance", json!({"seconds": -1}))
        .await
        .assert_error(400, "VALIDATION_ERROR");
    // Huge steps stop at a far-future limit with a 400, never an overflow and a 500.
    let mut last = 200;
    for _ in 0..100 {
        let reply = app
            .control(
                Method::POST,
                "/_mock/clock/advance",
                json!({"seconds": 9.9e10}),
            )
            .await;
        last = reply.status.as_u16();
        if last != 200 {
            reply.assert_error(400, "VALIDATION_ERROR");
            break;
        }
    }
    assert_eq!(last, 400, "the clock's limit is reached within 100 steps");
}

#[tokio::test]
async fn request_log_records_service_requests_but_not_control_calls() {
    let app = App::start().await;
    app.create_with_key(&app.key, "logged", image_request("p"))
        .await;
    app.send(Method::GET, "/_mock/clock", None, None).await;
    let log = app.send(Method::GET, "/_mock/requests", None, None).await;
    let entries = log.body["data"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["path"], "/v1/generations");
    assert_eq!(entries[0]["status"], 202);
    assert_eq!(entries[0]["idempotencyKey"], "logged");
}

#[tokio::test]
async fn reset_empties_the_mock_but_keeps_the_demo_key() {
    let app = App::start().await;
    app.create(image_request("p")).await;
    let demo = app.mock.demo_api_key().to_owned();
    assert_eq!(
        app.control(Method::POST, "/_mock/reset", json!({}))
            .await
            .status,
        204
    );
    app.get("/v1/generations")
        .await
        .assert_error(401, "AUTHENTICATION_ERROR");
    let listed = app
        .send(Method::GET, "/v1/generations", Some(&demo), None)
        .await;
    assert_eq!(listed.status, 200);
}

#[tokio::test]
async fn reset_through_the_rust_face_forgets_users_and_keeps_the_demo_key() {
    let app = App::start().await;
    let user = app.mock.create_user(10.0).unwrap();

    app.mock.reset();

    app.send(Method::GET, "/v1/generations", Some(&user.api_key), None)
        .await
        .assert_error(401, "AUTHENTICATION_ERROR");
    assert!(matches!(
        app.mock.get_user(user.user_id),
        Err(mediagen_mock_server::ControlError::NotFound(_))
    ));
    let demo = app.mock.demo_api_key().to_owned();
    let listed = app
        .send(Method::GET, "/v1/generations", Some(&demo), None)
        .await;
    assert_eq!(listed.status, 200);
}

#[tokio::test]
async fn the_rust_face_reads_the_outbox_the_control_api_reads() {
    let app = App::start().await;
    let email = app.mock.get_user(app.user_id).expect("the user").email;
    app.send(
        Method::POST,
        "/v1/auth/magic-link/request",
        None,
        Some(json!({"email": email})),
    )
    .await;

    let outbox = app.mock.list_outbox();
    let reply = app.send(Method::GET, "/_mock/outbox", None, None).await;
    assert_eq!(
        serde_json::to_value(&outbox).expect("messages"),
        reply.body["data"]
    );
    assert_eq!(outbox.len(), 1);
    assert_eq!(outbox[0].to, email);
    assert!(outbox[0].link.starts_with("http"), "{}", outbox[0].link);
}

#[tokio::test]
async fn a_balance_set_through_the_rust_face_is_what_the_account_shows() {
    let app = App::start().await;

    assert_eq!(
        app.mock.set_balance(app.user_id, 7.5).unwrap().balance_rub,
        7.5
    );
    assert!(
        app.mock.set_balance(uuid::Uuid::new_v4(), 7.5).is_err(),
        "no such user"
    );

    let account = app.get("/v1/account").await;
    assert_eq!(account.body["balanceRub"], 7.5);
    app.mock.check_ledger().expect("the ledger balances");
}

#[tokio::test]
async fn clearing_faults_through_the_rust_face_removes_every_rule() {
    use mediagen_mock_server::Fault;
    let app = App::start().await;
    let faults = [
        app.mock
            .inject_fault(Fault::error(503, "SERVICE_UNAVAILABLE").on("GET", "/v1/account"))
            .unwrap(),
        app.mock
            .inject_fault(Fault::error(500, "INTERNAL_ERROR").times(3))
            .unwrap(),
    ];

    app.mock.clear_faults();

    assert_eq!(faults.map(|f| f.remaining()), [0, 0]);
    assert_eq!(app.get("/v1/account").await.status, 200);
    let listed = app.send(Method::GET, "/_mock/faults", None, None).await;
    assert_eq!(listed.body["data"], json!([]));
}

#[tokio::test]
async fn admin_token_guards_the_control_api() {
    let mock = mediagen_mock_server::MockServer::builder()
        .config(|c| c.admin_token = Some("s3cret".into()))
        .start()
        .await;
    let app = App::with(mock).await;
    app.send(Method::GET, "/_mock/clock", None, None)
        .await
        .assert_error(401, "AUTHENTICATION_ERROR");
    let allowed = app
        .send(Method::GET, "/_mock/clock", Some("s3cret"), None)
        .await;
    assert_eq!(allowed.status, 200);
}
