//! Opening exactly the file the gate judged (docs/permissions.md, "One path
//! for gate and tool").
//!
//! The gate judges a path with its links resolved. Between that moment and
//! the tool's work a folder on the path can be swapped for a link (an
//! atomic `renameat2` exchange) so that the same name now leads elsewhere —
//! into `.decode/` or `~/.ssh/`. So the file tools never follow a link at
//! all: they walk the resolved path one component at a time from `/`, each
//! folder opened with `O_NOFOLLOW | O_DIRECTORY`, and open, create or
//! replace the file relative to its folder's descriptor. A link anywhere on
//! the way is an error ("the path changed after it was judged"), and the
//! folder descriptor is checked again, after the work, to still be the
//! folder the gate judged.

// Without the engine (the tools) only the settings writer uses it.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::{fchmod, fstat, mkdirat, Mode};
use nix::unistd::unlinkat;

/// A number no other temporary file of this process has used.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    (NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) << 32) ^ nanos
}

/// A folder opened without following links, with the path it was opened as.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The error for a link met where the judged path had none.
fn moved(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} changed after it was judged (a folder or file on the path is now a link); nothing was done",
        path.display()
    ))
}

fn errno(e: nix::Error, path: &Path) -> io::Error {
    match e {
        // O_NOFOLLOW on a link: ELOOP; O_DIRECTORY on a link to a file: ENOTDIR.
        nix::Error::ELOOP | nix::Error::EMLINK => moved(path),
        e => io::Error::from_raw_os_error(e as i32),
    }
}

const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// Opens the folder `dir` (absolute, its links already resolved) one
/// component at a time, never following a link. With `create`, missing
/// folders are made (and then opened the same way).
pub fn open_dir(dir: &Path, create: bool) -> io::Result<Dir> {
    if !dir.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the folder is not an absolute path",
        ));
    }
    let mut fd = openat(nix::fcntl::AT_FDCWD, "/", DIR_FLAGS, Mode::empty())
        .map_err(|e| errno(e, Path::new("/")))?;
    let mut at = PathBuf::from("/");
    for c in dir.components() {
        let name = match c {
            Component::RootDir => continue,
            Component::Normal(n) => n,
            // The judged path is folded: `.` and `..` never reach here.
            _ => return Err(moved(dir)),
        };
        at.push(name);
        let next = match openat(&fd, name, DIR_FLAGS, Mode::empty()) {
            Ok(f) => f,
            Err(nix::Error::ENOENT) if create => {
                match mkdirat(&fd, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(nix::Error::EEXIST) => {}
                    Err(e) => return Err(errno(e, &at)),
                }
                openat(&fd, name, DIR_FLAGS, Mode::empty()).map_err(|e| errno(e, &at))?
            }
            Err(nix::Error::ENOTDIR) => {
                // A link to a file, or a file: either way not the judged folder.
                return Err(if is_link_at(&fd, name) {
                    moved(&at)
                } else {
                    io::Error::from_raw_os_error(libc::ENOTDIR)
                });
            }
            Err(e) => return Err(errno(e, &at)),
        };
        fd = next;
    }
    Ok(Dir {
        fd,
        path: dir.to_path_buf(),
    })
}

/// Adds read, write and search for the owner of the folder `fd` when one is
/// missing; the old mode when it changed.
fn make_changeable(fd: &OwnedFd) -> io::Result<Option<Mode>> {
    let st = fstat(fd.as_fd()).map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    let mode = Mode::from_bits_truncate(st.st_mode & 0o7777);
    let wanted = mode | Mode::S_IRWXU;
    if wanted == mode {
        return Ok(None);
    }
    fchmod(fd, wanted).map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    Ok(Some(mode))
}

/// Opens the folder `name` of the folder `parent` (never through a link) and gives
/// its owner read, write and search on it first when one is missing — a folder
/// `chmod 000` cannot even be opened otherwise. The mode is changed through a
/// descriptor of the very entry (opened with `O_PATH`), so a link swapped in is
/// never followed.
fn open_changeable(parent: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let path_only = openat(
        parent,
        name,
        OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    let st = fstat(path_only.as_fd()).map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    let at = format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&path_only)
    );
    if st.st_mode & 0o700 != 0o700 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            &at,
            std::fs::Permissions::from_mode((st.st_mode & 0o7777) | 0o700),
        )?;
    }
    // The same folder, opened for reading through its descriptor.
    Ok(OwnedFd::from(std::fs::File::open(&at)?))
}

/// The names in the folder `fd` (not `.` and `..`).
fn list(fd: &OwnedFd) -> io::Result<Vec<std::ffi::OsString>> {
    use std::os::unix::ffi::OsStrExt;
    // A new open of the folder: its own position in the listing.
    let own = openat(fd, ".", DIR_FLAGS, Mode::empty())
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    let mut d = nix::dir::Dir::from_fd(own).map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    let mut out = Vec::new();
    for e in d.iter() {
        let e = e.map_err(|e| io::Error::from_raw_os_error(e as i32))?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(OsStr::from_bytes(n).to_os_string());
        }
    }
    Ok(out)
}

fn is_link_at(dir: &OwnedFd, name: &OsStr) -> bool {
    nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// Opens the file at `path` (absolute, links resolved) for reading without
/// following any link on the way: the file, its folder's descriptor.
pub fn open_read(path: &Path) -> io::Result<(File, Dir)> {
    let (parent, name) = split(path)?;
    let dir = open_dir(parent, false)?;
    let fd = openat(
        &dir.fd,
        name,
        OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_CLOEXEC
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| errno(e, path))?;
    Ok((File::from(fd), dir))
}

fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(p), Some(n)) => Ok((p, n)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        )),
    }
}

impl Dir {
    /// An exclusive lock on the file `name` in this folder (created when
    /// missing, never through a link), held until the guard is dropped.
    /// A path that names `name` in this very folder (through the open folder's
    /// descriptor), for the calls that take a path: a folder renamed or replaced by
    /// a link since it was opened does not redirect it.
    pub fn entry_path(&self, name: &OsStr) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).join(name)
    }

    pub fn lock(&self, name: &OsStr) -> io::Result<nix::fcntl::Flock<File>> {
        let fd = openat(
            &self.fd,
            name,
            OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o644),
        )
        .map_err(|e| errno(e, &self.path.join(name)))?;
        nix::fcntl::Flock::lock(File::from(fd), nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| io::Error::from_raw_os_error(e as i32))
    }

    /// The inode of `name` in this folder, itself (a link is not followed).
    pub fn inode_of(&self, name: &OsStr) -> io::Result<u64> {
        nix::sys::stat::fstatat(&self.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            .map(|st| st.st_ino)
            .map_err(|e| io::Error::from_raw_os_error(e as i32))
    }

    /// Opens `name` in this folder for reading: never through a link, never
    /// blocking on a FIFO or a device.
    fn open_for_reading(&self, name: &OsStr) -> nix::Result<OwnedFd> {
        openat(
            &self.fd,
            name,
            OFlag::O_RDONLY
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC
                | OFlag::O_NONBLOCK
                | OFlag::O_NOCTTY,
            Mode::empty(),
        )
    }

    /// Opens the regular file `name` in this folder for reading (see
    /// [`Dir::open_for_reading`]).
    pub fn open_file(&self, name: &OsStr) -> io::Result<File> {
        let fd = self
            .open_for_reading(name)
            .map_err(|e| errno(e, &self.path.join(name)))?;
        let f = File::from(fd);
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(f)
    }

    /// The current contents of `name` in this folder (`None` when there is
    /// none), never through a link, with its metadata.
    pub fn read(&self, name: &OsStr) -> io::Result<Option<(Vec<u8>, std::fs::Metadata)>> {
        let fd = match self.open_for_reading(name) {
            Ok(fd) => fd,
            Err(nix::Error::ENOENT) => return Ok(None),
            Err(e) => return Err(errno(e, &self.path.join(name))),
        };
        let mut f = File::from(fd);
        let meta = f.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        f.read_to_end(&mut bytes)?;
        Ok(Some((bytes, meta)))
    }

    /// Replaces (or creates) `name` in this folder atomically: a new file
    /// beside it, written and synced, then renamed over it, all relative to
    /// the folder's descriptor. Keeps the permissions of a file it replaces.
    pub fn atomic_write(&self, name: &OsStr, contents: &[u8]) -> io::Result<()> {
        let keep =
            match nix::sys::stat::fstatat(&self.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            {
                Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                    return Err(moved(&self.path.join(name)))
                }
                Ok(st) => Some(Mode::from_bits_truncate(st.st_mode & 0o7777)),
                Err(nix::Error::ENOENT) => None,
                Err(e) => return Err(errno(e, &self.path.join(name))),
            };
        self.remove_stale_temps(name);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".decode-{}-{}.tmp", std::process::id(), unique()));
        let fd = openat(
            &self.fd,
            tmp_name.as_os_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o666),
        )
        .map_err(|e| errno(e, &self.path.join(&tmp_name)))?;
        let result = (|| {
            if let Some(m) = keep {
                fchmod(&fd, m).map_err(|e| io::Error::from_raw_os_error(e as i32))?;
            }
            let mut f = File::from(fd);
            f.write_all(contents)?;
            f.sync_all()?;
            drop(f);
            renameat(&self.fd, tmp_name.as_os_str(), &self.fd, name)
                .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
            // The folder's entry is durable too.
            File::from(self.fd.try_clone()?).sync_all()
        })();
        if result.is_err() {
            let _ = unlinkat(
                &self.fd,
                tmp_name.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
        }
        result
    }

    /// Removes the temporary files an earlier [`Dir::atomic_write`] of `name` left when
    /// its process was killed between creating and renaming them
    /// (`.NAME.decode-PID-N.tmp` whose process is gone). Best effort: a write goes on
    /// whatever happens here.
    fn remove_stale_temps(&self, name: &OsStr) {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let mut prefix = b".".to_vec();
        prefix.extend_from_slice(name.as_bytes());
        prefix.extend_from_slice(b".decode-");
        // The folder itself, through its descriptor (never by its path again).
        let Ok(entries) = std::fs::read_dir(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
        else {
            return;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let Some(rest) = file_name.as_bytes().strip_prefix(prefix.as_slice()) else {
                continue;
            };
            let Some(rest) = rest.strip_suffix(b".tmp") else {
                continue;
            };
            let pid = rest
                .split(|b| *b == b'-')
                .next()
                .and_then(|p| std::str::from_utf8(p).ok())
                .and_then(|p| p.parse::<i32>().ok());
            let Some(pid) = pid.filter(|p| *p > 0) else {
                continue;
            };
            // A writer that is alive may be in the middle of its write (this process's
            // other threads included).
            let alive = pid == std::process::id() as i32
                || !matches!(
                    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
                    Err(nix::errno::Errno::ESRCH)
                );
            if alive {
                continue;
            }
            match unlinkat(
                &self.fd,
                file_name.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            ) {
                Ok(()) => tracing::info!(
                    file = %self.path.join(&file_name).display(),
                    "removed a temporary file a killed write left behind"
                ),
                Err(e) => tracing::debug!(error = %e, "could not remove a stale temporary file"),
            }
        }
    }

    /// Another handle on the same folder.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    /// The path this folder was opened as.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file type and mode of `name` in this folder (a link is not followed);
    /// `None` when there is no such entry.
    pub fn entry_mode(&self, name: &OsStr) -> Option<u32> {
        nix::sys::stat::fstatat(&self.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| st.st_mode)
    }

    /// Gives this folder's owner the right to list, enter and change it (a command
    /// may have taken them away: `chmod 555`, `chmod 000`). Returns the mode to put
    /// back afterwards, when it was changed.
    pub fn make_changeable(&self) -> io::Result<Option<Mode>> {
        make_changeable(&self.fd)
    }

    /// Puts back a mode [`Dir::make_changeable`] returned.
    pub fn restore_mode(&self, mode: Mode) {
        if let Err(e) = fchmod(&self.fd, mode) {
            tracing::debug!(path = %self.path.display(), error = %e, "cannot put a folder's mode back");
        }
    }

    /// Makes the folder `name` in this folder changeable by its owner (so it can be
    /// moved elsewhere, which rewrites its `..`), without following a link.
    pub fn make_entry_changeable(&self, name: &OsStr) -> io::Result<()> {
        open_changeable(&self.fd, name).map(|_| ())
    }

    /// Moves `name` of this folder to `to_name` in the folder `to` (no link
    /// followed).
    pub fn move_entry(&self, name: &OsStr, to: &Dir, to_name: &OsStr) -> io::Result<()> {
        renameat(&self.fd, name, &to.fd, to_name)
            .map_err(|e| io::Error::from_raw_os_error(e as i32))
    }

    /// Removes `name` from this folder, a folder with everything in it, whatever
    /// the command that made it did to its modes or its depth: every folder is made
    /// changeable before it is read, and what is inside a subfolder is moved up into
    /// the folder being emptied, so any depth needs two open folders. At most
    /// `budget` entries are removed (`Err` beyond).
    pub fn remove_tree(&self, name: &OsStr, budget: usize) -> io::Result<()> {
        let io_err = |e: nix::Error| io::Error::from_raw_os_error(e as i32);
        let Some(mode) = self.entry_mode(name) else {
            return Ok(());
        };
        if mode & libc::S_IFMT != libc::S_IFDIR {
            return unlinkat(&self.fd, name, nix::unistd::UnlinkatFlags::NoRemoveDir)
                .map_err(io_err);
        }
        let top = open_changeable(&self.fd, name)?;
        let mut left = budget;
        loop {
            let names = list(&top)?;
            if names.is_empty() {
                break;
            }
            for n in names {
                left = left
                    .checked_sub(1)
                    .ok_or_else(|| io::Error::other("too many entries to remove"))?;
                let st = nix::sys::stat::fstatat(
                    &top,
                    n.as_os_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .map_err(io_err)?;
                if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                    unlinkat(&top, n.as_os_str(), nix::unistd::UnlinkatFlags::NoRemoveDir)
                        .map_err(io_err)?;
                    continue;
                }
                let sub = open_changeable(&top, n.as_os_str())?;
                for inner in list(&sub)? {
                    // Up one level, under a name nothing else has.
                    let up = std::ffi::OsString::from(format!(".decode-rm-{}", unique()));
                    if let Ok(m) = nix::sys::stat::fstatat(
                        &sub,
                        inner.as_os_str(),
                        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                    ) {
                        if m.st_mode & libc::S_IFMT == libc::S_IFDIR {
                            // Moving a folder rewrites its `..`: it must be
                            // changeable, even made unreadable (`chmod 000`).
                            drop(open_changeable(&sub, inner.as_os_str())?);
                        }
                    }
                    renameat(&sub, inner.as_os_str(), &top, up.as_os_str()).map_err(io_err)?;
                }
                unlinkat(&top, n.as_os_str(), nix::unistd::UnlinkatFlags::RemoveDir)
                    .map_err(io_err)?;
            }
        }
        drop(top);
        unlinkat(&self.fd, name, nix::unistd::UnlinkatFlags::RemoveDir).map_err(io_err)
    }

    /// Whether this folder is still the one at the path it was opened as
    /// (not moved or exchanged since): the path's folder has the same
    /// device and inode as the descriptor.
    pub fn still_in_place(&self) -> bool {
        let Ok(here) = fstat(self.fd.as_fd()) else {
            return false;
        };
        match open_dir(&self.path, false) {
            Ok(again) => fstat(again.fd.as_fd())
                .is_ok_and(|st| st.st_dev == here.st_dev && st.st_ino == here.st_ino),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_and_writes_beneath_a_real_path() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let dir = open_dir(&root.join("a/b"), true).unwrap();
        dir.atomic_write(OsStr::new("f.txt"), b"one").unwrap();
        assert_eq!(std::fs::read(root.join("a/b/f.txt")).unwrap(), b"one");
        let (bytes, _) = dir.read(OsStr::new("f.txt")).unwrap().unwrap();
        assert_eq!(bytes, b"one");
        assert!(dir.read(OsStr::new("none")).unwrap().is_none());
        assert!(dir.still_in_place());
        // No temp file is left behind.
        let names: Vec<_> = std::fs::read_dir(root.join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);
    }

    /// A write killed between creating its temporary file and renaming it leaves the
    /// file behind; the next write of the same name takes it away. A live writer's
    /// file, or another name's, is left alone.
    #[test]
    fn a_killed_writes_temporary_file_goes_with_the_next_write() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let mut live = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let stale = format!(".settings.json.decode-{dead}-12345.tmp");
        let busy = format!(".settings.json.decode-{}-1.tmp", live.id());
        let other = format!(".agent.md.decode-{dead}-1.tmp");
        for name in [&stale, &busy, &other] {
            std::fs::write(root.join(name), "{half").unwrap();
        }
        let dir = open_dir(&root, false).unwrap();
        dir.atomic_write(OsStr::new("settings.json"), b"{}")
            .unwrap();
        assert!(
            !root.join(&stale).exists(),
            "the dead writer's temp file stayed"
        );
        assert!(
            root.join(&busy).exists(),
            "a live writer's temp file was taken"
        );
        assert!(
            root.join(&other).exists(),
            "another file's temp file was taken"
        );
        assert_eq!(std::fs::read(root.join("settings.json")).unwrap(), b"{}");
        let _ = live.kill();
        let _ = live.wait();
    }

    #[test]
    fn a_link_anywhere_on_the_path_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::write(root.join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("real/f"), root.join("real/flink")).unwrap();
        let e = open_dir(&root.join("link"), false).unwrap_err();
        assert!(e.to_string().contains("changed after it was judged"), "{e}");
        let e = open_dir(&root.join("link/sub"), true).unwrap_err();
        assert!(e.to_string().contains("changed after it was judged"), "{e}");
        let e = open_read(&root.join("real/flink")).unwrap_err();
        assert!(e.to_string().contains("changed after it was judged"), "{e}");
        let dir = open_dir(&root.join("real"), false).unwrap();
        let e = dir.atomic_write(OsStr::new("flink"), b"y").unwrap_err();
        assert!(e.to_string().contains("changed after it was judged"), "{e}");
        assert_eq!(std::fs::read(root.join("real/f")).unwrap(), b"x");
    }

    #[test]
    fn a_folder_moved_away_is_noticed() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("d")).unwrap();
        let dir = open_dir(&root.join("d"), false).unwrap();
        std::fs::rename(root.join("d"), root.join("e")).unwrap();
        std::fs::create_dir_all(root.join("d")).unwrap();
        assert!(!dir.still_in_place());
    }

    #[test]
    fn a_tree_is_removed_whatever_modes_its_folders_were_given() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("t/z/w/x/y")).unwrap();
        std::fs::write(root.join("t/settings.json"), "{}").unwrap();
        std::fs::write(root.join("t/z/w/x/y/f"), "x").unwrap();
        for (p, mode) in [
            ("t/z/w/x/y", 0o000),
            ("t/z/w/x", 0o000),
            ("t/z/w", 0o000),
            ("t/z", 0o555),
            ("t", 0o555),
        ] {
            std::fs::set_permissions(root.join(p), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let dir = open_dir(&root, false).unwrap();
        dir.remove_tree(OsStr::new("t"), 1_000).unwrap();
        assert!(std::fs::symlink_metadata(root.join("t")).is_err());
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }
}
