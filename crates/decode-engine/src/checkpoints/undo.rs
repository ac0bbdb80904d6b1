//! Undo: which paths the turns of a scope changed, what each was before the first
//! of them and after the last, what it is now, and putting it back.
//!
//! A path is put back only when it is exactly what the turns left. Anything else is
//! a conflict, kept as it is unless the person names it to restore anyway: a path
//! changed since the turns (by the person, another program, another session), or
//! changed by someone else between two of the turns undone. Nothing is overwritten
//! silently. [`Checkpoints::plan_undo`] changes nothing; [`Checkpoints::undo`]
//! plans again under the store's lock and applies that plan. A turn is marked undone
//! once everything it changed is back; while a conflict is kept it can be undone
//! again (with the person's choice), what is back showing as already restored.

use std::collections::BTreeMap;

use decode_protocol::{
    ConflictReason, EntryKind, FileChange, UndoConflict, UndoFailure, UndoFile, UndoPlan,
    UndoReport, UndoScope,
};

use super::log::SessionLog;
use super::restore;
use super::state::{peek_state, FileState, RelPath};
use super::{now_ms, CheckpointError, Checkpoints};
use crate::tools::files::{looks_binary, unified_diff};

/// The longest diff shown for one file; a longer one is cut with a note.
pub const MAX_DIFF_CHARS: usize = 200_000;

/// A session's log, the turns undone, their paths and their recording problems.
type Collected = (SessionLog, Vec<u32>, Vec<Item>, Vec<String>);

/// One path of a plan.
struct Item {
    rel: RelPath,
    turns: Vec<u32>,
    /// Before the first turn.
    target: FileState,
    /// After the last turn.
    expected: FileState,
    /// Someone else changed it between two of the turns.
    between: bool,
    /// Now (an error: unreadable).
    current: Result<FileState, String>,
}

impl Item {
    fn action(&self) -> Action {
        match &self.current {
            Ok(c) if *c == self.target => Action::Nothing,
            Ok(c) if *c == self.expected && !self.between => Action::Restore,
            Ok(c) if *c == self.expected => Action::Conflict(ConflictReason::ChangedBetweenTurns),
            Ok(_) => Action::Conflict(ConflictReason::ChangedSince),
            Err(_) => Action::Conflict(ConflictReason::Unreadable),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Nothing,
    Restore,
    Conflict(ConflictReason),
}

fn kind_of(s: &FileState) -> Option<EntryKind> {
    match s {
        FileState::Absent => None,
        FileState::File { .. } => Some(EntryKind::File),
        FileState::Link { .. } => Some(EntryKind::Link),
        FileState::Dir { .. } => Some(EntryKind::Folder),
    }
}

fn change_of(target: &FileState, expected: &FileState) -> FileChange {
    match (target, expected) {
        (FileState::Absent, _) => FileChange::Created,
        (_, FileState::Absent) => FileChange::Deleted,
        (FileState::File { oid: a, .. }, FileState::File { oid: b, .. }) if a == b => {
            FileChange::ModeChanged
        }
        (FileState::Dir { .. }, FileState::Dir { .. }) => FileChange::ModeChanged,
        (a, b) if kind_of(a) == kind_of(b) => FileChange::Modified,
        _ => FileChange::TypeChanged,
    }
}

impl Checkpoints {
    /// The paths the turns of `scope` changed, merged in turn order.
    fn collect(&self, scope: &UndoScope) -> Result<Collected, CheckpointError> {
        let log = self.logs.load(&scope.session).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => CheckpointError::NotFound(e.to_string()),
            _ => CheckpointError::Io {
                what: format!("the checkpoint log of session {}", scope.session),
                source: e,
            },
        })?;
        let first = log.turns.iter().find(|t| t.turn == scope.turn);
        if scope.later_turns {
            // "Restore to here" on a turn that changed nothing undoes the later ones.
            if !log
                .turns
                .iter()
                .any(|t| t.turn >= scope.turn && t.undone.is_none())
            {
                return Err(CheckpointError::NotFound(format!(
                    "no turn of session {} from turn {} on changed files in this project that is not undone (nothing to restore)",
                    scope.session, scope.turn
                )));
            }
        } else {
            match first {
                None => {
                    return Err(CheckpointError::NotFound(format!(
                        "turn {} of session {} changed no files in this project (nothing to undo)",
                        scope.turn, scope.session
                    )))
                }
                Some(t) if t.undone.is_some() => {
                    return Err(CheckpointError::NotFound(format!(
                        "turn {} of session {} was already undone",
                        scope.turn, scope.session
                    )))
                }
                Some(_) => {}
            }
        }
        let mut turns = Vec::new();
        let mut problems = Vec::new();
        let mut items: BTreeMap<RelPath, Item> = BTreeMap::new();
        for t in log.turns.iter().filter(|t| {
            t.undone.is_none()
                && (t.turn == scope.turn || (scope.later_turns && t.turn > scope.turn))
        }) {
            turns.push(t.turn);
            problems.extend(t.problems.iter().map(|p| format!("turn {}: {p}", t.turn)));
            for c in &t.changes {
                match items.get_mut(&c.path) {
                    Some(item) => {
                        if item.expected != c.before {
                            item.between = true;
                        }
                        item.expected = c.after.clone();
                        item.turns.push(t.turn);
                    }
                    None => {
                        items.insert(
                            c.path.clone(),
                            Item {
                                rel: c.path.clone(),
                                turns: vec![t.turn],
                                target: c.before.clone(),
                                expected: c.after.clone(),
                                between: false,
                                current: Ok(FileState::Absent),
                            },
                        );
                    }
                }
            }
        }
        let root = self.project.clone();
        let mut out: Vec<Item> = items
            .into_values()
            .filter(|i| i.target != i.expected || i.between)
            .collect();
        for item in &mut out {
            item.current = peek_state(&item.rel.abs(&root)).map_err(|e| e.to_string());
        }
        Ok((log, turns, out, problems))
    }

    /// What undoing `scope` would do, file by file, without changing anything.
    pub fn plan_undo(&self, scope: &UndoScope) -> Result<UndoPlan, CheckpointError> {
        let (_, turns, items, problems) = self.collect(scope)?;
        Ok(self.plan_of(scope, turns, &items, problems))
    }

    fn plan_of(
        &self,
        scope: &UndoScope,
        turns: Vec<u32>,
        items: &[Item],
        problems: Vec<String>,
    ) -> UndoPlan {
        let files: Vec<UndoFile> = items.iter().map(|i| self.file_of(i)).collect();
        UndoPlan {
            scope: scope.clone(),
            turns,
            conflicts: files.iter().filter(|f| f.conflict.is_some()).count() as u32,
            files,
            problems,
        }
    }

    /// The text of a stored state for a diff: `Some(None)` when binary.
    fn text_of(&self, s: &FileState) -> Option<Option<String>> {
        match s {
            FileState::Absent => Some(Some(String::new())),
            FileState::File { oid, .. } => {
                let bytes = self.objects.get(oid).ok()?;
                if looks_binary(&bytes) {
                    return Some(None);
                }
                Some(String::from_utf8(bytes).ok())
            }
            _ => None,
        }
    }

    fn diff(
        &self,
        shown: &str,
        from: &FileState,
        to_text: Option<Option<String>>,
    ) -> (bool, Option<String>) {
        let (Some(a), Some(b)) = (self.text_of(from), to_text) else {
            return (false, None);
        };
        match (a, b) {
            (Some(a), Some(b)) => {
                let old = (!from.is_absent()).then_some(a.as_str());
                let d = unified_diff(shown, old, &b).map(|mut d| {
                    if crate::tools::files::truncate_chars(&mut d, MAX_DIFF_CHARS) {
                        d.push_str("\n… (the diff was shortened)\n");
                    }
                    d
                });
                (false, d)
            }
            _ => (true, None),
        }
    }

    fn file_of(&self, i: &Item) -> UndoFile {
        let shown = i.rel.shown();
        let change = change_of(&i.target, &i.expected);
        let kind = kind_of(&i.target)
            .or_else(|| kind_of(&i.expected))
            .unwrap_or(EntryKind::File);
        let (binary, diff) = self.diff(&shown, &i.target, self.text_of(&i.expected));
        let action = i.action();
        let conflict = match action {
            Action::Conflict(reason) => {
                let detail = match reason {
                    ConflictReason::ChangedSince => format!(
                        "{shown} changed after the turn{} (by you, another program or another session): it is kept as it is unless you choose to restore it",
                        if i.turns.len() == 1 { "" } else { "s" }
                    ),
                    ConflictReason::ChangedBetweenTurns => format!(
                        "{shown} was changed by someone else between turns {}: restoring it would drop that change too, so it is kept unless you choose otherwise",
                        i.turns.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    ),
                    ConflictReason::Unreadable => format!(
                        "{shown} cannot be read now ({}): it is kept as it is",
                        i.current.as_ref().err().cloned().unwrap_or_default()
                    ),
                };
                let now_text = match &i.current {
                    Ok(FileState::File { .. }) => {
                        std::fs::read(i.rel.abs(&self.project)).ok().map(|b| {
                            (!looks_binary(&b))
                                .then(|| String::from_utf8(b).ok())
                                .flatten()
                        })
                    }
                    Ok(FileState::Absent) => Some(Some(String::new())),
                    _ => None,
                };
                let diff = if reason == ConflictReason::ChangedSince {
                    self.diff(&shown, &i.expected, now_text).1
                } else {
                    None
                };
                Some(UndoConflict {
                    reason,
                    detail,
                    diff,
                })
            }
            _ => None,
        };
        UndoFile {
            path: shown,
            change,
            kind,
            turns: i.turns.clone(),
            binary,
            diff,
            already_restored: action == Action::Nothing,
            conflict,
        }
    }

    /// Undoes `scope`: every path the turns changed goes back to what it was before
    /// them, except conflicts, which stay as they are unless named in `overwrite`
    /// (paths as the plan shows them). The turns are then marked undone.
    pub fn undo(
        &self,
        scope: &UndoScope,
        overwrite: &[String],
    ) -> Result<UndoReport, CheckpointError> {
        let _lock = self.lock_wait()?;
        let (mut log, turns, items, _) = self.collect(scope)?;
        let root = self.project.clone();
        let mut report = UndoReport {
            scope: scope.clone(),
            turns: turns.clone(),
            restored: Vec::new(),
            removed: Vec::new(),
            kept: Vec::new(),
            unchanged: Vec::new(),
            failed: Vec::new(),
        };
        let mut kept_paths = Vec::new();
        let mut todo: Vec<&Item> = Vec::new();
        for i in &items {
            let shown = i.rel.shown();
            match i.action() {
                Action::Nothing => report.unchanged.push(shown),
                Action::Restore => todo.push(i),
                Action::Conflict(ConflictReason::Unreadable) => {
                    report.kept.push(shown);
                    kept_paths.push(i.rel.clone());
                }
                Action::Conflict(_) if overwrite.contains(&shown) => todo.push(i),
                Action::Conflict(_) => {
                    report.kept.push(shown);
                    kept_paths.push(i.rel.clone());
                }
            }
        }
        let mut failed: Vec<RelPath> = Vec::new();
        let fail =
            |i: &Item, e: std::io::Error, failed: &mut Vec<RelPath>, report: &mut UndoReport| {
                tracing::warn!(path = %i.rel.shown(), "undo could not restore: {e}");
                failed.push(i.rel.clone());
                report.failed.push(UndoFailure {
                    path: i.rel.shown(),
                    error: e.to_string(),
                });
            };
        // 1. What is there and of another kind than before goes, deepest first.
        let mut removals: Vec<&Item> = todo
            .iter()
            .copied()
            .filter(|i| {
                let now = i.current.as_ref().ok().and_then(kind_of);
                now.is_some() && now != kind_of(&i.target)
            })
            .collect();
        removals.sort_by_key(|i| std::cmp::Reverse(i.rel.depth()));
        for i in removals {
            let is_dir = matches!(i.current, Ok(FileState::Dir { .. }));
            if let Err(e) = restore::remove(&root, &i.rel, is_dir) {
                fail(i, e, &mut failed, &mut report);
            } else if i.target.is_absent() {
                report.removed.push(i.rel.shown());
            }
        }
        // 2. Folders, outermost first; 3. files and links.
        let mut puts: Vec<&Item> = todo
            .iter()
            .copied()
            .filter(|i| !i.target.is_absent() && !failed.contains(&i.rel))
            .collect();
        puts.sort_by_key(|i| (!matches!(i.target, FileState::Dir { .. }), i.rel.depth()));
        for i in puts {
            let result = match &i.target {
                FileState::Dir { mode } => restore::put_dir(&root, &i.rel, *mode),
                FileState::File { oid, mode } => self
                    .objects
                    .get(oid)
                    .and_then(|bytes| restore::put_file(&root, &i.rel, &bytes, *mode)),
                FileState::Link { oid } => self
                    .objects
                    .get(oid)
                    .and_then(|target| restore::put_link(&root, &i.rel, &target)),
                FileState::Absent => Ok(()),
            };
            match result {
                Ok(()) => report.restored.push(i.rel.shown()),
                Err(e) => fail(i, e, &mut failed, &mut report),
            }
        }
        // A turn counts as undone once all of it is back; with a conflict kept (or a
        // failure) it can be undone again, and what is back shows as such.
        let now = now_ms();
        let complete = failed.is_empty() && kept_paths.is_empty();
        for t in log.turns.iter_mut().filter(|t| turns.contains(&t.turn)) {
            if complete {
                t.undone = Some(now);
            }
            t.kept = kept_paths
                .iter()
                .filter(|p| t.changes.iter().any(|c| c.path == **p))
                .cloned()
                .collect();
        }
        {
            self.logs.save(&log).map_err(CheckpointError::io(format!(
                "the checkpoint log of session {}",
                scope.session
            )))?;
        }
        tracing::info!(
            session = %scope.session,
            turns = ?turns,
            restored = report.restored.len(),
            removed = report.removed.len(),
            kept = report.kept.len(),
            failed = report.failed.len(),
            "undo"
        );
        Ok(report)
    }
}
