//! What the window's commands work on: the [`Workbench`] (the project open now, its
//! chat and decisions, every way to move it), the native dialogs and the tray.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use decode_engine::workbench::{Opened, Project, Workbench};
use decode_protocol::{ChannelEvent, LoopEvent, OpenedKind, PendingDecision, ProjectOpened};

use crate::native::NativeSurface;
use crate::tray::Tray;

/// The id of the main window.
pub(crate) const MAIN: &str = "main";

/// The window's state (Tauri-managed).
pub(crate) struct AppState {
    pub(crate) bench: Arc<Workbench>,
    pub(crate) native: Arc<NativeSurface>,
    pub(crate) tray: Mutex<Option<Arc<Tray>>>,
}

impl AppState {
    pub(crate) fn new(bench: Arc<Workbench>) -> AppState {
        AppState {
            bench,
            native: Arc::new(NativeSurface::new(exe())),
            tray: Mutex::new(None),
        }
    }

    /// The project open now.
    pub(crate) fn project(&self) -> Project {
        self.bench.project()
    }

    pub(crate) fn tray(&self) -> Option<Arc<Tray>> {
        self.tray.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The decisions waiting, as the page receives them.
    pub(crate) fn pending(&self) -> Vec<PendingDecision> {
        self.project()
            .chat
            .decisions()
            .pending_decisions()
            .into_iter()
            .map(|p| PendingDecision {
                request: p.request.for_page(),
                ..p
            })
            .collect()
    }

    /// Everything the page needs to start over on the project open now.
    pub(crate) fn opened(&self, kind: Opened) -> ProjectOpened {
        let project = self.project();
        ProjectOpened {
            kind: match kind {
                Opened::Folder => OpenedKind::Folder,
                Opened::Session => OpenedKind::Session,
                Opened::Reconnected => OpenedKind::Reconnected,
                Opened::NewChat => OpenedKind::NewChat,
            },
            status: project.active.snapshot(),
            chat: project.chat.status(),
            // Long texts reach the page as their head and their size
            // (decode-protocol page.rs).
            history: project
                .chat
                .history()
                .iter()
                .map(LoopEvent::for_page)
                .collect(),
            pending: self.pending(),
        }
    }
}

/// A decision event as the page receives it: long texts cut (decode-protocol page.rs).
pub(crate) fn page_event(event: &ChannelEvent) -> ChannelEvent {
    match event {
        ChannelEvent::Pending {
            id,
            request,
            offered,
            agent,
        } => ChannelEvent::Pending {
            id: *id,
            request: request.for_page(),
            offered: offered.clone(),
            agent: agent.clone(),
        },
        ChannelEvent::Queued {
            id,
            request,
            offered,
            agent,
        } => ChannelEvent::Queued {
            id: *id,
            request: request.for_page(),
            offered: offered.clone(),
            agent: agent.clone(),
        },
        ChannelEvent::Resolved { id, by, answer } => ChannelEvent::Resolved {
            id: *id,
            by: by.clone(),
            answer: answer.clone(),
        },
    }
}

/// This program (the native dialogs run in child processes of it).
pub(crate) fn exe() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("decode-window"))
}
