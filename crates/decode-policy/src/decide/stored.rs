//! git's stored copies (docs/permissions.md, "git's stored copies"). The
//! sandbox hides the files read deny rules cover, but not git's object
//! store or index, which hold a copy of every file git tracks. So a git
//! command is judged by what it prints from the store:
//! - a file it names (`git show HEAD:.env`, `git cat-file -p :0:.env`,
//!   `git log -p -- .env`) is judged by the read rules like `read`: a deny
//!   rule denies it, an ask rule asks;
//! - stored content it prints whole (`git log -p`, `git show`, `git diff`,
//!   `git grep x HEAD`, `git archive`) asks where the index holds a file a
//!   read deny or ask rule covers (in every mode but bypass).
//!
//! A file committed once and since removed from the index stays in history
//! where no index shows it: that gap is named in the docs.

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
        if !reads.whole && reads.named.is_empty() && reads.revisions.is_empty() {
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
        let mut whole = reads.whole
            || reads
                .revisions
                .iter()
                .any(|w| std::fs::symlink_metadata(lexical(cwd, Path::new(w))).is_err());
        let mut prefixes = Vec::new();
        for (path, relative) in &reads.named {
            let abs = lexical(if *relative { cwd } else { &top }, Path::new(path));
            if let Some(v) = self.stored_rule(&sub, &abs) {
                return Some(v);
            }
            // A folder: every file git holds beneath it.
            if self.search_could_reach(&abs, "*").is_some() {
                whole = true;
                prefixes.push(abs);
            }
        }
        if !whole {
            return None;
        }
        let (file, verdict) = match self.tracked_covered(&top) {
            Err(why) => {
                return Some(StoredVerdict::Ask {
                    why: format!("asks: `{sub}` prints git's stored copies, and {why}"),
                    rule: false,
                })
            }
            Ok(covered) => covered.into_iter().find(|(p, _)| {
                let abs = top.join(p);
                reads.named.is_empty() || prefixes.iter().any(|d| abs.starts_with(d))
            })?,
        };
        let how = if verdict == Verdict::Deny {
            "denies reading"
        } else {
            "asks before reading"
        };
        Some(StoredVerdict::Ask {
            why: format!(
                "asks: `{sub}` prints git's stored copies, and git holds {file}, which a read rule {how}; the sandbox cannot hide the store"
            ),
            rule: false,
        })
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

    /// The files git's index (of the repository whose top is `top`) holds
    /// that a read deny or ask rule covers, read once per change of the
    /// index. An index the gate cannot read is an error (the caller asks).
    fn tracked_covered(&self, top: &Path) -> Result<Vec<(String, Verdict)>, String> {
        let Some(dir) = git_dir(top) else {
            return Err(format!(
                "the gate cannot find the git folder of {}",
                top.display()
            ));
        };
        self.index_memo
            .covered(&dir, |path| self.tracked_verdict(top, path))
    }

    /// What the read rules say of a file the index holds (a sparse index's
    /// folder, ending in `/`: of any file beneath it).
    fn tracked_verdict(&self, top: &Path, p: &str) -> Option<Verdict> {
        let abs = top.join(p);
        if p.ends_with('/') {
            return self.search_could_reach(&abs, "*").map(|(v, _)| v);
        }
        let a = abs.to_string_lossy();
        let rel = self.rel(&abs);
        let f = PathForms {
            abs: &a,
            rel: rel.as_deref(),
        };
        [
            (RuleList::Deny, Verdict::Deny),
            (RuleList::Ask, Verdict::Ask),
        ]
        .into_iter()
        .find(|(list, _)| self.index.match_path(*list, Tool::Read, &f).is_some())
        .map(|(_, v)| v)
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
