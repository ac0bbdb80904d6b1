//! The decision (docs/permissions.md, "The stages"): stages 0–8, first match wins, every stage traced.

use std::path::{Path, PathBuf};

use crate::branches::Branch;
use crate::caps;
use crate::input::{AgentPolicy, Call, PolicyInput};
use crate::matcher::{PathForms, RuleIndex, Source};
use crate::mode::Mode;
use crate::paths::{self, expand_home, is_harmless_device, lexical, within};
use crate::rules::{escape_glob, Rule, RuleList, RuleLists};
use crate::shell::{self, Fragment, Parsed, Role};
use crate::tool::{Tool, ToolKind};
use crate::trace::{Decision, FragmentReport, Origin, PolicyWarning, TraceStep, Verdict};

/// A path the agent must never change on its own.
#[derive(Debug, Clone)]
struct Protected {
    path: PathBuf,
    dir: bool,
    label: &'static str,
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
    /// git and cargo aliases in force for the project.
    shell: shell::ShellConfig,
}

/// Which cap applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum CapKind {
    Critical,
    NeverAuto,
    External,
    Scope,
}

impl CapKind {
    fn name(self) -> &'static str {
        match self {
            CapKind::Critical => "critical removal",
            CapKind::NeverAuto => "never automatic",
            CapKind::External => "external effects",
            CapKind::Scope => "path scope",
        }
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

/// Whether a glob component (bash rules: `*` does not match a leading dot
/// unless the pattern starts with one) can match `name`.
fn component_matches(pattern: &str, name: &str, dotglob: bool) -> bool {
    if !pattern.contains(['*', '?', '[']) {
        return pattern == name;
    }
    if name.starts_with('.') && !pattern.starts_with('.') && !dotglob {
        return false;
    }
    if pattern.bytes().all(|b| b == b'*') {
        return true;
    }
    match globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
    {
        Ok(g) => g.compile_matcher().is_match(name),
        Err(_) => pattern == name,
    }
}

/// The folder part of a glob path before its first glob component.
fn glob_dir(g: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in g.components() {
        if c.as_os_str().to_string_lossy().contains(['*', '?', '[']) {
            break;
        }
        out.push(c);
    }
    out
}

/// A file or folder the gate never lets a call change on its own (the
/// never-automatic set), as the file tools and the bash sandbox see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    /// Absolute; as given and as resolved both appear when they differ.
    pub path: PathBuf,
    /// A folder: everything beneath it is protected too.
    pub dir: bool,
    /// What it is, for messages ("the project's permission file").
    pub label: &'static str,
}

/// What a file or folder name is protected as wherever it stands, if it is:
/// `.git` (a repository's internals), `.vscode`, `.idea` and `.envrc` (files other
/// tools run on their own).
pub fn protected_anywhere(name: &std::ffi::OsStr) -> Option<&'static str> {
    match name.as_encoded_bytes() {
        b".git" => Some("git internals"),
        b".vscode" | b".idea" | b".envrc" => Some("a file other tools run on their own"),
        _ => None,
    }
}

/// The links directly inside `dir`: an agent file that is a link is read from
/// where it points.
fn linked_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(4096)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| e.path())
        .collect()
}

/// Names protected wherever they stand: `.git` internals of any repository,
/// and files other tools run on their own.
fn anywhere_label(p: &Path) -> Option<&'static str> {
    let mut label = None;
    for c in p.components() {
        let name = c.as_os_str();
        // `.envrc` is a file: only as the last name.
        if name == ".envrc" {
            continue;
        }
        match protected_anywhere(name) {
            Some(l) if name == ".git" => label = Some(l),
            Some(l) => label = label.or(Some(l)),
            None => {}
        }
    }
    if label.is_none() {
        label = p
            .file_name()
            .filter(|n| *n == ".envrc")
            .and_then(protected_anywhere);
    }
    label
}

/// Whether a glob path can name something [`anywhere_label`] protects.
fn glob_anywhere(g: &Path, dotglob: bool) -> Option<&'static str> {
    let comps: Vec<String> = g
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = comps.len().saturating_sub(1);
    for (k, c) in comps.iter().enumerate() {
        if !c.contains(['*', '?', '[']) {
            continue;
        }
        if component_matches(c, ".git", dotglob) {
            return Some("git internals");
        }
        if component_matches(c, ".vscode", dotglob)
            || component_matches(c, ".idea", dotglob)
            || (k == last && component_matches(c, ".envrc", dotglob))
        {
            return Some("a file other tools run on their own");
        }
    }
    None
}

/// Whether the glob path `pattern` (absolute, lexically folded) can name
/// `target` (or, when `dir`, something inside it).
fn glob_can_name(pattern: &Path, target: &Path, dir: bool, dotglob: bool) -> bool {
    let pc: Vec<String> = pattern
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let tc: Vec<String> = target
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let enough = if dir {
        pc.len() >= tc.len()
    } else {
        pc.len() == tc.len()
    };
    enough
        && tc
            .iter()
            .zip(&pc)
            .all(|(t, p)| component_matches(p, t, dotglob))
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

    fn step(&mut self, stage: &str, result: impl Into<String>) {
        self.trace.push(TraceStep {
            stage: stage.to_string(),
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
    let mut t: String = s.chars().take(120).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    format!("`{t}`")
}

fn plan_reason(tool: Tool) -> String {
    format!(
        "plan mode: `{tool}` is not allowed while planning — present your plan and call exit_plan_mode to ask for approval"
    )
}

impl Gate {
    /// Compiles the rules, folders and caps of `input`. A rule that does not
    /// parse is reported as a warning (naming the rule and its source) and skipped.
    pub fn new(input: PolicyInput) -> (Gate, Vec<PolicyWarning>) {
        let mut warnings = Vec::new();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let root_given = lexical(&cwd, &input.project_root);
        let root = paths::resolve(&root_given);
        let home = lexical(&cwd, &input.home);
        let home_canon = paths::resolve(&home);
        let trusted = input.trusted;

        let mut index = RuleIndex::new();
        let homes: Vec<&Path> = if home == home_canon {
            vec![home.as_path()]
        } else {
            vec![home.as_path(), home_canon.as_path()]
        };
        let agent_name = input.agent.name.clone();
        let agent_allow_ok = trusted || !input.agent.from_project;
        let mut add_lists = |lists: &RuleLists, source: Source, allow_ok: bool| {
            let sets = [
                (RuleList::Deny, &lists.deny),
                (RuleList::Ask, &lists.ask),
                (RuleList::Allow, &lists.allow),
            ];
            for (list, texts) in sets {
                if list == RuleList::Allow && !allow_ok {
                    if !texts.is_empty() {
                        tracing::debug!(
                            "untrusted project: {} allow rules from {} ignored",
                            texts.len(),
                            source.describe()
                        );
                    }
                    continue;
                }
                for text in texts {
                    let result = Rule::parse(text)
                        .map_err(|e| e.to_string())
                        .and_then(|r| index.add(list, &r, source.clone(), &homes));
                    if let Err(message) = result {
                        warnings.push(PolicyWarning {
                            rule: text.clone(),
                            source: source.describe(),
                            message,
                        });
                    }
                }
            }
        };
        add_lists(&input.project_rules, Source::Project, trusted);
        add_lists(
            &input.agent.rules,
            Source::Agent(agent_name.clone()),
            agent_allow_ok,
        );
        for p in &input.external_caps {
            if let Err(message) = index.add_external(p) {
                warnings.push(PolicyWarning {
                    rule: p.clone(),
                    source: ".decode/settings.json caps.external".into(),
                    message,
                });
            }
        }
        index.finish();

        let extra_dirs = if trusted {
            input
                .additional_directories
                .iter()
                .filter(|d| !d.trim().is_empty())
                .map(|d| paths::extra_dir(&root, &home, d))
                .collect()
        } else {
            Vec::new()
        };

        let mut protected = Vec::new();
        let mut protected_parents = Vec::new();
        let mut roots = vec![root.clone()];
        if root_given != root {
            roots.push(root_given.clone());
        }
        for r in &roots {
            let entries: [(&str, bool, &'static str); 4] = [
                (
                    ".decode/settings.json",
                    false,
                    "the project's permission file",
                ),
                (".decode/agents", true, "the project's agent definitions"),
                (".claude/agents", true, "the project's agent definitions"),
                (".git", true, "git internals"),
            ];
            for (p, dir, label) in entries {
                protected.push(Protected {
                    path: r.join(p),
                    dir,
                    label,
                });
            }
            protected_parents.push(r.join(".decode"));
            protected_parents.push(r.join(".claude"));
        }
        // The permission and agent files are read through links: what such a
        // link points to is protected as the file is, and so is every link on
        // the way (retargeting one would swap the file read) and the first
        // component that does not exist yet (creating it decides where the file
        // read really is). Else a repository could link its settings to a file
        // the agent may edit, or create, and grant itself rights once trusted.
        let mut through_links = Vec::new();
        let guard_chain =
            |path: &Path, dir: bool, label: &'static str, out: &mut Vec<Protected>| {
                let chain = paths::resolve_chain(path);
                if chain.resolved != path {
                    out.push(Protected {
                        path: chain.resolved.clone(),
                        dir,
                        label,
                    });
                }
                if chain.links.is_empty() && chain.resolved == path {
                    return chain.resolved;
                }
                for link in chain.links {
                    if link != path {
                        out.push(Protected {
                            path: link,
                            dir: false,
                            label,
                        });
                    }
                }
                if let Some(missing) = chain.first_missing {
                    out.push(Protected {
                        path: missing,
                        dir: true,
                        label,
                    });
                }
                chain.resolved
            };
        for e in &protected {
            let resolved = guard_chain(&e.path, e.dir, e.label, &mut through_links);
            if e.dir && e.label == "the project's agent definitions" {
                for entry in linked_entries(&resolved) {
                    guard_chain(&entry, false, e.label, &mut through_links);
                }
            }
        }
        // A folder of permission files that is a link: its target is such a folder
        // too (as the folder itself is: not protected as a whole), and the links
        // and missing components on the way are protected.
        let mut parents_through_links = Vec::new();
        for p in &protected_parents {
            let mut found = Vec::new();
            let resolved = guard_chain(p, true, "a folder of permission files", &mut found);
            for f in found {
                if f.path == resolved {
                    parents_through_links.push(resolved.clone());
                } else {
                    through_links.push(f);
                }
            }
        }
        protected.extend(through_links);
        protected_parents.extend(parents_through_links);
        let git_dir = git_dir(&root);
        if let Some(g) = &git_dir {
            if !g.starts_with(&root) {
                protected.push(Protected {
                    path: g.clone(),
                    dir: true,
                    label: "git internals",
                });
            }
        }
        let mut hs = vec![home.clone()];
        if home_canon != home {
            hs.push(home_canon.clone());
        }
        for h in &hs {
            for f in [
                ".bashrc",
                ".bash_profile",
                ".bash_login",
                ".bash_logout",
                ".profile",
                ".zshrc",
                ".zshenv",
                ".zprofile",
                ".zlogin",
                ".zlogout",
            ] {
                protected.push(Protected {
                    path: h.join(f),
                    dir: false,
                    label: "a shell start-up file",
                });
            }
            protected.push(Protected {
                path: h.join(".ssh"),
                dir: true,
                label: "~/.ssh",
            });
        }
        let mut app_dirs = Vec::new();
        for d in PolicyInput::app_dirs_for(&home)
            .into_iter()
            .chain(input.app_dirs.iter().cloned())
        {
            if !d.is_absolute() {
                continue;
            }
            for p in [lexical(Path::new("/"), &d), paths::resolve(&d)] {
                if !app_dirs.contains(&p) {
                    app_dirs.push(p);
                }
            }
        }
        for d in &app_dirs {
            protected.push(Protected {
                path: d.clone(),
                dir: true,
                label: "Decode's own settings and trust store",
            });
        }

        let mut protected_branches = vec!["main".to_string(), "master".to_string()];
        for b in &input.protected_branches {
            let b = b.trim();
            if !b.is_empty() && !protected_branches.iter().any(|x| x == b) {
                protected_branches.push(b.to_string());
            }
        }

        let shell = shell::ShellConfig::load(&root, &home, git_dir.as_deref());
        let gate = Gate {
            shell,
            agent: input.agent,
            root,
            root_given,
            home,
            home_canon,
            extra_dirs,
            protected_branches,
            protected,
            protected_parents,
            git_dir,
            app_dirs,
            index,
        };
        (gate, warnings)
    }

    /// The active agent.
    /// The fixed part of the never-automatic set: the project's permission files
    /// and agents, its `.git` (and the repository's, when the project is inside
    /// one), the shell start-up files, `~/.ssh` and Decode's own folders. The
    /// names of [`protected_anywhere`] come on top, wherever they stand.
    pub fn protected_paths(&self) -> Vec<ProtectedPath> {
        let mut out: Vec<ProtectedPath> = self
            .protected
            .iter()
            .map(|p| ProtectedPath {
                path: p.path.clone(),
                dir: p.dir,
                label: p.label,
            })
            .collect();
        for p in &self.protected_parents {
            out.push(ProtectedPath {
                path: p.clone(),
                dir: true,
                label: "a folder of permission files",
            });
        }
        out
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
        let forms: Vec<(String, Option<String>)> = [&given, &resolved]
            .iter()
            .map(|p| (p.to_string_lossy().into_owned(), self.rel(p)))
            .collect();
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

    fn decide_with(&self, call: &Call, mode: Mode, cwd: Option<&Path>, offered: bool) -> Decision {
        let mut run = Run::new();
        let tool = call.tool;
        if !offered && !self.agent.tools.contains(&tool) {
            run.step(
                "not_offered",
                format!("{tool} is not in agent {}'s tools", self.agent.name),
            );
            return run.finish(
                Verdict::Deny,
                format!("`{tool}` is not available to agent {}", self.agent.name),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(
            "not_offered",
            format!("offered to agent {}", self.agent.name),
        );
        match tool.kind() {
            ToolKind::Control => {
                run.step("control", "control tools are never gated");
                run.finish(
                    Verdict::Allow,
                    format!("`{tool}` is a control tool: never gated"),
                    false,
                    None,
                    Vec::new(),
                )
            }
            _ => match tool {
                Tool::Bash => self.decide_bash(call, mode, run, cwd),
                Tool::WebFetch | Tool::TodoWrite => self.decide_text(call, mode, run),
                _ => self.decide_path(call, mode, run),
            },
        }
    }

    // ----------------------------------------------------------------- paths

    fn rel(&self, p: &Path) -> Option<String> {
        let r = paths::strip_within(p, &self.root)
            .or_else(|| paths::strip_within(p, &self.root_given))?;
        let s = r.to_string_lossy();
        Some(if s.is_empty() {
            ".".to_string()
        } else {
            s.into_owned()
        })
    }

    fn resolve(&self, p: &Path) -> PathBuf {
        paths::resolve_under(&self.root, p)
    }

    /// A glob path: its literal prefix (the components before the first one
    /// holding a metacharacter) resolved, the rest appended as written.
    fn resolve_glob(&self, given: &Path) -> PathBuf {
        let mut prefix = PathBuf::from("/");
        let mut rest = PathBuf::new();
        let mut in_rest = false;
        for c in given.components() {
            let s = c.as_os_str().to_string_lossy();
            if matches!(c, std::path::Component::RootDir) {
                continue;
            }
            if in_rest || s.contains(['*', '?', '[']) {
                in_rest = true;
                rest.push(c.as_os_str());
            } else {
                prefix.push(c.as_os_str());
            }
        }
        self.resolve(&prefix).join(rest)
    }

    /// Whether the glob path `g` can name a protected path or a folder of
    /// permission files.
    fn glob_protected(&self, g: &Path, dotglob: bool) -> Option<&'static str> {
        if let Some(e) = self
            .protected
            .iter()
            .find(|e| glob_can_name(g, &e.path, e.dir, dotglob))
        {
            return Some(e.label);
        }
        if let Some(l) = glob_anywhere(g, dotglob) {
            return Some(l);
        }
        self.protected_parents
            .iter()
            .any(|pp| glob_can_name(g, pp, false, dotglob))
            .then_some("a folder of permission files")
    }

    /// Resolves an absolute path that may hold `.`/`..`, as the kernel does:
    /// each `..` applies to the path resolved so far (after symlinks).
    fn resolve_physical(&self, p: &Path) -> PathBuf {
        if !p
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return self.resolve(&lexical(Path::new("/"), p));
        }
        paths::resolve(p)
    }

    fn in_scope(&self, resolved: &Path) -> bool {
        within(resolved, &self.root) || self.extra_dirs.iter().any(|d| within(resolved, d))
    }

    fn protected_label(&self, p: &Path) -> Option<&'static str> {
        self.protected
            .iter()
            .find(|e| {
                if e.dir {
                    within(p, &e.path)
                } else {
                    p.as_os_str().len() == e.path.as_os_str().len() && p == e.path
                }
            })
            .map(|e| e.label)
            .or_else(|| anywhere_label(p))
    }

    fn is_critical_dir(&self, p: &Path) -> bool {
        p.parent().is_none()
            || p.parent() == Some(Path::new("/"))
            || p == self.home
            || p == self.home_canon
            || within(&self.root, p)
            || within(&self.root_given, p)
            || within(&self.home, p)
            || within(&self.home_canon, p)
    }

    fn is_strict_ancestor_of_critical(&self, d: &Path) -> bool {
        let strict = |x: &Path| x != d && within(x, d);
        d.parent().is_none()
            || strict(&self.root)
            || strict(&self.root_given)
            || strict(&self.home)
            || strict(&self.home_canon)
    }

    /// The folder a `git merge` lands in: the checked-out branch.
    fn current_branch(&self) -> Option<String> {
        let g = self.git_dir.as_ref()?;
        let head = std::fs::read_to_string(g.join("HEAD")).ok()?;
        let r = head.trim().strip_prefix("ref:")?.trim();
        Some(r.strip_prefix("refs/heads/").unwrap_or(r).to_string())
    }

    // ------------------------------------------------------- file tools

    fn decide_path(&self, call: &Call, mode: Mode, mut run: Run) -> Decision {
        let tool = call.tool;
        // Judged exactly as the tool will use it (no trimming).
        let subject = call.subject.as_str();
        let shown = if subject.is_empty() { "." } else { subject };
        run.add_frag(shown);
        if subject.len() > paths::MAX_PATH_BYTES {
            let why = format!(
                "the path is {} bytes long, over the system's limit of {} bytes",
                subject.len(),
                paths::MAX_PATH_BYTES
            );
            run.step("path_limit", why.clone());
            return run.finish(Verdict::Deny, why, true, None, Vec::new());
        }
        if subject.contains('\0') {
            // No file has such a name: the system would cut the path short.
            let why = "the path holds a NUL byte, which no file name can".to_string();
            run.step("path_limit", why.clone());
            return run.finish(Verdict::Deny, why, true, None, Vec::new());
        }
        let expanded = expand_home(shown, &self.home);
        let given = lexical(&self.root, &expanded);
        // The tool opens the lexically folded path; the kernel applies `..`
        // after symlinks. Both are judged when they differ.
        let lex_resolved = self.resolve(&given);
        let physical = self.resolve_physical(&self.root.join(&expanded));
        let (resolved, alt) = if physical == lex_resolved {
            (lex_resolved, None)
        } else {
            (physical, Some(lex_resolved))
        };
        let alt_s = alt.as_ref().map(|a| a.to_string_lossy().into_owned());
        let alt_rel = alt.as_ref().and_then(|a| self.rel(a));
        let gs = given.to_string_lossy();
        let rs = resolved.to_string_lossy();
        let g_rel = self.rel(&given);
        let r_rel = self.rel(&resolved);
        let gf = PathForms {
            abs: &gs,
            rel: g_rel.as_deref(),
        };
        let rf = PathForms {
            abs: &rs,
            rel: r_rel.as_deref(),
        };

        // A search root is also judged by what lies inside it (`dir/**` rules).
        let probes: Vec<(String, Option<String>)> = if matches!(tool, Tool::Glob | Tool::Grep) {
            [(&gs, &g_rel), (&rs, &r_rel)]
                .into_iter()
                .map(|(a, r)| {
                    let join = |s: &str| {
                        if s == "." {
                            "x".to_string()
                        } else {
                            format!("{}/x", s.trim_end_matches('/'))
                        }
                    };
                    (join(a), r.as_deref().map(join))
                })
                .collect()
        } else {
            Vec::new()
        };
        let probe_forms: Vec<PathForms<'_>> = probes
            .iter()
            .map(|(a, r)| PathForms {
                abs: a,
                rel: r.as_deref(),
            })
            .collect();
        let af = alt_s.as_deref().map(|a| PathForms {
            abs: a,
            rel: alt_rel.as_deref(),
        });
        let check = |list: RuleList| {
            self.index
                .match_path(list, tool, &gf)
                .or_else(|| self.index.match_path(list, tool, &rf))
                .or_else(|| {
                    af.as_ref()
                        .and_then(|f| self.index.match_path(list, tool, f))
                })
                .or_else(|| {
                    probe_forms
                        .iter()
                        .find_map(|f| self.index.match_path(list, tool, f))
                })
        };

        // 1. deny rules: the path as given or as resolved.
        if let Some(m) = check(RuleList::Deny) {
            let r = &self.index.refs[m.rule];
            run.mark(0, Verdict::Deny, Some(r.text.clone()));
            run.step("deny_rules", format!("{} matches {}", quote(shown), r.text));
            return run.finish(
                Verdict::Deny,
                format!("denied by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step("deny_rules", "no deny rule matches");

        // 2. plan.
        if mode == Mode::Plan && tool.kind() == ToolKind::FileEdit {
            run.step("plan", "plan mode denies file edits");
            return run.finish(Verdict::Deny, plan_reason(tool), true, None, Vec::new());
        }
        if mode == Mode::Plan {
            run.step("plan", "read-only tools run in plan mode");
        }

        // 4. ask rules.
        let m = check(RuleList::Ask);
        if let Some(m) = m {
            let r = &self.index.refs[m.rule];
            run.mark(0, Verdict::Ask, Some(r.text.clone()));
            run.step("ask_rules", format!("{} matches {}", quote(shown), r.text));
            return run.finish(
                Verdict::Ask,
                format!("asks by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step("ask_rules", "no ask rule matches");

        // 5. bypass: no file cap survives bypass.
        if mode == Mode::Bypass {
            run.step("bypass", "bypass mode: allow candidate");
            run.step("caps", "only critical removal applies in bypass: none");
            return run.finish(
                Verdict::Allow,
                "bypass mode allows it".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }

        // 6. allow rules (resolved path), then the mode.
        let always = vec![format!(
            "{}({})",
            tool.name(),
            escape_glob(&r_rel.clone().unwrap_or_else(|| rs.to_string()))
        )];
        let auto = mode == Mode::Auto;
        let (origin, reason) = match self.index.match_path(RuleList::Allow, tool, &rf) {
            Some(m) => {
                let r = &self.index.refs[m.rule];
                run.mark(0, Verdict::Allow, Some(r.text.clone()));
                run.step(
                    "allow_rules",
                    format!("{} matches {}", quote(shown), r.text),
                );
                (
                    if auto { Origin::Wildcard } else { Origin::Rule },
                    format!("allowed by rule {}", r.describe()),
                )
            }
            None => {
                run.step("allow_rules", "no allow rule matches");
                match (tool.kind(), mode) {
                    (ToolKind::ReadOnly, _) => {
                        run.step("mode", format!("{mode} mode allows read-only tools"));
                        (
                            if auto { Origin::Wildcard } else { Origin::Mode },
                            "read-only tools are allowed".to_string(),
                        )
                    }
                    (_, Mode::Edit) => {
                        run.step("mode", "edit mode allows file edits");
                        (Origin::Mode, "edit mode allows file edits".to_string())
                    }
                    (_, Mode::Auto) => {
                        run.step("mode", "auto mode: wildcard allow");
                        (Origin::Wildcard, "auto mode allows it".to_string())
                    }
                    _ => {
                        run.step("mode", format!("{mode} mode asks before editing files"));
                        let mut caps = self.path_caps(tool, &given, &resolved, &rs, None);
                        if let (Some(a), Some(s)) = (&alt, &alt_s) {
                            caps.extend(self.path_caps(tool, &given, a, s, None));
                            caps.sort_by_key(|c| c.kind);
                        }
                        let hard = caps.iter().find(|c| c.kind != CapKind::Scope);
                        if let Some(c) = hard {
                            run.frags[0].cap = Some(c.kind.name().into());
                            run.step("caps", format!("{}: {}", c.kind.name(), c.reason));
                            return run.finish(
                                Verdict::Ask,
                                c.reason.clone(),
                                true,
                                None,
                                Vec::new(),
                            );
                        }
                        let reason = match caps.first() {
                            Some(c) => {
                                format!("{mode} mode asks before editing files; {}", c.reason)
                            }
                            None => format!("{mode} mode asks before editing files"),
                        };
                        return run.finish(Verdict::Ask, reason, false, None, always);
                    }
                }
            }
        };

        // 7. caps.
        let mut caps = self.path_caps(tool, &given, &resolved, &rs, Some(origin));
        if let (Some(a), Some(s)) = (&alt, &alt_s) {
            caps.extend(self.path_caps(tool, &given, a, s, Some(origin)));
            caps.sort_by_key(|c| c.kind);
        }
        if let Some(c) = caps.first() {
            run.frags[0].cap = Some(c.kind.name().into());
            run.mark(0, Verdict::Ask, None);
            run.step("caps", format!("{}: {}", c.kind.name(), c.reason));
            let capped = c.kind != CapKind::Scope;
            return run.finish(Verdict::Ask, c.reason.clone(), capped, Some(origin), always);
        }
        run.step("caps", "no cap applies");
        run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
    }

    fn path_caps(
        &self,
        tool: Tool,
        given: &Path,
        resolved: &Path,
        rs: &str,
        origin: Option<Origin>,
    ) -> Vec<Cap> {
        let mut out = Vec::new();
        if tool.kind() == ToolKind::FileEdit {
            if let Some(label) = self
                .protected_label(resolved)
                .or_else(|| self.protected_label(given))
            {
                out.push(Cap {
                    kind: CapKind::NeverAuto,
                    reason: format!(
                        "`{tool}` of {} ({}) is never automatic: asks every time",
                        label,
                        resolved.display()
                    ),
                    frag: None,
                });
            }
        }
        if origin != Some(Origin::Wildcard)
            && !self.in_scope(resolved)
            && !is_harmless_device(given)
            && self.index.anchored_allow(tool, rs).is_none()
        {
            out.push(Cap {
                kind: CapKind::Scope,
                reason: format!("{} is outside the project: asks", resolved.display()),
                frag: None,
            });
        }
        out
    }

    // ------------------------------------------------- web_fetch, todo_write

    fn decide_text(&self, call: &Call, mode: Mode, mut run: Run) -> Decision {
        let tool = call.tool;
        let subject = call.subject.trim();
        run.add_frag(subject);
        let host = if tool == Tool::WebFetch {
            url_host(subject)
        } else {
            None
        };
        let normal = if tool == Tool::WebFetch {
            url_normal(subject)
        } else {
            None
        };
        let matcher = |list: RuleList| -> Option<usize> {
            if tool == Tool::WebFetch {
                if list == RuleList::Allow {
                    // An unparsable URL (or one without a host) matches no
                    // allow rule; a parsed one is matched as it will be fetched.
                    host.as_ref()?;
                    let n = normal.as_deref()?;
                    return self.index.match_url(list, n, host.as_deref());
                }
                // Deny and ask: the raw string, the parsed form, and the
                // forms many servers treat alike (`%73ecret`, `//secret`, `SECRET`).
                self.index
                    .match_url(list, subject, host.as_deref())
                    .or_else(|| {
                        normal
                            .as_deref()
                            .and_then(|n| self.index.match_url(list, n, host.as_deref()))
                    })
                    .or_else(|| {
                        url_loose_forms(subject)
                            .iter()
                            .find_map(|n| self.index.match_url(list, n, host.as_deref()))
                    })
            } else {
                self.index.match_text(list, tool, subject)
            }
        };
        if let Some(i) = matcher(RuleList::Deny) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Deny, Some(r.text.clone()));
            run.step("deny_rules", format!("matches {}", r.text));
            return run.finish(
                Verdict::Deny,
                format!("denied by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step("deny_rules", "no deny rule matches");
        if mode == Mode::Plan {
            run.step("plan", "read-only tools run in plan mode");
        }
        if let Some(i) = matcher(RuleList::Ask) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Ask, Some(r.text.clone()));
            run.step("ask_rules", format!("matches {}", r.text));
            return run.finish(
                Verdict::Ask,
                format!("asks by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step("ask_rules", "no ask rule matches");
        if mode == Mode::Bypass {
            run.step("bypass", "bypass mode: allow candidate");
            run.step("caps", "no cap applies");
            return run.finish(
                Verdict::Allow,
                "bypass mode allows it".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }
        let auto = mode == Mode::Auto;
        let (origin, reason) = match matcher(RuleList::Allow) {
            Some(i) => {
                let r = &self.index.refs[i];
                run.mark(0, Verdict::Allow, Some(r.text.clone()));
                run.step("allow_rules", format!("matches {}", r.text));
                (
                    if auto { Origin::Wildcard } else { Origin::Rule },
                    format!("allowed by rule {}", r.describe()),
                )
            }
            None => {
                run.step("allow_rules", "no allow rule matches");
                run.step("mode", format!("{mode} mode allows read-only tools"));
                (
                    if auto { Origin::Wildcard } else { Origin::Mode },
                    "read-only tools are allowed".to_string(),
                )
            }
        };
        run.step("caps", "no cap applies");
        run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
    }

    // ------------------------------------------------------------- bash

    fn path_infos(&self, f: &Fragment) -> Vec<PathInfo> {
        f.paths
            .iter()
            .map(|raw| {
                let expanded =
                    paths::expand_user(raw).unwrap_or_else(|| expand_home(raw, &self.home));
                if paths::is_dynamic_path(&expanded.to_string_lossy()) {
                    return PathInfo {
                        raw: raw.clone(),
                        given: None,
                        resolved: None,
                        alt: None,
                        dynamic: true,
                        glob: false,
                    };
                }
                let (given, joined) = if expanded.is_absolute() {
                    (
                        Some(lexical(Path::new("/"), &expanded)),
                        Some(expanded.clone()),
                    )
                } else {
                    (
                        f.cwd.as_ref().map(|c| lexical(c, &expanded)),
                        f.cwd.as_ref().map(|c| c.join(&expanded)),
                    )
                };
                let glob = raw.contains(['*', '?', '[']);
                let resolved = if glob {
                    // The literal prefix resolved, the rest appended.
                    given.as_ref().map(|g| self.resolve_glob(g))
                } else {
                    joined.as_ref().map(|j| self.resolve_physical(j))
                };
                let lex_resolved = given.as_ref().map(|g| self.resolve(g));
                let alt = match (&resolved, lex_resolved) {
                    (Some(r), Some(l)) if *r != l => Some(l),
                    _ => None,
                };
                PathInfo {
                    raw: raw.clone(),
                    given,
                    resolved,
                    alt,
                    dynamic: false,
                    glob,
                }
            })
            .collect()
    }

    /// Extra forms for deny/ask: the seen-through command with its path
    /// arguments replaced by their resolved targets (absolute and relative).
    fn resolved_forms(&self, f: &Fragment, infos: &[PathInfo]) -> Vec<String> {
        if infos.is_empty() || f.core.is_empty() {
            return Vec::new();
        }
        let plain = f.core.join(" ");
        let mut out = Vec::new();
        // The physical resolution, then the lexical one when it differs.
        for use_alt in [false, true] {
            let mut abs_words = f.core.clone();
            let mut rel_words = f.core.clone();
            let mut any = false;
            for (wi, w) in f.core.iter().enumerate().skip(1) {
                let Some(info) = infos.iter().find(|p| &p.raw == w) else {
                    continue;
                };
                let r = if use_alt {
                    info.alt.as_ref()
                } else {
                    info.resolved.as_ref()
                };
                let Some(r) = r else {
                    continue;
                };
                any = true;
                abs_words[wi] = r.to_string_lossy().into_owned();
                if let Some(rel) = self.rel(r) {
                    rel_words[wi] = rel;
                }
            }
            if !any {
                continue;
            }
            for form in [abs_words.join(" "), rel_words.join(" ")] {
                if form != plain && !out.contains(&form) {
                    out.push(form);
                }
            }
        }
        out
    }

    fn decide_bash(&self, call: &Call, mode: Mode, mut run: Run, cwd: Option<&Path>) -> Decision {
        let tool = Tool::Bash;
        let raw = call.subject.trim();
        let start = match cwd {
            Some(c) => self.resolve(&lexical(&self.root, c)),
            None => self.root.clone(),
        };
        let parsed: Parsed = shell::parse_command(&call.subject, &start, &self.home, &self.shell);
        let frags = &parsed.fragments;
        for f in frags {
            run.add_frag(&f.text);
        }
        let want_resolved = self.index.has_text_rules(RuleList::Deny, tool)
            || self.index.has_text_rules(RuleList::Ask, tool);
        // Paths are resolved (file system calls) only when something uses them.
        let mut infos: Vec<Vec<PathInfo>> = if want_resolved {
            frags.iter().map(|f| self.path_infos(f)).collect()
        } else {
            Vec::new()
        };
        let extra_forms: Vec<Vec<String>> = if want_resolved {
            frags
                .iter()
                .zip(&infos)
                .map(|(f, i)| self.resolved_forms(f, i))
                .collect()
        } else {
            vec![Vec::new(); frags.len()]
        };
        let raw_form = raw.to_string();

        // 1. deny rules: the whole command, then every fragment (no limit).
        for list in [RuleList::Deny, RuleList::Ask] {
            let stage = if list == RuleList::Deny {
                "deny_rules"
            } else {
                "ask_rules"
            };
            let verdict = if list == RuleList::Deny {
                Verdict::Deny
            } else {
                Verdict::Ask
            };
            if list == RuleList::Ask {
                // 2. plan and 3. opaque come between deny and ask rules.
                if mode == Mode::Plan {
                    run.step("plan", "plan mode denies shell commands");
                    return run.finish(Verdict::Deny, plan_reason(tool), true, None, Vec::new());
                }
                if let Some(why) = &parsed.opaque {
                    if mode != Mode::Bypass || parsed.strict {
                        run.step("opaque", why.clone());
                        return run.finish(
                            Verdict::Ask,
                            format!("asks: the command is opaque ({why}); no rule can allow it"),
                            true,
                            None,
                            Vec::new(),
                        );
                    }
                    run.step("opaque", format!("{why}; bypass mode goes on"));
                } else {
                    run.step("opaque", "not opaque");
                }
            }
            let mut hit: Option<(Option<usize>, usize)> = None;
            if let Some(r) = self.index.match_text(list, tool, &raw_form) {
                hit = Some((None, r));
            } else {
                for (i, f) in frags.iter().enumerate() {
                    let r = self
                        .index
                        .match_forms(list, tool, &f.check_forms)
                        .or_else(|| self.index.match_forms(list, tool, &extra_forms[i]))
                        .or_else(|| {
                            // A word only known when it runs: the rules that
                            // could match some value of it apply.
                            if f.has_dynamic() {
                                self.index.match_dynamic(list, tool, &f.dynamic_patterns())
                            } else {
                                None
                            }
                        });
                    if let Some(r) = r {
                        hit = Some((Some(i), r));
                        break;
                    }
                }
            }
            if let Some((fi, r)) = hit {
                let rr = &self.index.refs[r];
                let what = match fi {
                    Some(i) => quote(&frags[i].text),
                    None => "the command".to_string(),
                };
                match fi {
                    Some(i) => run.mark(i, verdict, Some(rr.text.clone())),
                    None => {
                        for i in 0..frags.len() {
                            run.mark(i, verdict, Some(rr.text.clone()));
                        }
                    }
                }
                run.step(stage, format!("{what} matches {}", rr.text));
                let reason = if list == RuleList::Deny {
                    format!("denied by rule {}", rr.describe())
                } else {
                    format!("asks by rule {}", rr.describe())
                };
                return run.finish(verdict, reason, true, None, Vec::new());
            }
            run.step(
                stage,
                format!(
                    "no {} rule matches ({} fragment{})",
                    list.name(),
                    frags.len(),
                    if frags.len() == 1 { "" } else { "s" }
                ),
            );
        }

        // A program the gate does not know, with a command a deny rule, an
        // ask rule or a cap names among its later words: it may run it.
        if let Some((i, why)) = self.hidden_command(frags, mode) {
            run.mark(i, Verdict::Ask, None);
            run.step("ask_rules", why.clone());
            return run.finish(Verdict::Ask, why, true, None, Vec::new());
        }

        if infos.len() != frags.len() {
            infos = frags.iter().map(|f| self.path_infos(f)).collect();
        }

        // 5. bypass: only critical removal.
        if mode == Mode::Bypass {
            run.step("bypass", "bypass mode: allow candidate");
            let caps = self.bash_caps(frags, &infos, Origin::Bypass, &[]);
            if let Some(c) = caps.iter().find(|c| c.kind == CapKind::Critical) {
                return self.cap_ask(run, c, Some(Origin::Bypass), Vec::new());
            }
            run.step("caps", "no critical removal");
            run.mark_all_unset(Verdict::Allow);
            return run.finish(
                Verdict::Allow,
                "bypass mode allows it".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }

        // 6. allow rules.
        let auto = mode == Mode::Auto;
        let needed: Vec<usize> = (0..frags.len())
            .filter(|&i| frags[i].role == Role::Full)
            .collect();
        let mut cover: Vec<Option<usize>> = vec![None; frags.len()];
        for &i in &needed {
            cover[i] = self
                .index
                .match_forms(RuleList::Allow, tool, &frags[i].allow_forms);
        }
        let covered: Vec<usize> = needed
            .iter()
            .copied()
            .filter(|&i| cover[i].is_some())
            .collect();
        let uncovered: Vec<usize> = needed
            .iter()
            .copied()
            .filter(|&i| cover[i].is_none())
            .collect();
        for &i in &covered {
            if let Some(r) = cover[i] {
                run.mark(i, Verdict::Allow, Some(self.index.refs[r].text.clone()));
            }
        }
        let lifted: Vec<bool> = frags
            .iter()
            .map(|f| {
                let forms = if f.role == Role::Full {
                    &f.allow_forms
                } else {
                    std::slice::from_ref(&f.canon)
                };
                self.index.literal_allow(forms)
            })
            .collect();

        let candidate: Result<(Origin, String), String> =
            if !needed.is_empty() && uncovered.is_empty() {
                let rules: Vec<String> = covered
                    .iter()
                    .filter_map(|&i| cover[i].map(|r| self.index.refs[r].describe()))
                    .collect();
                let mut uniq: Vec<String> = Vec::new();
                for r in rules {
                    if !uniq.contains(&r) {
                        uniq.push(r);
                    }
                }
                run.step(
                    "allow_rules",
                    format!("every fragment is covered ({})", uniq.join(", ")),
                );
                let reason = if uniq.len() == 1 {
                    format!("allowed by rule {}", uniq[0])
                } else {
                    format!(
                        "allowed: every fragment matches an allow rule ({})",
                        uniq.join("; ")
                    )
                };
                Ok((if auto { Origin::Wildcard } else { Origin::Rule }, reason))
            } else if !covered.is_empty() && !auto {
                let names: Vec<String> = uncovered.iter().map(|&i| quote(&frags[i].text)).collect();
                run.step(
                    "allow_rules",
                    format!(
                        "{} of {} fragments covered; not covered: {}",
                        covered.len(),
                        needed.len(),
                        names.join(", ")
                    ),
                );
                Err(format!(
                    "asks: {} {} not covered by any allow rule",
                    names.join(", "),
                    if names.len() == 1 { "is" } else { "are" }
                ))
            } else {
                if covered.is_empty() {
                    run.step("allow_rules", "no fragment is covered by an allow rule");
                } else {
                    run.step(
                        "allow_rules",
                        format!(
                            "{} of {} fragments covered; auto mode decides",
                            covered.len(),
                            needed.len()
                        ),
                    );
                }
                if auto {
                    run.step("mode", "auto mode: wildcard allow");
                    Ok((Origin::Wildcard, "auto mode allows it".to_string()))
                } else {
                    run.step(
                        "mode",
                        format!("{mode} mode asks before running shell commands"),
                    );
                    Err(format!("{mode} mode asks before running shell commands"))
                }
            };

        match candidate {
            Err(reason) => {
                // An ask: would a cap ask anyway? Then only allow-once fits.
                for &i in &uncovered {
                    run.mark(i, Verdict::Ask, None);
                }
                let caps = self.bash_caps(frags, &infos, Origin::Rule, &lifted);
                if let Some(c) = caps.iter().find(|c| c.kind != CapKind::Scope) {
                    return self.cap_ask(run, c, None, Vec::new());
                }
                let mut rules = Vec::new();
                let mut add = |i: usize| {
                    let r = format!("bash({})", escape_glob(&frags[i].canon));
                    if !rules.contains(&r) {
                        rules.push(r);
                    }
                };
                for &i in &uncovered {
                    add(i);
                }
                for c in &caps {
                    if let Some(i) = c.frag {
                        add(i);
                    }
                }
                if !caps.is_empty() {
                    run.step("caps", format!("path scope: {}", caps[0].reason));
                }
                if frags.is_empty() {
                    rules.clear();
                }
                run.finish(Verdict::Ask, reason, false, None, rules)
            }
            Ok((origin, reason)) => {
                // 7. caps.
                run.mark_all_unset(Verdict::Allow);
                let caps = self.bash_caps(frags, &infos, origin, &lifted);
                if let Some(c) = caps.first() {
                    let rules = if c.kind == CapKind::Scope {
                        let mut rules = Vec::new();
                        for c in &caps {
                            if let Some(i) = c.frag {
                                let r = format!("bash({})", escape_glob(&frags[i].canon));
                                if !rules.contains(&r) {
                                    rules.push(r);
                                }
                            }
                        }
                        rules
                    } else {
                        Vec::new()
                    };
                    return self.cap_ask(run, c, Some(origin), rules);
                }
                run.step("caps", "no cap applies");
                run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
            }
        }
    }

    /// `foo run curl x` under `deny: bash(curl *)`: a later unquoted word of
    /// a program the gate does not know starts a command that a deny rule,
    /// an ask rule or a cap names (in bypass: only critical removal).
    fn hidden_command(&self, frags: &[Fragment], mode: Mode) -> Option<(usize, String)> {
        let has_rules = self.index.has_text_rules(RuleList::Deny, Tool::Bash)
            || self.index.has_text_rules(RuleList::Ask, Tool::Bash);
        for (i, f) in frags.iter().enumerate() {
            for k in f.hidden_starts() {
                let tail = &f.core[k..];
                let text = tail.join(" ");
                let why = |what: String| {
                    format!("{} may run {} ({what}): asks", quote(&f.text), quote(&text))
                };
                if has_rules {
                    for list in [RuleList::Deny, RuleList::Ask] {
                        if let Some(r) = self.index.match_text(list, Tool::Bash, &text) {
                            let rr = &self.index.refs[r];
                            return Some((i, why(format!("{} rule {}", list.name(), rr.text))));
                        }
                    }
                }
                if !has_rules && !crate::external::might_cap(tail) {
                    continue;
                }
                let t = f.tail(k);
                if let Some(r) = self.critical_removal(&t) {
                    return Some((i, why(r)));
                }
                if mode == Mode::Bypass {
                    continue;
                }
                if let Some(r) = crate::external::external_effect(&t.core, &t.core_dyn, &[]) {
                    return Some((i, why(r)));
                }
                if let Some(r) = caps::container_removal(&t.core) {
                    return Some((i, why(r)));
                }
            }
        }
        None
    }

    fn cap_ask(
        &self,
        mut run: Run,
        c: &Cap,
        origin: Option<Origin>,
        always: Vec<String>,
    ) -> Decision {
        if let Some(i) = c.frag {
            run.mark(i, Verdict::Ask, None);
            if let Some(f) = run.frags.get_mut(i) {
                f.cap = Some(c.kind.name().to_string());
            }
        }
        run.step("caps", format!("{}: {}", c.kind.name(), c.reason));
        let capped = c.kind != CapKind::Scope;
        run.finish(Verdict::Ask, c.reason.clone(), capped, origin, always)
    }

    /// Caps of every fragment, most severe first. Bypass: only critical removal;
    /// wildcard: no path scope. `lifted[i]`: a literal allow rule names fragment i.
    fn bash_caps(
        &self,
        frags: &[Fragment],
        infos: &[Vec<PathInfo>],
        origin: Origin,
        lifted: &[bool],
    ) -> Vec<Cap> {
        let mut out: Vec<Cap> = Vec::new();
        for (i, f) in frags.iter().enumerate() {
            if let Some(reason) = self.critical_removal(f) {
                out.push(Cap {
                    kind: CapKind::Critical,
                    reason,
                    frag: Some(i),
                });
            }
            if origin == Origin::Bypass {
                continue;
            }
            if let Some(reason) = self.never_auto(f, &infos[i]) {
                out.push(Cap {
                    kind: CapKind::NeverAuto,
                    reason,
                    frag: Some(i),
                });
            }
            if let Some(reason) = crate::external::external_effect(&f.core, &f.core_dyn, &f.chain) {
                out.push(Cap {
                    kind: CapKind::External,
                    reason,
                    frag: Some(i),
                });
            } else if let Some(r) = self.index.match_external(&f.check_forms).or_else(|| {
                if f.has_dynamic() {
                    self.index.match_external_dynamic(&f.dynamic_patterns())
                } else {
                    None
                }
            }) {
                out.push(Cap {
                    kind: CapKind::External,
                    reason: format!(
                        "{} matches caps.external pattern `{}`: asks every time",
                        quote(&f.text),
                        self.index.refs[r].text
                    ),
                    frag: Some(i),
                });
            }
            if origin != Origin::Wildcard && !lifted.get(i).copied().unwrap_or(false) {
                if let Some(c) = &f.cwd {
                    if !self.in_scope(c) {
                        out.push(Cap {
                            kind: CapKind::Scope,
                            reason: format!(
                                "{} runs in {}, outside the project: asks",
                                quote(&f.text),
                                c.display()
                            ),
                            frag: Some(i),
                        });
                        continue;
                    }
                }
                for p in &infos[i] {
                    let outside = match (&p.given, &p.resolved) {
                        (Some(g), Some(r)) => {
                            !is_harmless_device(g)
                                && (!self.in_scope(r)
                                    || p.alt.as_ref().is_some_and(|a| !self.in_scope(a)))
                        }
                        _ => true,
                    };
                    if outside {
                        let reason = match &p.resolved {
                            Some(r) => format!(
                                "{} names {}, outside the project: asks",
                                quote(&f.text),
                                r.display()
                            ),
                            None => format!(
                                "{} names {} in an unknown directory: asks",
                                quote(&f.text),
                                p.raw
                            ),
                        };
                        out.push(Cap {
                            kind: CapKind::Scope,
                            reason,
                            frag: Some(i),
                        });
                        break;
                    }
                }
            }
        }
        out.sort_by_key(|c| c.kind);
        out
    }

    /// A write the gate cannot place counts as naming a protected file: a
    /// target only known when it runs, relative to a folder only known then,
    /// or through a link the command made; and a file copied into a folder
    /// lands where it would be protected (`cp .bashrc ~`).
    fn unplaceable_write(&self, f: &Fragment) -> Option<String> {
        if f.filled {
            // `find -exec cp x {} \;`, `xargs touch`, `xargs -I% sh -c 'echo > %'`:
            // find or xargs fills the targets in when it runs.
            let writer = matches!(
                f.core.first().map(String::as_str),
                Some(
                    "cp" | "mv"
                        | "install"
                        | "ln"
                        | "rsync"
                        | "tee"
                        | "touch"
                        | "truncate"
                        | "mkdir"
                        | "dd"
                        | "tar"
                        | "unzip"
                )
            ) || (matches!(f.core.first().map(String::as_str), Some("sed" | "gsed"))
                && f.core
                    .iter()
                    .any(|a| a.starts_with("-i") || a.starts_with("--in-place")));
            // The command xargs runs gets its words appended; one that find
            // or xargs runs through a shell writes where that shell says.
            let direct = f
                .chain
                .iter()
                .any(|c| matches!(c.as_str(), "xargs" | "parallel"));
            let placed = |t: &&shell::WriteTarget| {
                !matches!(t.raw.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
            };
            let hit = if direct {
                f.writes.iter().any(|t| t.raw.contains("{}") || t.dynamic)
            } else {
                f.writes.iter().any(|t| placed(&t))
            };
            if writer || hit {
                return Some(format!(
                    "{} writes to paths find or xargs fills in when it runs (they may be protected files): never automatic",
                    quote(&f.text)
                ));
            }
        }
        for t in &f.writes {
            let expanded = paths::expand_user(&t.raw)
                .unwrap_or_else(|| expand_home(&static_vars(&t.raw, f.cwd.as_deref()), &self.home));
            let es = expanded.to_string_lossy();
            if es.contains('$') || es.contains('`') || es.starts_with('~') {
                return Some(format!(
                    "{} writes to {}, a path only known when it runs (it may be a protected file): never automatic",
                    quote(&f.text),
                    t.raw
                ));
            }
            let given = if expanded.is_absolute() {
                lexical(Path::new("/"), &expanded)
            } else {
                match &f.cwd {
                    Some(c) => lexical(c, &expanded),
                    None => {
                        return Some(format!(
                            "{} writes {} in a folder only known when it runs (it may be a protected file): never automatic",
                            quote(&f.text),
                            t.raw
                        ))
                    }
                }
            };
            match &f.links {
                None => {
                    return Some(format!(
                        "{} writes {} after the command made a link the gate cannot place: never automatic",
                        quote(&f.text),
                        t.raw
                    ))
                }
                Some(links) => {
                    if let Some(l) = links.iter().find(|l| within(&given, l)) {
                        return Some(format!(
                            "{} writes through {}, a link the command made: never automatic",
                            quote(&f.text),
                            l.display()
                        ));
                    }
                }
            }
            if t.contents && self.holds_protected(&given) {
                return Some(format!(
                    "{} puts files whose names are only known when it runs into {} (they may land on a protected file): never automatic",
                    quote(&f.text),
                    t.raw
                ));
            }
            if let Some(from) = &t.from {
                let base = from.trim_end_matches('/');
                let name = base.rsplit('/').next().unwrap_or(base);
                if name.contains(['*', '?', '[']) {
                    let landing = given.join(name);
                    let label = self.glob_protected(&landing, f.dotglob).or_else(|| {
                        (f.loose_globs && self.holds_protected(&given))
                            .then_some("a protected file (the glob follows extglob or nocaseglob)")
                    });
                    if let Some(label) = label {
                        return Some(format!(
                            "{} copies {from}, which may match {label}, into {}: never automatic",
                            quote(&f.text),
                            t.raw
                        ));
                    }
                } else if !name.is_empty() && name != "." && name != ".." {
                    let landing = given.join(name);
                    for q in [landing.clone(), self.resolve(&landing)] {
                        let label = self.protected_label(&q).or_else(|| {
                            self.protected_parents
                                .contains(&q)
                                .then_some("a folder of permission files")
                        });
                        if let Some(label) = label {
                            return Some(format!(
                                "{} copies {from} onto {label} ({}): never automatic",
                                quote(&f.text),
                                q.display()
                            ));
                        }
                    }
                }
            }
        }
        None
    }

    /// Whether files landing in folder `d` may be protected: it is in the
    /// project, the home folder or Decode's folders, or holds one of them.
    fn holds_protected(&self, d: &Path) -> bool {
        let r = self.resolve(d);
        [d, r.as_path()].iter().any(|q| {
            [&self.root, &self.root_given, &self.home, &self.home_canon]
                .iter()
                .any(|x| within(q, x) || within(x, q))
                || self.app_dirs.iter().any(|x| within(q, x) || within(x, q))
        })
    }

    fn critical_removal(&self, f: &Fragment) -> Option<String> {
        // `find ROOT … -delete` and `-exec rm … {}` remove what lies under
        // ROOT: critical when ROOT is `/`, a child of `/`, the home folder,
        // a parent of the project root, or only known when it runs.
        let unknown_program = f.program_unknown();
        if let Some(roots) = &f.find_roots {
            let name = f.core.first().map(String::as_str);
            let removes = (name == Some("find") && f.core.iter().any(|a| a == "-delete"))
                || ((matches!(name, Some("rm" | "rmdir" | "unlink" | "shred")) || unknown_program)
                    && f.core.iter().any(|a| a.contains("{}")));
            if removes {
                for r in roots {
                    let place = r.as_deref().and_then(|r| {
                        let glob_then_up = r
                            .find(['*', '?', '['])
                            .is_some_and(|m| r[m..].split('/').any(|c| c == ".."));
                        if glob_then_up {
                            return None;
                        }
                        let e = expand_home(&static_vars(r, f.cwd.as_deref()), &self.home);
                        let es = e.to_string_lossy().into_owned();
                        if es.contains('$') || es.contains('`') || es.starts_with('~') {
                            None
                        } else if e.is_absolute() {
                            Some(lexical(Path::new("/"), &e))
                        } else {
                            f.cwd.as_ref().map(|c| lexical(c, &e))
                        }
                    });
                    let critical = match &place {
                        None => true,
                        Some(p)
                            if f.links
                                .as_ref()
                                .is_none_or(|l| l.iter().any(|l| within(p, l))) =>
                        {
                            true
                        }
                        Some(p) => {
                            let r = self.resolve(p);
                            [p, &r].iter().any(|q| {
                                q.parent().is_none()
                                    || q.parent() == Some(Path::new("/"))
                                    || *q == &self.home
                                    || *q == &self.home_canon
                                    || (*q != &self.root && within(&self.root, q))
                                    || (*q != &self.root_given && within(&self.root_given, q))
                            })
                        }
                    };
                    if critical {
                        return Some(format!(
                            "{} removes what lies under {} (a critical folder): asks every time",
                            quote(&f.text),
                            r.as_deref().unwrap_or("a folder only known when it runs")
                        ));
                    }
                }
                return None;
            }
        }
        if unknown_program {
            // A program only known when it runs may be `rm`: its arguments
            // are removal targets.
            let why = if f.program_free {
                Some("its command word may expand to any command")
            } else if f
                .chain
                .iter()
                .any(|c| matches!(c.as_str(), "xargs" | "parallel"))
            {
                Some("it takes arguments from its input")
            } else if f.core_dyn[1..].iter().any(|&d| d) {
                Some("its arguments are only known when it runs")
            } else {
                None
            };
            if let Some(why) = why {
                return Some(format!(
                    "{} runs a command only known when it runs and {why} (it may remove a critical folder): asks every time",
                    quote(&f.text)
                ));
            }
            let mut as_rm = f.core.clone();
            as_rm[0] = "rm".to_string();
            for t in caps::removal_targets(&as_rm) {
                if let Some(r) = self.critical_target(f, t) {
                    return Some(r);
                }
            }
        }
        let is_rm = matches!(f.core.first().map(String::as_str), Some("rm" | "rmdir"));
        if is_rm
            && f.chain
                .iter()
                .any(|c| matches!(c.as_str(), "xargs" | "parallel"))
        {
            return Some(format!(
                "{} removes targets read from its input (it may be a critical folder): asks every time",
                quote(&f.text)
            ));
        }
        for t0 in caps::removal_targets(&f.core) {
            let alts = if t0.contains('{') {
                shell::brace_expand(t0, 64)
            } else {
                vec![t0.to_string()]
            };
            for t in &alts {
                if let Some(r) = self.critical_target(f, t) {
                    return Some(r);
                }
            }
        }
        None
    }

    fn critical_target(&self, f: &Fragment, t: &str) -> Option<String> {
        {
            let expanded = paths::expand_user(t)
                .unwrap_or_else(|| expand_home(&static_vars(t, f.cwd.as_deref()), &self.home));
            if t.contains("{}") || paths::has_expansion(&expanded.to_string_lossy()) {
                return Some(format!(
                    "{} removes {t}, only known when it runs (it may be a critical folder): asks every time",
                    quote(&f.text)
                ));
            }
            let base = if expanded.is_absolute() {
                PathBuf::from("/")
            } else {
                match &f.cwd {
                    Some(c) => c.clone(),
                    None => {
                        return Some(format!(
                            "{} removes {t} in an unknown directory: asks every time",
                            quote(&f.text)
                        ))
                    }
                }
            };
            let s = expanded.to_string_lossy();
            let through_link = |p: &Path| match &f.links {
                None => true,
                Some(links) => links.iter().any(|l| within(p, l)),
            };
            let critical = match s.find(['*', '?', '[']) {
                Some(meta) => {
                    let prefix = &s[..meta];
                    let (dir, rest) = match prefix.rfind('/') {
                        Some(0) => ("/", &s[1..]),
                        Some(k) => (&s[..k], &s[k + 1..]),
                        None => (".", &s[..]),
                    };
                    if rest.split('/').any(|c| c == "..") {
                        // `d?/../../x`: where `..` lands depends on what the glob matches.
                        return Some(format!(
                            "{} removes {t}, where `..` follows a glob (it may be a critical folder): asks every time",
                            quote(&f.text)
                        ));
                    }
                    let lexical_dir = lexical(&base, Path::new(dir));
                    if through_link(&lexical_dir) {
                        return Some(format!(
                            "{} removes {t} through a link the command made (it may point at a critical folder): asks every time",
                            quote(&f.text)
                        ));
                    }
                    let d = self.resolve(&lexical_dir);
                    let wipes = rest.chars().all(|c| matches!(c, '*' | '?' | '.' | '/'));
                    self.is_strict_ancestor_of_critical(&d) || (wipes && self.is_critical_dir(&d))
                }
                None => {
                    let given = lexical(&base, &expanded);
                    if through_link(&given) {
                        return Some(format!(
                            "{} removes {t} through a link the command made (it may point at a critical folder): asks every time",
                            quote(&f.text)
                        ));
                    }
                    let resolved = self.resolve(&given);
                    self.is_critical_dir(&given) || self.is_critical_dir(&resolved)
                }
            };
            if critical {
                return Some(format!(
                    "{} removes a critical folder ({t}): asks every time",
                    quote(&f.text)
                ));
            }
        }
        None
    }

    fn never_auto(&self, f: &Fragment, infos: &[PathInfo]) -> Option<String> {
        for p in infos {
            if p.dynamic && paths::mentions_protected_name(&p.raw) {
                return Some(format!(
                    "{} names {}, only known when it runs (it may be a protected file): never automatic",
                    quote(&f.text),
                    p.raw
                ));
            }
            let given = p
                .given
                .clone()
                .or_else(|| Some(lexical(&self.root, &expand_home(&p.raw, &self.home))));
            let resolved = p
                .resolved
                .clone()
                .or_else(|| given.as_ref().map(|g| self.resolve(g)));
            if p.glob {
                let label = [&given, &resolved].into_iter().flatten().find_map(|q| {
                    self.glob_protected(q, f.dotglob).or_else(|| {
                        (f.loose_globs && self.holds_protected(&glob_dir(q)))
                            .then_some("a protected file (the glob follows extglob or nocaseglob)")
                    })
                });
                if let Some(label) = label {
                    return Some(format!(
                        "{} names {} which may match {label}: never automatic",
                        quote(&f.text),
                        p.raw
                    ));
                }
            }
            for q in [&given, &resolved, &p.alt].into_iter().flatten() {
                let label = self.protected_label(q).or_else(|| {
                    self.protected_parents
                        .iter()
                        .any(|pp| pp == q)
                        .then_some("a folder of permission files")
                });
                if let Some(label) = label {
                    return Some(format!(
                        "{} names {label} ({}): never automatic",
                        quote(&f.text),
                        p.raw
                    ));
                }
            }
        }
        for change in crate::branches::changes(&f.core, &f.core_dyn) {
            let protected = |b: &str| self.protected_branches.iter().any(|p| p == b);
            match change {
                crate::branches::Change::Current(what) => {
                    let on: Vec<Option<String>> = match &f.branch {
                        Branch::Head => vec![self.current_branch()],
                        Branch::OneOf(v) => v
                            .iter()
                            .map(|b| {
                                if b == "HEAD" {
                                    self.current_branch()
                                } else {
                                    Some(b.clone())
                                }
                            })
                            .collect(),
                        Branch::Unknown => vec![None],
                    };
                    for b in on {
                        match b {
                            Some(b) if !protected(&b) => {}
                            Some(b) => {
                                return Some(format!(
                                    "`{what}` changes protected branch {b}: never automatic"
                                ))
                            }
                            None => {
                                return Some(format!(
                                    "`{what}` on a branch the gate cannot know (it may be protected): never automatic"
                                ))
                            }
                        }
                    }
                }
                crate::branches::Change::Named(b, what) => {
                    if protected(&b) {
                        return Some(format!(
                            "`{what}` changes protected branch {b}: never automatic"
                        ));
                    }
                }
                crate::branches::Change::Unknown(what) => {
                    return Some(format!(
                        "`{what}` names a branch only known when it runs (it may be protected): never automatic"
                    ))
                }
                crate::branches::Change::PullRequest => {
                    return Some(
                        "`gh pr merge` may merge into a protected branch: never automatic"
                            .to_string(),
                    )
                }
            }
        }
        if let Some(why) = self.unplaceable_write(f) {
            return Some(why);
        }
        if let Some(why) = caps::git_config_write(&f.core) {
            return Some(format!("{} {why}: never automatic", quote(&f.text)));
        }
        if let Some(what) = caps::container_removal(&f.core) {
            return Some(format!("{what}: never automatic"));
        }
        None
    }
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

/// A URL as rules see it and as it is fetched: parsed the WHATWG way
/// (backslashes, `https:host`, percent-encoding, full-width dots, IDNA), user
/// info dropped, host lower-cased without a trailing dot, default port
/// dropped, an IPv4-mapped IPv6 address written as IPv4. `None` when it does
/// not parse or has no host.
pub fn normalize_url(url: &str) -> Option<url::Url> {
    let mut u = url::Url::parse(url.trim()).ok()?;
    let _ = u.set_username("");
    let _ = u.set_password(None);
    let host = match u.host()? {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d.is_empty() {
                return None;
            }
            d
        }
        url::Host::Ipv4(a) => a.to_string(),
        url::Host::Ipv6(a) => match a.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{a}]"),
        },
    };
    if u.host_str() != Some(host.as_str()) {
        u.set_host(Some(&host)).ok()?;
    }
    Some(u)
}

/// The host of a URL as [`normalize_url`] writes it (IPv6 without brackets).
pub(crate) fn url_host(url: &str) -> Option<String> {
    let u = normalize_url(url)?;
    let h = u.host_str()?;
    Some(
        h.strip_prefix('[')
            .and_then(|x| x.strip_suffix(']'))
            .unwrap_or(h)
            .to_string(),
    )
}

/// Looser spellings of a URL's path that servers commonly serve as the
/// same resource: unreserved characters percent-decoded, repeated slashes
/// folded, and (for deny and ask rules only) the path lower-cased.
fn url_loose_forms(url: &str) -> Vec<String> {
    let Some(mut u) = normalize_url(url) else {
        return Vec::new();
    };
    let path = u.path().to_string();
    let mut decoded = String::with_capacity(path.len());
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = &path[i + 1..i + 3];
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                    decoded.push(v as char);
                    i += 3;
                    continue;
                }
            }
        }
        if b[i] == b'/' && decoded.ends_with('/') {
            i += 1;
            continue;
        }
        decoded.push(b[i] as char);
        i += 1;
    }
    let mut out = Vec::new();
    for p in [decoded.clone(), decoded.to_ascii_lowercase()] {
        u.set_path(&p);
        let s = u.as_str().to_string();
        if s != url && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The URL as it is fetched, normalised.
fn url_normal(url: &str) -> Option<String> {
    normalize_url(url).map(|u| u.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert_eq!(
            url_host("https://Example.com/x").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            url_host("https://user@example.com.attacker.net:443/").as_deref(),
            Some("example.com.attacker.net")
        );
        assert_eq!(
            url_host("https://a@b@evil.com/").as_deref(),
            Some("evil.com")
        );
        assert_eq!(url_host("not a url"), None);
        assert_eq!(
            url_normal("https://u:p@Bad.Example.:443/x").as_deref(),
            Some("https://bad.example/x")
        );
        assert_eq!(
            url_normal("http://[::ffff:127.0.0.1]:80/a").as_deref(),
            Some("http://127.0.0.1/a")
        );
        assert_eq!(url_host("http://[::1]/").as_deref(), Some("::1"));
        for u in [
            "https://evil.com\\@example.com/",
            "https:evil.com/",
            "https:/evil.com/",
            "https:\\\\evil.com/",
            "https://%65vil.com/",
            "https://evil%2Ecom/",
            "https://evil\u{3002}com/",
            "https://\u{ff45}\u{ff56}\u{ff49}\u{ff4c}.com/",
            "https://ev\til.com/",
        ] {
            assert_eq!(url_host(u).as_deref(), Some("evil.com"), "{u}");
        }
    }

    #[test]
    fn gate_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<Gate>();
    }
}
