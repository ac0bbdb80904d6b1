//! Attributing a turn's changes to it, around each call that may change files
//! (`write`, `edit`, `bash`). [`TurnRecorder::begin`] takes the store's lock and
//! records the state before the call; [`Recording::finish`] records the state after
//! it, adds the difference to the turn, and lets the lock go.
//!
//! - `write` and `edit` know their file: its state before and after (and the
//!   folders the write created on the way) is the change. A file outside the
//!   project is not recorded; a protected one never is.
//! - `bash` can change anything: a snapshot before it and one after it, and what
//!   differs is the command's. What changed before the command (the person's editor,
//!   another program) is taken into the first snapshot and belongs to nobody.
//!
//! Recording never stops a call: when it fails, the call runs, the person is told
//! (a progress note) and the turn keeps a note that its undo may be incomplete.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decode_policy::Tool;
use tokio_util::sync::CancellationToken;

use super::state::{excluded, FileState, RelPath};
use super::{CheckpointError, Checkpoints, StoreLock, TurnKey};
use crate::tools::{ProgressSink, ToolProgress};

/// Records the changes of one turn (the person's prompt `turn` of `session`).
pub struct TurnRecorder {
    store: Arc<Checkpoints>,
    session: String,
    turn: u32,
    prompt: String,
}

/// What was recorded before a call, holding the store's lock until
/// [`Recording::finish`].
pub struct Recording {
    recorder: Arc<TurnRecorder>,
    tool: Tool,
    lock: StoreLock,
    what: Before,
}

enum Before {
    /// `write`/`edit`: the file and the missing folders on its way, with their states.
    Paths(Vec<(RelPath, FileState)>),
    /// `bash`: the snapshot before it is the index.
    Snapshot,
    /// Nothing to record (a file outside the project or protected).
    Nothing,
}

impl TurnRecorder {
    pub fn new(store: Arc<Checkpoints>, session: &str, turn: u32, prompt: &str) -> TurnRecorder {
        let prompt: String = prompt
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(120)
            .collect();
        TurnRecorder {
            store,
            session: session.to_string(),
            turn,
            prompt,
        }
    }

    pub fn session(&self) -> &str {
        &self.session
    }

    pub fn turn(&self) -> u32 {
        self.turn
    }

    pub fn store(&self) -> &Arc<Checkpoints> {
        &self.store
    }

    /// Records the state before a call of `tool` (`path`: the file a `write` or
    /// `edit` changes, its links resolved). `None` when nothing is recorded: another
    /// tool, or recording failed (the person was told).
    pub async fn begin(
        self: &Arc<Self>,
        tool: Tool,
        path: Option<&Path>,
        cancel: &CancellationToken,
        progress: &ProgressSink,
    ) -> Option<Recording> {
        if !matches!(tool, Tool::Write | Tool::Edit | Tool::Bash) {
            return None;
        }
        let this = Arc::clone(self);
        let path = path.map(Path::to_path_buf);
        let cancel = cancel.clone();
        let told_progress = Arc::clone(progress);
        let outcome = tokio::task::spawn_blocking(move || {
            let keep = {
                let cancel = cancel.clone();
                move || !cancel.is_cancelled()
            };
            let mut told = || {
                told_progress(ToolProgress::Note {
                    text: "waiting for another Decode session's command in this project to finish, so that each session's changes are recorded apart\n".into(),
                })
            };
            let lock = match this.store.lock(&keep, &mut told) {
                Ok(Some(l)) => l,
                Ok(None) => return Err(None),
                Err(e) => return Err(Some(e)),
            };
            let what = match this.before(tool, path.as_deref(), &lock) {
                Ok(w) => w,
                Err(e) => return Err(Some(e)),
            };
            Ok(Recording {
                recorder: Arc::clone(&this),
                tool,
                lock,
                what,
            })
        })
        .await;
        match outcome {
            Ok(Ok(r)) => Some(r),
            Ok(Err(None)) => None,
            Ok(Err(Some(e))) => {
                self.failed(tool, &e, Some(Arc::clone(progress)));
                None
            }
            Err(e) => {
                tracing::warn!("checkpoint recording failed: {e}");
                None
            }
        }
    }

    fn before(
        &self,
        tool: Tool,
        path: Option<&Path>,
        lock: &StoreLock,
    ) -> Result<Before, CheckpointError> {
        let root = self.store.project();
        match tool {
            Tool::Bash => {
                let s = self.store.snapshot_locked(lock)?;
                tracing::debug!(
                    entries = s.entries,
                    read = s.read,
                    changed_before = s.changes.len(),
                    ms = s.elapsed.as_millis() as u64,
                    "checkpoint before a command"
                );
                Ok(Before::Snapshot)
            }
            _ => {
                let Some(path) = path else {
                    return Ok(Before::Nothing);
                };
                let Some(rel) = RelPath::of(root, path).filter(|r| !excluded(&r.0)) else {
                    return Ok(Before::Nothing);
                };
                let mut paths = Vec::new();
                // The folders a write creates on its way (the outermost first).
                let mut missing = Vec::new();
                let mut dir = path.parent();
                while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
                    if d.symlink_metadata().is_ok() {
                        break;
                    }
                    missing.push(d.to_path_buf());
                    dir = d.parent();
                }
                for d in missing.into_iter().rev() {
                    if let Some(r) = RelPath::of(root, &d) {
                        paths.push((r, FileState::Absent));
                    }
                }
                let state = self
                    .store
                    .state_of(path)
                    .map_err(CheckpointError::io(rel.shown()))?;
                paths.push((rel, state));
                Ok(Before::Paths(paths))
            }
        }
    }

    /// Tells the person that a call's changes could not be recorded, and notes it in
    /// the turn (its undo may be incomplete).
    fn failed(&self, tool: Tool, e: &CheckpointError, progress: Option<ProgressSink>) {
        tracing::warn!(tool = %tool, session = %self.session, turn = self.turn, "checkpoint failed: {e}");
        let text = format!(
            "Decode could not record a checkpoint for this {} call ({e}): what it changes cannot be undone",
            tool.name()
        );
        if let Some(p) = progress {
            p(ToolProgress::Note {
                text: format!("{text}\n"),
            });
        }
        // The note itself needs the lock: wait for it briefly only.
        let store = Arc::clone(&self.store);
        let (session, turn, prompt) = (self.session.clone(), self.turn, self.prompt.clone());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        std::thread::spawn(move || {
            let keep = move || std::time::Instant::now() < deadline;
            if let Ok(Some(lock)) = store.lock(&keep, &mut || {}) {
                let key = TurnKey {
                    session: &session,
                    turn,
                    prompt: &prompt,
                };
                let _ = store.record(&lock, &key, "", Vec::new(), Some(text));
            }
        });
    }
}

impl Recording {
    /// Records the state after the call and adds what changed to the turn; the lock
    /// goes when this returns. `progress` hears of a failure.
    pub async fn finish(self, progress: &ProgressSink) {
        let progress = Arc::clone(progress);
        let recorder = Arc::clone(&self.recorder);
        let tool = self.tool;
        let result = tokio::task::spawn_blocking(move || self.after()).await;
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => recorder.failed(tool, &e, Some(progress)),
            Err(e) => tracing::warn!("checkpoint recording failed: {e}"),
        }
    }

    fn after(self) -> Result<(), CheckpointError> {
        let r = &self.recorder;
        let root = r.store.project().to_path_buf();
        let changes: Vec<(RelPath, FileState, FileState)> = match self.what {
            Before::Nothing => return Ok(()),
            Before::Snapshot => r
                .store
                .snapshot_locked(&self.lock)?
                .changes
                .into_iter()
                .map(|c| (c.path, c.before, c.after))
                .collect(),
            Before::Paths(paths) => {
                let mut out = Vec::new();
                for (rel, before) in paths {
                    let abs: PathBuf = rel.abs(&root);
                    let after = r
                        .store
                        .state_of(&abs)
                        .map_err(CheckpointError::io(rel.shown()))?;
                    if after != before {
                        out.push((rel, before, after));
                    }
                }
                out
            }
        };
        let n = changes.len();
        let key = TurnKey {
            session: &r.session,
            turn: r.turn,
            prompt: &r.prompt,
        };
        r.store
            .record(&self.lock, &key, self.tool.name(), changes, None)?;
        if n > 0 {
            tracing::debug!(tool = %self.tool, changed = n, turn = r.turn, "changes recorded for the turn");
        }
        Ok(())
    }
}
