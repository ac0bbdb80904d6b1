//! Checkpoints: undo what a turn changed (docs/checkpoints.md).
//!
//! Auto mode is only comfortable when every change can be taken back. Each project
//! has a checkpoint store of its own in Decode's data folder
//! (`<data>/checkpoints/<key>/`, never the project's `.git`): a git object database
//! of file contents ([`objects`]), a stat index of the project's files at the last
//! checkpoint ([`index`]), and per session the turns and what each changed
//! ([`log`]).
//!
//! - Before a `write` or `edit`, the file's state is recorded; after it, its new
//!   state: the change is the turn's. Before a `bash` command, a snapshot brings the
//!   index up to the project's files (what changed since, someone else did); after
//!   it, a second snapshot finds exactly what the command changed ([`recorder`]).
//! - Every recording holds the store's lock (a file lock, so across processes too):
//!   two sessions on one project never record at once, so one session's command
//!   never takes in another session's changes. A call waits for another session's
//!   running command and says so.
//! - Undo ([`undo`]) puts back exactly the paths the turns changed, as they were
//!   before the turns (contents, mode, link target; created ones removed, deleted
//!   ones back), and never overwrites a path that is no longer what the turns left:
//!   that is a conflict the person decides.
//! - Turns older than 30 days are pruned with the contents only they held
//!   ([`prune`]); stores of projects unused that long go entirely.

pub mod index;
mod log;
mod objects;
pub mod prune;
pub mod recorder;
mod restore;
mod state;
pub mod undo;

use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use decode_protocol::TurnCheckpoint;

pub use index::MAX_ENTRIES;
pub use recorder::TurnRecorder;
pub use state::MAX_FILE_BYTES;

use index::{Index, Snapshot, SnapshotError};
use log::{Logs, SessionLog};
use objects::Objects;
use state::{FileState, RelPath};

/// How long checkpoints are kept.
pub const KEEP_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// A checkpoint operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{0}")]
    TooMany(String),
    #[error("{0}")]
    NotFound(String),
    #[error("the undo was stopped before it started")]
    Cancelled,
}

impl CheckpointError {
    fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> CheckpointError {
        let what = what.into();
        move |source| CheckpointError::Io { what, source }
    }
}

impl From<SnapshotError> for CheckpointError {
    fn from(e: SnapshotError) -> CheckpointError {
        match e {
            SnapshotError::TooMany => CheckpointError::TooMany(e.to_string()),
            SnapshotError::Store { .. } => CheckpointError::Io {
                what: "the checkpoint store".into(),
                source: io::Error::other(e.to_string()),
            },
        }
    }
}

/// What recording one checkpoint cost (for the bench and the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordStats {
    /// Paths recorded.
    pub entries: usize,
    /// Files read because their stat data changed.
    pub read: usize,
    /// Paths that changed since the last checkpoint.
    pub changed: usize,
    pub elapsed: Duration,
}

/// Unix milliseconds now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The index file's identity, to know when another process rewrote it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: i64,
    mtime_ns: i64,
    ino: u64,
}

fn stamp_of(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: m.len(),
        mtime: m.mtime(),
        mtime_ns: m.mtime_nsec(),
        ino: m.ino(),
    })
}

/// Which turn a recording belongs to: the person's prompt `turn` of `session`.
#[derive(Clone, Copy)]
pub(crate) struct TurnKey<'a> {
    pub(crate) session: &'a str,
    pub(crate) turn: u32,
    pub(crate) prompt: &'a str,
}

/// The held lock of a store; released when dropped.
pub(crate) struct StoreLock {
    _file: File,
}

/// One project's checkpoint store (see the module docs).
pub struct Checkpoints {
    project: PathBuf,
    dir: PathBuf,
    objects: Objects,
    logs: Logs,
    /// The index as last read or written by this process, with the file's stamp.
    index: Mutex<Option<(Index, Option<Stamp>)>>,
}

/// The folder of all checkpoint stores in a data folder.
pub fn stores_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("checkpoints")
}

/// The store folder of `project` (its canonical path) in `data_dir`.
pub fn store_dir(data_dir: &Path, project: &Path) -> PathBuf {
    let id = Objects::id_of(project.as_os_str().as_bytes())
        .map(|o| o.hex())
        .unwrap_or_default();
    stores_dir(data_dir).join(&id[..id.len().min(20)])
}

impl Checkpoints {
    /// Opens (creating it when missing) the checkpoint store of `project` in Decode's
    /// data folder `data_dir`. The store is an ordinary (bare) git repository of its
    /// own: `GIT_DIR=<store> git cat-file -p <id>` shows a stored content.
    pub fn open(data_dir: &Path, project: &Path) -> Result<Checkpoints, CheckpointError> {
        let project = std::fs::canonicalize(project)
            .map_err(CheckpointError::io(format!("{}", project.display())))?;
        let dir = store_dir(data_dir, &project);
        let err = CheckpointError::io(format!("the checkpoint store {}", dir.display()));
        let fresh = !dir.join("objects").is_dir();
        (|| -> io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            if fresh {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
                std::fs::create_dir_all(dir.join("refs"))?;
                // What makes it a bare repository to git's own tools.
                std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n")?;
                std::fs::write(
                    dir.join("config"),
                    "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
                )?;
                std::fs::write(
                    dir.join("description"),
                    "Decode's checkpoints of one project (see the file `project`).\n",
                )?;
            }
            let record = dir.join("project");
            if decode_core::fsutil::read_regular(&record, 1 << 20)
                .ok()
                .as_deref()
                != Some(project.as_os_str().as_bytes())
            {
                std::fs::write(&record, project.as_os_str().as_bytes())?;
            }
            Ok(())
        })()
        .map_err(err)?;
        let objects = Objects::open(&dir.join("objects")).map_err(CheckpointError::io(format!(
            "the checkpoint store {}",
            dir.display()
        )))?;
        Ok(Checkpoints {
            logs: Logs::new(dir.join("turns")),
            project,
            dir,
            objects,
            index: Mutex::new(None),
        })
    }

    /// The project root (canonical).
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The store folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes the store's lock, waiting for another holder (another session's running
    /// command) as long as `keep_waiting` says; `waiting` is called once when it has
    /// to wait. `None`: waiting was given up.
    pub(crate) fn lock(
        &self,
        keep_waiting: &dyn Fn() -> bool,
        waiting: &mut dyn FnMut(),
    ) -> Result<Option<StoreLock>, CheckpointError> {
        let path = self.dir.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(CheckpointError::io(format!("{}", path.display())))?;
        let started = Instant::now();
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(StoreLock { _file: file })),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    // A filesystem without locks: go on without (as the transcripts do).
                    tracing::debug!(error = %e, "cannot lock the checkpoint store");
                    return Ok(Some(StoreLock { _file: file }));
                }
            }
            if !keep_waiting() {
                return Ok(None);
            }
            if !told && started.elapsed() > Duration::from_millis(200) {
                told = true;
                waiting();
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Takes the lock, waiting as long as needed.
    pub(crate) fn lock_wait(&self) -> Result<StoreLock, CheckpointError> {
        self.lock(&|| true, &mut || {})?
            .ok_or(CheckpointError::Cancelled)
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join("index")
    }

    /// The index (the caller holds the lock): this process's copy when the file did
    /// not change since, else read again.
    fn take_index(&self) -> Index {
        let path = self.index_path();
        let now = stamp_of(&path);
        let mut cached = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((index, stamp)) = cached.take() {
            if stamp == now {
                return index;
            }
        }
        match decode_core::fsutil::read_regular(&path, 1 << 30) {
            Ok(bytes) => Index::decode(&bytes).unwrap_or_else(|| {
                tracing::warn!(path = %path.display(), "the checkpoint index is damaged; every file is read again");
                Index::default()
            }),
            Err(_) => Index::default(),
        }
    }

    /// Writes the index (when `changed`) and keeps it for the next snapshot.
    fn put_index(&self, index: Index, changed: bool) -> Result<(), CheckpointError> {
        let path = self.index_path();
        if changed {
            log::write_atomic(&path, &index.encode())
                .map_err(CheckpointError::io(format!("{}", path.display())))?;
        }
        *self.index.lock().unwrap_or_else(|e| e.into_inner()) = Some((index, stamp_of(&path)));
        Ok(())
    }

    /// A snapshot (the caller holds the lock): the index brought up to the disk.
    pub(crate) fn snapshot_locked(&self, _lock: &StoreLock) -> Result<Snapshot, CheckpointError> {
        let mut index = self.take_index();
        let result = index::snapshot(&self.project, &self.objects, &mut index);
        match result {
            Ok(s) => {
                let changed = !s.changes.is_empty() || s.read > 0;
                self.put_index(index, changed)?;
                Ok(s)
            }
            Err(e) => {
                // The copy may be half updated: read the file again next time.
                Err(e.into())
            }
        }
    }

    /// Records a checkpoint of the project now (taking the lock), e.g. before a
    /// turn; returns what it cost.
    pub fn record_now(&self) -> Result<RecordStats, CheckpointError> {
        let lock = self.lock_wait()?;
        let s = self.snapshot_locked(&lock)?;
        Ok(RecordStats {
            entries: s.entries,
            read: s.read,
            changed: s.changes.len(),
            elapsed: s.elapsed,
        })
    }

    /// The state of one path now, its contents stored (the caller holds the lock).
    pub(crate) fn state_of(&self, path: &Path) -> io::Result<FileState> {
        state::read_state(&self.objects, path, None)
    }

    /// Adds changes of one call to a session's turn (the caller holds the lock).
    pub(crate) fn record(
        &self,
        _lock: &StoreLock,
        key: &TurnKey<'_>,
        tool: &str,
        changes: Vec<(RelPath, FileState, FileState)>,
        problem: Option<String>,
    ) -> Result<(), CheckpointError> {
        if changes.is_empty() && problem.is_none() {
            return Ok(());
        }
        let TurnKey {
            session,
            turn,
            prompt,
        } = *key;
        let err = || CheckpointError::io(format!("the checkpoint log of session {session}"));
        let mut log = self.logs.load(session).map_err(err())?;
        let now = now_ms();
        let t = log.turn_mut(turn, prompt, now);
        t.updated = now;
        for (path, before, after) in changes {
            t.add(path, before, after, tool);
        }
        if let Some(p) = problem {
            if !t.problems.contains(&p) {
                t.problems.push(p);
            }
        }
        self.logs.save(&log).map_err(err())
    }

    /// The turns of `session` (or of every session, newest first) that changed files.
    pub fn turns(&self, session: Option<&str>) -> Result<Vec<TurnCheckpoint>, CheckpointError> {
        let logs: Vec<SessionLog> = match session {
            Some(s) => vec![self.logs.load(s).map_err(CheckpointError::io(format!(
                "the checkpoint log of session {s}"
            )))?],
            None => self.logs.all(),
        };
        let mut out: Vec<TurnCheckpoint> = logs
            .iter()
            .flat_map(|l| {
                l.turns
                    .iter()
                    .filter(|t| !t.changes.is_empty() || !t.problems.is_empty())
                    .map(|t| TurnCheckpoint {
                        session: l.session.clone(),
                        turn: t.turn,
                        prompt: t.prompt.clone(),
                        started: t.started,
                        files: t.changes.len() as u32,
                        undone: t.undone,
                        problems: t.problems.clone(),
                    })
            })
            .collect();
        out.sort_by(|a, b| b.started.cmp(&a.started).then(b.turn.cmp(&a.turn)));
        Ok(out)
    }

    /// The newest turn that changed files and is not undone: of `session`, or of the
    /// session that changed files last.
    pub fn last_undoable(
        &self,
        session: Option<&str>,
    ) -> Result<Option<(String, u32)>, CheckpointError> {
        Ok(self
            .turns(session)?
            .into_iter()
            .filter(|t| t.undone.is_none() && t.files > 0)
            .max_by_key(|t| (t.started, t.turn))
            .map(|t| (t.session, t.turn)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_store_per_project_under_the_data_folder() {
        let data = Path::new("/data/decode");
        let a = store_dir(data, Path::new("/work/a"));
        let b = store_dir(data, Path::new("/work/b"));
        assert_ne!(a, b);
        assert!(a.starts_with("/data/decode/checkpoints"));
        assert_eq!(a, store_dir(data, Path::new("/work/a")));
    }
}
