//! The commands of each area of the service, in JSON and for people.

use mediagen_mock_server::{MockServer, Responses};

use crate::{Setup, envelope, run, scratch, text};

#[tokio::test]
async fn list_filters_by_status_and_model_and_shows_a_table_for_people() {
    let setup = Setup::new().await;
    let fox = setup
        .json(&["generate", "-m", "flux-schnell", "a fox"])
        .await;
    setup.json(&["generate", "-m", "suno-v4", "a song"]).await;
    setup.json(&["cancel", fox["id"].as_str().unwrap()]).await;

    let cancelled = setup.json(&["list", "--status", "cancelled"]).await;
    assert_eq!(cancelled.as_array().unwrap().len(), 1);
    assert_eq!(cancelled[0]["id"], fox["id"]);
    let songs = setup.json(&["list", "-m", "suno-v4"]).await;
    assert_eq!(songs[0]["modelSlug"], "suno-v4");
    assert_eq!(
        setup
            .json(&["list", "-n", "1"])
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let output = run(setup.cmd(&["--format", "human", "list"])).await;
    let table = text(&output.stdout);
    assert!(table.starts_with("ID"), "{table}");
    assert!(
        table.contains(fox["id"].as_str().unwrap()) && table.contains("CANCELLED"),
        "{table}"
    );
}

#[tokio::test]
async fn balance_history_account_and_summary_tell_the_same_money() {
    let setup = Setup::new().await;
    setup
        .json(&["generate", "-m", "flux-schnell", "a fox"])
        .await;

    let balance = setup.json(&["balance"]).await;
    assert_eq!(balance["availableRub"], 997.5);
    assert_eq!(balance["reservedRub"], 2.5);
    let account = setup.json(&["account"]).await;
    assert_eq!(account["balanceRub"], 997.5);
    let history = setup
        .json(&["history", "--type", "generation_charge"])
        .await;
    assert_eq!(history[0]["amountRub"], -2.5, "{history}");
    let summary = setup.json(&["summary"]).await;
    assert_eq!(summary["generations"], 1);

    for args in [
        ["--format", "human", "balance"],
        ["--format", "human", "account"],
        ["--format", "human", "summary"],
        ["--format", "human", "history"],
    ] {
        let output = run(setup.cmd(&args)).await;
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        assert!(
            text(&output.stdout).contains("RUB"),
            "{args:?}: {}",
            text(&output.stdout)
        );
    }
}

#[tokio::test]
async fn history_refuses_an_unknown_type_before_asking_the_service() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&["history", "--type", "gifts"])).await;
    assert_eq!(output.status.code(), Some(2));
}

#[tokio::test]
async fn topup_tells_where_to_pay_and_the_balance_grows_once_paid() {
    let setup = Setup::new().await;
    let topup = setup
        .json(&["topup", "1500", "--return-url", "https://example.com/done"])
        .await;
    assert_eq!(topup["amountRub"], 1500.0);
    assert_eq!(topup["status"], "PENDING");
    let page = topup["paymentUrl"].as_str().expect("a payment page");
    assert_eq!(setup.json(&["balance"]).await["availableRub"], 1000.0);
    reqwest::Client::new()
        .post(page.replace("/checkout", "/pay"))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    assert_eq!(setup.json(&["balance"]).await["availableRub"], 2500.0);

    let output = run(setup.cmd(&["--format", "human", "topup", "500"])).await;
    let shown = text(&output.stdout);
    assert!(shown.contains("pay here: http"), "{shown}");
}

#[tokio::test]
async fn invoices_are_issued_listed_and_saved_as_pdf_with_their_act_once_paid() {
    let setup = Setup::new().await;
    let requisites = mediagen::RequisitesInput::builder()
        .legal_name("OOO Romashka")
        .inn("7707083893")
        .kpp(Some("770701001".parse().unwrap()))
        .ogrn("1027700132195")
        .legal_address("Moscow, Vavilova 19")
        .bank_name("Sberbank")
        .bic("044525225")
        .settlement_account("40702810938000000001")
        .correspondent_account("30101810400000000225");
    setup
        .client()
        .billing()
        .set_requisites(requisites)
        .await
        .unwrap();

    let invoice = setup.json(&["invoices", "create", "12000"]).await;
    let id = invoice["id"].as_str().unwrap();
    assert_eq!(
        setup.json(&["invoices", "list"]).await[0]["id"],
        invoice["id"]
    );

    let dir = scratch("invoices");
    let pdf = dir.join("invoice.pdf");
    let saved = setup
        .json(&["invoices", "pdf", id, "-o", pdf.to_str().unwrap()])
        .await;
    assert_eq!(saved["path"], pdf.to_str().unwrap());
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));

    // An act exists once the invoice is paid: the mock's control API pays it.
    let paid = reqwest::Client::new()
        .post(format!("{}/_mock/invoices/{id}/pay", setup.mock.uri()))
        .send()
        .await
        .unwrap();
    assert!(paid.status().is_success());
    let act = run(setup.cmd(&["invoices", "act", id, "-o", "-"])).await;
    assert!(act.status.success(), "{}", text(&act.stderr));
    assert!(
        act.stdout.starts_with(b"%PDF-"),
        "the act on stdout with -o -"
    );
}

#[tokio::test]
async fn files_are_uploaded_shown_and_deleted() {
    let setup = Setup::new().await;
    let dir = scratch("files");
    let path = dir.join("voice.wav");
    std::fs::write(&path, b"RIFF\0\0\0\0WAVEfmt ").unwrap();
    let uploaded = setup
        .json(&["files", "upload", path.to_str().unwrap()])
        .await;
    assert_eq!(uploaded["contentType"], "audio/wav");
    let id = uploaded["fileId"].as_str().unwrap();
    let file = setup.json(&["files", "get", id]).await;
    assert_eq!(file["sizeBytes"], 16);
    assert_eq!(setup.json(&["files", "delete", id]).await["deleted"], true);
    let gone = run(setup.cmd(&["files", "get", id])).await;
    assert_eq!(gone.status.code(), Some(1));
}

/// Without `uploadHeaders` the contract has the upload carry only
/// `Content-Length`, and the mock's store takes it as the declared type.
#[tokio::test]
async fn files_upload_works_with_answers_that_carry_only_what_the_service_guarantees() {
    let setup = Setup::with(
        MockServer::builder()
            .responses(Responses::Minimal)
            .start()
            .await,
        1000.0,
    );
    let path = scratch("files-minimal").join("cat.png");
    std::fs::write(&path, b"\x89PNG\r\n\x1a\n").unwrap();
    let uploaded = setup
        .json(&["files", "upload", path.to_str().unwrap()])
        .await;
    let id = uploaded["fileId"].as_str().unwrap();
    let file = setup.mock.uri() + "/uploads/" + id;
    let bytes = reqwest::get(&file).await.unwrap();
    assert_eq!(bytes.status(), 200, "the bytes arrived");
    assert_eq!(bytes.headers()["content-type"], "image/png");
}

#[tokio::test]
async fn files_upload_sends_a_type_it_does_not_know_and_the_service_refuses_it_as_usage() {
    let setup = Setup::new().await;
    let path = scratch("unknown-type").join("notes.txt");
    std::fs::write(&path, b"plain text").unwrap();
    let output = run(setup.cmd(&[
        "--json",
        "files",
        "upload",
        path.to_str().unwrap(),
        "--content-type",
        "text/plain",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert_eq!(envelope(&output)["code"], "VALIDATION_ERROR");
}

#[tokio::test]
async fn files_upload_names_the_types_when_neither_the_extension_nor_the_service_takes_one() {
    let setup = Setup::new().await;
    let path = scratch("untold-type").join("notes.txt");
    std::fs::write(&path, b"plain text").unwrap();
    let path = path.to_str().unwrap();
    let untold = run(setup.cmd(&["files", "upload", path])).await;
    assert_eq!(untold.status.code(), Some(2), "{}", text(&untold.stderr));
    assert_eq!(
        envelope(&untold)["details"]["allowedValues"][0],
        "image/png"
    );
    assert!(
        text(&untold.stderr).contains("(allowed: image/png, image/jpeg"),
        "{}",
        text(&untold.stderr)
    );
    let refused = run(setup.cmd(&["files", "upload", path, "--content-type", "text/plain"])).await;
    let told = text(&refused.stderr);
    assert!(
        told.contains("/contentType must be one of image/png, image/jpeg")
            && told.contains("hint: pass --content-type with one of those types"),
        "{told}"
    );
}
