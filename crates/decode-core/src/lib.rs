//! Decode core: what a project is and who may do what in it, synchronous and
//! without tokio (the engine that runs prompts is `decode-engine`).
//!
//! - [`dirs`]: where Decode keeps its config, data and state (XDG);
//! - [`settings`]: the project's `.decode/settings.json` and always-allow persistence;
//! - [`levels`]: the managed, user and local settings levels around the project's file;
//! - [`user_settings`]: the person's own `~/.config/decode/settings.json` (its `sandbox` section);
//! - [`trust`]: which project folders the person trusts;
//! - [`agents`]: the agents catalog (built-ins and project agent files);
//! - [`state`]: the one active agent / mode / gate shared by every surface;
//! - [`decision`]: the one surface where a person answers asks, questions and plans;
//! - [`projects`]: what Decode remembers about folders (recent, trust asked, always-allowed rules);
//! - [`running_commands`]: the records of bash commands running now (the sandbox's baseline);
//! - [`mcp`]: the person's MCP read-only marks and the bounded reader of MCP config files;
//! - [`beneath`]: opening files beneath a folder without following links out of it.
//!
//! The types that cross to the surfaces live in `decode-protocol`.

pub mod agents;
pub mod beneath;
pub mod decision;
pub mod dirs;
pub mod display;
pub mod freshness;
pub mod fsutil;
pub mod levels;
pub mod mcp;
pub mod projects;
pub mod running_commands;
pub mod running_groups;
pub mod settings;
pub mod state;
pub mod trust;
pub mod user_settings;

pub use agents::{Agent, AgentError, AgentErrorKind, AgentFormat, AgentSource, Catalog};
pub use dirs::Dirs;
pub use levels::Levels;
pub use settings::{
    append_allow_rules, append_allow_rules_to, AppendOutcome, PersistError, Settings,
    SettingsWarning, WriteTarget,
};
pub use state::{ActiveState, AgentSummary, Diagnostic, Snapshot, StateError, SubscriptionId};
pub use trust::{TrustError, TrustStore};
