//! The control API's two faces are one: every operation of the control
//! contract, driven through the Rust face (`World`, `MockServer`) and through
//! HTTP from the same state, with a valid input and an invalid one, gives the
//! same answer and the same refusal.
//!
//! Each face runs in a world of its own restored from one snapshot, so both
//! start from the same users, keys, invoices, top-ups, faults, outbox and
//! clock; what each makes anew (ids, keys, a world's address) is masked before
//! the answers are compared. An operation of the contract that this file does
//! not drive through both faces fails the test.

use std::collections::{BTreeSet, HashMap};

use mediagen_mock_server::{
    ControlError, CreateUser, Fault, ForcedOutcome, MockServer, ModelState, OutcomeKind, Scope,
    SettingsUpdate, Strict, World, WorldSettings,
};
use reqwest::Method;
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{image_request, requisites};

/// What the fixture holds, by id, for the operations that name something.
#[derive(Debug)]
struct Fixture {
    snapshot: Value,
    user: Uuid,
    key: String,
    public_part: String,
    fault: String,
    invoice: Uuid,
    topup: Uuid,
}

/// An HTTP answer: status and JSON body (`Null` when empty).
#[derive(Debug)]
struct Answer {
    status: u16,
    body: Value,
}

/// A request of the HTTP face: method, path under the world's base URL, body.
type Call<'a> = (Method, &'a str, Option<Value>);

struct Faces {
    mock: MockServer,
    http: reqwest::Client,
    fixture: Fixture,
    /// Per operation, the success status of the contract and its schema.
    answers: HashMap<String, (u16, Option<String>)>,
}

/// Operations for people, with no method in the Rust face.
const PAGES: [&str; 2] = ["checkout_topup", "get_ui"];

/// Operations with no input to get wrong: their invalid case is the HTTP
/// face's alone (a body where none is taken changes nothing; the guard of the
/// admin token is the transport's, checked in `control.rs`).
const WITHOUT_INPUT: [&str; 13] = [
    "get_clock",
    "reset_verdict",
    "get_settings",
    "list_requests",
    "list_deliveries",
    "list_outbox",
    "reset",
    "list_faults",
    "clear_faults",
    "get_snapshot",
    "list_worlds",
    "stream_events",
    "get_ui",
];

#[tokio::test]
async fn every_control_operation_answers_and_refuses_alike_through_both_faces() {
    let mut faces = Faces::start().await;
    let document = mediagen_openapi::mock_control_document().expect("the control contract");
    let mut operations = BTreeSet::new();
    for item in document["paths"].as_object().expect("paths").values() {
        for operation in item.as_object().expect("a path item").values() {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                operations.insert(id.to_owned());
                faces.answers.insert(id.to_owned(), success(operation));
            }
        }
    }
    assert!(operations.len() >= 31, "{operations:?}");
    for operation in &operations {
        let refused = faces.drive(operation).await;
        assert!(
            refused || WITHOUT_INPUT.contains(&operation.as_str()),
            "{operation}: no invalid input was tried through both faces"
        );
    }
}

impl Faces {
    async fn start() -> Self {
        let mock = MockServer::builder()
            .config(|c| c.max_worlds = 8)
            .start()
            .await;
        let http = reqwest::Client::new();
        let base = mock.world().await;
        let user = base.create_user(CreateUser::new(500.0).email("parity@example.com"));
        let user = user.expect("a user");
        let public_part = base
            .create_key(user.user_id, Scope::ReadOnly)
            .expect("a key")
            .public_part;
        let fault = base
            .inject_fault(Fault::error(503, "SERVICE_UNAVAILABLE").on("GET", "/v1/files"))
            .expect("a fault")
            .id()
            .to_owned();
        let service = |method: Method, path: &str, body: Value| {
            http.request(method, format!("{}{path}", base.uri()))
                .bearer_auth(&user.api_key)
                .json(&body)
                .send()
        };
        let created = service(Method::POST, "/v1/generations", image_request("parity"));
        assert_eq!(created.await.expect("the mock").status(), 202);
        base.advance_clock(60.0).expect("a manual clock");
        let requisites = service(Method::PUT, "/v1/billing/requisites", requisites());
        assert!(requisites.await.expect("the mock").status().is_success());
        let invoice: Value = service(
            Method::POST,
            "/v1/billing/invoices",
            json!({"amountRub": 12000}),
        )
        .await
        .expect("the mock")
        .json()
        .await
        .expect("an invoice");
        let topup: Value = service(Method::POST, "/v1/billing/topup", json!({"amountRub": 500}))
            .await
            .expect("the mock")
            .json()
            .await
            .expect("a top-up");
        let mail = service(
            Method::POST,
            "/v1/auth/magic-link/request",
            json!({"email": "parity@example.com"}),
        );
        assert!(mail.await.expect("the mock").status().is_success());
        let fixture = Fixture {
            snapshot: base.get_snapshot(),
            user: user.user_id,
            key: user.api_key,
            public_part,
            fault,
            invoice: id_of(&invoice),
            topup: id_of(&topup),
        };
        mock.delete_world(base.id().expect("a world"))
            .expect("the world exists");
        Self {
            mock,
            http,
            fixture,
            answers: HashMap::new(),
        }
    }

    /// A world restored from the fixture, with one service request in its log.
    async fn world(&self) -> World {
        let world = self.mock.world().await;
        world
            .put_snapshot(self.fixture.snapshot.clone())
            .expect("the fixture");
        let logged = self
            .http
            .get(format!("{}/v1/account", world.uri()))
            .bearer_auth(&self.fixture.key)
            .send()
            .await
            .expect("the mock");
        assert_eq!(logged.status(), 200);
        world
    }

    fn done(&self, worlds: &[&World]) {
        for world in worlds {
            self.mock
                .delete_world(world.id().expect("a world"))
                .expect("the world exists");
        }
    }

    async fn send(&self, base: &str, (method, path, body): Call<'_>) -> Answer {
        let mut request = self.http.request(method, format!("{base}{path}"));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("the mock answers");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("a body");
        Answer {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// The valid input: the Rust face's answer is what the HTTP face
    /// serializes, with the status and in the schema the contract gives.
    async fn check(
        &self,
        operation: &str,
        rust: impl FnOnce(&World) -> Result<Value, ControlError>,
        call: Call<'_>,
    ) {
        let (r, h) = (self.world().await, self.world().await);
        let answer = rust(&r).unwrap_or_else(|e| panic!("{operation} through Rust: {e:?}"));
        let reply = self.send(&h.uri(), call).await;
        let (status, schema) = &self.answers[operation];
        assert_eq!(
            reply.status, *status,
            "{operation} over HTTP: {}",
            reply.body
        );
        if let Some(schema) = schema {
            let control = mediagen_mock_server::contract::ContractSchemas::control();
            if let Err(fields) = control.validate(schema, &reply.body) {
                panic!("{operation}: {} is not a {schema}: {fields:#?}", reply.body);
            }
        }
        assert_eq!(
            masked(answer),
            masked(reply.body),
            "{operation}: the faces answer alike"
        );
        self.done(&[&r, &h]);
    }

    /// The invalid input: the same refusal, typed in Rust, in the envelope over HTTP.
    async fn refuse(
        &self,
        operation: &str,
        rust: impl FnOnce(&World) -> Result<Value, ControlError>,
        call: Call<'_>,
    ) -> bool {
        let (r, h) = (self.world().await, self.world().await);
        let refusal = rust(&r).expect_err(operation);
        let reply = self.send(&h.uri(), call).await;
        same_refusal(operation, &refusal, &reply);
        self.done(&[&r, &h]);
        true
    }

    /// Drives `operation` through both faces; whether an invalid input was tried.
    async fn drive(&self, operation: &str) -> bool {
        let f = &self.fixture;
        let (user, invoice, topup) = (f.user, f.invoice, f.topup);
        let nobody = Uuid::new_v4();
        match operation {
            "get_clock" => {
                self.check(operation, |w| ok(w.get_clock()), get("/_mock/clock"))
                    .await;
                false
            }
            "advance_clock" => {
                let path = "/_mock/clock/advance";
                self.check(
                    operation,
                    |w| ok(w.advance_clock(5.0)?),
                    post(path, json!({"seconds": 5})),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.advance_clock(-1.0)?),
                    post(path, json!({"seconds": -1})),
                )
                .await
            }
            "set_model_state" => {
                let body = json!({"state": "disabled"});
                self.check(
                    operation,
                    |w| ok(w.set_model_state("flux-schnell", ModelState::Disabled)?),
                    post("/_mock/models/flux-schnell/state", body.clone()),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.set_model_state("no-such-model", ModelState::Disabled)?),
                    post("/_mock/models/no-such-model/state", body),
                )
                .await
            }
            "force_outcome" => {
                let rule = |slug: &str| ForcedOutcome {
                    user_id: Some(user),
                    model_slug: Some(slug.to_owned()),
                    outcome: OutcomeKind::Succeed,
                    error_code: None,
                    count: 2,
                };
                let body = |slug: &str| json!({"userId": user, "modelSlug": slug, "outcome": "succeed", "count": 2});
                self.check(
                    operation,
                    |w| ok(w.force_outcome(rule("flux-schnell"))?),
                    post("/_mock/outcomes", body("flux-schnell")),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.force_outcome(rule("no-such-model"))?),
                    post("/_mock/outcomes", body("no-such-model")),
                )
                .await
            }
            "get_settings" => {
                self.check(operation, |w| ok(w.get_settings()), get("/_mock/settings"))
                    .await;
                false
            }
            "update_settings" => {
                let update = |seconds: f64| {
                    let mut update = SettingsUpdate::default();
                    update.create_latency_seconds = Some(seconds);
                    update.auto_pay_seconds = Some(None);
                    update
                };
                let body =
                    |seconds: f64| json!({"createLatencySeconds": seconds, "autoPaySeconds": null});
                self.check(
                    operation,
                    |w| ok(w.update_settings(update(2.5))?),
                    put("/_mock/settings", body(2.5)),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.update_settings(update(7200.0))?),
                    put("/_mock/settings", body(7200.0)),
                )
                .await
            }
            "list_requests" => {
                let call = get("/_mock/requests");
                self.check(operation, |w| data(w.list_requests()), call)
                    .await;
                false
            }
            "list_deliveries" => {
                let call = get("/_mock/deliveries");
                self.check(operation, |w| data(w.list_deliveries()), call)
                    .await;
                false
            }
            "create_delivery" => {
                // An endpoint the world does not have, and an event type the
                // contract lacks: both faces refuse alike. A delivery that
                // reaches a receiver is the CLI's `trigger` tests'.
                let (r, h) = (self.world().await, self.world().await);
                for payload in [
                    json!({"type": "generation.completed", "id": "evt_1"}),
                    json!({"type": "generation.nope"}),
                ] {
                    let refusal = r
                        .create_delivery("ep_nope", payload.clone())
                        .expect_err(operation);
                    let call = post(
                        "/_mock/deliveries",
                        json!({"endpointId": "ep_nope", "payload": payload}),
                    );
                    let reply = self.send(&h.uri(), call).await;
                    same_refusal(operation, &refusal, &reply);
                }
                self.done(&[&r, &h]);
                true
            }
            "list_outbox" => {
                let call = get("/_mock/outbox");
                self.check(operation, |w| data(w.list_outbox()), call).await;
                false
            }
            "set_dns" => {
                let pin = |host: &str| (host.to_owned(), vec!["93.184.216.34".parse().unwrap()]);
                let body = |host: &str| json!({"host": host, "addresses": ["93.184.216.34"]});
                self.check(
                    operation,
                    |w| {
                        let (host, addresses) = pin("hooks.example.com");
                        ok(w.set_dns(&host, addresses)?)
                    },
                    put("/_mock/dns", body("hooks.example.com")),
                )
                .await;
                self.refuse(
                    operation,
                    |w| {
                        let (host, addresses) = pin("");
                        ok(w.set_dns(&host, addresses)?)
                    },
                    put("/_mock/dns", body("")),
                )
                .await
            }
            "get_verdict" => {
                let call = get("/_mock/verdict");
                self.check(operation, |w| ok(w.get_verdict()), call).await;
                let strict = Strict::parse("poll-rate,read-after-final").expect("known rules");
                let call = get("/_mock/verdict?strict=poll-rate,read-after-final");
                self.check(operation, |w| ok(w.get_verdict_strict(&strict)), call)
                    .await;
                self.refuse(
                    operation,
                    |_| {
                        Err(Strict::parse("poll-rate,no-such-rule")
                            .expect_err("unknown")
                            .into())
                    },
                    get("/_mock/verdict?strict=poll-rate,no-such-rule"),
                )
                .await
            }
            "reset_verdict" => {
                let call = delete("/_mock/verdict");
                self.check(
                    operation,
                    |w| {
                        w.reset_verdict();
                        ok(())
                    },
                    call,
                )
                .await;
                false
            }
            "probe_webhooks" => {
                // An endpoint the world does not have; probing one needs a
                // receiver, which `tests/it/verdict.rs` brings.
                let (r, h) = (self.world().await, self.world().await);
                let refusal = r.probe_webhooks("ep_nope").await.expect_err(operation);
                let call = post("/_mock/probes/webhooks", json!({"endpointId": "ep_nope"}));
                let reply = self.send(&h.uri(), call).await;
                same_refusal(operation, &refusal, &reply);
                self.done(&[&r, &h]);
                true
            }
            "reset" => {
                let call = post("/_mock/reset", json!({}));
                self.check(
                    operation,
                    |w| {
                        w.reset();
                        ok(())
                    },
                    call,
                )
                .await;
                false
            }
            "create_user" => {
                let body = |rub: f64| json!({"balanceRub": rub, "email": "new@example.com"});
                self.check(
                    operation,
                    |w| ok(w.create_user(CreateUser::new(12.5).email("new@example.com"))?),
                    post("/_mock/users", body(12.5)),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.create_user(CreateUser::new(-1.0).email("new@example.com"))?),
                    post("/_mock/users", body(-1.0)),
                )
                .await
            }
            "get_user" => {
                let (path, missing) = (
                    format!("/_mock/users/{user}"),
                    format!("/_mock/users/{nobody}"),
                );
                self.check(operation, |w| ok(w.get_user(user)?), get(&path))
                    .await;
                let call = get(&missing);
                self.refuse(operation, |w| ok(w.get_user(nobody)?), call)
                    .await
            }
            "create_key" => {
                let (path, missing) = (
                    format!("/_mock/users/{user}/keys"),
                    format!("/_mock/users/{nobody}/keys"),
                );
                let body = json!({"scope": "read_only"});
                self.check(
                    operation,
                    |w| ok(w.create_key(user, Scope::ReadOnly)?),
                    post(&path, body.clone()),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.create_key(nobody, Scope::ReadOnly)?),
                    post(&missing, body),
                )
                .await
            }
            "set_balance" => {
                let path = format!("/_mock/users/{user}/balance");
                self.check(
                    operation,
                    |w| ok(w.set_balance(user, 42.0)?),
                    put(&path, json!({"balanceRub": 42})),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.set_balance(user, -3.0)?),
                    put(&path, json!({"balanceRub": -3})),
                )
                .await
            }
            "revoke_key" => {
                let part = f.public_part.clone();
                let path = format!("/_mock/keys/{part}");
                self.check(operation, |w| ok(w.revoke_key(&part)?), delete(&path))
                    .await;
                let call = delete("/_mock/keys/mg_live_nosuchkey");
                self.refuse(operation, |w| ok(w.revoke_key("mg_live_nosuchkey")?), call)
                    .await
            }
            "inject_fault" => {
                let body = |status: u16| {
                    json!({"method": "GET", "path": "/v1/account", "effect": "error",
                           "status": status, "code": "SERVICE_UNAVAILABLE", "count": 2})
                };
                let fault = |status: u16| {
                    Fault::error(status, "SERVICE_UNAVAILABLE")
                        .on("GET", "/v1/account")
                        .times(2)
                };
                self.check(
                    operation,
                    |w| ok(w.inject_fault(fault(503))?),
                    post("/_mock/faults", body(503)),
                )
                .await;
                self.refuse(
                    operation,
                    |w| ok(w.inject_fault(fault(200))?),
                    post("/_mock/faults", body(200)),
                )
                .await
            }
            "list_faults" => {
                let call = get("/_mock/faults");
                self.check(operation, |w| data(w.list_faults()), call).await;
                false
            }
            "clear_faults" => {
                let call = delete("/_mock/faults");
                self.check(
                    operation,
                    |w| {
                        w.clear_faults();
                        ok(())
                    },
                    call,
                )
                .await;
                false
            }
            "remove_fault" => {
                let id = f.fault.clone();
                let path = format!("/_mock/faults/{id}");
                self.check(operation, |w| ok(w.remove_fault(&id)?), delete(&path))
                    .await;
                let call = delete("/_mock/faults/flt_0000000000000000");
                self.refuse(
                    operation,
                    |w| ok(w.remove_fault("flt_0000000000000000")?),
                    call,
                )
                .await
            }
            "pay_invoice" => {
                let (path, missing) = (
                    format!("/_mock/invoices/{invoice}/pay"),
                    format!("/_mock/invoices/{nobody}/pay"),
                );
                let call = post(&path, json!({}));
                self.check(operation, |w| ok(w.pay_invoice(invoice)?), call)
                    .await;
                let call = post(&missing, json!({}));
                self.refuse(operation, |w| ok(w.pay_invoice(nobody)?), call)
                    .await
            }
            "pay_topup" | "fail_topup" => {
                let verb = operation.trim_end_matches("_topup");
                let settle = |w: &World, id| match verb {
                    "pay" => w.pay_topup(id),
                    _ => w.fail_topup(id),
                };
                let (path, missing) = (
                    format!("/_mock/topups/{topup}/{verb}"),
                    format!("/_mock/topups/{nobody}/{verb}"),
                );
                let call = post(&path, json!({}));
                self.check(operation, |w| ok(settle(w, topup)?), call).await;
                let call = post(&missing, json!({}));
                self.refuse(operation, |w| ok(settle(w, nobody)?), call)
                    .await
            }
            "get_snapshot" => {
                let call = get("/_mock/snapshot");
                self.check(operation, |w| ok(w.get_snapshot()), call).await;
                false
            }
            "put_snapshot" => {
                let snapshot = f.snapshot.clone();
                let call = put("/_mock/snapshot", snapshot.clone());
                self.check(operation, |w| ok(w.put_snapshot(snapshot)?), call)
                    .await;
                let broken = json!({"format": "something else"});
                let call = put("/_mock/snapshot", broken.clone());
                self.refuse(operation, |w| ok(w.put_snapshot(broken)?), call)
                    .await
            }
            "create_world" | "list_worlds" | "delete_world" => self.drive_worlds(operation).await,
            "stream_events" => {
                self.stream_events().await;
                false
            }
            page if PAGES.contains(&page) => self.page(page).await,
            other => panic!(
                "{other} is in the control contract but not driven through both faces: \
                 give it its method in the Rust face and its case here"
            ),
        }
    }

    /// The worlds' operations, on the server's root.
    async fn drive_worlds(&self, operation: &str) -> bool {
        let root = self.mock.uri();
        match operation {
            "create_world" => {
                let made = self
                    .mock
                    .create_world(WorldSettings::default())
                    .expect("a world");
                let made_json = json!({
                    "id": made.id(), "baseUrl": made.uri(), "demoApiKey": made.demo_api_key()
                });
                let call = (Method::POST, "/_mock/worlds", Some(json!({})));
                let reply = self.send(&root, call).await;
                assert_eq!(reply.status, 201, "{}", reply.body);
                assert_eq!(masked(made_json), masked(reply.body.clone()));
                for id in [
                    made.id().expect("an id"),
                    reply.body["id"].as_str().unwrap(),
                ] {
                    self.mock.delete_world(id).expect("the world exists");
                }
                let bad = WorldSettings {
                    time_scale: Some(0.0),
                    ..WorldSettings::default()
                };
                let refusal = self.mock.create_world(bad).expect_err(operation);
                let call = (Method::POST, "/_mock/worlds", Some(json!({"timeScale": 0})));
                same_refusal(operation, &refusal, &self.send(&root, call).await);
            }
            "list_worlds" => {
                let world = self.mock.world().await;
                let listed = data(self.mock.list_worlds()).expect("a list");
                let reply = self.send(&root, (Method::GET, "/_mock/worlds", None)).await;
                assert_eq!(reply.status, 200);
                assert_eq!(listed, reply.body);
                self.done(&[&world]);
                return false;
            }
            _ => {
                let (r, h) = (self.mock.world().await, self.mock.world().await);
                self.mock
                    .delete_world(r.id().expect("an id"))
                    .expect("the world exists");
                let path = format!("/_mock/worlds/{}", h.id().expect("an id"));
                let reply = self.send(&root, (Method::DELETE, &path, None)).await;
                assert_eq!(reply.status, 204, "{}", reply.body);
                let refusal = self
                    .mock
                    .delete_world("w_nosuchworld")
                    .expect_err(operation);
                let call = (Method::DELETE, "/_mock/worlds/w_nosuchworld", None);
                same_refusal(operation, &refusal, &self.send(&root, call).await);
            }
        }
        true
    }

    /// The live journal: the first event after a clock move, typed in Rust and
    /// as the `data` of a Server-Sent Event.
    async fn stream_events(&self) {
        let (r, h) = (self.world().await, self.world().await);
        let mut events = r.stream_events();
        let mut stream = self
            .http
            .get(format!("{}/_mock/events", h.uri()))
            .send()
            .await
            .expect("the stream");
        assert_eq!(stream.status(), 200);
        r.advance_clock(5.0).expect("a manual clock");
        let typed = events.recv().await.expect("nothing missed");
        h.advance_clock(5.0).expect("a manual clock");
        let mut text = String::new();
        let data = loop {
            let chunk = stream.chunk().await.expect("the stream").expect("an event");
            text.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(line) = text.lines().find(|l| l.starts_with("data:"))
                && text.contains("\n\n")
            {
                break line["data:".len()..].trim().to_owned();
            }
        };
        let sent: Value = serde_json::from_str(&data).expect("an event in JSON");
        assert_eq!(serde_json::to_value(typed).expect("JSON"), sent);
        drop(stream);
        self.done(&[&r, &h]);
    }

    /// A page for people: HTML, and the envelope's 404 for what is not there.
    async fn page(&self, operation: &str) -> bool {
        let world = self.world().await;
        let (found, missing) = match operation {
            "checkout_topup" => (
                format!("/_mock/topups/{}/checkout", self.fixture.topup),
                Some(format!("/_mock/topups/{}/checkout", Uuid::new_v4())),
            ),
            _ => ("/_mock/ui".to_owned(), None),
        };
        let page = self
            .http
            .get(format!("{}{found}", world.uri()))
            .send()
            .await
            .expect("the page");
        assert_eq!(page.status(), 200, "{operation}");
        let html = page.text().await.expect("a page");
        assert!(
            html.to_ascii_lowercase().contains("<!doctype html"),
            "{operation}"
        );
        let refused = match missing {
            Some(path) => {
                let reply = self.send(&world.uri(), (Method::GET, &path, None)).await;
                assert_eq!(
                    (reply.status, reply.body["error"]["code"].as_str()),
                    (404, Some("NOT_FOUND"))
                );
                true
            }
            None => false,
        };
        self.done(&[&world]);
        refused
    }
}

/// The one 2xx status of an operation of the contract, and the name of its
/// JSON schema (none for an empty answer or a page).
fn success(operation: &Value) -> (u16, Option<String>) {
    let responses = operation["responses"].as_object().expect("responses");
    let (status, response) = responses
        .iter()
        .find(|(status, _)| status.starts_with('2'))
        .expect("a success answer");
    let schema = response["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .map(str::to_owned);
    (status.parse().expect("a status"), schema)
}

fn post(path: &str, body: Value) -> Call<'_> {
    (Method::POST, path, Some(body))
}

fn put(path: &str, body: Value) -> Call<'_> {
    (Method::PUT, path, Some(body))
}

fn get(path: &str) -> Call<'_> {
    (Method::GET, path, None)
}

fn delete(path: &str) -> Call<'_> {
    (Method::DELETE, path, None)
}

/// The Rust face's answer as JSON; `()` is `null`, as a 204's empty body reads.
fn ok<T: Serialize>(value: T) -> Result<Value, ControlError> {
    Ok(serde_json::to_value(value).expect("JSON"))
}

fn data<T: Serialize>(items: Vec<T>) -> Result<Value, ControlError> {
    Ok(json!({ "data": items }))
}

fn id_of(record: &Value) -> Uuid {
    record["id"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("an id in {record}"))
}

/// The same status and code, and the same members named; for a refusal
/// that names no member, the same message.
#[track_caller]
fn same_refusal(operation: &str, refusal: &ControlError, reply: &Answer) {
    let error = &reply.body["error"];
    assert_eq!(
        (reply.status, error["code"].as_str()),
        (refusal.status(), Some(refusal.code())),
        "{operation}: {refusal:?} through Rust, {} over HTTP",
        reply.body
    );
    match refusal {
        ControlError::Invalid { fields, .. } => {
            let sent: BTreeSet<&str> = error["details"]["fields"]
                .as_array()
                .expect("details.fields of a VALIDATION_ERROR")
                .iter()
                .filter_map(|f| f["path"].as_str())
                .collect();
            let refused: BTreeSet<&str> = fields.iter().map(|f| f.path.as_str()).collect();
            assert_eq!(refused, sent, "{operation}: the same members refused");
        }
        other => assert_eq!(
            error["message"].as_str(),
            Some(other.to_string().as_str()),
            "{operation}"
        ),
    }
}

/// `value` with what each world makes anew (ids, keys, request ids, a world's
/// address) replaced by its kind.
fn masked(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(mask(&text)),
        Value::Array(items) => Value::Array(items.into_iter().map(masked).collect()),
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(name, value)| match name.as_str() {
                    // A key's public part is random, as its secret is.
                    "publicPart" => (name, Value::String("<public part>".into())),
                    _ => (name, masked(value)),
                })
                .collect(),
        ),
        other => other,
    }
}

fn mask(text: &str) -> String {
    if Uuid::parse_str(text).is_ok() {
        return "<uuid>".into();
    }
    for (prefix, kind) in [
        ("mg_live_", "<key>"),
        ("flt_", "<fault>"),
        ("req_", "<request>"),
        ("w_", "<world>"),
    ] {
        if text.starts_with(prefix) {
            return kind.into();
        }
    }
    match text.find("/worlds/w_") {
        Some(at) => {
            let end = text[at + "/worlds/".len()..]
                .find('/')
                .map_or(text.len(), |n| at + "/worlds/".len() + n);
            format!("{}/worlds/<world>{}", &text[..at], &text[end..])
        }
        None => text.to_owned(),
    }
}
