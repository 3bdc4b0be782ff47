//! The live journal (`GET /_mock/events`, `World::stream_events`) and the
//! dashboard's page: an event for each thing that happened, tied by its ids,
//! numbered without gaps, per world, behind the admin token when one is set.

use futures::StreamExt;
use mediagen_mock_server::{
    Event, EventKind, FailureCode, ForcedOutcome, Missed, MockServer, OutcomeKind,
};
use reqwest::Method;
use serde_json::{Value, json};

use crate::delivery::{advance, app as delivery_app, register};
use crate::receiver::{Answer, Receiver};
use crate::{App, image_request};

fn assert_numbered_without_gaps(events: &[Event]) {
    for pair in events.windows(2) {
        assert_eq!(pair[1].seq, pair[0].seq + 1, "{events:#?}");
    }
}

/// The `data:` of the first `count` SSE messages read from `response`,
/// each checked against the control contract's `Event` (or `Lagged`) and read
/// back as the Rust face's `Event`.
async fn sse_messages(response: reqwest::Response, count: usize) -> Vec<(Option<u64>, Value)> {
    let mut body = response.bytes_stream();
    let mut text = String::new();
    let mut messages = Vec::new();
    let control = mediagen_mock_server::contract::ContractSchemas::control();
    while messages.len() < count {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
            .await
            .expect("the stream sends within 10 s")
            .expect("the stream stays open")
            .expect("a chunk");
        text.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let mut id = None;
            let mut data: Option<Value> = None;
            for line in block.lines() {
                if let Some(rest) = line.strip_prefix("id:") {
                    id = rest.trim().parse().ok();
                } else if let Some(rest) = line.strip_prefix("data:") {
                    data = Some(serde_json::from_str(rest.trim()).expect("JSON data"));
                }
            }
            if let Some(data) = data {
                let schema = if data["type"] == "lagged" {
                    "Lagged"
                } else {
                    "Event"
                };
                if let Err(fields) = control.validate(schema, &data) {
                    panic!("{data} is not an {schema} of the control contract: {fields:#?}");
                }
                if schema == "Event" {
                    let typed: Event = serde_json::from_value(data.clone())
                        .unwrap_or_else(|e| panic!("{data} reads as an Event: {e}"));
                    assert_eq!(serde_json::to_value(&typed).ok(), Some(data.clone()));
                }
                messages.push((id, data));
            }
        }
    }
    // A frame may carry more than was asked for.
    messages.truncate(count);
    messages
}

#[tokio::test]
async fn a_request_is_told_with_its_id_status_error_code_and_user() {
    let app = App::start().await;
    let mut events = app.mock.stream_events();

    // With its key: a create without one would add the verdict's advice.
    let reply = app
        .create_with_key(&app.key, "key-1", json!({"modelSlug": "flux-schnell"}))
        .await;

    reply.assert_error(400, "VALIDATION_ERROR");
    let told = events.drain().expect("nothing missed");
    let [event] = told.as_slice() else {
        panic!("one event for one refused request: {told:#?}");
    };
    let EventKind::Request {
        request_id,
        method,
        path,
        status,
        error_code,
        user_id,
        ..
    } = &event.kind
    else {
        panic!("a request event: {event:#?}");
    };
    assert_eq!(Some(request_id.as_str()), reply.header("x-request-id"));
    assert_eq!(
        (method.as_str(), path.as_str()),
        ("POST", "/v1/generations")
    );
    assert_eq!(*status, Some(400));
    assert_eq!(error_code.as_deref(), Some("VALIDATION_ERROR"));
    assert_eq!(*user_id, Some(app.user_id));
    assert_eq!(event.at, app.mock.now());
}

#[tokio::test]
async fn a_generations_life_is_told_from_creation_to_its_refund_with_its_ledger_rows() {
    let app = App::start().await;
    app.mock
        .force_outcome(ForcedOutcome {
            user_id: Some(app.user_id),
            model_slug: None,
            outcome: OutcomeKind::Fail,
            error_code: Some(FailureCode::Timeout),
            count: 1,
        })
        .unwrap();
    let mut events = app.mock.stream_events();

    let id = app.create(image_request("a lighthouse")).await.body["id"]
        .as_str()
        .and_then(|id| id.parse::<uuid::Uuid>().ok())
        .expect("an id");
    app.mock.advance_clock(120.0).unwrap();

    let told = events.drain().expect("nothing missed");
    assert_numbered_without_gaps(&told);
    let life: Vec<(String, String, u8)> = told
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Generation {
                generation_id,
                change,
                status,
                attempts,
                ..
            } if *generation_id == id => Some((change.clone(), status.clone(), *attempts)),
            _ => None,
        })
        .collect();
    let expected = [
        ("created", "PENDING", 0),
        ("started", "PROCESSING", 1),
        ("attempt_failed", "PROCESSING", 2),
        ("attempt_failed", "PROCESSING", 3),
        ("ended", "FAILED", 3),
    ];
    assert_eq!(
        life,
        expected.map(|(c, s, a)| (c.to_owned(), s.to_owned(), a)),
        "{told:#?}"
    );
    let Some(EventKind::Generation {
        cost_rub,
        refund_rub,
        error_code,
        prompt,
        user_id,
        ..
    }) =
        told.iter().rev().map(|e| &e.kind).find(
            |k| matches!(k, EventKind::Generation { generation_id, .. } if *generation_id == id),
        )
    else {
        unreachable!("the life above has an end");
    };
    assert_eq!(*refund_rub, Some(*cost_rub));
    assert_eq!(error_code.as_deref(), Some("timeout"));
    assert_eq!(prompt, "a lighthouse");
    assert_eq!(*user_id, app.user_id);

    let rows: Vec<(String, f64, f64)> = told
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Ledger {
                kind,
                amount_rub,
                generation_id: Some(g),
                balance_rub,
                ..
            } if *g == id => Some((kind.clone(), *amount_rub, *balance_rub)),
            _ => None,
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("GENERATION_CHARGE".to_owned(), -cost_rub, 1000.0 - cost_rub),
            ("GENERATION_REFUND".to_owned(), *cost_rub, 1000.0),
        ]
    );
    let position = |wanted: &dyn Fn(&EventKind) -> bool| told.iter().position(|e| wanted(&e.kind));
    assert!(
        position(&|k| matches!(k, EventKind::Ledger { kind, .. } if kind == "GENERATION_REFUND"))
            < position(&|k| matches!(k, EventKind::Generation { change, .. } if change == "ended")),
        "the refund is on the balance before the end is told"
    );
}

#[tokio::test]
async fn each_delivery_attempt_is_told_with_the_answer_and_the_next_retry() {
    let app = delivery_app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Status(500), Answer::Status(200)]);
    let endpoint = register(&app, &receiver, json!([])).await;
    let id = app.create(image_request("a lighthouse")).await.body["id"]
        .as_str()
        .and_then(|id| id.parse::<uuid::Uuid>().ok())
        .expect("an id");
    let mut events = app.mock.stream_events();

    advance(&app, 60.0).await;
    advance(&app, 10.0).await;

    let told = events.drain().expect("nothing missed");
    let message = told
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Message {
                message_id,
                generation_id,
                endpoint_id,
                state,
                ..
            } => {
                assert_eq!(*generation_id, Some(id));
                assert_eq!(endpoint_id, &endpoint);
                assert_eq!(state, "pending");
                Some(*message_id)
            }
            _ => None,
        })
        .expect("the message is told when queued");
    let attempts: Vec<(u32, Option<u16>, bool, String)> = told
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Attempt {
                message_id,
                attempt,
                response_status,
                next_attempt_at,
                state,
                ..
            } if *message_id == message => Some((
                *attempt,
                *response_status,
                next_attempt_at.is_some(),
                state.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(attempts.len(), 2, "{told:#?}");
    assert_eq!(attempts[0].0..=attempts[1].0, 1..=2);
    assert_eq!(
        (attempts[0].1, attempts[0].2, attempts[0].3.as_str()),
        (Some(500), true, "pending"),
        "a failure names its retry"
    );
    assert_eq!(
        (attempts[1].1, attempts[1].2, attempts[1].3.as_str()),
        (Some(200), false, "delivered")
    );
}

#[tokio::test]
async fn a_410_is_told_as_the_endpoint_disabled() {
    let app = delivery_app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Status(410)]);
    register(&app, &receiver, json!([])).await;
    app.create(image_request("a lighthouse")).await;
    let mut events = app.mock.stream_events();

    advance(&app, 60.0).await;

    let disabled = events
        .drain()
        .expect("nothing missed")
        .into_iter()
        .find_map(|e| match e.kind {
            EventKind::Attempt {
                response_status: Some(410),
                endpoint_disabled,
                state,
                ..
            } => Some((endpoint_disabled, state)),
            _ => None,
        });
    assert_eq!(
        disabled,
        Some((Some("gone_410".to_owned()), "dropped".to_owned()))
    );
}

#[tokio::test]
async fn a_clock_move_is_told_before_what_it_made_due() {
    let app = App::start().await;
    app.create(image_request("a lighthouse")).await;
    let before = app.mock.now();
    let mut events = app.mock.stream_events();

    app.mock.advance_clock(2.0).unwrap();

    let told = events.drain().expect("nothing missed");
    match told.first().map(|e| (&e.kind, e.at)) {
        Some((EventKind::Clock { from }, at)) => {
            assert_eq!((*from, at), (before, app.mock.now()));
        }
        other => panic!("the clock's move first: {other:?}"),
    }
    assert!(
        matches!(&told[1].kind, EventKind::Generation { change, .. } if change == "started"),
        "{told:#?}"
    );
}

#[tokio::test]
async fn a_fault_applied_is_told_with_the_request_it_applied_to() {
    let app = App::start().await;
    let fault = app
        .mock
        .inject_fault(
            mediagen_mock_server::Fault::error(503, "SERVICE_UNAVAILABLE")
                .on("GET", "/v1/generations"),
        )
        .unwrap();
    let mut events = app.mock.stream_events();

    let reply = app.get("/v1/generations").await;

    let told = events.drain().expect("nothing missed");
    let kinds: Vec<&EventKind> = told.iter().map(|e| &e.kind).collect();
    match kinds.as_slice() {
        [
            EventKind::Fault {
                fault_id,
                request_id,
                ..
            },
            EventKind::Request {
                request_id: logged,
                fault: Some(applied),
                error_code,
                ..
            },
        ] => {
            assert_eq!(fault_id, fault.id());
            assert_eq!(applied, fault.id());
            assert_eq!(request_id, logged);
            assert_eq!(Some(logged.as_str()), reply.header("x-request-id"));
            assert_eq!(error_code.as_deref(), Some("SERVICE_UNAVAILABLE"));
        }
        other => panic!("the fault, then its request: {other:#?}"),
    }
}

#[tokio::test]
async fn a_reader_that_falls_behind_is_told_how_many_events_it_missed() {
    let mock = MockServer::start().await;
    let mut events = mock.stream_events();

    for _ in 0..10_000 {
        mock.advance_clock(0.0).unwrap();
    }

    let missed = match events.drain() {
        Err(Missed(n)) => n,
        Ok(told) => panic!("10,000 events fit no reader's window: {}", told.len()),
    };
    let kept = events.drain().expect("read on after the loss");
    assert_eq!(missed + kept.len() as u64, 10_000);
    assert_eq!(
        kept.first().map(|e| e.seq),
        Some(missed + 1),
        "numbers tell the loss"
    );
    assert_numbered_without_gaps(&kept);
    mock.advance_clock(1.0).unwrap();
    let after = events.drain().expect("nothing missed since");
    assert_eq!(after.len(), 1);
}

/// `GET` of an event stream, answered with its headers (it is open from then on).
async fn open_stream(http: &reqwest::Client, url: &str) -> reqwest::Response {
    http.get(url).send().await.expect("the stream opens")
}

#[tokio::test]
async fn the_stream_serves_each_event_as_json_with_its_seq_as_the_sse_id() {
    let app = App::start().await;
    let response = open_stream(&app.http, &app.url("/_mock/events")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );

    let reply = app
        .create_with_key(&app.key, "key-1", image_request("a lighthouse"))
        .await;
    app.mock.advance_clock(1.0).unwrap();

    let messages = sse_messages(response, 4).await;
    let types: Vec<&str> = messages
        .iter()
        .map(|(_, data)| data["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(types, ["ledger", "generation", "request", "clock"]);
    for (id, data) in &messages {
        assert_eq!(*id, data["seq"].as_u64(), "{data}");
    }
    assert_eq!(messages[1].1["generationId"], reply.body["id"]);
    assert_eq!(messages[1].1["change"], "created");
    assert_eq!(messages[0].1["generationId"], reply.body["id"]);
    assert_eq!(
        messages[2].1["requestId"],
        json!(reply.header("x-request-id"))
    );
    assert_eq!(messages[2].1["status"], 202);
    // Times to the millisecond, as the contract writes every time.
    for (_, data) in &messages {
        let at = data["at"].as_str().expect("at");
        assert_eq!(at.len(), "2026-11-22T10:15:45.210Z".len(), "{at}");
    }
    assert_eq!(messages[3].1["from"].as_str().map(str::len), Some(24));
}

#[tokio::test]
async fn a_lagging_stream_says_how_many_events_it_missed() {
    let app = App::start().await;
    let response = open_stream(&app.http, &app.url("/_mock/events")).await;

    // The test's runtime has one thread: the stream sends nothing until this
    // loop is over, by which time its window has overflowed.
    for _ in 0..10_000 {
        app.mock.advance_clock(0.0).unwrap();
    }

    let (_, first) = sse_messages(response, 1).await.remove(0);
    assert_eq!(first["type"], "lagged");
    assert!(first["missed"].as_u64() >= Some(10_000 - 8192), "{first}");
}

#[tokio::test]
async fn each_world_streams_only_its_own_events() {
    let mock = MockServer::start().await;
    let (a, b) = (mock.world().await, mock.world().await);
    let mut root_events = mock.stream_events();
    let mut a_events = a.stream_events();
    let http = reqwest::Client::new();
    let b_stream = open_stream(&http, &format!("{}/_mock/events", b.uri())).await;

    b.advance_clock(5.0).unwrap();
    let user = b.create_user(10.0).unwrap();
    let reply = http
        .get(format!("{}/v1/generations", b.uri()))
        .bearer_auth(&user.api_key)
        .send()
        .await
        .expect("a request to world b");

    assert_eq!(reply.status(), 200);
    assert!(root_events.drain().expect("nothing missed").is_empty());
    assert!(a_events.drain().expect("nothing missed").is_empty());
    let told = sse_messages(b_stream, 3).await;
    let types: Vec<&str> = told
        .iter()
        .map(|(_, data)| data["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(types, ["clock", "ledger", "request"]);
    assert_eq!(told[2].1["userId"], json!(user.user_id));
}

#[tokio::test]
async fn the_stream_and_the_page_need_the_admin_token_when_one_is_set() {
    let app = App::with(
        MockServer::builder()
            .config(|c| c.admin_token = Some("s3cret".into()))
            .start()
            .await,
    )
    .await;
    let status = |path: &'static str, bearer: Option<&'static str>| {
        let mut request = app.http.get(app.url(path));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        async move { request.send().await.expect("an answer").status().as_u16() }
    };

    for path in ["/_mock/events", "/_mock/ui"] {
        assert_eq!(status(path, None).await, 401, "{path} without the token");
        assert_eq!(status(path, Some("wrong")).await, 401, "{path}");
        assert_eq!(status(path, Some("s3cret")).await, 200, "{path}");
    }
    assert_eq!(status("/_mock/events?token=wrong", None).await, 401);
    assert_eq!(status("/_mock/events?token=s3cret", None).await, 200);
    assert_eq!(status("/_mock/ui?token=s3cret", None).await, 200);
    // A token in the address opens the page and the stream, never an action.
    let act = app
        .send(
            Method::POST,
            "/_mock/clock/advance?token=s3cret",
            None,
            Some(json!({"seconds": 1})),
        )
        .await;
    act.assert_error(401, "AUTHENTICATION_ERROR");
    // The script and the style sheet hold nothing: a `<script src>` sends no header.
    assert_eq!(status("/_mock/ui/app.js", None).await, 200);
}

#[tokio::test]
async fn the_page_runs_only_its_own_script_under_a_content_security_policy() {
    let app = App::start().await;

    let page = app.send(Method::GET, "/_mock/ui", None, None).await;

    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let policy = page.header("content-security-policy").expect("a policy");
    assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe"));
    assert!(policy.contains("frame-ancestors 'none'"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    let html = String::from_utf8(page.bytes).expect("UTF-8");
    assert_eq!(html.matches("<script").count(), 1, "one script, by its src");
    assert!(html.contains(r#"<script src="ui/app.js" defer></script>"#));
    let script = app.send(Method::GET, "/_mock/ui/app.js", None, None).await;
    assert_eq!(script.header("content-type"), Some("text/javascript"));
    assert!(!String::from_utf8_lossy(&script.bytes).contains("innerHTML"));
}

/// Events of the kinds the history tells (not requests, faults, clock moves or
/// resets), as JSON with `seq` 0, in one order whatever order they came in.
fn as_history(events: impl IntoIterator<Item = Event>) -> Vec<String> {
    let mut told: Vec<String> = events
        .into_iter()
        .filter(|e| {
            !matches!(
                e.kind,
                EventKind::Request { .. }
                    | EventKind::Fault { .. }
                    | EventKind::Clock { .. }
                    | EventKind::Reset { .. }
                    // Findings are the verdict's (`GET /_mock/verdict`), not the records'.
                    | EventKind::VerdictFinding { .. }
                    | EventKind::VerdictReset { .. }
            )
        })
        .map(|mut e| {
            e.seq = 0;
            serde_json::to_string(&e).expect("an event serializes")
        })
        .collect();
    told.sort();
    told
}

#[tokio::test]
async fn the_history_tells_afterwards_what_the_live_journal_told() {
    let app = delivery_app().await;
    let receiver = Receiver::start().await;
    receiver.script([Answer::Status(500)]);
    let (before, mut live) = app.mock.stream_events_with_history();
    assert!(before.iter().all(|e| e.seq == 0));

    register(&app, &receiver, json!([])).await;
    app.mock
        .force_outcome(ForcedOutcome {
            user_id: Some(app.user_id),
            model_slug: None,
            outcome: OutcomeKind::Fail,
            error_code: Some(FailureCode::Timeout),
            count: 1,
        })
        .unwrap();
    for prompt in ["a storm", "a lighthouse", "a harbour"] {
        assert_eq!(app.create(image_request(prompt)).await.status, 202);
    }
    let topup = app
        .post("/v1/billing/topup", json!({"amountRub": 500}))
        .await;
    let topup = topup.body["id"].as_str().expect("a top-up");
    app.control(
        Method::POST,
        &format!("/_mock/topups/{topup}/pay"),
        json!({}),
    )
    .await;
    advance(&app, 120.0).await;
    advance(&app, 10.0).await;
    let told = live.drain().expect("nothing missed");
    let (after, _) = app.mock.stream_events_with_history();

    assert!(
        after.windows(2).all(|pair| pair[0].at <= pair[1].at),
        "oldest first"
    );
    let (now, then) = (
        as_history(after.clone()),
        as_history(before.into_iter().chain(told)),
    );
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|e| !b.contains(e)).cloned().collect()
    };
    assert!(
        now == then,
        "the history now is the history then and what was told since;\n\
         only in the history: {:#?}\nonly told: {:#?}",
        only(&now, &then),
        only(&then, &now)
    );
    let changes: Vec<&str> = after
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Generation { change, .. } => Some(change.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes.iter().filter(|c| **c == "attempt_failed").count(),
        2
    );
    assert_eq!(changes.iter().filter(|c| **c == "ended").count(), 3);
    let attempts = after
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Attempt { .. }))
        .count();
    assert_eq!(
        attempts, 4,
        "three messages, the first tried twice: {after:#?}"
    );
}

#[tokio::test]
async fn a_stream_opened_with_history_starts_with_it_unnumbered_then_goes_on_live() {
    let app = App::start().await;
    let reply = app.create(image_request("a lighthouse")).await;
    app.mock.advance_clock(60.0).unwrap();
    let history = app.mock.stream_events_with_history().0.len();

    let response = open_stream(&app.http, &app.url("/_mock/events?history=true")).await;
    assert_eq!(response.status(), 200);
    app.mock.advance_clock(1.0).unwrap();
    let messages = sse_messages(response, history + 1).await;

    let (told, live) = messages.split_at(history);
    assert!(
        told.iter()
            .all(|(id, data)| id.is_none() && data["seq"] == 0)
    );
    let steps: Vec<&str> = told
        .iter()
        .filter(|(_, data)| {
            data["generationId"] == reply.body["id"] && data["type"] == "generation"
        })
        .filter_map(|(_, data)| data["change"].as_str())
        .collect();
    assert_eq!(steps, ["created", "started", "ended"]);
    assert_eq!(live[0].1["type"], "clock");
    assert_eq!(live[0].0, live[0].1["seq"].as_u64());

    let refused = app
        .http
        .get(app.url("/_mock/events?history=yes"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.expect("the envelope");
    assert_eq!(body["error"]["code"], "VALIDATION_ERROR");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("history"))
    );
}
