//! The mock follows the contract's table of operations and its error codes'
//! policy (`mediagen_openapi::operations`, `sets`), for every operation and
//! every code: a change of policy in `openapi.json` changes what these check,
//! and the mock with it.

use mediagen_mock_server::OperationId;
use mediagen_openapi::operations::LimitScope;
use mediagen_openapi::policy::LimitPer;
use mediagen_openapi::sets::ErrorCode;
use reqwest::Method;
use serde_json::{Value, json};

use crate::App;

/// A concrete path of `op`: each parameter a fresh id.
fn concrete(op: OperationId) -> String {
    op.path()
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                uuid::Uuid::new_v4().to_string()
            } else {
                segment.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Sends `op` once, with the user's key and an empty object as its body where
/// it takes one: whatever the answer, the request counts in its limits.
async fn send(app: &App, op: OperationId) -> crate::Reply {
    let method = Method::from_bytes(op.method().as_bytes()).expect("a method");
    let body = matches!(op.method(), "POST" | "PUT" | "PATCH").then(|| json!({}));
    app.send(method, &concrete(op), Some(&app.key), body).await
}

#[tokio::test]
async fn every_operation_is_counted_in_the_limit_the_table_names() {
    let app = App::start().await;
    for op in OperationId::ALL {
        // A fresh window for every limit.
        app.mock.advance_clock(3600.0).unwrap();
        let scope = op.limit();
        let limit = scope.default_limit();
        for n in 0..limit {
            let reply = send(&app, op).await;
            assert_ne!(reply.status, 429, "{op}: request {n} of {limit} refused");
            assert_eq!(
                reply.header("x-ratelimit-limit"),
                Some(limit.to_string().as_str()),
                "{op} reports its limit"
            );
        }
        let refused = send(&app, op).await;
        refused.assert_error(429, ErrorCode::RateLimitError.as_str());
        assert_eq!(
            refused.body["error"]["details"]["limit"],
            json!(limit),
            "{op} is refused by {scope}"
        );
        let log = app.mock.list_requests();
        let last = log.last().expect("the refused request is logged");
        assert_eq!(last.operation, Some(op), "{op} is named in the log");
        assert_eq!(last.status, Some(429));
    }
}

#[tokio::test]
async fn a_limit_of_its_own_counts_beside_the_general_one() {
    let app = App::start().await;
    for op in OperationId::ALL
        .into_iter()
        .filter(|op| op.limit() != LimitScope::General)
    {
        app.mock.advance_clock(3600.0).unwrap();
        // The general window is spent by reads: the operation's own limit is
        // not what refuses it then, and its window does not count it.
        for _ in 0..LimitScope::General.default_limit() {
            assert_ne!(send(&app, OperationId::GetHealth).await.status, 429);
        }
        let refused = send(&app, op).await;
        refused.assert_error(429, ErrorCode::RateLimitError.as_str());
        if op.limit().per() == LimitPer::Ip {
            assert_eq!(
                refused.body["error"]["details"]["limit"],
                json!(LimitScope::General.default_limit()),
                "{op}"
            );
        }
    }
}

#[tokio::test]
async fn a_fault_with_any_code_of_the_contract_answers_that_codes_status() {
    let app = App::unlimited().await;
    for code in ErrorCode::ALL {
        let rule = json!({"method": "GET", "path": "/v1/account", "effect": "error",
                          "code": code.as_str(), "count": 1});
        let made = app.control(Method::POST, "/_mock/faults", rule).await;
        if made.status == 400 {
            // Codes whose details come from real state are made for real.
            assert!(
                made.body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("carries details from real state")),
                "{code}: {}",
                made.body
            );
            continue;
        }
        assert_eq!(made.status, 201, "{code}: {}", made.body);
        let reply = app.get("/v1/account").await;
        reply.assert_error(code.status(), code.as_str());
    }
}

#[tokio::test]
async fn every_route_of_the_service_is_an_operation_of_the_contract() {
    let app = App::unlimited().await;
    for op in OperationId::ALL {
        send(&app, op).await;
    }
    let named: Vec<Option<OperationId>> = app
        .mock
        .list_requests()
        .iter()
        .map(|r| r.operation)
        .collect();
    assert_eq!(
        named,
        OperationId::ALL.map(Some),
        "each request is logged with the operation its route is"
    );
    let listed = app.control(Method::GET, "/_mock/requests", json!({})).await;
    let ids: Vec<&str> = listed.body["data"]
        .as_array()
        .expect("the log")
        .iter()
        .filter_map(|r| r.get("operationId").and_then(Value::as_str))
        .collect();
    assert_eq!(ids, OperationId::ALL.map(OperationId::as_str));
}
