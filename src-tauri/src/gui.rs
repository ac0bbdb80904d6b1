//! The window, the tray, native dialogs and the Tauri commands: thin adapters
//! over `decode-core`.
//!
//! The UI reaches the backend only through the commands below (see
//! `ui/src/lib/backend.ts`). What the backend pushes:
//! - `status` (a [`Snapshot`]) after every mode or agent change from any surface, also
//!   mirrored in the tray;
//! - `chat` (a [`ChatStatus`]) when the chat session changes (usage, running, session
//!   rules, todos);
//! - `decision` (a [`ChannelEvent`]) for every ask, question and plan approval of the
//!   one decision channel, and when one is resolved;
//! - `project` when another folder was opened in this window (the UI starts over);
//! - the events of one prompt (every [`LoopEvent`], time-stamped) over the Tauri
//!   `Channel` given to `send_prompt`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use decode_core::dirs::Dirs;
use decode_core::projects::ProjectStore;
use decode_core::state::{parse_mode, ActiveState, Snapshot};
use decode_engine::channel::{AnswerRefused, DecisionChannel};
use decode_engine::chat::{ChatSession, ChatSetup};
use decode_engine::config::{Config, KeyringStore, Overrides};
use decode_engine::providers::ProviderKind;
use decode_engine::session::SessionStore;
use decode_policy::Call;
use decode_protocol::{
    ChannelEvent, ChatStatus, DecisionAnswer, DecisionId, DecisionRequest, ErrorKind, IpcError,
    LoopEvent, PendingDecision, RuleCheck, StreamEvent,
};
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, State, WebviewUrl, WebviewWindowBuilder, WindowEvent};

use crate::native::{dialog_for, NativeSurface};
use crate::tray::{Tray, TrayModel};
use decode_cli::cli::ProviderArgs;

const MAIN: &str = "main";

fn state_error(e: decode_core::StateError) -> IpcError {
    IpcError::new(e.error_kind(), e)
}

/// One project open in the window: its state (agent, mode, gate) and its chat.
#[derive(Clone)]
pub(crate) struct Project {
    pub active: Arc<ActiveState>,
    pub chat: Arc<ChatSession>,
}

/// What the window's commands work on. The project can change (another
/// folder opened through a second `decode DIR`); everything else stays.
pub(crate) struct AppState {
    project: RwLock<Project>,
    pub(crate) dirs: Dirs,
    /// The start-up flags (they override the config file for this run).
    pub(crate) provider: ProviderArgs,
    pub(crate) max_turns: Option<u32>,
    native: Arc<NativeSurface>,
    tray: Mutex<Option<Arc<Tray>>>,
    /// Held while the window moves to another folder, session or model setup.
    switching: Mutex<()>,
}

impl AppState {
    pub(crate) fn project(&self) -> Project {
        self.project
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

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

/// Opens a link the person clicked and confirmed (its full URL was shown) in their
/// browser; the webview itself never navigates (links.rs).
#[tauri::command]
fn open_link(url: String) -> Result<(), IpcError> {
    let url =
        crate::links::browser_url(&url).map_err(|e| IpcError::new(ErrorKind::InvalidInput, e))?;
    crate::links::open_in_browser(&url).map_err(|e| IpcError::new(ErrorKind::Other, e))
}

#[tauri::command]
fn stop_prompt(state: State<'_, AppState>) -> bool {
    state.project().chat.stop()
}

#[tauri::command]
fn pending_decisions(state: State<'_, AppState>) -> Vec<PendingDecision> {
    state
        .project()
        .chat
        .decisions()
        .pending()
        .into_iter()
        .map(|(id, request)| PendingDecision {
            id,
            request: request.for_page(),
        })
        .collect()
}

/// A decision event as the page receives it: long texts cut (decode-protocol page.rs).
fn page_event(event: &ChannelEvent) -> ChannelEvent {
    match event {
        ChannelEvent::Pending { id, request } => ChannelEvent::Pending {
            id: *id,
            request: request.for_page(),
        },
        ChannelEvent::Queued { id, request } => ChannelEvent::Queued {
            id: *id,
            request: request.for_page(),
        },
        ChannelEvent::Resolved { id, by, answer } => ChannelEvent::Resolved {
            id: *id,
            by: by.clone(),
            answer: answer.clone(),
        },
    }
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

/// What the chat talks to, from the config file and the start-up flags.
pub(crate) fn chat_setup(args: &ProviderArgs, max_turns: Option<u32>, dirs: &Dirs) -> ChatSetup {
    let provider = match args.provider.as_deref().map(str::parse::<ProviderKind>) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return ChatSetup::Missing { problem: e },
    };
    let overrides = Overrides {
        provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        script: args.script.clone(),
        max_turns,
    };
    let env = |k: &str| std::env::var(k).ok();
    ChatSetup::resolve(&dirs.config, &overrides, &env, &KeyringStore)
}

/// How the window was asked to start.
pub(crate) struct Start {
    pub project: Project,
    pub dirs: Dirs,
    pub provider: ProviderArgs,
    pub max_turns: Option<u32>,
}

/// Opens the main window on the project, and runs until Quit.
pub(crate) fn run(start: Start) -> anyhow::Result<()> {
    let close_to_tray = Config::load(&start.dirs.config)
        .map(|(c, _)| c.close_to_tray.unwrap_or(true))
        .unwrap_or(true);
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("decode-window"));
    let first = start.project.clone();
    let app_state = AppState {
        project: RwLock::new(start.project),
        dirs: start.dirs,
        provider: start.provider,
        max_turns: start.max_turns,
        native: Arc::new(NativeSurface::new(exe)),
        tray: Mutex::new(None),
        switching: Mutex::new(()),
    };

    tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, argv, cwd| {
            second_launch(app, &argv, Path::new(&cwd));
        }))
        .plugin(tauri_plugin_notification::init())
        .manage(app_state)
        .invoke_handler(tauri::generate_handler![
            get_status,
            set_mode,
            cycle_mode,
            select_agent,
            get_chat,
            get_history,
            send_prompt,
            stop_prompt,
            open_link,
            pending_decisions,
            answer_decision,
            check_rules,
            crate::screens::recent_projects,
            crate::screens::forget_project,
            crate::screens::open_project_path,
            crate::screens::choose_project,
            crate::screens::trust_preview,
            crate::screens::set_trust,
            crate::screens::dismiss_trust,
            crate::screens::project_rules,
            crate::screens::add_rule,
            crate::screens::remove_rule,
            crate::screens::set_settings_list,
            crate::screens::test_call,
            crate::screens::drop_session_rule,
            crate::screens::provider_settings,
            crate::screens::save_provider,
            crate::screens::key_status,
            crate::screens::set_api_key,
            crate::screens::delete_api_key,
            crate::screens::test_connection,
            crate::screens::list_sessions,
            crate::screens::read_session,
            crate::screens::resume_session,
            crate::screens::start_demo
        ])
        .setup(move |app| {
            let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
                .title(window_title(&first.active))
                .inner_size(1100.0, 760.0)
                .min_inner_size(640.0, 480.0)
                // The webview never leaves the app's page, whatever asks it to.
                .on_navigation(|url| {
                    let own = crate::links::own_page(url);
                    if !own {
                        tracing::warn!(url = %url, "navigation away from Decode's page refused");
                    }
                    own
                })
                .on_new_window(|url, _| {
                    tracing::warn!(url = %url, "a new window was refused");
                    tauri::webview::NewWindowResponse::Deny
                })
                .on_download(|_, _| false)
                .build()?;
            let handle = app.handle().clone();
            window.on_window_event(move |event| match event {
                WindowEvent::CloseRequested { api, .. } => {
                    if close_to_tray {
                        // Closing the window keeps Decode in the tray; Quit is in the tray.
                        api.prevent_close();
                        if let Some(w) = handle.get_webview_window(MAIN) {
                            let _ = w.hide();
                        }
                        refresh_tray(&handle);
                        native_for_current(&handle);
                    } else {
                        api.prevent_close();
                        quit(&handle);
                    }
                }
                WindowEvent::Focused(false) => {
                    let h = handle.clone();
                    // Let the window system settle (a dialog of ours may have taken focus).
                    tauri::async_runtime::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                        native_for_current(&h);
                    });
                }
                WindowEvent::Focused(true) => refresh_tray(&handle),
                _ => {}
            });

            let model = tray_model(app.handle());
            let tray = Tray::build(app.handle(), &model, on_tray_menu)?;
            tray.show(app.handle(), &model)?;
            *app.state::<AppState>()
                .tray
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(tray);

            attach(app.handle(), &first);
            remember(app.handle(), first.active.project_root());
            tracing::info!("window open on {}", first.active.snapshot().project);
            Ok(())
        })
        .run(tauri::generate_context!())
        .map_err(|e| anyhow::anyhow!("the window could not start: {e}"))
}

pub(crate) fn window_title(active: &ActiveState) -> String {
    // The title lives outside the webview: the folder's name is shown with
    // controls escaped.
    format!(
        "Decode — {}",
        decode_core::display::one_line(&active.snapshot().project)
    )
}

/// Connects a project's state, chat and decision channel to the window, the
/// tray and the native dialogs.
pub(crate) fn attach(app: &AppHandle, project: &Project) {
    let handle = app.clone();
    project.active.subscribe(Box::new(move |snap: &Snapshot| {
        if let Err(e) = handle.emit("status", snap) {
            tracing::warn!("could not send the status to the window: {e}");
        }
        refresh_tray(&handle);
    }));
    attach_chat(app, project);
}

/// Connects a project's chat and its decision channel (the state stays attached).
fn attach_chat(app: &AppHandle, project: &Project) {
    let handle = app.clone();
    project.chat.on_status(Arc::new(move |status: &ChatStatus| {
        if let Err(e) = handle.emit("chat", status) {
            tracing::warn!("could not send the chat status to the window: {e}");
        }
    }));
    let handle = app.clone();
    project
        .chat
        .decisions()
        .subscribe(Box::new(move |event: &ChannelEvent| {
            if let Err(e) = handle.emit("decision", page_event(event)) {
                tracing::warn!("could not send a decision to the window: {e}");
            }
            match event {
                ChannelEvent::Pending { .. } => {
                    let h = handle.clone();
                    // Window state is read off the channel's thread.
                    tauri::async_runtime::spawn(async move { native_for_current(&h) });
                }
                ChannelEvent::Resolved { id, .. } => {
                    handle.state::<AppState>().native.close(*id);
                }
                ChannelEvent::Queued { .. } => {}
            }
            refresh_tray(&handle);
        }));
}

/// Whether the person is looking at the window: shown, not minimised, focused.
fn window_attended(app: &AppHandle) -> bool {
    let Some(w) = app.get_webview_window(MAIN) else {
        return false;
    };
    w.is_visible().unwrap_or(false)
        && !w.is_minimized().unwrap_or(false)
        && w.is_focused().unwrap_or(false)
}

/// Shows the current decision in a native dialog when the window is not
/// attended (and none is open for it yet).
fn native_for_current(app: &AppHandle) {
    if window_attended(app) || std::env::var_os("DECODE_NO_NATIVE_DIALOGS").is_some() {
        return;
    }
    let state = app.state::<AppState>();
    let project = state.project();
    let channel = Arc::clone(project.chat.decisions());
    let Some((id, request)) = channel.current() else {
        return;
    };
    let dialog = dialog_for(&request, &project.active.snapshot().project);
    let open = app.clone();
    let notify = app.clone();
    state.native.show(
        id,
        dialog,
        channel,
        move || show_window(&open),
        move |why| {
            tracing::warn!("native dialog: {}", why.0);
            notify_pending(&notify);
        },
    );
}

/// A desktop notification that an approval waits (when no dialog can be shown).
fn notify_pending(app: &AppHandle) {
    use tauri_plugin_notification::NotificationExt;
    if let Err(e) = app
        .notification()
        .builder()
        .title("Decode")
        .body("An approval is waiting in Decode.")
        .show()
    {
        tracing::warn!("could not send a desktop notification: {e}");
    }
}

fn show_window(app: &AppHandle) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
    refresh_tray(app);
}

fn tray_model(app: &AppHandle) -> TrayModel {
    let state = app.state::<AppState>();
    let project = state.project();
    let visible = app
        .get_webview_window(MAIN)
        .and_then(|w| w.is_visible().ok())
        .unwrap_or(true);
    TrayModel::new(
        &project.active.snapshot(),
        project.chat.decisions().pending().len(),
        visible,
    )
}

/// Makes the tray show the current state (called after every change).
pub(crate) fn refresh_tray(app: &AppHandle) {
    let model = tray_model(app);
    let tray = app
        .state::<AppState>()
        .tray
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if let Some(tray) = tray {
        let app2 = app.clone();
        // Menus are changed on the main thread.
        let _ = app.run_on_main_thread(move || {
            if let Err(e) = tray.show(&app2, &model) {
                tracing::warn!("tray: {e}");
            }
        });
    }
}

/// Quits, asking first (in a native dialog) while a turn is running.
fn quit(app: &AppHandle) {
    let state = app.state::<AppState>();
    if !state.project().chat.running() {
        app.exit(0);
        return;
    }
    let app = app.clone();
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("decode-window"));
    tauri::async_runtime::spawn(async move {
        let spec = crate::native::DialogSpec {
            title: "Quit Decode?".into(),
            body: "A turn is running; quitting stops it.".into(),
            buttons: vec!["Quit".into(), "Keep running".into()],
            pick_folder: None,
        };
        match crate::native::ask(&exe, &spec).await {
            Ok(Some(0)) => app.exit(0),
            Ok(_) => {}
            // No dialog can be shown: quitting is what was asked for.
            Err(_) => app.exit(0),
        }
    });
}

fn on_tray_menu(app: &AppHandle, id: &str) {
    let project = app.state::<AppState>().project();
    if let Some(mode) = id.strip_prefix("mode:") {
        match parse_mode(mode) {
            Ok(mode) => {
                project.active.set_mode(mode);
            }
            Err(e) => tracing::warn!("tray: {e}"),
        }
    } else if let Some(name) = id.strip_prefix("agent:") {
        if let Err(e) = project.active.select_agent(name) {
            tracing::warn!("tray: {e}");
        }
    } else if id == "pending" {
        show_window(app);
    } else if id == "show" {
        let visible = app
            .get_webview_window(MAIN)
            .and_then(|w| w.is_visible().ok())
            .unwrap_or(false);
        if visible {
            if let Some(w) = app.get_webview_window(MAIN) {
                let _ = w.hide();
            }
            native_for_current(app);
        } else {
            show_window(app);
        }
    } else if id == "quit" {
        quit(app);
    }
    // A check item toggles itself when clicked; put every mark back to the real state.
    refresh_tray(app);
}

/// A second `decode [DIR]` while this one runs: show the window, on DIR.
fn second_launch(app: &AppHandle, argv: &[String], cwd: &Path) {
    tracing::info!(?argv, "a second launch was forwarded to this window");
    let dir = match decode_cli::cli::parse(argv) {
        decode_cli::cli::Parsed::Run(cli) if cli.command.is_none() => cli.open.project_dir,
        _ => None,
    };
    show_window(app);
    let Some(dir) = dir else {
        return;
    };
    let dir = cwd.join(dir);
    if let Err(e) = open_project(app, &dir, Reload::Page) {
        tracing::warn!("could not open {}: {e}", dir.display());
        let spec = crate::native::DialogSpec {
            title: "Decode".into(),
            body: decode_core::display::sanitize(&format!("Could not open {}: {e}", dir.display()))
                .into_owned(),
            buttons: vec!["OK".into()],
            pick_folder: None,
        };
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("decode-window"));
        tauri::async_runtime::spawn(async move {
            let _ = crate::native::ask(&exe, &spec).await;
        });
    }
}

/// Opens another project folder in this window: a new state, gate, catalog and
/// chat for it. Refused while a turn runs (stop it first).
pub(crate) fn open_project(app: &AppHandle, dir: &Path, reload: Reload) -> Result<(), String> {
    let state = app.state::<AppState>();
    let canonical = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if canonical == state.project().active.project_root() {
        return Ok(());
    }
    let setup = chat_setup(&state.provider, state.max_turns, &state.dirs);
    switch_project(app, &canonical, setup, None, reload)
}

/// What the page does after [`switch_project`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reload {
    /// Another folder opened from outside the page (a second launch): the page
    /// starts over on it when told (a `project` event).
    Page,
    /// The page asked for the switch and starts over itself once the command
    /// returns. (An event during the command would reload the page under the
    /// pending call, and Tauri sends a call whose page went away a second time.)
    Caller,
    /// The same folder and session with a new model setup: the page keeps what it
    /// shows and takes the new chat status (a `chat` event).
    Chat,
}

/// Puts the window on `dir` with a chat on `setup` (continuing `resume` when given):
/// the loop, gate and catalog move there. Refused while a turn runs.
pub(crate) fn switch_project(
    app: &AppHandle,
    dir: &Path,
    setup: ChatSetup,
    resume: Option<&str>,
    reload: Reload,
) -> Result<(), String> {
    let state = app.state::<AppState>();
    // One switch at a time (the folder picker's command runs beside the others).
    let _switching = state.switching.lock().unwrap_or_else(|p| p.into_inner());
    let current = state.project();
    if current.chat.running() {
        return Err("a turn is running in the current project: stop it first".into());
    }
    // A new model setup keeps the folder's state (agent, mode, gate) as it is.
    let same_state = reload == Reload::Chat;
    let active = if same_state {
        Arc::clone(&current.active)
    } else {
        let (active, diagnostics) =
            ActiveState::open(dir, &state.dirs.home, &state.dirs.data, None, None)
                .map_err(|e| e.to_string())?;
        for d in diagnostics {
            tracing::warn!("{d}");
        }
        Arc::new(active)
    };
    // What was allowed for this session stays with it (a new model setup), not
    // with another session or folder.
    let rules = same_state.then(|| Arc::clone(current.chat.session_rules()));
    // The old chat closes (no prompt can start on it from here) and lets go of
    // its transcript before a session is resumed; if that fails it opens again.
    if !current.chat.try_release() {
        return Err("a turn is running in the current project: stop it first".into());
    }
    let store = SessionStore::new(&state.dirs.data);
    let resumed = match resume {
        Some(id) => match open_session_retrying(&store, id) {
            Ok(r) => Some(r),
            Err(e) => {
                current.chat.reopen();
                return Err(e);
            }
        },
        None => None,
    };
    current
        .chat
        .decisions()
        .cancel_all("another project or session was opened");
    drop(current);
    let mut chat = ChatSession::new(
        Arc::clone(&active),
        Arc::new(DecisionChannel::new()),
        store,
        setup,
        resumed,
    );
    if let Some(rules) = rules {
        chat = chat.with_session_rules(rules);
    }
    let project = Project {
        active,
        chat: Arc::new(chat),
    };
    *state.project.write().unwrap_or_else(|p| p.into_inner()) = project.clone();
    if same_state {
        attach_chat(app, &project);
    } else {
        attach(app, &project);
    }
    remember(app, project.active.project_root());
    if let Some(w) = app.get_webview_window(MAIN) {
        let _ = w.set_title(&window_title(&project.active));
    }
    match reload {
        Reload::Page => {
            let _ = app.emit("project", project.active.snapshot());
            tracing::info!(
                "window moved to {}",
                project.active.project_root().display()
            );
        }
        Reload::Caller => {
            tracing::info!(
                "window moved to {}",
                project.active.project_root().display()
            );
        }
        Reload::Chat => {
            let _ = app.emit("chat", project.chat.status());
            let _ = app.emit("status", project.active.snapshot());
            tracing::info!("the chat reconnected with the new model setup");
        }
    }
    refresh_tray(app);
    Ok(())
}

/// Opens a transcript to continue it; the window's previous chat may still be
/// closing it for a moment.
fn open_session_retrying(
    store: &SessionStore,
    id: &str,
) -> Result<decode_engine::session::ResumedSession, String> {
    let mut tries = 0;
    loop {
        match store.open(id) {
            Ok(r) => return Ok(r),
            Err(decode_engine::session::SessionError::Busy { .. }) if tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Puts a folder on the recent-projects list.
pub(crate) fn remember(app: &AppHandle, dir: &Path) {
    let state = app.state::<AppState>();
    if let Err(e) = ProjectStore::open(&state.dirs.data).touch(dir) {
        tracing::warn!("could not update the recent projects: {e}");
    }
}
