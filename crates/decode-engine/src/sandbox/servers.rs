//! The host's services, out of reach of a sandboxed command (docs/sandbox.md, "Host
//! services are out of reach"): a display, a bus, an agent, a container engine or a
//! terminal multiplexer would each run or type what a command sends them, outside
//! the sandbox.
//!
//! Services listen on Unix sockets. Those in the abstract namespace belong to the
//! network namespace, and a sandboxed command has a network of its own (see
//! `base_args`). Those with a path are found two ways, so that neither a program's
//! name nor the folder it chose matters:
//! - every socket of the host that listens (or receives datagrams) at a path, read
//!   from `/proc/net/unix` when the command starts, gets the null device over it (a
//!   connection is refused);
//! - the folders where such sockets are made get an empty folder over them, so a
//!   server started while the command runs is out of reach too: the runtime folder
//!   (`$XDG_RUNTIME_DIR`: the session bus, Wayland, PulseAudio, gpg-agent,
//!   keyrings, Podman, rootless Docker, systemd's user manager), X11's and ICE's
//!   folders in `/tmp`, tmux's, screen's and Emacs's folders, the system bus's and
//!   the container engines' folders in `/run`.

use std::collections::HashMap;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The folders that hold host services' sockets, for this user (`home`, `uid`,
/// the runtime folder): those that exist.
pub(crate) fn service_dirs(homes: &[PathBuf], uid: u32, runtime: &Path) -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut dirs = vec![
        runtime.to_path_buf(),
        PathBuf::from("/tmp/.X11-unix"),
        PathBuf::from("/tmp/.ICE-unix"),
        PathBuf::from(format!("/tmp/tmux-{uid}")),
        PathBuf::from("/run/screen"),
        PathBuf::from("/var/run/screen"),
        PathBuf::from(format!("/tmp/emacs{uid}")),
        PathBuf::from("/run/dbus"),
        PathBuf::from("/run/docker"),
        PathBuf::from("/run/containerd"),
        PathBuf::from("/run/podman"),
        PathBuf::from("/run/user").join(uid.to_string()),
    ];
    for h in homes {
        dirs.push(h.join(".screen"));
    }
    let mut ahead = vec![
        PathBuf::from(format!("/tmp/tmux-{uid}")),
        PathBuf::from(format!("/tmp/emacs{uid}")),
    ];
    if let Some(t) = env("TMUX_TMPDIR") {
        let d = PathBuf::from(t).join(format!("tmux-{uid}"));
        dirs.push(d.clone());
        ahead.push(d);
    }
    // A server started while a command runs makes its folder then: made now,
    // private as the server makes it, so that it is covered from the start.
    for d in &ahead {
        if d.is_absolute() && d.parent().is_some_and(Path::is_dir) {
            use std::os::unix::fs::DirBuilderExt;
            if std::fs::symlink_metadata(d).is_err() {
                if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(d) {
                    tracing::debug!(folder = %d.display(), error = %e, "cannot make a service folder ahead");
                }
            }
        }
    }
    if let Some(d) = env("SCREENDIR") {
        dirs.push(PathBuf::from(d));
    }
    let mut out: Vec<PathBuf> = dirs
        .into_iter()
        .filter(|p| p.is_absolute())
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.parent().is_some_and(searchable_without_privilege))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every socket of the host a client could reach at a path: those that listen for
/// connections or receive datagrams (from `/proc/net/unix`, this network
/// namespace), the sockets the environment names (`$SSH_AUTH_SOCK`, a
/// `unix:path=` bus, `$DOCKER_HOST`, `$TMUX`, …) — as resolved, that exist.
pub(crate) fn host_sockets() -> Vec<PathBuf> {
    let mut sockets = listening_sockets();
    sockets.extend(sockets_named_by_env());
    let mut s: Vec<PathBuf> = sockets
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        // A socket in a folder the command cannot enter is out of its reach
        // already (and bubblewrap could not mount over it).
        .filter(|p| p.parent().is_some_and(searchable_without_privilege))
        .collect();
    s.sort();
    s.dedup();
    s
}

/// Whether a process of this user with no capabilities (as a sandboxed command
/// is, root included) can go through every folder down to and into `dir`.
pub(crate) fn searchable_without_privilege(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::geteuid().as_raw();
    let mut gids: Vec<u32> = nix::unistd::getgroups()
        .unwrap_or_default()
        .into_iter()
        .map(|g| g.as_raw())
        .collect();
    gids.push(nix::unistd::getegid().as_raw());
    dir.ancestors().all(|d| {
        std::fs::metadata(d).is_ok_and(|m| {
            let bits = if m.uid() == uid {
                m.mode() >> 6
            } else if gids.contains(&m.gid()) {
                m.mode() >> 3
            } else {
                m.mode()
            };
            bits & 0o1 != 0
        })
    })
}

/// The sockets the environment of Decode names.
fn sockets_named_by_env() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut out = Vec::new();
    for k in ["DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"] {
        if let Some(addr) = env(k) {
            for part in addr.split(';') {
                if let Some(path) = part
                    .strip_prefix("unix:")
                    .and_then(|kv| kv.split(',').find_map(|f| f.strip_prefix("path=")))
                {
                    out.push(PathBuf::from(path));
                }
            }
        }
    }
    // `$TMUX` is "SOCKET,PID,SESSION".
    if let Some(t) = env("TMUX") {
        if let Some(sock) = t.split(',').next() {
            out.push(PathBuf::from(sock));
        }
    }
    for k in [
        "SSH_AUTH_SOCK",
        "NVIM",
        "NVIM_LISTEN_ADDRESS",
        "WEZTERM_UNIX_SOCKET",
        "SWAYSOCK",
        "I3SOCK",
    ] {
        if let Some(v) = env(k) {
            out.push(PathBuf::from(v));
        }
    }
    for (k, prefix) in [
        ("KITTY_LISTEN_ON", "unix:"),
        ("DOCKER_HOST", "unix://"),
        ("CONTAINER_HOST", "unix://"),
    ] {
        if let Some(v) = env(k).and_then(|v| v.strip_prefix(prefix).map(PathBuf::from)) {
            out.push(v);
        }
    }
    out.retain(|p| p.is_absolute());
    out
}

/// The paths of the sockets of `/proc/net/unix` that listen or receive
/// datagrams. A relative one (`tmux -S rel.sock`) is relative to the working folder
/// of the process that made it, found through its open files.
fn listening_sockets() -> Vec<PathBuf> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let by_inode = listening_by_inode(&table);
    let mut out = Vec::new();
    let mut relative: HashMap<u64, PathBuf> = HashMap::new();
    for (inode, p) in by_inode {
        if p.is_absolute() {
            out.push(p);
        } else {
            relative.insert(inode, p);
        }
    }
    if !relative.is_empty() {
        out.extend(resolve_relative(&relative));
    }
    out
}

/// Relative sockets resolved against their holders' working folders. The walk of
/// `/proc` is most of the cost; while the same sockets listen, the same processes
/// hold them (a new server listens on a new socket).
fn resolve_relative(relative: &HashMap<u64, PathBuf>) -> Vec<PathBuf> {
    static LAST: std::sync::Mutex<Option<(Vec<u64>, Vec<PathBuf>)>> = std::sync::Mutex::new(None);
    let mut inodes: Vec<u64> = relative.keys().copied().collect();
    inodes.sort_unstable();
    if let Ok(last) = LAST.lock() {
        if let Some((seen, found)) = last.as_ref() {
            if *seen == inodes {
                return found.clone();
            }
        }
    }
    let mut found = Vec::new();
    if let Ok(procs) = std::fs::read_dir("/proc") {
        for p in procs.flatten() {
            if !p
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
            {
                continue;
            }
            found.extend(sockets_held(&p.path(), relative));
        }
    }
    if let Ok(mut last) = LAST.lock() {
        *last = Some((inodes, found.clone()));
    }
    found
}

/// The sockets of `/proc/net/unix` that have a path in the file system and listen
/// for connections (flag `0x10000`) or receive datagrams (type 2), by inode. A
/// line is `Num RefCount Protocol Flags Type St Inode Path`.
fn listening_by_inode(table: &str) -> HashMap<u64, PathBuf> {
    let mut map = HashMap::new();
    for line in table.lines().skip(1) {
        let mut fields = line.split_whitespace();
        let (Some(_num), Some(_refs), Some(_proto), Some(flags), Some(ty), Some(_st)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        let Some(inode) = fields.next() else {
            continue;
        };
        let listening = u32::from_str_radix(flags, 16).is_ok_and(|f| f & 0x10000 != 0);
        let datagram = u32::from_str_radix(ty, 16).is_ok_and(|t| t == 2);
        if !listening && !datagram {
            continue;
        }
        // The path is the rest of the line (it may hold blanks).
        let end = inode.as_ptr() as usize - line.as_ptr() as usize + inode.len();
        let path = line[end..].trim_start();
        // No path, or one in the abstract namespace (`@name`): not a file.
        if path.is_empty() || path.starts_with('@') {
            continue;
        }
        if let Ok(n) = inode.parse::<u64>() {
            map.insert(n, PathBuf::from(path));
        }
    }
    map
}

/// The sockets of `by_inode` among a process's open files, resolved against its
/// working folder.
fn sockets_held(proc_dir: &Path, by_inode: &HashMap<u64, PathBuf>) -> Vec<PathBuf> {
    let Ok(fds) = std::fs::read_dir(proc_dir.join("fd")) else {
        return Vec::new();
    };
    let cwd = std::fs::read_link(proc_dir.join("cwd")).ok();
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let t = target.to_string_lossy();
            let n = t.strip_prefix("socket:[")?.strip_suffix(']')?;
            let p = by_inode.get(&n.parse::<u64>().ok()?)?;
            if p.is_absolute() {
                Some(p.clone())
            } else {
                cwd.as_ref().map(|c| c.join(p))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_table_gives_sockets_a_client_could_reach() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23456 /tmp/tmux-1000/my sock\n\
            0000000000000000: 00000002 00000000 00000000 0001 03 23460 /tmp/client\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23457 rel.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23458 @abstract\n\
            0000000000000000: 00000002 00000000 00010000 0001 01  9999 /run/x.sock\n\
            0000000000000000: 00000002 00000000 00000000 0002 01  7777 /run/systemd/notify\n\
            0000000000000000: 00000002 00000000 00000000 0002 01  7778\n";
        let m = listening_by_inode(table);
        assert_eq!(m.len(), 4, "{m:?}");
        assert_eq!(m[&23457], PathBuf::from("rel.sock"));
        assert_eq!(m[&23456], PathBuf::from("/tmp/tmux-1000/my sock"));
        assert_eq!(m[&9999], PathBuf::from("/run/x.sock"));
        assert_eq!(m[&7777], PathBuf::from("/run/systemd/notify"));
    }

    #[test]
    fn a_listening_socket_of_this_process_is_found_by_its_path_whatever_its_name() {
        let d = tempfile::tempdir().unwrap();
        let sock = d.path().canonicalize().unwrap().join("anything-at-all");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert!(host_sockets().contains(&sock));
    }
}
