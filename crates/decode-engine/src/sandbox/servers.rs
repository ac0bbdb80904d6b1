//! Servers of the person's that run what they are sent (a terminal multiplexer, an
//! editor server, the session bus): a sandboxed command must not reach them, or it
//! could have them run a command outside the sandbox.

use std::collections::HashMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Environment variables that name such a server to the programs started beneath
/// it; they are not passed into the sandbox.
pub(crate) const SERVER_ENV: &[&str] = &[
    "TMUX",
    "TMUX_PANE",
    "TMUX_TMPDIR",
    "STY",
    "SCREENDIR",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
];

/// Process names (as in `/proc/PID/comm`) of servers that run what a client sends:
/// tmux (`tmux: server`), screen, Emacs, Neovim, kitty, WezTerm's mux server.
fn is_command_server(comm: &str) -> bool {
    comm.starts_with("tmux")
        || comm.eq_ignore_ascii_case("screen")
        || comm.starts_with("emacs")
        || comm == "nvim"
        || comm == "kitty"
        || comm.starts_with("wezterm")
}

/// What to hide, for this machine now: folders to cover with an empty one, and
/// sockets to cover with the null device (a connection is refused).
///
/// - the usual folders of tmux, screen and Emacs servers (and `$TMUX_TMPDIR`'s,
///   `$SCREENDIR`);
/// - the socket `$TMUX` names (a server started with `-S PATH` anywhere);
/// - every listening socket held by a process of this user that is one of the
///   servers above ([`is_command_server`]), found through `/proc/net/unix` and the
///   servers' open files: a server started with `-S PATH` that Decode's
///   environment does not name;
/// - the session D-Bus and systemd user manager sockets (`systemd-run --user`).
///
/// Docker's socket is not among them: building and running containers is ordinary
/// work (docs/sandbox.md, "Limits").
pub(crate) fn command_servers() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let uid = nix::unistd::geteuid().as_raw();
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let home = env("HOME").map(PathBuf::from);
    let runtime = env("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("/run/user/{uid}")));
    let mut dirs = vec![
        PathBuf::from(format!("/tmp/tmux-{uid}")),
        PathBuf::from("/run/screen"),
        PathBuf::from(format!("/tmp/emacs{uid}")),
        runtime.join("emacs"),
    ];
    if let Some(h) = &home {
        dirs.push(h.join(".screen"));
    }
    if let Some(t) = env("TMUX_TMPDIR") {
        dirs.push(PathBuf::from(t).join(format!("tmux-{uid}")));
    }
    if let Some(d) = env("SCREENDIR") {
        dirs.push(PathBuf::from(d));
    }
    let mut sockets = vec![runtime.join("bus"), runtime.join("systemd/private")];
    if let Ok(addr) = std::env::var("DBUS_SESSION_BUS_ADDRESS") {
        for part in addr.split(';') {
            if let Some(path) = part
                .strip_prefix("unix:")
                .and_then(|kv| kv.split(',').find_map(|f| f.strip_prefix("path=")))
            {
                sockets.push(PathBuf::from(path));
            }
        }
    }
    // `$TMUX` is "SOCKET,PID,SESSION".
    if let Some(t) = std::env::var("TMUX").ok().filter(|t| t.starts_with('/')) {
        if let Some(sock) = t.split(',').next() {
            sockets.push(PathBuf::from(sock));
        }
    }
    for k in ["NVIM", "NVIM_LISTEN_ADDRESS", "WEZTERM_UNIX_SOCKET"] {
        if let Some(v) = env(k).map(PathBuf::from).filter(|p| p.is_absolute()) {
            sockets.push(v);
        }
    }
    if let Some(v) = std::env::var("KITTY_LISTEN_ON")
        .ok()
        .and_then(|v| v.strip_prefix("unix:").map(PathBuf::from))
        .filter(|p| p.is_absolute())
    {
        sockets.push(v);
    }
    sockets.extend(listening_sockets_of_servers(uid));

    let is_dir = |p: &PathBuf| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let is_socket =
        |p: &PathBuf| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket());
    let mut d: Vec<PathBuf> = dirs
        .into_iter()
        .filter(is_dir)
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    d.sort();
    d.dedup();
    // As resolved (bubblewrap binds onto the real path; a link on the way would make
    // it fail); a socket in a covered folder is gone already.
    let mut s: Vec<PathBuf> = sockets
        .into_iter()
        .filter(is_socket)
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|s| !d.iter().any(|dir| s.starts_with(dir)))
        .collect();
    s.sort();
    s.dedup();
    (d, s)
}

/// The paths of the listening sockets held open by this user's command servers.
fn listening_sockets_of_servers(uid: u32) -> Vec<PathBuf> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let by_inode = listening_by_inode(&table);
    if by_inode.is_empty() {
        return Vec::new();
    }
    // The walk of /proc is most of the cost; while the same sockets listen, the same
    // servers hold them (a new server listens on a new socket).
    static LAST: std::sync::Mutex<Option<(Vec<u64>, Vec<PathBuf>)>> = std::sync::Mutex::new(None);
    let mut inodes: Vec<u64> = by_inode.keys().copied().collect();
    inodes.sort_unstable();
    if let Ok(last) = LAST.lock() {
        if let Some((seen, found)) = last.as_ref() {
            if *seen == inodes {
                return found.clone();
            }
        }
    }
    let found = walk_servers(uid, &by_inode);
    if let Ok(mut last) = LAST.lock() {
        *last = Some((inodes, found.clone()));
    }
    found
}

/// The listening sockets of `by_inode` held by this user's command servers.
fn walk_servers(uid: u32, by_inode: &HashMap<u64, PathBuf>) -> Vec<PathBuf> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in procs.flatten() {
        let name = p.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let dir = p.path();
        if std::fs::metadata(&dir).map(|m| m.uid()).ok() != Some(uid) {
            continue;
        }
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue;
        };
        if !is_command_server(comm.trim_end()) {
            continue;
        }
        out.extend(sockets_held(&dir, by_inode));
    }
    out
}

/// The listening sockets of `/proc/net/unix` that have a path in the file
/// system, by inode. A line is `Num RefCount Protocol Flags Type St Inode Path`;
/// flag `0x10000` is "accepting connections".
fn listening_by_inode(table: &str) -> HashMap<u64, PathBuf> {
    let mut map = HashMap::new();
    for line in table.lines().skip(1) {
        let mut fields = line.split_whitespace();
        let (Some(_num), Some(_refs), Some(_proto), Some(flags), Some(_ty), Some(_st)) = (
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
        if u32::from_str_radix(flags, 16).map_or(true, |f| f & 0x10000 == 0) {
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

/// The listening sockets among a process's open files.
fn sockets_held(proc_dir: &Path, by_inode: &HashMap<u64, PathBuf>) -> Vec<PathBuf> {
    let Ok(fds) = std::fs::read_dir(proc_dir.join("fd")) else {
        return Vec::new();
    };
    // A path bound relative (`tmux -S rel.sock`) is relative to the server's
    // working folder, which tmux keeps.
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
    fn the_socket_table_gives_listening_sockets_with_a_path() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23456 /tmp/tmux-1000/my sock\n\
            0000000000000000: 00000002 00000000 00000000 0001 03 23460 /tmp/client\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23457 rel.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23458 @abstract\n\
            0000000000000000: 00000002 00000000 00010000 0001 01  9999 /run/x.sock\n";
        let m = listening_by_inode(table);
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!(m[&23457], PathBuf::from("rel.sock"));
        assert_eq!(m[&23456], PathBuf::from("/tmp/tmux-1000/my sock"));
        assert_eq!(m[&9999], PathBuf::from("/run/x.sock"));
    }

    #[test]
    fn servers_are_known_by_their_process_name() {
        for s in [
            "tmux: server",
            "tmux",
            "screen",
            "SCREEN",
            "emacs",
            "nvim",
            "kitty",
        ] {
            assert!(is_command_server(s), "{s}");
        }
        for s in ["bash", "cargo", "ssh-agent", "gpg-agent", "dockerd", "Xvfb"] {
            assert!(!is_command_server(s), "{s}");
        }
    }
}
