//! The agents catalog (docs/agents.md).
//!
//! An agent is a Markdown file with YAML frontmatter; the body is its system prompt.
//! Sources, later ones overriding earlier ones by `name`:
//!
//! 1. the built-ins in the repository's `agents/` folder, embedded in the binary;
//! 2. the project's `.claude/agents/*.md` (Claude Code format: no `tools` means every
//!    tool, no `mode` means `default`);
//! 3. the project's `.decode/agents/*.md` (Decode format: `tools` and `mode` required).
//!
//! Every problem is an [`AgentError`] naming the file, the line and the key; a bad
//! file is skipped and never hides the good ones.

use std::fmt;
use std::path::{Path, PathBuf};

use decode_policy::{AgentPolicy, Call, Gate, Mode, Rule, RuleLists, Tool, Verdict};
use serde_yaml::{Mapping, Value};

/// Largest agent (or project instructions) file read, in bytes.
pub const MAX_AGENT_FILE_BYTES: u64 = 1024 * 1024;
/// The most agent files read from one folder (`.decode/agents`, `.claude/agents`).
pub const MAX_AGENT_FILES: usize = 200;
/// The most bytes read from one folder of agent files, all files together.
pub const MAX_AGENT_FOLDER_BYTES: u64 = 4 * 1024 * 1024;
/// The most names of a folder of agent files looked at (the files are read in name
/// order, so the names are gathered first).
const MAX_AGENT_FOLDER_ENTRIES: usize = 10_000;

/// The built-in agent files, embedded at build time: (virtual path, contents).
pub const BUILTIN_FILES: [(&str, &str); 4] = [
    ("agents/build.md", include_str!("../../../agents/build.md")),
    ("agents/plan.md", include_str!("../../../agents/plan.md")),
    (
        "agents/explore.md",
        include_str!("../../../agents/explore.md"),
    ),
    (
        "agents/code-reviewer.md",
        include_str!("../../../agents/code-reviewer.md"),
    ),
];

/// The agent selected when none is asked for.
pub const DEFAULT_AGENT: &str = "build";

/// Where an agent was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// Shipped inside the binary.
    Builtin,
    /// A project file in `.claude/agents/`.
    ClaudeProject(PathBuf),
    /// A project file in `.decode/agents/`.
    DecodeProject(PathBuf),
}

impl AgentSource {
    /// The project file, for project sources.
    pub fn path(&self) -> Option<&Path> {
        match self {
            AgentSource::Builtin => None,
            AgentSource::ClaudeProject(p) | AgentSource::DecodeProject(p) => Some(p),
        }
    }

    /// Whether the agent comes from the project (and so is subject to trust).
    pub fn is_project(&self) -> bool {
        !matches!(self, AgentSource::Builtin)
    }
}

impl fmt::Display for AgentSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSource::Builtin => f.write_str("built-in"),
            AgentSource::ClaudeProject(p) | AgentSource::DecodeProject(p) => {
                write!(f, "{}", p.display())
            }
        }
    }
}

/// Which frontmatter rules a file follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentFormat {
    /// Decode's own (`agents/`, `.decode/agents/`): `name`, `description`, `tools`
    /// and `mode` are required.
    Decode,
    /// Claude Code's (`.claude/agents/`): `name` and `description` are required;
    /// no `tools` means every tool and no `mode` means `default`.
    Claude,
}

/// One agent of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Its name, as selected with `--agent` or `/agent`.
    pub name: String,
    /// One line saying what it is for.
    pub description: String,
    /// The tools offered to the model, in the order listed (no duplicates).
    pub tools: Vec<Tool>,
    /// The MCP tools offered: the `mcp__…` patterns of its `tools` list
    /// (`mcp__*` for `*` and for a Claude Code file without `tools`; docs/mcp.md).
    pub mcp_tools: Vec<String>,
    /// The mode set when it is selected (see [`Agent::effective_default_mode`]).
    pub mode: Mode,
    /// Its own `allow` / `ask` / `deny` rules (each one parses).
    pub rules: RuleLists,
    /// The model it asks for, if any (`inherit` counts as none).
    pub model: Option<String>,
    /// The system prompt: the file's body.
    pub prompt: String,
    /// Where it was defined.
    pub source: AgentSource,
    /// The source of the agent of the same name it replaced, if any
    /// (`built-in` or that file's path).
    pub overrides: Option<String>,
}

impl Agent {
    /// Whether it comes from the project (`.claude/agents/` or `.decode/agents/`).
    pub fn from_project(&self) -> bool {
        self.source.is_project()
    }

    /// The mode to start in when selected: its `mode`, except that a project agent
    /// in an untrusted project starts only in `default` or `plan` (any other mode
    /// falls back to `default`: a cloned repository cannot allow its own edits).
    pub fn effective_default_mode(&self, trusted: bool) -> Mode {
        if !trusted && self.from_project() && !matches!(self.mode, Mode::Default | Mode::Plan) {
            Mode::Default
        } else {
            self.mode
        }
    }

    /// Whether the agent offers `tool` to the model.
    pub fn offers(&self, tool: Tool) -> bool {
        self.tools.contains(&tool)
    }

    /// The agent's part of the gate's input.
    pub fn policy(&self) -> AgentPolicy {
        AgentPolicy {
            name: self.name.clone(),
            tools: self.tools.clone(),
            mcp_tools: self.mcp_tools.clone(),
            rules: self.rules.clone(),
            from_project: self.from_project(),
        }
    }

    /// The full system prompt: the agent's prompt, then the project's
    /// instructions when there are any (see [`project_instructions`]).
    pub fn system_prompt(&self, instructions: Option<&Instructions>) -> String {
        let mut out = self.prompt.trim_end().to_string();
        if let Some(ins) = instructions {
            let text = ins.text.trim();
            if !text.is_empty() {
                out.push_str(&format!(
                    "\n\n# Project instructions ({})\n\n{text}\n",
                    ins.name
                ));
            }
        }
        out
    }
}

/// The project's instruction file, as read for the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instructions {
    /// `AGENTS.md` or `CLAUDE.md`.
    pub name: &'static str,
    /// Its text.
    pub text: String,
}

/// The project's instructions: `AGENTS.md` when it can be read, else
/// `CLAUDE.md`. A repository's instruction file is hostile input, so it is
/// read only where a `read` of it would be allowed without asking in
/// `mode` — deny and ask rules and the path scope apply, whatever tools the
/// agent has — and a link that leads out of the project is not followed.
/// The file is opened one folder at a time from the project root without
/// following links, so a link swapped in after the check cannot redirect
/// it. Read at call time, so edits apply on the next turn.
pub fn project_instructions(gate: &Gate, mode: Mode) -> Option<Instructions> {
    read_instructions(gate, mode).0
}

/// [`project_instructions`], with one line for each instruction file that
/// exists but was not read, saying why (reported like a malformed file).
pub fn read_instructions(gate: &Gate, mode: Mode) -> (Option<Instructions>, Vec<String>) {
    let root = gate.project_root();
    let mut skipped = Vec::new();
    for name in ["AGENTS.md", "CLAUDE.md"] {
        let path = root.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let resolved = decode_policy::paths::resolve(&path);
        if !resolved.starts_with(root) {
            tracing::warn!(
                file = name,
                target = %resolved.display(),
                "project instructions not read: the file links out of the project"
            );
            skipped.push(format!(
                "{}: not read: it links out of the project",
                path.display()
            ));
            continue;
        }
        // The resolved path is what is judged and what is opened (without
        // following links): a link swapped in meanwhile cannot change either.
        let call = Call::new(Tool::Read, resolved.to_string_lossy().into_owned());
        let d = gate.decide_as_offered(&call, mode);
        if d.verdict != Verdict::Allow {
            tracing::warn!(
                file = name,
                verdict = %d.verdict,
                reason = %d.reason,
                "project instructions not read: reading them would not be allowed without asking"
            );
            skipped.push(format!(
                "{}: not read: reading it would not be allowed without asking ({})",
                path.display(),
                d.reason
            ));
            continue;
        }
        // A file with other hard links is not read: another name, perhaps outside
        // the project, could hold anything.
        match decode_policy::paths::read_permission_file_beneath(
            root,
            &resolved,
            MAX_AGENT_FILE_BYTES,
        ) {
            Ok(text) => return (Some(Instructions { name, text }), skipped),
            Err(e) if e.is_missing() => continue,
            Err(e) => {
                tracing::warn!(file = name, error = %e, "could not read project instructions");
                skipped.push(format!("{}: not read: {e}", path.display()));
                continue;
            }
        }
    }
    (None, skipped)
}

/// A problem with one agent file. Displays as `<file>:<line>: <message>`, the
/// message naming the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentError {
    /// The file (for built-ins, `agents/<name>.md`).
    pub file: PathBuf,
    /// 1-based line in the file (the frontmatter starts at line 2), when known.
    pub line: Option<usize>,
    /// The frontmatter key concerned, when there is one.
    pub key: Option<&'static str>,
    /// What is wrong.
    pub kind: AgentErrorKind,
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.kind),
            None => write!(f, "{}: {}", self.file.display(), self.kind),
        }
    }
}

impl std::error::Error for AgentError {}

/// The kinds of agent file problems.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentErrorKind {
    /// The file could not be read.
    #[error("cannot read the agent file: {0}")]
    Io(String),
    /// The file is over [`MAX_AGENT_FILE_BYTES`].
    #[error("the agent file is larger than 1 MiB")]
    TooLarge,
    /// The file is not UTF-8.
    #[error("the agent file is not valid UTF-8")]
    NotUtf8,
    /// A FIFO, a device, a socket or a folder (after links).
    #[error("the agent file is not a regular file")]
    NotRegular,
    /// The frontmatter nests too deeply to parse safely.
    #[error("the frontmatter nests deeper than 64 levels")]
    TooDeep,
    /// The first line is not `---`.
    #[error("the agent file must start with a `---` line opening its YAML frontmatter")]
    MissingFrontmatter,
    /// No closing `---` line.
    #[error("the frontmatter opened on line 1 is never closed by a `---` line")]
    UnclosedFrontmatter,
    /// The frontmatter is not valid YAML.
    #[error("the frontmatter is not valid YAML: {0}")]
    Yaml(String),
    /// The frontmatter is not a mapping of keys.
    #[error("the frontmatter must be a YAML mapping of keys such as `name:` and `description:`")]
    NotAMapping,
    /// A required key is absent.
    #[error("the required key `{0}` is missing")]
    MissingKey(&'static str),
    /// A key holds the wrong kind of value.
    #[error("the key `{key}` must be {expected}")]
    WrongType {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// `name` is empty.
    #[error("the key `name` is empty")]
    EmptyName,
    /// A tool name in `tools` is not known.
    #[error(
        "the key `tools` names an unknown tool `{tool}` (known tools: {})",
        known_tools()
    )]
    UnknownTool {
        /// The unknown name.
        tool: String,
    },
    /// `mode` is not a mode.
    #[error("the key `mode` has an unknown mode `{mode}` (expected one of: default, edit, plan, auto, bypass)")]
    BadMode {
        /// The value given.
        mode: String,
    },
    /// A rule in `allow`/`ask`/`deny` does not parse.
    #[error("the key `{key}` holds a rule that does not parse: {reason}")]
    BadRule {
        /// `allow`, `ask` or `deny`.
        key: &'static str,
        /// The rule text.
        rule: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The folder holds more agent files than are read (by count or size).
    #[error("the folder holds more than {} agent files or {} MiB in all: {skipped} file(s) from `{first_skipped}` on were not read", MAX_AGENT_FILES, MAX_AGENT_FOLDER_BYTES >> 20)]
    FolderTooLarge {
        /// How many `.md` files were not read.
        skipped: usize,
        /// The first file not read.
        first_skipped: String,
    },
    /// Another file of the same folder already defines the name.
    #[error("the agent name `{name}` is already defined by {first}, so this file is ignored")]
    DuplicateName {
        /// The name.
        name: String,
        /// The earlier file.
        first: String,
    },
}

fn known_tools() -> String {
    Tool::ALL.map(Tool::name).join(", ")
        + ", and MCP tools as mcp__SERVER__TOOL, mcp__SERVER__* or mcp__*"
}

/// Parses one agent file's bytes. `file` is used in errors and as the source path.
pub fn parse_agent(
    bytes: &[u8],
    file: &Path,
    format: AgentFormat,
    source: AgentSource,
) -> Result<Agent, AgentError> {
    let text = agent_text(bytes, file)?;
    let (frontmatter, body) =
        split_frontmatter(text).map_err(|kind| agent_error(file, Some(1), None, kind))?;
    let keys = Keys::parse(file, frontmatter)?;
    let name = keys.name()?;
    let description = keys.description()?;
    let (tools, mcp_tools) = keys.tools(format)?;
    let mode = keys.mode(format)?;
    let [allow, ask, deny] = keys.rule_lists()?;
    let model = keys.model()?;
    Ok(Agent {
        name,
        description,
        tools,
        mcp_tools,
        mode,
        rules: RuleLists { allow, ask, deny },
        model,
        prompt: body.trim().to_string(),
        source,
        overrides: None,
    })
}

fn agent_error(
    file: &Path,
    line: Option<usize>,
    key: Option<&'static str>,
    kind: AgentErrorKind,
) -> AgentError {
    AgentError {
        file: file.to_path_buf(),
        line,
        key,
        kind,
    }
}

/// The file's text: at most [`MAX_AGENT_FILE_BYTES`] of UTF-8.
fn agent_text<'a>(bytes: &'a [u8], file: &Path) -> Result<&'a str, AgentError> {
    if bytes.len() as u64 > MAX_AGENT_FILE_BYTES {
        return Err(agent_error(file, None, None, AgentErrorKind::TooLarge));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        agent_error(file, Some(line), None, AgentErrorKind::NotUtf8)
    })
}

/// The frontmatter's keys, read one by one into an [`Agent`]'s fields; errors name
/// the file, the line and the key.
struct Keys<'a> {
    file: &'a Path,
    fm: Frontmatter<'a>,
    map: Mapping,
}

/// Every MCP tool, as a pattern.
fn every_mcp() -> Vec<String> {
    vec![decode_policy::mcp::PREFIX.to_string() + "*"]
}

impl<'a> Keys<'a> {
    /// Parses the frontmatter as a YAML mapping (empty frontmatter is an empty one).
    fn parse(file: &'a Path, frontmatter: &'a str) -> Result<Keys<'a>, AgentError> {
        let fm = Frontmatter { text: frontmatter };
        let err = |line: Option<usize>, kind| agent_error(file, line, None, kind);
        if decode_policy::paths::yaml_depth(frontmatter) > 64 {
            return Err(err(Some(2), AgentErrorKind::TooDeep));
        }
        let value: Value = serde_yaml::from_str(frontmatter).map_err(|e| {
            let message = yaml_message(&e);
            // serde_yaml places a duplicate key at its mapping's start: point at the
            // repeated key instead.
            let line = duplicate_key(&message)
                .and_then(|key| fm.key_indices(key).nth(1))
                .map(|i| i + 2)
                .or_else(|| e.location().map(|l| l.line() + 1));
            err(line.or(Some(2)), AgentErrorKind::Yaml(message))
        })?;
        let map = match value {
            Value::Mapping(m) => m,
            Value::Null => Mapping::new(),
            _ => return Err(err(Some(2), AgentErrorKind::NotAMapping)),
        };
        Ok(Keys { file, fm, map })
    }

    fn err(&self, line: usize, key: &'static str, kind: AgentErrorKind) -> AgentError {
        agent_error(self.file, Some(line), Some(key), kind)
    }

    fn missing(&self, key: &'static str) -> AgentError {
        self.err(1, key, AgentErrorKind::MissingKey(key))
    }

    fn wrong(&self, key: &'static str, expected: &'static str) -> AgentError {
        self.err(
            self.fm.key_line(key),
            key,
            AgentErrorKind::WrongType { key, expected },
        )
    }

    fn unknown_tool(&self, name: &str) -> AgentError {
        self.err(
            self.fm.item_line("tools", name),
            "tools",
            AgentErrorKind::UnknownTool {
                tool: name.to_string(),
            },
        )
    }

    fn name(&self) -> Result<String, AgentError> {
        let name = match string_key(&self.map, "name") {
            Field::Absent => return Err(self.missing("name")),
            Field::Wrong => return Err(self.wrong("name", "a string")),
            Field::Present(s) => s.trim().to_string(),
        };
        if name.is_empty() {
            return Err(self.err(self.fm.key_line("name"), "name", AgentErrorKind::EmptyName));
        }
        Ok(name)
    }

    fn description(&self) -> Result<String, AgentError> {
        match string_key(&self.map, "description") {
            Field::Absent => Err(self.missing("description")),
            Field::Wrong => Err(self.wrong("description", "a string")),
            Field::Present(s) => Ok(s.trim().to_string()),
        }
    }

    /// `tools`: the built-in tools, and MCP tools by pattern (`mcp__SERVER__TOOL`,
    /// `mcp__SERVER__*`, `mcp__*`).
    fn tools(&self, format: AgentFormat) -> Result<(Vec<Tool>, Vec<String>), AgentError> {
        let v = match get(&self.map, "tools") {
            None | Some(Value::Null) => {
                return match format {
                    AgentFormat::Decode => Err(self.missing("tools")),
                    AgentFormat::Claude => Ok((Tool::ALL.to_vec(), every_mcp())),
                }
            }
            Some(v) => v,
        };
        let names = string_list(v, true).ok_or_else(|| {
            self.wrong(
                "tools",
                "a list of tool names or a comma-separated string of tool names",
            )
        })?;
        let mut tools = Vec::new();
        let mut mcp_tools: Vec<String> = Vec::new();
        for n in names {
            if decode_policy::mcp::is_mcp_name(n.trim()) {
                let p = decode_policy::McpPattern::parse(&n).map_err(|_| self.unknown_tool(&n))?;
                if !mcp_tools.iter().any(|m| m == p.as_str()) {
                    mcp_tools.push(p.as_str().to_string());
                }
                continue;
            }
            let found: Vec<Tool> = if n == "*" {
                if !mcp_tools.iter().any(|m| m == "mcp__*") {
                    mcp_tools.extend(every_mcp());
                }
                Tool::ALL.to_vec()
            } else {
                match Tool::from_name(&n).filter(|t| t.is_model_tool()) {
                    Some(t) => vec![t],
                    None => return Err(self.unknown_tool(&n)),
                }
            };
            for t in found {
                if !tools.contains(&t) {
                    tools.push(t);
                }
            }
        }
        Ok((tools, mcp_tools))
    }

    fn mode(&self, format: AgentFormat) -> Result<Mode, AgentError> {
        match string_key(&self.map, "mode") {
            Field::Absent => match format {
                AgentFormat::Decode => Err(self.missing("mode")),
                AgentFormat::Claude => Ok(Mode::Default),
            },
            Field::Wrong => Err(self.wrong("mode", "one of default, edit, plan, auto, bypass")),
            Field::Present(s) => s.parse::<Mode>().map_err(|_| {
                self.err(
                    self.fm.key_line("mode"),
                    "mode",
                    AgentErrorKind::BadMode { mode: s.clone() },
                )
            }),
        }
    }

    /// `allow`, `ask` and `deny`, in that order.
    fn rule_lists(&self) -> Result<[Vec<String>; 3], AgentError> {
        let mut lists: [Vec<String>; 3] = Default::default();
        for (slot, key) in lists.iter_mut().zip(["allow", "ask", "deny"]) {
            match get(&self.map, key) {
                None | Some(Value::Null) => {}
                Some(v) => {
                    let rules = string_list(v, false).ok_or_else(|| {
                        self.wrong(key, "a list of rules such as \"bash(git *)\"")
                    })?;
                    for rule in rules {
                        if let Err(e) = Rule::parse(&rule) {
                            return Err(self.err(
                                self.fm.item_line(key, &rule),
                                key,
                                AgentErrorKind::BadRule {
                                    key,
                                    rule: rule.clone(),
                                    reason: e.to_string(),
                                },
                            ));
                        }
                        slot.push(rule);
                    }
                }
            }
        }
        Ok(lists)
    }

    /// `model`: none when absent, empty or `inherit`.
    fn model(&self) -> Result<Option<String>, AgentError> {
        match string_key(&self.map, "model") {
            Field::Absent => Ok(None),
            Field::Wrong => Err(self.wrong("model", "a string")),
            Field::Present(s) => {
                let s = s.trim();
                Ok((!s.is_empty() && !s.eq_ignore_ascii_case("inherit")).then(|| s.to_string()))
            }
        }
    }
}

/// Splits `---\n<yaml>\n---\n<body>`. The first line must be exactly `---` (trailing
/// whitespace and a UTF-8 BOM tolerated); the block ends at the next `---` line.
pub fn split_frontmatter(text: &str) -> Result<(&str, &str), AgentErrorKind> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    };
    if first.trim_end() != "---" {
        return Err(AgentErrorKind::MissingFrontmatter);
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let frontmatter = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((frontmatter, body));
        }
        offset += line.len();
    }
    Err(AgentErrorKind::UnclosedFrontmatter)
}

/// The key of serde_yaml's `duplicate entry with key "K"` message.
fn duplicate_key(message: &str) -> Option<&str> {
    message
        .strip_prefix("duplicate entry with key \"")?
        .strip_suffix('"')
}

/// serde_yaml's message without its trailing position (we report our own line).
fn yaml_message(e: &serde_yaml::Error) -> String {
    let full = e.to_string();
    match full.find(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

enum Field {
    Absent,
    Wrong,
    Present(String),
}

fn get<'a>(map: &'a Mapping, key: &str) -> Option<&'a Value> {
    map.get(Value::String(key.to_string()))
}

fn string_key(map: &Mapping, key: &str) -> Field {
    match get(map, key) {
        None | Some(Value::Null) => Field::Absent,
        Some(Value::String(s)) => Field::Present(s.clone()),
        Some(_) => Field::Wrong,
    }
}

/// A YAML list of strings, or one string (split on commas when `split_commas`).
fn string_list(v: &Value, split_commas: bool) -> Option<Vec<String>> {
    match v {
        Value::Sequence(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Some(s.trim().to_string()),
                _ => None,
            })
            .filter(|s| s.as_deref() != Some(""))
            .collect(),
        Value::String(s) if split_commas => Some(
            s.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        Value::String(s) => Some(if s.trim().is_empty() {
            Vec::new()
        } else {
            vec![s.trim().to_string()]
        }),
        _ => None,
    }
}

/// The frontmatter text, for finding the line of a key or list item.
struct Frontmatter<'a> {
    text: &'a str,
}

impl Frontmatter<'_> {
    /// The file line (frontmatter line + 1) of the top-level `key:`; 1 when absent.
    fn key_line(&self, key: &str) -> usize {
        self.key_index(key).map(|i| i + 2).unwrap_or(1)
    }

    fn key_index(&self, key: &str) -> Option<usize> {
        self.key_indices(key).next()
    }

    /// The 0-based frontmatter lines of every top-level `key:`.
    fn key_indices<'k>(&'k self, key: &'k str) -> impl Iterator<Item = usize> + 'k {
        self.text
            .lines()
            .enumerate()
            .filter(move |(_, line)| is_key_line(line, key))
            .map(|(i, _)| i)
    }

    /// The file line of the first line under `key` (its own line included, up to
    /// the next top-level key) that mentions `item`; the key's line otherwise.
    fn item_line(&self, key: &str, item: &str) -> usize {
        let Some(start) = self.key_index(key) else {
            return 1;
        };
        for (i, line) in self.text.lines().enumerate().skip(start) {
            if i > start && starts_top_level_key(line) {
                break;
            }
            let scan = if i == start {
                line.split_once(':').map(|(_, v)| v).unwrap_or("")
            } else {
                line
            };
            if scan.contains(item) {
                return i + 2;
            }
        }
        start + 2
    }
}

fn is_key_line(line: &str, key: &str) -> bool {
    let rest = if let Some(r) = line.strip_prefix(key) {
        r
    } else if let Some(r) = line
        .strip_prefix('"')
        .and_then(|l| l.strip_prefix(key))
        .and_then(|l| l.strip_prefix('"'))
    {
        r
    } else if let Some(r) = line
        .strip_prefix('\'')
        .and_then(|l| l.strip_prefix(key))
        .and_then(|l| l.strip_prefix('\''))
    {
        r
    } else {
        return false;
    };
    rest.trim_start().starts_with(':')
}

fn starts_top_level_key(line: &str) -> bool {
    match line.chars().next() {
        None => false,
        Some(c) => !c.is_whitespace() && c != '-' && c != '#',
    }
}

/// The loaded catalog: every valid agent, and every file's errors.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    agents: Vec<Agent>,
    errors: Vec<AgentError>,
}

impl Catalog {
    /// Only the built-in agents.
    pub fn builtin() -> Catalog {
        let mut catalog = Catalog::default();
        for (path, text) in BUILTIN_FILES {
            match parse_agent(
                text.as_bytes(),
                Path::new(path),
                AgentFormat::Decode,
                AgentSource::Builtin,
            ) {
                Ok(agent) => catalog.insert(agent),
                Err(e) => {
                    tracing::error!(error = %e, "built-in agent does not load");
                    catalog.errors.push(e);
                }
            }
        }
        catalog
    }

    /// The built-ins, then `<root>/.claude/agents/*.md`, then
    /// `<root>/.decode/agents/*.md`, later sources overriding earlier ones by name.
    /// Files are read in sorted order; files not ending in `.md` are ignored.
    pub fn load(project_root: &Path) -> Catalog {
        let mut catalog = Catalog::builtin();
        catalog.load_dir(
            &project_root.join(".claude").join("agents"),
            AgentFormat::Claude,
        );
        catalog.load_dir(
            &project_root.join(".decode").join("agents"),
            AgentFormat::Decode,
        );
        for e in &catalog.errors {
            tracing::warn!(error = %e, "agent file skipped");
        }
        catalog
    }

    fn load_dir(&mut self, dir: &Path, format: AgentFormat) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.errors.push(AgentError {
                    file: dir.to_path_buf(),
                    line: None,
                    key: None,
                    kind: AgentErrorKind::Io(e.to_string()),
                });
                return;
            }
        };
        // A cloned repository's folder: bounded in names looked at, files read
        // and bytes read (a bad folder costs milliseconds, never seconds).
        let mut looked = 0usize;
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut unlisted = false;
        for e in entries {
            looked += 1;
            if looked > MAX_AGENT_FOLDER_ENTRIES {
                unlisted = true;
                break;
            }
            let Ok(e) = e else { continue };
            let p = e.path();
            if p.extension().is_some_and(|x| x == "md") && !e.file_type().is_ok_and(|t| t.is_dir())
            {
                paths.push(p);
            }
        }
        paths.sort();
        // Names defined by this folder so far, to report duplicates within it.
        let mut seen: Vec<(String, PathBuf)> = Vec::new();
        let mut read_bytes = 0u64;
        for (i, path) in paths.iter().enumerate() {
            // The whole file counts against the folder's budget before it is read.
            // (A file over the size of one agent file is refused unread.)
            let cost = std::fs::metadata(path)
                .map(|m| m.len())
                .ok()
                .filter(|&n| n <= MAX_AGENT_FILE_BYTES)
                .unwrap_or(0);
            if i >= MAX_AGENT_FILES || read_bytes + cost > MAX_AGENT_FOLDER_BYTES {
                let e = AgentError {
                    file: dir.to_path_buf(),
                    line: None,
                    key: None,
                    kind: AgentErrorKind::FolderTooLarge {
                        skipped: paths.len() - i,
                        first_skipped: path
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    },
                };
                tracing::warn!(error = %e, "agent folder bounded");
                self.errors.push(e);
                return;
            }
            let source = match format {
                AgentFormat::Claude => AgentSource::ClaudeProject(path.clone()),
                AgentFormat::Decode => AgentSource::DecodeProject(path.clone()),
            };
            let bytes = match read_agent_file(path) {
                Ok(b) => b,
                Err(e) => {
                    self.errors.push(e);
                    continue;
                }
            };
            read_bytes += bytes.len() as u64;
            match parse_agent(&bytes, path, format, source) {
                Ok(agent) => {
                    if let Some((_, first)) = seen.iter().find(|(n, _)| *n == agent.name) {
                        let fm_line = std::str::from_utf8(&bytes)
                            .ok()
                            .and_then(|t| {
                                split_frontmatter(t)
                                    .ok()
                                    .map(|(fm, _)| Frontmatter { text: fm }.key_line("name"))
                            })
                            .unwrap_or(1);
                        self.errors.push(AgentError {
                            file: path.clone(),
                            line: Some(fm_line),
                            key: Some("name"),
                            kind: AgentErrorKind::DuplicateName {
                                name: agent.name.clone(),
                                first: first.display().to_string(),
                            },
                        });
                        continue;
                    }
                    seen.push((agent.name.clone(), path.clone()));
                    self.insert(agent);
                }
                Err(e) => self.errors.push(e),
            }
        }
        if unlisted {
            let e = AgentError {
                file: dir.to_path_buf(),
                line: None,
                key: None,
                kind: AgentErrorKind::Io(format!(
                    "the folder holds more than {MAX_AGENT_FOLDER_ENTRIES} entries: only the agent files among the first {MAX_AGENT_FOLDER_ENTRIES} were looked at"
                )),
            };
            tracing::warn!(error = %e, "agent folder bounded");
            self.errors.push(e);
        }
    }

    fn insert(&mut self, mut agent: Agent) {
        if let Some(existing) = self.agents.iter_mut().find(|a| a.name == agent.name) {
            agent.overrides = Some(existing.source.to_string());
            tracing::debug!(agent = %agent.name, by = %agent.source, replaced = %existing.source, "agent overridden");
            *existing = agent;
        } else {
            self.agents.push(agent);
        }
    }

    /// Every valid agent: built-ins first (build, plan, explore, code-reviewer), then
    /// project agents in load order; an override keeps the position of what it
    /// replaced.
    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }

    /// The agent named exactly `name`, else the one whose name matches ignoring ASCII
    /// case.
    pub fn get(&self, name: &str) -> Option<&Agent> {
        let name = name.trim();
        self.agents.iter().find(|a| a.name == name).or_else(|| {
            self.agents
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(name))
        })
    }

    /// The problems found, one per bad file, in load order.
    pub fn errors(&self) -> &[AgentError] {
        &self.errors
    }

    /// The agents' names, in [`Catalog::agents`] order.
    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }
}

fn read_agent_file(path: &Path) -> Result<Vec<u8>, AgentError> {
    use decode_policy::paths::ReadError;
    let err = |kind| AgentError {
        file: path.to_path_buf(),
        line: None,
        key: None,
        kind,
    };
    // A sandboxed command that is still running made it (or a folder or link on
    // the way): not read; Decode takes it away when that command ends.
    if let Some(made) = crate::running_commands::made_by_a_running_command(path) {
        return Err(err(AgentErrorKind::Io(
            crate::running_commands::not_read_because(&made),
        )));
    }
    // Read without blocking, and only a regular file (a FIFO or a device
    // behind a link is refused at once).
    match decode_policy::paths::read_permission_file(path, MAX_AGENT_FILE_BYTES) {
        Ok(text) => Ok(text.into_bytes()),
        Err(ReadError::NotRegular) => Err(err(AgentErrorKind::NotRegular)),
        Err(e @ ReadError::HardLinked) => Err(err(AgentErrorKind::Io(e.to_string()))),
        Err(ReadError::TooLarge(_)) => Err(err(AgentErrorKind::TooLarge)),
        Err(ReadError::NotText) => {
            // Read again for the position of the bad byte: bounded and without
            // blocking, as it may have changed meanwhile.
            Ok(read_bounded(path, MAX_AGENT_FILE_BYTES).unwrap_or_default())
        }
        Err(ReadError::Io(e)) => Err(err(AgentErrorKind::Io(e.to_string()))),
    }
}

/// At most `max + 1` bytes of a regular file, opened without blocking.
fn read_bounded(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, format: AgentFormat) -> Result<Agent, AgentError> {
        parse_agent(
            text.as_bytes(),
            Path::new("x.md"),
            format,
            AgentSource::DecodeProject("x.md".into()),
        )
    }

    #[test]
    fn builtins_load_and_match_the_spec() {
        let c = Catalog::builtin();
        assert!(c.errors().is_empty(), "{:?}", c.errors());
        assert_eq!(c.names(), vec!["build", "plan", "explore", "code-reviewer"]);

        let build = c.get("build").unwrap();
        assert_eq!(build.tools, Tool::ALL.to_vec());
        assert_eq!(build.mode, Mode::Default);
        assert!(build.rules.is_empty());

        let plan = c.get("plan").unwrap();
        assert_eq!(
            plan.tools,
            vec![
                Tool::Read,
                Tool::Glob,
                Tool::Grep,
                Tool::WebFetch,
                Tool::TodoWrite,
                Tool::EnterPlanMode,
                Tool::ExitPlanMode,
                Tool::AskUser
            ]
        );
        assert_eq!(plan.mode, Mode::Plan);

        let explore = c.get("explore").unwrap();
        assert_eq!(
            explore.tools,
            vec![
                Tool::Read,
                Tool::Glob,
                Tool::Grep,
                Tool::WebFetch,
                Tool::AskUser
            ]
        );
        assert_eq!(explore.mode, Mode::Default);

        let reviewer = c.get("code-reviewer").unwrap();
        assert_eq!(
            reviewer.tools,
            vec![
                Tool::Read,
                Tool::Glob,
                Tool::Grep,
                Tool::WebFetch,
                Tool::Bash,
                Tool::AskUser
            ]
        );
        assert_eq!(reviewer.mode, Mode::Default);
        assert_eq!(reviewer.rules.allow, vec!["bash(git *)"]);
        assert!(reviewer.rules.ask.is_empty() && reviewer.rules.deny.is_empty());

        for a in c.agents() {
            assert_eq!(a.source, AgentSource::Builtin);
            assert!(!a.from_project());
            assert!(a.overrides.is_none());
            assert!(!a.description.is_empty());
            assert!(a.prompt.len() > 800, "{} prompt too short", a.name);
            assert!(a.prompt.contains("exit_plan_mode") || a.name != "plan");
            assert!(
                a.prompt.to_lowercase().contains("denial")
                    || a.prompt.to_lowercase().contains("denied")
            );
        }
    }

    #[test]
    fn split_rules() {
        assert_eq!(
            split_frontmatter("---\na: 1\n---\nbody").unwrap(),
            ("a: 1\n", "body")
        );
        assert_eq!(
            split_frontmatter("---\r\na: 1\r\n---\r\nbody").unwrap(),
            ("a: 1\r\n", "body")
        );
        assert_eq!(split_frontmatter("---\n---\n").unwrap(), ("", ""));
        assert_eq!(split_frontmatter("---\na: 1\n---").unwrap(), ("a: 1\n", ""));
        assert_eq!(split_frontmatter("\u{feff}---\n---\nx").unwrap(), ("", "x"));
        assert_eq!(
            split_frontmatter("a\n---\n"),
            Err(AgentErrorKind::MissingFrontmatter)
        );
        assert_eq!(
            split_frontmatter(""),
            Err(AgentErrorKind::MissingFrontmatter)
        );
        assert_eq!(
            split_frontmatter("----\n---\n"),
            Err(AgentErrorKind::MissingFrontmatter)
        );
        assert_eq!(
            split_frontmatter("---\na: 1\n"),
            Err(AgentErrorKind::UnclosedFrontmatter)
        );
        assert_eq!(
            split_frontmatter("---\na: ---\n"),
            Err(AgentErrorKind::UnclosedFrontmatter)
        );
    }

    #[test]
    fn star_means_every_tool_and_duplicates_collapse() {
        let a = parse(
            "---\nname: a\ndescription: d\ntools: ['*']\nmode: edit\n---\n",
            AgentFormat::Decode,
        )
        .unwrap();
        assert_eq!(a.tools, Tool::ALL.to_vec());
        let a = parse(
            "---\nname: a\ndescription: d\ntools: read, Read, READ\nmode: edit\n---\n",
            AgentFormat::Decode,
        )
        .unwrap();
        assert_eq!(a.tools, vec![Tool::Read]);
        assert_eq!(a.mode, Mode::Edit);
    }

    #[test]
    fn model_inherit_is_none() {
        let a = parse(
            "---\nname: a\ndescription: d\nmodel: inherit\n---\n",
            AgentFormat::Claude,
        )
        .unwrap();
        assert_eq!(a.model, None);
        let a = parse(
            "---\nname: a\ndescription: d\nmodel: sonnet\n---\n",
            AgentFormat::Claude,
        )
        .unwrap();
        assert_eq!(a.model.as_deref(), Some("sonnet"));
    }

    #[test]
    fn item_line_finds_block_items() {
        let fm = Frontmatter {
            text: "name: a\ntools:\n  - read\n  - fetch\nmode: default\n",
        };
        assert_eq!(fm.key_line("tools"), 3);
        assert_eq!(fm.item_line("tools", "fetch"), 5);
        assert_eq!(fm.item_line("tools", "nothere"), 3);
        assert_eq!(fm.key_line("mode"), 6);
        assert_eq!(fm.key_line("absent"), 1);
        let fm = Frontmatter {
            text: "\"mode\" : x\n",
        };
        assert_eq!(fm.key_line("mode"), 2);
    }

    #[test]
    fn error_display_names_file_line_and_key() {
        let e = parse(
            "---\nname: a\ndescription: d\ntools: [read]\nmode: fast\n---\n",
            AgentFormat::Decode,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(5));
        assert_eq!(e.key, Some("mode"));
        let s = e.to_string();
        assert!(s.starts_with("x.md:5: "), "{s}");
        assert!(s.contains("`mode`") && s.contains("fast"), "{s}");
    }

    #[test]
    fn effective_mode_for_untrusted_project_agents() {
        let mut a = parse(
            "---\nname: a\ndescription: d\ntools: [read]\nmode: bypass\n---\n",
            AgentFormat::Decode,
        )
        .unwrap();
        assert_eq!(a.effective_default_mode(false), Mode::Default);
        assert_eq!(a.effective_default_mode(true), Mode::Bypass);
        a.mode = Mode::Auto;
        assert_eq!(a.effective_default_mode(false), Mode::Default);
        a.mode = Mode::Edit;
        assert_eq!(a.effective_default_mode(false), Mode::Default);
        a.mode = Mode::Plan;
        assert_eq!(a.effective_default_mode(false), Mode::Plan);
        a.mode = Mode::Auto;
        a.source = AgentSource::Builtin;
        assert_eq!(a.effective_default_mode(false), Mode::Auto);
    }
}
