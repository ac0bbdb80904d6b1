//! git's stored copies (docs/permissions.md, "git's stored copies"). The
//! sandbox hides the files read deny rules cover, but not git's object
//! store or index, which hold a copy of every file git ever tracked — in
//! history and on other branches too. So a git command is judged by what it
//! prints from the store:
//! - a file it names (`git show HEAD:.env`, `git cat-file -p :0:.env`,
//!   `git log -p -- .env`) is judged by the read rules like `read`: a deny
//!   rule denies it, an ask rule asks; a folder it names asks where a read
//!   rule could cover a file beneath it;
//! - stored content it prints whole (`git log -p`, `git show`, `git diff`,
//!   `git grep x HEAD`, `git archive`, a pattern or a word only known when it
//!   runs) asks where a read deny or ask rule could cover a file of the
//!   repository or the project, whatever the folder holds now (in every mode
//!   but bypass).

use super::*;
use crate::programs::StoredReads;

/// What the gate says of what a command reads from git's store.
pub(super) enum StoredVerdict {
    Deny(String),
    /// An ask; `rule`: from a read ask rule (which applies in bypass too).
    Ask {
        why: String,
        rule: bool,
    },
}

impl Gate {
    /// What the git fragments of a command read from the store (see the
    /// module comment); `None` when nothing they read is covered.
    pub(super) fn stored_reads_verdict(&self, frags: &[Fragment]) -> Option<StoredVerdict> {
        if !self.filters_searches() {
            return None;
        }
        let mut ask = None;
        for f in frags
            .iter()
            .filter(|f| f.core.first().is_some_and(|p| p == "git"))
        {
            let Some(reads) = crate::programs::stored_reads(&f.core) else {
                continue;
            };
            match self.fragment_stored(f, &reads) {
                Some(StoredVerdict::Deny(why)) => return Some(StoredVerdict::Deny(why)),
                Some(a) => {
                    ask.get_or_insert(a);
                }
                None => {}
            }
        }
        ask
    }

    fn fragment_stored(&self, f: &Fragment, reads: &StoredReads) -> Option<StoredVerdict> {
        if !reads.whole
            && reads.named.is_empty()
            && reads.specs.is_empty()
            && reads.revisions.is_empty()
        {
            return None;
        }
        let sub = format!("git {}", reads.sub);
        let elsewhere = f.git_elsewhere
            || f.core
                .iter()
                .any(|w| w.starts_with("--git-dir") || w.starts_with("--work-tree"));
        let Some(cwd) = f.cwd.as_deref().filter(|_| !elsewhere) else {
            return Some(StoredVerdict::Ask {
                why: format!(
                    "asks: `{sub}` prints git's stored copies from a repository the gate cannot place, and read rules cover files"
                ),
                rule: false,
            });
        };
        // No repository: git reads nothing.
        let top = repository_top(cwd)?;
        // `git grep x HEAD`: a word that names no file here is a revision.
        let revision = reads
            .revisions
            .iter()
            .any(|w| std::fs::symlink_metadata(lexical(cwd, Path::new(w))).is_err());
        let prints = reads.prints || revision;
        // `git diff src/x.rs`: an operand that names a path here is one.
        let here: Vec<(String, bool)> = reads
            .loose
            .iter()
            .filter(|w| {
                reads.narrowable && std::fs::symlink_metadata(lexical(cwd, Path::new(w))).is_ok()
            })
            .map(|w| (w.clone(), true))
            .collect();
        let narrowed = !here.is_empty();
        let whole = prints
            && ((reads.whole && !narrowed)
                || reads.wide
                || f.has_dynamic()
                || (revision && reads.specs.is_empty()));
        let mut folders = Vec::new();
        // What it names is judged like `read` (`HEAD:PATH` always; the paths
        // after `--` where it prints their content).
        let named = reads.named.iter().map(|n| (n, false));
        let specs = reads
            .specs
            .iter()
            .chain(&here)
            .filter(|_| prints)
            .map(|n| (n, true));
        for ((path, relative), spec) in named.chain(specs) {
            // Relative to the repository's top, and — for a copy of the
            // project's store elsewhere — to the project's root.
            let bases: &[&Path] = if *relative {
                &[cwd]
            } else {
                &[&top, &self.root]
            };
            for base in bases {
                let abs = lexical(base, Path::new(path));
                if let Some(v) = self.stored_rule(&sub, &abs) {
                    return Some(v);
                }
                // A folder here, or a path after `--` that is no file here
                // (a folder since removed): every file beneath it.
                let meta = std::fs::metadata(&abs);
                let folder = match spec {
                    true => !meta.is_ok_and(|m| m.is_file()),
                    false => meta.is_ok_and(|m| m.is_dir()),
                };
                if folder {
                    folders.push(abs);
                }
            }
        }
        if !prints {
            return None;
        }
        // A folder named: every file the store holds beneath it.
        if !whole {
            let reach = folders.iter().find_map(|d| self.rules_could_reach(d));
            return reach.map(|(_, rule)| stored_ask(&sub, &rule));
        }
        // Whole: what the store holds is not what the folder holds now (a file
        // since removed, another branch), so any read rule that could cover a
        // file of the repository or of the project counts.
        let reach = self
            .rules_could_reach(&top)
            .or_else(|| self.rules_could_reach(&self.root));
        reach.map(|(_, rule)| stored_ask(&sub, &rule))
    }

    /// A read deny or ask rule on the file `abs` names in the store.
    fn stored_rule(&self, sub: &str, abs: &Path) -> Option<StoredVerdict> {
        let forms = self.search_forms(abs, &self.resolve(abs));
        for list in [RuleList::Deny, RuleList::Ask] {
            for (a, rel) in &forms {
                let f = PathForms {
                    abs: a,
                    rel: rel.as_deref(),
                };
                if let Some(m) = self.index.match_path(list, Tool::Read, &f) {
                    let rule = self.index.refs[m.rule].describe();
                    let shown = rel.as_deref().unwrap_or(a);
                    return Some(if list == RuleList::Deny {
                        StoredVerdict::Deny(format!(
                            "`{sub}` reads git's stored copy of {shown}, and rule {rule} denies reading it"
                        ))
                    } else {
                        StoredVerdict::Ask {
                            why: format!(
                                "asks: `{sub}` reads git's stored copy of {shown}, and rule {rule} asks before reading it"
                            ),
                            rule: true,
                        }
                    });
                }
            }
        }
        None
    }
}

/// The ask for stored content a read rule may cover.
fn stored_ask(sub: &str, rule: &str) -> StoredVerdict {
    StoredVerdict::Ask {
        why: format!(
            "asks: `{sub}` prints git's stored copies (history and other branches too), which may hold files rule {rule} covers; the sandbox cannot hide git's store"
        ),
        rule: false,
    }
}

/// The top of the git repository a command run in `cwd` works on: the
/// nearest folder at or above it holding `.git`.
fn repository_top(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .take(256)
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}
