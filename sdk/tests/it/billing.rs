//! Billing, account, files and sign-in links against the mock.

use std::time::Duration;

use futures::TryStreamExt;
use mediagen::{
    BillingOperationStatus, BillingOperationType, ErrorKind, FileStatus, GenerationRequest,
    HistoryFilter, InvoiceStatus, TopupStatus,
};

use crate::{App, requisites, within_deadline};

#[tokio::test]
async fn a_top_up_waits_for_its_payment_then_credits_the_balance_and_shows_in_the_history() {
    let app = App::start().await;

    let topup = app.client.billing().topup(500.0, None).await.unwrap();
    assert_eq!(topup.status, TopupStatus::Pending);
    assert!(topup.payment_url.is_some(), "where to send the user");
    let before = app.client.billing().balance().await.unwrap();
    assert_eq!(before.available_rub, 1000.0, "nothing before the payment");
    // The user pays on the payment page.
    reqwest::Client::new()
        .post(format!("{}/_mock/topups/{}/pay", app.mock.uri(), topup.id))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    let balance = app.client.billing().balance().await.unwrap();
    let history: Vec<_> = app
        .client
        .billing()
        .history(HistoryFilter::new().kind(BillingOperationType::Topup))
        .try_collect()
        .await
        .unwrap();

    assert_eq!(topup.amount_rub, 500.0);
    assert_eq!(balance.available_rub, 1500.0);
    assert!(history.iter().any(|entry| entry.amount_rub == 500.0));
}

#[tokio::test]
async fn a_failed_generation_shows_as_a_refunded_charge() {
    let app = App::start().await;
    let request = GenerationRequest::new("flux-schnell", "mock:fail=prompt_rejected a fox");
    let outcome = within_deadline(
        app.clock
            .run(app.client.generations().create_and_wait(request)),
    )
    .await;
    assert!(outcome.is_err());

    let history: Vec<_> = app
        .client
        .billing()
        .history(HistoryFilter::new())
        .try_collect()
        .await
        .unwrap();

    let charge = history
        .iter()
        .find(|e| e.type_ == BillingOperationType::GenerationCharge)
        .expect("the charge entry");
    assert_eq!(charge.status, Some(BillingOperationStatus::Refunded));
    assert_eq!(charge.net_amount_rub, Some(0.0));
    assert_eq!(
        app.client.billing().balance().await.unwrap().available_rub,
        1000.0
    );
}

#[tokio::test]
async fn the_top_up_limit_comes_back_to_the_caller_with_its_retry_after() {
    let app = App::start().await;
    for _ in 0..5 {
        app.client.billing().topup(100.0, None).await.unwrap();
    }

    let err = app.client.billing().topup(100.0, None).await.unwrap_err();

    // Ten minutes is longer than the client waits by itself: neither held back
    // by the pacer nor retried, the 429 reaches the caller at once.
    assert!(
        matches!(
            err.kind(),
            Some(ErrorKind::RateLimited { retry_after: Some(wait), .. }) if *wait == Duration::from_secs(600)
        ),
        "{err:?}"
    );
    assert_eq!(app.rate_limited(), 1);
    assert_eq!(app.clock.elapsed(), Duration::ZERO);
}

#[tokio::test]
async fn the_daily_top_up_cap_is_its_own_error_kind() {
    let app = App::start().await;
    for _ in 0..3 {
        app.client.billing().topup(100_000.0, None).await.unwrap();
    }

    let err = app.client.billing().topup(100.0, None).await.unwrap_err();

    assert_eq!(
        err.kind(),
        Some(&ErrorKind::DailyCapExceeded {
            limit: Some(300_000.0)
        })
    );
    assert_eq!(app.rate_limited(), 1, "tried once");
}

#[tokio::test]
async fn an_invoice_has_a_pdf_and_once_paid_a_closing_act() {
    let app = App::start().await;
    let without = app
        .client
        .billing()
        .create_invoice(12_000.0)
        .await
        .unwrap_err();
    assert!(matches!(without.kind(), Some(ErrorKind::Validation { .. })));

    let set = app
        .client
        .billing()
        .set_requisites(requisites())
        .await
        .unwrap();
    let invoice = app.client.billing().create_invoice(12_000.0).await.unwrap();
    let pdf = app.client.billing().invoice_pdf(invoice.id).await.unwrap();
    let early = app
        .client
        .billing()
        .invoice_act(invoice.id)
        .await
        .unwrap_err();
    reqwest::Client::new()
        .post(format!(
            "{}/_mock/invoices/{}/pay",
            app.mock.uri(),
            invoice.id
        ))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    let act = app.client.billing().invoice_act(invoice.id).await.unwrap();
    let invoices: Vec<_> = app.client.billing().invoices().try_collect().await.unwrap();

    assert_eq!(*set.inn, "7712345671");
    assert_eq!(
        app.client.billing().requisites().await.unwrap().inn,
        set.inn
    );
    // 22% from 1 January 2026, included.
    assert_eq!(invoice.vat_percent, Some(22));
    assert_eq!(invoice.vat_rub, Some(2163.93));
    assert!(pdf.starts_with(b"%PDF-"));
    assert_eq!(early.kind(), Some(&ErrorKind::Conflict));
    assert!(act.starts_with(b"%PDF-"));
    assert_eq!(invoices[0].status, InvoiceStatus::Paid);
    assert_eq!(
        app.client.billing().balance().await.unwrap().available_rub,
        13_000.0
    );
}

#[tokio::test]
async fn requisites_with_a_wrong_check_digit_name_the_field() {
    let app = App::start().await;

    let err = app
        .client
        .billing()
        .set_requisites(requisites().inn("7712345670"))
        .await
        .unwrap_err();

    let Some(ErrorKind::Validation { fields, .. }) = err.kind() else {
        panic!("{err:?}");
    };
    assert!(
        fields
            .iter()
            .any(|f| f.path == "/inn" && f.keyword == "checksum"),
        "{fields:?}"
    );
}

#[tokio::test]
async fn the_account_and_its_summary_are_read() {
    let app = App::start().await;
    within_deadline(
        app.clock.run(
            app.client
                .generations()
                .create_and_wait(GenerationRequest::new("flux-schnell", "a red fox")),
        ),
    )
    .await
    .unwrap();

    let account = app.client.account().get().await.unwrap();
    let summary = app.client.account().summary(None, None).await.unwrap();

    assert_eq!(account.balance_rub, Some(997.5));
    assert_eq!(account.limits.unwrap().concurrent_generations, Some(5));
    assert_eq!(summary.generations, 1);
    assert_eq!(summary.spent_rub, 2.5);
}

#[tokio::test]
async fn an_uploaded_file_feeds_a_generation() {
    let app = App::start().await;
    let png = {
        let done = within_deadline(
            app.clock.run(
                app.client
                    .generations()
                    .create_and_wait(GenerationRequest::new("flux-schnell", "a cat")),
            ),
        )
        .await
        .unwrap();
        reqwest::get(&done.output_urls[0])
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
    };
    let mut progress = Vec::new();

    let uploaded = app
        .client
        .files()
        .upload_bytes("cat.png", png.clone())
        .on_progress(|p| progress.push(p.bytes))
        .await
        .unwrap();
    let file = app.client.files().get(uploaded.file_id).await.unwrap();
    let generation = within_deadline(
        app.clock.run(
            app.client.generations().create_and_wait(
                GenerationRequest::new("imagen-4", "the same cat in watercolour")
                    .param("image_file_id", uploaded.file_id.to_string()),
            ),
        ),
    )
    .await
    .unwrap();
    app.client.files().delete(uploaded.file_id).await.unwrap();
    let gone = app.client.files().get(uploaded.file_id).await.unwrap_err();

    assert_eq!(file.status, FileStatus::Uploaded);
    assert_eq!(file.size_bytes, Some(png.len() as i64));
    assert_eq!(progress.last(), Some(&(png.len() as u64)));
    assert_eq!(generation.status, mediagen::GenerationStatus::Succeeded);
    assert_eq!(gone.kind(), Some(&ErrorKind::NotFound));
}

#[tokio::test]
async fn a_sign_in_link_is_requested_without_a_key() {
    let app = App::start().await;
    let anonymous = mediagen::Client::builder()
        .base_url(app.mock.uri())
        .build()
        .unwrap();

    let accepted = anonymous
        .auth()
        .request_magic_link("ada@example.com")
        .await
        .unwrap();

    assert!(
        accepted
            .message
            .unwrap()
            .starts_with("If an account exists")
    );
}
