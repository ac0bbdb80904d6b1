//! git's stored copies (docs/permissions.md, "git's stored copies"): the
//! object store and the index hold a copy of every file git tracks, and
//! git prints them however the file in the work tree is hidden. Which
//! sub-commands print stored content, which words name the files they
//! print, and with which options they print names only — as data.
//!
//! Two ways to reach a stored copy:
//! - by name: `REV:PATH` (`HEAD:.env`, `HEAD~2:./x`), `:N:PATH` and
//!   `:PATH` (the index), and the paths after `--` (`git log -p -- .env`);
//! - whole: a sub-command that prints what a commit, the index or a tree
//!   holds without naming the files (`git log -p`, `git show`, `git diff
//!   HEAD~1`, `git grep x HEAD`, `git archive HEAD`).

use super::vcs::git_subcommand;

/// When a sub-command prints stored content of files it does not name.
#[derive(Debug, Clone, Copy)]
enum Whole {
    /// Always (`archive`, `format-patch`, `fast-export`, `bundle`).
    Always,
    /// Unless one of these options makes it print names, counts or object
    /// facts only (`git show --stat`, `git cat-file -t`).
    Unless(&'static [&'static str]),
    /// Only with one of these options (`git log -p`).
    With(&'static [&'static str]),
    /// Only when it searches the index (`git grep --cached x`) or a
    /// revision rather than the work tree (`git grep x HEAD`): the words
    /// that may name one are left to the caller, who knows which name a
    /// file ([`StoredReads::revisions`]).
    Revision,
    /// When it copies the store of a repository on this machine (`git clone
    /// . /tmp/x`), not a server's.
    LocalSource,
    /// When it copies from a repository named by a path on this machine
    /// (`git fetch /srv/proj`), not a remote's name or a server.
    LocalPath,
    /// Never: it names what it prints (`checkout`, `restore`).
    Never,
}

/// One sub-command that prints (or writes out) stored content.
struct Stored {
    names: &'static [&'static str],
    whole: Whole,
    /// Its operands are paths it reads from the store even before `--`
    /// (`git checkout .env` puts the index's copy back).
    operands_are_paths: bool,
    /// Examples: a command, and whether it reads stored content whole
    /// (read back by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    examples: &'static [(&'static str, bool)],
}

/// The options with which `show` and `diff` print names or counts only.
const NAMES_ONLY: &[&str] = &[
    "--stat",
    "--name-only",
    "--name-status",
    "--shortstat",
    "--numstat",
    "--dirstat",
    "--summary",
    "--no-patch",
    "-s",
    "--raw",
    "--quiet",
];

/// The options with which `log` and its relatives print patches.
const PATCHES: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "--patch-with-stat",
    "--patch-with-raw",
    "-L",
    "-c",
    "--cc",
    "--dd",
    "--remerge-diff",
    "-W",
    "--function-context",
    "-U",
    "--unified",
    "--binary",
    "--word-diff",
    "--color-words",
];

const STORED: &[Stored] = &[
    Stored {
        names: &["show"],
        whole: Whole::Unless(NAMES_ONLY),
        operands_are_paths: false,
        examples: &[
            ("git show", true),
            ("git show HEAD~1", true),
            ("git show --stat HEAD", false),
            ("git show HEAD:README.md", false),
            ("git show HEAD -- src/lib.rs", false),
        ],
    },
    Stored {
        names: &["diff", "diff-index", "diff-files", "difftool"],
        whole: Whole::Unless(NAMES_ONLY),
        operands_are_paths: false,
        examples: &[
            ("git diff", true),
            ("git diff --cached", true),
            ("git diff --name-only HEAD~3", false),
            ("git diff HEAD -- src", false),
        ],
    },
    Stored {
        names: &["log", "whatchanged", "diff-tree", "stash", "reflog"],
        whole: Whole::With(PATCHES),
        operands_are_paths: false,
        examples: &[
            ("git log --oneline", false),
            ("git log -p", true),
            ("git log -3 --patch", true),
            ("git stash show -p", true),
            ("git log -p -- docs", false),
        ],
    },
    Stored {
        names: &["grep"],
        whole: Whole::Revision,
        operands_are_paths: false,
        examples: &[
            ("git grep -n TODO", false),
            ("git grep --cached TODO", true),
            ("git grep -e TODO HEAD~1 -- src", false),
        ],
    },
    Stored {
        names: &["cat-file"],
        whole: Whole::Unless(&["-t", "-s", "-e"]),
        operands_are_paths: false,
        examples: &[
            ("git cat-file -p 4b825dc", true),
            ("git cat-file --batch", true),
            ("git cat-file -t HEAD", false),
            ("git cat-file -p HEAD:Cargo.toml", false),
        ],
    },
    Stored {
        names: &[
            "archive",
            "format-patch",
            "fast-export",
            "bundle",
            "range-diff",
            "merge-tree",
            "pack-objects",
        ],
        whole: Whole::Always,
        operands_are_paths: false,
        examples: &[("git archive HEAD", true), ("git format-patch -3", true)],
    },
    Stored {
        names: &[
            "unpack-file",
            "checkout-index",
            "worktree",
            "notes",
            "read-tree",
            "update-index",
        ],
        whole: Whole::Unless(&[
            "list",
            "prune",
            "remove",
            "lock",
            "unlock",
            "repair",
            "--refresh",
            "--really-refresh",
        ]),
        operands_are_paths: false,
        examples: &[
            ("git unpack-file HEAD:x", false),
            ("git checkout-index -a --prefix=/tmp/o/", true),
            ("git worktree add /tmp/wt HEAD~1", true),
            ("git worktree list", false),
        ],
    },
    Stored {
        names: &["mktree", "commit-tree", "replace"],
        whole: Whole::Always,
        operands_are_paths: false,
        examples: &[("git commit-tree 4b825dc -m x", true)],
    },
    Stored {
        names: &["for-each-ref"],
        whole: Whole::With(&["--format"]),
        operands_are_paths: false,
        examples: &[
            ("git for-each-ref --format=%(raw) refs/tags", true),
            ("git for-each-ref refs/heads", false),
        ],
    },
    Stored {
        names: &["fetch", "pull"],
        whole: Whole::LocalPath,
        operands_are_paths: false,
        examples: &[
            ("git fetch /srv/proj dev", true),
            ("git fetch origin", false),
            ("git pull --rebase", false),
        ],
    },
    Stored {
        names: &["clone"],
        whole: Whole::LocalSource,
        operands_are_paths: false,
        examples: &[
            ("git clone . /tmp/x", true),
            ("git clone file:///srv/proj x", true),
            ("git clone https://example.com/r.git", false),
            ("git clone git@example.com:o/r.git x", false),
            (
                "git clone --depth 1 https://example.com/r.git /tmp/r",
                false,
            ),
        ],
    },
    Stored {
        names: &["checkout", "restore", "blame", "annotate"],
        whole: Whole::Never,
        operands_are_paths: true,
        examples: &[
            ("git checkout HEAD~1 -- .env", false),
            ("git blame x", false),
        ],
    },
];

/// What a git command reads from the store.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct StoredReads {
    /// The paths it names, each relative to the repository's top
    /// (`HEAD:PATH`), or to the folder it runs in (`HEAD:./PATH`, a
    /// pathspec): `(path, relative to the folder it runs in)`.
    pub named: Vec<(String, bool)>,
    /// The paths after `--` (`git log -p -- old`), the same way: each
    /// surely a path, a file or a folder, there now or not.
    pub specs: Vec<(String, bool)>,
    /// It prints stored content of files it does not name.
    pub whole: bool,
    /// Words that name a revision (so make it `whole`) unless they name a
    /// file where it runs (`git grep x HEAD` and `git grep x src`).
    pub revisions: Vec<String>,
    /// It prints (or writes out) stored content at all: of what it names,
    /// or whole (`git log -p -- x`, `git checkout HEAD -- x`; not `git log
    /// --oneline -- x`).
    pub prints: bool,
    /// It names files by a pattern, pathspec magic or a word only known
    /// when it runs: none the rules can judge.
    pub wide: bool,
    /// Operands that may name a revision or a path (`git diff HEAD~1
    /// src/x.rs`): git takes one that names a file or folder where it runs
    /// for a path.
    pub loose: Vec<String>,
    /// Read whole only for want of a path: a loose operand that is one
    /// narrows it to that path.
    pub narrowable: bool,
    /// The sub-command, for reasons.
    pub sub: String,
}

/// What `core` (a seen-through command) reads from git's store; `None`
/// when it is no git command that prints stored content.
pub(crate) fn stored_reads(core: &[String]) -> Option<StoredReads> {
    let (sub, args) = git_subcommand(core)?;
    let entry = STORED.iter().find(|s| s.names.contains(&sub))?;
    let mut out = StoredReads {
        sub: sub.to_string(),
        ..StoredReads::default()
    };
    let dashes = args.iter().position(|a| a == "--");
    let (before, after) = match dashes {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let operands: Vec<&String> = before.iter().filter(|a| !a.starts_with('-')).collect();
    let mut all_named = !operands.is_empty();
    for w in &operands {
        match stored_name(w) {
            Some(named) => out.named.push(named),
            None if entry.operands_are_paths => out.named.push((w.to_string(), true)),
            None => {
                all_named = false;
                out.loose.push(w.to_string());
            }
        }
    }
    let pathspecs: Vec<(String, bool)> = after
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| (p.to_string(), true))
        .collect();
    let narrowed = (all_named && pathspecs.is_empty()) || !pathspecs.is_empty();
    out.specs = pathspecs;
    // A pattern, pathspec magic (`:(icase)`, `:!`) or a word only known when
    // it runs names no file the rules can judge: read whole.
    let wide = out
        .named
        .iter()
        .chain(&out.specs)
        .any(|(p, _)| p.contains(['*', '?', '[', '$', '`']) || p.starts_with(':'));
    let has = |opts: &[&str]| {
        before
            .iter()
            .any(|a| opts.iter().any(|o| super::read_only::names_option(a, o)))
    };
    let by_entry = match entry.whole {
        Whole::Always => true,
        Whole::Never => false,
        Whole::Unless(opts) => !has(opts),
        Whole::With(opts) => has(opts),
        Whole::Revision => has(&["--cached"]),
        Whole::LocalSource => !operands.is_empty() && !operands.iter().any(|w| is_remote(w)),
        Whole::LocalPath => operands
            .iter()
            .any(|w| ['.', '/', '~'].iter().any(|c| w.starts_with(*c)) || w.starts_with("file:")),
    };
    out.prints = by_entry || matches!(entry.whole, Whole::Never);
    out.wide = wide;
    // `--full-diff`: the patch of every file the commit changed, whatever
    // the paths say.
    let full = has(&["--full-diff"]);
    out.whole = out.prints && (wide || (by_entry && (!narrowed || full)));
    out.narrowable = out.whole && !wide && !full && !out.loose.is_empty();
    if matches!(entry.whole, Whole::Revision) {
        out.revisions = grep_operands(before);
    }
    Some(out)
}

/// Whether `w` names a repository on a server (`https://…`, `host:path`),
/// not one on this machine (`.`, `/srv/r`, `../r`).
fn is_remote(w: &str) -> bool {
    let local = w.starts_with('.') || w.starts_with('/') || w.starts_with("file:");
    !local && w.contains(':')
}

/// The options of `git grep` that take the next word as their value.
const GREP_VALUES: &[&str] = &[
    "-e",
    "-f",
    "-A",
    "-B",
    "-C",
    "-m",
    "--max-count",
    "--max-depth",
    "--threads",
    "--context",
    "--after-context",
    "--before-context",
];

/// The operands of `git grep ARGS` past the pattern: each a revision or a
/// path.
fn grep_operands(args: &[String]) -> Vec<String> {
    let mut pattern_given = false;
    let mut operands = Vec::new();
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if GREP_VALUES.contains(&a.as_str()) {
            pattern_given |= a == "-e" || a == "-f";
            words.next();
        } else if a.starts_with("--regexp=") || a.starts_with("--file=") {
            pattern_given = true;
        } else if !a.starts_with('-') {
            operands.push(a.clone());
        }
    }
    if !pattern_given && !operands.is_empty() {
        operands.remove(0);
    }
    operands
}

/// The path a word names in git's store: `REV:PATH` (relative to the
/// repository's top, or to the folder git runs in when it starts with
/// `./` or `../`), `:N:PATH` and `:PATH` (the index). `:/TEXT` searches
/// commit messages; `REV:` is a whole tree (named as `.`).
fn stored_name(word: &str) -> Option<(String, bool)> {
    if word.starts_with('-') || word.contains("://") {
        return None;
    }
    let path = if let Some(rest) = word.strip_prefix(':') {
        if rest.starts_with('/') || rest.starts_with('(') {
            return None;
        }
        match rest.split_once(':') {
            Some(("0" | "1" | "2" | "3", p)) => p,
            _ => rest,
        }
    } else {
        let (rev, p) = word.split_once(':')?;
        if rev.is_empty() || (rev.contains('@') && p.contains('/') && !rev.contains('{')) {
            // `user@host:path` is a remote, not a revision.
            return None;
        }
        p
    };
    let relative = path.starts_with("./") || path.starts_with("../");
    let path = if path.is_empty() { "." } else { path };
    Some((path.to_string(), relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_entry_reads_its_examples() {
        for entry in STORED {
            for &(line, whole) in entry.examples {
                let got = stored_reads(&argv(line)).unwrap_or_else(|| panic!("{line}: no entry"));
                assert_eq!(got.whole, whole, "{line}");
            }
        }
    }

    #[test]
    fn names_in_the_store() {
        for (w, want) in [
            ("HEAD:.env", Some((".env", false))),
            ("HEAD~2:./a/k", Some(("./a/k", true))),
            (":0:secret", Some(("secret", false))),
            (":2:x/y", Some(("x/y", false))),
            (":secret", Some(("secret", false))),
            ("main:", Some((".", false))),
            ("HEAD@{1}:a", Some(("a", false))),
            (":/fix typo", None),
            ("git@github.com:o/r", None),
            ("https://x/y", None),
            ("HEAD", None),
            ("--format=%h:%s", None),
        ] {
            let got = stored_name(w);
            assert_eq!(got.as_ref().map(|(p, r)| (p.as_str(), *r)), want, "{w}");
        }
    }

    #[test]
    fn names_and_pathspecs_are_read() {
        let r = stored_reads(&argv("git cat-file -p HEAD:secret")).unwrap();
        assert_eq!(r.named, vec![("secret".to_string(), false)]);
        assert!(!r.whole);
        let r = stored_reads(&argv("git log -p -- .env src")).unwrap();
        assert_eq!(r.specs.len(), 2);
        assert!(!r.whole);
        let r = stored_reads(&argv("git checkout .env")).unwrap();
        assert_eq!(r.named, vec![(".env".to_string(), true)]);
        let r = stored_reads(&argv("git --no-pager show :0:k")).unwrap();
        assert_eq!(r.named, vec![("k".to_string(), false)]);
        assert!(stored_reads(&argv("git status")).is_none());
        assert!(stored_reads(&argv("git push origin HEAD:main")).is_none());
        assert!(stored_reads(&argv("ls HEAD:x")).is_none());
        let r = stored_reads(&argv("git grep -A 3 TODO HEAD~1 src")).unwrap();
        assert_eq!(r.revisions, ["HEAD~1", "src"]);
        let r = stored_reads(&argv("git grep -e TODO HEAD")).unwrap();
        assert_eq!(r.revisions, ["HEAD"]);
    }
}
