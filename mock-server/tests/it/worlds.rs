//! Worlds: isolated mocks in one server, made and ended over the control API,
//! as parallel test workers sharing one mock use them.

use mediagen_mock_server::MockServer;
use reqwest::Method;
use serde_json::{Value, json};

use crate::receiver::Receiver;
use crate::{Reply, image_request};

/// One world as a client sees it: its base URL and its demo key.
struct WorldClient {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl WorldClient {
    async fn create(mock: &MockServer, settings: Value) -> Self {
        let http = reqwest::Client::new();
        let reply = at_root(mock, Method::POST, "/_mock/worlds", Some(settings)).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        Self {
            base: reply.body["baseUrl"].as_str().expect("baseUrl").to_owned(),
            key: reply.body["demoApiKey"]
                .as_str()
                .expect("demoApiKey")
                .to_owned(),
            http,
        }
    }

    async fn api(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        send(
            &self.http,
            method,
            &format!("{}{path}", self.base),
            Some(&self.key),
            body,
        )
        .await
    }

    async fn control(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        send(
            &self.http,
            method,
            &format!("{}/_mock{path}", self.base),
            None,
            body,
        )
        .await
    }
}

async fn send(
    http: &reqwest::Client,
    method: Method,
    url: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let mut request = http.request(method, url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the mock answers");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.expect("a body");
    Reply {
        status,
        headers,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        bytes: bytes.to_vec(),
    }
}

/// A control call to the server's root, where the worlds are made.
async fn at_root(mock: &MockServer, method: Method, path: &str, body: Option<Value>) -> Reply {
    let http = reqwest::Client::new();
    send(&http, method, &format!("{}{path}", mock.uri()), None, body).await
}

/// `GET /v1/account` at `base` with `key`.
async fn account(http: &reqwest::Client, base: &str, key: &str) -> Reply {
    send(
        http,
        Method::GET,
        &format!("{base}/v1/account"),
        Some(key),
        None,
    )
    .await
}

async fn private_webhooks_mock() -> MockServer {
    MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await
}

#[tokio::test]
async fn each_world_keeps_its_clock_faults_settings_keys_log_and_deliveries() {
    let mock = private_webhooks_mock().await;
    let a = WorldClient::create(&mock, json!({})).await;
    let b = WorldClient::create(&mock, json!({})).await;
    assert!(a.base.starts_with(&format!("{}/worlds/", mock.uri())));

    // The clock: a minute in A is not a minute in B, nor at the root.
    let b_before = b.control(Method::GET, "/clock", None).await.body["now"].clone();
    let root_before = mock.now();
    let moved = a
        .control(Method::POST, "/clock/advance", Some(json!({"seconds": 60})))
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!(
        b.control(Method::GET, "/clock", None).await.body["now"],
        b_before
    );
    assert_eq!(mock.now(), root_before);

    // Faults: A's 503 is A's alone.
    let fault = json!({"effect": "error", "method": "GET", "path": "/v1/account", "status": 503});
    assert_eq!(
        a.control(Method::POST, "/faults", Some(fault)).await.status,
        201
    );
    a.api(Method::GET, "/v1/account", None)
        .await
        .assert_error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(b.api(Method::GET, "/v1/account", None).await.status, 200);

    // Settings.
    let minimal = a
        .control(
            Method::PUT,
            "/settings",
            Some(json!({"responses": "minimal"})),
        )
        .await;
    assert_eq!(minimal.body["responses"], "minimal");
    assert_eq!(
        b.control(Method::GET, "/settings", None).await.body["responses"],
        "full"
    );

    // Keys: one world's key is unknown in another and at the root.
    let foreign = account(&b.http, &b.base, &a.key).await;
    foreign.assert_error(401, "AUTHENTICATION_ERROR");
    let at_root = account(&b.http, &mock.uri(), &a.key).await;
    at_root.assert_error(401, "AUTHENTICATION_ERROR");
    let root_key = account(&a.http, &a.base, mock.demo_api_key()).await;
    root_key.assert_error(401, "AUTHENTICATION_ERROR");

    // The request log: each world logs what it answered.
    let paths = |reply: Reply| -> Vec<String> {
        reply.body["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|r| format!("{} {}", r["path"].as_str().unwrap(), r["status"]))
            .collect()
    };
    assert_eq!(
        paths(a.control(Method::GET, "/requests", None).await),
        ["/v1/account 503", "/v1/account 401"]
    );
    assert_eq!(
        paths(b.control(Method::GET, "/requests", None).await),
        ["/v1/account 200", "/v1/account 401"]
    );
    let at_root: Vec<_> = mock.list_requests().into_iter().map(|r| r.status).collect();
    assert_eq!(
        at_root,
        [Some(401)],
        "the root logged only the foreign key it refused"
    );

    // Deliveries: A's generation is delivered from A's queue only.
    let receiver = Receiver::start().await;
    let endpoint = a
        .api(
            Method::POST,
            "/v1/webhook-endpoints",
            Some(json!({"url": receiver.url, "eventTypes": []})),
        )
        .await;
    assert_eq!(endpoint.status, 201, "{}", endpoint.body);
    receiver.set_secret(endpoint.body["secret"].as_str().expect("secret"));
    let created = a
        .api(
            Method::POST,
            "/v1/generations",
            Some(image_request("a lighthouse")),
        )
        .await;
    assert_eq!(created.status, 202, "{}", created.body);
    a.control(Method::POST, "/clock/advance", Some(json!({"seconds": 60})))
        .await;
    let delivered = receiver.wait_for(1).await;
    assert!(delivered[0].verified);
    let deliveries = |reply: Reply| reply.body["data"].as_array().expect("data").len();
    assert_eq!(
        deliveries(a.control(Method::GET, "/deliveries", None).await),
        1
    );
    assert_eq!(
        deliveries(b.control(Method::GET, "/deliveries", None).await),
        0
    );
    assert!(mock.list_deliveries().is_empty());
}

#[tokio::test]
async fn a_world_starts_with_the_settings_it_was_made_with() {
    let mock = MockServer::start().await;
    let world = WorldClient::create(
        &mock,
        json!({"clock": "real", "timeScale": 50, "responses": "minimal", "demoBalanceRub": 7.5}),
    )
    .await;
    let clock = world.control(Method::GET, "/clock", None).await;
    assert_eq!(
        (
            clock.body["mode"].as_str(),
            clock.body["timeScale"].as_f64()
        ),
        (Some("real"), Some(50.0))
    );
    let settings = world.control(Method::GET, "/settings", None).await;
    assert_eq!(settings.body["responses"], "minimal");
    let balance = world.api(Method::GET, "/v1/billing/balance", None).await;
    assert_eq!(
        balance.body["availableRub"].as_f64(),
        Some(7.5),
        "{}",
        balance.body
    );
    let health = world.api(Method::GET, "/health", None).await;
    assert_eq!(health.status, 200);
    let catalog = send(
        &world.http,
        Method::GET,
        &format!("{}/v1/catalog/", world.base),
        None,
        None,
    )
    .await;
    assert_eq!(
        catalog.status, 200,
        "the public catalogue needs no key in a world either"
    );

    let refused = at_root(
        &mock,
        Method::POST,
        "/_mock/worlds",
        Some(json!({"clock": "sideways"})),
    )
    .await;
    refused.assert_error(400, "VALIDATION_ERROR");
}

#[tokio::test]
async fn worlds_are_listed_and_a_deleted_one_answers_404() {
    let mock = MockServer::start().await;
    let world = WorldClient::create(&mock, json!({})).await;
    let listed = at_root(&mock, Method::GET, "/_mock/worlds", None).await;
    let data = listed.body["data"].as_array().expect("data");
    assert_eq!(data.len(), 1);
    assert_eq!(data[0]["baseUrl"].as_str(), Some(world.base.as_str()));
    let id = data[0]["id"].as_str().expect("id");

    let gone = at_root(&mock, Method::DELETE, &format!("/_mock/worlds/{id}"), None).await;
    assert_eq!(gone.status, 204);
    world
        .api(Method::GET, "/v1/account", None)
        .await
        .assert_error(404, "NOT_FOUND");
    let again = at_root(&mock, Method::DELETE, &format!("/_mock/worlds/{id}"), None).await;
    again.assert_error(404, "NOT_FOUND");
    assert!(mock.list_worlds().is_empty());
}

#[tokio::test]
async fn past_the_limit_of_worlds_a_new_one_is_refused_with_429() {
    let mock = MockServer::builder()
        .config(|c| c.max_worlds = 2)
        .start()
        .await;
    WorldClient::create(&mock, json!({})).await;
    WorldClient::create(&mock, json!({})).await;
    let third = at_root(&mock, Method::POST, "/_mock/worlds", None).await;
    third.assert_error(429, "RATE_LIMIT_ERROR");
    assert!(
        third.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("DELETE /_mock/worlds/{id}")
    );
}

#[tokio::test]
async fn rate_limits_count_per_address_inside_each_world() {
    let mock = MockServer::start().await;
    let a = WorldClient::create(&mock, json!({})).await;
    let b = WorldClient::create(&mock, json!({})).await;
    for _ in 0..60 {
        assert_eq!(a.api(Method::GET, "/v1/account", None).await.status, 200);
    }
    a.api(Method::GET, "/v1/account", None)
        .await
        .assert_error(429, "RATE_LIMIT_ERROR");
    assert_eq!(
        b.api(Method::GET, "/v1/account", None).await.status,
        200,
        "B's window is its own"
    );
}

#[tokio::test]
async fn a_world_handle_in_rust_drives_its_own_world() {
    let mock = MockServer::start().await;
    let world = mock.world().await;
    let user = world.create_user(10.0);
    world.advance_clock(30.0);
    assert_eq!(
        world.get_user(user.user_id).map(|u| u.balance_rub),
        Some(10.0)
    );
    assert_eq!(
        mock.get_user(user.user_id),
        None,
        "the user lives in its world"
    );
    assert_ne!(world.get_clock().now, mock.get_clock().now);
    assert_ne!(world.demo_api_key(), mock.demo_api_key());

    assert_eq!(mock.id(), None, "the root is the default world");
    let id = world.id().expect("a world's id").to_owned();
    assert_eq!(mock.list_worlds(), [(id.clone(), world.uri())]);
    assert!(mock.delete_world(&id));
    assert!(mock.list_worlds().is_empty());
}

#[tokio::test]
async fn routes_with_path_parameters_read_the_worlds_own() {
    let mock = MockServer::start().await;
    let world = WorldClient::create(&mock, json!({})).await;
    let user = world
        .control(Method::POST, "/users", Some(json!({"balanceRub": 3})))
        .await;
    let id = user.body["userId"].as_str().expect("userId");
    let read = world
        .control(Method::GET, &format!("/users/{id}"), None)
        .await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["balanceRub"].as_f64(), Some(3.0));
    let created = world
        .api(Method::POST, "/v1/generations", Some(image_request("p")))
        .await;
    let generation = created.body["id"].as_str().expect("id");
    let got = world
        .api(Method::GET, &format!("/v1/generations/{generation}"), None)
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
}

/// The rule of mock-server/README.md (Snapshots): a snapshot brings an
/// account's state; every setting of the world it goes into stays the world's.
#[tokio::test]
async fn a_snapshot_put_into_a_world_keeps_each_of_the_worlds_settings() {
    let mock = MockServer::start().await;
    let source = mock.create_user(42.0);
    mock.advance_clock(3600.0);
    let snapshot = mock.get_snapshot();

    let world = WorldClient::create(
        &mock,
        json!({"clock": "real", "timeScale": 7.0, "responses": "extra", "rateLimits": false}),
    )
    .await;
    let changed = world
        .control(
            Method::PUT,
            "/settings",
            Some(json!({"createLatencySeconds": 2.5, "autoPaySeconds": 30.0})),
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    let settings = changed.body;

    let put = world
        .control(Method::PUT, "/snapshot", Some(snapshot))
        .await;
    assert_eq!(put.status, 204, "{}", put.body);

    // The account's state came: the source's user and its balance.
    let reply = account(&world.http, &world.base, &source.api_key).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    // Responses, create latency and auto-pay stay the world's.
    let after = world.control(Method::GET, "/settings", None).await;
    assert_eq!(after.body, settings);
    assert_eq!(after.body["responses"], "extra");
    assert!(
        reply.header("x-mock-extra").is_some(),
        "still answers extra"
    );
    // The clock's mode and scale stay the world's; its time is the snapshot's.
    let clock = world.control(Method::GET, "/clock", None).await;
    assert_eq!(
        (&clock.body["mode"], &clock.body["timeScale"]),
        (&json!("real"), &json!(7.0))
    );
    // The limits stay off: more requests than the general limit, none refused.
    for _ in 0..62 {
        let reply = account(&world.http, &world.base, &source.api_key).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
}
