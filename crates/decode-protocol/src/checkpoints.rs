//! What the undo dialog and `decode undo` show and send: which turns of a session
//! changed files, what undoing them would do to each file (its diff, or why it is a
//! conflict), and what an undo did. The engine computes these
//! (decode-engine `checkpoints`); the window and the command line only show them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which turns to undo: one turn of a session ("Undo this turn"), or that turn and
/// every later turn of the same session ("Restore to here": the project's files go
/// back to how they were when the turn's prompt was sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UndoScope {
    /// The session id.
    pub session: String,
    /// The turn: the number of the person's prompt in the session, from 1.
    pub turn: u32,
    /// Also every later turn of the session.
    pub later_turns: bool,
}

/// A turn of a session that changed files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TurnCheckpoint {
    pub session: String,
    pub turn: u32,
    /// The first line of the person's prompt.
    pub prompt: String,
    /// Unix milliseconds of the turn's first recorded change.
    pub started: u64,
    /// How many files and folders it changed.
    pub files: u32,
    /// Unix milliseconds of its undo, once undone.
    pub undone: Option<u64>,
    /// Changes the recording could not see (a checkpoint that failed): the undo of
    /// this turn may be incomplete.
    pub problems: Vec<String>,
}

/// What a turn did to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// The turn created it: undo removes it.
    Created,
    /// The turn changed its contents (and maybe its mode): undo puts the old back.
    Modified,
    /// The turn changed only its mode (permissions).
    ModeChanged,
    /// The turn deleted it: undo puts it back.
    Deleted,
    /// The turn replaced a file with a link or folder, or the other way round.
    TypeChanged,
}

/// What a path is (before the turn, or after it when the turn created it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Link,
    Folder,
}

/// Why a file is not put back without the person's say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ConflictReason {
    /// Someone (the person, another program, another session) changed it after the
    /// turn: it is not what the turn left.
    ChangedSince,
    /// Between two of the turns undone, someone else changed it: putting back the
    /// state before the first turn would drop that change too.
    ChangedBetweenTurns,
    /// Its current state could not be read.
    Unreadable,
}

/// A file that undo keeps as it is unless the person chooses to restore it anyway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UndoConflict {
    pub reason: ConflictReason,
    /// One sentence for the person.
    pub detail: String,
    /// What changed since the turn: the diff from what the turn left to what is
    /// there now (none for a binary file, a link or a folder).
    pub diff: Option<String>,
}

/// One path an undo would put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UndoFile {
    /// Relative to the project root.
    pub path: String,
    pub change: FileChange,
    pub kind: EntryKind,
    /// The turns that changed it.
    pub turns: Vec<u32>,
    /// The file's contents are binary: no text diff.
    pub binary: bool,
    /// What the turns did to it: the diff from before the first turn to after the
    /// last (what undo takes back). None for binary files, links and folders.
    pub diff: Option<String>,
    /// The file is already as it was before the turns: nothing to do.
    pub already_restored: bool,
    /// Kept as it is unless the person chooses to restore it anyway.
    pub conflict: Option<UndoConflict>,
}

/// What undoing a scope would do, before anything is changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UndoPlan {
    pub scope: UndoScope,
    /// The turns undone (already undone ones are left out).
    pub turns: Vec<u32>,
    pub files: Vec<UndoFile>,
    /// How many of the files are conflicts.
    pub conflicts: u32,
    /// What the recording of these turns could not see (their undo may be incomplete).
    pub problems: Vec<String>,
}

/// A path undo could not put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UndoFailure {
    pub path: String,
    pub error: String,
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UndoReport {
    pub scope: UndoScope,
    pub turns: Vec<u32>,
    /// Put back as they were before the turns (contents, mode, link target).
    pub restored: Vec<String>,
    /// Created by the turns, removed.
    pub removed: Vec<String>,
    /// Conflicts kept as they are (the person did not choose to restore them).
    pub kept: Vec<String>,
    /// Already as they were before the turns.
    pub unchanged: Vec<String>,
    pub failed: Vec<UndoFailure>,
}
