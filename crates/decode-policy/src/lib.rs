//! Decode's permission gate (docs/permissions.md).
//!
//! [`Gate::new`] compiles the rules of a project and an agent once;
//! [`Gate::decide`] judges one tool call in a mode and explains why:
//! allow, ask or deny, a one-line reason, and the trace of the stages.

mod aliases;
mod branches;
mod caps;
pub mod decide;
mod external;
mod globx;
pub mod hidden;
pub mod input;
mod matcher;
pub mod mode;
mod options;
pub mod paths;
pub mod rules;
mod shell;
pub mod tool;
pub mod trace;

pub use decide::{normalize_url, protected_anywhere, Gate, ProtectedKind, ProtectedPath};
pub use input::{glob_search, AgentPolicy, Call, EnclosingRules, Level, LevelRules, PolicyInput};
pub use mode::{Mode, ModeError};
pub use rules::{escape_glob, Rule, RuleError, RuleList, RuleLists};
pub use shell::{fragments, Fragments, MAX_COMMAND_CHARS};
pub use tool::{Tool, ToolKind, UnknownTool};
pub use trace::{
    serde_name, CapKind, Decision, FragmentReport, Origin, PolicyWarning, Stage, TraceStep, Verdict,
};
