//! What the window shows around the chat: recent projects, the trust dialog, the
//! settings screen (provider, key, the project's rules, test a call) and the saved
//! sessions.

use decode_policy::Decision;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::events::LoopEvent;
use crate::policy_ts::{DecisionTs, RuleListTs};
pub use decode_policy::RuleList;

/// A model provider, by the name the config, the flags and the keyring use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ProviderName {
    Gemini,
    Anthropic,
    /// Any OpenAI-compatible server (OpenAI, Ollama, llama.cpp, LM Studio, vLLM…).
    Openai,
    /// Replays a file of model turns (tests, the offline demo).
    Script,
}

/// A list of folder or branch names in the project's settings the window edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub enum SettingsList {
    #[serde(rename = "additionalDirectories")]
    AdditionalDirectories,
    #[serde(rename = "protectedBranches")]
    ProtectedBranches,
}

impl SettingsList {
    /// The key in `.decode/settings.json`.
    pub fn key(self) -> &'static str {
        match self {
            SettingsList::AdditionalDirectories => "additionalDirectories",
            SettingsList::ProtectedBranches => "protectedBranches",
        }
    }
}

/// Why the window's project changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OpenedKind {
    /// Another folder, on a new conversation.
    Folder,
    /// A saved session (its history comes with it).
    Session,
    /// The same folder and session with a new model setup.
    Reconnected,
    /// The same folder, a new conversation (the old one stays in the sessions list).
    NewChat,
}

/// Everything the page needs to start over on the project open now, without reloading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProjectOpened {
    pub kind: OpenedKind,
    pub status: crate::status::Snapshot,
    pub chat: crate::status::ChatStatus,
    /// The conversation so far (a resumed session), as the page receives long texts.
    pub history: Vec<LoopEvent>,
    /// The decisions waiting (none on a new project).
    pub pending: Vec<crate::decision::PendingDecision>,
}

/// One folder in the recent-projects list (most recent first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RecentProject {
    /// The canonical path it was opened under.
    pub path: String,
    /// Whether the folder is still there (a missing one is shown as such).
    pub exists: bool,
    /// Unix milliseconds of the last time it was opened.
    pub opened: u64,
}

/// Where a rule shown in the settings comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum RuleSource {
    /// The project's `.decode/settings.json` (editable here).
    Project,
    /// The active agent's frontmatter (edited in the agent's file).
    Agent,
}

/// One rule as the settings screen lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RuleEntry {
    #[ts(as = "RuleListTs")]
    pub list: RuleList,
    pub rule: String,
    pub source: RuleSource,
    /// The agent, for a rule from an agent's frontmatter.
    pub agent: Option<String>,
    /// The agent's file, for a rule of a project agent (none: a built-in agent).
    pub agent_file: Option<String>,
    /// Saved by the person through Decode ("always allow", or added in the settings
    /// window): it counts even while the project is untrusted; revoking it makes that
    /// call ask again.
    pub always_allowed: bool,
    /// Not in force: an allow rule of an untrusted project, or one that does not parse.
    pub ignored: Option<String>,
}

/// The rules the gate uses in this project, for the settings screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProjectRules {
    /// The project's settings file.
    pub settings_file: String,
    /// Why the file cannot be edited here (malformed: the parse error with its line
    /// and column); the rules are then shown read-only and the file is never rewritten.
    pub problem: Option<String>,
    pub trusted: bool,
    /// The active agent.
    pub agent: String,
    pub rules: Vec<RuleEntry>,
    pub additional_directories: Vec<String>,
    pub protected_branches: Vec<String>,
}

/// A project agent and what it would grant itself once the folder is trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgentGrant {
    pub name: String,
    /// The agent file.
    pub file: String,
    /// Its default mode as written (an untrusted folder falls back to `default`
    /// for anything but `default` and `plan`).
    pub mode: String,
    pub allow: Vec<String>,
}

/// A project's MCP server, as the trust dialog lists it: trusting the folder lets it
/// start once the person approves exactly this command line (a separate answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpGrant {
    pub name: String,
    /// The file it is configured in (`.decode/mcp.json` or `.mcp.json`).
    pub file: String,
    /// What would run, or the URL (escaped).
    pub command_line: String,
    /// `approved`, `refused`, `unanswered` or `changed` (approved once, changed since).
    pub approval: String,
}

/// An `additionalDirectories` entry: as written and where it reaches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DirectoryGrant {
    pub written: String,
    /// Where the gate would let the file tools reach (links resolved).
    pub resolved: String,
    /// What makes it worth a second look: it goes through a link, covers the home
    /// folder or the whole file system.
    pub warning: Option<String>,
}

/// What the trust dialog shows for a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TrustPreview {
    pub project: String,
    pub trusted: bool,
    /// Whether the person answered the trust dialog for this folder before.
    pub asked_before: bool,
    /// What the folder would grant itself: its allow rules…
    pub allow_rules: Vec<String>,
    /// …the folders outside it the file tools would reach…
    pub additional_directories: Vec<DirectoryGrant>,
    /// …its own agents…
    pub agents: Vec<AgentGrant>,
    /// …and its MCP servers (each still needs the person's approval to start).
    pub mcp_servers: Vec<McpGrant>,
    /// What is in force either way: the project's deny and ask rules.
    pub deny_rules: Vec<String>,
    pub ask_rules: Vec<String>,
    /// Permission or agent files (or their folders) that are links, `name → target`:
    /// they are read from where they point.
    pub links: Vec<String>,
    /// A problem reading the folder's settings (they count as empty).
    pub problem: Option<String>,
}

/// Whether a provider's API key is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KeyStatus {
    pub provider: String,
    /// A key is stored in the OS keyring. The key itself never leaves the backend.
    pub stored: bool,
    /// The environment variable that would give the key instead, and whether it is set.
    pub env_var: Option<String>,
    pub env_set: bool,
    /// Why the keyring cannot be used (one sentence, naming the environment variables).
    pub problem: Option<String>,
}

/// The provider part of the app's config, for the settings screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProviderView {
    /// The config file.
    pub config_file: String,
    pub provider: Option<ProviderName>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub context_tokens: Option<u64>,
    /// Why the config file cannot be changed here (malformed: it is left as it is).
    pub problem: Option<String>,
    /// Start-up flags override the file for this run.
    pub overridden: bool,
    /// The key of the chosen provider (none for the script provider or none chosen).
    pub key: Option<KeyStatus>,
}

/// What saving the provider settings did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderSave {
    /// Saved; the settings as they are now.
    Saved { view: ProviderView },
    /// Not saved: the provider's stored key would be sent to `host`, not to `bound`
    /// where it was set up. Saving again with `confirm_key_host: host` accepts that.
    ConfirmKeyHost {
        provider: String,
        host: String,
        bound: String,
    },
}

/// The provider fields the settings screen saves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProviderChoice {
    pub provider: Option<ProviderName>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub context_tokens: Option<u64>,
    /// The person confirmed that their stored key may go to this host (`host[:port]`),
    /// after a save was refused because the base URL moved the key elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub confirm_key_host: Option<String>,
}

/// What "test a call" shows: the gate's decision and the text `decode check` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CallCheck {
    #[ts(as = "DecisionTs")]
    pub decision: Decision,
    pub text: String,
}

/// One saved session of this project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionSummary {
    pub id: String,
    /// The first prompt, on one line.
    pub title: String,
    /// Unix milliseconds of the last write.
    pub updated: u64,
    /// `provider/model` at its start.
    pub model: String,
    /// The transcript's size in bytes.
    pub bytes: u64,
    /// This window's current session.
    pub current: bool,
}

/// A saved session opened for reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SessionView {
    pub id: String,
    pub events: Vec<LoopEvent>,
    /// Where reading stopped and why (a corrupt or truncated transcript).
    pub warnings: Vec<String>,
}

/// An MCP server in the settings list (docs/mcp.md): the window's `mcp-server` element,
/// its `data-status` the status. Every text is the config's or the server's, shown as
/// text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpServerView {
    pub name: String,
    /// `user` (the person's own file) or `project`.
    pub scope: String,
    /// The file it is configured in.
    pub file: String,
    /// What runs, or the URL (escaped).
    pub command_line: String,
    /// `stopped`, `starting`, `ready`, `failed`, `disabled`, `untrusted`,
    /// `needs_approval` or `refused`.
    pub status: String,
    /// Why it failed or waits, and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<String>,
    /// How many times it was restarted after a failure.
    pub restarts: u32,
    /// A stdio server: whether it runs in the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandboxed: Option<bool>,
    pub tools: Vec<McpToolView>,
}

/// One tool of an MCP server in the settings list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpToolView {
    /// `mcp__SERVER__TOOL`, as rules name it.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    /// What the server claims: that it only reads. Shown, never trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub read_only_hint: Option<bool>,
    /// The person marked it read-only in their own settings.
    pub marked_read_only: bool,
    /// The active agent offers it to the model.
    pub offered: bool,
}
