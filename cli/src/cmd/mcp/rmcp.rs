//! The protocol: the only file that imports `rmcp`, the official Rust SDK of the
//! Model Context Protocol. It carries the tools of `tools.rs` over stdio, or over
//! streamable HTTP on loopback.

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

use anyhow::Context as _;
use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Resource, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::tools::{Answer, Reporter, Tools};

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "Tools of a paid media generation service (images, video, speech, \
music). Look at list_models and estimate_cost before generate; give generate a requestId and \
use the same one when you retry a call, so that it is not charged twice. A generation that \
outlasts the wait goes on: get_generation with wait: true resumes it.";

#[derive(Debug, Clone)]
struct Handler {
    tools: Arc<Tools>,
    /// The least severe log message the client wants (`logging/setLevel`): the rank
    /// of its level, from 0 for debug; info until it says.
    log_level: Arc<AtomicU8>,
}

impl Handler {
    fn new(tools: Arc<Tools>) -> Self {
        Self {
            tools,
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
    let running = Handler::new(tools)
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
    let service = StreamableHttpService::new(
        move || Ok(Handler::new(Arc::clone(&tools))),
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
        let reporter = Notifier {
            peer: context.peer.clone(),
            token: context.meta.get_progress_token(),
            log_level: self.log_level.load(Ordering::Relaxed),
        };
        let cancelled = context.ct.clone();
        let args = request.arguments.unwrap_or_default();
        let answer = self
            .tools
            .call(
                &request.name,
                &args,
                &reporter,
                Arc::new(move || cancelled.is_cancelled()),
            )
            .await
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("no tool named `{}`", request.name), None)
            })?;
        Ok(CallToolResponse::Complete(result(answer)))
    }
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
