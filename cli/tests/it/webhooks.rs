//! `webhooks`: endpoint management against the mock, `verify` on known signatures,
//! and `listen` receiving real deliveries.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use mediagen_mock_server::MockServer;
use webhook_verify::Webhook;

use crate::{Background, Setup, bare, envelope, run, text};

// The Standard Webhooks test vector, also computed with Python's hmac module.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP: &str = "1614265330";
const PAYLOAD: &str = r#"{"test": 2432232314}"#;
const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

/// `webhooks verify` of the test vector's headers at time `now`, with `payload` on stdin.
fn verify(payload: &str, now: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut args = vec![
        "--format",
        "human",
        "webhooks",
        "verify",
        "--secret",
        SECRET,
        "--id",
        MSG_ID,
        "--timestamp",
        TIMESTAMP,
        "--signature",
        SIGNATURE,
        "--now",
        now,
    ];
    args.extend_from_slice(extra);
    let mut cmd = bare(&args);
    cmd.write_stdin(payload.to_owned());
    cmd
}

#[tokio::test]
async fn verify_accepts_the_standard_webhooks_test_vector() {
    let output = run(verify(PAYLOAD, TIMESTAMP, &[])).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "valid\n");
}

#[tokio::test]
async fn verify_reads_the_body_from_a_file_and_answers_json_for_scripts() {
    let dir = crate::scratch("verify-file");
    let path = dir.join("body.json");
    std::fs::write(&path, PAYLOAD).unwrap();
    let output = run(bare(&[
        "--json",
        "webhooks",
        "verify",
        "--secret",
        SECRET,
        "--id",
        MSG_ID,
        "--timestamp",
        TIMESTAMP,
        "--signature",
        SIGNATURE,
        "--now",
        TIMESTAMP,
        "--payload-file",
        path.to_str().unwrap(),
    ]))
    .await;
    assert!(output.status.success());
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap(),
        serde_json::json!({"valid": true})
    );
}

#[tokio::test]
async fn verify_says_a_trailing_newline_is_why_a_body_fails() {
    let output = run(verify(&format!("{PAYLOAD}\n"), TIMESTAMP, &[])).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with(
            "error: INVALID_SIGNATURE: no signature matches (the body matches \
                            without its trailing whitespace or newline)\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: pass the raw bytes of the body, with printf"),
        "{stderr}"
    );
}

#[tokio::test]
async fn verify_says_when_the_body_or_secret_differs() {
    let output = run(verify(r#"{"test": 2432232315}"#, TIMESTAMP, &[])).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("hint: use the current secret"));
}

#[tokio::test]
async fn verify_tells_a_right_signature_with_an_old_timestamp_from_a_wrong_one() {
    let later = (TIMESTAMP.parse::<i64>().unwrap() + 3600).to_string();
    let output = run(verify(PAYLOAD, &later, &[])).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    // Each fact once, on the error line; the hint only what to do.
    assert_eq!(
        stderr,
        "error: TIMESTAMP_OUT_OF_TOLERANCE: signature timestamp is older than the tolerance \
         allows (3600 s behind the clock here, tolerance 300 s; the signature itself is \
         right)\n  hint: check this machine's clock, or pass --now with the time of a \
         captured delivery\n"
    );

    let tolerant = run(verify(PAYLOAD, &later, &["--tolerance", "4000"])).await;
    assert!(tolerant.status.success());
}

#[tokio::test]
async fn verify_refuses_an_unusable_secret_as_usage() {
    let output = run(bare(&[
        "webhooks",
        "verify",
        "--secret",
        "whsec_!!!",
        "--id",
        MSG_ID,
        "--timestamp",
        TIMESTAMP,
        "--signature",
        SIGNATURE,
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(envelope(&output)["code"], "INVALID_SECRET");
}

#[tokio::test]
async fn endpoints_are_created_listed_updated_rotated_tested_and_deleted() {
    let setup = Setup::with(
        MockServer::builder()
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
        100.0,
    );
    let created = setup
        .json(&[
            "webhooks",
            "create",
            "http://127.0.0.1:9/hook",
            "-e",
            "generation.completed",
            "--description",
            "ci",
        ])
        .await;
    let id = created["id"].as_str().unwrap();
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(
        created["eventTypes"],
        serde_json::json!(["generation.completed"])
    );

    let listed = setup.json(&["webhooks", "list"]).await;
    assert_eq!(listed[0]["id"], id);
    assert!(
        listed[0].get("secret").is_none(),
        "a list never shows secrets"
    );

    let updated = setup
        .json(&[
            "webhooks",
            "update",
            id,
            "--disable",
            "--url",
            "http://127.0.0.1:9/other",
        ])
        .await;
    assert_eq!(updated["active"], false);
    assert_eq!(
        setup.json(&["webhooks", "get", id]).await["url"],
        "http://127.0.0.1:9/other"
    );
    setup.json(&["webhooks", "update", id, "--enable"]).await;

    let rotated = setup.json(&["webhooks", "rotate", id]).await;
    assert_ne!(rotated["secret"], created["secret"]);

    let queued = setup
        .json(&["webhooks", "test", id, "--event", "generation.failed"])
        .await;
    assert_eq!(queued["eventType"], "generation.failed");
    setup.mock.advance_clock(1.0).unwrap();
    setup.mock.deliveries_settled().await;
    let attempts = setup.json(&["webhooks", "deliveries", id]).await;
    assert_eq!(attempts[0]["messageId"], queued["messageId"]);
    let again = setup
        .json(&[
            "webhooks",
            "redeliver",
            id,
            queued["messageId"].as_str().unwrap(),
        ])
        .await;
    assert_eq!(again["messageId"], queued["messageId"]);

    let output = run(setup.cmd(&["--format", "human", "webhooks", "deliveries", id])).await;
    assert!(
        text(&output.stdout).starts_with("WHEN"),
        "{}",
        text(&output.stdout)
    );

    assert_eq!(
        setup.json(&["webhooks", "delete", id]).await["deleted"],
        true
    );
    assert_eq!(
        setup.json(&["webhooks", "list"]).await,
        serde_json::json!([])
    );
}

#[tokio::test]
async fn an_unknown_event_name_is_refused_before_sending() {
    let setup = Setup::new().await;
    let output = run(setup.cmd(&[
        "webhooks",
        "create",
        "https://example.com/h",
        "-e",
        "generation.started",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2));
    let error = envelope(&output);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("generation.completed"),
        "{error}"
    );
    let hint = error["hint"].as_str().unwrap();
    assert!(hint.contains("--event") && !hint.contains("URL"), "{hint}");
}

/// The address `webhooks listen` reports on stderr.
async fn listening(background: &mut Background) -> String {
    let line = background.wait_for("listening on ").await;
    let start = line.find("http://").expect("a URL");
    line[start..].split_whitespace().next().unwrap().to_owned()
}

#[tokio::test]
async fn listen_with_register_receives_a_real_delivery_and_removes_its_endpoint() {
    let setup = Setup::with(
        MockServer::builder()
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
        100.0,
    );
    let mut listener = Background::spawn(setup.process(&[
        "--json",
        "webhooks",
        "listen",
        "--port",
        "0",
        "--register",
        "--max-events",
        "1",
    ]));
    listener.wait_for("registered endpoint").await;
    listening(&mut listener).await;

    let created = setup.created("a fox").await;
    setup.mock.advance_clock(60.0).unwrap();
    setup.mock.deliveries_settled().await;

    let output = listener.finish().await;
    assert!(output.status.success());
    let line: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["type"], "generation.completed");
    assert_eq!(
        line["payload"]["data"]["generation"]["id"],
        created.id.to_string()
    );
    assert!(line["webhookId"].as_str().is_some());
    assert!(
        setup.client().webhooks().list().await.unwrap().is_empty(),
        "the endpoint is deleted on exit"
    );
}

#[tokio::test]
async fn listen_with_a_secret_skips_duplicates_rejects_forgeries_and_stops_on_sigterm() {
    let mut listener = Background::spawn(crate::process(&[
        "--format", "human", "webhooks", "listen", "--port", "0", "--secret", SECRET,
    ]));
    let url = listening(&mut listener).await;

    let body = r#"{"id":"evt_1","type":"generation.completed","created_at":"2026-11-22T10:00:00.000Z","data":{"generation":{"id":"7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47","status":"SUCCEEDED","media_type":"IMAGE","output_urls":["https://cdn.example/0.png"],"cost_rub":2.5,"completed_at":"2026-11-22T10:00:00.000Z"}}}"#;
    let now = chrono::Utc::now().timestamp();
    let signature = Webhook::new(SECRET)
        .unwrap()
        .sign("msg_1", now, body.as_bytes())
        .unwrap();
    let http = reqwest::Client::new();
    let send = |signature: String| {
        http.post(&url)
            .header("webhook-id", "msg_1")
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
    };
    assert_eq!(send(signature.clone()).await.unwrap().status(), 200);
    assert_eq!(
        send(signature).await.unwrap().status(),
        200,
        "a retry is acknowledged too"
    );
    listener.wait_for("skipped a retry of msg_1").await;
    assert_eq!(send("v1,Zm9yZ2Vk".to_owned()).await.unwrap().status(), 400);
    listener.wait_for("rejected (400)").await;

    listener.signal("TERM");
    let output = listener.finish().await;
    assert!(output.status.success());
    let stdout = text(&output.stdout);
    assert_eq!(
        stdout.lines().count(),
        1,
        "one event for two deliveries of one message: {stdout}"
    );
    assert!(
        stdout.contains("generation.completed")
            && stdout.contains("7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47"),
        "{stdout}"
    );
}

/// A local app that records each request it gets and answers `status`.
#[derive(Debug)]
struct App {
    url: String,
    got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

impl App {
    async fn start(status: StatusCode) -> Self {
        let got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>> = Arc::default();
        let record = got.clone();
        let router = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push((headers, body));
                status
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self { url, got }
    }

    fn got(&self) -> Vec<(HeaderMap, Bytes)> {
        self.got.lock().unwrap().clone()
    }
}

/// The headers of a delivery of `body` signed now with the test secret.
fn signed(message_id: &str, body: &str) -> HeaderMap {
    let now = chrono::Utc::now().timestamp();
    let signature = Webhook::new(SECRET)
        .unwrap()
        .sign(message_id, now, body.as_bytes())
        .unwrap();
    let mut headers = HeaderMap::new();
    for (name, value) in [
        ("webhook-id", message_id.to_owned()),
        ("webhook-timestamp", now.to_string()),
        ("webhook-signature", signature),
        ("content-type", "application/json".to_owned()),
    ] {
        headers.insert(name, value.parse().unwrap());
    }
    headers
}

#[tokio::test]
async fn listen_forwards_each_delivery_byte_for_byte_to_the_apps_whose_events_it_is() {
    let completed_app = App::start(StatusCode::OK).await;
    let failed_app = App::start(StatusCode::SERVICE_UNAVAILABLE).await;
    let every_app = App::start(StatusCode::ACCEPTED).await;
    let mut listener = Background::spawn(crate::process(&[
        "--format",
        "human",
        "webhooks",
        "listen",
        "--port",
        "0",
        "--secret",
        SECRET,
        "--forward-to",
        &completed_app.url,
        "--event",
        "generation.completed",
        "--forward-to",
        &failed_app.url,
        "-e",
        "generation.failed",
        "--forward-to",
        &every_app.url,
        "--max-events",
        "2",
    ]));
    let url = listening(&mut listener).await;
    let completed = r#"{"id":"evt_1","type":"generation.completed","created_at":"2026-11-22T10:00:00.000Z","data":{"generation":{"id":"7d3f9a2e-4b1c-4e8a-9f6d-2c5b8e1a0f47","status":"SUCCEEDED","media_type":"IMAGE","output_urls":["https://cdn.example/0.png"],"cost_rub":2.5,"completed_at":"2026-11-22T10:00:00.000Z"}}}"#;
    // Spaces and a final newline: forwarded as they came, never re-encoded.
    let failed = "{ \"id\": \"evt_2\", \"type\": \"generation.failed\", \"created_at\": \"2026-11-22T10:00:01.000Z\",\n  \"data\": { \"generation\": { \"id\": \"3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19\", \"error_code\": \"timeout\", \"error_message\": \"The provider did not answer in time\", \"failed_at\": \"2026-11-22T10:00:01.000Z\" } } }\n";

    let mut sent = Vec::new();
    for (message_id, body) in [("msg_1", completed), ("msg_2", failed)] {
        let headers = signed(message_id, body);
        let answer = reqwest::Client::new()
            .post(&url)
            .headers(headers.clone())
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "the service is answered at once");
        sent.push((headers, body));
    }
    let output = listener.finish().await;

    assert!(output.status.success(), "{}", text(&output.stderr));
    for (app, (headers, body)) in [(&completed_app, &sent[0]), (&failed_app, &sent[1])] {
        let got = app.got();
        assert_eq!(got.len(), 1, "{} gets only its event", app.url);
        let (got_headers, got_body) = &got[0];
        assert_eq!(got_body.as_ref(), body.as_bytes(), "byte for byte");
        for name in [
            "webhook-id",
            "webhook-timestamp",
            "webhook-signature",
            "content-type",
        ] {
            assert_eq!(got_headers.get(name), headers.get(name), "{name}");
        }
    }
    let every: Vec<Bytes> = every_app.got().into_iter().map(|(_, body)| body).collect();
    assert_eq!(
        every,
        [completed, failed],
        "an app without --event gets every event"
    );
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].contains("generation.completed")
            && lines[0].contains(&format!(
                "→ {} 200 OK · {} 202 Accepted",
                completed_app.url, every_app.url
            ))
            && !lines[0].contains(&failed_app.url),
        "{stdout}"
    );
    assert!(
        lines[1].contains("generation.failed")
            && lines[1].contains(&format!("→ {} 503 Service Unavailable", failed_app.url))
            && !lines[1].contains(&completed_app.url),
        "{stdout}"
    );
}

/// `mediagen webhooks trigger` to `app`, with the test secret and `args`.
async fn trigger(app: &App, args: &[&str]) -> std::process::Output {
    let mut line = vec!["webhooks", "trigger"];
    line.extend_from_slice(args);
    line.extend_from_slice(&["--to", &app.url, "--secret", SECRET]);
    run(bare(&line)).await
}

#[tokio::test]
async fn trigger_sends_the_contracts_event_signed_with_the_overrides_applied() {
    let app = App::start(StatusCode::NO_CONTENT).await;
    let output = trigger(
        &app,
        &[
            "generation.completed",
            "--set",
            "data.generation.cost_rub=12.5",
            "--set",
            "data.generation.output_urls[1]=https://cdn.example.com/b.png",
            "--webhook-id",
            "msg_dedupe_1",
        ],
    )
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let told: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(told["status"], 204);
    assert_eq!(told["outcome"], "delivered");
    let got = app.got();
    assert_eq!(got.len(), 1);
    let (headers, body) = &got[0];
    // The receiver's check, with the secret it was given.
    Webhook::new(SECRET).unwrap().verify(body, headers).unwrap();
    assert_eq!(headers["webhook-id"], "msg_dedupe_1");
    let body: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(body["type"], "generation.completed");
    assert_eq!(body["data"]["generation"]["cost_rub"], 12.5);
    assert_eq!(
        body["data"]["generation"]["output_urls"][1],
        "https://cdn.example.com/b.png"
    );
    assert!(body["id"].as_str().unwrap().starts_with("evt_"));
}

#[tokio::test]
async fn trigger_refuses_a_mistyped_or_unknown_override_before_sending() {
    let app = App::start(StatusCode::OK).await;
    let output = trigger(
        &app,
        &[
            "generation.failed",
            "--set",
            "data.generation.error_code=42",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    let message = envelope(&output)["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("data.generation.error_code: 42 is not of type \"string\""),
        "{message}"
    );
    let output = trigger(
        &app,
        &["generation.failed", "--set", "data.generation.eror_code=X"],
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    let message = envelope(&output)["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("has no member `eror_code`; it has ") && message.contains("error_code"),
        "{message}"
    );
    let output = trigger(
        &app,
        &[
            "--format",
            "human",
            "generation.failed",
            "--set",
            "data.generation.eror_code=X",
        ],
    )
    .await;
    crate::golden::check("trigger-unknown-member.txt", &text(&output.stderr));
    assert!(app.got().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn trigger_tells_what_the_service_does_with_each_answer() {
    for (status, outcome, words) in [
        (StatusCode::GONE, "disabled", "disables the endpoint"),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "failed",
            "retries the same webhook-id up to 15 times",
        ),
        (
            StatusCode::BAD_REQUEST,
            "failed",
            "720 consecutive failures",
        ),
    ] {
        let app = App::start(status).await;
        let output = trigger(&app, &["generation.completed"]).await;
        assert!(output.status.success(), "{}", text(&output.stderr));
        let told: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(told["status"], status.as_u16());
        assert_eq!(told["outcome"], outcome);
        assert!(told["service"].as_str().unwrap().contains(words), "{told}");
    }
}

#[tokio::test]
async fn trigger_through_the_mock_takes_its_delivery_path() {
    let app = App::start(StatusCode::OK).await;
    let setup = Setup::with(
        MockServer::builder()
            .real_clock(1.0)
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
        100.0,
    );
    let endpoint = setup.json(&["webhooks", "create", &app.url]).await;
    let (id, secret) = (
        endpoint["id"].as_str().unwrap(),
        endpoint["secret"].as_str().unwrap(),
    );
    let output = run(setup.cmd(&[
        "webhooks",
        "trigger",
        "generation.failed",
        "--endpoint",
        id,
        "--set",
        "data.generation.error_code=content_policy",
    ]))
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let told: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(told["outcome"], "delivered");
    // Signed by the mock with the endpoint's secret, and in its records.
    let got = app.got();
    assert_eq!(got.len(), 1);
    Webhook::new(secret)
        .unwrap()
        .verify(&got[0].1, &got[0].0)
        .unwrap();
    assert_eq!(got[0].0["webhook-id"], told["webhookId"].as_str().unwrap());
    let deliveries = setup.mock.list_deliveries();
    assert_eq!(deliveries.len(), 1);
    assert_eq!(
        deliveries[0].payload["data"]["generation"]["error_code"],
        "content_policy"
    );
}

#[tokio::test]
async fn trigger_through_a_mock_with_an_admin_token_passes_the_one_given_with_token() {
    let app = App::start(StatusCode::OK).await;
    let setup = Setup::with(
        MockServer::builder()
            .real_clock(1.0)
            .config(|c| {
                c.allow_private_webhooks = true;
                c.admin_token = Some("s3cret".into());
            })
            .start()
            .await,
        100.0,
    );
    let endpoint = setup.json(&["webhooks", "create", &app.url]).await;
    let id = endpoint["id"].as_str().unwrap();
    let trigger = [
        "webhooks",
        "trigger",
        "generation.completed",
        "--endpoint",
        id,
    ];
    let refused = run(setup.cmd(&trigger)).await;
    assert_eq!(refused.status.code(), Some(3), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("--token"),
        "{}",
        text(&refused.stderr)
    );
    assert!(
        app.got().is_empty(),
        "nothing is delivered without the token"
    );

    let mut with_token = trigger.to_vec();
    with_token.extend(["--token", "s3cret"]);
    let output = run(setup.cmd(&with_token)).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let told: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(told["outcome"], "delivered", "{told}");
    assert_eq!(app.got().len(), 1);
}
