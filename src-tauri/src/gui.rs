//! The window, the tray and the Tauri commands: thin adapters over `decode-core`.
//!
//! The UI reaches the backend only through the commands below (see
//! `ui/src/lib/backend.ts`); every state change, from any surface, is pushed back to
//! the UI as a `status` event and mirrored in the tray's check marks.

use std::sync::{Arc, Mutex};

use decode_core::state::{parse_mode, ActiveState, Snapshot};
use decode_policy::Mode;
use serde::Serialize;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIconBuilder;
use tauri::{
    AppHandle, Emitter, Manager, State, WebviewUrl, WebviewWindowBuilder, WindowEvent, Wry,
};

const MAIN: &str = "main";

/// An error as the UI receives it: `{kind, message}`.
#[derive(Debug, Serialize)]
pub struct IpcError {
    kind: &'static str,
    message: String,
}

impl IpcError {
    fn new(kind: &'static str, message: impl ToString) -> Self {
        Self {
            kind,
            message: message.to_string(),
        }
    }
}

pub struct AppState {
    active: Arc<ActiveState>,
}

#[tauri::command]
fn get_status(state: State<'_, AppState>) -> Snapshot {
    state.active.snapshot()
}

#[tauri::command]
fn set_mode(state: State<'_, AppState>, mode: String) -> Result<Snapshot, IpcError> {
    let mode = parse_mode(&mode).map_err(|e| IpcError::new(e.kind(), e))?;
    Ok(state.active.set_mode(mode))
}

#[tauri::command]
fn cycle_mode(state: State<'_, AppState>) -> Snapshot {
    state.active.cycle_mode()
}

#[tauri::command]
fn select_agent(state: State<'_, AppState>, name: String) -> Result<Snapshot, IpcError> {
    state
        .active
        .select_agent(&name)
        .map_err(|e| IpcError::new(e.kind(), e))
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

/// Opens the main window on the project held by `active` and runs until Quit.
pub fn run(active: Arc<ActiveState>) -> anyhow::Result<()> {
    let title = format!("Decode — {}", active.snapshot().project);
    let tray_items: Arc<Mutex<Option<TrayItems>>> = Arc::new(Mutex::new(None));

    tauri::Builder::default()
        .manage(AppState {
            active: active.clone(),
        })
        .invoke_handler(tauri::generate_handler![
            get_status,
            set_mode,
            cycle_mode,
            select_agent
        ])
        .setup(move |app| {
            let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
                .title(&title)
                .inner_size(1100.0, 760.0)
                .min_inner_size(640.0, 480.0)
                .build()?;
            // Closing the window keeps Decode in the tray (SPEC §9); Quit is in the tray.
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
            &agent.name,
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
