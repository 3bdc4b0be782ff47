//! Snapshots: a world's state taken and restored whole, refused whole when
//! broken, and kept across a restart with `--state`.

use std::ffi::OsStr;

use mediagen_mock_server::MockServer;
use reqwest::Method;
use serde_json::{Value, json};

use crate::delivery::register;
use crate::receiver::Receiver;
use crate::{App, Binary, image_request, requisites};

/// A user with a history: finished generations, a failed one refunded, a
/// paid invoice, a pending top-up, a webhook endpoint with its deliveries.
async fn account_with_history() -> (App, Receiver) {
    let app = App::with(
        MockServer::builder()
            .rate_limits(false)
            .config(|c| c.allow_private_webhooks = true)
            .start()
            .await,
    )
    .await;
    let receiver = Receiver::start().await;
    register(&app, &receiver, json!([])).await;
    for n in 0..3 {
        let created = app.create(image_request(&format!("picture {n}"))).await;
        assert_eq!(created.status, 202, "{}", created.body);
    }
    app.mock.advance_clock(60.0).unwrap();
    app.mock.deliveries_settled().await;
    let set = app
        .send(
            Method::PUT,
            "/v1/billing/requisites",
            Some(&app.key),
            Some(requisites()),
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let invoice = app
        .post("/v1/billing/invoices", json!({"amountRub": 12000}))
        .await;
    let invoice = invoice.body["id"]
        .as_str()
        .expect("invoice id")
        .parse()
        .expect("a uuid");
    assert_eq!(app.mock.pay_invoice(invoice).unwrap().status, "PAID");
    let topup = app
        .post("/v1/billing/topup", json!({"amountRub": 500}))
        .await;
    assert_eq!(topup.status, 201, "{}", topup.body);
    (app, receiver)
}

#[tokio::test]
async fn a_snapshot_restored_into_a_new_world_reads_back_equal() {
    let (app, _receiver) = account_with_history().await;
    let taken = app.mock.get_snapshot();
    assert_eq!(taken["format"], "mediagen-mock-snapshot");
    assert_eq!(taken["version"], 1);

    let world = app.mock.world().await;
    let restored = reqwest::Client::new()
        .put(format!("{}/_mock/snapshot", world.uri()))
        .json(&taken)
        .send()
        .await
        .expect("the mock answers");
    assert_eq!(restored.status(), 204);
    let again = world.get_snapshot();
    assert_eq!(again["store"], taken["store"]);
    assert_eq!(again["clock"]["now"], taken["clock"]["now"]);

    // The world answers the user's own key with the user's own history.
    let read = |base: String| {
        let key = app.key.clone();
        async move {
            reqwest::Client::new()
                .get(format!("{base}/v1/generations?limit=10"))
                .bearer_auth(key)
                .send()
                .await
                .expect("answers")
                .json::<Value>()
                .await
                .expect("json")
        }
    };
    // The same history, its files served from the world's own address.
    let in_world = read(world.uri()).await.to_string();
    let at_root = read(app.mock.uri()).await.to_string();
    assert_eq!(in_world, at_root.replace(&app.mock.uri(), &world.uri()));
    assert_eq!(
        world.get_user(app.user_id).unwrap(),
        app.mock.get_user(app.user_id).unwrap()
    );
    world
        .check_ledger()
        .expect("the ledger holds in the restored world");
}

#[tokio::test]
async fn a_broken_snapshot_is_refused_with_400_and_changes_nothing() {
    let (app, _receiver) = account_with_history().await;
    let before = app.mock.get_snapshot();
    let good = before.clone();
    let user = app.user_id.to_string();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "another version",
            with(&good, "/version", json!(2)),
            "version 2",
        ),
        (
            "another format",
            with(&good, "/format", json!("stripe")),
            "format",
        ),
        ("no store", without(&good, "store"), "store"),
        (
            "a balance as text",
            with(
                &good,
                &format!("/store/ledger/accounts/{user}/available"),
                json!("lots"),
            ),
            "/store/ledger/accounts",
        ),
        (
            "a key of nobody",
            {
                let mut broken = good.clone();
                let keys = broken["store"]["keys"].as_object_mut().expect("keys");
                let (_, key) = keys.iter().next().expect("a key");
                let mut orphan = key.clone();
                orphan["user_id"] = json!(uuid::Uuid::new_v4());
                keys.insert("mg_live_orphan".into(), orphan);
                broken
            },
            "does not exist",
        ),
    ];
    for (case, snapshot, said) in cases {
        let reply = app
            .send(Method::PUT, "/_mock/snapshot", None, Some(snapshot))
            .await;
        reply.assert_error(400, "VALIDATION_ERROR");
        let message = reply.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{case}: {message}");
        let after = app.mock.get_snapshot();
        assert_eq!(after["store"], before["store"], "{case} changed the world");
    }
    let not_json = app
        .http
        .put(app.url("/_mock/snapshot"))
        .body("{\"format\":")
        .send()
        .await
        .expect("answers");
    assert_eq!(not_json.status(), 400);
}

fn with(value: &Value, pointer: &str, replacement: Value) -> Value {
    let mut value = value.clone();
    *value
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} in the snapshot")) = replacement;
    value
}

fn without(value: &Value, member: &str) -> Value {
    let mut value = value.clone();
    value.as_object_mut().expect("an object").remove(member);
    value
}

/// Calls the running binary with its demo key; the answer must be a success.
pub async fn call(mock: &Binary, method: Method, path: &str, body: Option<Value>) -> Value {
    let mut request = reqwest::Client::new()
        .request(method, format!("{}{path}", mock.base))
        .bearer_auth(&mock.key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the mock answers");
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
    response.json().await.unwrap_or(Value::Null)
}

#[tokio::test]
async fn after_sigterm_a_restart_with_state_goes_on_with_the_active_generation() {
    let dir = std::env::temp_dir().join(format!("mediagen-state-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let state = dir.join("mock-state.json");
    let receiver = Receiver::start().await;

    let mut first = Binary::start([
        OsStr::new("--allow-private-webhooks"),
        OsStr::new("--state"),
        state.as_os_str(),
    ]);
    let fresh = first.next_line();
    assert!(
        fresh.starts_with(&format!(
            "state file {} does not exist yet",
            state.display()
        )),
        "{fresh}"
    );
    let endpoint = call(
        &first,
        Method::POST,
        "/v1/webhook-endpoints",
        Some(json!({"url": receiver.url, "eventTypes": ["generation.completed"]})),
    )
    .await;
    receiver.set_secret(endpoint["secret"].as_str().expect("secret"));
    let created = call(
        &first,
        Method::POST,
        "/v1/generations",
        Some(image_request("kept")),
    )
    .await;
    let id = created["id"].as_str().expect("id").to_owned();
    let balance = call(&first, Method::GET, "/v1/billing/balance", None).await;
    let (key, first_base) = (first.key.clone(), first.base.clone());
    assert_eq!(first.terminate().code(), Some(0));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state)
            .expect("the state file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "it holds keys and secrets");
    }
    let mut second = Binary::start([
        OsStr::new("--allow-private-webhooks"),
        OsStr::new("--state"),
        state.as_os_str(),
    ]);
    let loaded = second.next_line();
    assert!(
        loaded.starts_with(&format!("state loaded from {}", state.display())),
        "{loaded}"
    );
    assert_eq!(second.key, key, "the demo key a client holds stays valid");
    assert_ne!(second.base, first_base, "a new process on a new port");
    assert_eq!(
        call(&second, Method::GET, "/v1/billing/balance", None).await,
        balance
    );
    let generation = call(&second, Method::GET, &format!("/v1/generations/{id}"), None).await;
    assert!(
        matches!(
            generation["status"].as_str(),
            Some("PENDING" | "PROCESSING")
        ),
        "{generation}"
    );
    let endpoints = call(&second, Method::GET, "/v1/webhook-endpoints", None).await;
    assert_eq!(endpoints["data"][0]["id"], endpoint["id"]);

    call(
        &second,
        Method::POST,
        "/_mock/clock/advance",
        Some(json!({"seconds": 60})),
    )
    .await;
    let delivered = receiver.wait_for(1).await;
    assert!(
        delivered[0].verified,
        "signed with the secret of before the restart"
    );
    assert_eq!(delivered[0].body["data"]["generation"]["id"], json!(id));
    let generation = call(&second, Method::GET, &format!("/v1/generations/{id}"), None).await;
    assert_eq!(generation["status"], "SUCCEEDED");
    assert_eq!(second.terminate().code(), Some(0));
    std::fs::remove_dir_all(&dir).ok();
}
