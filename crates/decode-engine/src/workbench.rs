//! The [`Workbench`]: one project at a time, with its active state, its chat and its
//! decision channel, and every way to move it — open a folder or a saved session,
//! reconnect to a new model setup, start a new conversation, stop the running turn
//! first (docs/architecture.md, "The Workbench").
//!
//! The window and `decode run` both drive a workbench; neither assembles a state, a
//! chat or a model setup of its own. Surfaces subscribe once ([`Workbench::subscribe`])
//! and get every [`WorkbenchEvent`] of whatever project is open now: the workbench
//! re-attaches to each project it opens. Every failure is a [`WorkbenchError`] with a
//! kind the surfaces match (`busy` when a turn runs, `project`, `session`…), never a
//! text to guess from.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use decode_core::dirs::Dirs;
use decode_core::state::{ActiveState, Diagnostic, Snapshot, SubscriptionId};
use decode_policy::Mode;
use decode_protocol::{ChannelEvent, ChatStatus, ErrorKind, IpcError};

use crate::channel::{ChannelSubscription, DecisionChannel};
use crate::chat::{ChatSession, ChatSetup};
use crate::config::{KeyringStore, Overrides};
use crate::session::{ResumedSession, SessionError, SessionStore};

/// A failure of the workbench, with the kind surfaces match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WorkbenchError {
    pub kind: ErrorKind,
    pub message: String,
}

impl WorkbenchError {
    fn new(kind: ErrorKind, message: impl std::fmt::Display) -> WorkbenchError {
        WorkbenchError {
            kind,
            message: message.to_string(),
        }
    }

    fn busy() -> WorkbenchError {
        WorkbenchError::new(
            ErrorKind::Busy,
            "a turn is running in this project: stop it first",
        )
    }
}

impl From<WorkbenchError> for IpcError {
    fn from(e: WorkbenchError) -> IpcError {
        IpcError::new(e.kind, e.message)
    }
}

impl From<decode_core::state::StateError> for WorkbenchError {
    fn from(e: decode_core::state::StateError) -> WorkbenchError {
        WorkbenchError::new(e.error_kind(), e)
    }
}

impl From<SessionError> for WorkbenchError {
    fn from(e: SessionError) -> WorkbenchError {
        WorkbenchError::new(ErrorKind::Session, e)
    }
}

/// One project open in the workbench: its state (agent, mode, gate) and its chat.
#[derive(Clone)]
pub struct Project {
    pub active: Arc<ActiveState>,
    pub chat: Arc<ChatSession>,
}

/// What to open.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The folder (default: the resumed session's, else the current folder).
    pub project: Option<PathBuf>,
    /// A saved session to continue.
    pub resume: Option<String>,
    /// The agent to start with (default `build`).
    pub agent: Option<String>,
    /// The mode to start in (default: the agent's).
    pub mode: Option<Mode>,
}

/// What a surface is told about the project open now.
// A decision event is the largest (the request and what it offers), and there are a
// handful per turn: boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum WorkbenchEvent {
    /// The mode, agent, agents or trust changed.
    Status(Snapshot),
    /// The chat's status changed (usage, running, session rules, todos).
    Chat(ChatStatus),
    /// A decision was asked, queued or resolved.
    Decision(ChannelEvent),
    /// Another project, session or model setup is open now: surfaces start over on it.
    Opened(Opened),
}

/// Why the workbench moved, with what a surface needs to start over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// Another folder (a new conversation on it).
    Folder,
    /// A saved session (its history is in the chat).
    Session,
    /// The same folder and session, with a new model setup (nothing to redraw but the
    /// chat's status).
    Reconnected,
    /// The same folder, a new conversation (the old one stays in the sessions list).
    NewChat,
}

type Listener = Arc<dyn Fn(&WorkbenchEvent) + Send + Sync>;

/// The subscriptions the workbench holds on the project open now.
struct Attached {
    state: Option<(Arc<ActiveState>, SubscriptionId)>,
    channel: Option<(Arc<DecisionChannel>, ChannelSubscription)>,
}

/// See the module docs.
pub struct Workbench {
    dirs: Dirs,
    overrides: Overrides,
    project: RwLock<Project>,
    listeners: Arc<Mutex<Vec<Listener>>>,
    attached: Mutex<Attached>,
    /// Held while the workbench moves (one move at a time).
    moving: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

impl Workbench {
    /// Opens `target` with the start-up flags `overrides` (they override the config
    /// file for this run): the project's state (agent, mode, gate; the diagnostics of
    /// its files come back), a chat on the model setup, continuing the session when
    /// one is given.
    pub fn open(
        dirs: Dirs,
        overrides: Overrides,
        target: &Target,
    ) -> Result<(Workbench, Vec<Diagnostic>), WorkbenchError> {
        let store = SessionStore::new(&dirs.data);
        let resumed = match &target.resume {
            Some(id) => Some(store.open(id)?),
            None => None,
        };
        let folder = target
            .project
            .clone()
            .or_else(|| resumed.as_ref().map(|r| r.session.header().project.clone()))
            .unwrap_or_else(|| PathBuf::from("."));
        let (active, diagnostics) = ActiveState::open(
            &folder,
            &dirs.home,
            &dirs.data,
            target.agent.as_deref(),
            target.mode,
        )?;
        let setup = chat_setup(&dirs, &overrides);
        let project = new_project(Arc::new(active), &dirs, setup, resumed, None, None);
        let workbench = Workbench {
            dirs,
            overrides,
            project: RwLock::new(project.clone()),
            listeners: Arc::new(Mutex::new(Vec::new())),
            attached: Mutex::new(Attached {
                state: None,
                channel: None,
            }),
            moving: Mutex::new(()),
        };
        workbench.attach(&project, true);
        Ok((workbench, diagnostics))
    }

    /// Puts the folder open now on the recent-projects list (the window does, when it
    /// opens; every later move does it itself).
    pub fn remember(&self) {
        remember(&self.dirs, self.project().active.project_root());
    }

    /// The project open now.
    pub fn project(&self) -> Project {
        self.project
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Decode's folders.
    pub fn dirs(&self) -> &Dirs {
        &self.dirs
    }

    /// Whether start-up flags choose the provider for this run.
    pub fn overridden(&self) -> bool {
        let o = &self.overrides;
        o.provider.is_some() || o.model.is_some() || o.base_url.is_some() || o.script.is_some()
    }

    /// The model setup the config and the start-up flags give now.
    pub fn chat_setup(&self) -> ChatSetup {
        chat_setup(&self.dirs, &self.overrides)
    }

    /// Registers a surface: every event of the project open now, and of every project
    /// opened later.
    pub fn subscribe(&self, listener: Arc<dyn Fn(&WorkbenchEvent) + Send + Sync>) {
        lock(&self.listeners).push(listener);
    }

    fn emit(&self, event: &WorkbenchEvent) {
        emit(&self.listeners, event);
    }

    /// Opens another folder, on a new conversation. Nothing happens when it is the
    /// folder open now. Refused while a turn runs ([`Workbench::stop_then`] stops it
    /// first).
    pub fn open_folder(&self, dir: &Path) -> Result<(), WorkbenchError> {
        let canonical = std::fs::canonicalize(dir).map_err(|e| {
            WorkbenchError::new(ErrorKind::Project, format!("{}: {e}", dir.display()))
        })?;
        if !canonical.is_dir() {
            return Err(WorkbenchError::new(
                ErrorKind::Project,
                format!("{} is not a folder", dir.display()),
            ));
        }
        if canonical == self.project().active.project_root() {
            return Ok(());
        }
        self.move_to(Move::Folder(canonical), self.chat_setup())
    }

    /// Continues a saved session (in its own folder).
    pub fn resume(&self, id: &str) -> Result<(), WorkbenchError> {
        let (header, _, _) = SessionStore::new(&self.dirs.data).read(id)?;
        self.move_to(
            Move::Session(header.project, id.to_string()),
            self.chat_setup(),
        )
    }

    /// A new model setup (after the provider, model or key changed): the folder, the
    /// session and what was allowed for it stay.
    pub fn reconnect(&self) -> Result<(), WorkbenchError> {
        self.move_to(Move::Reconnect, self.chat_setup())
    }

    /// A new conversation in the same folder: the model sees nothing of the old one,
    /// which stays in the sessions list.
    pub fn new_chat(&self) -> Result<(), WorkbenchError> {
        self.move_to(Move::NewChat, self.chat_setup())
    }

    /// Opens the offline demo: a fresh copy of the sample project (trusted: the folder
    /// is Decode's own) with the script provider.
    pub fn start_demo(&self) -> Result<(), WorkbenchError> {
        let base = crate::demo::base_dir(&self.dirs.home, |k| std::env::var_os(k));
        let (folder, script) =
            crate::demo::create(&base).map_err(|e| WorkbenchError::new(ErrorKind::Project, e))?;
        decode_core::trust::TrustStore::open(&self.dirs.data)
            .trust(&folder)
            .map_err(|e| WorkbenchError::new(ErrorKind::Project, e))?;
        if let Err(e) =
            decode_core::projects::ProjectStore::open(&self.dirs.data).mark_trust_asked(&folder)
        {
            tracing::warn!("{e}");
        }
        let overrides = Overrides {
            provider: Some(crate::providers::ProviderKind::Script),
            script: Some(script),
            max_turns: self.overrides.max_turns,
            ..Overrides::default()
        };
        let setup = chat_setup(&self.dirs, &overrides);
        self.move_to(Move::Folder(folder), setup)
    }

    /// Stops the running turn (if any) and waits until it has ended — its tools
    /// killed, its transcript written — then does `then`.
    pub async fn stop_then<T>(
        &self,
        then: impl FnOnce(&Workbench) -> Result<T, WorkbenchError>,
    ) -> Result<T, WorkbenchError> {
        let chat = self.project().chat;
        if chat.stop() {
            chat.idle().await;
        }
        then(self)
    }

    fn move_to(&self, to: Move, setup: ChatSetup) -> Result<(), WorkbenchError> {
        let _moving = lock(&self.moving);
        let current = self.project();
        if current.chat.running() {
            return Err(WorkbenchError::busy());
        }
        let active = match &to {
            Move::Folder(dir) | Move::Session(dir, _) => {
                let (active, diagnostics) =
                    ActiveState::open(dir, &self.dirs.home, &self.dirs.data, None, None)?;
                for d in diagnostics {
                    tracing::warn!("{d}");
                }
                Arc::new(active)
            }
            Move::Reconnect | Move::NewChat => Arc::clone(&current.active),
        };
        // The old chat closes (no prompt can start on it from here) and lets go of its
        // transcript before a session is opened again; if anything fails it reopens.
        if !current.chat.try_release() {
            return Err(WorkbenchError::busy());
        }
        let resumed = match self.session_to_open(&to, &current) {
            Ok(r) => r,
            Err(e) => {
                current.chat.reopen();
                return Err(e);
            }
        };
        current
            .chat
            .decisions()
            .cancel_all("another project, session or model setup was opened");
        // What was allowed for this session stays with it on a new model setup.
        let rules = matches!(to, Move::Reconnect).then(|| Arc::clone(current.chat.session_rules()));
        // The same folder keeps its MCP servers running.
        let mcp =
            matches!(to, Move::Reconnect | Move::NewChat).then(|| Arc::clone(current.chat.mcp()));
        let project = new_project(active, &self.dirs, setup, resumed, rules, mcp);
        drop(current);
        *self.project.write().unwrap_or_else(|p| p.into_inner()) = project.clone();
        let same_state = matches!(to, Move::Reconnect | Move::NewChat);
        self.attach(&project, !same_state);
        if !same_state {
            remember(&self.dirs, project.active.project_root());
        }
        let opened = match to {
            Move::Folder(_) => Opened::Folder,
            Move::Session(..) => Opened::Session,
            Move::Reconnect => Opened::Reconnected,
            Move::NewChat => Opened::NewChat,
        };
        tracing::info!(
            project = %project.active.project_root().display(),
            ?opened,
            "the workbench moved"
        );
        self.emit(&WorkbenchEvent::Opened(opened));
        Ok(())
    }

    /// The session a move continues: the one asked for, the current one on a new
    /// model setup, none otherwise.
    fn session_to_open(
        &self,
        to: &Move,
        current: &Project,
    ) -> Result<Option<ResumedSession>, WorkbenchError> {
        let id = match to {
            Move::Session(_, id) => Some(id.clone()),
            Move::Reconnect => current.chat.session_id(),
            Move::Folder(_) | Move::NewChat => None,
        };
        let Some(id) = id else {
            return Ok(None);
        };
        let store = SessionStore::new(&self.dirs.data);
        // The chat that let go of the transcript may still be closing it a moment.
        for _ in 0..20 {
            match store.open(&id) {
                Err(SessionError::Busy { .. }) => {
                    std::thread::sleep(std::time::Duration::from_millis(50))
                }
                other => return Ok(Some(other?)),
            }
        }
        Ok(Some(store.open(&id)?))
    }

    /// Forwards the events of `project` to the listeners (and stops forwarding those
    /// of the project before). `with_state`: the state is new too.
    fn attach(&self, project: &Project, with_state: bool) {
        let mut attached = lock(&self.attached);
        let listeners = Arc::clone(&self.listeners);
        project.chat.on_status(Arc::new(move |status: &ChatStatus| {
            emit(&listeners, &WorkbenchEvent::Chat(status.clone()));
        }));
        if let Some((channel, sub)) = attached.channel.take() {
            channel.unsubscribe(sub);
        }
        let listeners = Arc::clone(&self.listeners);
        let channel = Arc::clone(project.chat.decisions());
        let sub = channel.subscribe(Box::new(move |event: &ChannelEvent| {
            emit(&listeners, &WorkbenchEvent::Decision(event.clone()));
        }));
        attached.channel = Some((channel, sub));
        if with_state {
            if let Some((state, sub)) = attached.state.take() {
                state.unsubscribe(sub);
            }
            let listeners = Arc::clone(&self.listeners);
            let sub = project.active.subscribe(Box::new(move |snap: &Snapshot| {
                emit(&listeners, &WorkbenchEvent::Status(snap.clone()));
            }));
            attached.state = Some((Arc::clone(&project.active), sub));
        }
    }
}

/// Where a move goes.
enum Move {
    Folder(PathBuf),
    Session(PathBuf, String),
    Reconnect,
    NewChat,
}

fn emit(listeners: &Mutex<Vec<Listener>>, event: &WorkbenchEvent) {
    let listeners: Vec<Listener> = lock(listeners).iter().cloned().collect();
    for l in listeners {
        l(event);
    }
}

fn chat_setup(dirs: &Dirs, overrides: &Overrides) -> ChatSetup {
    ChatSetup::resolve(&dirs.config, overrides, &env, &KeyringStore)
}

fn new_project(
    active: Arc<ActiveState>,
    dirs: &Dirs,
    setup: ChatSetup,
    resumed: Option<ResumedSession>,
    rules: Option<Arc<crate::session_rules::SessionRules>>,
    mcp: Option<Arc<crate::mcp::McpHub>>,
) -> Project {
    let mut chat = ChatSession::new(
        Arc::clone(&active),
        Arc::new(DecisionChannel::new()),
        SessionStore::new(&dirs.data),
        setup,
        resumed,
    );
    if let Some(rules) = rules {
        chat = chat.with_session_rules(rules);
    }
    if let Some(mcp) = mcp {
        chat = chat.with_mcp(mcp);
    }
    Project {
        active,
        chat: Arc::new(chat),
    }
}

/// Puts a folder on the recent-projects list.
fn remember(dirs: &Dirs, dir: &Path) {
    if let Err(e) = decode_core::projects::ProjectStore::open(&dirs.data).touch(dir) {
        tracing::warn!("could not update the recent projects: {e}");
    }
}
