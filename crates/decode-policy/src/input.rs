//! What the gate is compiled from, and what it judges.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::mcp::McpName;
use crate::rules::RuleLists;
use crate::tool::Tool;

/// The active agent as the gate sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPolicy {
    pub name: String,
    /// The tools offered to the model; any other tool is denied (stage 0).
    pub tools: Vec<Tool>,
    /// The MCP tools offered to the model: patterns such as `mcp__*`,
    /// `mcp__SERVER__*` or `mcp__SERVER__TOOL` (docs/mcp.md). Empty: none.
    #[serde(default)]
    pub mcp_tools: Vec<String>,
    /// The agent's frontmatter `allow` / `ask` / `deny`.
    #[serde(default)]
    pub rules: RuleLists,
    /// True for agents defined by the project (`.decode/agents`, `.claude/agents`):
    /// their allow rules are ignored while the project is untrusted.
    #[serde(default)]
    pub from_project: bool,
}

impl AgentPolicy {
    /// An agent with every tool (every MCP tool too) and no rules (the built-in
    /// `build` agent).
    pub fn all_tools(name: impl Into<String>) -> AgentPolicy {
        AgentPolicy {
            name: name.into(),
            tools: Tool::ALL.to_vec(),
            mcp_tools: vec![crate::mcp::PREFIX.to_string() + "*"],
            rules: RuleLists::default(),
            from_project: false,
        }
    }
}

/// Everything the gate is compiled from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyInput {
    /// Absolute project root (canonicalised by the gate).
    pub project_root: PathBuf,
    /// The user's home folder.
    pub home: PathBuf,
    /// `.decode/settings.json` → `permissions`.
    #[serde(default)]
    pub project_rules: RuleLists,
    /// Settings `additionalDirectories`: may start with `~`; relative ones are
    /// relative to the project root.
    #[serde(default)]
    pub additional_directories: Vec<String>,
    /// Settings `protectedBranches`, added to `main` and `master`.
    #[serde(default)]
    pub protected_branches: Vec<String>,
    /// Settings `caps.external`: bash patterns that always ask.
    #[serde(default)]
    pub external_caps: Vec<String>,
    /// Whether the person trusted the project folder.
    #[serde(default)]
    pub trusted: bool,
    pub agent: AgentPolicy,
    /// Decode's own config and data folders (the trust store among them):
    /// writes there are never automatic. The defaults under `home` always
    /// count too.
    #[serde(default)]
    pub app_dirs: Vec<PathBuf>,
    /// The deny and ask rules (and `caps.external`) of every folder above the
    /// project that holds `.decode/settings.json`: a subfolder, a submodule or a
    /// vendored repository never sheds the rules of the project around it. Their
    /// allow rules never count here.
    #[serde(default)]
    pub enclosing: Vec<EnclosingRules>,
    /// Allow rules of the project's settings that the person saved through Decode
    /// ("always allow", the settings window; Decode records them in its data
    /// folder): they count at once, even while the project is untrusted.
    #[serde(default)]
    pub saved_allow: Vec<String>,
    /// The MCP tools the person marked read-only in their own settings
    /// (`~/.config/decode/settings.json`, never a project's): patterns such as
    /// `mcp__SERVER__*` (the server's `readOnly`) or `mcp__SERVER__TOOL` (its
    /// `readOnlyTools`). A marked tool is of kind read_only; any other is other.
    #[serde(default)]
    pub mcp_read_only: Vec<String>,
    /// The rules of the other settings levels: managed, user and the project's
    /// local file (docs/permissions.md, "Settings levels"). Deny and ask rules of
    /// every level apply; allow rules as [`Level`] says.
    #[serde(default)]
    pub levels: Vec<LevelRules>,
    /// Managed `allowManagedRulesOnly`: the allow rules of every level but managed
    /// (user, project, local, saved, the agent's) are ignored.
    #[serde(default)]
    pub allow_managed_rules_only: bool,
    /// `readOnlyCommands`: a bash command the gate proves only reads runs
    /// like `read` (docs/permissions.md, "Read-only commands"). `false` at
    /// any settings level turns it off.
    #[serde(default = "read_only_commands_default")]
    pub read_only_commands: bool,
}

fn read_only_commands_default() -> bool {
    true
}

/// A settings level (docs/permissions.md, "Settings levels"), strictest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `/etc/decode/managed-settings.json`: the organisation's; nobody below lifts it.
    Managed,
    /// `~/.config/decode/settings.json`: the person's own, for every project.
    User,
    /// `.decode/settings.json`: the project's, shared through version control.
    Project,
    /// `.decode/settings.local.json`: the person's own, for this project.
    Local,
}

impl Level {
    /// Every level, strictest first.
    pub const ALL: [Level; 4] = [Level::Managed, Level::User, Level::Project, Level::Local];

    /// The name it is serialised under (`managed`, `user`, `project`, `local`).
    pub fn name(self) -> &'static str {
        crate::trace::serde_name(&self)
    }

    /// Whether the level's allow rules need the project's trust (or the person's
    /// saving them through Decode) to count.
    pub fn needs_trust(self) -> bool {
        matches!(self, Level::Project | Level::Local)
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The rules of one settings level's file (see [`PolicyInput::levels`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelRules {
    pub level: Level,
    /// The file, as reasons name it.
    pub file: PathBuf,
    /// Its `permissions`.
    #[serde(default)]
    pub rules: RuleLists,
    /// Its `caps.external`.
    #[serde(default)]
    pub external_caps: Vec<String>,
    /// Allow rules of this file the person saved through Decode: they count at
    /// once, even while the project is untrusted.
    #[serde(default)]
    pub saved_allow: Vec<String>,
}

/// The rules of a folder around the project (see [`PolicyInput::enclosing`]).
/// Relative path patterns are anchored at `root`, as they are in that folder's own
/// project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnclosingRules {
    /// The folder that holds `.decode/settings.json`.
    pub root: PathBuf,
    /// Its `permissions`; only `deny` and `ask` are used.
    #[serde(default)]
    pub rules: RuleLists,
    /// Its `caps.external`.
    #[serde(default)]
    pub external_caps: Vec<String>,
}

impl PolicyInput {
    /// A trusted project with no settings and the all-tools `build` agent.
    pub fn new(project_root: impl Into<PathBuf>, home: impl Into<PathBuf>) -> PolicyInput {
        PolicyInput {
            project_root: project_root.into(),
            home: home.into(),
            project_rules: RuleLists::default(),
            additional_directories: Vec::new(),
            protected_branches: Vec::new(),
            external_caps: Vec::new(),
            trusted: true,
            agent: AgentPolicy::all_tools("build"),
            app_dirs: Vec::new(),
            enclosing: Vec::new(),
            saved_allow: Vec::new(),
            levels: Vec::new(),
            allow_managed_rules_only: false,
            mcp_read_only: Vec::new(),
            read_only_commands: true,
        }
    }

    /// Decode's config and data folders for `home` as the environment
    /// places them (`$XDG_CONFIG_HOME/decode`, `$XDG_DATA_HOME/decode`, and
    /// the defaults `~/.config/decode`, `~/.local/share/decode`).
    pub fn app_dirs_for(home: &Path) -> Vec<PathBuf> {
        let mut out = vec![
            home.join(".config/decode"),
            home.join(".local/share/decode"),
        ];
        for var in ["XDG_CONFIG_HOME", "XDG_DATA_HOME"] {
            if let Some(v) = std::env::var_os(var) {
                let p = PathBuf::from(v);
                if p.is_absolute() && !out.contains(&p.join("decode")) {
                    out.push(p.join("decode"));
                }
            }
        }
        out
    }
}

/// One tool call to judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub tool: Tool,
    /// Path, search root (empty: project root), URL, command string, or an MCP
    /// tool's arguments (see [`crate::mcp::canonical_json`]).
    pub subject: String,
    /// For [`Tool::Mcp`]: which MCP tool (a call of `Tool::Mcp` without one is
    /// denied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpName>,
    /// `web_fetch` and `net`: the addresses the host resolved to, when the caller
    /// resolved it (it then connects to exactly these). Private, loopback,
    /// link-local and metadata addresses among them ask (docs/network.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addrs: Vec<std::net::IpAddr>,
}

impl Call {
    pub fn new(tool: Tool, subject: impl Into<String>) -> Call {
        Call {
            tool,
            subject: subject.into(),
            mcp: None,
            addrs: Vec::new(),
        }
    }

    /// A call of the MCP tool `name` with these arguments (`{}` when absent).
    pub fn mcp(name: McpName, arguments: &serde_json::Value) -> Call {
        let args = if arguments.is_null() {
            serde_json::Value::Object(Default::default())
        } else {
            arguments.clone()
        };
        Call {
            tool: Tool::Mcp,
            subject: crate::mcp::canonical_json(&args),
            mcp: Some(name),
            addrs: Vec::new(),
        }
    }

    /// A call by tool name: a built-in tool (any accepted spelling) with `subject`
    /// as given, or an MCP tool (`mcp__SERVER__TOOL`) with `subject` its JSON
    /// arguments (made canonical when they parse; kept as given, and matching only
    /// patterns written for it, when they do not). `None` for an unknown name.
    pub fn by_name(name: &str, subject: &str) -> Option<Call> {
        if let Some(t) = Tool::from_name(name) {
            return Some(Call::new(t, subject));
        }
        let mcp = McpName::parse(name.trim())?;
        let subject = if subject.trim().is_empty() {
            "{}".to_string()
        } else {
            match serde_json::from_str::<serde_json::Value>(subject) {
                Ok(v) => crate::mcp::canonical_json(&v),
                Err(_) => subject.to_string(),
            }
        };
        Some(Call {
            tool: Tool::Mcp,
            subject,
            mcp: Some(mcp),
            addrs: Vec::new(),
        })
    }

    /// The tool's full name: `mcp__SERVER__TOOL` for an MCP tool.
    pub fn tool_name(&self) -> &str {
        match &self.mcp {
            Some(n) => n.as_str(),
            None => self.tool.name(),
        }
    }

    /// The same call with the addresses its host resolved to.
    pub fn with_addrs(mut self, addrs: Vec<std::net::IpAddr>) -> Call {
        self.addrs = addrs;
        self
    }

    /// Derives the subject from a tool's JSON input (docs/permissions.md, "Tools and kinds"): `path` for
    /// read/write/edit (Claude's `file_path` too), `path` or "" for glob/grep,
    /// `url` for web_fetch, `command` for bash, "" for the rest. A missing or
    /// non-string field gives "".
    pub fn from_input(tool: Tool, input: &serde_json::Value) -> Call {
        let field = |names: &[&str]| -> String {
            names
                .iter()
                .find_map(|n| input.get(*n).and_then(|v| v.as_str()))
                .unwrap_or("")
                .to_string()
        };
        let subject = match tool {
            Tool::Read | Tool::Write | Tool::Edit => field(&["path", "file_path"]),
            Tool::Glob => glob_search(&field(&["path"]), &field(&["pattern"])).0,
            Tool::Grep => field(&["path"]),
            Tool::WebFetch => field(&["url"]),
            Tool::Bash => field(&["command"]),
            Tool::Mcp => crate::mcp::canonical_json(input),
            Tool::TodoWrite
            | Tool::AskUser
            | Tool::EnterPlanMode
            | Tool::ExitPlanMode
            | Tool::Sleep
            | Tool::Task => String::new(),
            Tool::Net => field(&["host"]),
        };
        Call {
            tool,
            subject,
            mcp: None,
            addrs: Vec::new(),
        }
    }
}

/// Where `glob` searches: its `path` (empty: the project root), then the
/// pattern's literal leading folders (`/etc/pass*` searches `/etc`,
/// `../../x/*` searches `../../x`), and the rest of the pattern. The gate
/// judges the folder as a read; the tool walks exactly that folder.
pub fn glob_search(path: &str, pattern: &str) -> (String, String) {
    let mut root = path.to_string();
    let mut pattern = pattern;
    if let Some(rest) = pattern.strip_prefix('/') {
        root = "/".to_string();
        pattern = rest.trim_start_matches('/');
    }
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest;
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .take_while(|p| !p.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .count();
    if literal == 0 {
        return (root, pattern.to_string());
    }
    let prefix = parts[..literal].join("/");
    let joined = if root.is_empty() {
        prefix
    } else if root.ends_with('/') {
        format!("{root}{prefix}")
    } else {
        format!("{root}/{prefix}")
    };
    (joined, parts[literal..].join("/"))
}

#[cfg(test)]
mod tests {
    use super::glob_search;

    #[test]
    fn glob_roots() {
        assert_eq!(glob_search("", "**/*.rs"), ("".into(), "**/*.rs".into()));
        assert_eq!(
            glob_search("", "/etc/pass*"),
            ("/etc".into(), "pass*".into())
        );
        assert_eq!(
            glob_search("", "../../etc/pass*"),
            ("../../etc".into(), "pass*".into())
        );
        assert_eq!(
            glob_search("src", "a/b/*.rs"),
            ("src/a/b".into(), "*.rs".into())
        );
        assert_eq!(
            glob_search("src", "../x/*"),
            ("src/../x".into(), "*".into())
        );
        assert_eq!(glob_search("", "secrets/*"), ("secrets".into(), "*".into()));
    }
}
