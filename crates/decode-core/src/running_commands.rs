//! Sandboxed commands running now, in this process or another Decode on the same
//! machine (two windows, a window and `decode run`).
//!
//! Each running command leaves a record in Decode's data folder (read-only inside
//! every sandbox, so a command cannot forge or remove one) naming what it watches:
//! the protected paths that did not exist when it started, and the protected links
//! with their targets then. A record is a file locked for as long as its command
//! runs; one whose lock is free belongs to a Decode that died, and is removed.
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
pub(crate) struct Watched {
    /// The project the command runs in (as resolved).
    pub(crate) root: PathBuf,
    /// Protected paths that did not exist.
    pub(crate) absent: Vec<PathBuf>,
    /// Protected links and their targets.
    pub(crate) links: Vec<(PathBuf, PathBuf)>,
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

/// Leaves the record of a command that is about to start. `None` (logged) when the
/// record cannot be written: the command still runs sandboxed, only another
/// Decode cannot see it.
pub(crate) fn register(watched: &Watched) -> Option<Running> {
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

/// The records of the commands running now (stale ones are removed).
pub(crate) fn live() -> Vec<Watched> {
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
        match file.try_lock_shared() {
            // Nobody holds it: its Decode is gone.
            Ok(()) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let record = std::fs::read(&path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Watched>(&b).ok());
                if let Some(w) = record {
                    out.push(w);
                }
            }
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::debug!(path = %path.display(), error = %e, "cannot check a sandbox record");
            }
        }
    }
    out
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
    let mut cur = Some(path);
    while let Some(a) = cur {
        if let (Some(parent), Some(name)) = (a.parent(), a.file_name()) {
            if let Ok(real_parent) = std::fs::canonicalize(parent) {
                let at = real_parent.join(name);
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
        }
        cur = a.parent();
    }
    None
}
