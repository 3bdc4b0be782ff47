//! The tools of `mediagen mcp`, with no knowledge of the protocol's library: their
//! schemas, their calls, and their answers as JSON. `rmcp.rs` carries them.
//!
//! A tool answers with a structured result, or with an error result (`isError`)
//! that carries the service's code, the hint and, for a failed generation, what to
//! change: the service's refusals are answers the model can act on, never
//! protocol errors.

use std::collections::HashMap;
use std::future::IntoFuture;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mediagen::{
    Client, Error, FailureAdvice, Generation, GenerationRequest, GenerationStatus, MediaType,
};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::ledger::{self, Ledger, Refusal};
use super::same_call::{self, Abandoned, Calls};
use crate::cli::CommandId;
use crate::error::{Exit, Failure, GOES_ON};
use crate::output::Output;
use crate::sdk_error::may_have_acted;

/// How often a generate that waits tells its progress when nothing changes.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// The mock's verdict on this server's traffic, with `--mock`.
pub type VerdictFn = Arc<dyn Fn() -> Value + Send + Sync>;

/// What a tool call can tell its client while it runs.
pub trait Reporter: Send + Sync {
    /// A progress notification, when the client asked for them.
    fn progress(&self, progress: f64, total: Option<f64>, message: String) -> BoxFuture<'_, ()>;
    /// A log message notification.
    fn log(&self, warning: bool, data: Value) -> BoxFuture<'_, ()>;
}

/// Who waits for a call's answer.
pub struct Caller<'a> {
    pub reporter: &'a dyn Reporter,
    /// Whether the client has cancelled the call.
    pub abandoned: Abandoned,
    /// Whether the answer goes to an MCP task that the client polls, rather than
    /// to a request it holds open: a task waits up to the longer limit.
    pub task: bool,
}

impl Caller<'_> {
    fn wait_limit(&self, settings: &Settings) -> Duration {
        if self.task {
            settings.task_wait_limit
        } else {
            settings.wait_limit
        }
    }
}

/// A tool: its name, what it does, and its input and output schemas.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub input: Value,
    pub output: Value,
    pub read_only: bool,
    /// Calling it again with the same arguments acts no more than once.
    pub idempotent: bool,
}

/// A tool's answer.
#[derive(Debug)]
pub struct Answer {
    pub is_error: bool,
    pub value: Value,
    /// Files saved under `--output-dir`, as resource links.
    pub files: Vec<Saved>,
}

/// A result saved under `--output-dir`.
#[derive(Debug, Clone)]
pub struct Saved {
    pub path: PathBuf,
    pub uri: String,
    pub name: String,
    pub mime_type: &'static str,
    pub size: u64,
}

impl Answer {
    fn ok(value: Value) -> Self {
        Self {
            is_error: false,
            value,
            files: Vec::new(),
        }
    }

    fn failure(failure: &Failure) -> Self {
        Self {
            is_error: true,
            value: failure.envelope(),
            files: Vec::new(),
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        Self::failure(
            &Failure::new(Exit::Usage, "INVALID_ARGUMENTS", message)
                .hint("call the tool again with the arguments its input schema describes"),
        )
    }
}

/// The settings of the server.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a call the client holds open waits for a generation.
    pub wait_limit: Duration,
    /// How long a call run as an MCP task waits for a generation.
    pub task_wait_limit: Duration,
    /// Where results are saved, made absolute at start.
    pub output_dir: Option<PathBuf>,
    pub embedded_mock: bool,
}

/// The state every tool call shares.
pub struct Tools {
    client: Client,
    out: Output,
    settings: Settings,
    ledger: Mutex<Ledger>,
    calls: Mutex<Calls>,
    /// The generations seen in a final state, by the key of their create: a call
    /// made again gets its answer without reading a finished generation again
    /// (which the service's document says a client stops doing).
    ended: Mutex<HashMap<String, Generation>>,
    /// Each model's typical time, read from the catalog once per model.
    typical: Mutex<HashMap<String, Option<f64>>>,
    verdict: Option<VerdictFn>,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The arguments of a generation: model, prompt, params.
struct Order {
    model: String,
    prompt: String,
    params: Map<String, Value>,
}

impl Tools {
    pub fn new(
        client: Client,
        out: Output,
        settings: Settings,
        ledger: Ledger,
        verdict: Option<VerdictFn>,
    ) -> Self {
        Self {
            client,
            out,
            settings,
            ledger: Mutex::new(ledger),
            calls: Mutex::new(Calls::default()),
            ended: Mutex::new(HashMap::new()),
            typical: Mutex::new(HashMap::new()),
            verdict,
        }
    }

    /// The tools this server offers.
    pub fn specs(&self) -> Vec<ToolSpec> {
        specs(&self.settings, self.verdict.is_some())
    }

    /// How long a call run as a task waits for a generation.
    pub fn task_wait_limit(&self) -> Duration {
        self.settings.task_wait_limit
    }

    /// Whether a call of tool `name` waits for a generation: such a call is run as
    /// an MCP task when the client supports them.
    pub fn waits(name: &str, args: &Map<String, Value>) -> bool {
        match name {
            "generate" => true,
            "get_generation" => optional_bool(args, "wait").is_ok_and(|wait| wait == Some(true)),
            _ => false,
        }
    }

    /// Calls tool `name`; `None` when there is no such tool.
    pub async fn call(
        &self,
        name: &str,
        args: &Map<String, Value>,
        caller: &Caller<'_>,
    ) -> Option<Answer> {
        Some(match name {
            "list_models" => self.list_models(args).await,
            "estimate_cost" => self.estimate_cost(args).await,
            "generate" => self.generate(args, caller).await,
            "get_generation" => self.get_generation(args, caller).await,
            "get_balance" => self.get_balance().await,
            "mock_verdict" => Answer::ok((self.verdict.as_ref()?)()),
            _ => return None,
        })
    }

    async fn list_models(&self, args: &Map<String, Value>) -> Answer {
        let media_type = match optional_text(args, "mediaType") {
            Ok(media_type) => media_type.map(|t| MediaType::from(t.to_uppercase().as_str())),
            Err(answer) => return answer,
        };
        match self.client.catalog().models().await {
            Ok(models) => {
                let models: Vec<Value> = models
                    .iter()
                    .filter(|m| media_type.as_ref().is_none_or(|t| &m.media_type == t))
                    .filter_map(|m| serde_json::to_value(m).ok())
                    .collect();
                Answer::ok(json!({ "models": models }))
            }
            Err(err) => self.sdk_failure(&err, CommandId::Models),
        }
    }

    async fn estimate_cost(&self, args: &Map<String, Value>) -> Answer {
        let order = match order(args) {
            Ok(order) => order,
            Err(answer) => return answer,
        };
        let request = order.request();
        match self.client.generations().estimate(&request).await {
            Ok(estimate) => {
                let cost = ledger::kopecks(estimate.cost_rub);
                let ledger = self.lock_ledger();
                let within_max_cost = ledger.max_cost().is_none_or(|max| cost <= max);
                let left = ledger.standing().left;
                let mut value = json!({
                    "model": order.model,
                    "costRub": estimate.cost_rub,
                    "availableRub": estimate.available_rub,
                    "sufficient": estimate.sufficient,
                    "withinCap": within_max_cost && left.is_none_or(|left| cost <= left),
                });
                if let Some(max) = ledger.max_cost() {
                    value["maxCostRub"] = json!(ledger::rub(max));
                }
                if let Some(left) = left {
                    value["capLeftRub"] = json!(ledger::rub(left));
                }
                Answer::ok(value)
            }
            Err(err) => self.sdk_failure(&err, CommandId::Generate),
        }
    }

    async fn generate(&self, args: &Map<String, Value>, caller: &Caller<'_>) -> Answer {
        let (order, request_id, cancel_if_abandoned) = match (
            order(args),
            optional_text(args, "requestId"),
            optional_bool(args, "cancelIfAbandoned"),
        ) {
            (Ok(order), Ok(request_id), Ok(cancel)) => (order, request_id, cancel.unwrap_or(false)),
            (Err(answer), _, _) | (_, Err(answer), _) | (_, _, Err(answer)) => return answer,
        };
        let fingerprint = same_call::fingerprint(&order.model, &order.prompt, &order.params);
        let (call, key) = match &request_id {
            Some(request_id) => (None, same_call::derived_key(request_id, &fingerprint)),
            None => {
                let (call, key) = self
                    .lock_calls()
                    .start(&fingerprint, Arc::clone(&caller.abandoned));
                (Some(call), key)
            }
        };
        let answer = self
            .create_and_wait(&order, &key, caller, cancel_if_abandoned)
            .await;
        if let Some(call) = call {
            self.lock_calls().finish(&fingerprint, call);
        }
        answer
    }

    async fn create_and_wait(
        &self,
        order: &Order,
        key: &str,
        caller: &Caller<'_>,
        cancel_if_abandoned: bool,
    ) -> Answer {
        let known = lock(&self.ended).get(key).cloned();
        if let Some(generation) = known {
            let id = generation.id;
            return self
                .finish(Waited::Ended(Box::new(generation)), id, Some(key))
                .await;
        }
        let request = order.request().idempotency_key(key);
        let estimate = match self.client.generations().estimate(&request).await {
            Ok(estimate) => estimate,
            Err(err) => return self.sdk_failure(&err, CommandId::Generate),
        };
        let cost = ledger::kopecks(estimate.cost_rub);
        let reserved = self.lock_ledger().reserve(key, cost);
        if let Err(refusal) = reserved {
            return Answer::failure(&cap_failure(&refusal));
        }
        let created = match self.client.generations().create(request).await {
            Ok(created) => created,
            Err(err) => {
                if may_have_acted(&err) {
                    // It may exist and be paid for: the entry stays, and the same
                    // call again (the same key) finds it.
                    let failure = Failure::from(&err)
                        .hint(
                            "the generation may have been created: call generate again with \
                             the same requestId and arguments, which returns it instead of \
                             making another",
                        )
                        .key(Some(key));
                    return Answer::failure(&failure);
                }
                self.lock_ledger().release(key);
                return self.sdk_failure(&err, CommandId::Generate);
            }
        };
        self.lock_ledger()
            .settle(key, ledger::kopecks(created.cost_rub));
        let typical = self.typical_seconds(&order.model).await;
        let waited = self.wait(created.id, Some(key), typical, caller).await;
        if let Waited::Abandoned = waited
            && cancel_if_abandoned
        {
            // Asked for by the call itself: the paid task is cancelled too.
            if let Err(err) = self.client.generations().cancel(created.id).await {
                caller
                    .reporter
                    .log(
                        true,
                        json!({ "message": format!("could not cancel {}: {err}", created.id) }),
                    )
                    .await;
            }
        }
        self.finish(waited, created.id, Some(key)).await
    }

    async fn get_generation(&self, args: &Map<String, Value>, caller: &Caller<'_>) -> Answer {
        let (id, wait) = match (required_text(args, "id"), optional_bool(args, "wait")) {
            (Ok(id), Ok(wait)) => (id, wait.unwrap_or(false)),
            (Err(answer), _) | (_, Err(answer)) => return answer,
        };
        let Ok(id) = Uuid::parse_str(&id) else {
            return Answer::invalid(format!("`{id}` is not a generation id (a UUID)"));
        };
        if !wait {
            return match self.client.generations().get(id).await {
                Ok(generation) => {
                    self.finish(Waited::Ended(Box::new(generation)), id, None)
                        .await
                }
                Err(err) => self.sdk_failure(&err, CommandId::Get),
            };
        }
        let waited = self.wait(id, None, None, caller).await;
        self.finish(waited, id, None).await
    }

    async fn get_balance(&self) -> Answer {
        let balance = match self.client.billing().balance().await {
            Ok(balance) => balance,
            Err(err) => return self.sdk_failure(&err, CommandId::Balance),
        };
        let mut value = serde_json::to_value(&balance).unwrap_or_else(|_| json!({}));
        value["cap"] = self.cap();
        Answer::ok(value)
    }

    /// The cap as answers tell it.
    fn cap(&self) -> Value {
        let ledger = self.lock_ledger();
        let standing = ledger.standing();
        json!({
            "maxSpendRub": ledger.max_spend().map(ledger::rub),
            "maxCostRub": ledger.max_cost().map(ledger::rub),
            "chargedRub": ledger::rub(standing.charged),
            "inFlightRub": ledger::rub(standing.in_flight),
            "leftRub": standing.left.map(ledger::rub),
        })
    }

    /// The model's typical time to a final status, from the catalog: a figure for
    /// progress, so a failed read is told as none, and read again next time.
    async fn typical_seconds(&self, slug: &str) -> Option<f64> {
        if let Some(known) = lock(&self.typical).get(slug) {
            return *known;
        }
        let model = self.client.catalog().model(slug).await.ok()?;
        let typical = model.and_then(|m| m.average_duration_seconds);
        lock(&self.typical).insert(slug.to_owned(), typical);
        typical
    }

    /// Waits for generation `id` up to the wait limit, telling its progress, until
    /// it ends, the limit passes, or the client abandons the call.
    async fn wait(
        &self,
        id: Uuid,
        key: Option<&str>,
        typical: Option<f64>,
        caller: &Caller<'_>,
    ) -> Waited {
        let Caller {
            reporter,
            abandoned,
            ..
        } = caller;
        let began = Instant::now();
        let (status_tx, mut status_rx) = tokio::sync::watch::channel(String::from("PENDING"));
        let wait = self
            .client
            .generations()
            .wait(id)
            .timeout(caller.wait_limit(&self.settings))
            .on_status(move |g: &Generation| {
                status_tx.send_replace(g.status.to_string());
            })
            .into_future();
        tokio::pin!(wait);
        let mut tick = tokio::time::interval(PROGRESS_EVERY);
        let mut cancel_check = tokio::time::interval(Duration::from_millis(50));
        let tell = |status: &str| {
            let elapsed = began.elapsed().as_secs_f64();
            let mut message = format!("{id} is {status} after {elapsed:.0}s");
            if let Some(typical) = typical {
                message.push_str(&format!(" (the model typically takes {typical:.1}s)"));
            }
            reporter.progress(elapsed, typical, message)
        };
        let ended = loop {
            tokio::select! {
                ended = &mut wait => break ended,
                _ = tick.tick() => {
                    let status = status_rx.borrow().clone();
                    tell(&status).await;
                }
                Ok(()) = status_rx.changed() => {
                    let status = status_rx.borrow_and_update().clone();
                    tell(&status).await;
                }
                _ = cancel_check.tick(), if abandoned() => {
                    let resume = format!("get_generation with {{\"id\": \"{id}\", \"wait\": true}}");
                    self.out.note(format!("mcp: a call stopped waiting for generation {id}; it goes on; resume with {resume}"));
                    reporter.log(true, json!({
                        "message": "the call was cancelled: it stopped waiting, and the generation goes on",
                        "id": id.to_string(),
                        "idempotencyKey": key,
                        "resume": resume,
                    })).await;
                    return Waited::Abandoned;
                }
            }
        };
        match ended {
            Ok(generation) => Waited::Ended(Box::new(generation)),
            Err(Error::WaitTimeout { status, .. }) => Waited::StillRunning(status),
            Err(err) => Waited::Failed(err),
        }
    }

    /// The answer of a wait, with the results saved when it succeeded.
    async fn finish(&self, waited: Waited, id: Uuid, key: Option<&str>) -> Answer {
        let generation = match waited {
            Waited::Ended(generation) => *generation,
            Waited::StillRunning(status) => {
                return Answer::ok(json!({
                    "id": id.to_string(),
                    "status": status.to_string(),
                    "idempotencyKey": key,
                    "done": false,
                    "resume": format!(
                        "the generation goes on: call get_generation with {{\"id\": \"{id}\", \
                         \"wait\": true}} to wait again"
                    ),
                }));
            }
            Waited::Abandoned => {
                return Answer::ok(json!({
                    "id": id.to_string(),
                    "idempotencyKey": key,
                    "done": false,
                    "resume": format!("call get_generation with {{\"id\": \"{id}\", \"wait\": true}}"),
                }));
            }
            Waited::Failed(Error::GenerationFailed(failed)) => {
                if let Some(key) = key {
                    // The service returns a failed task's cost (its refund rule).
                    self.lock_ledger().refund(key);
                    lock(&self.ended).insert(key.to_owned(), failed.generation.clone());
                }
                let failure = Failure::from(&Error::GenerationFailed(failed.clone()))
                    .hinted(CommandId::Generate)
                    .key(key);
                let mut value = failure.envelope();
                value["advice"] = json!(advice(failed.advice()));
                value["id"] = json!(id.to_string());
                value["costRub"] = json!(0);
                return Answer {
                    is_error: true,
                    value,
                    files: Vec::new(),
                };
            }
            Waited::Failed(err) => {
                let failure = Failure::from(&err).hinted(CommandId::Get).key(key);
                let failure = if matches!(
                    err,
                    Error::GenerationCancelled { .. } | Error::UnknownGenerationStatus { .. }
                ) {
                    failure
                } else {
                    failure.fact(GOES_ON).detail("id", id.to_string())
                };
                return Answer::failure(&failure);
            }
        };
        let mut value = serde_json::to_value(&generation).unwrap_or_else(|_| json!({}));
        value["done"] = json!(!generation.status.is_active());
        if let Some(key) = key {
            value["idempotencyKey"] = json!(key);
            if !generation.status.is_active() {
                lock(&self.ended).insert(key.to_owned(), generation.clone());
            }
        }
        if let Some(code) = &generation.error_code {
            value["advice"] = json!(advice(code.advice()));
        }
        let mut files = Vec::new();
        if let (Some(dir), GenerationStatus::Succeeded) =
            (&self.settings.output_dir, &generation.status)
        {
            match self.save(&generation, dir).await {
                Ok(saved) => files = saved,
                Err(err) => {
                    let failure = Failure::from(&err)
                        .fact("the results stay on the service")
                        .detail("id", id.to_string())
                        .detail("outputUrls", generation.output_urls.clone())
                        .hint(format!(
                            "call get_generation with {{\"id\": \"{id}\"}} to save them again"
                        ));
                    return Answer::failure(&failure);
                }
            }
            value["files"] = files
                .iter()
                .map(|f| json!({ "uri": f.uri, "path": f.path, "mimeType": f.mime_type, "size": f.size }))
                .collect();
        }
        value["cap"] = self.cap();
        Answer {
            // A generate whose generation failed failed; a look-up of one did not.
            is_error: key.is_some() && generation.status == GenerationStatus::Failed,
            value,
            files,
        }
    }

    /// Saves the results of `generation` in `dir`, under the names the SDK makes
    /// from the id and the result's number (never from the URL's path).
    async fn save(&self, generation: &Generation, dir: &Path) -> Result<Vec<Saved>, Error> {
        let paths = self
            .client
            .files()
            .download_outputs(generation, dir)
            .await?;
        Ok(paths
            .into_iter()
            .map(|path| {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                let uri = url::Url::from_file_path(&path)
                    .map_or_else(|()| path.display().to_string(), String::from);
                Saved {
                    mime_type: mime_type(&path),
                    path,
                    uri,
                    name,
                    size,
                }
            })
            .collect())
    }

    fn sdk_failure(&self, err: &Error, command: CommandId) -> Answer {
        let failure = Failure::from(err).hinted(command);
        let failure = if self.settings.embedded_mock {
            failure.on_embedded_mock()
        } else {
            failure
        };
        Answer::failure(&failure)
    }

    fn lock_ledger(&self) -> MutexGuard<'_, Ledger> {
        lock(&self.ledger)
    }

    fn lock_calls(&self) -> MutexGuard<'_, Calls> {
        lock(&self.calls)
    }
}

/// A poisoned lock is still read: each change under these locks is one insert or
/// assignment, so a panic elsewhere cannot leave one half-written.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How a wait ended. A generation is large beside the other ends, so it is boxed.
enum Waited {
    Ended(Box<Generation>),
    StillRunning(GenerationStatus),
    Abandoned,
    Failed(Error),
}

impl Order {
    fn request(&self) -> GenerationRequest {
        self.params.iter().fold(
            GenerationRequest::new(&self.model, &self.prompt),
            |request, (name, value)| request.param(name, value.clone()),
        )
    }
}

/// A refusal of the cap, with what it leaves.
fn cap_failure(refusal: &Refusal) -> Failure {
    match *refusal {
        Refusal::AboveMaxCost { cost, max_cost } => Failure::new(
            Exit::InsufficientBalance,
            "COST_ABOVE_MAXIMUM",
            format!(
                "the generation would cost {} RUB, above this server's --max-cost {} RUB; \
                 nothing was started",
                ledger::rub(cost),
                ledger::rub(max_cost)
            ),
        )
        .hint("choose a cheaper model or parameters (list_models gives the prices)")
        .detail("costRub", ledger::rub(cost))
        .detail("maxCostRub", ledger::rub(max_cost)),
        Refusal::AboveMaxSpend {
            cost,
            max_spend,
            left,
        } => Failure::new(
            Exit::InsufficientBalance,
            "SPENDING_CAP_REACHED",
            format!(
                "the generation would cost {} RUB, and {} RUB of this server's --max-spend {} \
                 RUB is left; nothing was started",
                ledger::rub(cost),
                ledger::rub(left),
                ledger::rub(max_spend)
            ),
        )
        .hint(
            "choose a generation that costs at most what is left, or wait for generations in \
             flight to end (one that fails gives its cost back); the cap lasts as long as this \
             server",
        )
        .detail("costRub", ledger::rub(cost))
        .detail("maxSpendRub", ledger::rub(max_spend))
        .detail("capLeftRub", ledger::rub(left)),
    }
}

/// What to do about a failed generation, for the model.
fn advice(advice: FailureAdvice) -> &'static str {
    match advice {
        FailureAdvice::Retry => "retry: a temporary failure; the same request may succeed",
        FailureAdvice::RetryLaterOrOtherModel => {
            "retry later or choose another model: intake on this model is stopped for now"
        }
        FailureAdvice::CheckInputs => "check the input files or links, then retry",
        FailureAdvice::ChangeRequest => {
            "change the prompt or parameters: the same request fails the same way"
        }
        _ => "unknown failure: look at errorCode before retrying",
    }
}

fn mime_type(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("mp4") => "video/mp4",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

fn order(args: &Map<String, Value>) -> Result<Order, Answer> {
    let model = required_text(args, "model")?;
    let prompt = required_text(args, "prompt")?;
    let params = match args.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            return Err(Answer::invalid(
                "`params` is an object of the model's parameters",
            ));
        }
    };
    Ok(Order {
        model,
        prompt,
        params,
    })
}

fn required_text(args: &Map<String, Value>, name: &str) -> Result<String, Answer> {
    optional_text(args, name)?.ok_or_else(|| Answer::invalid(format!("`{name}` is required")))
}

fn optional_text(args: &Map<String, Value>, name: &str) -> Result<Option<String>, Answer> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
        Some(_) => Err(Answer::invalid(format!("`{name}` is a non-empty string"))),
    }
}

fn optional_bool(args: &Map<String, Value>, name: &str) -> Result<Option<bool>, Answer> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(on)) => Ok(Some(*on)),
        Some(_) => Err(Answer::invalid(format!("`{name}` is true or false"))),
    }
}

/// The tools and their schemas.
fn specs(settings: &Settings, mock: bool) -> Vec<ToolSpec> {
    let order = json!({
        "model": { "type": "string", "description": "The model's slug, from list_models (such as flux-schnell)" },
        "prompt": { "type": "string", "description": "What to generate. It is sent as it is, as data." },
        "params": {
            "type": "object",
            "description": "The model's parameters, such as {\"aspect_ratio\": \"16:9\"}; list_models tells which it takes",
            "additionalProperties": true
        }
    });
    let cap = json!({
        "type": "object",
        "description": "This server's spending cap: what is charged, in flight and left (null without --max-spend)",
        "properties": {
            "maxSpendRub": { "type": ["number", "null"] },
            "maxCostRub": { "type": ["number", "null"] },
            "chargedRub": { "type": "number" },
            "inFlightRub": { "type": "number" },
            "leftRub": { "type": ["number", "null"] }
        }
    });
    let generation = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "description": "The generation's id" },
            "status": { "type": "string", "description": "PENDING, PROCESSING, SUCCEEDED, FAILED, or a status this server does not know, as sent" },
            "done": { "type": "boolean", "description": "Whether the status is final; when false, `resume` says how to wait again" },
            "costRub": { "type": "number", "description": "What the service charged" },
            "outputUrls": { "type": "array", "items": { "type": "string" } },
            "files": {
                "type": "array",
                "description": "The results saved under the server's --output-dir",
                "items": { "type": "object", "properties": {
                    "uri": { "type": "string" }, "path": { "type": "string" },
                    "mimeType": { "type": "string" }, "size": { "type": "integer" }
                } }
            },
            "idempotencyKey": { "type": ["string", "null"] },
            "resume": { "type": "string" },
            "cap": cap
        },
        "required": ["id"]
    });
    let limit = format!(
        "up to {}s, or {}s as an MCP task when the client supports tasks",
        settings.wait_limit.as_secs(),
        settings.task_wait_limit.as_secs()
    );
    let saves = if settings.output_dir.is_some() {
        " The results are saved under the server's output folder and returned as resource links."
    } else {
        ""
    };
    let mut tools = vec![
        ToolSpec {
            name: "list_models",
            title: "List models",
            description: "The catalog: each model's slug, media type, parameters, prices in roubles and typical time.".to_owned(),
            input: json!({
                "type": "object",
                "properties": {
                    "mediaType": { "type": "string", "description": "Only models of this media type, such as IMAGE, VIDEO, AUDIO" }
                }
            }),
            output: json!({
                "type": "object",
                "properties": { "models": { "type": "array", "items": { "type": "object" } } },
                "required": ["models"]
            }),
            read_only: true,
            idempotent: true,
        },
        ToolSpec {
            name: "estimate_cost",
            title: "Estimate a generation's cost",
            description: "What a generation would cost, whether the balance covers it, and whether this server's spending cap allows it. Creates nothing.".to_owned(),
            input: json!({ "type": "object", "properties": order.clone(), "required": ["model", "prompt"] }),
            output: json!({
                "type": "object",
                "properties": {
                    "model": { "type": "string" },
                    "costRub": { "type": "number" },
                    "availableRub": { "type": "number" },
                    "sufficient": { "type": "boolean" },
                    "withinCap": { "type": "boolean" },
                    "maxCostRub": { "type": "number" },
                    "capLeftRub": { "type": "number" }
                },
                "required": ["costRub", "sufficient", "withinCap"]
            }),
            read_only: true,
            idempotent: true,
        },
        ToolSpec {
            name: "generate",
            title: "Generate media and wait for it",
            description: format!(
                "Creates a paid generation and waits for its end ({limit}; progress is notified when the call has a progress token, and is a task's status message), then returns its id, status, cost charged and output URLs.{saves} \
                 Two calls are the same call, charged once and answered with the same generation, when they have the same requestId and the same model, prompt and params; \
                 without a requestId, a call with the same arguments as one this server saw cancelled before it answered resumes that one. Give a new requestId for each new piece of media, and the same one when you retry. \
                 When the wait limit passes, the answer has done: false and says how to resume (get_generation with wait: true). \
                 Refused, with what is left, when the estimate would pass this server's spending cap."
            ),
            input: json!({
                "type": "object",
                "properties": {
                    "model": order["model"],
                    "prompt": order["prompt"],
                    "params": order["params"],
                    "requestId": { "type": "string", "description": "Your id for this piece of media: a retry with the same requestId and arguments returns the same generation and is not charged again" },
                    "cancelIfAbandoned": { "type": "boolean", "description": "Cancel the generation on the service when this call is cancelled (default false: the generation goes on and get_generation finds it)" }
                },
                "required": ["model", "prompt"]
            }),
            output: generation.clone(),
            read_only: false,
            idempotent: false,
        },
        ToolSpec {
            name: "get_generation",
            title: "Look up a generation",
            description: format!("A generation by id: status, cost and outputs; with wait: true, waits for its end ({limit}, with progress), as generate does.{saves}"),
            input: json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The generation's id, as generate returned it" },
                    "wait": { "type": "boolean", "description": "Wait for the end (default false)" }
                },
                "required": ["id"]
            }),
            output: generation,
            read_only: true,
            idempotent: true,
        },
        ToolSpec {
            name: "get_balance",
            title: "Show the balance",
            description: "The account's balance in roubles, and this server's spending cap: charged, in flight, left.".to_owned(),
            input: json!({ "type": "object", "properties": {} }),
            output: json!({
                "type": "object",
                "properties": {
                    "availableRub": { "type": "number" },
                    "reservedRub": { "type": "number" },
                    "cap": cap
                },
                "required": ["availableRub", "cap"]
            }),
            read_only: true,
            idempotent: true,
        },
    ];
    if mock {
        tools.push(ToolSpec {
            name: "mock_verdict",
            title: "The mock's verdict",
            description: "The embedded mock's verdict on this server's own traffic: whether it broke a rule of the service's document for clients, with each finding.".to_owned(),
            input: json!({ "type": "object", "properties": {} }),
            output: json!({
                "type": "object",
                "properties": {
                    "clean": { "type": "boolean" },
                    "findings": { "type": "array", "items": { "type": "object" } },
                    "checked": { "type": "object" }
                },
                "required": ["clean", "findings"]
            }),
            read_only: true,
            idempotent: true,
        });
    }
    tools
}
