//! The Rust names of 0.1.0 that the control contract renamed still build and
//! drive the mock as their replacements do, until they go in 0.3.0.

#![allow(deprecated)]

use mediagen_mock_server::contract::ContractSchemas;
use mediagen_mock_server::{Fault, Responses};

use crate::App;

#[tokio::test]
async fn advance_moves_the_clock_as_advance_clock_does() {
    let app = App::start().await;
    let before = app.mock.now();

    app.mock.advance(30.0);

    assert_eq!(app.mock.now() - before, chrono::Duration::seconds(30));
}

#[tokio::test]
async fn inject_adds_a_fault_rule_that_answers_as_inject_fault_does() {
    let app = App::start().await;

    let fault = app
        .mock
        .inject(Fault::error(503, "SERVICE_UNAVAILABLE").on("GET", "/v1/account"));

    assert_eq!(app.mock.list_faults()[0].id, fault.id());
    app.get("/v1/account")
        .await
        .assert_error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(fault.remaining(), 0);
}

#[tokio::test]
async fn set_responses_changes_the_responses_and_no_other_setting() {
    let app = App::start().await;
    let mut settings = app.mock.get_settings();
    settings.create_latency_seconds = 2.5;
    app.mock.update_settings(settings).unwrap();

    app.mock.set_responses(Responses::Minimal);

    let settings = app.mock.get_settings();
    assert_eq!(settings.responses, Responses::Minimal);
    assert_eq!(settings.create_latency_seconds, 2.5);
}

#[test]
fn load_is_the_shared_set_of_schemas() {
    assert!(std::ptr::eq(
        ContractSchemas::load(),
        ContractSchemas::shared()
    ));
}
