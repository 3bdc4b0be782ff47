//! The operation table and the error codes' retry classes, as generated from the
//! contract: every operation once, with the policy the service document implies.

use mediagen_openapi::operations::{LimitScope, OperationId};
use mediagen_openapi::policy::{LimitPer, Repeat, Retry};
use mediagen_openapi::sets::ErrorCode;

use crate::{doc, operations};

#[test]
fn the_table_holds_every_operation_of_the_contract_once() {
    let doc = doc();
    let contract = operations(&doc);
    assert_eq!(contract.len(), OperationId::ALL.len());
    for (path, method, operation) in contract {
        let id = operation["operationId"].as_str().unwrap();
        let op = OperationId::from_operation_id(id).unwrap_or_else(|| panic!("{id} is missing"));
        assert_eq!((op.method(), op.path()), (&*method.to_uppercase(), &*path));
        assert_eq!(OperationId::from_route(op.method(), op.path()), Some(op));
        let public = operation
            .get("security")
            .is_some_and(|s| s.as_array().is_some_and(Vec::is_empty));
        assert_eq!(op.public(), public, "{id}");
    }
    assert_eq!(
        OperationId::from_route("HEAD", "/health"),
        Some(OperationId::GetHealth)
    );
    assert_eq!(OperationId::from_route("DELETE", "/v1/generations"), None);
}

#[test]
fn only_what_cannot_act_twice_is_repeated_freely() {
    for op in OperationId::ALL {
        let expected = match (op.method(), op) {
            // Rule 7 of POST /v1/generations: it carries an Idempotency-Key.
            (_, OperationId::CreateGeneration) => Repeat::Keyed,
            // A price, computed: nothing is created and no money moves.
            (_, OperationId::EstimateGeneration) => Repeat::Safe,
            ("GET" | "HEAD" | "PUT" | "DELETE", _) => Repeat::Safe,
            _ => Repeat::Once,
        };
        assert_eq!(op.repeat(), expected, "{op}");
    }
}

#[test]
fn the_routes_with_limits_of_their_own_are_the_documents() {
    let limited: Vec<_> = OperationId::ALL
        .into_iter()
        .filter(|op| op.limit() != LimitScope::General)
        .map(|op| (op.method(), op.path(), op.limit()))
        .collect();
    assert_eq!(
        limited,
        [
            ("POST", "/v1/auth/magic-link/request", LimitScope::MagicLink),
            (
                "GET",
                "/v1/billing/invoices/{id}/act",
                LimitScope::InvoiceDocuments
            ),
            (
                "GET",
                "/v1/billing/invoices/{id}/pdf",
                LimitScope::InvoiceDocuments
            ),
            ("POST", "/v1/billing/topup", LimitScope::Topup),
            ("POST", "/v1/files", LimitScope::Files),
        ]
    );
    let sizes: Vec<_> = LimitScope::ALL
        .into_iter()
        .map(|l| (l.as_str(), l.default_limit(), l.window_secs(), l.per()))
        .collect();
    assert_eq!(
        sizes,
        [
            ("general", 60, 60, LimitPer::Ip),
            ("files", 20, 60, LimitPer::Ip),
            ("invoice_documents", 30, 60, LimitPer::Ip),
            ("magic_link", 10, 60, LimitPer::Ip),
            ("topup", 5, 600, LimitPer::User),
        ]
    );
}

#[test]
fn each_error_code_is_retried_as_the_service_document_says() {
    use ErrorCode::*;
    // Errors, Client handling 2 and Limits, rule 3: retried, after `retry-after`
    // for a limit, with back-off for the rest.
    assert_eq!(RateLimitError.retry(), Retry::AfterRetryAfter);
    for code in [
        ServiceUnavailable,
        GatewayTimeout,
        GatewayUnavailable,
        BillingTimeout,
    ] {
        assert_eq!(code.retry(), Retry::Backoff, "{code}");
    }
    // Client handling 3 and 4, the codes' conditions ("retry does not help") and
    // the statuses 402, 404 and 410: the request must change first.
    for code in [
        ValidationError,
        ModelUnavailable,
        ModelNotAvailable,
        InsufficientBalance,
        NotFound,
        MarginGuard,
    ] {
        assert_eq!(code.retry(), Retry::Never, "{code}");
    }
    // Every other server error is temporary, and no client error is.
    for code in ErrorCode::ALL {
        match code.status() {
            500.. if code != MarginGuard => assert_eq!(code.retry(), Retry::Backoff, "{code}"),
            429 => assert_eq!(code.retry(), Retry::AfterRetryAfter, "{code}"),
            400..500 => assert_eq!(code.retry(), Retry::Never, "{code}"),
            _ => {}
        }
    }
}
