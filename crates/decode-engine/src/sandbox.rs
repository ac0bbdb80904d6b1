//! The kernel behind the gate: every `bash` command runs in a bubblewrap sandbox
//! unless the person approved that very call (docs/sandbox.md).
//!
//! What the sandbox enforces does not depend on reading the command:
//! - no new privileges (`PR_SET_NO_NEW_PRIVS`, and no capabilities): `sudo`, `su`,
//!   `pkexec` and set-uid programs cannot raise privileges;
//! - writes are confined: the whole system is read-only but the project, the
//!   `additionalDirectories`, the temp folders, the toolchain caches and the
//!   person's `sandbox.writable` ([`places`]);
//! - protected paths are read-only inside those places (the project's `.decode/`,
//!   every `.git` folder's hooks and config, `.envrc`, …), the folders above them
//!   pinned so they cannot be swapped by a rename, and what a command creates where
//!   one did not exist is taken away when it ends, through folders opened before it
//!   started ([`plan`]);
//! - secrets are not there: credential stores, Decode's own folders, the files a
//!   `read` deny rule covers ([`denied`]) and the person's `sandbox.hidden` are
//!   hidden; keys and tokens are not in the environment ([`env`]);
//! - host services are out of reach: the command has a network of its own
//!   (loopback only: no abstract socket of the host, no host port), and every
//!   socket of the host with a path is covered ([`servers`]);
//! - nothing outlives the call (a process namespace of its own).
//!
//! A command that hits one of these bounds says which in its result ([`bounds`]),
//! and Decode asks the person whether to run it again outside. Where bubblewrap
//! cannot run (not installed, user namespaces off), [`support`] says why once and
//! commands run without it.
//!
//! Landlock is not used: it can only grant access to whole trees, so it cannot make
//! one file read-only inside a writable project (see docs/sandbox.md).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use decode_policy::protected_anywhere;

pub mod bounds;
pub mod denied;
pub mod env;
pub mod mounts;
pub(crate) mod new_repos;
pub mod places;
pub(crate) mod plan;
mod proxied;
mod servers;
pub mod warm;

pub use crate::running_commands::{made_by_a_running_command, Held, Running};
pub use denied::ReadDeny;
pub use mounts::{Kind, Mount};
pub use places::Inputs;
pub use plan::Plan;
pub(crate) use proxied::BwrapProxy;

/// Names another bubblewrap program (tests point it at a missing file to see the
/// degraded case).
pub const BWRAP_ENV: &str = "DECODE_BWRAP";

/// How many directory entries one scan of the project reads at most.
pub const MAX_SCAN_ENTRIES: usize = 2_000_000;

/// What this machine can enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// bubblewrap runs, sets no-new-privileges and makes a bound file read-only
    /// (checked by running it once).
    Enforced {
        bwrap: PathBuf,
        version: String,
        /// Commands get a network namespace of their own (loopback only). When the
        /// kernel cannot make one, they share the host's network (and its abstract
        /// sockets): said in the status bar, the log and `decode doctor`.
        own_network: bool,
    },
    /// Commands run without a sandbox, for this reason (one sentence).
    Unavailable { why: String },
}

/// What this machine can enforce, probed once per process (the first call runs
/// bubblewrap once or twice, a few milliseconds). An unavailable sandbox is logged
/// once.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let s = probe();
        match &s {
            Support::Enforced {
                bwrap,
                version,
                own_network,
            } => {
                tracing::info!(bwrap = %bwrap.display(), %version, own_network, "bash commands run sandboxed");
                if !own_network {
                    tracing::warn!("bash commands share the host's network: the kernel cannot give them one of their own");
                }
            }
            Support::Unavailable { why } => {
                tracing::warn!("bash commands run WITHOUT a sandbox: {why}")
            }
        }
        s
    })
}

/// Whether sandboxed commands get a network of their own.
pub fn own_network() -> bool {
    matches!(
        support(),
        Support::Enforced {
            own_network: true,
            ..
        }
    )
}

/// One sentence for the status bar and `decode run`'s start line when commands run
/// unsandboxed, or sandboxed without a network of their own; `None` when every
/// bound is enforced.
pub fn problem() -> Option<String> {
    match support() {
        Support::Enforced {
            own_network: true, ..
        } => None,
        Support::Enforced { .. } => Some(
            "Sandbox without its own network: the kernel cannot make a network namespace, so \
             bash commands can reach the host's network services (run `decode doctor`)."
                .to_string(),
        ),
        Support::Unavailable { why } => Some(format!(
            "No sandbox: {why}; bash commands run with the gate alone (run `decode doctor`)."
        )),
    }
}

/// Which bound [`problem`] is about, if any.
pub fn gap() -> Option<decode_protocol::status::SandboxGap> {
    use decode_protocol::status::SandboxGap;
    match support() {
        Support::Enforced {
            own_network: true, ..
        } => None,
        Support::Enforced { .. } => Some(SandboxGap::Network),
        Support::Unavailable { .. } => Some(SandboxGap::Sandbox),
    }
}

fn bwrap_program() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(BWRAP_ENV) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

/// Runs bubblewrap with one read-only file and checks, from inside, that
/// no-new-privileges is set and the file cannot be written; with a network of its
/// own first, then (where the kernel refuses one) without.
fn probe() -> Support {
    let Some(bwrap) = bwrap_program() else {
        return Support::Unavailable {
            why: "bubblewrap (`bwrap`) is not installed".into(),
        };
    };
    let version = Command::new(&bwrap)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let Some(version) = version else {
        return Support::Unavailable {
            why: format!("{} does not run", bwrap.display()),
        };
    };
    let file = match tempfile::NamedTempFile::new() {
        Ok(f) => f,
        Err(e) => {
            return Support::Unavailable {
                why: format!("cannot create a temp file to test it: {e}"),
            }
        }
    };
    let f = file.path().to_string_lossy().into_owned();
    // The file's folder writable (as the temp folder is), the file read-only.
    let dir = file
        .path()
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/tmp".into());
    let run = |net: bool| {
        Command::new(&bwrap)
            .args(base_args(net))
            .args(["--bind", &dir, &dir, "--ro-bind", &f, &f, "--", "/bin/sh", "-c"])
            .arg("grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status || exit 3; (: >\"$0\") 2>/dev/null && exit 4; exit 0")
            .arg(&f)
            .stdin(Stdio::null())
            .output()
    };
    let mut out = run(true);
    let mut own_network = true;
    if out.as_ref().is_ok_and(|o| o.status.code() == Some(1))
        && run(false).is_ok_and(|o| o.status.success())
    {
        tracing::warn!(
            error = %out.as_ref().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default(),
            "bubblewrap cannot make a network namespace here"
        );
        own_network = false;
        out = run(false);
    }
    match out {
        Ok(o) if o.status.success() => Support::Enforced {
            bwrap,
            version,
            own_network,
        },
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let why = match o.status.code() {
                Some(3) => "bubblewrap runs but no-new-privileges is not set".to_string(),
                Some(4) => "bubblewrap runs but a read-only bind can be written".to_string(),
                _ => format!(
                    "bubblewrap cannot create its sandbox here ({})",
                    err.lines().next().unwrap_or("no reason given").trim()
                ),
            };
            Support::Unavailable { why }
        }
        Err(e) => Support::Unavailable {
            why: format!("{} cannot be started: {e}", bwrap.display()),
        },
    }
}

/// The options every sandbox starts with: the whole system read-only, in a user, a
/// process, an IPC and (`own_network`) a network namespace of its own (nothing
/// started inside outlives the command, nothing outside it can be reached through
/// `/proc`, no abstract socket or port of the host is reachable), with no
/// capabilities, a `/dev` of its own (no device of the host's beyond the usual
/// ones), and the kernel's own switches (`/proc/sys`) read-only.
/// Whether sandboxed commands run under the system-call filter that refuses local
/// sockets (docs/sandbox.md, "No local socket of its own"): on the architectures
/// it has a table for.
pub fn local_sockets_filtered() -> bool {
    decode_nsenter::filter::program().is_some()
}

pub(crate) fn base_args(own_network: bool) -> Vec<&'static str> {
    let mut a = vec![
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
    ];
    if own_network {
        a.push("--unshare-net");
    }
    a.extend([
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--ro-bind",
        "/proc/sys",
        "/proc/sys",
        "--ro-bind-try",
        "/proc/sysrq-trigger",
        "/proc/sysrq-trigger",
    ]);
    a
}

/// What one walk of the project found: the files and folders protected wherever
/// they stand, and those a `read` deny rule covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// `.git` folders, and bare repositories (a folder with `HEAD`, `config`,
    /// `objects` and `refs`).
    pub git_dirs: Vec<PathBuf>,
    /// `.git` files (a worktree's or a submodule's pointer to its git folder).
    pub git_files: Vec<PathBuf>,
    /// `.envrc` files and `.vscode` / `.idea` folders.
    pub others: Vec<PathBuf>,
    /// Links to folders that hold a `.git` folder (a repository elsewhere).
    pub linked_repos: Vec<PathBuf>,
    /// Files and folders a `read` deny rule covers, in the project and in the
    /// folders the rules name outside it (hidden in the sandbox).
    pub denied_reads: Vec<PathBuf>,
    /// The `read` deny rules the walk was made for (a change of rules walks again).
    pub deny_rules: Vec<String>,
    /// `read` deny rules whose folders are too big to walk (see
    /// [`denied::OUTSIDE_BUDGET`]).
    pub deny_unenforced: Vec<String>,
    /// Permission files and folders of other projects (`.decode`, `.mcp.json`,
    /// `.claude`): beneath the project root, and anywhere in the other folders
    /// walked. Read-only in the sandbox: a nested project's permissions are no less
    /// protected than the project's own.
    pub permission: Vec<PathBuf>,
    /// Folders the walk could not read (made unreadable, or another user's): what
    /// they hold is unknown, so they are read-only in the sandbox.
    pub unreadable: Vec<PathBuf>,
    /// The writable folders outside the project that were walked too (the
    /// `additionalDirectories` and the person's `sandbox.writable`).
    pub extra_roots: Vec<PathBuf>,
    /// Those of [`Scan::extra_roots`] too big to walk: read-only in the sandbox.
    pub extra_too_big: Vec<PathBuf>,
    /// Entries read.
    pub entries: usize,
    /// The walk stopped at [`MAX_SCAN_ENTRIES`].
    pub truncated: bool,
}

/// How many entries the walk of one writable folder outside the project reads at
/// most (beyond it, that folder is read-only in the sandbox).
pub const MAX_EXTRA_SCAN_ENTRIES: usize = 200_000;

/// The names of permission files and folders, protected at any depth.
const PERMISSION_NAMES: &[&str] = &[".decode", ".mcp.json", ".claude"];

/// Walks `root` (not following links, not descending into what it finds) for the
/// names the gate protects wherever they stand.
pub fn scan(root: &Path) -> Scan {
    scan_with(root, None)
}

/// [`scan`], and with `deny`, the files its rules cover: each entry of the project
/// judged by the gate, and the folders the rules name outside it walked.
pub fn scan_with(root: &Path, deny: Option<&ReadDeny>) -> Scan {
    scan_all(root, &[], deny)
}

/// [`scan_with`], and the writable folders `extra` outside the project walked for
/// the same names (each up to [`MAX_EXTRA_SCAN_ENTRIES`] entries).
pub fn scan_all(root: &Path, extra: &[PathBuf], deny: Option<&ReadDeny>) -> Scan {
    let mut out = Scan::default();
    let deny = deny.filter(|d| !d.rules.is_empty());
    if let Some(d) = deny {
        out.deny_rules = d.rules.clone();
    }
    if !walk(root, deny, MAX_SCAN_ENTRIES, false, &mut out) {
        out.truncated = true;
        tracing::warn!(root = %root.display(), "the sandbox's scan of the project stopped at {MAX_SCAN_ENTRIES} entries");
        return out;
    }
    for e in extra {
        out.extra_roots.push(e.clone());
        if e.starts_with(root) {
            continue;
        }
        let before = out.entries;
        let mut part = Scan::default();
        if walk(e, None, MAX_EXTRA_SCAN_ENTRIES, true, &mut part) {
            out.git_dirs.extend(part.git_dirs);
            out.git_files.extend(part.git_files);
            out.others.extend(part.others);
            out.linked_repos.extend(part.linked_repos);
            out.permission.extend(part.permission);
            out.unreadable.extend(part.unreadable);
        } else {
            tracing::warn!(folder = %e.display(), "too big for the sandbox to walk: read-only in it");
            out.extra_too_big.push(e.clone());
        }
        out.entries = before + part.entries;
    }
    if let Some(d) = deny {
        let found = denied::outside(d, root);
        out.denied_reads.extend(found.hidden);
        out.deny_unenforced = found.unenforced;
    }
    other_names(root, &mut out);
    for v in [
        &mut out.git_dirs,
        &mut out.git_files,
        &mut out.others,
        &mut out.linked_repos,
        &mut out.denied_reads,
        &mut out.permission,
        &mut out.unreadable,
    ] {
        v.sort();
        v.dedup();
    }
    out
}

/// Other names (hard links made before) in the project of a hidden file or of a
/// protected file (a git folder's `config` and hooks, the project's permission
/// files): the kernel bounds a name, and another name reaches the same file. So
/// each other name is hidden, or read-only, too. Looked for only when such a file
/// has other names (a second walk, statting the project's files).
fn other_names(root: &Path, out: &mut Scan) {
    use std::collections::HashSet;
    use std::os::unix::fs::MetadataExt;
    let key = |p: &Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_file() && m.nlink() > 1)
            .map(|m| (m.dev(), m.ino()))
    };
    // The files of a hidden folder count too (at most 20,000 looked at).
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs: Vec<PathBuf> = out
        .denied_reads
        .iter()
        .filter(|p| p.is_dir())
        .cloned()
        .collect();
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if files.len() >= 20_000 {
                break;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                Ok(t) if t.is_file() => files.push(e.path()),
                _ => {}
            }
        }
    }
    let hidden: HashSet<(u64, u64)> = out
        .denied_reads
        .iter()
        .chain(&files)
        .filter_map(|p| key(p))
        .collect();
    let mut guarded: Vec<PathBuf> = Vec::new();
    for g in &out.git_dirs {
        guarded.push(g.join("config"));
        if let Ok(rd) = std::fs::read_dir(g.join("hooks")) {
            guarded.extend(rd.flatten().map(|e| e.path()));
        }
    }
    if let Ok(rd) = std::fs::read_dir(root.join(".decode")) {
        guarded.extend(rd.flatten().map(|e| e.path()));
    }
    let guarded: HashSet<(u64, u64)> = guarded.iter().filter_map(|p| key(p)).collect();
    if hidden.is_empty() && guarded.is_empty() {
        return;
    }
    let mut stack = vec![root.to_path_buf()];
    let mut read = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            read += 1;
            if read > MAX_SCAN_ENTRIES {
                return;
            }
            let (Ok(ft), path) = (e.file_type(), e.path()) else {
                continue;
            };
            if ft.is_dir() && e.file_name() != ".git" && !out.denied_reads.contains(&path) {
                stack.push(path);
            } else if ft.is_file() {
                match key(&path) {
                    Some(k) if hidden.contains(&k) => out.denied_reads.push(path),
                    Some(k) if guarded.contains(&k) => out.others.push(path),
                    _ => {}
                }
            }
        }
    }
}

/// Walks `root` (not following links, not descending into what it finds) into
/// `out`; `false` when it stopped at `budget` entries. With `top_level`, permission
/// files directly in `root` count too (the project's own are the gate's).
fn walk(
    root: &Path,
    deny: Option<&ReadDeny>,
    budget: usize,
    top_level: bool,
    out: &mut Scan,
) -> bool {
    let mut stack = vec![root.to_path_buf()];
    let mut read = 0usize;
    let mut linked = std::collections::HashSet::new();
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            // Gone since its folder was read: nothing there to protect.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // Unreadable (mode 000, another user's): what it holds is unknown.
            Err(_) => {
                out.unreadable.push(dir);
                continue;
            }
        };
        // A bare repository (`git init --bare`, a mirror) has no `.git`: git
        // knows one by its `HEAD`, `objects` and `refs`.
        let mut bare = [false; 3];
        for entry in rd {
            let Ok(entry) = entry else {
                out.unreadable.push(dir.clone());
                break;
            };
            out.entries += 1;
            match entry.file_name().as_encoded_bytes() {
                b"HEAD" => bare[0] = true,
                b"objects" => bare[1] = true,
                b"refs" => bare[2] = true,
                _ => {}
            }
            read += 1;
            if read > budget {
                return false;
            }
            let Ok(ft) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
            if let Some(d) = deny {
                if denied::judge(d, &path, ft.is_dir(), &mut out.denied_reads) {
                    continue;
                }
            }
            if protected_anywhere(&name).is_some() {
                if name == ".git" {
                    if ft.is_dir() {
                        out.git_dirs.push(path);
                    } else {
                        out.git_files.push(path);
                    }
                } else if !(name == ".envrc" && ft.is_dir()) {
                    out.others.push(path);
                }
                continue;
            }
            if PERMISSION_NAMES.iter().any(|n| name == *n) && (top_level || dir != root) {
                out.permission.push(path);
                continue;
            }
            if ft.is_dir() {
                stack.push(path);
            } else if ft.is_symlink() && path.join(".git").is_dir() {
                out.linked_repos.push(path);
            } else if ft.is_symlink() && deny.is_some_and(|d| d.reaches_beneath(&path)) {
                // A link to a folder some of whose files a rule covers: its
                // files are judged by the names the rules see (once a target).
                if let Ok(real) = std::fs::canonicalize(&path) {
                    if real.is_dir() && linked.insert(real) {
                        stack.push(path);
                    }
                }
            }
        }
        if bare == [true; 3] && dir.join("config").is_file() {
            out.git_dirs.push(dir);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hard links made before Decode ran: another name of a hidden file is
    /// hidden, another name of `.git/config` is read-only; a link to a hidden
    /// file hides its target (outside attack, round 6, C3, C5 and L2).
    #[test]
    fn other_names_of_hidden_and_protected_files_are_bounded_too() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".env"), "K=1").unwrap();
        std::fs::write(root.join("plain.txt"), "x").unwrap();
        std::fs::hard_link(root.join(".env"), root.join("docs/notes.txt")).unwrap();
        std::fs::hard_link(root.join(".git/config"), root.join("cfg")).unwrap();
        // A link to a hidden file: what it leads to is hidden, never the link
        // (a mount over a link would stop every command from starting).
        std::os::unix::fs::symlink("../.env", root.join("docs/env-link")).unwrap();
        let mut input = decode_policy::PolicyInput::new(&root, root.join("home"));
        input.project_rules.deny = vec!["read(.env)".into()];
        let deny = ReadDeny {
            rules: vec!["read(.env)".into()],
            gate: std::sync::Arc::new(decode_policy::Gate::new(input).0),
            homes: Vec::new(),
        };
        let s = scan_with(&root, Some(&deny));
        assert_eq!(
            s.denied_reads,
            [root.join(".env"), root.join("docs/notes.txt")]
        );
        assert!(s.others.contains(&root.join("cfg")), "{:?}", s.others);
        assert!(!s.others.contains(&root.join("plain.txt")));
    }

    /// A folder rule over a link to a folder elsewhere hides the real folder;
    /// a rule over some files of a linked folder hides them by their real
    /// names; another name of a file in a hidden folder is hidden too (round
    /// 7, C2 and C3).
    #[test]
    fn linked_folders_and_other_names_of_files_in_hidden_folders() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let root = base.join("proj");
        let real = base.join("real");
        for dir in [
            root.join("secrets"),
            root.join("d1"),
            real.join("sdir"),
            real.join("keys"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(root.join("secrets/key.txt"), "k").unwrap();
        std::fs::hard_link(root.join("secrets/key.txt"), root.join("d1/k")).unwrap();
        std::fs::write(real.join("sdir/k"), "k").unwrap();
        std::fs::write(real.join("keys/a.key"), "k").unwrap();
        std::fs::write(real.join("keys/a.txt"), "t").unwrap();
        std::os::unix::fs::symlink(real.join("sdir"), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(real.join("keys"), root.join("keys")).unwrap();
        let rules = vec![
            "read(secrets/**)".to_string(),
            "read(linked/**)".to_string(),
            "read(keys/*.key)".to_string(),
        ];
        let mut input = decode_policy::PolicyInput::new(&root, base.join("home"));
        input.project_rules.deny = rules.clone();
        let deny = ReadDeny {
            rules,
            gate: std::sync::Arc::new(decode_policy::Gate::new(input).0),
            homes: Vec::new(),
        };
        let s = scan_with(&root, Some(&deny));
        for want in [
            root.join("secrets"),
            root.join("d1/k"),
            real.join("sdir"),
            real.join("keys/a.key"),
        ] {
            assert!(
                s.denied_reads.contains(&want),
                "{want:?} in {:?}",
                s.denied_reads
            );
        }
        assert!(!s.denied_reads.contains(&real.join("keys/a.txt")));
    }

    #[test]
    fn a_scan_finds_protected_names_at_any_depth_without_entering_them() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for p in [
            "a/b/.git/hooks",
            "a/b/.git/modules/x/.git",
            "c/.vscode",
            "c/.idea",
            "e/.envrc",
        ] {
            std::fs::create_dir_all(root.join(p)).unwrap();
        }
        std::fs::write(root.join(".envrc"), "x").unwrap();
        std::fs::write(root.join("w.git"), "x").unwrap();
        // A git worktree's `.git` file is not a folder of hooks.
        std::fs::write(root.join("c/.git"), "gitdir: /elsewhere").unwrap();
        let s = scan(root);
        assert_eq!(s.git_dirs, [root.join("a/b/.git")]);
        assert_eq!(
            s.others,
            [
                root.join(".envrc"),
                root.join("c/.idea"),
                root.join("c/.vscode")
            ]
        );
        assert!(!s.truncated);
    }
}
