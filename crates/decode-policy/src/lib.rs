//! Decode's permission gate (docs/permissions.md).
//!
//! [`Gate::new`] compiles the rules of a project and an agent once;
//! [`Gate::decide`] judges one tool call in a mode and explains why:
//! allow, ask or deny, a one-line reason, and the trace of the stages.

mod aliases;
mod branches;
pub mod decide;
mod globx;
pub mod hidden;
pub mod input;
mod matcher;
pub mod mcp;
pub mod mode;
pub mod net;
mod options;
pub mod paths;
mod programs;
mod protected_names;
pub mod rules;
mod shell;
pub mod tool;
pub mod trace;
mod urls;

pub use decide::{protected_anywhere, Gate, ProtectedKind, ProtectedPath};
pub use input::{glob_search, AgentPolicy, Call, EnclosingRules, Level, LevelRules, PolicyInput};
pub use mcp::{McpName, McpPattern};
pub use mode::{Mode, ModeError};
pub use rules::{escape_glob, Rule, RuleError, RuleList, RuleLists};
pub use shell::{fragments, Fragments, MAX_COMMAND_CHARS};
pub use tool::{Tool, ToolKind, UnknownTool};
pub use trace::{
    serde_name, CapKind, Decision, FragmentReport, Origin, PolicyWarning, Stage, TraceStep, Verdict,
};
pub use urls::normalize_url;

/// Whether git runs a program, or reads other files, named by the configuration
/// key `key` (`core.fsmonitor`, `core.hooksPath`, `alias.x`, `difftool.x.path`,
/// `include.path`, …): the sandbox disarms such keys in a repository a command
/// created.
pub fn git_config_key_runs(key: &str) -> bool {
    key.eq_ignore_ascii_case("core.hookspath") || programs::vcs::git_key_runs(key).is_some()
}
