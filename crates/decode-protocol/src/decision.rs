//! What a person is asked (a permission ask, an `ask_user` question, a plan approval),
//! how they answer, and what the one decision channel tells every surface.

use decode_policy::{Decision, Mode, Tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::offered::Offered;
use crate::policy_ts::{DecisionTs, ModeTs, ToolTs};

/// Identifies one request in the decision channel.
pub type DecisionId = u64;

/// What a person is asked.
// A handful of requests exist per session: boxing the permission would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionRequest {
    /// The gate said "ask" for a tool call.
    Permission {
        #[ts(as = "ToolTs")]
        tool: Tool,
        /// The call's subject (command, path, URL) as the gate saw it.
        subject: String,
        /// What the agent said it wants to do: the call's `description`, else the
        /// last sentence it wrote before the call (the model's words, shown as text).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        intent: Option<String>,
        /// The tool's input, for display.
        input: Value,
        /// The gate's decision: reason, stages, fragments, whether it is capped and
        /// the rules "always allow" would save.
        #[ts(as = "DecisionTs")]
        decision: Decision,
        /// Bash: the folder the command would run in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cwd: Option<String>,
        /// Write and edit: the change the call would make, as a unified diff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        diff: Option<String>,
        /// Broader allow rules that would also be safe to save (`bash(npm run *)`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<_>", optional)]
        suggested_rules: Vec<String>,
        /// The person edited this command in an earlier ask; it is judged again.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        #[ts(as = "Option<_>", optional)]
        edited: bool,
        /// An MCP tool (`tool` is `mcp`): which one, and what its server claims.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mcp: Option<Box<McpCallInfo>>,
    },
    /// The model asked the person a question (`ask_user`).
    Question {
        question: String,
        /// Suggested answers; the person may also type their own.
        options: Vec<String>,
    },
    /// The model presents a plan to leave plan mode (`exit_plan_mode`).
    PlanApproval {
        plan: String,
        /// The modes the person may continue in, the first one the default (edit, auto,
        /// default — never plan or bypass, never a mode the settings disabled). An
        /// answer naming another mode is refused.
        #[serde(default = "plan_modes")]
        #[ts(as = "Vec<ModeTs>")]
        modes: Vec<Mode>,
    },
    /// A sandboxed command hit a bound of the sandbox: run it again outside, once?
    /// (Only allow once or deny.)
    RunOutside {
        /// The command, as it ran.
        command: String,
        /// The folder it ran in.
        cwd: String,
        /// The bound it hit.
        bound: SandboxBound,
        /// The end of what it printed (at most a few lines).
        output: String,
    },
    /// A sandboxed command opened a connection to a host the host policy asks
    /// about (docs/network.md): let it through? Answered like a permission ask:
    /// once (for this command), for this session, always (saves
    /// `net(domain:HOST)`) or deny.
    Network {
        /// The host it wants to reach (a name, or an address as written).
        host: String,
        port: u16,
        /// The command that opened the connection (the call the answer is for).
        command: String,
        /// The folder it runs in.
        cwd: String,
        /// The host policy's decision: reason, stages, whether it is capped and
        /// the rule "always allow" would save.
        #[ts(as = "DecisionTs")]
        decision: Decision,
    },
}

/// Which bound of the sandbox a command hit (docs/sandbox.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BoundKind {
    /// A write outside the places commands may write, or to a protected path.
    Write,
    /// A hidden file or folder (a credential store, Decode's own, a `read` deny
    /// rule's, the person's `sandbox.hidden`).
    Hidden,
    /// A service of the host (a display, a bus, an agent, a container engine, a
    /// terminal multiplexer).
    Service,
    /// The network (commands have a network of their own).
    Network,
}

/// A bound of the sandbox a command hit, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SandboxBound {
    pub kind: BoundKind,
    /// The path it hit, when the output names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The host it tried to reach, when the output names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub host: Option<String>,
    /// One sentence: which bound, which path or host, why.
    pub message: String,
    /// Whether running it again outside may be offered (never for a file a `read`
    /// deny rule covers: the rule holds outside too).
    pub may_run_outside: bool,
}

/// The MCP tool a permission ask is about (docs/mcp.md). Every text is the server's
/// and is shown as text (escaped), never as HTML.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpCallInfo {
    /// `mcp__SERVER__TOOL`, as rules name it.
    pub name: String,
    /// The server's name.
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The server's title for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    /// What the server says: that the tool only reads. Shown, never trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub read_only_hint: Option<bool>,
}

/// The modes a plan may be approved into, in the order offered.
pub fn plan_modes() -> Vec<Mode> {
    vec![Mode::Edit, Mode::Auto, Mode::Default]
}

impl DecisionRequest {
    /// A plan approval offering every plan mode.
    pub fn plan(plan: impl Into<String>) -> DecisionRequest {
        DecisionRequest::PlanApproval {
            plan: plan.into(),
            modes: plan_modes(),
        }
    }
}

/// Where "always allow" saves its rules (docs/permissions.md, "Answers").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum SaveTarget {
    /// This project, only me: `.decode/settings.local.json` (the default).
    #[default]
    Local,
    /// This project, shared: `.decode/settings.json`.
    Project,
    /// Every project: the person's own settings file.
    User,
}

impl SaveTarget {
    /// Every target, in the order the dialog offers them.
    pub const ALL: [SaveTarget; 3] = [SaveTarget::Local, SaveTarget::Project, SaveTarget::User];

    /// The settings level it writes.
    pub fn level(self) -> decode_policy::Level {
        match self {
            SaveTarget::Local => decode_policy::Level::Local,
            SaveTarget::Project => decode_policy::Level::Project,
            SaveTarget::User => decode_policy::Level::User,
        }
    }
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionAnswer {
    /// Permission: run this call once.
    AllowOnce,
    /// Permission: run it, and let the same rules allow such calls for the rest of this
    /// session (kept in memory, never written).
    AllowForSession { rules: Vec<String> },
    /// Permission: run it and save these allow rules (possibly edited by the person)
    /// to the file of `target` (absent: this project, only me — the local file).
    AlwaysAllow {
        rules: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        target: Option<SaveTarget>,
    },
    /// Permission (bash): run this command instead; it is judged again by the gate.
    EditCommand { command: String },
    /// Permission: do not run it; the feedback goes back to the model.
    Deny { feedback: Option<String> },
    /// Question: the person's answer.
    Answer { text: String },
    /// Plan: approved; continue in this mode (edit unless the person picked another).
    PlanApproved {
        #[ts(as = "ModeTs")]
        mode: Mode,
    },
    /// Plan: rejected; stay in plan mode; the feedback goes back to the model.
    PlanRejected { feedback: Option<String> },
    /// Nobody can answer (no terminal, the run was stopped): treated as a denial.
    Unavailable { reason: String },
}

/// What the decision channel tells the surfaces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChannelEvent {
    /// `request` is now the one to answer.
    Pending {
        id: DecisionId,
        request: DecisionRequest,
        /// What it offers (`request.offered()`, derived once when it was asked).
        offered: Offered,
        /// The subagent that asks (docs/agents.md, "Subagents"); none for the agent
        /// the person talks to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        agent: Option<String>,
    },
    /// `request` joined the queue behind the current one.
    Queued {
        id: DecisionId,
        request: DecisionRequest,
        /// What it offers (`request.offered()`, derived once when it was asked).
        offered: Offered,
        /// The subagent that asks; none for the agent the person talks to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        agent: Option<String>,
    },
    /// The request was answered (by a surface, or `cancel` / `gone` when the run
    /// stopped or its asker gave up): surfaces showing it close it.
    Resolved {
        id: DecisionId,
        by: String,
        answer: DecisionAnswer,
    },
}

/// A request waiting in the channel (current first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PendingDecision {
    pub id: DecisionId,
    pub request: DecisionRequest,
    /// What it offers (`request.offered()`, derived once when it was asked).
    pub offered: Offered,
    /// The subagent that asks; none for the agent the person talks to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
}

/// The verdict on rules a person wants "always allow" to save.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RuleCheck {
    /// Whether the rules may be saved for this call.
    pub ok: bool,
    /// Why not, one sentence each (empty when `ok`).
    pub problems: Vec<String>,
}
