//! The protocol: the only file that imports `rmcp`, the official Rust SDK of the
//! Model Context Protocol. It carries the tools of `tools.rs` over stdio, or over
//! streamable HTTP on loopback.
//!
//! A call that waits for a generation is run as a task (the protocol's tasks
//! extension, SEP-2663) when the client declares it supports them: the client then
//! polls `tasks/get`, reads the progress in the task's status message, and may
//! `tasks/cancel`. Other clients get the same call held open, with progress
//! notifications.

// The protocol's logging (deprecated by its 2026-07-28 revision, SEP-2577) is how
// clients of the earlier revisions, which most are, show a server's message: here,
// the id of a generation whose call was cancelled.
#![expect(
    deprecated,
    reason = "logging notifications, for clients before 2026-07-28"
)]

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, Implementation, InitializeResult,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, Resource, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, Tool, ToolAnnotations, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::tools::{Answer, Caller, Reporter, Tools};

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "Tools of a paid media generation service (images, video, speech, \
music). Look at list_models and estimate_cost before generate; give generate a requestId and \
use the same one when you retry a call, so that it is not charged twice. A generation that \
outlasts the wait goes on: get_generation with wait: true resumes it.";

/// How much longer than its wait a task is kept, so that its answer can be read.
const TASK_KEPT_AFTER_WAIT: Duration = Duration::from_secs(600);

/// How often a client should poll a task: a generation takes seconds to minutes.
const TASK_POLL_INTERVAL_MS: u64 = 1_000;

#[derive(Clone)]
struct Handler {
    tools: Arc<Tools>,
    /// The tasks of every session: over HTTP a handler is made per session (or
    /// per request, for clients without sessions), and a task outlives both.
    tasks: TaskManager,
    /// The least severe log message the client wants (`logging/setLevel`): the rank
    /// of its level, from 0 for debug; info until it says.
    log_level: Arc<AtomicU8>,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Handler {
    fn new(tools: Arc<Tools>, tasks: TaskManager) -> Self {
        Self {
            tools,
            tasks,
            log_level: Arc::new(AtomicU8::new(rank(LoggingLevel::Info))),
        }
    }
}

/// The severity of a log level, from 0 for debug to 7 for emergency.
fn rank(level: LoggingLevel) -> u8 {
    level as u8
}

/// Serves on stdin and stdout until the client closes them.
pub async fn serve_stdio(tools: Arc<Tools>) -> anyhow::Result<()> {
    let running = Handler::new(tools, TaskManager::new())
        .serve(rmcp::transport::stdio_pipes())
        .await
        .context("while starting the MCP session on stdio")?;
    running
        .waiting()
        .await
        .context("while serving MCP on stdio")?;
    Ok(())
}

/// Serves streamable HTTP at `/mcp` on `listener` until `stop` ends.
pub async fn serve_http(
    tools: Arc<Tools>,
    listener: tokio::net::TcpListener,
    stop: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let address: SocketAddr = listener.local_addr()?;
    let mut config = StreamableHttpServerConfig::default();
    // Only this machine's own names reach it (DNS rebinding), on its port.
    config.allowed_hosts = vec![
        "127.0.0.1".to_owned(),
        "localhost".to_owned(),
        "[::1]".to_owned(),
        address.to_string(),
        format!("localhost:{}", address.port()),
    ];
    let cancel = config.cancellation_token.clone();
    let tasks = TaskManager::new();
    let service = StreamableHttpService::new(
        move || Ok(Handler::new(Arc::clone(&tools), tasks.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            cancel.cancel();
        })
        .await
        .context("while serving MCP over HTTP")
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("mediagen", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.store(rank(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .specs()
            .into_iter()
            .map(|spec| {
                let annotations = ToolAnnotations::with_title(spec.title)
                    .read_only(spec.read_only)
                    .destructive(false)
                    .idempotent(spec.idempotent)
                    .open_world(true);
                Tool::new(spec.name, spec.description, object(spec.input))
                    .with_title(spec.title)
                    .with_raw_output_schema(Arc::new(object(spec.output)))
                    .with_annotations(annotations)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        // The tasks extension belongs to the protocol's 2026-07-28 revision, whose
        // results say their type: a client of an earlier one may name the extension
        // (the official inspector does) and still read only a tool's result.
        let client_polls = context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize())
            && context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
        if client_polls && Tools::waits(&request.name, &args) {
            return Ok(CallToolResponse::Task(CreateTaskResult::new(
                self.spawn_task(request.name.into_owned(), args, &context),
            )));
        }
        let reporter = Notifier {
            peer: context.peer.clone(),
            token: context.meta.get_progress_token(),
            log_level: self.log_level.load(Ordering::Relaxed),
        };
        let cancelled = context.ct.clone();
        let caller = Caller {
            reporter: &reporter,
            abandoned: Arc::new(move || cancelled.is_cancelled()),
            task: false,
        };
        let answer = self
            .tools
            .call(&request.name, &args, &caller)
            .await
            .ok_or_else(|| no_such_tool(&request.name))?;
        Ok(CallToolResponse::Complete(result(answer)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // No tool asks its client for input; answers to none are ignored.
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

impl Handler {
    /// Runs a call that waits as a task, and returns the task's first state.
    fn spawn_task(
        &self,
        name: String,
        args: rmcp::model::JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> rmcp::model::Task {
        let tools = Arc::clone(&self.tools);
        let kept = self.tools.task_wait_limit() + TASK_KEPT_AFTER_WAIT;
        let options = TaskOptions::new()
            .with_ttl_ms(u64::try_from(kept.as_millis()).unwrap_or(u64::MAX))
            .with_poll_interval_ms(TASK_POLL_INTERVAL_MS)
            .with_status_message(format!("{name} is starting"));
        // Progress has no request left to go with: it is the task's status message.
        // Log messages still go to the client.
        let log = Notifier {
            peer: context.peer.clone(),
            token: None,
            log_level: self.log_level.load(Ordering::Relaxed),
        };
        let cancels_too = args.get("cancelIfAbandoned").and_then(Value::as_bool) == Some(true);
        self.tasks.spawn(options, move |task| {
            Box::pin(async move {
                let reporter = TaskReporter {
                    task: task.clone(),
                    log,
                };
                let watched = task.clone();
                let caller = Caller {
                    reporter: &reporter,
                    abandoned: Arc::new(move || watched.is_cancel_requested()),
                    task: true,
                };
                let answer = tools
                    .call(&name, &args, &caller)
                    .await
                    .ok_or_else(|| no_such_tool(&name))?;
                if task.is_cancel_requested() && answer.value["done"] == false {
                    // Cancelled while it waited: the cancelled task still tells the
                    // generation's id, and how to resume when it goes on.
                    let id = answer.value["id"].as_str().unwrap_or("?");
                    task.set_status_message(if cancels_too {
                        format!(
                            "cancelled: stopped waiting for generation {id}, and asked the \
                             service to cancel it (cancelIfAbandoned)"
                        )
                    } else {
                        format!(
                            "cancelled: stopped waiting for generation {id}, which goes on; {}",
                            answer.value["resume"].as_str().unwrap_or_default()
                        )
                    });
                    return Err(TaskExit::Cancelled);
                }
                task.set_status_message(outcome(&answer));
                Ok(result(answer))
            })
        })
    }
}

/// A finished task's status message: the generation's status, or the failure.
fn outcome(answer: &Answer) -> String {
    let value = &answer.value;
    match (value["error"]["message"].as_str(), value["id"].as_str()) {
        (Some(message), _) => format!("failed: {message}"),
        (None, Some(id)) => format!(
            "generation {id} is {}",
            value["status"].as_str().unwrap_or("of an unknown status")
        ),
        (None, None) => "done".to_owned(),
    }
}

fn no_such_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no tool named `{name}`"), None)
}

/// A tool's answer as the protocol's result: the JSON as structured content and as
/// text, and each saved file as a resource link.
fn result(answer: Answer) -> CallToolResult {
    let mut result = if answer.is_error {
        CallToolResult::structured_error(answer.value)
    } else {
        CallToolResult::structured(answer.value)
    };
    for file in answer.files {
        let resource = Resource::new(file.uri, file.name)
            .with_mime_type(file.mime_type)
            .with_size(file.size)
            .with_description(format!("saved at {}", file.path.display()));
        result.content.push(ContentBlock::resource_link(resource));
    }
    result
}

fn object(value: Value) -> rmcp::model::JsonObject {
    match value {
        Value::Object(map) => map,
        _ => rmcp::model::JsonObject::new(),
    }
}

/// Tells a task's progress in its status message, which the client reads when it
/// polls.
struct TaskReporter {
    task: TaskContext,
    log: Notifier,
}

impl Reporter for TaskReporter {
    fn progress(&self, _progress: f64, _total: Option<f64>, message: String) -> BoxFuture<'_, ()> {
        self.task.set_status_message(message);
        futures::future::ready(()).boxed()
    }

    fn log(&self, warning: bool, data: Value) -> BoxFuture<'_, ()> {
        self.log.log(warning, data)
    }
}

/// Tells a client of a call's progress and of what it should log.
struct Notifier {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    log_level: u8,
}

impl Reporter for Notifier {
    fn progress(&self, progress: f64, total: Option<f64>, message: String) -> BoxFuture<'_, ()> {
        async move {
            let Some(token) = self.token.clone() else {
                return;
            };
            let mut param = ProgressNotificationParam::new(token, progress).with_message(message);
            // The total is the model's typical time: progress may pass it, and then
            // there is none to tell.
            if let Some(total) = total.filter(|total| *total > progress) {
                param = param.with_total(total);
            }
            // A client gone is not the call's failure: nothing to do.
            let _ = self.peer.notify_progress(param).await;
        }
        .boxed()
    }

    fn log(&self, warning: bool, data: Value) -> BoxFuture<'_, ()> {
        async move {
            let level = if warning {
                LoggingLevel::Warning
            } else {
                LoggingLevel::Info
            };
            if rank(level) < self.log_level {
                return;
            }
            let param = LoggingMessageNotificationParam::new(level, data)
                .with_logger(Cow::Borrowed("mediagen"));
            let _ = self.peer.notify_logging_message(param).await;
        }
        .boxed()
    }
}
