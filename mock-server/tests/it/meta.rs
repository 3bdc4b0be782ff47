use reqwest::Method;

use crate::{App, assert_conforms};

#[tokio::test]
async fn health_is_public_and_conforms() {
    let app = App::start().await;
    let reply = app.send(Method::GET, "/health", None, None).await;
    assert_eq!(reply.status, 200);
    assert_conforms("Health", &reply.body);
}

#[tokio::test]
async fn catalog_is_public_and_lists_every_media_type() {
    let app = App::start().await;
    let reply = app.send(Method::GET, "/v1/catalog/", None, None).await;
    assert_eq!(reply.status, 200);
    assert_conforms("Catalog", &reply.body);
    for kind in ["IMAGE", "VIDEO", "VOICE", "MUSIC"] {
        let n = reply.body["models"]
            .as_array()
            .expect("models")
            .iter()
            .filter(|m| m["mediaType"] == kind)
            .count();
        assert!(n >= 2, "{kind}: {n}");
    }
}

#[tokio::test]
async fn contract_is_served_verbatim_without_a_key() {
    let app = App::start().await;
    let reply = app.send(Method::GET, "/api/openapi.json", None, None).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.bytes, mediagen_openapi::OPENAPI_JSON.as_bytes());
}

#[tokio::test]
async fn withdrawn_model_shows_as_withdrawn_in_the_catalog() {
    let app = App::start().await;
    app.mock
        .set_model_state("imagen-4", mediagen_mock_server::ModelState::Withdrawn)
        .unwrap();
    let reply = app.send(Method::GET, "/v1/catalog/", None, None).await;
    let model = reply.body["models"]
        .as_array()
        .expect("models")
        .iter()
        .find(|m| m["slug"] == "imagen-4")
        .cloned()
        .expect("imagen-4 is listed");
    assert_eq!(model["status"], "withdrawn");
}
