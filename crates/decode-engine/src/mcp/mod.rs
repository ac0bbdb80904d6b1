//! MCP servers through the same gate (docs/mcp.md).
//!
//! Decode is a client of the Model Context Protocol on the official Rust SDK (`rmcp`):
//! stdio servers (started in the bash tool's sandbox) and streamable HTTP servers.
//! One [`McpHub`] per open project holds its servers:
//!
//! - [`config`]: the person's `~/.config/decode/mcp.json` and the project's
//!   `.decode/mcp.json` / `.mcp.json` (Claude Code's format), read as hostile input;
//! - [`approvals`]: a project's server starts only in a trusted project and only
//!   after the person approved its exact command line (recorded in the data folder;
//!   a changed one asks again);
//! - [`client`]: one connection (the sandboxed process or the HTTP session, the guard
//!   on what a server sends);
//! - [`results`]: what a server returns, escaped and capped; images as data.
//!
//! Every tool appears to the model as `mcp__SERVER__TOOL` and every call goes through
//! [`crate::tools::call_tool`] like any other: the gate judges the JSON arguments, an
//! ask goes to the one decision channel, and the window shows an ordinary tool card.
//! A server that crashes, hangs past its timeout or sends a malformed message is
//! reported (in the call's result and in [`McpHub::servers`]) and restarted at most
//! [`MAX_RESTARTS`] times; the chat goes on.

pub mod approvals;
pub mod client;
pub mod config;
pub mod results;
mod tool;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use decode_policy::McpName;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::state::ActiveState;
use crate::tools::{ToolHandler, ToolResult};
pub use approvals::{Approval, Approvals};
pub use config::{Scope, ServerConfig, Transport};
pub use tool::McpToolHandler;

/// How many times a failed server is started again.
pub const MAX_RESTARTS: u32 = 2;
/// The longest description of a tool passed on to the model.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// The largest input schema passed on (its JSON); a larger one becomes `{"type":"object"}`.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// Where a server stands (the window's `mcp-server` `data-status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started yet.
    Stopped,
    /// Starting (or restarting).
    Starting,
    /// Running; its tools are offered.
    Ready,
    /// It failed and is not running (the detail says why).
    Failed,
    /// `"disabled": true`, or the person turned it off.
    Disabled,
    /// A project server in a project the person has not trusted.
    Untrusted,
    /// A project server the person has not approved (or whose command line changed).
    NeedsApproval,
    /// A project server the person refused.
    Refused,
}

impl Status {
    /// The name it is serialised under.
    pub fn name(self) -> &'static str {
        decode_policy::serde_name(&self)
    }
}

/// One tool of a server, as offered.
#[derive(Debug, Clone, Serialize)]
pub struct McpTool {
    /// `mcp__SERVER__TOOL`, what the model calls and rules name.
    pub name: String,
    /// The server's own name for it.
    pub original: String,
    pub server: String,
    /// The server's title for it, escaped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the model is told (the server's description, escaped and capped).
    pub description: String,
    pub input_schema: serde_json::Value,
    /// What the server says of itself: shown, never trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
}

/// A server as the settings list and `decode mcp list` show it.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    pub name: String,
    /// `user` or `project`.
    pub scope: &'static str,
    /// The file it is configured in.
    pub file: PathBuf,
    /// What runs (escaped).
    pub command_line: String,
    pub status: Status,
    /// Why it failed, or what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub restarts: u32,
    /// A stdio server: whether it runs in the sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandboxed: Option<bool>,
    pub tools: Vec<ToolInfo>,
}

/// A tool as listed for the person.
#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    /// What the server claims (not trusted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// Whether the person marked it read-only in their own settings.
    pub marked_read_only: bool,
    /// Whether the active agent offers it to the model.
    pub offered: bool,
}

struct SlotState {
    status: Status,
    detail: Option<String>,
    tools: Vec<McpTool>,
    sandboxed: Option<bool>,
}

/// One configured server and its connection.
struct Slot {
    config: ServerConfig,
    /// Turned off: `"disabled": true` in its file when the hub opened, or turned off
    /// since in the window ([`McpHub::set_enabled`]).
    off: AtomicBool,
    conn: tokio::sync::Mutex<Option<Arc<client::Connection>>>,
    state: Mutex<SlotState>,
    restarts: AtomicU32,
}

impl Slot {
    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, status: Status, detail: Option<String>) {
        let mut s = self.state();
        s.status = status;
        s.detail = detail;
    }
}

/// The MCP servers of one open project (see the module docs).
pub struct McpHub {
    active: Arc<ActiveState>,
    slots: Vec<Arc<Slot>>,
    problems: Vec<String>,
    /// Set once [`McpHub::ensure_started`] has started the servers.
    started: tokio::sync::OnceCell<()>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl McpHub {
    /// Reads the config files for `active`'s project (the person's config folder as
    /// the environment places it) and decides which servers may start. Nothing
    /// starts yet: see [`McpHub::start`].
    pub fn open(active: Arc<ActiveState>) -> Arc<McpHub> {
        let config_dir = decode_core::mcp::user_config_dir(active.home());
        Self::open_with(active, &config_dir)
    }

    /// [`McpHub::open`] with the person's config folder given.
    pub fn open_with(active: Arc<ActiveState>, config_dir: &std::path::Path) -> Arc<McpHub> {
        let loaded = config::load(config_dir, active.project_root());
        for p in &loaded.problems {
            tracing::warn!("MCP config: {p}");
        }
        let slots = loaded
            .servers
            .into_iter()
            .map(|config| {
                let (status, detail) = Self::gate_status(&active, &config, config.disabled);
                Arc::new(Slot {
                    off: AtomicBool::new(config.disabled),
                    config,
                    conn: tokio::sync::Mutex::new(None),
                    state: Mutex::new(SlotState {
                        status,
                        detail,
                        tools: Vec::new(),
                        sandboxed: None,
                    }),
                    restarts: AtomicU32::new(0),
                })
            })
            .collect();
        Arc::new(McpHub {
            active,
            slots,
            problems: loaded.problems,
            started: tokio::sync::OnceCell::new(),
        })
    }

    /// Whether `config` may start here, and if not, why.
    fn gate_status(
        active: &ActiveState,
        config: &ServerConfig,
        off: bool,
    ) -> (Status, Option<String>) {
        if off {
            return (
                Status::Disabled,
                Some("turned off (`\"disabled\": true`)".into()),
            );
        }
        if let Scope::Project { .. } = config.scope {
            if !active.trusted() {
                return (
                    Status::Untrusted,
                    Some(format!(
                        "a project server starts only in a trusted project (`decode trust {}`)",
                        active.project_root().display()
                    )),
                );
            }
            let Some(data) = active.data_dir() else {
                return (
                    Status::NeedsApproval,
                    Some("no data folder to record an approval in".into()),
                );
            };
            match Approvals::open(data).status(active.project_root(), config) {
                Approval::Approved => {}
                Approval::Refused => {
                    return (Status::Refused, Some("you refused this server".into()))
                }
                Approval::Unanswered { changed } => {
                    let why = if changed {
                        "its command line changed since you approved it: approve it again"
                    } else {
                        "a project server starts only after you approve its command line"
                    };
                    return (
                        Status::NeedsApproval,
                        Some(format!("{why} (`decode mcp approve {}`)", config.name)),
                    );
                }
            }
        }
        (Status::Stopped, None)
    }

    /// What was wrong with the config files (one line each).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The configured servers, in config order.
    pub fn configs(&self) -> Vec<ServerConfig> {
        self.slots.iter().map(|s| s.config.clone()).collect()
    }

    /// The project servers waiting for the person's approval (for the trust dialog),
    /// with whether their command line changed since an earlier approval.
    pub fn pending_approvals(&self) -> Vec<(ServerConfig, bool)> {
        let Some(data) = self.active.data_dir() else {
            return Vec::new();
        };
        let store = Approvals::open(data);
        self.slots
            .iter()
            .filter(|s| matches!(s.config.scope, Scope::Project { .. }) && !s.config.disabled)
            .filter_map(
                |s| match store.status(self.active.project_root(), &s.config) {
                    Approval::Unanswered { changed } => Some((s.config.clone(), changed)),
                    _ => None,
                },
            )
            .collect()
    }

    /// Records the person's answer for a project server (approve: it may start;
    /// refuse: it stays off). The next [`McpHub::start`] follows it.
    pub fn answer(&self, name: &str, approved: bool) -> Result<(), String> {
        let slot = self
            .slot(name)
            .ok_or_else(|| format!("no MCP server `{name}`"))?;
        if !matches!(slot.config.scope, Scope::Project { .. }) {
            return Err(format!("`{name}` is your own server: it needs no approval"));
        }
        let data = self
            .active
            .data_dir()
            .ok_or("no data folder to record the answer in")?;
        Approvals::open(data)
            .record(self.active.project_root(), &slot.config, approved)
            .map_err(|e| e.to_string())?;
        let (status, detail) =
            Self::gate_status(&self.active, &slot.config, slot.off.load(Ordering::SeqCst));
        slot.set(status, detail);
        Ok(())
    }

    /// Turns a server on or off, as the window's settings list does. One of the
    /// person's own servers gets (or loses) `"disabled": true` in its file; a project's
    /// server is approved or refused (the record `decode mcp approve|refuse` writes,
    /// bound to its whole entry). Turned on, it starts now (a failure is its status);
    /// turned off, it stops now. An error says what could not be recorded.
    pub async fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), String> {
        let slot = Arc::clone(
            self.slot(name)
                .ok_or_else(|| format!("no MCP server `{name}`"))?,
        );
        match &slot.config.scope {
            Scope::Project { .. } => self.answer(&slot.config.name, enabled)?,
            Scope::User { file } => {
                config::set_disabled(file, &slot.config.name, !enabled)?;
                slot.off.store(!enabled, Ordering::SeqCst);
            }
        }
        if enabled {
            // A project's entry with `"disabled": true` stays off: the file says so.
            let off = slot.off.load(Ordering::SeqCst);
            let (status, detail) = Self::gate_status(&self.active, &slot.config, off);
            if status == Status::Stopped {
                self.start_slot(Arc::clone(&slot)).await;
            } else {
                slot.set(status, detail);
            }
        } else {
            // Dropping the connection ends the server's process group.
            slot.conn.lock().await.take();
            let off = slot.off.load(Ordering::SeqCst);
            let (status, detail) = Self::gate_status(&self.active, &slot.config, off);
            slot.set(status, detail);
            slot.state().tools.clear();
        }
        tracing::info!(server = %slot.config.name, enabled, "MCP server turned on or off by the person");
        Ok(())
    }

    fn slot(&self, name: &str) -> Option<&Arc<Slot>> {
        self.slots
            .iter()
            .find(|s| s.config.name.eq_ignore_ascii_case(name))
    }

    /// Starts every server that may start and is not running, at once; returns when
    /// each is ready or has failed (a failure is in [`McpHub::servers`]).
    pub async fn start(&self) {
        let mut jobs = Vec::new();
        for slot in &self.slots {
            let (status, detail) =
                Self::gate_status(&self.active, &slot.config, slot.off.load(Ordering::SeqCst));
            if status != Status::Stopped {
                slot.set(status, detail);
                continue;
            }
            jobs.push(self.start_slot(Arc::clone(slot)));
        }
        futures_util::future::join_all(jobs).await;
    }

    /// [`McpHub::start`] the first time only (a chat's first turn): a server that
    /// failed to start is not tried again on every turn; one that was approved since
    /// starts with [`McpHub::start_one`].
    pub async fn ensure_started(&self) {
        self.started.get_or_init(|| self.start()).await;
    }

    /// Starts one server by name (for `decode tool`); an error says why it cannot.
    pub async fn start_one(&self, name: &str) -> Result<(), String> {
        let slot = Arc::clone(
            self.slot(name)
                .ok_or_else(|| format!("no MCP server `{name}` is configured"))?,
        );
        let (status, detail) =
            Self::gate_status(&self.active, &slot.config, slot.off.load(Ordering::SeqCst));
        if status != Status::Stopped {
            slot.set(status, detail.clone());
            return Err(detail.unwrap_or_else(|| status.name().to_string()));
        }
        self.start_slot(Arc::clone(&slot)).await;
        let s = slot.state();
        match s.status {
            Status::Ready => Ok(()),
            _ => Err(s
                .detail
                .clone()
                .unwrap_or_else(|| "it did not start".into())),
        }
    }

    async fn start_slot(&self, slot: Arc<Slot>) {
        let mut conn = slot.conn.lock().await;
        if conn.as_ref().is_some_and(|c| !c.is_closed()) {
            return;
        }
        *conn = None;
        self.connect_locked(&slot, &mut conn).await;
    }

    /// Connects `slot` (its connection lock held): ready with its tools, or failed.
    async fn connect_locked(
        &self,
        slot: &Slot,
        conn: &mut Option<Arc<client::Connection>>,
    ) -> bool {
        slot.set(Status::Starting, None);
        match client::connect(&slot.config, &self.active).await {
            Ok(c) => {
                let (tools, problems) = offered_tools(&slot.config.name, &c.tools);
                for p in &problems {
                    tracing::warn!(server = %slot.config.name, "{p}");
                }
                {
                    let mut s = slot.state();
                    s.status = Status::Ready;
                    s.detail = (!problems.is_empty()).then(|| problems.join("; "));
                    s.tools = tools;
                    s.sandboxed = c.sandboxed;
                }
                tracing::info!(server = %slot.config.name, tools = slot.state().tools.len(), sandboxed = ?c.sandboxed, "MCP server ready");
                *conn = Some(Arc::new(c));
                true
            }
            Err(e) => {
                tracing::warn!(server = %slot.config.name, "MCP server failed to start: {e}");
                slot.set(Status::Failed, Some(e));
                false
            }
        }
    }

    /// The servers with their status and tools (for the settings list and `decode mcp
    /// list`).
    pub fn servers(&self) -> Vec<ServerInfo> {
        let gate = self.active.gate();
        self.slots
            .iter()
            .map(|slot| {
                let s = slot.state();
                // A server that is not running says what would happen now: the folder
                // may have been trusted, or the server approved, since the hub opened.
                let (status, detail) = match s.status {
                    Status::Untrusted | Status::NeedsApproval | Status::Refused => {
                        Self::gate_status(
                            &self.active,
                            &slot.config,
                            slot.off.load(Ordering::SeqCst),
                        )
                    }
                    _ => (s.status, s.detail.clone()),
                };
                ServerInfo {
                    name: slot.config.name.clone(),
                    scope: slot.config.scope.name(),
                    file: slot.config.scope.file().to_path_buf(),
                    command_line: slot.config.command_line(),
                    status,
                    detail,
                    restarts: slot.restarts.load(Ordering::Relaxed),
                    sandboxed: s.sandboxed,
                    tools: s
                        .tools
                        .iter()
                        .map(|t| {
                            let name = McpName::parse(&t.name);
                            ToolInfo {
                                name: t.name.clone(),
                                title: t.title.clone(),
                                description: t.description.clone(),
                                read_only_hint: t.read_only_hint,
                                marked_read_only: name
                                    .as_ref()
                                    .is_some_and(|n| gate.mcp_marked_read_only(n)),
                                offered: name.as_ref().is_some_and(|n| gate.offers_mcp(n)),
                            }
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// [`McpHub::servers`] as the window's settings list shows them.
    pub fn views(&self) -> Vec<decode_protocol::McpServerView> {
        self.servers()
            .into_iter()
            .map(|s| decode_protocol::McpServerView {
                name: s.name,
                scope: s.scope.to_string(),
                file: s.file.display().to_string(),
                command_line: s.command_line,
                status: s.status.name().to_string(),
                detail: s.detail,
                restarts: s.restarts,
                sandboxed: s.sandboxed,
                tools: s
                    .tools
                    .into_iter()
                    .map(|t| decode_protocol::McpToolView {
                        name: t.name,
                        title: t.title,
                        read_only_hint: t.read_only_hint,
                        marked_read_only: t.marked_read_only,
                        offered: t.offered,
                    })
                    .collect(),
            })
            .collect()
    }

    /// Lists again the tools of every running server that said its list changed
    /// (`notifications/tools/list_changed`).
    pub async fn refresh_tools(&self) {
        for slot in &self.slots {
            let conn = {
                let guard = slot.conn.lock().await;
                match guard.as_ref() {
                    Some(c)
                        if c.tools_changed
                            .swap(false, std::sync::atomic::Ordering::Relaxed) =>
                    {
                        Arc::clone(c)
                    }
                    _ => continue,
                }
            };
            let listed =
                tokio::time::timeout(config::START_TIMEOUT, client::list_tools(conn.peer())).await;
            match listed {
                Ok(Ok(tools)) => {
                    let (tools, problems) = offered_tools(&slot.config.name, &tools);
                    let mut s = slot.state();
                    s.tools = tools;
                    s.detail = (!problems.is_empty()).then(|| problems.join("; "));
                    tracing::info!(server = %slot.config.name, tools = s.tools.len(), "MCP tools listed again");
                }
                Ok(Err(e)) => {
                    tracing::warn!(server = %slot.config.name, "listing the changed tools failed: {e}")
                }
                Err(_) => {
                    tracing::warn!(server = %slot.config.name, "listing the changed tools timed out")
                }
            }
        }
    }

    /// Every tool of the running servers.
    pub fn tools(&self) -> Vec<McpTool> {
        self.slots
            .iter()
            .filter(|s| s.state().status == Status::Ready)
            .flat_map(|s| s.state().tools.clone())
            .collect()
    }

    /// The handlers of the running servers' tools that the active agent offers.
    pub fn handlers(self: &Arc<Self>) -> Vec<Arc<dyn ToolHandler>> {
        let gate = self.active.gate();
        self.tools()
            .into_iter()
            .filter_map(|t| {
                let name = McpName::parse(&t.name)?;
                gate.offers_mcp(&name).then(|| {
                    Arc::new(McpToolHandler::new(Arc::clone(self), t, name)) as Arc<dyn ToolHandler>
                })
            })
            .collect()
    }

    /// The handler of one tool by its full name (any case), if a running server has it.
    pub fn handler(self: &Arc<Self>, name: &str) -> Option<Arc<dyn ToolHandler>> {
        let tool = self
            .tools()
            .into_iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))?;
        let parsed = McpName::parse(&tool.name)?;
        Some(Arc::new(McpToolHandler::new(
            Arc::clone(self),
            tool,
            parsed,
        )))
    }

    /// Calls a tool (after the gate allowed it): within the server's timeout, ended
    /// when `cancel` fires (the server is told: `notifications/cancelled`). A server
    /// that crashed, hung or sent a malformed message is restarted (at most
    /// [`MAX_RESTARTS`] times) and the result says so.
    pub async fn call(
        &self,
        tool: &McpTool,
        arguments: serde_json::Value,
        cancel: &CancellationToken,
        progress: &crate::tools::ProgressSink,
    ) -> ToolResult {
        let Some(slot) = self.slot(&tool.server).cloned() else {
            return ToolResult::error(format!("MCP server `{}` is not configured", tool.server));
        };
        if matches!(slot.config.scope, Scope::Project { .. }) && !self.active.trusted() {
            return ToolResult::error(format!(
                "MCP server `{}` is a project server and the project is not trusted",
                tool.server
            ));
        }
        let conn = match self.live_connection(&slot, progress).await {
            Ok(c) => c,
            Err(why) => {
                return ToolResult::error(format!(
                    "MCP server `{}` is not running ({}); its tools cannot be used now",
                    tool.server,
                    results::escape_text(&why)
                ))
            }
        };
        let arguments = match arguments {
            serde_json::Value::Object(m) => Some(m),
            serde_json::Value::Null => None,
            _ => return ToolResult::error("the arguments of an MCP tool must be a JSON object"),
        };
        let mut params = rmcp::model::CallToolRequestParams::new(tool.original.clone());
        params.arguments = arguments;
        let timeout = slot.config.timeout;
        let peer = conn.peer().clone();
        let outcome = {
            // Dropped at the end of this block: a request still waiting sends
            // `notifications/cancelled`.
            let call = peer.call_tool(params);
            tokio::pin!(call);
            tokio::select! {
                r = tokio::time::timeout(timeout, &mut call) => r,
                _ = cancel.cancelled() => {
                    return ToolResult::error(format!(
                        "[cancelled: the call to {} was stopped and the server told]",
                        tool.name
                    ));
                }
            }
        };
        let failure = match outcome {
            Ok(Ok(result)) => return results::convert(result),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                return ToolResult::error(format!(
                    "MCP server `{}` answered with an error: {} (code {})",
                    tool.server,
                    results::escape_text(&e.message),
                    e.code.0
                ));
            }
            Ok(Err(rmcp::ServiceError::UnexpectedResponse)) => {
                "it answered with something that is not a tool result".to_string()
            }
            Ok(Err(e)) => {
                let why = conn.diag.explain();
                if why.is_empty() {
                    format!("its connection failed ({e})")
                } else {
                    format!("its connection failed ({e}): {why}")
                }
            }
            Err(_) => format!(
                "it did not answer within {} s (its timeout)",
                timeout.as_secs_f64()
            ),
        };
        let note = self.fail(&slot, &conn, failure.clone()).await;
        (progress)(crate::tools::ToolProgress::Note { text: note.clone() });
        ToolResult::error(format!(
            "MCP server `{}` failed: {}. {note}",
            tool.server,
            results::escape_text(&failure)
        ))
    }

    /// The server's running connection; one that ended while idle (the process
    /// exited, the guard closed it) is reported and the server restarted first (if it
    /// has restarts left).
    async fn live_connection(
        &self,
        slot: &Slot,
        progress: &crate::tools::ProgressSink,
    ) -> Result<Arc<client::Connection>, String> {
        let ended = {
            let guard = slot.conn.lock().await;
            match guard.as_ref() {
                Some(c) if !c.is_closed() => return Ok(Arc::clone(c)),
                Some(c) => Arc::clone(c),
                None => {
                    let s = slot.state();
                    return Err(s
                        .detail
                        .clone()
                        .unwrap_or_else(|| s.status.name().to_string()));
                }
            }
        };
        let why = ended.diag.explain();
        let reason = if why.is_empty() {
            "it exited".to_string()
        } else {
            format!("it exited: {why}")
        };
        let note = self.fail(slot, &ended, reason.clone()).await;
        (progress)(crate::tools::ToolProgress::Note {
            text: format!("MCP server `{}` {reason}. {note}", slot.config.name),
        });
        let guard = slot.conn.lock().await;
        match guard.as_ref() {
            Some(c) if !c.is_closed() => Ok(Arc::clone(c)),
            _ => Err(format!("{reason}. {note}")),
        }
    }

    /// Takes a failed connection down and starts the server again if it has restarts
    /// left; returns what happened, for the result.
    async fn fail(&self, slot: &Slot, failed: &Arc<client::Connection>, reason: String) -> String {
        let mut guard = slot.conn.lock().await;
        match guard.as_ref() {
            Some(c) if Arc::ptr_eq(c, failed) => {
                *guard = None;
            }
            // Another call already dealt with it.
            _ => return "Decode already restarted it.".to_string(),
        }
        tracing::warn!(server = %slot.config.name, "MCP server failed: {reason}");
        let done = slot.restarts.load(Ordering::Relaxed);
        if done >= MAX_RESTARTS {
            slot.set(
                Status::Failed,
                Some(format!(
                    "{reason}; not restarted again (it was restarted {MAX_RESTARTS} times)"
                )),
            );
            return format!(
                "Decode does not restart it again (it was restarted {MAX_RESTARTS} times); its tools stay unavailable."
            );
        }
        slot.restarts.store(done + 1, Ordering::Relaxed);
        if self.connect_locked(slot, &mut guard).await {
            format!(
                "Decode restarted it (restart {} of {MAX_RESTARTS}); the call was not run again.",
                done + 1
            )
        } else {
            let why = slot.state().detail.clone().unwrap_or_default();
            slot.set(
                Status::Failed,
                Some(format!("{reason}; restarting it failed: {why}")),
            );
            format!(
                "Decode tried to restart it, and that failed: {}",
                results::escape_text(&why)
            )
        }
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        for slot in &self.slots {
            let mut c = slot.conn.lock().await;
            if c.take().is_some() {
                slot.set(Status::Stopped, None);
            }
        }
    }
}

/// The tools of a server as offered: full names made from the server's names (two
/// that come out the same, whatever the case, are refused with a problem line), the
/// description escaped and capped, the schema kept when it is an object of a sane
/// size.
fn offered_tools(server: &str, tools: &[rmcp::model::Tool]) -> (Vec<McpTool>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for t in tools {
        let original = t.name.to_string();
        let name = decode_policy::mcp::full_name(server, &original);
        if !seen.insert(name.to_ascii_lowercase()) {
            problems.push(format!(
                "tool `{}` is left out: another tool of this server is offered as `{name}` too",
                results::escape_text(&original)
            ));
            continue;
        }
        let description: String = results::escape_text(t.description.as_deref().unwrap_or(""))
            .chars()
            .take(MAX_DESCRIPTION_CHARS)
            .collect();
        let mut schema = serde_json::Value::Object((*t.input_schema).clone());
        if schema.to_string().len() > MAX_SCHEMA_BYTES {
            problems.push(format!(
                "tool `{name}`: its input schema is larger than {} KB; the model sees only that it takes an object",
                MAX_SCHEMA_BYTES / 1024
            ));
            schema = serde_json::json!({"type": "object"});
        }
        if let Some(obj) = schema.as_object_mut() {
            obj.entry("type").or_insert_with(|| "object".into());
        }
        let annotations = t.annotations.as_ref();
        out.push(McpTool {
            name,
            original,
            server: server.to_string(),
            title: t
                .title
                .as_deref()
                .or(annotations.and_then(|a| a.title.as_deref()))
                .map(results::escape_text),
            description,
            input_schema: schema,
            read_only_hint: annotations.and_then(|a| a.read_only_hint),
            destructive_hint: annotations.and_then(|a| a.destructive_hint),
        });
    }
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_are_the_window_s_data_status() {
        assert_eq!(Status::NeedsApproval.name(), "needs_approval");
        assert_eq!(Status::Ready.name(), "ready");
    }

    #[test]
    fn tools_with_the_same_offered_name_are_refused_clearly() {
        let mk =
            |n: &str| rmcp::model::Tool::new(n.to_string(), "d", Arc::new(serde_json::Map::new()));
        let (tools, problems) =
            offered_tools("s", &[mk("read"), mk("READ"), mk("a b"), mk("x\u{1b}")]);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!(names[0], "mcp__s__read");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("READ"));
        assert_eq!(tools[0].input_schema, serde_json::json!({"type": "object"}));
    }
}
