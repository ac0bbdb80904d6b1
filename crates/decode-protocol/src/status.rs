//! What the surfaces show besides the conversation: the active agent and mode (the
//! status snapshot), and the chat session (provider, usage, session rules, todos).

use decode_policy::Mode;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::messages::Usage;
use crate::policy_ts::ModeTs;

/// One agent as listed to the surfaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgentSummary {
    /// The agent's name.
    pub name: String,
    /// Its one-line description.
    pub description: String,
}

/// What every surface shows: the active agent and mode, the agents to pick from, and
/// the project and whether it is trusted. Serialises as `{"agent", "mode"
/// (lowercase), "agents": [{"name", "description"}], "project", "trusted"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Snapshot {
    /// The active agent's name.
    pub agent: String,
    /// The active mode.
    #[ts(as = "ModeTs")]
    pub mode: Mode,
    /// Every agent of the catalog, in catalog order.
    pub agents: Vec<AgentSummary>,
    /// The project root.
    pub project: String,
    /// Whether the person trusts the project (its own allow rules count).
    pub trusted: bool,
    /// The modes the managed settings turned off here: not offered anywhere.
    /// Absent when every mode is offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ModeTs>>", optional)]
    pub disabled_modes: Vec<Mode>,
}

/// Where a todo item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TodoState {
    Pending,
    InProgress,
    Done,
}

/// One item of the agent's checklist (`todo_write`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Todo {
    pub content: String,
    pub status: TodoState,
}

/// A bound of the sandbox this machine cannot give (docs/sandbox.md): the status bar
/// says which, in amber, for as long as it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SandboxGap {
    /// No sandbox at all: commands run with the gate alone.
    Sandbox,
    /// A sandbox without a network of its own: commands reach the host's network
    /// directly, not through the proxy's host policy.
    Network,
}

/// The window's chat session: which model it talks to (or why it cannot), what it
/// used, what the person allowed for this session, and the agent's todo list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChatStatus {
    /// The transcript's id once the first prompt started it (`decode run --resume ID`).
    pub session_id: Option<String>,
    /// `openai`, `anthropic`, `gemini` or `script`; none when no provider is set up.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Why the chat cannot reach a model and how to set one up (several sentences).
    pub setup_problem: Option<String>,
    /// Why bash commands run without the sandbox on this machine (one sentence);
    /// none when the sandbox is enforced.
    pub sandbox_problem: Option<String>,
    /// Which bound is missing when `sandbox_problem` is set: the whole sandbox, or
    /// only the network of its own (commands reach the host's network directly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox_gap: Option<SandboxGap>,
    /// Tokens used by this session so far (every turn's input and output).
    pub usage: Usage,
    /// Whether a prompt is running.
    pub running: bool,
    /// Rules allowed "for this session": in memory only, never written.
    pub session_rules: Vec<String>,
    pub todos: Vec<Todo>,
}
