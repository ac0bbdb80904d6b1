//! The window, the tray and the native dialogs around a [`Workbench`]
//! (docs/window.md).
//!
//! What the backend pushes to the page comes from the workbench, whatever project is
//! open: `status` (a [`Snapshot`]) after every mode or agent change from any surface,
//! `chat` (a [`ChatStatus`]) when the chat changes, `decision` (a [`ChannelEvent`]) for
//! every ask and its resolution, and `project` (a [`ProjectOpened`]) when another
//! folder, session, model setup or conversation is open — the page starts over on it
//! without reloading. The events of one prompt stream over the Tauri `Channel` given to
//! `send_prompt`. The commands the page calls are in `commands.rs` and `screens.rs`.

use std::path::Path;
use std::sync::Arc;

use decode_core::state::Snapshot;
use decode_engine::config::Config;
use decode_engine::workbench::{Workbench, WorkbenchEvent};
use decode_protocol::ChannelEvent;
use tauri::{AppHandle, Emitter, Manager, WebviewUrl, WebviewWindowBuilder, WindowEvent};

use crate::native::dialog_offering;
use crate::state::{exe, AppState, MAIN};
use crate::tray::{Tray, TrayItem, TrayModel};

/// Opens the main window on the workbench's project, and runs until Quit.
pub(crate) fn run(bench: Arc<Workbench>) -> anyhow::Result<()> {
    let close_to_tray = Config::load(&bench.dirs().config)
        .map(|(c, _)| c.close_to_tray.unwrap_or(true))
        .unwrap_or(true);
    let title = window_title(&bench.project().active.snapshot());
    let app_state = AppState::new(Arc::clone(&bench));
    crate::commands::register(
        tauri::Builder::default()
            .plugin(tauri_plugin_single_instance::init(|app, argv, cwd| {
                second_launch(app, &argv, Path::new(&cwd));
            }))
            .plugin(tauri_plugin_notification::init())
            .manage(app_state),
    )
    .setup(move |app| {
        open_window(app, &title, close_to_tray)?;
        let model = tray_model(app.handle());
        let tray = Tray::build(app.handle(), &model, on_tray_menu)?;
        tray.show(app.handle(), &model)?;
        *app.state::<AppState>()
            .tray
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(tray);
        let handle = app.handle().clone();
        bench.subscribe(Arc::new(move |event: &WorkbenchEvent| {
            forward(&handle, event)
        }));
        bench.remember();
        tracing::info!(
            "window open on {}",
            bench.project().active.snapshot().project
        );
        Ok(())
    })
    .run(tauri::generate_context!())
    .map_err(|e| anyhow::anyhow!("the window could not start: {e}"))
}

/// The main window: its size, its title, and a webview that never leaves the app's page.
fn open_window(app: &tauri::App, title: &str, close_to_tray: bool) -> tauri::Result<()> {
    let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
        .title(title)
        .inner_size(1100.0, 760.0)
        .min_inner_size(640.0, 480.0)
        // The page is dark; so are the toolkit's own parts of it (a select's pop-up list).
        .theme(Some(tauri::Theme::Dark))
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
            api.prevent_close();
            if close_to_tray {
                // Closing the window keeps Decode in the tray; Quit is in the tray.
                if let Some(w) = handle.get_webview_window(MAIN) {
                    let _ = w.hide();
                }
                refresh_tray(&handle);
                native_for_current(&handle);
            } else {
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
    Ok(())
}

/// Sends a workbench event to the page, the tray and the native dialogs.
fn forward(app: &AppHandle, event: &WorkbenchEvent) {
    let sent = match event {
        WorkbenchEvent::Status(snapshot) => app.emit("status", snapshot),
        WorkbenchEvent::Chat(status) => app.emit("chat", status),
        WorkbenchEvent::Decision(event) => {
            match event {
                ChannelEvent::Pending { .. } => {
                    let h = app.clone();
                    // Window state is read off the channel's thread.
                    tauri::async_runtime::spawn(async move { native_for_current(&h) });
                }
                ChannelEvent::Resolved { id, .. } => app.state::<AppState>().native.close(*id),
                ChannelEvent::Queued { .. } => {}
            }
            app.emit("decision", crate::state::page_event(event))
        }
        WorkbenchEvent::Opened(kind) => {
            let opened = app.state::<AppState>().opened(*kind);
            if let Some(w) = app.get_webview_window(MAIN) {
                let _ = w.set_title(&window_title(&opened.status));
            }
            app.emit("project", opened)
        }
    };
    if let Err(e) = sent {
        tracing::warn!("could not send an event to the window: {e}");
    }
    refresh_tray(app);
}

fn window_title(snapshot: &Snapshot) -> String {
    // The title lives outside the webview: the folder's name is shown with
    // controls escaped.
    format!(
        "Decode — {}",
        decode_core::display::one_line(&snapshot.project)
    )
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

/// Shows the current decision in a native dialog when the window is not attended (and
/// none is open for it yet).
fn native_for_current(app: &AppHandle) {
    if window_attended(app) || std::env::var_os("DECODE_NO_NATIVE_DIALOGS").is_some() {
        return;
    }
    let state = app.state::<AppState>();
    let project = state.project();
    let channel = Arc::clone(project.chat.decisions());
    let Some(current) = channel.pending_decisions().into_iter().next() else {
        return;
    };
    let id = current.id;
    let mut dialog = dialog_offering(
        &current.request,
        &current.offered,
        &project.active.snapshot().project,
    );
    // A subagent's ask says whose it is (docs/agents.md, "Subagents").
    if let Some(agent) = &current.agent {
        dialog.body = format!(
            "Asked by the subagent {}.\n\n{}",
            decode_core::display::one_line(agent),
            dialog.body
        );
    }
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
    let project = app.state::<AppState>().project();
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
fn refresh_tray(app: &AppHandle) {
    let model = tray_model(app);
    if let Some(tray) = app.state::<AppState>().tray() {
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
    if !app.state::<AppState>().project().chat.running() {
        app.exit(0);
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let spec = crate::native::DialogSpec {
            title: "Quit Decode?".into(),
            body: "A turn is running; quitting stops it.".into(),
            buttons: vec!["Quit".into(), "Keep running".into()],
            pick_folder: None,
        };
        match crate::native::ask(&exe(), &spec).await {
            Ok(Some(0)) => app.exit(0),
            Ok(_) => {}
            // No dialog can be shown: quitting is what was asked for.
            Err(_) => app.exit(0),
        }
    });
}

fn on_tray_menu(app: &AppHandle, item: TrayItem) {
    let project = app.state::<AppState>().project();
    match item {
        TrayItem::Mode(mode) => {
            if let Err(e) = project.active.try_set_mode(mode) {
                tracing::warn!("tray: {e}");
            }
        }
        TrayItem::Agent(name) => {
            if let Err(e) = project.active.select_agent(&name) {
                tracing::warn!("tray: {e}");
            }
        }
        TrayItem::Pending => show_window(app),
        TrayItem::Show => {
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
        }
        TrayItem::Quit => quit(app),
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
    if let Err(e) = app.state::<AppState>().bench.open_folder(&dir) {
        tracing::warn!("could not open {}: {e}", dir.display());
        let spec = crate::native::DialogSpec {
            title: "Decode".into(),
            body: decode_core::display::sanitize(&format!("Could not open {}: {e}", dir.display()))
                .into_owned(),
            buttons: vec!["OK".into()],
            pick_folder: None,
        };
        tauri::async_runtime::spawn(async move {
            let _ = crate::native::ask(&exe(), &spec).await;
        });
    }
}
