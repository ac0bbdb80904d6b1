//! Sandboxes kept warm (docs/sandbox.md, "Cost"): bubblewrap builds a sandbox's
//! namespaces once — its user namespace, its mount table, its network — and Decode
//! keeps them (as open namespace descriptors: a namespace lives as long as one refers
//! to it); each command then enters them instead of having bubblewrap build them
//! again. Building them costs bubblewrap a few milliseconds per mount (it reads the
//! whole mount table after each one); entering them, a few system calls.
//!
//! A command enters the kept namespaces and makes, for itself alone, a mount
//! namespace (a copy of the kept one, where its own `/proc` goes) and a process
//! namespace (it is process 1 there: when it ends, everything it started is gone);
//! it leaves its session, sets no-new-privileges, drops every capability and runs
//! (`decode_nsenter`). Even that copy of the mount table takes milliseconds, so the
//! next command's shell is started ahead, while the model thinks ([`Spare`]): it waits
//! in its fresh namespaces for the command's folder and text, then becomes `bash -c`.
//! The copied mount table is let go in the background when the command has ended.
//!
//! A kept sandbox is used only for the very mount table it was built from (the
//! plan's bubblewrap options, compared whole), and only while every path it mounted
//! is still the file it mounted: a protected file replaced since (`git config` from
//! another terminal writes a new `.git/config`) or a socket made again would no
//! longer be covered there, so the sandbox is built again.

use std::ffi::OsString;
use std::io::{BufRead, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use super::Plan;

/// How many kept sandboxes one Decode holds at most (the least recently used goes).
const KEPT: usize = 8;

/// Set to `0`, every command has bubblewrap build its sandbox (slower; for
/// comparison and for a kernel that refuses to let a process enter namespaces).
pub const WARM_ENV: &str = "DECODE_SANDBOX_WARM";

static ENABLED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(2);

/// Whether sandboxes are kept warm (see [`WARM_ENV`], [`keep_warm`]).
pub fn enabled() -> bool {
    use std::sync::atomic::Ordering;
    match ENABLED.load(Ordering::Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let on = std::env::var_os(WARM_ENV).is_none_or(|v| v != "0");
            ENABLED.store(on as u8, Ordering::Relaxed);
            on
        }
    }
}

/// Keeps sandboxes warm, or has bubblewrap build one per command (the cost bench
/// compares both).
pub fn keep_warm(on: bool) {
    ENABLED.store(on as u8, std::sync::atomic::Ordering::Relaxed);
    if !on {
        kept().lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// A sandbox's namespaces, kept.
#[derive(Debug)]
pub(crate) struct Warm {
    /// The bubblewrap options it was built from (what is compared).
    key: Vec<OsString>,
    user: OwnedFd,
    mnt: OwnedFd,
    ipc: OwnedFd,
    /// Its network namespace (absent: the host's network is shared).
    net: Option<OwnedFd>,
    /// Every mounted path with the file it was (device, inode) when mounted.
    stamps: Vec<(PathBuf, Option<(u64, u64)>)>,
    /// The next command's shell, started ahead (or being started: the lock is
    /// held meanwhile).
    spare: tokio::sync::Mutex<Option<Spare>>,
}

fn stamp(p: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(p)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl Warm {
    /// Whether every path it mounted is still the file it mounted.
    fn intact(&self) -> bool {
        self.stamps.iter().all(|(p, s)| stamp(p) == *s)
    }
}

fn kept() -> &'static Mutex<Vec<Arc<Warm>>> {
    static KEPT_SANDBOXES: Mutex<Vec<Arc<Warm>>> = Mutex::new(Vec::new());
    &KEPT_SANDBOXES
}

/// The kept sandbox for `plan`, built now (with `bwrap`) when there is none, or
/// when the one there no longer matches the files it mounted.
pub(crate) fn for_plan(bwrap: &Path, plan: &Plan) -> std::io::Result<Arc<Warm>> {
    if !enabled() {
        return Err(std::io::Error::other(format!("{WARM_ENV}=0")));
    }
    let key = plan.zygote_args();
    {
        let mut all = kept().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = all.iter().position(|w| w.key == key) {
            let w = all.remove(i);
            if w.intact() {
                all.push(w.clone());
                return Ok(w);
            }
            tracing::debug!("a kept sandbox's mounts changed under it: building it again");
        }
    }
    let w = Arc::new(build(bwrap, plan, key)?);
    let mut all = kept().lock().unwrap_or_else(|e| e.into_inner());
    all.push(w.clone());
    while all.len() > KEPT {
        all.remove(0);
    }
    Ok(w)
}

/// Builds the sandbox of `plan` with bubblewrap, around a shell that says when it
/// is ready and waits; its namespaces are opened, then the shell is let go.
fn build(bwrap: &Path, plan: &Plan, key: Vec<OsString>) -> std::io::Result<Warm> {
    // The stamps first: a path replaced while bubblewrap mounts it is then seen as
    // changed at the next command.
    let stamps: Vec<(PathBuf, Option<(u64, u64)>)> = plan
        .mounts()
        .into_iter()
        .map(|m| (m.path.clone(), stamp(&m.path)))
        .collect();
    let (info_r, info_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let mut cmd = Command::new(bwrap);
    cmd.args(&key)
        .args([
            "--info-fd",
            "3",
            "--",
            "/bin/sh",
            "-c",
            "echo ready; read -r _",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    decode_nsenter::pass_fd_as_3(&mut cmd, &info_w);
    let mut child = cmd.spawn()?;
    drop(info_w);
    let mut ready = String::new();
    let read = child
        .stdout
        .take()
        .map(|o| std::io::BufReader::new(o).read_line(&mut ready));
    if !matches!(read, Some(Ok(n)) if n > 0) || ready.trim() != "ready" {
        let _ = child.kill();
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = child.wait();
        return Err(std::io::Error::other(format!(
            "bubblewrap could not build the sandbox: {}",
            err.lines().next().unwrap_or("no reason given").trim()
        )));
    }
    // bubblewrap writes its JSON at once; the descriptor may stay open in the
    // sandbox, so read up to the closing brace rather than to the end.
    let mut info = String::new();
    let mut f = std::fs::File::from(info_r);
    let mut buf = [0u8; 4096];
    while !info.contains('}') && info.len() < 64 * 1024 {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => info.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    let pid = info
        .split("\"child-pid\"")
        .nth(1)
        .and_then(|rest| {
            rest.trim_start_matches([':', ' ', '\n'])
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse::<u32>().ok())
        })
        .ok_or_else(|| std::io::Error::other("bubblewrap did not say where its sandbox is"))?;
    let open = |ns: &str| -> std::io::Result<OwnedFd> {
        let f = std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))?;
        Ok(OwnedFd::from(f))
    };
    let opened = (|| -> std::io::Result<Warm> {
        Ok(Warm {
            user: open("user")?,
            mnt: open("mnt")?,
            ipc: open("ipc")?,
            spare: tokio::sync::Mutex::new(None),
            net: if plan.own_network() {
                Some(open("net")?)
            } else {
                None
            },
            key,
            stamps,
        })
    })();
    // The shell reads its end of input and goes; bubblewrap with it.
    drop(child.stdin.take());
    let _ = child.wait();
    opened
}

/// Makes `cmd` run in the kept sandbox `warm`, starting in `cwd` (see
/// `decode_nsenter`).
/// With `own_network`, the command gets a network of its own with the proxy's
/// listening sockets, to be taken from what is returned once it is spawned.
pub(crate) fn apply(
    warm: &Warm,
    cwd: &Path,
    own_network: bool,
    cmd: &mut tokio::process::Command,
) -> std::io::Result<Option<decode_nsenter::Listeners>> {
    let t = target(warm, cwd)?;
    let (t, listeners) = with_proxy_ports(warm, t, own_network)?;
    Arc::new(t).apply(cmd.as_std_mut());
    Ok(listeners)
}

/// `t` with a network of its own and the proxy's ports (docs/network.md), when the
/// kept sandbox has a network of its own to make it in.
fn with_proxy_ports(
    warm: &Warm,
    t: decode_nsenter::Target,
    own_network: bool,
) -> std::io::Result<(decode_nsenter::Target, Option<decode_nsenter::Listeners>)> {
    if !own_network || warm.net.is_none() {
        return Ok((t, None));
    }
    let (t, l) =
        t.with_own_network(&[crate::net::PROXY_HTTP_PORT, crate::net::PROXY_SOCKS_PORT])?;
    Ok((t, Some(l)))
}

/// The listening sockets a spawned command sent back (none when it has no network
/// of its own; said in the log).
pub(crate) fn take_listeners(
    listeners: Option<decode_nsenter::Listeners>,
) -> Vec<std::net::TcpListener> {
    match listeners.map(|l| l.take()) {
        None => Vec::new(),
        Some(Ok(l)) => l,
        Some(Err(e)) => {
            tracing::warn!(error = %e, "a sandboxed command has no way to the network proxy: it has no network");
            Vec::new()
        }
    }
}

fn target(warm: &Warm, cwd: &Path) -> std::io::Result<decode_nsenter::Target> {
    decode_nsenter::Target::new(
        warm.user.try_clone()?,
        warm.mnt.try_clone()?,
        warm.ipc.try_clone()?,
        warm.net.as_ref().map(OwnedFd::try_clone).transpose()?,
        cwd,
    )
}

/// The longest command text handed to a [`Spare`] (its shell reads the text a
/// byte at a time from a pipe); a longer one starts a shell of its own.
pub(crate) const SPARE_MAX_TEXT: usize = 4 * 1024;

/// What the waiting shell runs: it reads the folder, `$BASH_ENV` and the command's
/// text (each ending in a NUL byte) from fd 3, then becomes `bash -c TEXT` there —
/// with the environment it was started with, `$BASH_ENV` put back (a waiting shell
/// must not read it) and `$SHLVL` as one shell would leave it.
const WAITING_SHELL: &str = "IFS= read -r -d '' d <&3 || exit 125; \
    IFS= read -r -d '' e <&3 || exit 125; IFS= read -r -d '' s <&3 || exit 125; \
    exec 3<&-; cd -- \"$d\" || exit 125; [ -n \"$e\" ] && export BASH_ENV=\"$e\"; \
    export SHLVL=$((SHLVL - 1)); exec bash -c \"$s\"";

/// A shell started ahead in a fresh copy of a kept sandbox, waiting for its command.
pub(crate) struct Spare {
    /// The process Decode waits on (it ends as the command ends; its process group
    /// is the command's).
    child: Option<tokio::process::Child>,
    /// Where the command's folder and text are written (the shell's fd 3).
    text: Option<std::fs::File>,
    /// The command's mount namespace (see [`Started::mounts`]).
    mounts: Option<std::fs::File>,
    /// The environment it was started with.
    env_key: u64,
    /// The proxy's listening sockets in its own network (see [`apply`]).
    listeners: Vec<std::net::TcpListener>,
}

/// A command handed to a [`Spare`].
pub(crate) struct Started {
    /// The process Decode waits on: it ends as the command ends, and its process
    /// group is the command's.
    pub(crate) child: tokio::process::Child,
    /// The command's mount namespace, held so that its end (the kernel takes every
    /// mount of the copy apart) happens when Decode lets it go, after the command,
    /// in the background.
    pub(crate) mounts: Option<std::fs::File>,
    /// The proxy's listening sockets in the command's own network.
    pub(crate) listeners: Vec<std::net::TcpListener>,
}

impl std::fmt::Debug for Spare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spare")
            .field("pid", &self.child.as_ref().and_then(|c| c.id()))
            .finish()
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        // A shell never used: its process group goes.
        if let Some(pid) = self.child.as_ref().and_then(|c| c.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

impl Spare {
    /// Hands the shell its folder and command (`bash_env`: `$BASH_ENV` as the
    /// command must see it); the shell then runs it.
    pub(crate) fn start(
        mut self,
        cwd: &Path,
        bash_env: Option<&std::ffi::OsStr>,
        text: &str,
    ) -> std::io::Result<Started> {
        use std::io::Write;
        use std::os::unix::ffi::OsStrExt;
        let parts: [&[u8]; 3] = [
            cwd.as_os_str().as_bytes(),
            bash_env.map(|e| e.as_bytes()).unwrap_or_default(),
            text.as_bytes(),
        ];
        if parts.iter().any(|p| p.contains(&0)) {
            return Err(std::io::Error::other(
                "a NUL byte in the folder or the command",
            ));
        }
        let mut msg = Vec::with_capacity(text.len() + 256);
        for p in parts {
            msg.extend_from_slice(p);
            msg.push(0);
        }
        let mut pipe = self
            .text
            .take()
            .ok_or_else(|| std::io::Error::other("the shell was handed a command already"))?;
        pipe.write_all(&msg)?;
        drop(pipe);
        let child = self
            .child
            .take()
            .ok_or_else(|| std::io::Error::other("the shell is gone"))?;
        Ok(Started {
            child,
            mounts: self.mounts.take(),
            listeners: std::mem::take(&mut self.listeners),
        })
    }
}

/// A fingerprint of an environment.
pub(crate) fn env_key(env: &[(OsString, OsString)]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    env.hash(&mut h);
    h.finish()
}

impl Warm {
    /// Takes the shell started ahead for a command with environment `env_key`
    /// (waiting for it while it is being started); `None` when there is none for
    /// that environment, or it is gone.
    pub(crate) async fn take_spare(&self, env_key: u64) -> Option<Spare> {
        let mut slot = self.spare.lock().await;
        let mut spare = slot.take()?;
        let alive = spare
            .child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)));
        let usable = alive && spare.env_key == env_key;
        if usable {
            TAKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        usable.then_some(spare)
    }

    /// Starts the next command's shell ahead, in the background. It is started
    /// from a runtime worker, not a blocking-pool thread: the process left outside
    /// dies with the thread that started it (`PR_SET_PDEATHSIG`), and the pool's
    /// threads end after ten idle seconds.
    pub(crate) fn prepare_spare(
        self: &Arc<Self>,
        env: Vec<(OsString, OsString)>,
        own_network: bool,
    ) {
        let warm = self.clone();
        tokio::spawn(async move {
            let mut slot = warm.spare.lock().await;
            if slot.is_some() {
                return;
            }
            match spawn_spare(&warm, env, own_network) {
                Ok(s) => *slot = Some(s),
                Err(e) => {
                    tracing::debug!(error = %e, "cannot start the next command's shell ahead")
                }
            }
        });
    }
}

/// How many commands took a shell started ahead, and how many entered a kept
/// sandbox themselves (for tests and the cost bench).
pub fn started_ahead() -> (u64, u64) {
    use std::sync::atomic::Ordering;
    (
        TAKEN.load(Ordering::Relaxed),
        ENTERED.load(Ordering::Relaxed),
    )
}

static TAKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub(crate) static ENTERED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Starts a waiting shell in a fresh copy of `warm` (see [`WAITING_SHELL`]).
fn spawn_spare(
    warm: &Warm,
    env: Vec<(OsString, OsString)>,
    own_network: bool,
) -> std::io::Result<Spare> {
    let key = env_key(&env);
    let (text_r, text_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c")
        .arg(WAITING_SHELL)
        .env_clear()
        .envs(env.into_iter().filter(|(k, _)| k != "BASH_ENV"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    decode_nsenter::pass_fd_as_3(cmd.as_std_mut(), &text_r);
    let t = target(warm, Path::new("/"))?.keeping_fd_3();
    let (t, listeners) = with_proxy_ports(warm, t, own_network)?;
    Arc::new(t).apply(cmd.as_std_mut());
    let child = cmd.spawn()?;
    drop(text_r);
    let listeners = take_listeners(listeners);
    let mounts = child
        .id()
        .and_then(|pid| std::fs::File::open(format!("/proc/{pid}/ns/mnt")).ok());
    Ok(Spare {
        child: Some(child),
        text: Some(std::fs::File::from(text_w)),
        mounts,
        env_key: key,
        listeners,
    })
}
