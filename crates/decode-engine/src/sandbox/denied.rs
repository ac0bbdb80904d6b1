//! The files a `read` deny rule covers, hidden by the kernel too (docs/sandbox.md,
//! "Secrets are not there"): `read(.env)` keeps `.env` from `cat` and from a script
//! alike.
//!
//! The files are found by walking: the project with the sandbox's walk of it, and,
//! for rules anchored elsewhere (`read(~/.aws/**)`, `read(/etc/ssl/private/*)`), the
//! folder before the rule's first wildcard. Each entry is judged by the gate itself
//! ([`Gate::search_filter`]), so the kernel hides exactly what the gate denies; a
//! folder whose every entry the rule covers (a made-up name inside it is denied) is
//! hidden whole. A rule whose folders hold more than [`OUTSIDE_BUDGET`] entries
//! cannot be enforced this way: it is named, and commands then run sandboxed only
//! once the rule is narrower (or with the person's approval, outside).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decode_core::state::ActiveState;
use decode_policy::{Gate, Rule, Tool, Verdict};

/// How many entries the walks outside the project read at most, all rules together.
pub const OUTSIDE_BUDGET: usize = 200_000;

/// How many files a command's sandbox hides for `read` deny rules at most (each is
/// a mount).
pub const MAX_HIDDEN: usize = 512;

/// The `read` deny rules of the project's settings and the agent, and the gate
/// that judges them.
#[derive(Clone)]
pub struct ReadDeny {
    /// The rules' texts: the walk is done again when they change.
    pub rules: Vec<String>,
    /// The gate of the project.
    pub gate: Arc<Gate>,
    /// The home folders (`~/` in a rule).
    pub homes: Vec<PathBuf>,
}

impl std::fmt::Debug for ReadDeny {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadDeny")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

impl ReadDeny {
    /// The rules of `active` now.
    pub fn of(active: &ActiveState, homes: &[PathBuf]) -> ReadDeny {
        let gate = active.gate();
        let mut rules: Vec<String> = active
            .settings()
            .permissions
            .deny
            .iter()
            .chain(gate.agent().rules.deny.iter())
            .filter(|t| Rule::parse(t).is_ok_and(|r| r.tool == Tool::Read && r.pattern.is_some()))
            .cloned()
            .collect();
        rules.sort();
        rules.dedup();
        ReadDeny {
            rules,
            gate,
            homes: homes.to_vec(),
        }
    }

    /// Whether the gate denies reading `path`.
    pub fn denies(&self, path: &Path) -> bool {
        self.gate.search_filter(path) == Some(Verdict::Deny)
    }

    /// Whether a rule could cover a file beneath `dir`.
    pub fn reaches_beneath(&self, dir: &Path) -> bool {
        self.gate
            .search_could_reach(dir, "*")
            .is_some_and(|(v, _)| v == Verdict::Deny)
    }

    /// Whether every entry of the folder `dir` is denied (a made-up name is).
    pub fn denies_all_in(&self, dir: &Path) -> bool {
        self.denies(&dir.join("\u{1}decode-probe"))
    }

    /// The folders outside the project the rules reach into: each rule's path
    /// before its first wildcard (`~/` expanded with every home), with the rules.
    fn outside_roots(&self, project: &Path) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        for text in &self.rules {
            let Ok(rule) = Rule::parse(text) else {
                continue;
            };
            let Some(p) = rule.pattern else {
                continue;
            };
            let rest = if p == "~" {
                Some("")
            } else {
                p.strip_prefix("~/")
                    .or_else(|| p.strip_prefix("$HOME/"))
                    .or_else(|| p.strip_prefix("${HOME}/"))
            };
            let bases: Vec<PathBuf> = match rest {
                Some(r) => self.homes.iter().map(|h| h.join(r)).collect(),
                None if p.starts_with('/') => vec![PathBuf::from(&p)],
                None => continue,
            };
            for b in bases {
                let mut lit = PathBuf::from("/");
                for c in b.components().skip(1) {
                    if c.as_os_str()
                        .to_string_lossy()
                        .contains(['*', '?', '[', '{'])
                    {
                        break;
                    }
                    lit.push(c);
                }
                // Inside the project the project's walk finds them.
                if lit.starts_with(project) {
                    continue;
                }
                out.push((lit, text.clone()));
            }
        }
        out
    }
}

/// What the walks for the rules found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// Files and folders to hide.
    pub hidden: Vec<PathBuf>,
    /// Rules whose folders were too big to walk.
    pub unenforced: Vec<String>,
}

/// Judges one entry of a walk: `true` when it is hidden (a folder is then not
/// entered).
pub(crate) fn judge(deny: &ReadDeny, path: &Path, is_dir: bool, out: &mut Vec<PathBuf>) -> bool {
    // `/`, a home folder, the project or a folder above them is never hidden
    // whole (a rule such as `read(~/**)`): its entries are judged one by one.
    let critical = |p: &Path| {
        p.parent().is_none()
            || deny.homes.iter().any(|h| h.starts_with(p))
            || deny.gate.project_root().starts_with(p)
    };
    if critical(path) {
        return false;
    }
    // A link to a folder is judged as the folder (`secrets -> /elsewhere`
    // under `read(secrets/**)`).
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let is_dir = is_dir || (is_link && std::fs::metadata(path).is_ok_and(|m| m.is_dir()));
    if deny.denies(path) || (is_dir && deny.denies_all_in(path)) {
        // A link is not mounted over (a mount follows it, and one that cannot
        // be followed would stop every command from starting): what it leads
        // to is hidden, wherever that is.
        match is_link {
            // Found through a link to a folder: by its real name.
            false => out.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())),
            true => {
                if let Ok(real) = std::fs::canonicalize(path) {
                    if !critical(&real) {
                        out.push(real);
                    }
                }
            }
        }
        return true;
    }
    false
}

/// Walks the folders the rules name outside `project`.
pub(crate) fn outside(deny: &ReadDeny, project: &Path) -> Found {
    let mut found = Found::default();
    let mut budget = OUTSIDE_BUDGET;
    for (root, rule) in deny.outside_roots(project) {
        let Ok(meta) = std::fs::symlink_metadata(&root) else {
            continue;
        };
        let real = std::fs::canonicalize(&root).unwrap_or(root.clone());
        if judge(deny, &root, meta.is_dir(), &mut found.hidden) || !meta.is_dir() {
            continue;
        }
        let mut stack = vec![real];
        'walk: while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                if budget == 0 {
                    found.unenforced.push(rule.clone());
                    break 'walk;
                }
                budget -= 1;
                let Ok(ft) = e.file_type() else {
                    continue;
                };
                let p = e.path();
                if !judge(deny, &p, ft.is_dir(), &mut found.hidden) && ft.is_dir() {
                    stack.push(p);
                }
            }
        }
    }
    found.hidden.sort();
    found.hidden.dedup();
    found.unenforced.sort();
    found.unenforced.dedup();
    found
}
