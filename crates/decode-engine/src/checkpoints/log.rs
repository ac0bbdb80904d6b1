//! The turns of one session and what each changed: `turns/<session>.json` in the
//! store, rewritten atomically after every recorded call. A change keeps the state
//! before the turn's first change of the path and after its last one.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::state::{FileState, Oid, RelPath};

const LOG_VERSION: u32 = 1;

/// One path a turn changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Change {
    pub(crate) path: RelPath,
    pub(crate) before: FileState,
    pub(crate) after: FileState,
    /// The tools whose calls changed it (`write`, `edit`, `bash`).
    pub(crate) tools: Vec<String>,
}

/// One turn: the person's prompt number `turn` in the session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TurnLog {
    pub(crate) turn: u32,
    pub(crate) prompt: String,
    /// Unix milliseconds of its first and last recorded change.
    pub(crate) started: u64,
    pub(crate) updated: u64,
    pub(crate) changes: Vec<Change>,
    /// What the recording could not see (a checkpoint that failed).
    #[serde(default)]
    pub(crate) problems: Vec<String>,
    /// Unix milliseconds of its undo.
    #[serde(default)]
    pub(crate) undone: Option<u64>,
    /// Conflicts its undo kept as they were.
    #[serde(default)]
    pub(crate) kept: Vec<RelPath>,
}

impl TurnLog {
    /// Adds one call's change of a path: the turn keeps the state before its first
    /// change; a path back to where the turn found it is no change at all.
    pub(crate) fn add(&mut self, path: RelPath, before: FileState, after: FileState, tool: &str) {
        match self.changes.iter().position(|c| c.path == path) {
            Some(i) => {
                let c = &mut self.changes[i];
                c.after = after;
                if !c.tools.iter().any(|t| t == tool) {
                    c.tools.push(tool.to_string());
                }
                if c.before == c.after {
                    self.changes.remove(i);
                }
            }
            None if before != after => self.changes.push(Change {
                path,
                before,
                after,
                tools: vec![tool.to_string()],
            }),
            None => {}
        }
    }

    /// The blobs it holds.
    pub(crate) fn oids(&self) -> impl Iterator<Item = Oid> + '_ {
        self.changes
            .iter()
            .flat_map(|c| [c.before.oid(), c.after.oid()])
            .flatten()
    }
}

/// The turns of one session that changed (or tried to change) files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SessionLog {
    pub(crate) version: u32,
    pub(crate) session: String,
    pub(crate) turns: Vec<TurnLog>,
}

impl SessionLog {
    pub(crate) fn new(session: &str) -> SessionLog {
        SessionLog {
            version: LOG_VERSION,
            session: session.to_string(),
            turns: Vec::new(),
        }
    }

    /// The log of `turn`, created when missing.
    pub(crate) fn turn_mut(&mut self, turn: u32, prompt: &str, now: u64) -> &mut TurnLog {
        let i = match self.turns.iter().position(|t| t.turn == turn) {
            Some(i) => i,
            None => {
                self.turns.push(TurnLog {
                    turn,
                    prompt: prompt.to_string(),
                    started: now,
                    updated: now,
                    changes: Vec::new(),
                    problems: Vec::new(),
                    undone: None,
                    kept: Vec::new(),
                });
                self.turns.sort_by_key(|t| t.turn);
                self.turns
                    .iter()
                    .position(|t| t.turn == turn)
                    .unwrap_or_default()
            }
        };
        &mut self.turns[i]
    }
}

/// A session id usable as a file name (what the transcripts use).
pub(crate) fn valid_session(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The session logs folder of a store.
pub(crate) struct Logs {
    dir: PathBuf,
}

impl Logs {
    pub(crate) fn new(dir: PathBuf) -> Logs {
        Logs { dir }
    }

    fn path(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{session}.json"))
    }

    /// The log of `session`; an empty one when there is none. A damaged log is an
    /// error (never silently replaced: it holds what the undo needs).
    pub(crate) fn load(&self, session: &str) -> io::Result<SessionLog> {
        if !valid_session(session) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{session}` is not a session id"),
            ));
        }
        match decode_core::fsutil::read_regular(&self.path(session), 1 << 30) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", self.path(session).display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(SessionLog::new(session)),
            Err(e) => Err(e),
        }
    }

    /// Writes `log` atomically (a temp file renamed over it).
    pub(crate) fn save(&self, log: &SessionLog) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let bytes = serde_json::to_vec(log).map_err(io::Error::other)?;
        write_atomic(&self.path(&log.session), &bytes)
    }

    /// Removes a session's log.
    pub(crate) fn remove(&self, session: &str) -> io::Result<()> {
        match std::fs::remove_file(self.path(session)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Every session log (unreadable ones are skipped with a warning).
    pub(crate) fn all(&self) -> Vec<SessionLog> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let id = name.to_str()?.strip_suffix(".json")?.to_string();
                match self.load(&id) {
                    Ok(l) => Some(l),
                    Err(err) => {
                        tracing::warn!(session = %id, "unreadable checkpoint log: {err}");
                        None
                    }
                }
            })
            .collect()
    }
}

/// Writes `bytes` to `path` through a temp file beside it, synced, then renamed.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(n: u8) -> FileState {
        FileState::File {
            oid: Oid([n; 20]),
            mode: 0o644,
        }
    }

    #[test]
    fn a_turn_keeps_the_first_before_and_the_last_after() {
        let mut log = SessionLog::new("s");
        let t = log.turn_mut(1, "p", 0);
        let p = RelPath(b"a".to_vec());
        t.add(p.clone(), file(1), file(2), "edit");
        t.add(p.clone(), file(2), file(3), "bash");
        assert_eq!(t.changes.len(), 1);
        assert_eq!(t.changes[0].before, file(1));
        assert_eq!(t.changes[0].after, file(3));
        assert_eq!(t.changes[0].tools, ["edit", "bash"]);
        // Created and deleted in the same turn: nothing to undo.
        let q = RelPath(b"tmp".to_vec());
        t.add(q.clone(), FileState::Absent, file(4), "write");
        t.add(q, file(4), FileState::Absent, "bash");
        assert_eq!(t.changes.len(), 1);
    }
}
