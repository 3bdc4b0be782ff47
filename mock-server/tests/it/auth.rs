use reqwest::Method;
use serde_json::json;

use crate::{App, image_request};

#[tokio::test]
async fn request_without_key_is_401_authentication_error() {
    let app = App::start().await;
    app.send(Method::GET, "/v1/generations", None, None)
        .await
        .assert_error(401, "AUTHENTICATION_ERROR");
}

#[tokio::test]
async fn malformed_unknown_and_wrong_secret_keys_are_401() {
    let app = App::start().await;
    let (public, _) = app
        .key
        .trim_start_matches("mg_live_")
        .split_once('_')
        .expect("key form");
    for key in [
        "not-a-key".to_owned(),
        "mg_live_unknownpub_secretsecret".to_owned(),
        format!("mg_live_{public}_wrongsecret"),
    ] {
        app.send(Method::GET, "/v1/generations", Some(&key), None)
            .await
            .assert_error(401, "AUTHENTICATION_ERROR");
    }
}

#[tokio::test]
async fn revoked_key_is_401() {
    let app = App::start().await;
    let public = app
        .key
        .trim_start_matches("mg_live_")
        .split('_')
        .next()
        .expect("public part")
        .to_owned();
    let reply = app
        .send(Method::DELETE, &format!("/_mock/keys/{public}"), None, None)
        .await;
    assert_eq!(reply.status, 204);
    app.get("/v1/generations")
        .await
        .assert_error(401, "AUTHENTICATION_ERROR");
}

#[tokio::test]
async fn read_only_key_may_read_but_not_create_403() {
    let app = App::start().await;
    let reply = app
        .control(
            Method::POST,
            &format!("/_mock/users/{}/keys", app.user_id),
            json!({"scope": "read_only"}),
        )
        .await;
    let key = reply.body["apiKey"].as_str().expect("a key").to_owned();
    let listed = app
        .send(Method::GET, "/v1/generations", Some(&key), None)
        .await;
    assert_eq!(listed.status, 200);
    app.send(
        Method::POST,
        "/v1/generations",
        Some(&key),
        Some(image_request("p")),
    )
    .await
    .assert_error(403, "AUTHORIZATION_ERROR");
}

#[tokio::test]
async fn another_users_generation_is_404_not_found() {
    let app = App::start().await;
    let id = app.create(image_request("mine")).await.body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let other = app.mock.create_user(100.0).unwrap();
    for (method, path) in [
        (Method::GET, format!("/v1/generations/{id}")),
        (Method::POST, format!("/v1/generations/{id}/cancel")),
    ] {
        app.send(method, &path, Some(&other.api_key), None)
            .await
            .assert_error(404, "NOT_FOUND");
    }
    let listed = app
        .send(Method::GET, "/v1/generations", Some(&other.api_key), None)
        .await;
    assert_eq!(listed.body["data"], json!([]));
}

#[tokio::test]
async fn a_further_key_of_the_same_user_sees_the_same_generations() {
    let app = App::start().await;
    app.create(image_request("p")).await;
    let key = app
        .mock
        .create_key(app.user_id, mediagen_mock_server::Scope::Full)
        .expect("the user exists")
        .api_key;
    let listed = app
        .send(Method::GET, "/v1/generations", Some(&key), None)
        .await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(1));
    assert!(
        app.mock
            .create_key(uuid::Uuid::new_v4(), mediagen_mock_server::Scope::Full)
            .is_err()
    );
}
