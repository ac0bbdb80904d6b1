//! Sandboxed commands running now, in this process or another Decode on the same
//! machine (two windows, a window and `decode run`).
//!
//! Each running command leaves a record in Decode's data folder (read-only inside
//! every sandbox, so a command cannot forge or remove one) naming what it watches:
//! the protected paths that did not exist when it started, and the protected links
//! with their targets then. A record is a file locked for as long as its command
//! runs; one whose lock is free belongs to a Decode that died: whoever finds it first
//! (any Decode reading permission files, or starting a sandboxed command) takes back
//! what that command planted, as its end would have, and removes the record.
//!
//! Two things read the records:
//! - a command that starts while another runs takes the other's starting point as
//!   its own (`sandbox::Plan::new`): what the first one planted is not the second
//!   one's baseline, so the second never "puts back" the first one's link or keeps
//!   its file;
//! - Decode's readers of permission files (settings, agents) skip a file at or
//!   beneath a path a running command watches and has changed
//!   ([`made_by_a_running_command`]): a gate decision taken while a command runs
//!   never reads what that command planted.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// What one running command watches (paths as resolved when it started).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watched {
    /// The project the command runs in (as resolved).
    pub root: PathBuf,
    /// Protected paths that did not exist.
    pub absent: Vec<PathBuf>,
    /// Protected links and their targets.
    pub links: Vec<(PathBuf, PathBuf)>,
}

/// A running command's record; removed (and its lock released) when dropped.
#[derive(Debug)]
pub struct Running {
    path: PathBuf,
    _file: File,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::debug!(path = %self.path.display(), error = %e, "cannot remove a sandbox record");
        }
    }
}

/// The folder of the records.
fn folder() -> Option<PathBuf> {
    crate::dirs::Dirs::from_env()
        .ok()
        .map(|d| d.data.join("running"))
}

/// Where what a sandboxed command created at a protected path is moved.
pub fn quarantine_folder() -> PathBuf {
    crate::dirs::Dirs::from_env()
        .map(|d| d.data.join("quarantine"))
        .unwrap_or_else(|_| std::env::temp_dir().join("decode-quarantine"))
}

/// Leaves the record of a command that is about to start. `None` (logged) when the
/// record cannot be written: the command still runs sandboxed, only another
/// Decode cannot see it.
pub fn register(watched: &Watched) -> Option<Running> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = folder()?;
    let result = (|| -> std::io::Result<Running> {
        std::fs::create_dir_all(&dir)?;
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("{}-{n}", std::process::id());
        // Written and locked under a hidden name, then renamed: a reader never
        // sees a record that is not locked yet, or half written.
        let tmp = dir.join(format!(".{name}"));
        let mut file = File::create(&tmp)?;
        file.lock()?;
        file.write_all(&serde_json::to_vec(watched).map_err(std::io::Error::other)?)?;
        let path = dir.join(format!("{name}.json"));
        std::fs::rename(&tmp, &path)?;
        Ok(Running { path, _file: file })
    })();
    match result {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!(folder = %dir.display(), error = %e, "cannot record a running sandboxed command");
            None
        }
    }
}

/// The records of the commands running now. A record whose Decode died is taken
/// care of on the way: what its command planted is taken back, then the record is
/// removed.
pub fn live() -> Vec<Watched> {
    let Some(dir) = folder() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(file) = File::open(&path) else {
            continue;
        };
        match file.try_lock() {
            // Nobody holds it: its Decode died while the command ran (killed, or its
            // terminal closed). What the command planted is taken back now, as its
            // end would have; the record goes after that.
            Ok(()) => {
                if let Some(w) = read_record(&path) {
                    let notes = take_back(&w.absent, &w.links, &quarantine_folder());
                    tracing::warn!(
                        record = %path.display(),
                        ?notes,
                        "a sandboxed command's Decode died before it ended: its changes to protected paths are taken back"
                    );
                }
                let _ = std::fs::remove_file(&path);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                out.extend(read_record(&path));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::debug!(path = %path.display(), error = %e, "cannot check a sandbox record");
            }
        }
    }
    out
}

/// A record as written by [`register`] (`None` when unreadable).
fn read_record(path: &Path) -> Option<Watched> {
    let bytes = crate::fsutil::read_regular(path, 16 * 1024 * 1024).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Why a permission file at or beneath `made` (see [`made_by_a_running_command`])
/// is not read, for the warning that names it.
pub fn not_read_because(made: &Path) -> String {
    format!(
        "not read: {} was made by a command that is still running in Decode's sandbox (it is taken away when the command ends)",
        made.display()
    )
}

/// The path a running sandboxed command watches and has changed, at or above
/// `path`: one that did not exist when it started and exists now, or a link that
/// no longer points where it did. `None` when no command runs or none changed
/// anything on the way to `path`.
pub fn made_by_a_running_command(path: &Path) -> Option<PathBuf> {
    let records = live();
    if records.is_empty() {
        return None;
    }
    // Every place the read could go through: the path's folders as written (their
    // own folder resolved), where it lands and that place's folders, and every link
    // met on the way (a link a link points to included).
    let chain = decode_policy::paths::resolve_chain(path);
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut cur = Some(path);
    while let Some(a) = cur {
        if let (Some(parent), Some(name)) = (a.parent(), a.file_name()) {
            if let Ok(real_parent) = std::fs::canonicalize(parent) {
                candidates.push(real_parent.join(name));
            }
        }
        cur = a.parent();
    }
    candidates.extend(chain.resolved.ancestors().map(Path::to_path_buf));
    candidates.extend(chain.links.iter().cloned());
    for at in candidates {
        for r in &records {
            if r.absent.contains(&at) && std::fs::symlink_metadata(&at).is_ok() {
                return Some(at);
            }
            if let Some((_, target)) = r.links.iter().find(|(l, _)| *l == at) {
                if std::fs::read_link(&at).ok().as_ref() != Some(target) {
                    return Some(at);
                }
            }
        }
    }
    None
}

/// The folders of the paths a running command watches, opened (without following
/// a link) before it started: its clean-up works on these very folders, whatever the
/// command does to their names, to the links above them or to their modes.
#[derive(Debug, Default)]
pub struct Held {
    dirs: Vec<(PathBuf, crate::beneath::Dir)>,
}

impl Held {
    /// Opens the folder of every path of `absent` and `links` (each once).
    pub fn open(absent: &[PathBuf], links: &[(PathBuf, PathBuf)]) -> Held {
        let mut held = Held::default();
        for at in absent.iter().chain(links.iter().map(|(l, _)| l)) {
            let Some(parent) = at.parent() else {
                continue;
            };
            if held.dirs.iter().any(|(p, _)| p == parent) {
                continue;
            }
            match crate::beneath::open_dir(parent, false) {
                Ok(d) => held.dirs.push((parent.to_path_buf(), d)),
                Err(e) => {
                    tracing::debug!(folder = %parent.display(), error = %e, "cannot hold a watched folder open")
                }
            }
        }
        held
    }

    fn get(&self, parent: &Path) -> Option<&crate::beneath::Dir> {
        self.dirs.iter().find(|(p, _)| p == parent).map(|(_, d)| d)
    }
}

/// Takes away what a command created at the protected paths in `absent`, and puts
/// back the protected `links` it replaced (see `sandbox::Plan::undo`), through
/// folders opened now.
pub fn take_back(
    absent: &[PathBuf],
    links: &[(PathBuf, PathBuf)],
    quarantine: &Path,
) -> Vec<String> {
    take_back_held(absent, links, quarantine, None)
}

/// [`take_back`] through the folders `held` opened before the command started
/// (those it holds; the others opened now, without following a link). A folder the
/// command made unchangeable (`chmod 555`, `chmod 000`) is made changeable for the
/// clean-up and given its mode back after; what the command created is moved to
/// `quarantine`, or removed whole (whatever its modes and depth) when it cannot be.
pub fn take_back_held(
    absent: &[PathBuf],
    links: &[(PathBuf, PathBuf)],
    quarantine: &Path,
    held: Option<&Held>,
) -> Vec<String> {
    let mut notes = Vec::new();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let mut n = 0usize;
    let quarantine_dir = std::fs::create_dir_all(quarantine)
        .ok()
        .and_then(|()| crate::beneath::open_dir(quarantine, false).ok());
    let mut take = |at: &Path, dir: &crate::beneath::Dir, name: &std::ffi::OsStr| -> String {
        n += 1;
        let flat: String = at
            .to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "%");
        let dest_name = std::ffi::OsString::from(format!("{stamp}-{n}-{flat}"));
        let is_dir = dir
            .entry_mode(name)
            .is_some_and(|m| m & libc::S_IFMT == libc::S_IFDIR);
        if is_dir {
            // Moving a folder elsewhere rewrites its `..`: it must be changeable.
            let _ = dir.make_entry_changeable(name);
        }
        let moved = quarantine_dir
            .as_ref()
            .is_some_and(|q| dir.move_entry(name, q, &dest_name).is_ok());
        if moved {
            return format!("moved to {}", quarantine.join(&dest_name).display());
        }
        match dir.remove_tree(name, 1_000_000) {
            Ok(()) => "removed".to_string(),
            Err(e) => {
                tracing::error!(path = %at.display(), error = %e, "could not take away what a sandboxed command created");
                format!("COULD NOT be removed ({e})")
            }
        }
    };
    // The folder of `at`: the one held since before the command, else opened now
    // without following a link.
    let open = |at: &Path| -> Result<crate::beneath::Dir, String> {
        let Some(parent) = at.parent() else {
            return Err("no folder".into());
        };
        if let Some(d) = held.and_then(|h| h.get(parent)) {
            return d.try_clone().map_err(|e| e.to_string());
        }
        crate::beneath::open_dir(parent, false).map_err(|e| e.to_string())
    };
    // Links first, outer ones first: what is beneath them is checked through them.
    let mut links: Vec<&(PathBuf, PathBuf)> = links.iter().collect();
    links.sort_by_key(|(at, _)| at.components().count());
    for (at, target) in links {
        let Some(name) = at.file_name() else {
            continue;
        };
        let dir = match open(at) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!(
                    "{} is a link Decode protects; the command changed a folder above it ({e}): check it",
                    at.display()
                ));
                continue;
            }
        };
        let entry = dir.entry_path(name);
        if std::fs::read_link(&entry).ok().as_ref() == Some(target) {
            continue;
        }
        let restore = dir.make_changeable().ok().flatten();
        let how = if dir.entry_mode(name).is_some() {
            take(at, &dir, name)
        } else {
            "gone".to_string()
        };
        let back = std::os::unix::fs::symlink(target, &entry);
        if let Some(mode) = restore {
            dir.restore_mode(mode);
        }
        tracing::warn!(path = %at.display(), "a sandboxed command replaced a protected link: {how}");
        notes.push(match back {
            Ok(()) => format!(
                "{} is a link Decode protects: the command replaced it (what it put there was {how}) and the link to {} is back",
                at.display(),
                target.display()
            ),
            Err(e) => format!(
                "{} is a link Decode protects: the command replaced it and Decode could not put it back ({e})",
                at.display()
            ),
        });
    }
    for at in absent {
        let Some(name) = at.file_name() else {
            continue;
        };
        let dir = match open(at) {
            Ok(d) => d,
            Err(e) => {
                if std::fs::symlink_metadata(at).is_ok() {
                    notes.push(format!(
                        "{} is protected by Decode; the command changed a folder above it ({e}): check it",
                        at.display()
                    ));
                }
                continue;
            }
        };
        // Without search permission on the folder its entries cannot even be seen.
        let restore = dir.make_changeable().ok().flatten();
        if dir.entry_mode(name).is_some() {
            let how = take(at, &dir, name);
            tracing::warn!(path = %at.display(), "a sandboxed command created a protected path: {how}");
            notes.push(format!(
                "{} is protected by Decode and did not exist before: what the command created there was {how}",
                at.display()
            ));
        }
        if let Some(mode) = restore {
            dir.restore_mode(mode);
        }
    }
    notes
}
