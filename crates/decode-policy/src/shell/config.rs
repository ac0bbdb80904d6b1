//! What the person's configuration makes a command mean: git aliases (from
//! the system, global and repository git config) and cargo aliases (from
//! `.cargo/config.toml` in the project and its parents, and
//! `$CARGO_HOME/config.toml`). `git p` with `alias.p = push` is judged as
//! `git push` (docs/permissions.md, "Fail closed"). Read once, when the gate
//! is built; files are read only if they are small regular files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::paths::read_small_file;

/// Aliases in force for one project.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShellConfig {
    /// Alias name (lower-cased: git matches them without case) → expansion.
    pub(crate) git: HashMap<String, String>,
    /// Alias name → words.
    pub(crate) cargo: HashMap<String, Vec<String>>,
}

/// git's built-in commands (`git.c`): an alias of the same name is ignored.
const GIT_BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout--worker",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-cache--daemon",
    "credential-store",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-pairs",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "format-rev",
    "fsck",
    "fsck-objects",
    "fsmonitor--daemon",
    "gc",
    "get-tar-commit-id",
    "grep",
    "hash-object",
    "help",
    "history",
    "hook",
    "index-pack",
    "init",
    "init-db",
    "interpret-trailers",
    "last-modified",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-ours",
    "merge-recursive",
    "merge-recursive-ours",
    "merge-recursive-theirs",
    "merge-subtree",
    "merge-tree",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "pickaxe",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "remote-ext",
    "remote-fd",
    "repack",
    "replace",
    "replay",
    "repo",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule--helper",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-archive--writer",
    "upload-pack",
    "url-parse",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// cargo's built-in commands: an alias of the same name is ignored.
const CARGO_BUILTINS: &[&str] = &[
    "add",
    "bench",
    "build",
    "check",
    "clean",
    "config",
    "doc",
    "fetch",
    "fix",
    "generate-lockfile",
    "git-checkout",
    "help",
    "info",
    "init",
    "install",
    "locate-project",
    "login",
    "logout",
    "metadata",
    "new",
    "owner",
    "package",
    "pkgid",
    "publish",
    "read-manifest",
    "remove",
    "report",
    "run",
    "rustc",
    "rustdoc",
    "search",
    "test",
    "tree",
    "uninstall",
    "update",
    "vendor",
    "verify-project",
    "version",
    "yank",
];

/// Largest configuration file read.
const MAX_CONFIG: u64 = 1 << 20;

impl ShellConfig {
    /// Reads the aliases that apply to commands run in `root`.
    pub(crate) fn load(root: &Path, home: &Path, git_dir: Option<&Path>) -> ShellConfig {
        let mut c = ShellConfig::default();
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"));
        let mut git_files = vec![
            PathBuf::from("/etc/gitconfig"),
            xdg.join("git/config"),
            home.join(".gitconfig"),
        ];
        if let Some(g) = git_dir {
            git_files.push(g.join("config"));
        }
        for f in git_files {
            read_git_config(&f, home, &mut c.git, 0);
        }
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".cargo"));
        // Nearer files win: read the farthest first.
        let mut cargo_files: Vec<PathBuf> =
            vec![cargo_home.join("config"), cargo_home.join("config.toml")];
        let mut dirs: Vec<&Path> = root.ancestors().collect();
        dirs.reverse();
        for d in dirs {
            cargo_files.push(d.join(".cargo/config"));
            cargo_files.push(d.join(".cargo/config.toml"));
        }
        for f in cargo_files {
            read_cargo_config(&f, &mut c.cargo);
        }
        c
    }

    /// What `git NAME` runs when NAME is an alias: the expansion.
    pub(crate) fn git_alias(&self, name: &str) -> Option<&str> {
        if GIT_BUILTINS.contains(&name) {
            return None;
        }
        self.git.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// What `cargo NAME` runs when NAME is an alias: the words.
    pub(crate) fn cargo_alias(&self, name: &str) -> Option<&[String]> {
        if CARGO_BUILTINS.contains(&name) {
            return None;
        }
        self.cargo.get(name).map(Vec::as_slice)
    }
}

/// git's config format, as far as aliases and includes go.
fn read_git_config(path: &Path, home: &Path, out: &mut HashMap<String, String>, depth: usize) {
    if depth > 4 {
        return;
    }
    let Ok(text) = read_small_file(path, MAX_CONFIG) else {
        return;
    };
    let mut section = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split(']').next().unwrap_or("");
            section = name.trim().to_ascii_lowercase();
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), unquote_git(v.trim())),
            None => (line.to_ascii_lowercase(), String::new()),
        };
        if section == "alias" {
            out.insert(key, value);
        } else if (section == "include" || section.starts_with("includeif")) && key == "path" {
            let p = if let Some(rest) = value.strip_prefix("~/") {
                home.join(rest)
            } else if Path::new(&value).is_absolute() {
                PathBuf::from(&value)
            } else {
                path.parent().unwrap_or(Path::new("/")).join(&value)
            };
            read_git_config(&p, home, out, depth + 1);
        }
    }
}

fn unquote_git(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(x) => out.push(x),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The `[alias]` table of a cargo config file.
fn read_cargo_config(path: &Path, out: &mut HashMap<String, Vec<String>>) {
    let Ok(text) = read_small_file(path, MAX_CONFIG) else {
        return;
    };
    if crate::paths::nesting_depth(&text) > 64 {
        return;
    }
    let Ok(value) = text.parse::<toml::Table>() else {
        return;
    };
    let Some(toml::Value::Table(aliases)) = value.get("alias") else {
        return;
    };
    for (name, v) in aliases {
        let words: Vec<String> = match v {
            toml::Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
            toml::Value::Array(a) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => continue,
        };
        out.insert(name.clone(), words);
    }
}
