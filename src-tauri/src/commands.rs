//! The commands of the chat, its decisions, the project and its sessions: one-line
//! adapters over the [`Workbench`](decode_engine::workbench::Workbench) (the commands
//! of the screens around the chat are in `screens.rs`). Every command the page may
//! call is declared once in decode-protocol (`wire.rs`); [`register`] gives Tauri the
//! same list, which a test of this crate checks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decode_core::projects::ProjectStore;
use decode_core::state::{parse_mode, Snapshot};
use decode_engine::channel::AnswerRefused;
use decode_engine::session::SessionStore;
use decode_engine::workbench::{Workbench, WorkbenchError};
use decode_engine::workspace;
use decode_policy::Call;
use decode_protocol::{
    ChatStatus, DecisionAnswer, DecisionId, DecisionRequest, ErrorKind, IpcError, LoopEvent,
    PendingDecision, RecentProject, RuleCheck, SessionSummary, SessionView, StreamEvent,
    TurnCheckpoint, UndoPlan, UndoReport,
};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State, Wry};

use crate::state::{exe, AppState};

/// Gives `builder` every command of the page (the list of decode-protocol `wire.rs`).
pub(crate) fn register(builder: tauri::Builder<Wry>) -> tauri::Builder<Wry> {
    builder.invoke_handler(tauri::generate_handler![
        get_status,
        set_mode,
        cycle_mode,
        select_agent,
        get_chat,
        get_history,
        send_prompt,
        stop_prompt,
        pending_decisions,
        answer_decision,
        check_rules,
        open_link,
        recent_projects,
        forget_project,
        open_project_path,
        choose_project,
        new_chat,
        crate::screens::trust_preview,
        crate::screens::set_trust,
        crate::screens::dismiss_trust,
        crate::screens::project_rules,
        crate::screens::add_rule,
        crate::screens::remove_rule,
        crate::screens::rule_warning,
        crate::screens::set_settings_list,
        crate::screens::test_call,
        crate::screens::drop_session_rule,
        crate::screens::mcp_servers,
        crate::screens::mcp_set_enabled,
        crate::screens::provider_settings,
        crate::screens::save_provider,
        crate::screens::key_status,
        crate::screens::set_api_key,
        crate::screens::delete_api_key,
        crate::screens::test_connection,
        list_sessions,
        read_session,
        resume_session,
        start_demo,
        checkpoint_turns,
        undo_plan,
        undo_turn
    ])
}

fn state_error(e: decode_core::StateError) -> IpcError {
    IpcError::new(e.error_kind(), e)
}

// ---------------------------------------------------------------------------------
// Status

#[tauri::command]
fn get_status(state: State<'_, AppState>) -> Snapshot {
    static FIRST: std::sync::Once = std::sync::Once::new();
    // The page asks for the status as soon as it runs: from here the window
    // answers the person (the start-up bench reads this line).
    FIRST.call_once(|| tracing::info!("window interactive"));
    state.project().active.snapshot()
}

#[tauri::command]
fn set_mode(state: State<'_, AppState>, mode: String) -> Result<Snapshot, IpcError> {
    let mode = parse_mode(&mode).map_err(state_error)?;
    Ok(state.project().active.set_mode(mode))
}

#[tauri::command]
fn cycle_mode(state: State<'_, AppState>) -> Snapshot {
    state.project().active.cycle_mode()
}

#[tauri::command]
fn select_agent(state: State<'_, AppState>, name: String) -> Result<Snapshot, IpcError> {
    state
        .project()
        .active
        .select_agent(&name)
        .map_err(state_error)
}

// ---------------------------------------------------------------------------------
// The chat

#[tauri::command]
fn get_chat(state: State<'_, AppState>) -> ChatStatus {
    state.project().chat.status()
}

#[tauri::command]
fn get_history(state: State<'_, AppState>) -> Vec<LoopEvent> {
    // Long texts reach the page as their head and their size (decode-protocol page.rs).
    state
        .project()
        .chat
        .history()
        .iter()
        .map(LoopEvent::for_page)
        .collect()
}

/// Starts a prompt; its events arrive on `on_event`, in batches (see `stream`), until
/// `done`.
#[tauri::command]
fn send_prompt(
    state: State<'_, AppState>,
    text: String,
    on_event: Channel<Vec<StreamEvent>>,
) -> Result<(), IpcError> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = Arc::new(move |event: &LoopEvent| crate::stream::stamp(&tx, event));
    let run = state.project().chat.start(&text, sink)?;
    tauri::async_runtime::spawn(crate::stream::forward(rx, move |batch| {
        if let Err(e) = on_event.send(batch) {
            tracing::warn!("could not stream events to the window: {e}");
        }
    }));
    tauri::async_runtime::spawn(run);
    Ok(())
}

#[tauri::command]
fn stop_prompt(state: State<'_, AppState>) -> bool {
    state.project().chat.stop()
}

// ---------------------------------------------------------------------------------
// Decisions

#[tauri::command]
fn pending_decisions(state: State<'_, AppState>) -> Vec<PendingDecision> {
    state.pending()
}

#[tauri::command]
fn answer_decision(
    state: State<'_, AppState>,
    id: DecisionId,
    answer: DecisionAnswer,
) -> Result<(), IpcError> {
    state
        .project()
        .chat
        .decisions()
        .answer_by(id, answer, "window")
        .map_err(|e| {
            let kind = match e {
                AnswerRefused::AlreadyAnswered(_) => ErrorKind::AlreadyAnswered,
                AnswerRefused::NotShown { .. } | AnswerRefused::Misfit { .. } => {
                    ErrorKind::NotShown
                }
            };
            IpcError::new(kind, e)
        })
}

/// Checks the rules the person wants "always allow" to save for a pending ask.
#[tauri::command]
fn check_rules(
    state: State<'_, AppState>,
    id: DecisionId,
    rules: Vec<String>,
) -> Result<RuleCheck, IpcError> {
    let project = state.project();
    let pending = project.chat.decisions().pending();
    let Some((
        _,
        DecisionRequest::Permission {
            tool,
            subject,
            decision,
            cwd,
            ..
        },
    )) = pending.into_iter().find(|(i, _)| *i == id)
    else {
        return Err(IpcError::new(
            ErrorKind::AlreadyAnswered,
            format!("decision {id} is no longer waiting for an answer"),
        ));
    };
    let cwd = cwd
        .map(PathBuf::from)
        .unwrap_or_else(|| project.active.project_root().to_path_buf());
    Ok(decode_engine::rule_check::check_rules(
        &project.active,
        &Call::new(tool, subject),
        &cwd,
        &decision,
        &rules,
    ))
}

/// Opens a link the person clicked and confirmed (its full URL was shown) in their
/// browser; the webview itself never navigates (links.rs).
#[tauri::command]
fn open_link(url: String) -> Result<(), IpcError> {
    let url =
        crate::links::browser_url(&url).map_err(|e| IpcError::new(ErrorKind::InvalidInput, e))?;
    crate::links::open_in_browser(&url).map_err(|e| IpcError::new(ErrorKind::Other, e))
}

// ---------------------------------------------------------------------------------
// Projects and conversations

#[tauri::command]
fn recent_projects(state: State<'_, AppState>) -> Vec<RecentProject> {
    ProjectStore::open(&state.bench.dirs().data).recent()
}

#[tauri::command]
fn forget_project(state: State<'_, AppState>, path: String) -> Result<(), IpcError> {
    ProjectStore::open(&state.bench.dirs().data)
        .forget(Path::new(&path))
        .map(|_| ())
        .map_err(|e| IpcError::new(ErrorKind::Project, e))
}

/// Runs a move of the workbench, after stopping the running turn when `stop_first`.
async fn moving(
    app: &AppHandle,
    stop_first: bool,
    go: impl FnOnce(&Workbench) -> Result<(), WorkbenchError>,
) -> Result<(), IpcError> {
    let bench = Arc::clone(&app.state::<AppState>().bench);
    if stop_first {
        bench.stop_then(go).await?;
    } else {
        go(&bench)?;
    }
    Ok(())
}

/// Opens a folder in this window (from the recent list or a typed path); the page
/// starts over on it with the `project` event.
#[tauri::command]
async fn open_project_path(app: AppHandle, path: String, stop_first: bool) -> Result<(), IpcError> {
    let path = PathBuf::from(path.trim());
    moving(&app, stop_first, |b| b.open_folder(&path)).await
}

/// Shows the native folder picker and opens the folder chosen; false when the person
/// cancelled.
#[tauri::command]
async fn choose_project(app: AppHandle, stop_first: bool) -> Result<bool, IpcError> {
    let start = {
        let root = app
            .state::<AppState>()
            .project()
            .active
            .project_root()
            .to_path_buf();
        root.parent().map(Path::to_path_buf).unwrap_or(root)
    };
    if !stop_first && app.state::<AppState>().project().chat.running() {
        return Err(IpcError::new(
            ErrorKind::Busy,
            "a turn is running in this project: stop it first, then open another folder",
        ));
    }
    let chosen = crate::native::pick_folder(&exe(), &start)
        .await
        .map_err(|e| {
            IpcError::new(
                ErrorKind::Other,
                format!("the folder picker could not be shown: {}", e.0),
            )
        })?;
    let Some(dir) = chosen else {
        return Ok(false);
    };
    moving(&app, stop_first, |b| b.open_folder(&dir)).await?;
    Ok(true)
}

/// A new conversation in this folder: the model sees nothing of the old one, which
/// stays in the sessions list.
#[tauri::command]
async fn new_chat(app: AppHandle, stop_first: bool) -> Result<(), IpcError> {
    moving(&app, stop_first, Workbench::new_chat).await
}

#[tauri::command]
fn list_sessions(state: State<'_, AppState>) -> Vec<SessionSummary> {
    let project = state.project();
    let current = project.chat.session_id();
    workspace::sessions_of(
        &SessionStore::new(&state.bench.dirs().data),
        project.active.project_root(),
        current.as_deref(),
    )
}

/// A saved session's events, read as far as they are readable (without locking or
/// changing it).
#[tauri::command]
fn read_session(state: State<'_, AppState>, id: String) -> Result<SessionView, IpcError> {
    SessionStore::new(&state.bench.dirs().data)
        .read(&id)
        .map(|(_, events, warnings)| SessionView {
            id,
            events: events.iter().map(LoopEvent::for_page).collect(),
            warnings,
        })
        .map_err(|e| IpcError::new(ErrorKind::Session, e))
}

/// Continues a saved session in this window, as `decode run --resume` does.
#[tauri::command]
async fn resume_session(app: AppHandle, id: String, stop_first: bool) -> Result<(), IpcError> {
    moving(&app, stop_first, |b| b.resume(&id)).await
}

/// Opens a fresh copy of the sample project with the script provider (no key, no
/// network).
#[tauri::command]
fn start_demo(state: State<'_, AppState>) -> Result<(), IpcError> {
    Ok(state.bench.start_demo()?)
}

// ---------------------------------------------------------------------------------
// Checkpoints (docs/checkpoints.md)

/// The turns of this chat's session that changed files, newest first.
#[tauri::command]
fn checkpoint_turns(state: State<'_, AppState>) -> Result<Vec<TurnCheckpoint>, IpcError> {
    state.project().chat.checkpoint_turns()
}

/// What undoing turn `turn` (and every later one, with `later_turns`) would do.
#[tauri::command]
async fn undo_plan(
    state: State<'_, AppState>,
    turn: u32,
    later_turns: bool,
) -> Result<UndoPlan, IpcError> {
    let chat = state.project().chat;
    blocking(move || chat.undo_plan(turn, later_turns)).await
}

/// Undoes turn `turn` (and every later one); conflicts are kept unless in `overwrite`.
#[tauri::command]
async fn undo_turn(
    state: State<'_, AppState>,
    turn: u32,
    later_turns: bool,
    overwrite: Vec<String>,
) -> Result<UndoReport, IpcError> {
    let chat = state.project().chat;
    blocking(move || chat.undo(turn, later_turns, &overwrite)).await
}

/// Runs file work off the async runtime's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| IpcError::new(ErrorKind::Other, format!("the undo stopped: {e}")))?
}
