//! One command's sandbox (docs/sandbox.md): the mount table — writable places, what
//! is read-only, hidden, and the host services covered — and what is checked when it
//! ends (protected paths that did not exist, protected links).

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use decode_policy::{Gate, ProtectedKind};

use super::mounts::{Kind, Mount, Mounts};
use super::places::{self, Inputs};
use super::Scan;
use crate::running_commands as running;
use crate::running_commands::Running;

/// How one sandbox is set up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// What each path is inside the sandbox.
    mounts: Mounts,
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
    /// The network is the sandbox's own (loopback only).
    own_network: bool,
    /// What a hidden folder and a hidden file show instead.
    empty: (PathBuf, PathBuf),
    /// `core.hooksPath` of the person's global git config (each home's).
    global_hooks: Vec<PathBuf>,
    /// The projects the person trusts (resolved).
    trusted: Vec<PathBuf>,
}

impl Plan {
    /// The sandbox of a command in `gate`'s project: the protected paths of `gate`
    /// and `scan` that exist now, the places of `inputs`, and the host's services.
    pub fn new(gate: &Gate, scan: &Scan, inputs: &Inputs) -> Plan {
        let mut plan = Plan {
            own_network: inputs.own_network,
            empty: places::empty_placeholders(inputs),
            global_hooks: inputs
                .homes
                .iter()
                .flat_map(|h| [h.join(".gitconfig"), h.join(".config/git/config")])
                .filter_map(|c| hooks_path(&c))
                .collect(),
            trusted: inputs.trusted.clone(),
            ..Plan::default()
        };
        places::writable(inputs, &mut plan.mounts);
        plan.project_git_writable(gate);
        // What the person's global git config includes (the config itself is in the
        // read-only home; what it includes may lie in a writable place).
        for h in &inputs.homes {
            for c in [h.join(".gitconfig"), h.join(".config/git/config")] {
                for inc in config_includes(&c) {
                    plan.read_only(&inc);
                }
            }
        }
        places::hidden(inputs, &mut plan.mounts);
        for p in &scan.denied_reads {
            let dir = std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
            plan.mounts.hide(p, dir, "a `read` deny rule covers it");
        }
        plan.protect(gate, scan);
        places::services(inputs, &mut plan.mounts);
        plan
    }

    /// The project's own git folder is written by ordinary work (`git add`,
    /// `commit`, `stash`, `fetch`) even where it lies outside the project: the
    /// repository the project is a subfolder of, the main repository of a
    /// worktree (its common folder). What git runs code from stays protected.
    fn project_git_writable(&mut self, gate: &Gate) {
        let Some(g) = gate.git_dir().and_then(|g| std::fs::canonicalize(g).ok()) else {
            return;
        };
        if !g.is_dir() {
            return;
        }
        if let Some(common) = read_git_pointer(&g.join("commondir"), "")
            .and_then(|c| std::fs::canonicalize(c).ok())
            .filter(|c| c.is_dir())
        {
            self.mounts
                .add(&common, Kind::Writable, "the project's git folder");
        }
        self.mounts
            .add(&g, Kind::Writable, "the project's git folder");
    }

    /// The protected paths: read-only where they exist, watched where they do not,
    /// their folders pinned.
    fn protect(&mut self, gate: &Gate, scan: &Scan) {
        let mut git_dirs: Vec<PathBuf> = scan.git_dirs.clone();
        for p in gate.protected_paths() {
            let name = p.path.file_name().unwrap_or_default();
            if name == ".git" || p.kind == ProtectedKind::GitInternals {
                // A git folder: what git runs code from, not its objects and refs.
                git_dirs.push(p.path);
            } else if p.dir && p.kind == ProtectedKind::AppDirs {
                // Decode's own folders: made now if missing (they are Decode's),
                // and hidden (see `places::hidden`).
                if !p.path.exists() {
                    if let Err(e) = std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(&p.path)
                    {
                        tracing::debug!(path = %p.path.display(), error = %e, "cannot create Decode's folder");
                    }
                }
                if let Ok(real) = std::fs::canonicalize(&p.path) {
                    self.mounts
                        .hide(&real, true, "Decode's own settings and data");
                }
            } else if name == ".claude" {
                // Claude Code's own folder: only its agents are protected, and
                // the folder cannot be renamed.
                self.pin(&p.path);
                // Missing: the whole folder is what a command must not make.
                self.read_only(&p.path.join("agents"));
                if std::fs::symlink_metadata(&p.path).is_err() {
                    self.watch_absent(&p.path);
                }
            } else if on_the_way(&p) && name != ".decode" {
                // A folder or link on the way to a protected path (a link's target
                // folder, a link in a chain, a folder a `..` leaves): it must not be
                // swapped, but what else it holds is ordinary work. What it leads
                // to is an entry of its own.
                self.watch_links_along(&p.path, true);
                self.pin_folders_of_target(&p.path);
                self.pin(&p.path);
            } else {
                self.read_only(&p.path);
            }
        }
        if let Some(g) = gate.git_dir() {
            git_dirs.push(g.to_path_buf());
        }
        // The repositories the project lies in: git runs their hooks and
        // obeys their config in the project too, wherever they are (one in
        // the temp folder is in a writable place).
        let root = gate.project_root();
        for up in root.ancestors().skip(1).take(64) {
            let dot = up.join(".git");
            if std::fs::symlink_metadata(&dot).is_ok_and(|m| m.is_dir()) {
                git_dirs.push(dot);
            }
        }
        for l in &scan.linked_repos {
            // A link in the project to a repository elsewhere: the link stays, and
            // that repository's git folder is protected like the project's own.
            self.watch_links_along(l, true);
            git_dirs.push(l.join(".git"));
        }
        for f in &scan.git_files {
            // The pointer itself is protected, and the git folder it names.
            self.read_only(f);
            if let Some(g) = read_git_pointer(f, "gitdir:") {
                git_dirs.push(g);
            }
        }
        for g in git_dirs {
            self.git_dir(&g, 0);
        }
        for p in &scan.others {
            self.read_only(p);
        }
        for p in &scan.permission {
            // A nested or other project's permission files and agents.
            self.read_only(p);
        }
        for d in &scan.unreadable {
            self.read_only_as(
                d,
                "read-only: Decode could not read this folder, so it cannot know what it holds",
            );
        }
        for d in &scan.extra_too_big {
            self.read_only_as(
                d,
                "read-only: too big for Decode to find every git folder and permission file in it",
            );
        }
        // What a command must not create at the project root.
        let root = gate.project_root();
        for name in [".envrc", ".vscode", ".idea"] {
            self.read_only(&root.join(name));
        }
        self.pin(root);
        self.root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        self.other_projects(&scan.permission);
        // The home folder's config files, where a command could write them.
        for p in gate.protected_home_config() {
            if self.writable_at(&p.path) {
                self.read_only(&p.path);
            }
        }
        self.start_where_running_commands_started();
    }

    /// The permission files of the other projects the person trusts that lie in a
    /// writable place: read-only where they exist, taken away when a command
    /// creates them (a trusted project obeys its own `.decode/settings.json`).
    fn other_projects(&mut self, found: &[PathBuf]) {
        let trusted = self.trusted.clone();
        for t in &trusted {
            if *t == self.root || !self.writable_at(t) {
                continue;
            }
            for rel in [
                ".decode",
                ".mcp.json",
                ".claude/agents",
                ".claude/settings.json",
                ".claude/settings.local.json",
            ] {
                let p = t.join(rel);
                if !found.contains(&p) {
                    self.read_only(&p);
                }
            }
        }
    }

    /// Whether a command could write at `p` as the table stands.
    fn writable_at(&self, p: &Path) -> bool {
        self.mounts.at(p).is_some_and(|m| m.kind.writable())
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

    /// Opens, before the command starts, the folders of the paths checked when it
    /// ends: the clean-up then works on those very folders, whatever the command
    /// does to their names or their permissions.
    pub fn hold(&self) -> running::Held {
        running::Held::open(&self.absent, &self.links)
    }

    /// Takes away what the command created at a protected path that did not exist
    /// when it started, and puts back a protected link it replaced. What is taken
    /// away is moved to `quarantine` (Decode's data folder), or removed when it
    /// cannot be moved. Every step goes through the folder `held` opened before the
    /// command started (else the path's folder opened without following a link): a
    /// folder the command renamed, swapped for a link, or made read-only is no
    /// obstacle. Returns one line per path, for the tool result.
    pub fn undo(&self, quarantine: &Path, held: &running::Held) -> Vec<String> {
        running::take_back_held(&self.absent, &self.links, quarantine, Some(held))
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
        // Where its hooks run: the work tree(s) a `core.hooksPath` is relative to.
        let mut worktrees: Vec<PathBuf> = Vec::new();
        if g.file_name().is_some_and(|n| n == ".git") {
            worktrees.extend(g.parent().map(Path::to_path_buf));
        }
        if let Some(dot_git) = read_git_pointer(&real.join("gitdir"), "") {
            worktrees.extend(dot_git.parent().map(Path::to_path_buf));
        }
        let g = real.as_path();
        self.pin(g);
        for name in ["hooks", "config", "config.worktree", "commondir", "gitdir"] {
            self.read_only(&g.join(name));
        }
        // What its config includes is its config too.
        for config in ["config", "config.worktree"] {
            for inc in config_includes(&g.join(config)) {
                self.read_only(&inc);
            }
        }
        // A `core.hooksPath` (a repository's own, or the person's global one) is
        // the hooks folder git runs: protected like `hooks` (husky's `.husky/_`).
        let mut hooks: Vec<PathBuf> = hooks_path(&g.join("config")).into_iter().collect();
        hooks.extend(self.global_hooks.iter().cloned());
        for h in hooks {
            if h.is_absolute() {
                self.read_only(&h);
            } else {
                for w in &worktrees {
                    self.read_only(&decode_policy::paths::lexical(w, &h));
                }
            }
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
        self.read_only_as(p, "protected: Decode never changes it on its own");
    }

    /// [`Plan::read_only`], saying `why`.
    fn read_only_as(&mut self, p: &Path, why: &str) {
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
        self.mounts.add(&real, Kind::Protected, why);
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
    /// folder resolved now, and checked at the end through the folder opened
    /// before the command started (see [`Plan::undo`]).
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
        self.mounts
            .add(&real, Kind::Pin, "on the way to a protected path");
    }

    /// Pins every folder above `p` that could be renamed: one whose own folder is
    /// writable (or owned) by this user. (A pin where nothing is writable is left
    /// out of the sandbox: read-only already.)
    fn pin_parents(&mut self, p: &Path) {
        let mut cur = p.parent();
        while let Some(dir) = cur {
            let Some(parent) = dir.parent() else {
                break;
            };
            if self.mounts.kind_of(dir).is_some() {
                break;
            }
            if renamable_in(parent) {
                self.mounts
                    .add(dir, Kind::Pin, "on the way to a protected path");
            }
            cur = Some(parent);
        }
    }

    /// The mounts as made, parents first.
    pub fn mounts(&self) -> Vec<&Mount> {
        self.mounts.ordered()
    }

    /// Where `path` stands in this sandbox (the nearest mount at or above it;
    /// `None`: read-only, like the whole system).
    pub fn at(&self, path: &Path) -> Option<&Mount> {
        self.mounts.at(path)
    }

    /// The read-only protected paths, in mount order.
    pub fn read_only_paths(&self) -> Vec<&Path> {
        self.of_kind(Kind::Protected)
    }

    /// The pinned folders, in mount order.
    pub fn pinned_paths(&self) -> Vec<&Path> {
        self.of_kind(Kind::Pin)
    }

    /// The mounted paths of one kind, in mount order.
    pub fn of_kind(&self, kind: Kind) -> Vec<&Path> {
        self.mounts
            .ordered()
            .into_iter()
            .filter(|m| m.kind == kind)
            .map(|m| m.path.as_path())
            .collect()
    }

    /// Whether commands get a network of their own (loopback only).
    pub fn own_network(&self) -> bool {
        self.own_network
    }

    /// The protected paths that did not exist when the command started.
    pub fn watched_absent(&self) -> &[PathBuf] {
        &self.absent
    }

    /// The bubblewrap options that build this sandbox (what a kept sandbox is
    /// compared by: no working folder).
    pub(crate) fn zygote_args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = super::base_args(self.own_network)
            .into_iter()
            .map(OsString::from)
            .collect();
        a.extend(self.mounts.args(&self.empty.0, &self.empty.1));
        a
    }

    /// The bubblewrap arguments before `--`, for a command starting in `cwd`.
    /// bubblewrap building this sandbox for one program (a command, a hook, an MCP
    /// server) started in `cwd`: none of Decode's descriptors pass in, and the
    /// system-call filter goes in as its fd 3 (no local sockets, docs/sandbox.md).
    /// The caller appends `--` and the program.
    pub(crate) fn bwrap(&self, bwrap: &Path, cwd: &Path) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(bwrap);
        decode_nsenter::close_inherited_on_exec(c.as_std_mut());
        let filtered = decode_nsenter::pass_socket_filter_as_3(c.as_std_mut());
        c.args(self.args(cwd));
        if filtered {
            c.args(["--seccomp", "3"]);
        }
        c
    }

    pub fn args(&self, cwd: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = super::base_args(self.own_network)
            .into_iter()
            .map(OsString::from)
            .collect();
        a.extend(self.mounts.args(&self.empty.0, &self.empty.1));
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
pub(crate) fn read_git_pointer(file: &Path, prefix: &str) -> Option<PathBuf> {
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

/// The values of `key` in the sections named `section` (`includeIf "…"` counts as
/// `includeIf`) of a git config file, in order; at most 64 KiB read.
fn config_values(config: &Path, section: &str, key: &str) -> Vec<String> {
    let Ok(text) = decode_policy::paths::read_small_file(config, 64 * 1024) else {
        return Vec::new();
    };
    let mut inside = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let mut line = line.trim();
        if line.starts_with('[') {
            let name = line
                .trim_start_matches('[')
                .split([']', ' ', '"'])
                .next()
                .unwrap_or("");
            inside = name.eq_ignore_ascii_case(section);
            // `[core] hooksPath = x` on one line.
            match line.split_once(']') {
                Some((_, rest)) if !rest.trim().is_empty() => line = rest.trim(),
                _ => continue,
            }
        }
        if !inside {
            continue;
        }
        let Some((k, value)) = line.split_once('=') else {
            continue;
        };
        if k.trim().eq_ignore_ascii_case(key) {
            let v = value
                .split(['#', ';'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"');
            if !v.is_empty() {
                found.push(v.to_string());
            }
        }
    }
    found
}

/// A path a git config file names, `~/` expanded with the home the file is in
/// when it is a global one.
fn config_path(config: &Path, v: &str) -> Option<PathBuf> {
    match v.strip_prefix("~/") {
        Some(rest) => {
            // A global config: its home is the folder it is in (or above `.config`).
            let dir = config.parent()?;
            let home = if dir.ends_with(".config/git") {
                dir.parent()?.parent()?
            } else {
                dir
            };
            Some(home.join(rest))
        }
        None => Some(PathBuf::from(v)),
    }
}

/// The `core.hooksPath` a git config file sets (the last one).
fn hooks_path(config: &Path) -> Option<PathBuf> {
    let v = config_values(config, "core", "hooksPath").pop()?;
    config_path(config, &v)
}

/// The files a git config file includes (`include.path`, `includeIf.*.path`), and
/// those they include, 4 levels deep: git reads them as part of the config, so
/// they run code as it does. A relative path is relative to the including file.
fn config_includes(config: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut level = vec![config.to_path_buf()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for file in &level {
            let values = config_values(file, "include", "path")
                .into_iter()
                .chain(config_values(file, "includeIf", "path"));
            for v in values {
                let Some(p) = config_path(file, &v) else {
                    continue;
                };
                let p = match file.parent() {
                    Some(dir) if p.is_relative() => dir.join(p),
                    _ => p,
                };
                if !out.contains(&p) && out.len() < 64 {
                    out.push(p.clone());
                    next.push(p);
                }
            }
        }
        level = next;
    }
    out
}

/// Whether an entry of `dir` can be renamed by this user.
fn renamable_in(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok() {
        return true;
    }
    std::fs::metadata(dir).is_ok_and(|m| m.uid() == nix::unistd::geteuid().as_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(entries: &[(&str, Kind)]) -> Plan {
        let mut plan = Plan {
            own_network: true,
            ..Plan::default()
        };
        for (p, k) in entries {
            plan.mounts.add(Path::new(p), *k, "test");
        }
        plan
    }

    #[test]
    fn parents_are_mounted_before_children_and_nothing_writable_beneath_a_protected_folder() {
        let plan = plan_of(&[
            ("/w", Kind::Writable),
            ("/w/p/.decode", Kind::Protected),
            ("/w/p/.decode/agents", Kind::Pin),
            ("/w/p", Kind::Pin),
            ("/w/p/a/b/.git/hooks", Kind::Protected),
            ("/w/p/a/b/.git", Kind::Pin),
            ("/w/p/a", Kind::Pin),
            ("/w/p/a/b", Kind::Pin),
        ]);
        let args: Vec<String> = plan
            .args(Path::new("/w/p"))
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let base = super::super::base_args(true).len();
        let binds: Vec<&str> = args[base..]
            .windows(2)
            .filter(|w| w[0].ends_with("-try"))
            .map(|w| w[1].as_str())
            .collect();
        assert_eq!(
            binds,
            [
                "/w",
                "/w/p",
                "/w/p/.decode",
                "/w/p/a",
                "/w/p/a/b",
                "/w/p/a/b/.git",
                "/w/p/a/b/.git/hooks"
            ]
        );
        for flag in [
            "--die-with-parent",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
        ] {
            assert!(args[..base].iter().any(|a| a == flag), "{flag}");
        }
        assert_eq!(&args[args.len() - 2..], ["--chdir", "/w/p"]);
        assert_eq!(plan.read_only_paths().len(), 2);
    }
}
