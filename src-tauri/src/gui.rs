//! The window, the tray and the Tauri commands: thin adapters over `decode-core`.
//!
//! The UI reaches the backend only through the commands below (see
//! `ui/src/lib/backend.ts`). What the backend pushes:
//! - `status` (a [`Snapshot`]) after every mode or agent change from any surface, also
//!   mirrored in the tray's check marks;
//! - `chat` (a [`ChatStatus`]) when the chat session changes (usage, running, session
//!   rules, todos);
//! - `decision` (a [`ChannelEvent`]) for every ask, question and plan approval of the
//!   one decision channel, and when one is resolved;
//! - the events of one prompt (every [`LoopEvent`], time-stamped) over the Tauri
//!   `Channel` given to `send_prompt`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use decode_core::chat::{ChatSession, ChatSetup};
use decode_core::config::{KeyringStore, Overrides};
use decode_core::dirs::Dirs;
use decode_core::providers::ProviderKind;
use decode_core::state::{parse_mode, ActiveState, Snapshot};
use decode_policy::{Call, Mode};
use decode_protocol::{
    ChannelEvent, ChatStatus, DecisionAnswer, DecisionId, DecisionRequest, ErrorKind, IpcError,
    LoopEvent, PendingDecision, RuleCheck, StreamEvent,
};
use tauri::ipc::Channel;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIconBuilder;
use tauri::{
    AppHandle, Emitter, Manager, State, WebviewUrl, WebviewWindowBuilder, WindowEvent, Wry,
};

use crate::cli::ProviderArgs;

const MAIN: &str = "main";

fn state_error(e: decode_core::StateError) -> IpcError {
    IpcError::new(e.error_kind(), e)
}

pub struct AppState {
    active: Arc<ActiveState>,
    chat: Arc<ChatSession>,
}

#[tauri::command]
fn get_status(state: State<'_, AppState>) -> Snapshot {
    state.active.snapshot()
}

#[tauri::command]
fn set_mode(state: State<'_, AppState>, mode: String) -> Result<Snapshot, IpcError> {
    let mode = parse_mode(&mode).map_err(state_error)?;
    Ok(state.active.set_mode(mode))
}

#[tauri::command]
fn cycle_mode(state: State<'_, AppState>) -> Snapshot {
    state.active.cycle_mode()
}

#[tauri::command]
fn select_agent(state: State<'_, AppState>, name: String) -> Result<Snapshot, IpcError> {
    state.active.select_agent(&name).map_err(state_error)
}

#[tauri::command]
fn get_chat(state: State<'_, AppState>) -> ChatStatus {
    state.chat.status()
}

#[tauri::command]
fn get_history(state: State<'_, AppState>) -> Vec<LoopEvent> {
    state.chat.history().to_vec()
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
    let run = state.chat.start(&text, sink)?;
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
    state.chat.stop()
}

#[tauri::command]
fn pending_decisions(state: State<'_, AppState>) -> Vec<PendingDecision> {
    state
        .chat
        .decisions()
        .pending()
        .into_iter()
        .map(|(id, request)| PendingDecision { id, request })
        .collect()
}

#[tauri::command]
fn answer_decision(
    state: State<'_, AppState>,
    id: DecisionId,
    answer: DecisionAnswer,
) -> Result<(), IpcError> {
    state
        .chat
        .decisions()
        .answer_by(id, answer, "window")
        .map_err(|e| IpcError::new(ErrorKind::AlreadyAnswered, e))
}

/// Checks the rules the person wants "always allow" to save for a pending ask.
#[tauri::command]
fn check_rules(
    state: State<'_, AppState>,
    id: DecisionId,
    rules: Vec<String>,
) -> Result<RuleCheck, IpcError> {
    let pending = state.chat.decisions().pending();
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
        .unwrap_or_else(|| state.active.project_root().to_path_buf());
    Ok(decode_core::rule_check::check_rules(
        &state.active,
        &Call::new(tool, subject),
        &cwd,
        &decision,
        &rules,
    ))
}

/// What the chat talks to, from the config file and the start-up flags.
pub fn chat_setup(args: &ProviderArgs, max_turns: Option<u32>, dirs: &Dirs) -> ChatSetup {
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

/// The tray's check items, kept to mirror state changes made elsewhere.
struct TrayItems {
    modes: Vec<(Mode, CheckMenuItem<Wry>)>,
    agents: Vec<(String, CheckMenuItem<Wry>)>,
}

impl TrayItems {
    fn mirror(&self, snap: &Snapshot) {
        for (mode, item) in &self.modes {
            let _ = item.set_checked(*mode == snap.mode);
        }
        for (name, item) in &self.agents {
            let _ = item.set_checked(*name == snap.agent);
        }
    }
}

/// Opens the main window on the project held by `active`, chatting through `chat`,
/// and runs until Quit.
pub fn run(active: Arc<ActiveState>, chat: Arc<ChatSession>) -> anyhow::Result<()> {
    // The title and the tray live outside the webview: text from the project
    // (its folder name, its agents' names) is shown with controls escaped.
    let title = format!(
        "Decode — {}",
        decode_core::display::one_line(&active.snapshot().project)
    );
    let tray_items: Arc<Mutex<Option<TrayItems>>> = Arc::new(Mutex::new(None));

    tauri::Builder::default()
        .manage(AppState {
            active: active.clone(),
            chat: chat.clone(),
        })
        .invoke_handler(tauri::generate_handler![
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
            check_rules
        ])
        .setup(move |app| {
            let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
                .title(&title)
                .inner_size(1100.0, 760.0)
                .min_inner_size(640.0, 480.0)
                .build()?;
            // Closing the window keeps Decode in the tray; Quit is in the tray.
            let hide_target = window.clone();
            window.on_window_event(move |event| {
                if let WindowEvent::CloseRequested { api, .. } = event {
                    api.prevent_close();
                    let _ = hide_target.hide();
                }
            });

            let items = build_tray(app.handle(), &active)?;
            *tray_items.lock().unwrap_or_else(|p| p.into_inner()) = Some(items);
            app.manage(tray_items.clone());

            let handle = app.handle().clone();
            let tray_for_events = tray_items.clone();
            active.subscribe(Box::new(move |snap: &Snapshot| {
                if let Err(e) = handle.emit("status", snap) {
                    tracing::warn!("could not send the status to the window: {e}");
                }
                if let Some(items) = tray_for_events
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                {
                    items.mirror(snap);
                }
            }));
            let handle = app.handle().clone();
            chat.on_status(Arc::new(move |status: &ChatStatus| {
                if let Err(e) = handle.emit("chat", status) {
                    tracing::warn!("could not send the chat status to the window: {e}");
                }
            }));
            let handle = app.handle().clone();
            chat.decisions()
                .subscribe(Box::new(move |event: &ChannelEvent| {
                    if let Err(e) = handle.emit("decision", event) {
                        tracing::warn!("could not send a decision to the window: {e}");
                    }
                }));
            tracing::info!("window open on {}", active.snapshot().project);
            Ok(())
        })
        .run(tauri::generate_context!())
        .map_err(|e| anyhow::anyhow!("the window could not start: {e}"))
}

fn build_tray(app: &AppHandle, active: &Arc<ActiveState>) -> tauri::Result<TrayItems> {
    let snap = active.snapshot();
    let mut modes = Vec::new();
    for mode in Mode::ALL {
        let item = CheckMenuItem::with_id(
            app,
            format!("mode:{mode}"),
            format!("Mode: {mode}"),
            true,
            mode == snap.mode,
            None::<&str>,
        )?;
        modes.push((mode, item));
    }
    let mut agents = Vec::new();
    for agent in &snap.agents {
        let item = CheckMenuItem::with_id(
            app,
            format!("agent:{}", agent.name),
            decode_core::display::one_line(&agent.name),
            true,
            agent.name == snap.agent,
            None::<&str>,
        )?;
        agents.push((agent.name.clone(), item));
    }
    let agent_refs: Vec<&dyn tauri::menu::IsMenuItem<Wry>> = agents
        .iter()
        .map(|(_, i)| i as &dyn tauri::menu::IsMenuItem<Wry>)
        .collect();
    let agents_menu = Submenu::with_items(app, "Agent", true, &agent_refs)?;
    let show = MenuItem::with_id(app, "show", "Show window", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Decode", true, None::<&str>)?;
    let sep1 = PredefinedMenuItem::separator(app)?;
    let sep2 = PredefinedMenuItem::separator(app)?;

    let mut entries: Vec<&dyn tauri::menu::IsMenuItem<Wry>> = Vec::new();
    for (_, item) in &modes {
        entries.push(item);
    }
    entries.push(&sep1);
    entries.push(&agents_menu);
    entries.push(&sep2);
    entries.push(&show);
    entries.push(&quit);
    let menu = Menu::with_items(app, &entries)?;

    let active_for_menu = active.clone();
    let mut tray = TrayIconBuilder::with_id("decode")
        .tooltip("Decode")
        .menu(&menu)
        .on_menu_event(move |app, event| on_tray_menu(app, &active_for_menu, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(TrayItems { modes, agents })
}

fn on_tray_menu(app: &AppHandle, active: &ActiveState, id: &str) {
    if let Some(mode) = id.strip_prefix("mode:") {
        match parse_mode(mode) {
            Ok(mode) => {
                active.set_mode(mode);
            }
            Err(e) => tracing::warn!("tray: {e}"),
        }
    } else if let Some(name) = id.strip_prefix("agent:") {
        if let Err(e) = active.select_agent(name) {
            tracing::warn!("tray: {e}");
        }
    } else if id == "show" {
        if let Some(window) = app.get_webview_window(MAIN) {
            let _ = window.show();
            let _ = window.unminimize();
            let _ = window.set_focus();
        }
    } else if id == "quit" {
        app.exit(0);
    }
    // A check item toggles itself when clicked; put every mark back to the real state.
    if let Some(items) = app.try_state::<Arc<Mutex<Option<TrayItems>>>>() {
        if let Some(items) = items.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            items.mirror(&active.snapshot());
        }
    }
}
