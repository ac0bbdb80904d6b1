//! Decode core: everything that is not the gate and not the window.
//!
//! - [`dirs`]: where Decode keeps its config, data and state (XDG);
//! - [`settings`]: the project's `.decode/settings.json` and always-allow persistence;
//! - [`trust`]: which project folders the person trusts;
//! - [`agents`]: the agents catalog (built-ins and project agent files);
//! - [`state`]: the one active agent / mode / gate shared by every surface;
//! - [`decision`]: the one surface where a person answers asks, questions and plans;
//! - [`tools`]: the tools the agent calls (each through the gate);
//! - [`providers`]: the model providers (Gemini, Anthropic, OpenAI-compatible, script);
//! - [`agent_loop`]: the loop that runs a prompt through model turns and gated tool calls;
//! - [`channel`]: the one queue of decisions every surface answers;
//! - [`session`]: the JSONL transcripts of conversations, and resuming them;
//! - [`config`]: the app's config file and API keys (env vars, OS keyring);
//! - [`session_rules`]: "allow for this session" rules, kept in memory;
//! - [`rule_check`]: checks rules a person edits before they are kept or saved;
//! - [`preview`]: the diff a write or edit would make, for the approval dialog;
//! - [`chat`]: one window's chat session: the loop, its transcript and its status;
//! - [`sandbox`]: the bubblewrap sandbox every unapproved bash command runs in;
//! - [`projects`]: what Decode remembers about folders (recent, trust asked, always-allowed rules);
//! - [`demo`]: the offline demo (a sample project and a script);
//! - [`workspace`]: what the window's screens around the chat read and change.
//!
//! The types that cross to the surfaces live in `decode-protocol`.

#[cfg(feature = "engine")]
pub mod agent_loop;
pub mod agents;
pub(crate) mod beneath;
#[cfg(feature = "engine")]
pub mod channel;
#[cfg(feature = "engine")]
pub mod chat;
#[cfg(feature = "engine")]
pub mod config;
pub mod decision;
#[cfg(feature = "engine")]
pub mod demo;
pub mod dirs;
pub mod display;
pub mod fsutil;
#[cfg(feature = "engine")]
pub mod preview;
pub mod projects;
#[cfg(feature = "engine")]
pub mod providers;
#[cfg(feature = "engine")]
pub mod rule_check;
pub mod running_commands;
#[cfg(feature = "engine")]
pub mod sandbox;
#[cfg(feature = "engine")]
pub mod secret;
#[cfg(feature = "engine")]
pub mod session;
#[cfg(feature = "engine")]
pub mod session_rules;
pub mod settings;
pub mod state;
#[cfg(feature = "engine")]
pub mod tools;
pub mod trust;
#[cfg(feature = "engine")]
pub mod workspace;

pub use agents::{Agent, AgentError, AgentErrorKind, AgentFormat, AgentSource, Catalog};
pub use dirs::Dirs;
pub use settings::{append_allow_rules, AppendOutcome, PersistError, Settings, SettingsWarning};
pub use state::{ActiveState, AgentSummary, Diagnostic, Snapshot, StateError, SubscriptionId};
pub use trust::{TrustError, TrustStore};
