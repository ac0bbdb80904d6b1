//! The decision (docs/permissions.md, "The stages"): stages 0–8, first match wins,
//! every stage traced.
//!
//! This file holds the gate, its entry points and stage 0 (offered, control
//! tools); the rest is split by what is judged:
//!
//! - `compile`: building a gate (rules, scope, the protected set);
//! - `protected`, `places`: what is protected and where a path lands;
//! - `files`, `text`, `bash`: stages 1–7 for each kind of subject;
//! - `writes`: the caps on what a bash fragment writes or removes;

use std::path::{Path, PathBuf};

use crate::input::{AgentPolicy, Call, PolicyInput};
use crate::matcher::{PathForms, RuleIndex, Source, Under};
use crate::mode::Mode;
use crate::paths::{self, expand_home, is_harmless_device, lexical, within};
use crate::rules::{escape_glob, Rule, RuleList, RuleLists};
use crate::shell::model::Branch;
use crate::shell::{self, Fragment, Parsed, Role};
use crate::tool::{Tool, ToolKind};
use crate::trace::{
    CapKind, Decision, FragmentReport, Origin, PolicyWarning, Stage, TraceStep, Verdict,
};

mod bash;
mod compile;
mod exists;
mod files;
mod mcp;
mod memo;
mod net;
mod places;
mod protected;
mod read_only;
mod stored;
mod text;
mod writes;

use crate::protected_names::{IN_HOME, SYSTEM_DIRS};
use protected::{
    anywhere_label, glob_anywhere, glob_can_name, glob_components, glob_dir, linked_entries,
};
pub use protected::{protected_anywhere, ProtectedKind, ProtectedPath};

/// A path the agent must never change on its own.
#[derive(Debug, Clone)]
struct Protected {
    path: PathBuf,
    dir: bool,
    kind: ProtectedKind,
}

/// The compiled gate: built once per project, agent and settings; cheap to
/// query from many threads.
#[derive(Debug)]
pub struct Gate {
    agent: AgentPolicy,
    /// Canonical project root.
    root: PathBuf,
    /// Project root as given (lexically folded).
    root_given: PathBuf,
    home: PathBuf,
    home_canon: PathBuf,
    extra_dirs: Vec<PathBuf>,
    protected_branches: Vec<String>,
    protected: Vec<Protected>,
    /// Folders a bash fragment may not name either (they hold permission files).
    protected_parents: Vec<PathBuf>,
    git_dir: Option<PathBuf>,
    /// Decode's own config and data folders (given and resolved).
    app_dirs: Vec<PathBuf>,
    index: RuleIndex,
    /// Deny and ask rules (and external caps) that did not parse: the calls
    /// they could cover ask until they are fixed.
    broken_rules: Vec<BrokenRule>,
    /// git and cargo aliases in force for the project.
    shell: shell::ShellConfig,
    /// The MCP tools the agent offers (its `tools` list's `mcp__…` patterns).
    mcp_offered: Vec<crate::mcp::McpPattern>,
    /// The MCP tools the person marked read-only in their own settings.
    mcp_read_only: Vec<crate::mcp::McpPattern>,
    /// The hosts of the project's git remotes and the port each URL names (allowed
    /// without a rule on that port and on git's usual ones).
    remote_hosts: Vec<(String, Option<u16>)>,
    /// Read-only bash commands run like `read` (settings `readOnlyCommands`).
    read_only_commands: bool,
}

/// A deny or ask rule that did not parse. What it meant cannot be known, so
/// it is not dropped: every call it could cover (its tool's, when the tool
/// can be read; else every gated call) asks, naming it, in every mode — a
/// deny or ask verdict of the other rules stands (docs/permissions.md,
/// "Fail closed").
#[derive(Debug, Clone)]
struct BrokenRule {
    text: String,
    list: RuleList,
    source: String,
    message: String,
    /// The tool it names, when that part reads.
    tool: Option<Tool>,
}

impl BrokenRule {
    fn new(text: &str, list: RuleList, source: &str, message: &str) -> BrokenRule {
        let name = text.split('(').next().unwrap_or(text).trim();
        BrokenRule {
            text: text.to_string(),
            list,
            source: source.to_string(),
            message: message.to_string(),
            tool: Tool::from_name(name),
        }
    }

    fn covers(&self, tool: Tool) -> bool {
        self.tool.is_none_or(|t| t == tool)
    }
}

#[derive(Debug, Clone)]
struct Cap {
    kind: CapKind,
    reason: String,
    /// The fragment it applies to (bash), if any.
    frag: Option<usize>,
}

/// A path a bash fragment names, normalised.
#[derive(Debug, Clone)]
struct PathInfo {
    raw: String,
    /// Lexical path; `None` when relative to an unknown directory.
    given: Option<PathBuf>,
    /// Resolved physically (`..` after a symlink goes to the link target's parent).
    resolved: Option<PathBuf>,
    /// The lexical path resolved, when it differs from `resolved`.
    alt: Option<PathBuf>,
    /// Only known when the shell runs (`$X`, `$(…)`, `~+`…).
    dynamic: bool,
    /// Holds glob metacharacters (`*`, `?`, `[`).
    glob: bool,
}

/// Builds the decision while the stages run.
struct Run {
    trace: Vec<TraceStep>,
    frags: Vec<FragmentReport>,
    marks: Vec<Option<Verdict>>,
}

impl Run {
    fn new() -> Run {
        Run {
            trace: Vec::with_capacity(8),
            frags: Vec::new(),
            marks: Vec::new(),
        }
    }

    fn step(&mut self, stage: Stage, result: impl Into<String>) {
        self.trace.push(TraceStep {
            stage,
            result: result.into(),
        });
    }

    fn add_frag(&mut self, text: &str) {
        self.frags.push(FragmentReport {
            text: text.to_string(),
            verdict: Verdict::Allow,
            rule: None,
            cap: None,
        });
        self.marks.push(None);
    }

    fn mark(&mut self, i: usize, v: Verdict, rule: Option<String>) {
        if let Some(m) = self.marks.get_mut(i) {
            *m = Some(v);
        }
        if let (Some(r), Some(f)) = (rule, self.frags.get_mut(i)) {
            f.rule = Some(r);
        }
    }

    fn mark_all_unset(&mut self, v: Verdict) {
        for m in &mut self.marks {
            if m.is_none() {
                *m = Some(v);
            }
        }
    }

    fn finish(
        mut self,
        verdict: Verdict,
        reason: String,
        capped: bool,
        origin: Option<Origin>,
        always: Vec<String>,
    ) -> Decision {
        for (f, m) in self.frags.iter_mut().zip(&self.marks) {
            f.verdict = m.unwrap_or(verdict);
        }
        // Only an ask offers answers: a deny or an allow is never "capped".
        let capped = capped && verdict == Verdict::Ask;
        let always = if verdict == Verdict::Ask && !capped {
            always
        } else {
            Vec::new()
        };
        Decision {
            verdict,
            reason,
            trace: self.trace,
            fragments: self.frags,
            capped,
            origin,
            always_allow_rules: always,
        }
    }
}

fn quote(s: &str) -> String {
    // The first 120 characters, `…` when there are more.
    let (shown, more) = match s.char_indices().nth(120) {
        Some((end, _)) => (&s[..end], true),
        None => (s, false),
    };
    let mut t = String::with_capacity(shown.len() + 5);
    t.push('`');
    t.push_str(shown);
    if more {
        t.push('…');
    }
    t.push('`');
    t
}

fn plan_reason(tool: Tool) -> String {
    format!(
        "plan mode: `{tool}` is not allowed while planning — present your plan and call exit_plan_mode to ask for approval"
    )
}

/// `$PWD`/`${PWD}` (the folder the command runs in, when known) and
/// `$TMPDIR`/`${TMPDIR}` (`/tmp`) expanded at the start of a path.
fn static_vars(t: &str, cwd: Option<&Path>) -> String {
    let mut s = t.to_string();
    if let Some(c) = cwd {
        for v in ["${PWD}", "$PWD"] {
            if let Some(rest) = s.strip_prefix(v) {
                s = format!("{}{rest}", c.display());
            }
        }
    }
    for v in ["${TMPDIR}", "$TMPDIR"] {
        if let Some(rest) = s.strip_prefix(v) {
            s = format!("/tmp{rest}");
        }
    }
    s
}

/// The git folder of a project: `.git`, or where a `.git` file points.
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot = root.join(".git");
    let md = std::fs::metadata(&dot).ok()?;
    if md.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    Some(paths::resolve(&lexical(root, Path::new(target))))
}

impl Gate {
    /// The active agent.
    /// The fixed part of the never-automatic set: the project's permission files
    /// and agents, its `.git` (and the repository's, when the project is inside
    /// one), the shell start-up files, `~/.ssh` and Decode's own folders. The
    /// names of [`protected_anywhere`] come on top, wherever they stand.
    pub fn protected_paths(&self) -> Vec<ProtectedPath> {
        // The home folder outside its caches and the system folders are
        // read-only in the sandbox as a whole: their entries here are for the
        // gate (and a system folder must never be made to protect it).
        let mut out: Vec<ProtectedPath> = self
            .protected
            .iter()
            .filter(|p| {
                p.kind != ProtectedKind::HomeConfig
                    && !SYSTEM_DIRS.iter().any(|d| p.path.starts_with(d))
            })
            .map(|p| ProtectedPath {
                path: p.path.clone(),
                dir: p.dir,
                kind: p.kind,
            })
            .collect();
        for p in &self.protected_parents {
            out.push(ProtectedPath {
                path: p.clone(),
                dir: true,
                kind: ProtectedKind::PermissionFolder,
            });
        }
        out
    }

    /// The home folder's files other programs run or obey (`~/.gitconfig`,
    /// autostart, systemd user units, `~/.local/bin`, …): left out of
    /// [`Gate::protected_paths`] since the home folder is read-only in the sandbox,
    /// they are protected there too where the home folder is writable (the project
    /// is the home folder, or lies above it).
    pub fn protected_home_config(&self) -> Vec<ProtectedPath> {
        self.protected
            .iter()
            .filter(|p| p.kind == ProtectedKind::HomeConfig)
            .map(|p| ProtectedPath {
                path: p.path.clone(),
                dir: p.dir,
                kind: p.kind,
            })
            .collect()
    }

    /// The project's git folder (found from the root upwards), if any.
    pub fn git_dir(&self) -> Option<&Path> {
        self.git_dir.as_deref()
    }

    pub fn agent(&self) -> &AgentPolicy {
        &self.agent
    }

    /// The canonical project root.
    pub fn project_root(&self) -> &Path {
        &self.root
    }

    /// Whether any deny or ask rule covers reading paths (then searches
    /// filter what they find through [`Gate::search_filter`]).
    pub fn filters_searches(&self) -> bool {
        self.index.has_path_rules(RuleList::Deny, Tool::Read)
            || self.index.has_path_rules(RuleList::Ask, Tool::Read)
    }

    /// What the read rules say of a file a search (`grep`, `glob`) found at
    /// the absolute path `file`: `Deny` — never shown, not even its name;
    /// `Ask` — skipped and counted; `None` — shown. The file is judged as
    /// given and as resolved through links.
    pub fn search_filter(&self, file: &Path) -> Option<Verdict> {
        if !self.filters_searches() {
            return None;
        }
        let given = lexical(&self.root, file);
        let resolved = self.resolve(&given);
        let forms = self.search_forms(&given, &resolved);
        for (list, verdict) in [
            (RuleList::Deny, Verdict::Deny),
            (RuleList::Ask, Verdict::Ask),
        ] {
            for (abs, rel) in &forms {
                let f = PathForms {
                    abs,
                    rel: rel.as_deref(),
                };
                if self.index.match_path(list, Tool::Read, &f).is_some() {
                    return Some(verdict);
                }
            }
        }
        // Another name of the file may be one a rule covers (a hard link).
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(&resolved)
            .is_ok_and(|m| m.is_file() && m.nlink() > 1)
            .then_some(Verdict::Ask)
    }

    /// The forms a search is judged in: the folder as given and as resolved
    /// through links, the second left out when it is the same path (it
    /// would be judged the same).
    fn search_forms(&self, given: &Path, resolved: &Path) -> Vec<(String, Option<String>)> {
        let paths: &[&Path] = if given.as_os_str() == resolved.as_os_str() {
            &[given]
        } else {
            &[given, resolved]
        };
        paths
            .iter()
            .map(|p| (p.to_string_lossy().into_owned(), self.rel(p)))
            .collect()
    }

    /// Whether a search of the folder `root` (an absolute path) for files matching
    /// `pattern` (a glob relative to it; `*` for any file, at any depth) could reach
    /// a file that a read deny rule (`Deny`) or ask rule (`Ask`) covers, with the
    /// rule as reasons name it. Decode's own `grep` and `glob` leave such files out of their
    /// results; another agent's search (through `decode hook`) cannot be filtered, so
    /// there the search itself is refused or asked. The folder is judged as given and
    /// as resolved through links.
    pub fn search_could_reach(&self, root: &Path, pattern: &str) -> Option<(Verdict, String)> {
        self.search_could_reach_in(root, pattern, &[RuleList::Deny, RuleList::Ask])
    }

    /// [`Gate::search_could_reach`] for the rules of `lists` (deny, ask), in order.
    fn search_could_reach_in(
        &self,
        root: &Path,
        pattern: &str,
        lists: &[RuleList],
    ) -> Option<(Verdict, String)> {
        self.could_reach(root, pattern, lists, true)
    }

    /// Whether a read deny or ask rule could cover a file beneath the folder
    /// `root`, whatever exists there now (what git's store holds need not).
    fn rules_could_reach(&self, root: &Path) -> Option<(Verdict, String)> {
        self.could_reach(root, "*", &[RuleList::Deny, RuleList::Ask], false)
    }

    /// [`Gate::search_could_reach_in`]; `existing`: a rule's literal folder
    /// must exist to count.
    fn could_reach(
        &self,
        root: &Path,
        pattern: &str,
        lists: &[RuleList],
        existing: bool,
    ) -> Option<(Verdict, String)> {
        if !self.filters_searches() {
            return None;
        }
        let given = lexical(&self.root, root);
        let resolved = self.resolve(&given);
        let areas: Vec<Under> = self
            .search_forms(&given, &resolved)
            .iter()
            .map(|(abs, rel)| {
                let f = PathForms {
                    abs,
                    rel: rel.as_deref(),
                };
                Under::new(&f, pattern)
            })
            .collect();
        let existence = exists::Existence::default();
        let may_exist = |key: usize, folder: &Path, abs: bool| {
            !existing
                || existence.at(key, || {
                    if abs {
                        folder.to_path_buf()
                    } else {
                        self.root.join(folder)
                    }
                })
        };
        for &list in lists {
            let verdict = match list {
                RuleList::Deny => Verdict::Deny,
                _ => Verdict::Ask,
            };
            for area in &areas {
                if let Some(i) = self.index.match_under(list, Tool::Read, area, &may_exist) {
                    return Some((verdict, self.index.refs[i].describe()));
                }
            }
        }
        None
    }

    /// Judges one call in `mode` (docs/permissions.md, "The stages"), a shell command as run from the
    /// project root.
    pub fn decide(&self, call: &Call, mode: Mode) -> Decision {
        self.decide_in(call, mode, None)
    }

    /// Judges one call in `mode` with the bash session's working directory
    /// `cwd` (`None`: the project root). A shell command's relative paths
    /// resolve against it; a `cwd` outside the project is outside for the
    /// path scope. File tools always resolve against the project root.
    pub fn decide_in(&self, call: &Call, mode: Mode, cwd: Option<&Path>) -> Decision {
        self.decide_with(call, mode, cwd, false)
    }

    /// Judges `call` in `mode` as if the active agent offered its tool:
    /// what every stage after "not offered" says. For reads Decode makes on
    /// the agent's behalf (the project's instruction files), which must be
    /// allowed exactly where a `read` would be.
    pub fn decide_as_offered(&self, call: &Call, mode: Mode) -> Decision {
        self.decide_with(call, mode, None, true)
    }

    /// Whether the agent offers `call`'s tool (for an MCP tool: one of its `mcp__…`
    /// patterns covers the name).
    fn offers(&self, call: &Call) -> bool {
        match (call.tool, &call.mcp) {
            (Tool::Mcp, Some(name)) => self.mcp_offered.iter().any(|p| p.matches(name)),
            (Tool::Mcp, None) => false,
            (tool, _) => self.agent.tools.contains(&tool),
        }
    }

    /// Whether the person marked the MCP tool `name` read-only in their own settings.
    pub fn mcp_marked_read_only(&self, name: &crate::mcp::McpName) -> bool {
        self.mcp_read_only.iter().any(|p| p.matches(name))
    }

    /// Whether the active agent offers the MCP tool `name` to the model.
    pub fn offers_mcp(&self, name: &crate::mcp::McpName) -> bool {
        self.mcp_offered.iter().any(|p| p.matches(name))
    }

    fn decide_with(&self, call: &Call, mode: Mode, cwd: Option<&Path>, offered: bool) -> Decision {
        let _once = memo::OneJudgement::begin(&self.root);
        let mut run = Run::new();
        let tool = call.tool;
        if tool == Tool::Net {
            run.step(
                Stage::NotOffered,
                "a network destination: judged for every connection, whatever the agent",
            );
            return self.decide_net(call, mode, run);
        }
        if !offered && !self.offers(call) {
            let name = call.tool_name();
            run.step(
                Stage::NotOffered,
                format!("{name} is not in agent {}'s tools", self.agent.name),
            );
            return run.finish(
                Verdict::Deny,
                format!("`{name}` is not available to agent {}", self.agent.name),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(
            Stage::NotOffered,
            format!("offered to agent {}", self.agent.name),
        );
        match tool.kind() {
            ToolKind::Control => {
                run.step(Stage::Control, "control tools are never gated");
                run.finish(
                    Verdict::Allow,
                    format!("`{tool}` is a control tool: never gated"),
                    false,
                    None,
                    Vec::new(),
                )
            }
            _ => {
                let d = match tool {
                    Tool::Bash => self.decide_bash(call, mode, run, cwd),
                    Tool::Mcp => self.decide_mcp(call, mode, run),
                    Tool::WebFetch | Tool::TodoWrite => self.decide_text(call, mode, run),
                    _ => self.decide_path(call, mode, run),
                };
                self.unless_broken_rule(tool, d)
            }
        }
    }

    /// An allow stands only when no deny or ask rule that failed to parse
    /// could cover the call: such a rule makes it ask (fail closed).
    fn unless_broken_rule(&self, tool: Tool, mut d: Decision) -> Decision {
        if d.verdict != Verdict::Allow {
            return d;
        }
        let Some(b) = self.broken_rules.iter().find(|b| b.covers(tool)) else {
            return d;
        };
        let list = match b.list {
            RuleList::Deny => "deny",
            _ => "ask",
        };
        let why = format!(
            "the {list} rule `{}` in {} does not parse ({}): calls it could cover ask until it is fixed",
            b.text, b.source, b.message
        );
        d.trace.push(TraceStep {
            stage: Stage::AskRules,
            result: why.clone(),
        });
        d.verdict = Verdict::Ask;
        d.reason = why;
        d.capped = true;
        d.always_allow_rules.clear();
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<Gate>();
    }
}
