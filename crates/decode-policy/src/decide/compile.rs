//! Compiling a gate: the rules of the project and the agent, the folders in
//! scope, and the protected set (permission files, links on the way to them, git
//! internals, shell start-up files, `~/.ssh`, Decode's own folders).

use super::*;
use crate::input::Level;

/// Where the managed settings live (docs/permissions.md, "Settings levels").
pub(super) const MANAGED_FILE: &str = "/etc/decode/managed-settings.json";

impl Gate {
    /// Compiles the rules, folders and caps of `input`. A rule that does not
    /// parse is reported as a warning (naming the rule and its source) and skipped.
    pub fn new(input: PolicyInput) -> (Gate, Vec<PolicyWarning>) {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let root_given = lexical(&cwd, &input.project_root);
        let root = paths::resolve(&root_given);
        let home = lexical(&cwd, &input.home);
        let home_canon = paths::resolve(&home);
        let (index, mut warnings, broken_rules) = compile_rules(&input, &cwd, &home, &home_canon);
        let extra_dirs = if input.trusted {
            input
                .additional_directories
                .iter()
                .filter(|d| !d.trim().is_empty())
                .map(|d| paths::extra_dir(&root, &home, d))
                .collect()
        } else {
            Vec::new()
        };
        let mut roots = vec![root.clone()];
        if root_given != root {
            roots.push(root_given.clone());
        }
        let (mut protected, protected_parents) = project_protected(&roots);
        let git_dir = git_dir(&root);
        if let Some(g) = &git_dir {
            if !g.starts_with(&root) {
                protected.push(Protected {
                    path: g.clone(),
                    dir: true,
                    kind: ProtectedKind::GitInternals,
                });
            }
        }
        let mut hs = vec![home.clone()];
        if home_canon != home {
            hs.push(home_canon.clone());
        }
        protected.extend(home_protected(&hs));
        // The managed settings file (where it is, and where a test or a packager
        // put it elsewhere) is Decode's own too; writing `/etc/decode` needs root.
        for file in std::iter::once(PathBuf::from(MANAGED_FILE)).chain(
            input
                .levels
                .iter()
                .filter(|l| l.level == Level::Managed && l.file.is_absolute())
                .map(|l| l.file.clone()),
        ) {
            protected.push(Protected {
                path: lexical(Path::new("/"), &file),
                dir: false,
                kind: ProtectedKind::AppDirs,
            });
        }
        let app_dirs = app_dirs(&home, &input.app_dirs);
        for d in &app_dirs {
            protected.push(Protected {
                path: d.clone(),
                dir: true,
                kind: ProtectedKind::AppDirs,
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
        let remote_hosts = git_dir
            .as_deref()
            .map(crate::net::git_remotes)
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.host, r.port))
            .collect();
        let mut mcp_patterns = |texts: &[String], source: String| {
            let mut out = Vec::new();
            for t in texts {
                match crate::mcp::McpPattern::parse(t) {
                    Ok(p) => out.push(p),
                    Err(message) => warnings.push(PolicyWarning {
                        rule: t.clone(),
                        source: source.clone(),
                        message,
                    }),
                }
            }
            out
        };
        let mcp_offered = mcp_patterns(
            &input.agent.mcp_tools,
            format!("agent {} tools", input.agent.name),
        );
        let mcp_read_only = mcp_patterns(
            &input.mcp_read_only,
            "your settings' MCP read-only marks".to_string(),
        );
        let gate = Gate {
            read_only_commands: input.read_only_commands,
            remote_hosts,
            mcp_offered,
            mcp_read_only,
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
            broken_rules,
        };
        (gate, warnings)
    }
}

/// The rules of the project and the agent (an untrusted project's allow
/// rules, and a project agent's, are left out) and `caps.external`.
fn compile_rules(
    input: &PolicyInput,
    cwd: &Path,
    home: &Path,
    home_canon: &Path,
) -> (RuleIndex, Vec<PolicyWarning>, Vec<BrokenRule>) {
    let mut warnings = Vec::new();
    let mut broken = Vec::new();
    let trusted = input.trusted;
    let mut index = RuleIndex::new();
    index.links_root = Some(paths::resolve(&lexical(cwd, &input.project_root)));
    let homes: Vec<&Path> = if home == home_canon {
        vec![home]
    } else {
        vec![home, home_canon]
    };
    let agent_name = input.agent.name.clone();
    let agent_allow_ok = trusted || !input.agent.from_project;
    let mut add_lists = |lists: &RuleLists, source: Source, allow_ok: bool, anchors: &[&Path]| {
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
                let result = Rule::parse(text).map_err(|e| e.to_string()).and_then(|r| {
                    if let Some(message) = rule_hint(&r, list) {
                        warnings.push(PolicyWarning {
                            rule: text.clone(),
                            source: source.describe(),
                            message,
                        });
                    }
                    index.add(list, &r, source.clone(), &homes, anchors)
                });
                if let Err(message) = result {
                    if list != RuleList::Allow {
                        broken.push(BrokenRule::new(text, list, &source.describe(), &message));
                    }
                    warnings.push(PolicyWarning {
                        rule: text.clone(),
                        source: source.describe(),
                        message,
                    });
                }
            }
        }
    };
    // Managed `allowManagedRulesOnly`: only the managed file's allow rules count.
    let others_allow = !input.allow_managed_rules_only;
    if input.allow_managed_rules_only {
        tracing::debug!("managed settings: only managed allow rules count");
    }
    // The levels: managed and user always count; local as the project does.
    for l in &input.levels {
        let source = Source::Level(l.level, l.file.clone());
        let allow_ok = match l.level {
            Level::Managed => true,
            Level::User => others_allow,
            Level::Project | Level::Local => others_allow && trusted,
        };
        add_lists(&l.rules, source.clone(), allow_ok, &[]);
        if l.level.needs_trust() && !trusted && others_allow && !l.saved_allow.is_empty() {
            let saved = RuleLists {
                allow: l.saved_allow.clone(),
                ask: Vec::new(),
                deny: Vec::new(),
            };
            add_lists(&saved, source, true, &[]);
        }
    }
    add_lists(
        &input.project_rules,
        Source::Project,
        trusted && others_allow,
        &[],
    );
    if !trusted && others_allow && !input.saved_allow.is_empty() {
        // Rules the person saved through Decode count at once.
        let saved = RuleLists {
            allow: input.saved_allow.clone(),
            ask: Vec::new(),
            deny: Vec::new(),
        };
        add_lists(&saved, Source::Project, true, &[]);
    }
    add_lists(
        &input.agent.rules,
        Source::Agent(agent_name),
        agent_allow_ok && others_allow,
        &[],
    );
    // The folders around the project: their deny and ask rules, never their
    // allow rules; relative path patterns stay relative to their own folder.
    for e in &input.enclosing {
        let given = lexical(cwd, &e.root);
        let canon = paths::resolve(&given);
        let anchors: Vec<&Path> = if given == canon {
            vec![given.as_path()]
        } else {
            vec![given.as_path(), canon.as_path()]
        };
        let lists = RuleLists {
            allow: Vec::new(),
            ask: e.rules.ask.clone(),
            deny: e.rules.deny.clone(),
        };
        add_lists(&lists, Source::Enclosing(given.clone()), false, &anchors);
    }
    add_external_caps(input, &mut index, &mut warnings, &mut broken);
    index.finish();
    (index, warnings, broken)
}

/// A path rule with a backslash before a character that is no wildcard
/// (`read(secrets\\key)`: in a rule `\\` escapes the next character, and
/// paths are separated by `/`), or a deny or ask rule whose path starts or
/// ends with a blank: almost surely a mistake, so it is reported.
fn rule_hint(rule: &Rule, list: RuleList) -> Option<String> {
    let p = rule.pattern.as_deref()?;
    if !matches!(
        rule.tool,
        Tool::Read | Tool::Glob | Tool::Grep | Tool::Write | Tool::Edit
    ) {
        return None;
    }
    // A deny or ask rule that matches nothing is silent; a saved allow rule
    // names a file exactly, blanks and all.
    if list != RuleList::Allow && p.trim() != p {
        return Some(format!(
            "the path `{p}` starts or ends with a blank: the rule matches only names that do"
        ));
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n) if "*?[]{}\\!".contains(n) => {}
                n => {
                    return Some(format!(
                        "`\\{}` in a path rule escapes the character after it (paths use `/`): the rule matches only `{}`",
                        n.map(String::from).unwrap_or_default(),
                        crate::rules::unescape_glob(p)
                    ))
                }
            }
        }
    }
    None
}

/// Every level's, the project's and the enclosing folders' `caps.external`
/// patterns; one that does not parse asks for every command (fail closed).
fn add_external_caps(
    input: &PolicyInput,
    index: &mut RuleIndex,
    warnings: &mut Vec<PolicyWarning>,
    broken: &mut Vec<BrokenRule>,
) {
    let mut external: Vec<(&String, Source)> = input
        .external_caps
        .iter()
        .map(|p| (p, Source::Project))
        .collect();
    for l in &input.levels {
        external.extend(
            l.external_caps
                .iter()
                .map(|p| (p, Source::Level(l.level, l.file.clone()))),
        );
    }
    for e in &input.enclosing {
        external.extend(
            e.external_caps
                .iter()
                .map(|p| (p, Source::Enclosing(e.root.clone()))),
        );
    }
    for (p, source) in external {
        let described = format!("{} caps.external", source.describe());
        if let Err(message) = index.add_external(p, source) {
            broken.push(BrokenRule {
                text: p.clone(),
                list: RuleList::Ask,
                source: described.clone(),
                message: message.clone(),
                tool: Some(Tool::Bash),
            });
            warnings.push(PolicyWarning {
                rule: p.clone(),
                source: described,
                message,
            });
        }
    }
}

/// The project's permission files and agents, its `.git`, and the folders
/// holding them; what links on the way to them point to.
fn project_protected(roots: &[PathBuf]) -> (Vec<Protected>, Vec<PathBuf>) {
    let mut protected = Vec::new();
    let mut protected_parents = Vec::new();
    for r in roots {
        let entries = [
            (
                ".decode/settings.json",
                false,
                ProtectedKind::PermissionFile,
            ),
            (
                ".decode/settings.local.json",
                false,
                ProtectedKind::PermissionFile,
            ),
            (".decode/mcp.json", false, ProtectedKind::PermissionFile),
            (".mcp.json", false, ProtectedKind::PermissionFile),
            (".claude/settings.json", false, ProtectedKind::AgentSettings),
            (
                ".claude/settings.local.json",
                false,
                ProtectedKind::AgentSettings,
            ),
            (".decode/agents", true, ProtectedKind::AgentDefinitions),
            (".claude/agents", true, ProtectedKind::AgentDefinitions),
            (".git", true, ProtectedKind::GitInternals),
        ];
        for (p, dir, kind) in entries {
            protected.push(Protected {
                path: r.join(p),
                dir,
                kind,
            });
        }
        protected_parents.push(r.join(".decode"));
        protected_parents.push(r.join(".claude"));
    }
    let (through, parents) = through_links(&protected, &protected_parents);
    protected.extend(through);
    protected_parents.extend(parents);
    (protected, protected_parents)
}

/// The permission and agent files are read through links: what such a link
/// points to is protected as the file is, and so is every link on the way
/// (retargeting one would swap the file read) and the first component that
/// does not exist yet (creating it decides where the file read really is).
/// Else a repository could link its settings to a file the agent may edit,
/// or create, and grant itself rights once trusted. A folder of permission
/// files that is a link: its target is such a folder too.
fn through_links(protected: &[Protected], parents: &[PathBuf]) -> (Vec<Protected>, Vec<PathBuf>) {
    let mut out = Vec::new();
    for e in protected {
        let resolved = guard_chain(&e.path, e.dir, e.kind, &mut out);
        if e.dir && e.kind == ProtectedKind::AgentDefinitions {
            for entry in linked_entries(&resolved) {
                guard_chain(&entry, false, e.kind, &mut out);
            }
        }
    }
    let mut folders = Vec::new();
    for p in parents {
        let mut found = Vec::new();
        let resolved = guard_chain(p, true, ProtectedKind::PermissionFolder, &mut found);
        for f in found {
            if f.path == resolved {
                folders.push(resolved.clone());
            } else {
                out.push(f);
            }
        }
    }
    (out, folders)
}

/// Protects what a link chain to `path` passes: its target, each link, and
/// the first missing component. Returns where it resolves.
fn guard_chain(path: &Path, dir: bool, kind: ProtectedKind, out: &mut Vec<Protected>) -> PathBuf {
    let chain = paths::resolve_chain(path);
    if chain.resolved != path {
        out.push(Protected {
            path: chain.resolved.clone(),
            dir,
            kind,
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
                kind,
            });
        }
    }
    if let Some(missing) = chain.first_missing {
        out.push(Protected {
            path: missing,
            dir: true,
            kind,
        });
    }
    chain.resolved
}

/// The files in the home folder that other programs run or obey (the
/// table [`IN_HOME`]).
fn home_protected(homes: &[PathBuf]) -> Vec<Protected> {
    let mut out = Vec::new();
    for h in homes {
        for &(rel, dir, kind) in IN_HOME {
            out.push(Protected {
                path: h.join(rel),
                dir,
                kind,
            });
        }
    }
    out
}

/// Decode's own config and data folders, given and resolved.
fn app_dirs(home: &Path, given: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in PolicyInput::app_dirs_for(home)
        .into_iter()
        .chain(SYSTEM_DIRS.iter().map(PathBuf::from))
        .chain(given.iter().cloned())
    {
        if !d.is_absolute() {
            continue;
        }
        for p in [lexical(Path::new("/"), &d), paths::resolve(&d)] {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}
