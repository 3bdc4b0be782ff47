//! The requests each area puts on the wire (paths, query parameters, bodies,
//! no key where none is due), checked with wiremock, and the contract's answers
//! read back. The catalogue, health and contract run against the mock;
//! `billing.rs` runs the same areas against the mock's behaviour.

use futures::TryStreamExt;
use mediagen::BillingOperationType;
use mediagen::HistoryFilter;
use mediagen::RequisitesInput;
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{App, InstantClock, wire_client};

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

fn operation(id: &str, amount: f64) -> Value {
    json!({
        "id": id, "type": "GENERATION_CHARGE", "amountRub": -amount, "netAmountRub": -amount,
        "status": "CHARGED", "generationId": Uuid::new_v4(), "description": "flux-schnell",
        "createdAt": "2026-11-22T10:15:30.123Z", "refundedAt": null
    })
}

fn invoice(id: Uuid) -> Value {
    json!({
        "id": id, "number": "MG-2026-0017", "amountRub": 12000.0, "vatRub": 2000.0, "status": "ISSUED",
        "lines": [{"description": "Prepayment", "quantity": 1, "unit": "service", "unitPriceRub": 12000.0, "amountRub": 12000.0}],
        "issuedAt": "2026-11-22T10:15:30.123Z", "paidAt": null, "dueAt": "2026-12-02T10:15:30.123Z",
        "pdfUrl": format!("https://api.example.com/v1/billing/invoices/{id}/pdf"), "actUrl": null
    })
}

fn requisites_body() -> Value {
    json!({
        "legalName": "OOO Romashka", "inn": "7707083893", "kpp": "770701001", "ogrn": "1027700132195",
        "legalAddress": "Moscow, Vavilova 19", "postalAddress": null, "bankName": "Sberbank",
        "bic": "044525225", "settlementAccount": "40702810938000000001",
        "correspondentAccount": "30101810400000000225", "email": null
    })
}

#[tokio::test]
async fn billing_calls_reach_their_operations_and_read_the_answers() {
    let server = MockServer::start().await;
    let invoice_id = Uuid::new_v4();
    Mock::given(method("GET"))
        .and(path("/v1/billing/balance"))
        .respond_with(ok(json!({"availableRub": 997.5, "reservedRub": 2.5, "currency": "RUB", "updatedAt": "2026-11-22T10:15:30.123Z"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/history"))
        .and(query_param("type", "GENERATION_CHARGE"))
        .and(query_param("cursor", "page-2"))
        .respond_with(ok(
            json!({"data": [operation("op_3", 6.0)], "nextCursor": null, "hasMore": false}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/history"))
        .and(query_param("type", "GENERATION_CHARGE"))
        .respond_with(ok(json!({
            "data": [operation("op_1", 2.5), operation("op_2", 2.5)], "nextCursor": "page-2", "hasMore": true
        })))
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/v1/billing/requisites"))
        .respond_with(ok({
            let mut body = requisites_body();
            body["updatedAt"] = json!("2026-11-22T10:15:30.123Z");
            body
        }))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/billing/invoices"))
        .and(body_json(json!({"amountRub": 12000.0})))
        .respond_with(ResponseTemplate::new(201).set_body_json(invoice(invoice_id)))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/billing/invoices"))
        .respond_with(ok(
            json!({"data": [invoice(invoice_id)], "nextCursor": null, "hasMore": false}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/billing/invoices/{invoice_id}/pdf")))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(b"%PDF-1.7 invoice".to_vec(), "application/pdf"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/billing/topup"))
        .and(body_json(
            json!({"amountRub": 1500.0, "returnUrl": "https://example.com/done"}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": Uuid::new_v4(), "amountRub": 1500.0, "status": "PENDING",
            "paymentUrl": "https://pay.example/abc", "createdAt": "2026-11-22T10:15:30.123Z"
        })))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let billing = client.billing();

    let balance = billing.balance().await.unwrap();
    let history: Vec<_> = billing
        .history(HistoryFilter::new().kind(BillingOperationType::GenerationCharge))
        .try_collect()
        .await
        .unwrap();
    let requisites = billing
        .set_requisites(
            RequisitesInput::builder()
                .legal_name("OOO Romashka")
                .inn("7707083893")
                .kpp(Some("770701001".parse().unwrap()))
                .ogrn("1027700132195")
                .legal_address("Moscow, Vavilova 19")
                .bank_name("Sberbank")
                .bic("044525225")
                .settlement_account("40702810938000000001")
                .correspondent_account("30101810400000000225"),
        )
        .await
        .unwrap();
    let issued = billing.create_invoice(12000.0).await.unwrap();
    let invoices: Vec<_> = billing.invoices().try_collect().await.unwrap();
    let pdf = billing.invoice_pdf(invoice_id).await.unwrap();
    let topup = billing
        .topup(1500.0, Some("https://example.com/done"))
        .await
        .unwrap();

    assert_eq!(
        (balance.available_rub, balance.reserved_rub),
        (997.5, Some(2.5))
    );
    assert_eq!(
        history.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        ["op_1", "op_2", "op_3"]
    );
    assert_eq!(*requisites.inn, "7707083893");
    let requests = server.received_requests().await.unwrap();
    let put = requests
        .iter()
        .find(|r| r.method.as_str() == "PUT")
        .unwrap();
    let sent: Value = serde_json::from_slice(&put.body).unwrap();
    for (name, value) in requisites_body().as_object().unwrap() {
        if !value.is_null() {
            assert_eq!(&sent[name], value, "{name}");
        }
    }
    assert_eq!(issued.id, invoice_id);
    assert_eq!(invoices.len(), 1);
    assert!(pdf.starts_with(b"%PDF"));
    assert_eq!(
        topup.payment_url.as_deref(),
        Some("https://pay.example/abc")
    );
}

#[tokio::test]
async fn requisites_that_break_the_contracts_format_are_refused_before_sending() {
    let server = MockServer::start().await;
    let client = wire_client(&server, &InstantClock::new());

    let err = client
        .billing()
        .set_requisites(
            RequisitesInput::builder()
                .legal_name("OOO Romashka")
                .inn("12"),
        )
        .await
        .unwrap_err();

    assert!(matches!(err, mediagen::Error::InvalidRequest(_)), "{err:?}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn account_summary_files_and_sign_in_links_reach_their_operations() {
    let server = MockServer::start().await;
    let file_id = Uuid::new_v4();
    Mock::given(method("GET"))
        .and(path("/v1/account"))
        .respond_with(ok(json!({
            "id": Uuid::new_v4(), "email": "ada@example.com", "name": null, "balanceRub": 997.5, "reservedRub": 2.5,
            "limits": {"concurrentGenerations": 5, "webhookEndpoints": 5, "requestsPerMinute": 60},
            "createdAt": "2026-11-22T10:15:30.123Z"
        })))
        .mount(&server)
        .await;
    let counts =
        json!({"PENDING": 0, "PROCESSING": 0, "SUCCEEDED": 3, "FAILED": 1, "CANCELLED": 0});
    Mock::given(method("GET"))
        .and(path("/v1/stats/summary"))
        .and(query_param("from", "2026-11-01T00:00:00Z"))
        .respond_with(ok(json!({
            "from": "2026-11-01T00:00:00.000Z", "to": "2026-12-01T00:00:00.000Z", "spentRub": 7.5, "generations": 4,
            "byStatus": counts, "byMediaType": [{"mediaType": "IMAGE", "generations": 4, "spentRub": 7.5, "byStatus": counts}]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/files/{file_id}")))
        .respond_with(ok(json!({
            "id": file_id, "filename": "cat.png", "contentType": "image/png", "sizeBytes": 48213,
            "status": "uploaded", "url": "https://cdn.example/cat.png",
            "createdAt": "2026-11-22T10:15:30.123Z", "uploadedAt": "2026-11-22T10:16:30.123Z"
        })))
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(format!("/v1/files/{file_id}")))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/auth/magic-link/request"))
        .and(body_json(json!({"email": "ada@example.com"})))
        .respond_with(ResponseTemplate::new(202).set_body_json(json!({
            "message": "If an account exists for this address, a sign-in link has been sent."
        })))
        .mount(&server)
        .await;
    let client = wire_client(&server, &InstantClock::new());
    let from = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z")
        .unwrap()
        .to_utc();

    let account = client.account().get().await.unwrap();
    let summary = client.account().summary(Some(from), None).await.unwrap();
    let file = client.files().get(file_id).await.unwrap();
    client.files().delete(file_id).await.unwrap();
    let accepted = client
        .auth()
        .request_magic_link("ada@example.com")
        .await
        .unwrap();

    assert_eq!(account.limits.unwrap().concurrent_generations, Some(5));
    assert_eq!(summary.generations, 4);
    assert_eq!(file.filename.as_deref(), Some("cat.png"));
    assert!(
        accepted
            .message
            .unwrap()
            .starts_with("If an account exists")
    );
    let requests = server.received_requests().await.unwrap();
    let magic = requests
        .iter()
        .find(|r| r.url.path() == "/v1/auth/magic-link/request")
        .unwrap();
    assert!(
        magic.headers.get("authorization").is_none(),
        "sign-in links are public"
    );
}

#[tokio::test]
async fn the_catalogue_health_and_contract_are_read_from_the_mock() {
    let app = App::start().await;

    let models = app.client.catalog().models().await.unwrap();
    let veo = app.client.catalog().model("veo-3").await.unwrap().unwrap();
    let health = app.client.health().await.unwrap();
    let document = app.client.openapi_document().await.unwrap();

    assert!(models.len() >= 8);
    assert_eq!(veo.media_type, mediagen::MediaType::Video);
    assert_eq!(health.status, mediagen::HealthStatus::Ok);
    assert_eq!(document["servers"][0]["url"], "{base_url}");
}
