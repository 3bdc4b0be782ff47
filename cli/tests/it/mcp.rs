//! `mediagen mcp` over stdio, driven as an MCP client drives it (JSON-RPC lines),
//! against a mock the test owns: the cap under concurrent calls, one charge for a
//! call sent again after a time-out, progress and cancellation, the service's
//! refusals as tool errors; and the mock's verdict on the server's traffic (the
//! [`Setup`] checks it when it drops).

use std::collections::{HashMap, HashSet};
use std::process::Stdio;

use mediagen_mock_server::{FailureCode, ForcedOutcome, MockServer, OutcomeKind};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::Setup;

/// A `mediagen mcp` process and its messages.
struct Session {
    child: Child,
    /// The server's stderr, read as it comes so that the pipe never fills.
    stderr: tokio::task::JoinHandle<String>,
    stdin: ChildStdin,
    messages: mpsc::UnboundedReceiver<Value>,
    /// Every line the server wrote on stdout, to look for the key in.
    seen: Vec<String>,
    /// Answers read while looking for another, by id.
    answers: HashMap<u64, Value>,
    /// Notifications, in the order they came.
    notifications: Vec<Value>,
    next_id: u64,
    /// What each request's `_meta` carries, for a client of the 2026-07-28 revision.
    request_meta: Option<Value>,
}

impl Session {
    /// `mediagen mcp ARGS` against the setup's mock, initialized by a client of the
    /// protocol's 2025-11-25 revision that declares `capabilities`.
    async fn start(setup: &Setup, args: &[&str], capabilities: Value) -> Self {
        let mut session = Self::spawn(setup, args);
        let init = session
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": { "name": "mediagen-tests", "version": "1" }
                }),
            )
            .await;
        let answer = session.answer(init).await;
        assert_eq!(
            answer["result"]["serverInfo"]["name"], "mediagen",
            "{answer}"
        );
        session
            .send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        session
    }

    /// `mediagen mcp ARGS` for a client of the protocol's 2026-07-28 revision, which
    /// has no initialize: each request says the version and the client's
    /// `capabilities`.
    async fn start_2026(setup: &Setup, args: &[&str], capabilities: Value) -> Self {
        let mut session = Self::spawn(setup, args);
        session.request_meta = Some(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "mediagen-tests", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }));
        session
    }

    fn spawn(setup: &Setup, args: &[&str]) -> Self {
        let mut all = vec!["mcp"];
        all.extend_from_slice(args);
        let mut process = setup.process(&all);
        // A pace of its own: the other tests' mocks, whose clocks stand still, would
        // teach a pace shared by the host's processes to wait for their windows.
        process.env("MEDIAGEN_SHARED_PACE", "off");
        let mut cmd = tokio::process::Command::from(process);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn mediagen mcp");
        let stdin = child.stdin.take().expect("piped stdin");
        let mut errors = child.stderr.take().expect("piped stderr");
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut errors, &mut text)
                .await
                .expect("read stderr");
            text
        });
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let (tx, messages) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|err| {
                    panic!("stdout has a line that is not JSON ({err}): {line}")
                });
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stderr,
            stdin,
            messages,
            seen: Vec::new(),
            answers: HashMap::new(),
            notifications: Vec::new(),
            next_id: 0,
            request_meta: None,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to the server");
    }

    /// Sends a request and returns its id.
    async fn request(&mut self, method: &str, mut params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        if let Some(Value::Object(meta)) = &self.request_meta {
            for (key, value) in meta {
                params["_meta"][key] = value.clone();
            }
        }
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// Calls tool `name` and returns the request's id; `token` asks for progress.
    async fn call(&mut self, name: &str, arguments: Value, token: Option<&str>) -> u64 {
        let mut params = json!({ "name": name, "arguments": arguments });
        if let Some(token) = token {
            params["_meta"] = json!({ "progressToken": token });
        }
        self.request("tools/call", params).await
    }

    /// Tells the server the client gave up on request `id`.
    async fn cancel(&mut self, id: u64) {
        self.send(json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": "timed out" }
        }))
        .await;
    }

    async fn next(&mut self) -> Value {
        let message = self
            .messages
            .recv()
            .await
            .expect("the server closed stdout");
        self.seen.push(message.to_string());
        message
    }

    /// The answer to request `id`.
    async fn answer(&mut self, id: u64) -> Value {
        loop {
            if let Some(answer) = self.answers.remove(&id) {
                return answer;
            }
            let message = self.next().await;
            match message.get("id").and_then(Value::as_u64) {
                Some(got) if message.get("method").is_none() => {
                    self.answers.insert(got, message);
                }
                _ => self.notifications.push(message),
            }
        }
    }

    /// The result of tool call `id`: `(isError, structuredContent)`.
    async fn result(&mut self, id: u64) -> (bool, Value) {
        let answer = self.answer(id).await;
        let result = &answer["result"];
        assert!(result.is_object(), "a tool call answered {answer}");
        (
            result["isError"].as_bool().unwrap_or(false),
            result["structuredContent"].clone(),
        )
    }

    /// Asks for task `id` until `done` holds of it, as a client polls a task, and
    /// returns it.
    async fn task_until(&mut self, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..1000 {
            let get = self.request("tasks/get", json!({ "taskId": id })).await;
            let answer = self.answer(get).await;
            let task = answer["result"].clone();
            assert_eq!(task["taskId"], id, "{answer}");
            if done(&task) {
                return task;
            }
            // The client's pace, shorter than the pollIntervalMs the server asks of
            // clients so that the test is quick.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("task {id} never got there");
    }

    /// Cancels task `id` once its generation is `PENDING` (made, and waited for),
    /// and returns the task once it has ended.
    async fn cancel_once_pending(&mut self, id: &str) -> Value {
        self.task_until(id, |task| {
            task["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("PENDING"))
        })
        .await;
        let cancel = self.request("tasks/cancel", json!({ "taskId": id })).await;
        let ack = self.answer(cancel).await;
        assert!(ack["result"].is_object(), "{ack}");
        self.task_until(id, |task| task["status"] != "working")
            .await
    }

    /// The next notification of `method`, read as it comes.
    async fn notification(&mut self, method: &str) -> Value {
        if let Some(at) = self
            .notifications
            .iter()
            .position(|n| n["method"] == method)
        {
            return self.notifications.remove(at);
        }
        loop {
            let message = self.next().await;
            if message["method"] == method {
                return message;
            }
            match message.get("id").and_then(Value::as_u64) {
                Some(got) if message.get("method").is_none() => {
                    self.answers.insert(got, message);
                }
                _ => self.notifications.push(message),
            }
        }
    }

    /// Closes stdin, and returns the server's stderr and stdout once it has exited.
    async fn close(mut self) -> String {
        drop(self.stdin);
        let status = self.child.wait().await.expect("the server exits");
        let mut all = self.stderr.await.expect("stderr's reader");
        assert!(status.success(), "{all}");
        all.push_str(&self.seen.join("\n"));
        all
    }
}

/// A mock whose clock runs a thousand times faster than real time, for runs of
/// thousands of requests: the service's limit of 60 a minute, which the server's
/// pace keeps to, would stretch them to hours.
async fn hurried() -> MockServer {
    MockServer::builder().real_clock(1000.0).start().await
}

fn flux(prompt: &str, request_id: &str) -> Value {
    json!({ "model": "flux-schnell", "prompt": prompt, "requestId": request_id })
}

/// What the mock charged the setup's user, in kopecks.
fn charged_kopecks(setup: &Setup, balance_before: f64) -> i64 {
    let (available, reserved) = setup.mock.balance(setup.user).expect("the user");
    ((balance_before - available - reserved) * 100.0).round() as i64
        + (reserved * 100.0).round() as i64
}

/// How many calls the figure of the double-charge test makes: 100 in the suite, where
/// the service's pace makes each ten take about a second; the figure of record is
/// `MEDIAGEN_MCP_CALLS=1000 cargo test -p mediagen-cli --test it mcp::calls_sent_again
/// -- --nocapture`.
fn calls() -> usize {
    std::env::var("MEDIAGEN_MCP_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
}

#[tokio::test]
async fn calls_sent_again_after_a_time_out_are_charged_once_each() {
    let calls = calls();
    let setup = Setup::with(hurried().await, 3000.0);
    let mut session = Session::start(&setup, &["--wait-limit", "0s"], json!({})).await;

    let mut ids = HashSet::new();
    for n in 0..calls {
        let arguments = flux(&format!("fox number {n}"), &format!("call-{n}"));
        // The client's time-out: it cancels the call and sends it again at once.
        let first = session.call("generate", arguments.clone(), None).await;
        session.cancel(first).await;
        let again = session.call("generate", arguments, None).await;
        let (is_error, result) = session.result(again).await;
        assert!(!is_error, "call {n}: {result}");
        ids.insert(result["id"].as_str().expect("an id").to_owned());
    }
    session.close().await;

    let expected = 250 * i64::try_from(calls).expect("a count");
    let double_charges = charged_kopecks(&setup, 3000.0) - expected;
    println!(
        "figure: {calls} generate calls, each sent again after a time-out: {double_charges} \
         kopecks charged twice, {} generations",
        ids.len()
    );
    assert_eq!(ids.len(), calls);
    assert_eq!(double_charges, 0);
}

#[tokio::test]
async fn a_hundred_concurrent_calls_never_spend_a_kopeck_over_max_spend() {
    const CALLS: usize = 100;
    let setup = Setup::with(hurried().await, 1000.0);
    // Room for four generations of 2.50 RUB and a half, under the limit of five active.
    let mut session = Session::start(
        &setup,
        &["--max-spend", "11.25", "--wait-limit", "0s"],
        json!({}),
    )
    .await;

    let mut calls = Vec::new();
    for n in 0..CALLS {
        let id = session
            .call(
                "generate",
                flux(&format!("fox {n}"), &format!("c-{n}")),
                None,
            )
            .await;
        calls.push(id);
    }
    let (mut made, mut refused) = (0, 0);
    for id in calls {
        let (is_error, result) = session.result(id).await;
        if is_error {
            let error = &result["error"];
            assert_eq!(error["code"], "SPENDING_CAP_REACHED", "{result}");
            assert_eq!(error["details"]["capLeftRub"], 1.25, "{result}");
            refused += 1;
        } else {
            made += 1;
        }
    }
    let balance = session.call("get_balance", json!({}), None).await;
    let (_, balance) = session.result(balance).await;
    let stderr = session.close().await;

    let over = charged_kopecks(&setup, 1000.0) - 1125;
    println!(
        "figure: {CALLS} concurrent generate calls under --max-spend 11.25: {made} made, {refused} refused, {} kopecks over the cap",
        over.max(0)
    );
    assert_eq!((made, refused), (4, 96));
    assert!(over <= 0);
    assert_eq!(balance["cap"]["chargedRub"], 10.0, "{balance}");
    assert_eq!(balance["cap"]["leftRub"], 1.25, "{balance}");
    assert!(!stderr.contains(&setup.key), "the API key was written out");
}

#[tokio::test]
async fn a_waiting_call_tells_its_progress_and_once_cancelled_leaves_the_generation_running() {
    let setup = Setup::new().await;
    // A client of the 2025-11-25 revision that names the tasks extension, as the
    // official inspector does, still gets the call held open: tasks are of 2026-07-28.
    let mut session = Session::start(&setup, &[], polls_tasks()).await;

    let call = session
        .call("generate", flux("a slow fox", "slow-1"), Some("tok"))
        .await;
    let progress = session.notification("notifications/progress").await;
    assert_eq!(progress["params"]["progressToken"], "tok");
    let message = progress["params"]["message"].as_str().expect("a message");
    assert!(message.contains("PENDING"), "{message}");
    session.cancel(call).await;
    let log = session.notification("notifications/message").await;
    let id = log["params"]["data"]["id"]
        .as_str()
        .expect("the generation's id");
    assert!(message.contains(id), "{message} names {id}");

    // The paid task goes on; the look-up tool finds it.
    let generation = setup
        .client()
        .generations()
        .get(id.parse().expect("a UUID"))
        .await
        .expect("the generation");
    assert_eq!(generation.status, mediagen::GenerationStatus::Pending);
    setup.mock.advance_clock(60.0).expect("a manual clock");
    let lookup = session
        .call("get_generation", json!({ "id": id, "wait": true }), None)
        .await;
    let (is_error, result) = session.result(lookup).await;
    assert!(!is_error, "{result}");
    assert_eq!(result["status"], "SUCCEEDED");
    session.close().await;
}

#[tokio::test]
async fn a_failed_generation_is_a_tool_error_that_says_to_change_the_prompt() {
    let setup = Setup::fast().await;
    setup
        .mock
        .force_outcome(ForcedOutcome {
            user_id: Some(setup.user),
            model_slug: None,
            outcome: OutcomeKind::Fail,
            error_code: Some(FailureCode::ContentPolicy),
            count: 1,
        })
        .expect("a forced outcome");
    let mut session = Session::start(&setup, &[], json!({})).await;

    let call = session.call("generate", flux("a fox", "bad-1"), None).await;
    let (is_error, result) = session.result(call).await;
    assert!(is_error, "{result}");
    assert_eq!(result["error"]["details"]["errorCode"], "content_policy");
    assert!(
        result["advice"]
            .as_str()
            .is_some_and(|a| a.starts_with("change the prompt")),
        "{result}"
    );
    // Refunded: the cap counts nothing for it.
    let balance = session.call("get_balance", json!({}), None).await;
    let (_, balance) = session.result(balance).await;
    assert_eq!(balance["cap"]["chargedRub"], 0.0, "{balance}");
    session.close().await;
}

#[tokio::test]
async fn the_services_refusals_are_tool_errors_with_code_and_hint_not_protocol_errors() {
    let setup = Setup::new().await;
    let mut session = Session::start(&setup, &["--max-cost", "2"], json!({})).await;

    let unknown = session
        .call(
            "generate",
            json!({ "model": "no-such-model", "prompt": "a fox" }),
            None,
        )
        .await;
    let (is_error, result) = session.result(unknown).await;
    assert!(is_error, "{result}");
    assert_eq!(result["error"]["code"], "NOT_FOUND", "{result}");
    assert!(result["error"]["hint"].is_string(), "{result}");

    let dear = session
        .call("generate", flux("a fox", "dear-1"), None)
        .await;
    let (is_error, result) = session.result(dear).await;
    assert!(is_error, "{result}");
    assert_eq!(result["error"]["code"], "COST_ABOVE_MAXIMUM", "{result}");

    let bad = session.call("generate", json!({ "model": 7 }), None).await;
    let (is_error, result) = session.result(bad).await;
    assert!(is_error, "{result}");
    assert_eq!(result["error"]["code"], "INVALID_ARGUMENTS", "{result}");
    session.close().await;
}

/// The generation id a task's status message names.
fn generation_named(message: &str) -> uuid::Uuid {
    message
        .split_whitespace()
        .find_map(|word| word.trim_end_matches(',').parse::<uuid::Uuid>().ok())
        .unwrap_or_else(|| panic!("{message} names the generation"))
}

/// What a client that supports the protocol's tasks extension declares.
fn polls_tasks() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

#[tokio::test]
async fn a_client_that_supports_tasks_gets_generate_as_a_task_it_polls_to_the_end() {
    let setup = Setup::new().await;
    let mut session = Session::start_2026(&setup, &[], polls_tasks()).await;

    let call = session
        .call("generate", flux("a fox in a task", "task-1"), None)
        .await;
    let answer = session.answer(call).await;
    let created = &answer["result"];
    assert_eq!(created["resultType"], "task", "{answer}");
    assert_eq!(created["status"], "working", "{answer}");
    // The default --task-wait-limit of an hour, and the ten minutes it is kept after.
    assert_eq!(created["ttlMs"], 4_200_000, "{answer}");
    assert_eq!(created["pollIntervalMs"], 1000, "{answer}");
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();

    // Progress is the task's status message while the generation waits on the clock.
    let working = session
        .task_until(&task_id, |task| {
            task["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("PENDING"))
        })
        .await;
    assert_eq!(working["status"], "working", "{working}");
    setup.mock.advance_clock(60.0).expect("a manual clock");
    let done = session
        .task_until(&task_id, |task| task["status"] != "working")
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["result"]["structuredContent"];
    assert_eq!(result["status"], "SUCCEEDED", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    let id = result["id"].as_str().expect("the generation's id");
    assert_eq!(
        done["statusMessage"],
        format!("generation {id} is SUCCEEDED"),
        "{done}"
    );
    assert_eq!(charged_kopecks(&setup, 1000.0), 250);

    // A call that does not wait is answered at once, task or no task.
    let balance = session.call("get_balance", json!({}), None).await;
    let (is_error, balance) = session.result(balance).await;
    assert!(!is_error, "{balance}");
    assert_eq!(balance["cap"]["chargedRub"], 2.5, "{balance}");
    session.close().await;
}

#[tokio::test]
async fn a_cancelled_task_stops_waiting_and_keeps_the_generation_its_id_and_its_one_charge() {
    let setup = Setup::new().await;
    let mut session = Session::start_2026(&setup, &[], polls_tasks()).await;

    let call = session
        .call("generate", flux("a fox left waiting", "task-2"), None)
        .await;
    let answer = session.answer(call).await;
    let task_id = answer["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let cancelled = session.cancel_once_pending(&task_id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let message = cancelled["statusMessage"].as_str().expect("a message");
    let id = generation_named(message);
    assert!(message.contains("get_generation"), "{message}");

    // Only the wait was cancelled: the paid task goes on, and the same call again
    // (the same requestId) finds it, charged once.
    let generation = setup.mock.generation(id).expect("the generation");
    assert_eq!(generation.status, "PENDING");
    let again = session
        .call("generate", flux("a fox left waiting", "task-2"), None)
        .await;
    let answer = session.answer(again).await;
    let again_id = answer["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    assert_ne!(again_id, task_id, "a new task for the new call");
    setup.mock.advance_clock(60.0).expect("a manual clock");
    let done = session
        .task_until(&again_id, |task| task["status"] != "working")
        .await;
    assert_eq!(
        done["result"]["structuredContent"]["id"],
        id.to_string(),
        "{done}"
    );
    assert_eq!(charged_kopecks(&setup, 1000.0), 250);
    session.close().await;
}

#[tokio::test]
async fn a_create_whose_answer_is_lost_on_the_way_is_sent_again_with_its_key_and_charged_once() {
    let setup = Setup::new().await;
    // The service acts, and the connection drops before its answer comes back.
    setup
        .mock
        .inject_fault(mediagen_mock_server::Fault::drop_after().on("POST", "/v1/generations"))
        .expect("a fault");
    let mut session = Session::start(&setup, &["--wait-limit", "0s"], json!({})).await;

    let call = session
        .call(
            "generate",
            flux("a fox behind a lost answer", "lost-1"),
            None,
        )
        .await;
    let (is_error, result) = session.result(call).await;
    assert!(!is_error, "{result}");
    let creates: Vec<_> = setup
        .mock
        .list_requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path == "/v1/generations")
        .collect();
    assert_eq!(
        creates.len(),
        2,
        "the create is sent again after the lost answer"
    );
    assert_eq!(
        creates[0].idempotency_key, creates[1].idempotency_key,
        "with the same key"
    );
    assert_eq!(
        creates[0].idempotency_key.as_deref(),
        result["idempotencyKey"].as_str()
    );
    let user = setup.mock.get_user(setup.user).expect("the user");
    assert_eq!(user.generations, 1, "one generation");
    assert_eq!(charged_kopecks(&setup, 1000.0), 250);
    session.close().await;
}

#[tokio::test]
async fn a_task_cancelled_with_cancel_if_abandoned_cancels_the_generation_too_and_says_so() {
    let setup = Setup::new().await;
    let mut session = Session::start_2026(&setup, &[], polls_tasks()).await;

    let mut arguments = flux("a fox not wanted after all", "task-3");
    arguments["cancelIfAbandoned"] = json!(true);
    let call = session.call("generate", arguments, None).await;
    let answer = session.answer(call).await;
    let task_id = answer["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let cancelled = session.cancel_once_pending(&task_id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let message = cancelled["statusMessage"].as_str().expect("a message");
    assert!(
        message.contains("asked the service to cancel it"),
        "{message}"
    );
    let id = generation_named(message);
    let generation = setup.mock.generation(id).expect("the generation");
    assert_eq!(generation.status, "CANCELLED");
    session.close().await;
}
