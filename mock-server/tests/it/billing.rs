//! Billing: balance, history (refunds never shown as their own entries),
//! requisites, invoices with their PDF and act, and top-ups with their limits.

use reqwest::Method;
use serde_json::{Value, json};

use mediagen_mock_server::MockServer;

use crate::{App, assert_conforms, image_request, requisites};

/// The contract's example requisites, which carry valid check digits.
async fn put_requisites(app: &App, body: Value) -> crate::Reply {
    app.send(
        Method::PUT,
        "/v1/billing/requisites",
        Some(&app.key),
        Some(body),
    )
    .await
}

#[tokio::test]
async fn balance_shows_available_and_reserved() {
    let app = App::start().await;
    app.create(image_request("p")).await;
    let reply = app.get("/v1/billing/balance").await;
    assert_conforms("Balance", &reply.body);
    assert_eq!(
        (
            reply.body["availableRub"].as_f64(),
            reply.body["reservedRub"].as_f64()
        ),
        (Some(997.5), Some(2.5))
    );
}

#[tokio::test]
async fn history_shows_a_refunded_charge_as_refunded_never_as_a_refund_entry() {
    let app = App::start().await;
    app.create(image_request("kept")).await;
    app.create(image_request("mock:fail=content_policy")).await;
    app.mock.advance_clock(60.0).unwrap();
    let reply = app.get("/v1/billing/history").await;
    assert_conforms("BillingOperationList", &reply.body);
    let rows = reply.body["data"].as_array().expect("rows");
    assert!(
        rows.iter().all(|r| r["type"] != "GENERATION_REFUND"),
        "{rows:?}"
    );
    let charges: Vec<_> = rows
        .iter()
        .filter(|r| r["type"] == "GENERATION_CHARGE")
        .collect();
    assert_eq!(charges.len(), 2);
    let refunded = charges
        .iter()
        .find(|r| r["status"] == "REFUNDED")
        .expect("a refunded charge");
    assert_eq!(
        (
            refunded["amountRub"].as_f64(),
            refunded["netAmountRub"].as_f64()
        ),
        (Some(-2.5), Some(0.0))
    );
    assert!(refunded["refundedAt"].is_string());
    let kept = charges
        .iter()
        .find(|r| r["status"] == "CHARGED")
        .expect("a kept charge");
    assert_eq!(kept["netAmountRub"], -2.5);
    let only_topups = app.get("/v1/billing/history?type=TOPUP").await;
    assert!(
        only_topups.body["data"]
            .as_array()
            .expect("rows")
            .iter()
            .all(|r| r["type"] == "TOPUP")
    );
    app.get("/v1/billing/history?type=GENERATION_REFUND")
        .await
        .assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn requisites_are_set_checked_and_read_back() {
    let app = App::start().await;
    app.get("/v1/billing/requisites")
        .await
        .assert_error(404, "NOT_FOUND");
    let reply = put_requisites(&app, requisites()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_conforms("Requisites", &reply.body);
    let read = app.get("/v1/billing/requisites").await;
    assert_eq!(read.body["inn"], requisites()["inn"]);
}

#[tokio::test]
async fn requisites_with_wrong_check_digits_are_400_with_each_field() {
    let app = App::start().await;
    let mut bad = requisites();
    let flip = |s: &str| {
        let mut chars: Vec<char> = s.chars().collect();
        let last = chars.len() - 1;
        chars[last] = if chars[last] == '0' { '1' } else { '0' };
        chars.into_iter().collect::<String>()
    };
    bad["inn"] = json!(flip(bad["inn"].as_str().expect("inn")));
    bad["ogrn"] = json!(flip(bad["ogrn"].as_str().expect("ogrn")));
    bad["settlementAccount"] = json!(flip(bad["settlementAccount"].as_str().expect("account")));
    let reply = put_requisites(&app, bad).await;
    reply.assert_error(400, "VALIDATION_ERROR");
    let paths: Vec<_> = reply.body["error"]["details"]["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .filter_map(|f| f["path"].as_str().map(str::to_owned))
        .collect();
    for path in ["/inn", "/ogrn", "/settlementAccount"] {
        assert!(paths.iter().any(|p| p == path), "{path} in {paths:?}");
    }
}

#[tokio::test]
async fn invoice_needs_requisites_then_has_a_real_pdf_and_an_act_once_paid() {
    let app = App::start().await;
    app.post("/v1/billing/invoices", json!({"amountRub": 12000}))
        .await
        .assert_error(400, "VALIDATION_ERROR");
    put_requisites(&app, requisites()).await;
    let created = app
        .post("/v1/billing/invoices", json!({"amountRub": 12000}))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_conforms("Invoice", &created.body);
    // 22% from 1 January 2026 (425-FZ), included: 12 000 × 22 / 122.
    assert_eq!(created.body["vatPercent"], 22);
    assert_eq!(created.body["vatRub"], 2163.93);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let pdf = app
        .http
        .get(created.body["pdfUrl"].as_str().expect("pdf url"))
        .bearer_auth(&app.key)
        .send()
        .await
        .expect("pdf");
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    let bytes = pdf.bytes().await.expect("bytes");
    assert!(bytes.starts_with(b"%PDF-"));
    app.get(&format!("/v1/billing/invoices/{id}/act"))
        .await
        .assert_error(409, "CONFLICT_ERROR");
    let paid = app
        .control(
            Method::POST,
            &format!("/_mock/invoices/{id}/pay"),
            json!({}),
        )
        .await;
    assert_eq!(paid.status, 200);
    assert_eq!(app.balance().0, 13_000.0, "the payment is credited");
    let act = app
        .http
        .get(app.url(&format!("/v1/billing/invoices/{id}/act")))
        .bearer_auth(&app.key)
        .send()
        .await
        .expect("act");
    assert_eq!(act.status(), 200);
    assert!(act.bytes().await.expect("bytes").starts_with(b"%PDF-"));
    let list = app.get("/v1/billing/invoices").await;
    assert_conforms("InvoiceList", &list.body);
    assert_eq!(list.body["data"][0]["status"], "PAID");
    assert!(list.body["data"][0]["actUrl"].is_string());
}

#[tokio::test]
async fn another_users_invoice_is_404() {
    let app = App::start().await;
    put_requisites(&app, requisites()).await;
    let id = app
        .post("/v1/billing/invoices", json!({"amountRub": 5000}))
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let other = app.mock.create_user(1.0).unwrap();
    app.send(
        Method::GET,
        &format!("/v1/billing/invoices/{id}/pdf"),
        Some(&other.api_key),
        None,
    )
    .await
    .assert_error(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_topup_waits_on_its_payment_page_and_credits_the_balance_once_paid() {
    let app = App::start().await;
    let reply = app
        .post("/v1/billing/topup", json!({"amountRub": 500}))
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_conforms("Topup", &reply.body);
    assert_eq!(reply.body["status"], "PENDING");
    assert_eq!(app.balance().0, 1000.0, "nothing credited before payment");
    let id = reply.body["id"].as_str().expect("id").to_owned();
    let page = app
        .http
        .get(reply.body["paymentUrl"].as_str().expect("a payment page"))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    assert!(page.text().await.expect("html").contains("/pay"));

    let paid = app
        .control(Method::POST, &format!("/_mock/topups/{id}/pay"), json!({}))
        .await;
    assert_eq!(
        (paid.status.as_u16(), &paid.body["status"]),
        (200, &json!("SUCCEEDED"))
    );
    assert_eq!(app.balance().0, 1500.0);
    app.control(Method::POST, &format!("/_mock/topups/{id}/pay"), json!({}))
        .await
        .assert_error(409, "CONFLICT_ERROR");
    let history = app.get("/v1/billing/history?type=TOPUP").await;
    assert_eq!(history.body["data"][0]["amountRub"], 500.0);

    let declined = app
        .post("/v1/billing/topup", json!({"amountRub": 700}))
        .await;
    let id = declined.body["id"].as_str().expect("id");
    let failed = app
        .control(Method::POST, &format!("/_mock/topups/{id}/fail"), json!({}))
        .await;
    assert_eq!(failed.body["status"], "FAILED");
    assert_eq!(app.balance().0, 1500.0, "a failed payment credits nothing");
    app.mock.check_ledger().expect("ledger");
}

#[tokio::test]
async fn with_auto_pay_a_topup_pays_itself_on_the_mocks_clock() {
    let app = App::with(
        MockServer::builder()
            .config(|c| c.auto_pay_seconds = Some(5.0))
            .start()
            .await,
    )
    .await;
    let reply = app
        .post("/v1/billing/topup", json!({"amountRub": 500}))
        .await;
    assert_eq!(reply.body["status"], "PENDING");
    app.mock.advance_clock(5.0).unwrap();
    assert_eq!(app.balance().0, 1500.0);
}

#[tokio::test]
async fn topup_amounts_are_validated() {
    let app = App::start().await;
    for bad in [
        json!({"amountRub": 99}),
        json!({"amountRub": 100001}),
        json!({"amountRub": 100.005}),
        json!({}),
    ] {
        app.post("/v1/billing/topup", bad)
            .await
            .assert_error(400, "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn topup_is_limited_to_five_per_ten_minutes_per_user() {
    let app = App::start().await;
    for i in 0..5 {
        let reply = app
            .post("/v1/billing/topup", json!({"amountRub": 100}))
            .await;
        assert_eq!(reply.status, 201, "top-up {i}");
        assert_eq!(reply.header("x-ratelimit-limit"), Some("5"));
    }
    let refused = app
        .post("/v1/billing/topup", json!({"amountRub": 100}))
        .await;
    refused.assert_error(429, "RATE_LIMIT_ERROR");
    assert_eq!(refused.header("retry-after"), Some("600"));
    let other = app.mock.create_user(0.0).unwrap();
    let theirs = app
        .send(
            Method::POST,
            "/v1/billing/topup",
            Some(&other.api_key),
            Some(json!({"amountRub": 100})),
        )
        .await;
    assert_eq!(theirs.status, 201, "per user, not per address");
    app.mock.advance_clock(600.0).unwrap();
    assert_eq!(
        app.post("/v1/billing/topup", json!({"amountRub": 100}))
            .await
            .status,
        201
    );
}

#[tokio::test]
async fn daily_cap_gives_429_daily_cap_exceeded() {
    let app = App::start().await;
    for _ in 0..3 {
        assert_eq!(
            app.post("/v1/billing/topup", json!({"amountRub": 100000}))
                .await
                .status,
            201
        );
    }
    let reply = app
        .post("/v1/billing/topup", json!({"amountRub": 100}))
        .await;
    reply.assert_error(429, "DAILY_CAP_EXCEEDED");
    assert_eq!(reply.body["error"]["details"]["limit"], 300000);
}

#[tokio::test]
async fn invoice_documents_are_limited_to_thirty_a_minute_per_address() {
    let app = App::start().await;
    put_requisites(&app, requisites()).await;
    let id = app
        .post("/v1/billing/invoices", json!({"amountRub": 5000}))
        .await
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    for _ in 0..30 {
        assert_eq!(
            app.get(&format!("/v1/billing/invoices/{id}/pdf"))
                .await
                .status,
            200
        );
    }
    app.get(&format!("/v1/billing/invoices/{id}/pdf"))
        .await
        .assert_error(429, "RATE_LIMIT_ERROR");
}
