//! Tools and their kinds (docs/permissions.md, "Tools and kinds").

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The kind of a tool decides how the mode table (docs/permissions.md, "Modes") treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// `read`, `glob`, `grep`, `web_fetch`, `todo_write`.
    ReadOnly,
    /// `write`, `edit`.
    FileEdit,
    /// `bash`, and MCP tools the person has not marked read-only.
    Other,
    /// `ask_user`, `enter_plan_mode`, `exit_plan_mode`, `sleep`, `task`: never
    /// gated (the calls a `task` subagent makes are).
    Control,
}

impl ToolKind {
    /// The snake_case name (`read_only`, `file_edit`, `other`, `control`).
    pub fn name(self) -> &'static str {
        crate::trace::serde_name(&self)
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every tool the agent can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    Read,
    Glob,
    Grep,
    WebFetch,
    TodoWrite,
    Write,
    Edit,
    Bash,
    AskUser,
    EnterPlanMode,
    ExitPlanMode,
    Sleep,
    /// Starts a subagent of the catalog on a sub-task (docs/agents.md,
    /// "Subagents"): never gated itself; every call the subagent makes is.
    Task,
    /// A tool of an MCP server (`mcp__SERVER__TOOL`, docs/mcp.md). Not in
    /// [`Tool::ALL`] (the built-in tools): a [`crate::Call`] of it carries the full
    /// name beside it, and [`Tool::from_name`] never returns it (MCP names are
    /// parsed by [`crate::mcp::McpName`]).
    Mcp,
    /// A network destination (docs/network.md): the subject of `net(domain:HOST)`
    /// rules and of `decode check net HOST`. Never offered to the model: not in
    /// [`Tool::ALL`].
    Net,
}

impl Tool {
    /// Every built-in tool, in a stable order (MCP tools are [`Tool::Mcp`]).
    pub const ALL: [Tool; 13] = [
        Tool::Read,
        Tool::Glob,
        Tool::Grep,
        Tool::WebFetch,
        Tool::TodoWrite,
        Tool::Write,
        Tool::Edit,
        Tool::Bash,
        Tool::AskUser,
        Tool::EnterPlanMode,
        Tool::ExitPlanMode,
        Tool::Sleep,
        Tool::Task,
    ];

    /// Looks a tool up by name, case-insensitively. Accepts our snake_case names
    /// and Claude Code's names (`WebFetch`, `TodoWrite`, ...): underscores and
    /// dashes are ignored, so `web_fetch`, `webfetch` and `WebFetch` are one tool.
    pub fn from_name(name: &str) -> Option<Tool> {
        let name = name.trim();
        if name.is_empty() || name.len() > 32 {
            return None;
        }
        let mut key = String::with_capacity(name.len());
        for c in name.chars() {
            if c == '_' || c == '-' {
                continue;
            }
            if !c.is_ascii_alphanumeric() {
                return None;
            }
            key.push(c.to_ascii_lowercase());
        }
        Some(match key.as_str() {
            "read" => Tool::Read,
            "glob" => Tool::Glob,
            "grep" => Tool::Grep,
            "webfetch" => Tool::WebFetch,
            "todowrite" => Tool::TodoWrite,
            "write" => Tool::Write,
            "edit" => Tool::Edit,
            "bash" => Tool::Bash,
            "askuser" => Tool::AskUser,
            "enterplanmode" => Tool::EnterPlanMode,
            "exitplanmode" => Tool::ExitPlanMode,
            "sleep" => Tool::Sleep,
            "task" => Tool::Task,
            "net" => Tool::Net,
            _ => return None,
        })
    }

    /// The canonical snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Read => "read",
            Tool::Glob => "glob",
            Tool::Grep => "grep",
            Tool::WebFetch => "web_fetch",
            Tool::TodoWrite => "todo_write",
            Tool::Write => "write",
            Tool::Edit => "edit",
            Tool::Bash => "bash",
            Tool::AskUser => "ask_user",
            Tool::EnterPlanMode => "enter_plan_mode",
            Tool::ExitPlanMode => "exit_plan_mode",
            Tool::Sleep => "sleep",
            Tool::Task => "task",
            Tool::Mcp => "mcp",
            Tool::Net => "net",
        }
    }

    /// The tool's kind (docs/permissions.md, "Tools and kinds"). An MCP tool is
    /// `other` here; the gate makes it `read_only` where the person marked it so.
    pub fn kind(self) -> ToolKind {
        match self {
            Tool::Read | Tool::Glob | Tool::Grep | Tool::WebFetch | Tool::TodoWrite => {
                ToolKind::ReadOnly
            }
            Tool::Write | Tool::Edit => ToolKind::FileEdit,
            Tool::Bash | Tool::Mcp | Tool::Net => ToolKind::Other,
            Tool::AskUser | Tool::EnterPlanMode | Tool::ExitPlanMode | Tool::Sleep | Tool::Task => {
                ToolKind::Control
            }
        }
    }

    /// `read`, `glob`, `grep`, `write`, `edit`: tools whose subject is a path.
    pub fn is_file_tool(self) -> bool {
        matches!(
            self,
            Tool::Read | Tool::Glob | Tool::Grep | Tool::Write | Tool::Edit
        )
    }

    /// Whether the model can be offered this tool (every tool but [`Tool::Net`],
    /// which is only a subject of rules and of `decode check`).
    pub fn is_model_tool(self) -> bool {
        self != Tool::Net
    }

    /// Control tools are never gated.
    pub fn is_control(self) -> bool {
        self.kind() == ToolKind::Control
    }

    /// The tools a rule naming `self` applies to: `edit(...)` covers `write` and
    /// `edit`; `read(...)` covers `read`, `glob` and `grep`.
    pub fn covered_by_rule(self) -> &'static [Tool] {
        match self {
            Tool::Read => &[Tool::Read, Tool::Glob, Tool::Grep],
            Tool::Edit => &[Tool::Write, Tool::Edit],
            Tool::Glob => &[Tool::Glob],
            Tool::Grep => &[Tool::Grep],
            Tool::WebFetch => &[Tool::WebFetch],
            Tool::TodoWrite => &[Tool::TodoWrite],
            Tool::Write => &[Tool::Write],
            Tool::Bash => &[Tool::Bash],
            Tool::AskUser => &[Tool::AskUser],
            Tool::EnterPlanMode => &[Tool::EnterPlanMode],
            Tool::ExitPlanMode => &[Tool::ExitPlanMode],
            Tool::Sleep => &[Tool::Sleep],
            Tool::Task => &[Tool::Task],
            Tool::Mcp => &[Tool::Mcp],
            // Host rules live in their own index (`matcher::HostRules`).
            Tool::Net => &[],
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// How many slots [`Tool::index`] spans (the built-ins, [`Tool::Mcp`] and
    /// [`Tool::Net`]).
    pub(crate) const SLOTS: usize = Tool::ALL.len() + 2;
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown tool name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{name}` (expected one of: read, glob, grep, web_fetch, todo_write, write, edit, bash, ask_user, enter_plan_mode, exit_plan_mode, sleep, task, or an MCP tool mcp__SERVER__TOOL)")]
pub struct UnknownTool {
    pub name: String,
}

impl std::str::FromStr for Tool {
    type Err = UnknownTool;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Tool::from_name(s).ok_or_else(|| UnknownTool {
            name: s.to_string(),
        })
    }
}

impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Tool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == Tool::Mcp.name() {
            return Ok(Tool::Mcp);
        }
        Tool::from_name(&s).ok_or_else(|| serde::de::Error::custom(UnknownTool { name: s }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Tool::ALL {
            assert_eq!(Tool::from_name(t.name()), Some(t));
            assert_eq!(t.index(), Tool::ALL.iter().position(|x| *x == t).unwrap());
        }
        assert_eq!(Tool::from_name("WebFetch"), Some(Tool::WebFetch));
        assert_eq!(Tool::from_name("webfetch"), Some(Tool::WebFetch));
        assert_eq!(Tool::from_name("TodoWrite"), Some(Tool::TodoWrite));
        assert_eq!(Tool::from_name("todo_write"), Some(Tool::TodoWrite));
        assert_eq!(Tool::from_name("BASH"), Some(Tool::Bash));
        assert_eq!(Tool::from_name("shell"), None);
        assert_eq!(Tool::from_name(""), None);
        assert_eq!(Tool::from_name("re ad"), None);
        // MCP tools are never found by name: their names are parsed apart.
        assert_eq!(Tool::from_name("mcp"), None);
        assert_eq!(Tool::from_name("mcp__github__create_issue"), None);
        assert_eq!(Tool::Mcp.index(), Tool::SLOTS - 2);
        assert_eq!(Tool::Net.index(), Tool::SLOTS - 1);
        assert_eq!(Tool::Mcp.kind(), ToolKind::Other);
        let back: Tool = serde_json::from_value(serde_json::json!("mcp")).unwrap();
        assert_eq!(back, Tool::Mcp);
    }
}
