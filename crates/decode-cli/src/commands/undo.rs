//! `decode undo [--project DIR] [--session ID] [--turn N] [--later] [--dry-run]
//! [--overwrite PATH]… [--list] [--json]` (docs/checkpoints.md; README): what a turn
//! changed, its diff and its conflicts, then the files put back as they were before
//! it. Exit 0: undone (or shown, with --dry-run or --list); 1: nothing to undo, or
//! some files were kept (conflicts) or could not be restored; 2: a usage error (a
//! session or turn that changed nothing here).

use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_engine::checkpoints::{CheckpointError, Checkpoints};
use decode_protocol::{FileChange, TurnCheckpoint, UndoFile, UndoPlan, UndoReport, UndoScope};

use crate::cli::UndoArgs;
use crate::commands::project_dir;
use crate::output;

pub fn run(args: UndoArgs, dirs: &Dirs) -> ExitCode {
    let project = match project_dir(args.project.as_deref()) {
        Ok(p) => p,
        Err(line) => return output::usage_error(&line),
    };
    let store = match Checkpoints::open(&dirs.data, &project) {
        Ok(s) => s,
        Err(e) => return failure(&e),
    };
    if args.list {
        return list(&store, args.session.as_deref(), args.json);
    }
    let (session, turn) = match (&args.session, args.turn) {
        (Some(s), Some(t)) => (s.clone(), t),
        (session, turn) => {
            let found = match turn {
                // A turn without a session: of the session that changed files last.
                Some(t) => store.turns(None).map(|all| {
                    all.into_iter()
                        .max_by_key(|x| x.started)
                        .map(|x| (x.session, t))
                }),
                None => store.last_undoable(session.as_deref()),
            };
            match found {
                Ok(Some(st)) => st,
                Ok(None) => {
                    output::err(&format!(
                        "decode: nothing to undo in {}: no turn{} changed its files (or every such turn was undone)",
                        project.display(),
                        session
                            .as_deref()
                            .map(|s| format!(" of session {s}"))
                            .unwrap_or_default()
                    ));
                    return ExitCode::FAILURE;
                }
                Err(e) => return failure(&e),
            }
        }
    };
    let scope = UndoScope {
        session,
        turn,
        later_turns: args.later,
    };
    let plan = match store.plan_undo(&scope) {
        Ok(p) => p,
        Err(e) => return failure(&e),
    };
    for o in &args.overwrite {
        if !plan
            .files
            .iter()
            .any(|f| f.path == *o && f.conflict.is_some())
        {
            output::err(&format!(
                "decode: warning: --overwrite {o}: not a conflict of this undo (ignored)"
            ));
        }
    }
    if args.dry_run {
        if args.json {
            output::json(&serde_json::to_string(&plan).unwrap_or_default());
        } else {
            print_plan(&plan);
            output::out("dry run: nothing was changed");
        }
        return ExitCode::SUCCESS;
    }
    let report = match store.undo(&scope, &args.overwrite) {
        Ok(r) => r,
        Err(e) => return failure(&e),
    };
    if args.json {
        let both = serde_json::json!({"plan": plan, "report": report});
        output::json(&both.to_string());
    } else {
        print_plan(&plan);
        print_report(&report);
    }
    if report.kept.is_empty() && report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn failure(e: &CheckpointError) -> ExitCode {
    match e {
        CheckpointError::NotFound(_) => output::usage_error(&format!("decode: {e}")),
        _ => {
            output::err(&format!("decode: {e}"));
            ExitCode::FAILURE
        }
    }
}

fn list(store: &Checkpoints, session: Option<&str>, json: bool) -> ExitCode {
    let turns: Vec<TurnCheckpoint> = match store.turns(session) {
        Ok(t) => t,
        Err(e) => return failure(&e),
    };
    if json {
        output::json(&serde_json::to_string(&turns).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    if turns.is_empty() {
        output::out("no turn changed files in this project");
    }
    for t in turns {
        let state = match t.undone {
            Some(_) => " (undone)",
            None => "",
        };
        output::out(&format!(
            "{}  turn {:>3}  {:>4} file{}{}  {}",
            t.session,
            t.turn,
            t.files,
            if t.files == 1 { " " } else { "s" },
            state,
            t.prompt
        ));
    }
    ExitCode::SUCCESS
}

fn word(c: FileChange) -> &'static str {
    match c {
        FileChange::Created => "created",
        FileChange::Modified => "modified",
        FileChange::ModeChanged => "mode changed",
        FileChange::Deleted => "deleted",
        FileChange::TypeChanged => "type changed",
    }
}

fn print_plan(plan: &UndoPlan) {
    let turns = plan
        .turns
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let head = if plan.scope.later_turns {
        format!(
            "restore to before turn {} of session {} (turns {turns})",
            plan.scope.turn, plan.scope.session
        )
    } else {
        format!(
            "undo turn {} of session {}",
            plan.scope.turn, plan.scope.session
        )
    };
    output::out(&format!(
        "{head}: {} path{}, {} conflict{}",
        plan.files.len(),
        if plan.files.len() == 1 { "" } else { "s" },
        plan.conflicts,
        if plan.conflicts == 1 { "" } else { "s" }
    ));
    for p in &plan.problems {
        output::out(&format!("  note: {p}"));
    }
    for f in &plan.files {
        output::out(&format!("  {:<12} {}{}", word(f.change), f.path, status(f)));
        if let Some(c) = &f.conflict {
            output::out(&format!("      conflict: {}", c.detail));
        }
    }
    for f in plan.files.iter().filter(|f| !f.already_restored) {
        if let Some(d) = &f.diff {
            output::out(d.trim_end());
        } else if f.binary {
            output::out(&format!("(binary file {}: no diff)", f.path));
        }
        if let Some(d) = f.conflict.as_ref().and_then(|c| c.diff.as_ref()) {
            output::out(&format!("changed since the turn ({}):", f.path));
            output::out(d.trim_end());
        }
    }
}

fn status(f: &UndoFile) -> &'static str {
    if f.already_restored {
        "  (already as before)"
    } else if f.conflict.is_some() {
        "  (conflict: kept unless --overwrite)"
    } else {
        ""
    }
}

fn print_report(r: &UndoReport) {
    output::out(&format!(
        "undone: {} restored, {} removed, {} kept, {} failed",
        r.restored.len(),
        r.removed.len(),
        r.kept.len(),
        r.failed.len()
    ));
    for k in &r.kept {
        output::out(&format!(
            "  kept {k}: it changed after the turn (restore it anyway with --overwrite {k})"
        ));
    }
    for f in &r.failed {
        output::out(&format!("  could not restore {}: {}", f.path, f.error));
    }
}
