//! The project settings file `.decode/settings.json` (docs/permissions.md).
//!
//! Whole shape (every key optional, unknown keys kept):
//!
//! ```json
//! {"permissions": {"allow": [], "ask": [], "deny": []},
//!  "additionalDirectories": [], "protectedBranches": [],
//!  "caps": {"external": []}, "sleepMaxSeconds": 60}
//! ```
//!
//! Loading never writes. A missing file is empty; a malformed one (bad JSON or a
//! wrong type anywhere in the known keys) yields a [`SettingsWarning`] and empty
//! settings. One writer (used by [`append_allow_rules`], [`add_rule`],
//! [`remove_rule`] and [`set_string_list`]) changes the file under an exclusive
//! cross-process lock with an atomic replace, and refuses (leaving the file
//! byte-identical) whenever the file is malformed or cannot be written.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use decode_policy::RuleLists;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::fsutil;

/// The settings folder inside a project.
pub const SETTINGS_DIR: &str = ".decode";
/// The settings file name inside [`SETTINGS_DIR`].
pub const SETTINGS_FILE: &str = "settings.json";
/// The local settings file name inside [`SETTINGS_DIR`]: the person's own rules for
/// this project, kept out of version control.
pub const LOCAL_SETTINGS_FILE: &str = "settings.local.json";
/// `sleepMaxSeconds` when the file does not set it.
pub const DEFAULT_SLEEP_MAX_SECONDS: u64 = 60;

/// The path of a project's settings file: `<root>/.decode/settings.json`.
pub fn settings_path(project_root: &Path) -> PathBuf {
    project_root.join(SETTINGS_DIR).join(SETTINGS_FILE)
}

/// The path of a project's local settings file: `<root>/.decode/settings.local.json`.
pub fn local_settings_path(project_root: &Path) -> PathBuf {
    project_root.join(SETTINGS_DIR).join(LOCAL_SETTINGS_FILE)
}

/// Largest settings file read; a larger one is reported like a malformed one.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// How deeply JSON may nest in a settings file.
pub(crate) const MAX_NESTING: usize = 64;

/// The loaded project settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the settings were read from (whether or not the file exists).
    pub path: PathBuf,
    /// `permissions.allow` / `ask` / `deny`.
    pub permissions: RuleLists,
    /// `additionalDirectories`: folders outside the project the scope accepts.
    pub additional_directories: Vec<String>,
    /// `protectedBranches`, in addition to `main` and `master`.
    pub protected_branches: Vec<String>,
    /// `caps.external`: extra bash patterns that always ask.
    pub caps_external: Vec<String>,
    /// `sleepMaxSeconds` (default 60).
    pub sleep_max_seconds: u64,
    /// `disableBypassMode` (honoured from the managed file only).
    pub disable_bypass_mode: bool,
    /// `disableAutoMode` (honoured from the managed file only).
    pub disable_auto_mode: bool,
    /// `allowManagedRulesOnly` (honoured from the managed file only).
    pub allow_managed_rules_only: bool,
    /// `readOnlyCommands` when the file sets it: `false` at any level turns
    /// read-only commands off (docs/permissions.md, "Read-only commands").
    pub read_only_commands: Option<bool>,
    /// `hooks.preToolUse` (docs/permissions.md, "Hooks").
    pub pre_tool_hooks: Vec<HookEntry>,
    /// `hooks.postToolUse`.
    pub post_tool_hooks: Vec<HookEntry>,
    /// The whole file as read (an empty object when missing or malformed), unknown
    /// keys included, in file order.
    pub raw: Value,
}

impl Settings {
    /// Empty settings for a project (what a missing or malformed file means).
    pub fn empty(project_root: &Path) -> Settings {
        Settings::empty_at(settings_path(project_root))
    }

    /// Empty settings read from `path` (what a missing or malformed file means).
    pub fn empty_at(path: PathBuf) -> Settings {
        Settings {
            path,
            permissions: empty_rule_lists(),
            additional_directories: Vec::new(),
            protected_branches: Vec::new(),
            caps_external: Vec::new(),
            sleep_max_seconds: DEFAULT_SLEEP_MAX_SECONDS,
            disable_bypass_mode: false,
            disable_auto_mode: false,
            allow_managed_rules_only: false,
            read_only_commands: None,
            pre_tool_hooks: Vec::new(),
            post_tool_hooks: Vec::new(),
            raw: Value::Object(Map::new()),
        }
    }

    /// The settings while the project's file is held back (a running sandboxed
    /// command changed the way to it): its rules are unknown, so every tool that is
    /// not read-only asks, whatever the mode (none of the file's deny or ask rules
    /// is dropped into an allow).
    pub(crate) fn held_back_at(path: PathBuf) -> Settings {
        let mut s = Settings::empty_at(path);
        s.permissions.ask = decode_policy::Tool::ALL
            .iter()
            .filter(|t| t.kind() != decode_policy::ToolKind::ReadOnly)
            .map(|t| t.name().to_string())
            .collect();
        s
    }

    /// Loads `<project_root>/.decode/settings.json`. Never fails and never writes: a
    /// missing file gives empty settings; an unreadable or malformed one gives empty
    /// settings and a warning naming the file, line and column.
    pub fn load(project_root: &Path) -> (Settings, Vec<SettingsWarning>) {
        Settings::load_file(&settings_path(project_root))
    }

    /// Loads a settings file of any level (docs/permissions.md, "Settings levels")
    /// as [`Settings::load`] does: never fails, never writes, never blocks.
    pub fn load_file(path: &Path) -> (Settings, Vec<SettingsWarning>) {
        let path = path.to_path_buf();
        // A sandboxed command that is still running made it (or a folder or link on
        // the way): not read; Decode takes it away when that command ends.
        if let Some(made) = crate::running_commands::made_by_a_running_command(&path) {
            let w = SettingsWarning {
                path: path.clone(),
                line: None,
                column: None,
                message: format!(
                    "{}; until then every tool that changes something asks",
                    crate::running_commands::not_read_because(&made)
                ),
            };
            tracing::warn!(warning = %w, "ignoring a settings file a running command made");
            return (Settings::held_back_at(path), vec![w]);
        }
        // A cloned repository's file: a regular file of at most 1 MiB, read
        // without blocking (a FIFO or `/dev/zero` behind a link is refused).
        match decode_policy::paths::read_permission_file(&path, MAX_SETTINGS_BYTES) {
            Ok(text) => match Settings::parse(&path, text.as_bytes()) {
                Ok(s) => (s, Vec::new()),
                Err(w) => {
                    tracing::warn!(warning = %w, "ignoring malformed settings file");
                    (Settings::empty_at(path), vec![w])
                }
            },
            Err(e) if e.is_missing() => (Settings::empty_at(path), Vec::new()),
            Err(e) => {
                let w = SettingsWarning {
                    path: path.clone(),
                    line: None,
                    column: None,
                    message: format!("could not read the settings file: {e}"),
                };
                tracing::warn!(warning = %w, "ignoring unreadable settings file");
                (Settings::empty_at(path), vec![w])
            }
        }
    }

    /// Parses settings file contents; `path` is used for the result and in warnings.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Settings, SettingsWarning> {
        let (raw, file) = parse_validated(bytes).map_err(|e| e.into_warning(path))?;
        let permissions = file.permissions.unwrap_or_default();
        Ok(Settings {
            path: path.to_path_buf(),
            permissions: RuleLists {
                allow: permissions.allow.unwrap_or_default(),
                ask: permissions.ask.unwrap_or_default(),
                deny: permissions.deny.unwrap_or_default(),
            },
            additional_directories: file.additional_directories.unwrap_or_default(),
            protected_branches: file.protected_branches.unwrap_or_default(),
            caps_external: file.caps.and_then(|c| c.external).unwrap_or_default(),
            sleep_max_seconds: file.sleep_max_seconds.unwrap_or(DEFAULT_SLEEP_MAX_SECONDS),
            disable_bypass_mode: file.disable_bypass_mode.unwrap_or(false),
            disable_auto_mode: file.disable_auto_mode.unwrap_or(false),
            allow_managed_rules_only: file.allow_managed_rules_only.unwrap_or(false),
            read_only_commands: file.read_only_commands,
            pre_tool_hooks: file
                .hooks
                .as_ref()
                .and_then(|h| h.pre_tool_use.clone())
                .unwrap_or_default(),
            post_tool_hooks: file.hooks.and_then(|h| h.post_tool_use).unwrap_or_default(),
            raw,
        })
    }
}

/// The settings of a folder around a project (see [`load_enclosing`]).
#[derive(Debug, Clone)]
pub struct EnclosingSettings {
    /// The folder that holds `.decode/settings.json`.
    pub root: PathBuf,
    /// Its settings (empty while the file is malformed or unreadable; the
    /// warning says so).
    pub settings: Settings,
}

/// The settings files of the folders around `project_root`: every folder above it,
/// up to and including the home folder (up to `/` for a project outside the home
/// folder), that holds `.decode/settings.json`, nearest first. Their deny and ask
/// rules apply in the project too: a subfolder, a submodule or a vendored
/// repository with a `.decode/` of its own never sheds the rules of the project
/// around it. Each file is read like the project's own (bounded, never blocking);
/// a malformed or unreadable one comes back as a warning.
///
/// `project_root` is the canonical root; `given`, when set, is the root as it was
/// reached (through a link, say): the folders above that spelling count too, so a
/// link inside a project to a folder elsewhere does not leave the project's rules
/// behind.
pub fn load_enclosing(
    project_root: &Path,
    given: Option<&Path>,
    home: &Path,
) -> (Vec<EnclosingSettings>, Vec<SettingsWarning>) {
    let mut homes: Vec<PathBuf> = vec![home.to_path_buf()];
    if let Ok(c) = home.canonicalize() {
        if c != home {
            homes.push(c);
        }
    }
    let mut starts: Vec<PathBuf> = vec![project_root.to_path_buf()];
    if let Some(g) = given {
        let g = decode_policy::paths::lexical(Path::new("/"), g);
        if g != project_root {
            starts.push(g);
        }
    }
    let mut found: Vec<EnclosingSettings> = Vec::new();
    let mut seen: Vec<PathBuf> = vec![project_root.to_path_buf()];
    let mut warnings = Vec::new();
    for start in &starts {
        let under_home = homes.iter().any(|h| start.starts_with(h) && start != h);
        for dir in start.ancestors().skip(1) {
            let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
            if !seen.contains(&canonical) {
                seen.push(canonical);
                let path = settings_path(dir);
                // Anything there counts (a FIFO or a dangling link is reported like
                // a malformed file by the loader); nothing there is no settings.
                if std::fs::symlink_metadata(&path).is_ok() {
                    let (settings, w) = Settings::load(dir);
                    warnings.extend(w);
                    found.push(EnclosingSettings {
                        root: dir.to_path_buf(),
                        settings,
                    });
                }
            }
            if under_home && homes.iter().any(|h| h.as_path() == dir) {
                break;
            }
        }
    }
    (found, warnings)
}

fn empty_rule_lists() -> RuleLists {
    RuleLists {
        allow: Vec::new(),
        ask: Vec::new(),
        deny: Vec::new(),
    }
}

/// A problem with the settings file; the settings were treated as empty.
///
/// Displays as `<path>:<line>:<column>: <message>` (or `<path>: <message>` when there
/// is no position, e.g. an unreadable file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsWarning {
    /// The settings file.
    pub path: PathBuf,
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// 1-based column of the problem, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SettingsWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", self.path.display(), self.message),
            (Some(l), None) => write!(f, "{}:{l}: {}", self.path.display(), self.message),
            _ => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for SettingsWarning {}

/// The typed view of the known keys, used to validate types (unknown keys ignored;
/// `null` counts as absent).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SettingsFile {
    #[serde(deserialize_with = "object_only")]
    permissions: Option<PermissionsFile>,
    additional_directories: Option<Vec<String>>,
    protected_branches: Option<Vec<String>>,
    #[serde(deserialize_with = "object_only")]
    caps: Option<CapsFile>,
    sleep_max_seconds: Option<u64>,
    disable_bypass_mode: Option<bool>,
    disable_auto_mode: Option<bool>,
    allow_managed_rules_only: Option<bool>,
    read_only_commands: Option<bool>,
    #[serde(deserialize_with = "object_only")]
    hooks: Option<HooksFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HooksFile {
    pre_tool_use: Option<Vec<HookEntry>>,
    post_tool_use: Option<Vec<HookEntry>>,
}

/// One command hook of a settings file (docs/permissions.md, "Hooks"):
/// `{"matcher": "bash|edit|mcp__*", "command": "…", "timeout": 10}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// Tool names, `|`-separated globs, matched without regard to case against
    /// Decode's name and Claude Code's (`bash`, `Bash`); absent or `*`: every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The command, run by `sh -c`.
    pub command: String,
    /// Seconds before it is stopped (default 60).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Claude Code's `"type": "command"` (the only type).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PermissionsFile {
    allow: Option<Vec<String>>,
    ask: Option<Vec<String>>,
    deny: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CapsFile {
    external: Option<Vec<String>>,
}

/// Deserialises an optional struct from a JSON object only (serde's derive would also
/// accept an array of field values); `null` is `None`.
pub(crate) fn object_only<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ObjectVisitor<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for ObjectVisitor<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }
    d.deserialize_any(ObjectVisitor(std::marker::PhantomData))
}

/// A parse or type problem with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseProblem {
    line: usize,
    column: usize,
    message: String,
}

impl ParseProblem {
    pub(crate) fn into_warning(self, path: &Path) -> SettingsWarning {
        SettingsWarning {
            path: path.to_path_buf(),
            line: Some(self.line),
            column: Some(self.column),
            message: self.message,
        }
    }
}

/// Parses and type-checks the file. A file holding only whitespace counts as `{}`.
fn parse_validated(bytes: &[u8]) -> Result<(Value, SettingsFile), ParseProblem> {
    parse_object(bytes)
}

/// Parses a settings file of any level (docs/permissions.md, "Settings files"): a
/// JSON object nested at most [`MAX_NESTING`] deep, with the known keys of `T` type
/// checked (the problem names the key). A file holding only whitespace is `{}`.
pub(crate) fn parse_object<T>(bytes: &[u8]) -> Result<(Value, T), ParseProblem>
where
    T: for<'de> Deserialize<'de> + Default,
{
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok((Value::Object(Map::new()), T::default()));
    }
    let depth = decode_policy::paths::nesting_depth(&String::from_utf8_lossy(bytes));
    if depth > MAX_NESTING {
        return Err(ParseProblem {
            line: 1,
            column: 1,
            message: format!("the settings file nests deeper than {MAX_NESTING} levels"),
        });
    }
    let raw: Value = serde_json::from_slice(bytes).map_err(|e| json_problem(&e, None))?;
    if !raw.is_object() {
        let (line, column) = first_token_position(bytes);
        return Err(ParseProblem {
            line,
            column,
            message: format!(
                "the settings file must hold a JSON object, not {}",
                json_kind(&raw)
            ),
        });
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let file: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let key = e.path().to_string();
        json_problem(e.inner(), Some(key))
    })?;
    Ok((raw, file))
}

fn json_problem(e: &serde_json::Error, key: Option<String>) -> ParseProblem {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    let message = match key {
        Some(k) if !k.is_empty() && k != "." => format!("`{k}`: {message}"),
        _ => message,
    };
    ParseProblem {
        line: e.line().max(1),
        column: e.column().max(1),
        message,
    }
}

fn first_token_position(bytes: &[u8]) -> (usize, usize) {
    let (mut line, mut column) = (1, 1);
    for &b in bytes {
        match b {
            b'\n' => {
                line += 1;
                column = 1;
            }
            b' ' | b'\t' | b'\r' => column += 1,
            _ => break,
        }
    }
    (line, column)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What [`append_allow_rules`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendOutcome {
    /// The settings file.
    pub path: PathBuf,
    /// Rules appended to `permissions.allow`, in order.
    pub added: Vec<String>,
    /// Rules that were already present (or repeated in the input) and so skipped.
    pub already_present: Vec<String>,
}

/// Why an always-allow rule could not be saved; the file was left untouched.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The file is not valid JSON, or a known key has the wrong type.
    #[error("{}:{line}:{column}: {message}, so the rule was not saved", path.display())]
    Malformed {
        /// The settings file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file or its folder has no write permission.
    #[error("{} is read-only, so the rule was not saved", path.display())]
    ReadOnly {
        /// The read-only file or folder.
        path: PathBuf,
    },
    /// A rule given to save does not parse.
    #[error("`{rule}` is not a valid rule ({reason}), so it was not saved")]
    InvalidRule {
        /// The rule text.
        rule: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The `.decode` folder, the settings file or its lock file is a link: the
    /// rule is not written through it (a cloned repository could point it at
    /// another project's settings).
    #[error("{} is a link ({}); Decode does not write settings through a link, so the rule was not saved", path.display(), target.display())]
    Linked {
        /// The link.
        path: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// Reading, locking or writing failed.
    #[error("could not {action} {}: {source}, so the rule was not saved", path.display())]
    Io {
        /// What was being done ("read", "write", "lock", "create the folder of").
        action: &'static str,
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

fn refuse_links(paths: &[&Path]) -> Result<(), PersistError> {
    for p in paths {
        if let Ok(md) = std::fs::symlink_metadata(p) {
            if md.file_type().is_symlink() {
                return Err(PersistError::Linked {
                    path: p.to_path_buf(),
                    target: std::fs::read_link(p).unwrap_or_default(),
                });
            }
        }
    }
    Ok(())
}

/// A settings file Decode writes (docs/permissions.md, "Settings levels"): the
/// project's shared file, its local file, or the person's own file. The managed file
/// is never written by Decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteTarget {
    /// `<root>/.decode/settings.json` ("this project, shared").
    Project(PathBuf),
    /// `<root>/.decode/settings.local.json` ("this project, only me").
    Local(PathBuf),
    /// `<config>/settings.json`, Decode's config folder ("every project").
    User(PathBuf),
}

impl WriteTarget {
    /// The file written.
    pub fn path(&self) -> PathBuf {
        match self {
            WriteTarget::Project(root) => settings_path(root),
            WriteTarget::Local(root) => local_settings_path(root),
            WriteTarget::User(config) => crate::user_settings::user_settings_path(config),
        }
    }

    /// Its level.
    pub fn level(&self) -> decode_policy::Level {
        match self {
            WriteTarget::Project(_) => decode_policy::Level::Project,
            WriteTarget::Local(_) => decode_policy::Level::Local,
            WriteTarget::User(_) => decode_policy::Level::User,
        }
    }

    /// The target of a level for a project (`None` for managed: Decode never
    /// writes it).
    pub fn of(
        level: decode_policy::Level,
        project_root: &Path,
        config_dir: &Path,
    ) -> Option<WriteTarget> {
        match level {
            decode_policy::Level::Managed => None,
            decode_policy::Level::User => Some(WriteTarget::User(config_dir.to_path_buf())),
            decode_policy::Level::Project => Some(WriteTarget::Project(project_root.to_path_buf())),
            decode_policy::Level::Local => Some(WriteTarget::Local(project_root.to_path_buf())),
        }
    }
}

/// Appends `rules` to `permissions.allow` in `<project_root>/.decode/settings.json`,
/// keeping every other key, rule and the key order.
///
/// Runs under an exclusive cross-process lock on `.decode/settings.json.lock`,
/// re-reads the file inside the lock, skips rules already present, and replaces the
/// file atomically (temp file, fsync, same permissions, rename, folder fsync). When
/// every rule is already present nothing is written. A malformed file, a wrong-typed
/// known key, a read-only file or folder, or an I/O failure is an error and the file
/// is left byte-identical.
pub fn append_allow_rules(
    project_root: &Path,
    rules: &[String],
) -> Result<AppendOutcome, PersistError> {
    append_allow_rules_to(&WriteTarget::Project(project_root.to_path_buf()), rules)
}

/// [`append_allow_rules`] for any level's file; creating the local file adds it to
/// the repository's `.git/info/exclude`.
pub fn append_allow_rules_to(
    target: &WriteTarget,
    rules: &[String],
) -> Result<AppendOutcome, PersistError> {
    for rule in rules {
        check_rule(rule)?;
    }
    let (path, (added, already_present)) = modify(target, |root| {
        let allow = list_array(root, "allow");
        let mut added = Vec::new();
        let mut already_present = Vec::new();
        for rule in rules {
            if allow.iter().any(|v| v.as_str() == Some(rule.as_str())) {
                already_present.push(rule.clone());
            } else {
                allow.push(Value::String(rule.clone()));
                added.push(rule.clone());
            }
        }
        (!added.is_empty(), (added, already_present))
    })?;
    if !added.is_empty() {
        tracing::info!(path = %path.display(), rules = ?added, "saved always-allow rules");
    }
    Ok(AppendOutcome {
        path,
        added,
        already_present,
    })
}

/// A rule list of the settings file: `allow`, `ask` or `deny`.
fn list_key(list: &str) -> Result<&'static str, PersistError> {
    match list {
        "allow" => Ok("allow"),
        "ask" => Ok("ask"),
        "deny" => Ok("deny"),
        other => Err(PersistError::InvalidRule {
            rule: other.to_string(),
            reason: "the lists are allow, ask and deny".into(),
        }),
    }
}

fn check_rule(rule: &str) -> Result<(), PersistError> {
    decode_policy::Rule::parse(rule)
        .map(|_| ())
        .map_err(|e| PersistError::InvalidRule {
            rule: rule.to_string(),
            reason: e.to_string(),
        })
}

/// Adds `rule` to `permissions.<list>` (`allow`, `ask` or `deny`) of the project's
/// settings file, through the same locked, atomic writer as always-allow. A rule that
/// does not parse is refused with the reason. Returns whether it was added (false:
/// it was there already, nothing written).
pub fn add_rule(project_root: &Path, list: &str, rule: &str) -> Result<bool, PersistError> {
    add_rule_to(
        &WriteTarget::Project(project_root.to_path_buf()),
        list,
        rule,
    )
}

/// [`add_rule`] for any level's file.
pub fn add_rule_to(target: &WriteTarget, list: &str, rule: &str) -> Result<bool, PersistError> {
    let key = list_key(list)?;
    check_rule(rule)?;
    let (path, added) = modify(target, |root| {
        let rules = list_array(root, key);
        if rules.iter().any(|v| v.as_str() == Some(rule)) {
            (false, false)
        } else {
            rules.push(Value::String(rule.to_string()));
            (true, true)
        }
    })?;
    tracing::info!(path = %path.display(), list = key, rule, added, "rule added");
    Ok(added)
}

/// Removes every copy of `rule` from `permissions.<list>`; returns whether there was
/// one (false: nothing written).
pub fn remove_rule(project_root: &Path, list: &str, rule: &str) -> Result<bool, PersistError> {
    remove_rule_from(
        &WriteTarget::Project(project_root.to_path_buf()),
        list,
        rule,
    )
}

/// [`remove_rule`] for any level's file.
pub fn remove_rule_from(
    target: &WriteTarget,
    list: &str,
    rule: &str,
) -> Result<bool, PersistError> {
    let key = list_key(list)?;
    let (path, removed) = modify(target, |root| {
        let rules = list_array(root, key);
        let before = rules.len();
        rules.retain(|v| v.as_str() != Some(rule));
        let removed = rules.len() != before;
        (removed, removed)
    })?;
    tracing::info!(path = %path.display(), list = key, rule, removed, "rule removed");
    Ok(removed)
}

/// Replaces a top-level list of strings: `additionalDirectories` or
/// `protectedBranches`. Empty entries are dropped.
pub fn set_string_list(
    project_root: &Path,
    key: &str,
    values: &[String],
) -> Result<(), PersistError> {
    let key = match key {
        "additionalDirectories" => "additionalDirectories",
        "protectedBranches" => "protectedBranches",
        other => {
            return Err(PersistError::InvalidRule {
                rule: other.to_string(),
                reason: "only additionalDirectories and protectedBranches are edited here".into(),
            })
        }
    };
    let values: Vec<Value> = values
        .iter()
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .map(|v| Value::String(v.to_string()))
        .collect();
    let (path, ()) = modify(&WriteTarget::Project(project_root.to_path_buf()), |root| {
        let obj = object(root);
        let new = Value::Array(values);
        if obj.get(key) == Some(&new) {
            return (false, ());
        }
        obj.insert(key.to_string(), new);
        (true, ())
    })?;
    tracing::info!(path = %path.display(), key, "settings list saved");
    Ok(())
}

/// The one writer of the settings file: under the lock, re-reads the file, lets
/// `edit` change the parsed object (it reports whether it changed anything, and a
/// result), and replaces the file atomically when it did. Never writes through a
/// link; a malformed or read-only file is an error and stays byte-identical.
fn modify<T>(
    target: &WriteTarget,
    edit: impl FnOnce(&mut Value) -> (bool, T),
) -> Result<(PathBuf, T), PersistError> {
    let path = target.path();
    let dir = fsutil::parent_dir(&path);
    let lock_path = fsutil::lock_path_for(&path);
    // Never through a link out of the project: not the `.decode` folder, not
    // the file, not its lock. (The person's own config folder may be reached
    // through links they made; the file and its lock may not be links.)
    let user = matches!(target, WriteTarget::User(_));
    if user {
        refuse_links(&[&path, &lock_path])?;
    } else {
        refuse_links(&[&dir, &path, &lock_path])?;
    }
    std::fs::create_dir_all(&dir).map_err(|source| PersistError::Io {
        action: "create the folder",
        path: dir.clone(),
        source,
    })?;
    if !user {
        refuse_links(&[&dir])?;
    }
    // From here on everything happens through one descriptor of the
    // `.decode` folder, opened from `/` without following a link: a link
    // swapped in for the folder, the file or the lock after the check above
    // cannot redirect the lock, the read or the write (it is an error).
    let linked = |source: io::Error, at: &Path| {
        if source.to_string().contains("changed after it was judged") {
            PersistError::Linked {
                path: at.to_path_buf(),
                target: std::fs::read_link(at).unwrap_or_default(),
            }
        } else {
            PersistError::Io {
                action: "open",
                path: at.to_path_buf(),
                source,
            }
        }
    };
    let real_dir = match target {
        WriteTarget::Project(root) | WriteTarget::Local(root) => {
            decode_policy::paths::resolve(root).join(SETTINGS_DIR)
        }
        WriteTarget::User(_) => decode_policy::paths::resolve(&dir),
    };
    let folder = crate::beneath::open_dir(&real_dir, false).map_err(|e| linked(e, &dir))?;
    let file_name = path
        .file_name()
        .unwrap_or(std::ffi::OsStr::new(SETTINGS_FILE))
        .to_owned();
    let file_name = file_name.as_os_str();
    let lock_name = lock_path.file_name().unwrap_or(file_name).to_owned();
    let _lock = folder.lock(&lock_name).map_err(|e| linked(e, &lock_path))?;

    let original = match folder.read(file_name) {
        Ok(found) => found.map(|(bytes, _)| bytes),
        Err(e) if e.to_string().contains("changed after it was judged") => {
            return Err(linked(e, &path))
        }
        Err(source) => {
            return Err(PersistError::Io {
                action: "read",
                path,
                source,
            })
        }
    };
    let mut root = match &original {
        // The loader ignores a file this large: a rule saved to it would do nothing.
        Some(bytes) if bytes.len() as u64 > MAX_SETTINGS_BYTES => {
            return Err(PersistError::Malformed {
                path,
                line: 1,
                column: 1,
                message: format!(
                    "the file is larger than {} KiB, so Decode does not read it",
                    MAX_SETTINGS_BYTES / 1024
                ),
            })
        }
        Some(bytes) => {
            parse_validated(bytes)
                .map_err(|p| PersistError::Malformed {
                    path: path.clone(),
                    line: p.line,
                    column: p.column,
                    message: p.message,
                })?
                .0
        }
        None => Value::Object(Map::new()),
    };

    let (changed, result) = edit(&mut root);
    if !changed {
        tracing::debug!(path = %path.display(), "settings unchanged; nothing written");
        return Ok((path, result));
    }

    if original.is_some() && is_read_only(&path) {
        return Err(PersistError::ReadOnly { path });
    }
    if is_read_only(&dir) {
        return Err(PersistError::ReadOnly { path: dir });
    }
    let mut text = serde_json::to_string_pretty(&root).map_err(|e| PersistError::Io {
        action: "serialise",
        path: path.clone(),
        source: io::Error::other(e),
    })?;
    text.push('\n');
    folder
        .atomic_write(file_name, text.as_bytes())
        .map_err(|source| PersistError::Io {
            action: "write",
            path: path.clone(),
            source,
        })?;
    if original.is_none() {
        if let WriteTarget::Local(root) = target {
            exclude_from_git(root, &path);
        }
    }
    Ok((path, result))
}

/// Adds the local settings file Decode just created to the repository's
/// `.git/info/exclude` (the person's own rules stay out of version control). A
/// project outside a repository, or an exclude file that cannot be written, is
/// logged and otherwise ignored: the rule was saved.
fn exclude_from_git(project_root: &Path, file: &Path) {
    let root = decode_policy::paths::resolve(project_root);
    let Some((top, git_dir)) = root.ancestors().find_map(|d| {
        let dot = d.join(".git");
        let md = std::fs::symlink_metadata(&dot).ok()?;
        if md.is_dir() {
            return Some((d.to_path_buf(), dot));
        }
        // A worktree or submodule: `.git` is a file naming the git folder, whose
        // `commondir` (a worktree's) holds the shared `info/exclude`.
        let text = std::fs::read_to_string(&dot).ok()?;
        let named = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        let git = if named.is_absolute() {
            named
        } else {
            d.join(named)
        };
        let common = std::fs::read_to_string(git.join("commondir"))
            .ok()
            .map(|c| {
                let c = PathBuf::from(c.trim());
                if c.is_absolute() {
                    c
                } else {
                    git.join(c)
                }
            });
        Some((d.to_path_buf(), common.unwrap_or(git)))
    }) else {
        tracing::debug!(project = %root.display(), "no repository: nothing to exclude");
        return;
    };
    let real_file = root.join(SETTINGS_DIR).join(LOCAL_SETTINGS_FILE);
    let Ok(rel) = real_file.strip_prefix(&top) else {
        return;
    };
    let line = format!("/{}", rel.to_string_lossy());
    let exclude = git_dir.join("info").join("exclude");
    let existing = std::fs::read_to_string(&exclude).unwrap_or_default();
    if existing.lines().any(|l| l.trim() == line) {
        return;
    }
    let result = (|| -> io::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(git_dir.join("info"))?;
        if std::fs::symlink_metadata(&exclude).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::other("the exclude file is a link"));
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&exclude)?;
        let sep = if existing.is_empty() || existing.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        writeln!(f, "{sep}{line}")
    })();
    match result {
        Ok(()) => {
            tracing::info!(file = %file.display(), exclude = %exclude.display(), "local settings kept out of version control")
        }
        Err(e) => {
            tracing::warn!(exclude = %exclude.display(), error = %e, "could not add the local settings file to the git exclude file")
        }
    }
}

/// The root object of a validated settings value (replacing anything else).
fn object(root: &mut Value) -> &mut Map<String, Value> {
    if !root.is_object() {
        *root = Value::Object(Map::new());
    }
    let Value::Object(obj) = root else {
        unreachable!("just ensured an object")
    };
    obj
}

/// The `permissions.<key>` array of a validated settings object, created (replacing
/// `null`) when absent. Validation guarantees the types of present values.
fn list_array<'a>(root: &'a mut Value, key: &str) -> &'a mut Vec<Value> {
    let obj = object(root);
    let perms = obj
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    if !perms.is_object() {
        *perms = Value::Object(Map::new());
    }
    let Value::Object(perms) = perms else {
        unreachable!("just ensured an object")
    };
    let list = perms.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let Value::Array(list) = list else {
        unreachable!("just ensured an array")
    };
    list
}

fn is_read_only(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.permissions().readonly())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> PathBuf {
        PathBuf::from("/proj/.decode/settings.json")
    }

    #[test]
    fn parses_every_key() {
        let s = Settings::parse(
            &p(),
            br#"{"permissions":{"allow":["read"],"ask":["bash(rm *)"],"deny":["edit(.env)"]},
                "additionalDirectories":["/tmp/x"],"protectedBranches":["release"],
                "caps":{"external":["make release*"]},"sleepMaxSeconds":5,"other":1}"#,
        )
        .unwrap();
        assert_eq!(s.permissions.allow, vec!["read"]);
        assert_eq!(s.permissions.ask, vec!["bash(rm *)"]);
        assert_eq!(s.permissions.deny, vec!["edit(.env)"]);
        assert_eq!(s.additional_directories, vec!["/tmp/x"]);
        assert_eq!(s.protected_branches, vec!["release"]);
        assert_eq!(s.caps_external, vec!["make release*"]);
        assert_eq!(s.sleep_max_seconds, 5);
        assert_eq!(s.raw["other"], 1);
    }

    #[test]
    fn empty_object_and_whitespace_are_empty_settings() {
        for text in [&b"{}"[..], b"", b"  \n"] {
            let s = Settings::parse(&p(), text).unwrap();
            assert!(s.permissions.allow.is_empty());
            assert_eq!(s.sleep_max_seconds, 60);
        }
    }

    #[test]
    fn null_counts_as_absent() {
        let s = Settings::parse(&p(), br#"{"permissions":null,"sleepMaxSeconds":null}"#).unwrap();
        assert!(s.permissions.allow.is_empty());
        assert_eq!(s.sleep_max_seconds, 60);
    }

    #[test]
    fn syntax_error_has_position() {
        let w = Settings::parse(
            &p(),
            b"{\n  \"permissions\": {\n    \"allow\": [\"read\",]\n  }\n}",
        )
        .unwrap_err();
        assert_eq!(w.line, Some(3));
        let text = w.to_string();
        assert!(text.starts_with("/proj/.decode/settings.json:3:"), "{text}");
        assert!(!text.contains(" at line "), "{text}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let w = Settings::parse(&p(), b"{\"permissions\": {\"allow\": \"read\"}}").unwrap_err();
        let text = w.to_string();
        assert!(text.contains("permissions.allow"), "{text}");
        assert!(text.starts_with("/proj/.decode/settings.json:1:"), "{text}");

        let w = Settings::parse(&p(), b"{\"sleepMaxSeconds\": -1}").unwrap_err();
        assert!(w.to_string().contains("sleepMaxSeconds"), "{w}");
        let w = Settings::parse(&p(), b"{\"permissions\": [\"read\"]}").unwrap_err();
        assert!(
            w.message.contains("`permissions`") && w.message.contains("JSON object"),
            "{w}"
        );
        let w = Settings::parse(&p(), b"{\"caps\": {\"external\": [1]}}").unwrap_err();
        assert!(w.to_string().contains("caps.external"), "{w}");
    }

    #[test]
    fn non_object_root_is_malformed() {
        let w = Settings::parse(&p(), b"\n  [1, 2]").unwrap_err();
        assert_eq!((w.line, w.column), (Some(2), Some(3)));
        assert!(w.message.contains("must hold a JSON object"), "{w}");
    }

    #[test]
    fn warning_display_without_position() {
        let w = SettingsWarning {
            path: p(),
            line: None,
            column: None,
            message: "boom".into(),
        };
        assert_eq!(w.to_string(), "/proj/.decode/settings.json: boom");
    }

    #[test]
    fn list_array_creates_missing_structure() {
        let mut v: Value = serde_json::from_str(r#"{"z":1,"permissions":{"deny":["x"]}}"#).unwrap();
        list_array(&mut v, "allow").push(Value::String("read".into()));
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"z":1,"permissions":{"deny":["x"],"allow":["read"]}}"#
        );
        let mut v: Value = serde_json::from_str(r#"{"permissions":null}"#).unwrap();
        list_array(&mut v, "allow").push(Value::String("read".into()));
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"permissions":{"allow":["read"]}}"#
        );
    }
}
