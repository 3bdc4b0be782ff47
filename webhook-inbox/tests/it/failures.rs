//! Accepting: stored once, refused without a row, 503 when the store cannot write.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tokio::task::JoinSet;
use webhook_inbox::{Accepted, InboxConfig, InboxError};
use webhook_verify::Webhook;

use crate::{Fixture, SECRET, completed, now, post, signed};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_is_stored_once_and_each_repeat_is_answered_2xx() {
    let fixture = Fixture::open();
    assert_eq!(
        fixture.deliver("msg_1", &completed(1)).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        fixture.deliver("msg_1", &completed(1)).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(fixture.rows(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicate_deliveries_are_stored_once() {
    let fixture = Fixture::open();
    let mut senders = JoinSet::new();
    for _ in 0..32 {
        let app = fixture.app.clone();
        senders.spawn(async move { post(&app, signed("msg_dup", &completed(7))).await });
    }
    let answers = senders.join_all().await;
    assert!(
        answers.iter().all(|s| *s == StatusCode::NO_CONTENT),
        "{answers:?}"
    );
    assert_eq!(fixture.rows(), 1);
    let claim = fixture.inbox.claim().unwrap().unwrap();
    assert_eq!(claim.message.webhook_id, "msg_dup");
    assert!(
        fixture.inbox.claim().unwrap().is_none(),
        "one message to work on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_stays_known_across_a_restart() {
    let fixture = Fixture::open();
    fixture.deliver("msg_1", &completed(1)).await;
    let claim = fixture.inbox.claim().unwrap().unwrap();
    fixture.inbox.complete(&claim).unwrap();
    let fixture = fixture.reopen(InboxConfig::default());
    let webhook = Webhook::new(SECRET).unwrap();
    let request = signed("msg_1", &completed(1));
    let (parts, _) = request.into_parts();
    let inbox = fixture.inbox.clone();
    let accepted = inbox
        .accept_async(&webhook, &parts.headers, completed(1).as_bytes())
        .await
        .unwrap();
    assert_eq!(accepted, Accepted::Duplicate);
    assert!(fixture.inbox.claim().unwrap().is_none(), "done stays done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_delivery_is_refused_and_leaves_no_row() {
    let fixture = Fixture::open();
    let forged = Request::post("/webhooks")
        .header("webhook-id", "msg_1")
        .header("webhook-timestamp", now().to_string())
        .header("webhook-signature", "v1,Zm9yZ2Vk")
        .body(Body::from(completed(1)))
        .unwrap();
    assert_eq!(post(&fixture.app, forged).await, StatusCode::BAD_REQUEST);
    let other_key = Webhook::new(&Webhook::generate_secret()).unwrap();
    let signature = other_key
        .sign("msg_2", now(), completed(2).as_bytes())
        .unwrap();
    let wrong_key = Request::post("/webhooks")
        .header("webhook-id", "msg_2")
        .header("webhook-timestamp", now().to_string())
        .header("webhook-signature", signature)
        .body(Body::from(completed(2)))
        .unwrap();
    assert_eq!(post(&fixture.app, wrong_key).await, StatusCode::BAD_REQUEST);
    assert_eq!(fixture.rows(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_event_type_is_stored_and_handed_over_raw() {
    let fixture = Fixture::open();
    let unknown = r#"{"id":"evt_9","type":"invoice.paid","data":{"x":1}}"#;
    assert_eq!(
        fixture.deliver("msg_u", unknown).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        fixture.deliver("msg_n", "not json at all").await,
        StatusCode::NO_CONTENT,
        "a body that verified came from the service: stored, not refused"
    );
    let first = fixture.inbox.claim().unwrap().unwrap();
    assert_eq!(first.message.event_type.as_deref(), Some("invoice.paid"));
    assert_eq!(first.message.body, unknown.as_bytes());
    let second = fixture.inbox.claim().unwrap().unwrap();
    assert_eq!(second.message.event_type, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_locked_past_the_bound_is_answered_503_and_stores_nothing() {
    let fixture = Fixture::with(InboxConfig::default().lock_wait(Duration::from_millis(50)));
    let other = rusqlite::Connection::open(fixture.path()).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert_eq!(
        fixture.deliver("msg_1", &completed(1)).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(fixture.rows(), 0);
    // The service's retry finds the lock gone.
    assert_eq!(
        fixture.deliver("msg_1", &completed(1)).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(fixture.rows(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_inbox_answers_503_and_every_2xx_has_its_row() {
    let fixture = Fixture::with(InboxConfig::default().max_bytes(96 * 1024));
    let body = format!(
        r#"{{"type":"generation.completed","pad":"{}"}}"#,
        "x".repeat(2000)
    );
    let mut stored = 0;
    let mut refused = 0;
    for n in 0..200 {
        match fixture.deliver(&format!("msg_{n}"), &body).await {
            StatusCode::NO_CONTENT => stored += 1,
            StatusCode::SERVICE_UNAVAILABLE => refused += 1,
            other => panic!("{other}"),
        }
    }
    assert!(refused > 0, "the bound is reached");
    assert_eq!(fixture.rows(), stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_is_answered_503() {
    let fixture = Fixture::open();
    assert_eq!(
        fixture.deliver("msg_1", &completed(1)).await,
        StatusCode::NO_CONTENT
    );
    // The file made read-only, then the receiver restarted on it: a backup
    // restored read-only, a volume mounted read-only.
    let path = fixture.path();
    let Fixture { dir, inbox, app } = fixture;
    drop((inbox, app));
    read_only(&path, true);
    let inbox = webhook_inbox::Inbox::open(&path).unwrap();
    let app = crate::app(&inbox);
    let answer = post(&app, signed("msg_2", &completed(2))).await;
    let webhook = Webhook::new(SECRET).unwrap();
    let (parts, _) = signed("msg_3", &completed(3)).into_parts();
    let err = inbox
        .accept_async(&webhook, &parts.headers, completed(3).as_bytes())
        .await
        .unwrap_err();
    let rows = inbox.stats().unwrap().waiting;
    read_only(&path, false);
    drop(dir);
    assert_eq!(answer, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        matches!(
            err,
            webhook_inbox::AcceptError::Unavailable(InboxError::ReadOnly)
        ),
        "{err:?}"
    );
    assert_eq!(rows, 1, "the first message only");
}

/// Makes `path` read-only, or writable again. Permissions do not stop root, so
/// root also sets the file immutable, where the file system can.
fn read_only(path: &std::path::Path, on: bool) {
    let immutable = |flag| {
        let _ = std::process::Command::new("chattr")
            .arg(flag)
            .arg(path)
            .stderr(std::process::Stdio::null())
            .status();
    };
    if !on {
        immutable("-i");
    }
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    permissions.set_readonly(on);
    std::fs::set_permissions(path, permissions).unwrap();
    if on {
        immutable("+i");
    }
}
