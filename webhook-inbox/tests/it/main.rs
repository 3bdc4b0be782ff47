//! The inbox through its axum router, as the service's deliveries reach it.

// A test binary exports nothing: its helpers are for its own modules.
#![allow(missing_docs)]

mod failures;
mod work;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt as _;
use webhook_inbox::{Inbox, InboxConfig};
use webhook_verify::Webhook;

pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// An inbox in a folder of its own, kept as long as the value lives.
#[derive(Debug)]
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub inbox: Inbox,
    pub app: axum::Router,
}

impl Fixture {
    pub fn open() -> Self {
        Self::with(InboxConfig::default())
    }

    pub fn with(config: InboxConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::open_with(dir.path().join("inbox.db"), config).unwrap();
        let app = app(&inbox);
        Self { dir, inbox, app }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("inbox.db")
    }

    /// The inbox closed and opened again, as after a restart.
    pub fn reopen(self, config: InboxConfig) -> Self {
        let Self { dir, inbox, app } = self;
        drop((inbox, app));
        let inbox = Inbox::open_with(dir.path().join("inbox.db"), config).unwrap();
        let app = crate::app(&inbox);
        Self { dir, inbox, app }
    }

    /// Posts `body` signed as message `id`; the answer's status.
    pub async fn deliver(&self, id: &str, body: &str) -> StatusCode {
        post(&self.app, signed(id, body)).await
    }

    /// Rows of the inbox's table.
    pub fn rows(&self) -> i64 {
        self.inbox.with_connection(|db| {
            db.query_row("SELECT count(*) FROM inbox_messages", [], |row| row.get(0))
                .unwrap()
        })
    }
}

pub fn app(inbox: &Inbox) -> axum::Router {
    axum::Router::new().nest("/webhooks", inbox.router(Webhook::new(SECRET).unwrap()))
}

pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A delivery of `body` as message `id`, signed as the service signs it now.
pub fn signed(id: &str, body: &str) -> Request<Body> {
    let now = now();
    let signature = Webhook::new(SECRET)
        .unwrap()
        .sign(id, now, body.as_bytes())
        .unwrap();
    Request::post("/webhooks")
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", now.to_string())
        .header("webhook-signature", signature)
        .body(Body::from(body.to_owned()))
        .unwrap()
}

pub async fn post(app: &axum::Router, request: Request<Body>) -> StatusCode {
    app.clone().oneshot(request).await.unwrap().status()
}

/// A `generation.completed` body for generation `n`.
pub fn completed(n: u32) -> String {
    format!(
        r#"{{"id":"evt_{n}","type":"generation.completed","created_at":"2026-11-22T10:15:30.123Z","data":{{"generation":{{"id":"gen-{n}","status":"SUCCEEDED"}}}}}}"#
    )
}

/// Long enough for any test here; a lease that must run out is set to zero.
pub const WAIT: Duration = Duration::from_secs(5);
