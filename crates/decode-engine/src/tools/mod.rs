//! The tools the agent calls (docs/permissions.md; docs/agents.md). Each implements [`ToolHandler`]; the agent
//! loop and `decode tool` run every call through the gate first (see [`call_tool`]).
//!
//! - [`registry`] gives every handler, [`for_agent`] exactly an agent's tools in order;
//! - [`call_tool`] is the one gated path: gate → (ask the person) → execute;
//! - [`SessionState`] is what one conversation keeps between calls: the shell's working
//!   folder, what was read (for edit's staleness check) and the todo list;

mod bash;
mod call;
mod control;
mod edit;
pub(crate) mod files;
mod glob;
mod grep;
pub mod hooks;
mod net_ask;
mod paths;
mod read;
pub mod session;
mod task;
mod todo;
mod web_fetch;
mod write;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use decode_policy::{Call, Tool};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::decision::DecisionSurface;
use crate::session_rules::SessionRules;
use crate::state::ActiveState;

pub use bash::{BashTool, DEFAULT_TIMEOUT_SECS, MAX_OUTPUT_CHARS, MAX_TIMEOUT_SECS};
pub use call::{call_tool, last_sentence, CallOutcome};
pub use control::{AskUserTool, EnterPlanModeTool, ExitPlanModeTool, SleepTool};
pub use edit::EditTool;
pub use glob::{GlobTool, GLOB_MAX_RESULTS};
pub use grep::GrepTool;
pub use read::{ReadTool, READ_DEFAULT_LIMIT, READ_MAX_LINE_CHARS};
pub use session::{SessionState, TodoItem, TodoStatus};
pub use task::{TaskInput, TaskTool};
pub use todo::TodoWriteTool;
pub use web_fetch::{WebFetchTool, WEB_FETCH_MAX_BYTES, WEB_FETCH_MAX_REDIRECTS};
pub use write::WriteTool;

/// Something a running tool reports before it finishes (bash output as it comes).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolProgress {
    Stdout { text: String },
    Stderr { text: String },
    Note { text: String },
}

/// Receives [`ToolProgress`] events; must not block.
pub type ProgressSink = Arc<dyn Fn(ToolProgress) + Send + Sync>;

/// A progress sink that drops everything.
pub fn no_progress() -> ProgressSink {
    Arc::new(|_| {})
}

/// What a tool call produced. `content` goes back to the model; `diff` (file tools)
/// and `images` (MCP tools) are for the person.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolResult {
    pub content: String,
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Bash: whether the command ran in the sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandboxed: Option<bool>,
    /// Bash: the bound of the sandbox the command hit, when it failed on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<decode_protocol::SandboxBound>,
    /// Bash: the command's exit code, when it ran to its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How long the tool ran, in milliseconds (set by the gated path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Images a tool returned (an MCP tool), shown to the person as images.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ToolImage>,
}

/// An image for the window: a raster type (PNG, JPEG, GIF, WebP) and its base64 data
/// (docs/mcp.md). Shown as an image, never as HTML.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolImage {
    pub mime_type: String,
    pub data: String,
}

impl ToolResult {
    pub fn ok(content: impl Into<String>) -> ToolResult {
        ToolResult {
            content: content.into(),
            ..ToolResult::default()
        }
    }

    pub fn error(content: impl Into<String>) -> ToolResult {
        ToolResult {
            content: content.into(),
            is_error: true,
            ..ToolResult::default()
        }
    }
}

/// What every tool call can reach: the project, the session's state, the active
/// agent/mode/gate, the decision surface, a cancellation token and a progress sink.
#[derive(Clone)]
pub struct ToolContext {
    pub project_root: PathBuf,
    pub active: Arc<ActiveState>,
    pub decisions: Arc<dyn DecisionSurface>,
    pub cancel: CancellationToken,
    pub progress: ProgressSink,
    /// Per-conversation state: shell working folder, reads, todo list.
    pub session: Arc<SessionState>,
    /// The rules the person allowed "for this session" (in memory only).
    pub session_rules: Arc<SessionRules>,
    /// For `read`, `write` and `edit`: the path the gate judged, its links
    /// resolved when it judged the call. The tool touches exactly this file
    /// or nothing (a link swapped in since is refused).
    pub judged_path: Option<PathBuf>,
    /// The person approved this very call in answer to an ask (allow once, for
    /// this session or always): bash runs it outside the sandbox. A call allowed
    /// by a rule, a mode or an earlier answer runs sandboxed.
    pub approved_by_person: bool,
    /// Records what `write`, `edit` and `bash` change for the turn's undo
    /// (docs/checkpoints.md); none outside a session's turn.
    pub checkpoint: Option<Arc<crate::checkpoints::TurnRecorder>>,
    /// What the agent said before this call (its last sentence), shown in an ask
    /// when the call carries no `description` of its own.
    pub intent: Option<String>,
    /// Resolves hosts for the host policy (docs/network.md).
    pub resolver: Arc<crate::net::Resolver>,
    /// For `web_fetch`: the host of the URL and the addresses the gate judged it
    /// with. The tool connects to exactly these.
    pub judged_host: Option<(String, Vec<std::net::IpAddr>)>,
    /// Told the gate's verdict on the call the first time it is judged (before any
    /// ask): the agent loop reports the call's start with it, so a call is judged
    /// once for the person and for the run.
    pub on_judged: Option<Judged>,
}

/// See [`ToolContext::on_judged`].
pub type Judged = Arc<dyn Fn(&decode_policy::Decision) + Send + Sync>;

impl ToolContext {
    /// A context for `active`'s project with a fresh session, a new cancellation
    /// token and no progress sink.
    pub fn new(active: Arc<ActiveState>, decisions: Arc<dyn DecisionSurface>) -> ToolContext {
        let project_root = active.project_root().to_path_buf();
        ToolContext {
            session: Arc::new(SessionState::new(&project_root)),
            project_root,
            active,
            decisions,
            cancel: CancellationToken::new(),
            progress: no_progress(),
            session_rules: Arc::new(SessionRules::new()),
            judged_path: None,
            approved_by_person: false,
            checkpoint: None,
            intent: None,
            resolver: Arc::new(crate::net::Resolver::system()),
            judged_host: None,
            on_judged: None,
        }
    }

    /// The same context telling `judged` the gate's first verdict on the call.
    pub fn with_on_judged(mut self, judged: Judged) -> ToolContext {
        self.on_judged = Some(judged);
        self
    }

    /// The same context recording changes for a turn's undo.
    pub fn with_checkpoint(
        mut self,
        recorder: Option<Arc<crate::checkpoints::TurnRecorder>>,
    ) -> ToolContext {
        self.checkpoint = recorder;
        self
    }

    /// The same context with what the agent said before the call.
    pub fn with_intent(mut self, intent: Option<String>) -> ToolContext {
        self.intent = intent;
        self
    }

    /// The same context with another resolver (tests: fake public hosts).
    pub fn with_resolver(mut self, resolver: Arc<crate::net::Resolver>) -> ToolContext {
        self.resolver = resolver;
        self
    }

    /// The same context with another set of session rules.
    pub fn with_session_rules(mut self, rules: Arc<SessionRules>) -> ToolContext {
        self.session_rules = rules;
        self
    }

    /// The same context with another session.
    pub fn with_session(mut self, session: Arc<SessionState>) -> ToolContext {
        self.session = session;
        self
    }

    /// The same context with another progress sink.
    pub fn with_progress(mut self, progress: ProgressSink) -> ToolContext {
        self.progress = progress;
        self
    }

    /// The same context with another cancellation token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> ToolContext {
        self.cancel = cancel;
        self
    }
}

/// One tool.
#[async_trait]
pub trait ToolHandler: Send + Sync {
    /// Which tool this is (its name and kind come from the gate's [`Tool`]).
    fn tool(&self) -> Tool;

    /// The name the model calls it by: the tool's own, or an MCP tool's
    /// `mcp__SERVER__TOOL`.
    fn name(&self) -> String {
        self.tool().name().to_string()
    }

    /// What the model is told the tool does.
    fn description(&self) -> &str;

    /// For an MCP tool: the tool as its server offers it (its `readOnlyHint`, shown
    /// to the person, never trusted).
    fn mcp_tool(&self) -> Option<&crate::mcp::McpTool> {
        None
    }

    /// The JSON schema of the input offered to the model.
    fn input_schema(&self) -> serde_json::Value;

    /// Checks `input` against the tool's input shape (required fields, types, values)
    /// without running anything. The message is one line naming the problem. The
    /// default accepts everything.
    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        let _ = input;
        Ok(())
    }

    /// Checks, before the person is asked, that the call can succeed on its own
    /// terms (an edit of a file the agent has not read cannot): an approval is never
    /// spent on a call that then fails. Runs only when the gate asks. The default
    /// accepts everything.
    fn precheck(&self, input: &serde_json::Value, ctx: &ToolContext) -> Result<(), String> {
        let _ = (input, ctx);
        Ok(())
    }

    /// What the gate judges for this input (docs/permissions.md, "Tools and kinds": the subject column).
    fn gate_call(&self, input: &serde_json::Value) -> Call {
        Call::from_input(self.tool(), input)
    }

    /// Runs the call. Must end promptly when `ctx.cancel` fires.
    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult;
}

/// The handler of one tool.
pub fn handler(tool: Tool) -> Arc<dyn ToolHandler> {
    match tool {
        Tool::Read => Arc::new(ReadTool),
        Tool::Glob => Arc::new(GlobTool),
        Tool::Grep => Arc::new(GrepTool),
        Tool::WebFetch => Arc::new(WebFetchTool::new()),
        Tool::TodoWrite => Arc::new(TodoWriteTool),
        Tool::Write => Arc::new(WriteTool),
        Tool::Edit => Arc::new(EditTool),
        Tool::Bash => Arc::new(BashTool),
        Tool::AskUser => Arc::new(AskUserTool),
        Tool::EnterPlanMode => Arc::new(EnterPlanModeTool),
        Tool::ExitPlanMode => Arc::new(ExitPlanModeTool),
        Tool::Sleep => Arc::new(SleepTool),
        Tool::Task => Arc::new(TaskTool),
        // MCP tools come from their servers (crate::mcp::McpHub::handler); a call
        // of the bare tool cannot run.
        Tool::Mcp => Arc::new(UnknownMcp),
        Tool::Net => Arc::new(NetSubject),
    }
}

/// The handler of [`Tool::Mcp`] without a server behind it: every call is an error.
struct UnknownMcp;

#[async_trait]
impl ToolHandler for UnknownMcp {
    fn tool(&self) -> Tool {
        Tool::Mcp
    }

    fn description(&self) -> &str {
        "An MCP tool of a server that is not running."
    }

    fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }

    async fn execute(&self, _input: serde_json::Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::error("no MCP server runs this tool")
    }
}

/// `net` is a subject of rules and of `decode check`, never a tool the model
/// can call (docs/network.md): agents cannot list it, and a call of it is refused.
struct NetSubject;

#[async_trait]
impl ToolHandler for NetSubject {
    fn tool(&self) -> Tool {
        Tool::Net
    }

    fn description(&self) -> &'static str {
        "not a tool"
    }

    fn input_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }

    async fn execute(&self, _input: serde_json::Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::error("`net` is not a tool: it names network destinations in rules")
    }
}

/// Every tool's handler, in [`Tool::ALL`] order.
pub fn registry() -> Vec<Arc<dyn ToolHandler>> {
    for_agent(&Tool::ALL)
}

/// Exactly the handlers of `tools`, in the order given (an agent's `tools` list).
pub fn for_agent(tools: &[Tool]) -> Vec<Arc<dyn ToolHandler>> {
    tools.iter().map(|t| handler(*t)).collect()
}
