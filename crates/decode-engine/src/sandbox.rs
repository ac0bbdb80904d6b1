//! The kernel behind the gate: every `bash` command runs in a bubblewrap sandbox
//! unless the person approved that very call (docs/sandbox.md).
//!
//! What the sandbox enforces does not depend on reading the command:
//! - no new privileges (`PR_SET_NO_NEW_PRIVS`, and no capabilities): `sudo`, `su`,
//!   `pkexec` and set-uid programs cannot raise privileges;
//! - the gate's never-automatic files and folders that exist when the command starts
//!   are read-only bind mounts: the project's `.decode/` and `.claude/agents`, the
//!   `hooks` and `config` of every `.git` folder in the project, `.envrc`, `.vscode/`,
//!   `.idea/`, the shell start-up files, `~/.ssh` and Decode's own folders;
//! - the folders above them are pinned (bound onto themselves), so a protected file
//!   cannot be swapped out by renaming a folder it sits in.
//!
//! Everything else is the person's system as it is: the whole file system writable
//! where it was, the network, the process group (a timeout still kills everything the
//! command started), `/proc`. Where bubblewrap cannot run (not installed, user
//! namespaces off), [`support`] says why once and commands run without it.
//!
//! Landlock is not used: it can only grant access to whole trees, so it cannot make
//! one file read-only inside a writable project (see docs/sandbox.md).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use decode_policy::{protected_anywhere, Gate, ProtectedKind};

mod servers;

use crate::running_commands as running;
pub use crate::running_commands::{made_by_a_running_command, Running};

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
    Enforced { bwrap: PathBuf, version: String },
    /// Commands run without a sandbox, for this reason (one sentence).
    Unavailable { why: String },
}

/// What this machine can enforce, probed once per process (the first call runs
/// bubblewrap once, a few milliseconds). An unavailable sandbox is logged once.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let s = probe();
        match &s {
            Support::Enforced { bwrap, version } => {
                tracing::info!(bwrap = %bwrap.display(), %version, "bash commands run sandboxed")
            }
            Support::Unavailable { why } => {
                tracing::warn!("bash commands run WITHOUT a sandbox: {why}")
            }
        }
        s
    })
}

/// One sentence for the status bar and `decode run`'s start line when commands run
/// unsandboxed; `None` when the sandbox is enforced.
pub fn problem() -> Option<String> {
    match support() {
        Support::Enforced { .. } => None,
        Support::Unavailable { why } => Some(format!(
            "No sandbox: {why}; bash commands run with the gate alone (run `decode doctor`)."
        )),
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

/// Runs bubblewrap once with one read-only file and checks, from inside, that
/// no-new-privileges is set and the file cannot be written.
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
    let out = Command::new(&bwrap)
        .args(base_args())
        .args(["--ro-bind", &f, &f, "--", "/bin/sh", "-c"])
        .arg("grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status || exit 3; (: >\"$0\") 2>/dev/null && exit 4; exit 0")
        .arg(&f)
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => Support::Enforced { bwrap, version },
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

/// The options every sandbox starts with: the whole system as it is, in a user and
/// a process namespace of its own (nothing started inside outlives the command, and
/// nothing outside it can be reached through `/proc`), with no capabilities, and
/// with the kernel's own switches (`/proc/sys`, `/sys`) read-only.
fn base_args() -> Vec<&'static str> {
    vec![
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--cap-drop",
        "ALL",
        "--dev-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--ro-bind",
        "/proc/sys",
        "/proc/sys",
        "--ro-bind-try",
        "/proc/sysrq-trigger",
        "/proc/sysrq-trigger",
        "--ro-bind",
        "/sys",
        "/sys",
    ]
}

/// What one walk of the project found: the files and folders protected wherever
/// they stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// `.git` folders.
    pub git_dirs: Vec<PathBuf>,
    /// `.git` files (a worktree's or a submodule's pointer to its git folder).
    pub git_files: Vec<PathBuf>,
    /// `.envrc` files and `.vscode` / `.idea` folders.
    pub others: Vec<PathBuf>,
    /// Links to folders that hold a `.git` folder (a repository elsewhere).
    pub linked_repos: Vec<PathBuf>,
    /// Entries read.
    pub entries: usize,
    /// The walk stopped at [`MAX_SCAN_ENTRIES`].
    pub truncated: bool,
}

/// Walks `root` (not following links, not descending into what it finds) for the
/// names the gate protects wherever they stand.
pub fn scan(root: &Path) -> Scan {
    let mut out = Scan::default();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            out.entries += 1;
            if out.entries > MAX_SCAN_ENTRIES {
                out.truncated = true;
                tracing::warn!(root = %root.display(), "the sandbox's scan of the project stopped at {MAX_SCAN_ENTRIES} entries");
                return out;
            }
            let Ok(ft) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
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
            if ft.is_dir() {
                stack.push(path);
            } else if ft.is_symlink() && path.join(".git").is_dir() {
                out.linked_repos.push(path);
            }
        }
    }
    out.git_dirs.sort();
    out.git_files.sort();
    out.others.sort();
    out.linked_repos.sort();
    out
}

/// How one sandbox is set up: which paths are bound read-only and which folders are
/// pinned, parents before children.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Path → read-only (`true`) or pinned (`false`).
    binds: BTreeMap<PathBuf, bool>,
    /// Protected paths that do not exist when the command starts: what the command
    /// creates there is taken away when it ends ([`Plan::undo`]).
    absent: Vec<PathBuf>,
    /// Protected paths that are symbolic links, with their targets: a link the
    /// command replaces is put back.
    links: Vec<(PathBuf, PathBuf)>,
    /// Git folders already planned.
    git_seen: Vec<PathBuf>,
    /// The project (as resolved).
    root: PathBuf,
}

impl Plan {
    /// The protected paths of `gate` and `scan` that exist now.
    pub fn new(gate: &Gate, scan: &Scan) -> Plan {
        let mut plan = Plan::default();
        let mut git_dirs: Vec<PathBuf> = scan.git_dirs.clone();
        for p in gate.protected_paths() {
            let name = p.path.file_name().unwrap_or_default();
            if name == ".git" || p.kind == ProtectedKind::GitInternals {
                // A git folder: what git runs code from, not its objects and refs.
                git_dirs.push(p.path);
            } else if p.dir && p.kind == ProtectedKind::AppDirs {
                // Decode's own folders: made now if missing (they are Decode's),
                // so nothing can be created in them either.
                if !p.path.exists() {
                    if let Err(e) = std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(&p.path)
                    {
                        tracing::debug!(path = %p.path.display(), error = %e, "cannot create Decode's folder");
                    }
                }
                plan.read_only(&p.path);
            } else if name == ".claude" {
                // Claude Code's own folder: only its agents are protected, and
                // the folder cannot be renamed.
                plan.pin(&p.path);
                // Missing: the whole folder is what a command must not make.
                plan.read_only(&p.path.join("agents"));
                if std::fs::symlink_metadata(&p.path).is_err() {
                    plan.watch_absent(&p.path);
                }
            } else if on_the_way(&p) && name != ".decode" {
                // A folder or link on the way to a protected path (a link's target
                // folder, a link in a chain, a folder a `..` leaves): it must not be
                // swapped, but what else it holds is ordinary work. What it leads
                // to is an entry of its own.
                plan.watch_links_along(&p.path, true);
                plan.pin_folders_of_target(&p.path);
                plan.pin(&p.path);
            } else {
                plan.read_only(&p.path);
            }
        }
        if let Some(g) = gate.git_dir() {
            git_dirs.push(g.to_path_buf());
        }
        for l in &scan.linked_repos {
            // A link in the project to a repository elsewhere: the link stays, and
            // that repository's git folder is protected like the project's own.
            plan.watch_links_along(l, true);
            git_dirs.push(l.join(".git"));
        }
        for f in &scan.git_files {
            // The pointer itself is protected, and the git folder it names.
            plan.read_only(f);
            if let Some(g) = read_git_pointer(f, "gitdir:") {
                git_dirs.push(g);
            }
        }
        for g in git_dirs {
            plan.git_dir(&g, 0);
        }
        for p in &scan.others {
            plan.read_only(p);
        }
        // What a command must not create at the project root.
        let root = gate.project_root();
        for name in [".envrc", ".vscode", ".idea"] {
            plan.read_only(&root.join(name));
        }
        plan.pin(root);
        plan.root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        plan.start_where_running_commands_started();
        plan
    }

    /// Another sandboxed command running now started before this one: what it
    /// created or replaced is not this command's starting point. Its missing paths
    /// are missing here too, and its links point where they did when it started (so
    /// this command's end never puts back what the other one planted). Paths in
    /// another project that are not in this one are that command's alone.
    fn start_where_running_commands_started(&mut self) {
        for other in running::live() {
            let root = &self.root;
            let shared = |p: &Path| {
                other.root == *root || p.starts_with(root) || !p.starts_with(&other.root)
            };
            for a in other.absent.iter().filter(|a| shared(a)) {
                if !self.absent.contains(a) {
                    self.absent.push(a.clone());
                }
            }
            for (at, target) in other.links.iter().filter(|(l, _)| shared(l)) {
                match self.links.iter_mut().find(|(l, _)| l == at) {
                    Some(mine) => mine.1 = target.clone(),
                    None => self.links.push((at.clone(), target.clone())),
                }
            }
        }
        let absent = &self.absent;
        self.links
            .retain(|(l, _)| !absent.iter().any(|a| l.starts_with(a)));
    }

    /// Leaves this command's record for other sandboxed commands and for Decode's
    /// readers of permission files, held until the returned value is dropped
    /// (after [`Plan::undo`]).
    pub fn register(&self) -> Option<Running> {
        running::register(&running::Watched {
            root: self.root.clone(),
            absent: self.absent.clone(),
            links: self.links.clone(),
        })
    }

    /// Takes away what the command created at a protected path that did not exist
    /// when it started, and puts back a protected link it replaced. What is taken
    /// away is moved to `quarantine` (Decode's data folder), or removed when it
    /// cannot be moved. Every step goes through the path's folder opened without
    /// following a link (that folder as resolved when the command started): a folder
    /// the command swapped for a link is never followed, and is said instead. Returns
    /// one line per path, for the tool result.
    pub fn undo(&self, quarantine: &Path) -> Vec<String> {
        running::take_back(&self.absent, &self.links, quarantine)
    }

    /// What git runs code from in a git folder: `hooks`, `config`, `config.worktree`
    /// and the pointers that send git elsewhere (`commondir`, a worktree's `gitdir`);
    /// the same for its worktrees (`worktrees/*`) and its submodules' repositories
    /// (`modules/**`), and the common folder a `commondir` names.
    fn git_dir(&mut self, g: &Path, depth: usize) {
        let Ok(real) = std::fs::canonicalize(g) else {
            return;
        };
        if !real.is_dir() || depth > 8 || self.git_seen.contains(&real) {
            return;
        }
        self.git_seen.push(real.clone());
        let g = real.as_path();
        self.pin(g);
        for name in ["hooks", "config", "config.worktree", "commondir", "gitdir"] {
            self.read_only(&g.join(name));
        }
        if let Some(common) = read_git_pointer(&g.join("commondir"), "") {
            self.git_dir(&common, depth + 1);
        }
        if let Ok(rd) = std::fs::read_dir(g.join("worktrees")) {
            for e in rd.flatten().take(1_000) {
                let w = e.path();
                for name in ["config.worktree", "commondir", "gitdir"] {
                    self.read_only(&w.join(name));
                }
            }
        }
        let mut stack = vec![g.join("modules")];
        let mut seen = 0usize;
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                seen += 1;
                if seen > 10_000 {
                    return;
                }
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let p = e.path();
                if p.join("HEAD").is_file() {
                    self.pin(&p);
                    for name in ["hooks", "config", "config.worktree", "commondir"] {
                        self.read_only(&p.join(name));
                    }
                }
                if e.file_name() != "objects" && e.file_name() != "refs" {
                    stack.push(p);
                }
            }
        }
    }

    /// Binds `p` read-only where it lands, every link on the way followed, and pins
    /// the folders above it. Every link met on the way (`p` itself, a folder of it,
    /// a link a link points to) is watched: one the command replaces is put back. A
    /// path that does not land anywhere yet (missing, or a dangling link) has its
    /// first missing component watched: what the command creates there is taken
    /// away, wherever the links lead.
    fn read_only(&mut self, p: &Path) {
        let chain = decode_policy::paths::resolve_chain(p);
        for l in &chain.links {
            self.watch_link(l);
            self.pin_folders_of_target(l);
        }
        if let Some(missing) = &chain.first_missing {
            // The folders it would be made in cannot be swapped for links.
            self.pin_parents(missing);
            self.watch_absent(missing);
            return;
        }
        // A link loop lands nowhere: nothing can be written through it, and a bind
        // onto it would stop the sandbox from starting.
        let Ok(real) = std::fs::canonicalize(&chain.resolved) else {
            return;
        };
        self.pin_parents(&real);
        self.binds.insert(real, true);
    }

    /// Pins every real folder a link's target passes through as written, those
    /// before a `..` included (`a/../dots/x`: swapping `a` for a link would change
    /// where `..` leads).
    fn pin_folders_of_target(&mut self, link: &Path) {
        let (Some(parent), Ok(target)) = (link.parent(), std::fs::read_link(link)) else {
            return;
        };
        let mut cur = if target.is_absolute() {
            PathBuf::from("/")
        } else {
            parent.to_path_buf()
        };
        for c in target.components() {
            match c {
                std::path::Component::Normal(name) => {
                    cur.push(name);
                    match std::fs::symlink_metadata(&cur) {
                        Ok(m) if m.is_dir() => self.pin(&cur),
                        // A link is a link of the chain (watched itself), or
                        // something missing or a file: nothing further to pin.
                        _ => return,
                    }
                }
                std::path::Component::ParentDir => {
                    cur.pop();
                }
                _ => {}
            }
        }
    }

    /// Watches the link at `at` (its folder resolved): put back if replaced.
    fn watch_link(&mut self, at: &Path) {
        let (Some(parent), Some(name), Ok(target)) =
            (at.parent(), at.file_name(), std::fs::read_link(at))
        else {
            return;
        };
        if let Ok(real_parent) = std::fs::canonicalize(parent) {
            let at = real_parent.join(name);
            if !self.links.iter().any(|(l, _)| *l == at) {
                self.links.push((at, target));
            }
        }
    }

    /// Watches `p`, which does not exist, if its folder does: recorded as that
    /// folder resolved now, and checked at the end through the folder opened without
    /// following a link (see [`Plan::undo`]).
    fn watch_absent(&mut self, p: &Path) {
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return;
        };
        let Ok(real_parent) = std::fs::canonicalize(parent) else {
            return;
        };
        if !real_parent.is_dir() {
            return;
        }
        let at = real_parent.join(name);
        if !self.absent.contains(&at) {
            self.absent.push(at);
        }
    }

    /// Watches every link along `p` (with `itself`, `p` too): `/a/b` a link, and
    /// `/a/b/c/d` is protected, means `/a/b` must still be that link afterwards.
    fn watch_links_along(&mut self, p: &Path, itself: bool) {
        let mut cur = if itself { Some(p) } else { p.parent() };
        while let Some(a) = cur {
            if a.parent().is_none() {
                break;
            }
            if std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink()) {
                self.watch_link(a);
            }
            cur = a.parent();
        }
    }

    /// Pins `p` (resolved) and its folders, so none of them can be renamed.
    fn pin(&mut self, p: &Path) {
        let Ok(real) = std::fs::canonicalize(p) else {
            return;
        };
        if !real.is_dir() {
            return;
        }
        self.pin_parents(&real);
        self.binds.entry(real).or_insert(false);
    }

    /// Pins every folder above `p` that could be renamed: one whose own folder is
    /// writable (or owned) by this user.
    fn pin_parents(&mut self, p: &Path) {
        let mut cur = p.parent();
        while let Some(dir) = cur {
            let Some(parent) = dir.parent() else {
                break;
            };
            if self.binds.contains_key(dir) {
                break;
            }
            if renamable_in(parent) {
                self.binds.insert(dir.to_path_buf(), false);
            }
            cur = Some(parent);
        }
    }

    /// The read-only paths, in mount order.
    pub fn read_only_paths(&self) -> Vec<&Path> {
        self.ordered()
            .into_iter()
            .filter(|(_, ro)| *ro)
            .map(|(p, _)| p)
            .collect()
    }

    /// The pinned folders, in mount order.
    pub fn pinned_paths(&self) -> Vec<&Path> {
        self.ordered()
            .into_iter()
            .filter(|(_, ro)| !*ro)
            .map(|(p, _)| p)
            .collect()
    }

    /// Parents before children; nothing beneath a read-only folder (it is read-only
    /// already).
    fn ordered(&self) -> Vec<(&Path, bool)> {
        let mut v: Vec<(&Path, bool)> = self
            .binds
            .iter()
            .map(|(p, ro)| (p.as_path(), *ro))
            .filter(|(p, _)| {
                !self
                    .binds
                    .iter()
                    .any(|(q, ro)| *ro && q.as_path() != *p && p.starts_with(q))
            })
            .collect();
        v.sort_by_key(|(p, _)| (p.components().count(), p.to_path_buf()));
        v
    }

    /// The bubblewrap arguments before `--`, for a command starting in `cwd`.
    pub fn args(&self, cwd: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = base_args().into_iter().map(OsString::from).collect();
        for k in servers::SERVER_ENV {
            a.push("--unsetenv".into());
            a.push(k.into());
        }
        for (p, ro) in self.ordered() {
            a.push(if ro { "--ro-bind-try" } else { "--bind-try" }.into());
            a.push(p.as_os_str().to_owned());
            a.push(p.as_os_str().to_owned());
        }
        // Servers of the person's that run what they are sent, outside, are out of
        // reach: an empty folder over their sockets' folder, the null device over a
        // lone socket (a connection is refused). Last: a pinned folder above would
        // cover them.
        let (dirs, sockets) = servers::command_servers();
        for d in dirs {
            a.push("--tmpfs".into());
            a.push(d.into_os_string());
        }
        for s in sockets {
            a.push("--ro-bind".into());
            a.push("/dev/null".into());
            a.push(s.into_os_string());
        }
        a.push("--chdir".into());
        a.push(cwd.as_os_str().to_owned());
        a
    }
}

/// Whether a protected path of the gate is only on the way to one: a folder of
/// permission files other than `.decode` itself, or a file entry that is (or leads
/// to) a folder — a folder a `..` leaves, a link in a chain to a folder.
fn on_the_way(p: &decode_policy::ProtectedPath) -> bool {
    p.kind == ProtectedKind::PermissionFolder
        || (!p.dir && std::fs::metadata(&p.path).is_ok_and(|m| m.is_dir()))
}

/// The folder a git pointer file names: `gitdir: PATH` in a `.git` file (`prefix`
/// `"gitdir:"`), or a bare path in `commondir` (`prefix` `""`); relative to the
/// file's folder. At most 4 KiB is read, and only from a regular file.
fn read_git_pointer(file: &Path, prefix: &str) -> Option<PathBuf> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let line = text.lines().next()?.trim();
    let path = line.strip_prefix(prefix)?.trim();
    if path.is_empty() {
        return None;
    }
    Some(file.parent()?.join(path))
}

/// Whether an entry of `dir` can be renamed by this user.
fn renamable_in(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok() {
        return true;
    }
    std::fs::metadata(dir).is_ok_and(|m| m.uid() == nix::unistd::geteuid().as_raw())
}

/// The protected path a "Read-only file system" error in a command's output
/// names, if any (the first): the tool result then says how to allow the write.
pub fn refused_protected_write(output: &str, plan: &Plan) -> Option<PathBuf> {
    let ro = plan.read_only_paths();
    for line in output
        .lines()
        .filter(|l| l.contains("Read-only file system"))
    {
        let tokens = line
            .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ':' | '‘' | '’'))
            .filter(|t| !t.is_empty());
        for t in tokens {
            let t = Path::new(t.strip_prefix("./").unwrap_or(t));
            for p in &ro {
                if t.is_absolute() {
                    if t.starts_with(p) {
                        return Some(p.to_path_buf());
                    }
                    continue;
                }
                // `.git/config`, or `.decode/settings.json` beneath a read-only
                // `.decode`: a leading part of the name ends the protected path.
                let mut prefix = PathBuf::new();
                for c in t.components() {
                    prefix.push(c);
                    if p.ends_with(&prefix) && prefix.components().count() >= 1 {
                        let first = prefix
                            .components()
                            .next()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned());
                        if first
                            .is_some_and(|f| f.starts_with('.') || prefix.components().count() > 1)
                        {
                            return Some(p.to_path_buf());
                        }
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(binds: &[(&str, bool)]) -> Plan {
        Plan {
            binds: binds
                .iter()
                .map(|(p, ro)| (PathBuf::from(p), *ro))
                .collect(),
            ..Plan::default()
        }
    }

    #[test]
    fn parents_are_mounted_before_children_and_nothing_beneath_a_read_only_folder() {
        let plan = plan_of(&[
            ("/w/p/.decode", true),
            ("/w/p/.decode/agents", false),
            ("/w/p", false),
            ("/w/p/a/b/.git/hooks", true),
            ("/w/p/a/b/.git", false),
            ("/w/p/a", false),
            ("/w/p/a/b", false),
        ]);
        let args: Vec<String> = plan
            .args(Path::new("/w/p"))
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let base = base_args().len();
        let binds: Vec<&str> = args
            .windows(2)
            .filter(|w| w[0].ends_with("-try") && !w[1].starts_with("/proc/sys"))
            .map(|w| w[1].as_str())
            .collect();
        assert_eq!(
            binds,
            [
                "/w/p",
                "/w/p/.decode",
                "/w/p/a",
                "/w/p/a/b",
                "/w/p/a/b/.git",
                "/w/p/a/b/.git/hooks"
            ]
        );
        for flag in ["--die-with-parent", "--unshare-user", "--unshare-pid"] {
            assert!(args[..base].iter().any(|a| a == flag), "{flag}");
        }
        assert_eq!(&args[args.len() - 2..], ["--chdir", "/w/p"]);
        assert_eq!(plan.read_only_paths().len(), 2);
    }

    #[test]
    fn a_refused_write_names_the_protected_path() {
        let plan = plan_of(&[
            ("/w/p/.decode", true),
            ("/w/p/.git/config", true),
            ("/home/u/.bashrc", true),
        ]);
        let hit = |out: &str| refused_protected_write(out, &plan);
        assert_eq!(
            hit("bash: line 1: .decode/settings.json: Read-only file system"),
            Some(PathBuf::from("/w/p/.decode"))
        );
        assert_eq!(
            hit("error: could not lock config file .git/config: Read-only file system"),
            Some(PathBuf::from("/w/p/.git/config"))
        );
        assert_eq!(
            hit("OSError: [Errno 30] Read-only file system: '/home/u/.bashrc'"),
            Some(PathBuf::from("/home/u/.bashrc"))
        );
        assert_eq!(hit("cp: cannot create 'x/y': Read-only file system"), None);
        assert_eq!(hit("no such file: .decode/settings.json"), None);
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
