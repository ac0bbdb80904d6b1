//! One window's chat session: the agent loop on the window's project, its transcript,
//! the rules allowed "for this session", and the [`ChatStatus`] the window shows
//! (provider and model, token usage, whether a prompt runs, the todo list).
//!
//! The window sends a prompt with [`ChatSession::start`], which checks that a prompt
//! can run (a provider is set up, nothing else runs) and hands back the future that
//! runs it; every [`LoopEvent`] goes to the sink given for that prompt. Asks go to the
//! one [`DecisionChannel`] the window (and any other surface) answers. [`ChatSession::stop`]
//! cancels the running prompt: the model stream ends and running tools are killed.
//!
//! The transcript is the same JSONL as `decode run` writes (created at the first
//! prompt, so opening a window writes nothing), so `decode run --resume ID` continues
//! a window session and a window opened with a session id continues it.

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use decode_protocol::{
    ChatStatus, ErrorKind, IpcError, LoopEvent, Outcome, Todo, TodoState, TurnCheckpoint, UndoPlan,
    UndoReport, UndoScope,
};
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{AgentLoop, EventSink, LoopConfig};
use crate::channel::DecisionChannel;
use crate::checkpoints::{CheckpointError, Checkpoints};
use crate::config::{self, Config, Overrides, SecretStore, SetupError};
use crate::mcp::McpHub;
use crate::providers::{self, Message, ModelClient};
use crate::session::{ResumedSession, SessionStore};
use crate::session_rules::SessionRules;
use crate::state::ActiveState;
use crate::tools::{TodoItem, TodoStatus};

/// What the chat talks to, or why it cannot talk to anything.
pub enum ChatSetup {
    /// A model client and the loop's limits.
    Ready {
        client: Arc<dyn ModelClient>,
        config: LoopConfig,
    },
    /// No usable provider: `problem` says why and how to set one up (for the window);
    /// `cause` is the reason alone, one line (for the command line).
    Missing { problem: String, cause: String },
}

impl ChatSetup {
    /// What the window's chat talks to: the config file in `config_dir` and the start-up
    /// flags resolved into a model client (keys from `env`, then `store`), or the reason
    /// there is none and how to set one up. Never fails: a missing or broken setup is a
    /// [`ChatSetup::Missing`] the window shows.
    pub fn resolve(
        config_dir: &Path,
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        store: &dyn SecretStore,
    ) -> ChatSetup {
        let config_path = Config::path_in(config_dir);
        let missing = |problem: String, cause: String| {
            tracing::warn!("no model for the chat: {problem}");
            ChatSetup::Missing { problem, cause }
        };
        let config = match Config::load(config_dir) {
            Ok((c, warnings)) => {
                for w in warnings {
                    tracing::warn!("{w}");
                }
                c
            }
            Err(e) => {
                return missing(
                    format!("{e}. Fix the file to chat with a model."),
                    e.to_string(),
                )
            }
        };
        let setup = match config::resolve(&config, overrides, env, store, &config_path) {
            Ok(s) => s,
            Err(e @ SetupError::NoProvider { .. }) => {
                return missing(format!(
                    "No model provider is configured, so messages cannot reach an agent yet. \
                     To set one up, start Decode with provider flags — for a local Ollama: \
                     `decode . --provider openai --base-url http://localhost:11434/v1 --model qwen2.5-coder:7b` — \
                     or write {{\"provider\": \"anthropic\"}} (or gemini, openai) to {} and give the key \
                     with `decode key set anthropic` or ANTHROPIC_API_KEY, then open Decode again. \
                     Switching modes and agents and /help work meanwhile.",
                    config_path.display()
                ), e.to_string())
            }
            Err(e) => return missing(format!("{e}."), e.to_string()),
        };
        match providers::connect(&setup.provider) {
            Ok(client) => {
                let info = client.info();
                tracing::info!(provider = %info.provider, model = %info.model, "chat model ready");
                ChatSetup::Ready {
                    client,
                    config: LoopConfig {
                        max_turns: setup.max_turns,
                        context_tokens: setup.provider.context_tokens,
                        ..LoopConfig::default()
                    },
                }
            }
            Err(e) => missing(format!("{e}."), e.to_string()),
        }
    }
}

/// Called with the new status after every change.
pub type StatusObserver = Arc<dyn Fn(&ChatStatus) + Send + Sync>;

struct Inner {
    status: ChatStatus,
    cancel: Option<CancellationToken>,
    observer: Option<StatusObserver>,
    /// Released for another chat: no prompt starts.
    closed: bool,
}

/// One window's chat session (see the module docs). Share it as `Arc<ChatSession>`.
pub struct ChatSession {
    active: Arc<ActiveState>,
    decisions: Arc<DecisionChannel>,
    store: SessionStore,
    setup: ChatSetup,
    rules: Arc<SessionRules>,
    /// The project's MCP servers (docs/mcp.md): started before the first turn, their
    /// tools offered beside the built-ins.
    mcp: Arc<McpHub>,
    /// The loop, once the first prompt (or a resume) created it.
    agent: tokio::sync::Mutex<Option<AgentLoop>>,
    /// A session to continue, until the first prompt opens the loop on it.
    resume: Mutex<Option<ResumedSession>>,
    /// The transcript to open again after [`ChatSession::try_release`] let go of it.
    reopen: Mutex<Option<String>>,
    history: Vec<LoopEvent>,
    inner: Mutex<Inner>,
    /// Whether a prompt runs, for those waiting until it ended ([`ChatSession::idle`]).
    running: tokio::sync::watch::Sender<bool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn todo(item: &TodoItem) -> Todo {
    Todo {
        content: item.content.clone(),
        status: match item.status {
            TodoStatus::Pending => TodoState::Pending,
            TodoStatus::InProgress => TodoState::InProgress,
            TodoStatus::Done => TodoState::Done,
        },
    }
}

impl ChatSession {
    /// A session on `active`'s project; `resume` continues a saved session.
    pub fn new(
        active: Arc<ActiveState>,
        decisions: Arc<DecisionChannel>,
        store: SessionStore,
        setup: ChatSetup,
        resume: Option<ResumedSession>,
    ) -> ChatSession {
        let mut status = ChatStatus {
            sandbox_problem: crate::sandbox::problem(),
            sandbox_gap: crate::sandbox::gap(),
            ..ChatStatus::default()
        };
        match &setup {
            ChatSetup::Ready { client, .. } => {
                let info = client.info();
                status.provider = Some(info.provider.name().to_string());
                status.model = Some(info.model);
            }
            ChatSetup::Missing { problem, .. } => status.setup_problem = Some(problem.clone()),
        }
        let history = match &resume {
            Some(r) => {
                status.session_id = Some(r.session.id().to_string());
                for u in r.events.iter().filter_map(LoopEvent::turn_usage) {
                    status.usage.add(u);
                }
                r.events.clone()
            }
            None => Vec::new(),
        };
        ChatSession {
            mcp: McpHub::open(Arc::clone(&active)),
            active,
            decisions,
            store,
            setup,
            rules: Arc::new(SessionRules::new()),
            agent: tokio::sync::Mutex::new(None),
            resume: Mutex::new(resume),
            history,
            inner: Mutex::new(Inner {
                status,
                cancel: None,
                observer: None,
                closed: false,
            }),
            reopen: Mutex::new(None),
            running: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Resolves once no prompt runs (at once when none does): after [`ChatSession::stop`],
    /// when the stopped turn has ended, its tools killed and its transcript written.
    pub async fn idle(&self) {
        let mut rx = self.running.subscribe();
        let _ = rx.wait_for(|running| !*running).await;
    }

    /// The decision channel asks go to.
    pub fn decisions(&self) -> &Arc<DecisionChannel> {
        &self.decisions
    }

    /// The rules allowed for this session.
    pub fn session_rules(&self) -> &Arc<SessionRules> {
        &self.rules
    }

    /// The same session with the rules allowed for it taken over from another
    /// (a new provider set up mid-session keeps what the person allowed).
    pub fn with_session_rules(mut self, rules: Arc<SessionRules>) -> ChatSession {
        self.rules = rules;
        self
    }

    /// The project's MCP servers.
    pub fn mcp(&self) -> &Arc<McpHub> {
        &self.mcp
    }

    /// The same session on these MCP servers (another chat's, in the same project:
    /// a new conversation or model setup keeps the servers running).
    pub fn with_mcp(mut self, hub: Arc<McpHub>) -> ChatSession {
        self.mcp = hub;
        self
    }

    /// Drops one rule allowed for this session; the calls it covered ask again.
    pub fn drop_session_rule(&self, rule: &str) -> bool {
        let removed = self.rules.remove(rule);
        if removed {
            tracing::info!(rule, "session rule dropped");
            self.changed(|_| {});
        }
        removed
    }

    /// Closes this chat for another to take the window's place: no prompt can start
    /// on it any more, and its loop lets go of the transcript (another chat may
    /// continue it). Refused (false) while a prompt runs. [`ChatSession::reopen`]
    /// undoes it when the switch fails.
    pub fn try_release(&self) -> bool {
        {
            let mut inner = lock(&self.inner);
            if inner.cancel.is_some() {
                return false;
            }
            inner.closed = true;
        }
        if let Ok(mut agent) = self.agent.try_lock() {
            if agent.take().is_some() || lock(&self.resume).is_some() {
                // Continued from the same transcript if this chat is used again.
                *lock(&self.reopen) = self.session_id();
            }
            // A session waiting to be continued holds its transcript open too.
            lock(&self.resume).take();
        }
        true
    }

    /// Takes this chat back after a switch that failed: prompts start again, on the
    /// same transcript.
    pub fn reopen(&self) {
        lock(&self.inner).closed = false;
    }

    /// The transcript's id, once the first prompt (or a resume) gave it one.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.inner).status.session_id.clone()
    }

    /// Whether a model is set up (a prompt can be sent).
    pub fn ready(&self) -> Option<Arc<dyn ModelClient>> {
        match &self.setup {
            ChatSetup::Ready { client, .. } => Some(Arc::clone(client)),
            ChatSetup::Missing { .. } => None,
        }
    }

    /// The events of the resumed session (empty for a new one), to show its history.
    pub fn history(&self) -> &[LoopEvent] {
        &self.history
    }

    /// The status now.
    pub fn status(&self) -> ChatStatus {
        let mut s = lock(&self.inner).status.clone();
        s.session_rules = self.rules.list();
        s
    }

    /// Registers the one observer of status changes (the window).
    pub fn on_status(&self, observer: StatusObserver) {
        lock(&self.inner).observer = Some(observer);
    }

    fn changed(&self, f: impl FnOnce(&mut ChatStatus)) {
        let observer = {
            let mut inner = lock(&self.inner);
            f(&mut inner.status);
            inner.observer.clone()
        };
        if let Some(o) = observer {
            o(&self.status());
        }
    }

    /// Whether a prompt is running.
    pub fn running(&self) -> bool {
        lock(&self.inner).cancel.is_some()
    }

    /// Stops the running prompt (if any): the model stream ends, running tools are
    /// killed and a pending ask is withdrawn. Returns whether something was running.
    pub fn stop(&self) -> bool {
        let cancel = lock(&self.inner).cancel.clone();
        match cancel {
            Some(c) => {
                tracing::info!("stopping the running prompt");
                c.cancel();
                true
            }
            None => false,
        }
    }

    /// The project's checkpoint store and this chat's session id, for an undo (not
    /// while a prompt runs: its turn is still being recorded).
    fn undo_store(&self) -> Result<(Checkpoints, String), IpcError> {
        if self.running() {
            return Err(IpcError::new(
                ErrorKind::Busy,
                "the agent is still working: stop it or wait for it before undoing",
            ));
        }
        let Some(session) = self.session_id() else {
            return Err(IpcError::new(
                ErrorKind::NotFound,
                "this chat has no turns yet: there is nothing to undo",
            ));
        };
        let Some(data) = self.active.data_dir() else {
            return Err(IpcError::new(
                ErrorKind::Other,
                "Decode has no data folder here, so it keeps no checkpoints",
            ));
        };
        let store = Checkpoints::open(data, self.active.project_root()).map_err(ipc_error)?;
        Ok((store, session))
    }

    /// The turns of this chat's session that changed files, newest first.
    pub fn checkpoint_turns(&self) -> Result<Vec<TurnCheckpoint>, IpcError> {
        let (store, session) = self.undo_store()?;
        store.turns(Some(&session)).map_err(ipc_error)
    }

    /// What "Undo this turn" (`later_turns` false) or "Restore to here" (true) on
    /// turn `turn` of this chat would do, file by file, with diffs and conflicts.
    pub fn undo_plan(&self, turn: u32, later_turns: bool) -> Result<UndoPlan, IpcError> {
        let (store, session) = self.undo_store()?;
        store
            .plan_undo(&UndoScope {
                session,
                turn,
                later_turns,
            })
            .map_err(ipc_error)
    }

    /// Applies that undo: conflicts stay as they are unless listed in `overwrite`.
    pub fn undo(
        &self,
        turn: u32,
        later_turns: bool,
        overwrite: &[String],
    ) -> Result<UndoReport, IpcError> {
        let (store, session) = self.undo_store()?;
        store
            .undo(
                &UndoScope {
                    session,
                    turn,
                    later_turns,
                },
                overwrite,
            )
            .map_err(ipc_error)
    }

    /// Checks that `text` can be sent now and returns the future that runs it to the
    /// end, sending every event to `sink`. Errors: no provider (`no_provider`, with how
    /// to set one up), a prompt already running (`busy`), an empty prompt, a transcript
    /// that cannot be created (`session`).
    pub fn start(
        self: &Arc<Self>,
        text: &str,
        sink: EventSink,
    ) -> Result<impl Future<Output = Outcome> + Send + 'static, IpcError> {
        let text = text.trim().to_string();
        if text.is_empty() {
            return Err(IpcError::new(
                ErrorKind::InvalidInput,
                "the message is empty",
            ));
        }
        self.start_turn(Some(text), sink)
    }

    /// Like [`ChatSession::start`]; without a prompt, the model takes the next turn of
    /// the conversation as it stands (a resumed session that stopped mid-way).
    pub fn start_turn(
        self: &Arc<Self>,
        text: Option<String>,
        sink: EventSink,
    ) -> Result<impl Future<Output = Outcome> + Send + 'static, IpcError> {
        let (client, config) = match &self.setup {
            ChatSetup::Ready { client, config } => (Arc::clone(client), *config),
            ChatSetup::Missing { problem, .. } => {
                return Err(IpcError::new(ErrorKind::NoProvider, problem))
            }
        };
        let cancel = CancellationToken::new();
        {
            let mut inner = lock(&self.inner);
            if inner.closed {
                return Err(IpcError::new(
                    ErrorKind::Busy,
                    "the window is moving to another folder or session: send the message there",
                ));
            }
            if inner.cancel.is_some() {
                return Err(IpcError::new(
                    ErrorKind::Busy,
                    "the agent is still working on the last message: wait for it or press Stop",
                ));
            }
            inner.cancel = Some(cancel.clone());
        }
        self.running.send_replace(true);
        self.changed(|s| s.running = true);
        let this = Arc::clone(self);
        Ok(async move {
            let outcome = this.run(text, sink, client, config, cancel).await;
            lock(&this.inner).cancel = None;
            this.running.send_replace(false);
            this.changed(|s| s.running = false);
            outcome
        })
    }

    async fn run(
        self: &Arc<Self>,
        text: Option<String>,
        sink: EventSink,
        client: Arc<dyn ModelClient>,
        config: LoopConfig,
        cancel: CancellationToken,
    ) -> Outcome {
        // The sink lives in the loop, which the session owns: a weak link, no cycle.
        let weak = Arc::downgrade(self);
        let counting: EventSink = Arc::new(move |e: &LoopEvent| {
            let Some(this) = weak.upgrade() else {
                sink(e);
                return;
            };
            // A subagent's tokens count in the total too (docs/agents.md, "Subagents").
            if let Some(u) = e.turn_usage() {
                this.changed(|s| s.usage.add(u));
            }
            // A subagent's "for this session" answer adds to the same rules.
            let step = match e {
                LoopEvent::Subagent { event, .. } => event.as_ref(),
                other => other,
            };
            if let LoopEvent::ToolResult {
                answer: Some(decode_protocol::DecisionAnswer::AllowForSession { .. }),
                ..
            } = step
            {
                this.changed(|_| {});
            }
            sink(e);
        });
        let mut guard = self.agent.lock().await;
        let agent = match guard.take() {
            Some(a) => a.with_sink(counting),
            None => match self.open_loop(client, config) {
                Ok(a) => a.with_sink(counting),
                Err(e) => {
                    if let Some(text) = text {
                        counting(&LoopEvent::UserPrompt { text });
                    }
                    counting(&LoopEvent::Error {
                        kind: e.kind,
                        message: e.message,
                    });
                    counting(&LoopEvent::Done {
                        outcome: Outcome::ProviderFailed,
                        turns: 0,
                    });
                    return Outcome::ProviderFailed;
                }
            },
        };
        let agent = guard.insert(agent);
        // The servers start once, before the first turn (one that failed to start is
        // not tried again: docs/mcp.md); Stop ends the wait.
        tokio::select! {
            _ = self.mcp.ensure_started() => {}
            _ = cancel.cancelled() => {}
        }
        agent.run(text.as_deref(), cancel).await
    }

    /// Opens the transcript now (a new one, or the session to continue) rather than at
    /// the first prompt: its id, and how many messages the model sees from before.
    pub async fn open_session(self: &Arc<Self>) -> Result<(String, usize), IpcError> {
        let (client, config) = match &self.setup {
            ChatSetup::Ready { client, config } => (Arc::clone(client), *config),
            ChatSetup::Missing { problem, .. } => {
                return Err(IpcError::new(ErrorKind::NoProvider, problem))
            }
        };
        let mut guard = self.agent.lock().await;
        if guard.is_none() {
            *guard = Some(self.open_loop(client, config)?);
        }
        let earlier = guard.as_ref().map(|a| a.history_len()).unwrap_or(0);
        let id = self.session_id().unwrap_or_default();
        Ok((id, earlier))
    }

    /// Creates the loop: on the resumed session, or on a new transcript.
    fn open_loop(
        self: &Arc<Self>,
        client: Arc<dyn ModelClient>,
        config: LoopConfig,
    ) -> Result<AgentLoop, IpcError> {
        let reopened = match lock(&self.reopen).take() {
            Some(id) => Some(
                self.store
                    .open(&id)
                    .map_err(|e| IpcError::new(ErrorKind::Session, e))?,
            ),
            None => None,
        };
        let (session, history): (_, Vec<Message>) = match lock(&self.resume).take().or(reopened) {
            Some(r) => (r.session, r.messages),
            None => {
                let snap = self.active.snapshot();
                let info = client.info();
                let session = self
                    .store
                    .create(
                        self.active.project_root(),
                        &snap.agent,
                        snap.mode.name(),
                        &format!("{}/{}", info.provider, info.model),
                    )
                    .map_err(|e| IpcError::new(ErrorKind::Session, e))?;
                (session, Vec::new())
            }
        };
        let id = session.id().to_string();
        self.changed(|s| s.session_id = Some(id));
        let agent = AgentLoop::new(
            client,
            Arc::clone(&self.active),
            Arc::clone(&self.decisions) as Arc<dyn crate::decision::DecisionSurface>,
            config,
        )
        .with_history(history)
        .with_transcript(session)
        .with_session_rules(Arc::clone(&self.rules))
        .with_mcp(Arc::clone(&self.mcp));
        let weak = Arc::downgrade(self);
        agent.tool_session().subscribe_todos(Box::new(move |items| {
            if let Some(chat) = weak.upgrade() {
                let todos: Vec<Todo> = items.iter().map(todo).collect();
                chat.changed(|s| s.todos = todos);
            }
        }));
        Ok(agent)
    }
}

/// A checkpoint error as the window receives it.
fn ipc_error(e: CheckpointError) -> IpcError {
    let kind = match e {
        CheckpointError::NotFound(_) => ErrorKind::NotFound,
        CheckpointError::TooMany(_) => ErrorKind::Project,
        _ => ErrorKind::Other,
    };
    IpcError::new(kind, e.to_string())
}
