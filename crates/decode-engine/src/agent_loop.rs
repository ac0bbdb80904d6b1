//! The agent loop: prompt → model turn → tool calls through the gate → results back to
//! the model → … until the model answers without calling a tool.
//!
//! Each model turn is built *at that moment* from the active state: the active agent's
//! system prompt ([`ActiveState::system_prompt`]), the conversation, and exactly the
//! agent's tools ([`tools::for_agent`] of [`ActiveState::offered_tools`]). So a mode or
//! agent switch made while the loop runs applies at the next gate call or model turn.
//!
//! Every tool call goes through [`tools::call_tool`] — the one gated path: allow runs
//! it, deny returns the reason to the model as the tool result, ask goes to the
//! decision surface and waits. Consecutive read-only and `task` calls of one turn run
//! in parallel; every other call runs alone, in order. A `task` call runs a subagent
//! in a loop of its own ([`subagent`]; docs/agents.md, "Subagents"). Arguments that are not valid JSON
//! and unknown tool names become error results the model can react to.
//!
//! The loop stops when the model answers without tool calls, when a provider fails,
//! after `max_turns` model turns, or when the [`CancellationToken`] fires (which ends
//! the model stream and the running tools at once).
//!
//! Long conversations: before each turn the conversation is measured (≈ characters / 4
//! tokens, system prompt and tool schemas included). Above 80 % of the model's context
//! the oldest tool outputs are shortened (never the person's messages) until it is
//! under 60 %; the person gets a [`LoopEvent::Notice`] and the model reads, inside each
//! shortened output, that it was shortened.
//!
//! Everything that happens is a [`LoopEvent`], sent to the sink (CLI, window) and, when
//! a [`Session`] is attached, appended to its transcript.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use decode_policy::{Decision, ToolKind, Verdict};
use decode_protocol::ErrorKind;
pub use decode_protocol::{LoopEvent, Outcome, ProgressStream};
use futures_util::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::checkpoints::{Checkpoints, TurnRecorder};
use crate::decision::{DecisionAnswer, DecisionSurface};
use crate::mcp::McpHub;
use crate::providers::{
    Message, ModelClient, ModelEvent, ModelRequest, StopReason, ToolCall, ToolCallAssembler,
    ToolOutput, ToolSpec, Usage, DEFAULT_MAX_OUTPUT_TOKENS,
};
use crate::session::Session;
use crate::session_rules::SessionRules;
use crate::state::ActiveState;
use crate::tools::{self, SessionState, ToolContext, ToolHandler, ToolProgress};

mod subagent;
pub use subagent::{MAX_PARALLEL_SUBAGENTS, SUBAGENT_MAX_TURNS, TASK_RESULT_MAX_CHARS};

/// Receives every [`LoopEvent`]; must not block for long.
pub type EventSink = Arc<dyn Fn(&LoopEvent) + Send + Sync>;

/// The loop's limits.
#[derive(Debug, Clone, Copy)]
pub struct LoopConfig {
    /// The most model turns per prompt (config `maxTurns`).
    pub max_turns: u32,
    /// The model's context in tokens; `None` asks the client.
    pub context_tokens: Option<usize>,
    /// The output limit of one turn.
    pub max_output_tokens: u32,
    /// How long running tools get to stop after a cancel before they are dropped.
    pub cancel_grace: Duration,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            max_turns: crate::config::DEFAULT_MAX_TURNS,
            context_tokens: None,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            cancel_grace: Duration::from_secs(2),
        }
    }
}

/// Sends events to the sink and the transcript.
struct Emitter {
    sink: EventSink,
    transcript: Mutex<Option<Session>>,
    transcript_failed: std::sync::atomic::AtomicBool,
}

impl Emitter {
    fn emit(&self, event: LoopEvent) {
        let failure = {
            let mut t = self.transcript.lock().unwrap_or_else(|e| e.into_inner());
            match t.as_mut().map(|s| s.append(&event)) {
                Some(Err(e)) => Some(e.to_string()),
                _ => None,
            }
        };
        (self.sink)(&event);
        if let Some(e) = failure {
            if !self
                .transcript_failed
                .swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                tracing::warn!("transcript write failed: {e}");
                (self.sink)(&LoopEvent::Notice {
                    text: format!("the session transcript could not be written ({e}); the run goes on without it"),
                });
            }
        }
    }

    fn sync(&self) {
        let mut t = self.transcript.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = t.as_mut() {
            if let Err(e) = s.sync() {
                tracing::warn!("transcript sync failed: {e}");
            }
        }
    }
}

/// One conversation with the model (see the module docs).
pub struct AgentLoop {
    client: Arc<dyn ModelClient>,
    active: Arc<ActiveState>,
    decisions: Arc<dyn DecisionSurface>,
    tool_session: Arc<SessionState>,
    session_rules: Arc<SessionRules>,
    emitter: Arc<Emitter>,
    messages: Vec<Message>,
    config: LoopConfig,
    /// The project's MCP servers, whose tools are offered beside the built-ins
    /// (docs/mcp.md).
    mcp: Option<Arc<McpHub>>,
    /// The project's checkpoint store, once a turn opened it (`Err`: it could not be
    /// opened; said once).
    checkpoints: Option<Result<Arc<Checkpoints>, ()>>,
    /// Records what the running turn changes (docs/checkpoints.md).
    recorder: Option<Arc<TurnRecorder>>,
    /// The "larger than the model's context" notice was given in this turn (once a
    /// turn is enough: it would follow every tool call otherwise).
    over_context_said: bool,
    /// This loop is a subagent of that name (it cannot start subagents).
    subagent: Option<String>,
    /// The subagents that may run at once ([`MAX_PARALLEL_SUBAGENTS`]).
    task_slots: Arc<tokio::sync::Semaphore>,
}

/// The percentage of the context above which old tool outputs are shortened.
pub const CONTEXT_HIGH_WATER: usize = 80;
/// The percentage the shortening aims for.
pub const CONTEXT_TARGET: usize = 60;
/// How much of a shortened tool output is kept.
pub const SHORTENED_KEEP_CHARS: usize = 400;

/// The estimate of tokens for `chars` characters.
pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

fn message_chars(m: &Message) -> usize {
    match m {
        Message::User { text } => text.chars().count(),
        Message::Assistant { text, tool_calls } => {
            text.chars().count()
                + tool_calls
                    .iter()
                    .map(|c| {
                        c.name.len()
                            + c.invalid_input
                                .as_ref()
                                .map(|s| s.chars().count())
                                .unwrap_or_else(|| c.input.to_string().chars().count())
                    })
                    .sum::<usize>()
        }
        Message::Tool { results } => results
            .iter()
            .map(|r| r.content.chars().count() + r.name.len())
            .sum(),
    }
}

impl AgentLoop {
    /// A loop with no history, no transcript and a sink that drops events.
    pub fn new(
        client: Arc<dyn ModelClient>,
        active: Arc<ActiveState>,
        decisions: Arc<dyn DecisionSurface>,
        config: LoopConfig,
    ) -> AgentLoop {
        let tool_session = Arc::new(SessionState::new(active.project_root()));
        AgentLoop {
            client,
            active,
            decisions,
            tool_session,
            session_rules: Arc::new(SessionRules::new()),
            emitter: Arc::new(Emitter {
                sink: Arc::new(|_| {}),
                transcript: Mutex::new(None),
                transcript_failed: Default::default(),
            }),
            messages: Vec::new(),
            config,
            mcp: None,
            checkpoints: None,
            recorder: None,
            over_context_said: false,
            subagent: None,
            task_slots: Arc::new(tokio::sync::Semaphore::new(MAX_PARALLEL_SUBAGENTS)),
        }
    }

    /// Offers the tools of these MCP servers too (those the active agent's `tools`
    /// list names), each call through the gate like any other.
    pub fn with_mcp(mut self, hub: Arc<McpHub>) -> AgentLoop {
        self.mcp = Some(hub);
        self
    }

    /// Every handler the model is offered now: the agent's built-in tools, then the
    /// MCP tools it offers.
    async fn offered_handlers(&self) -> Vec<Arc<dyn ToolHandler>> {
        let mut handlers = tools::for_agent(&self.active.offered_tools());
        if let Some(hub) = &self.mcp {
            hub.refresh_tools().await;
            let mut mcp = hub.handlers();
            // The hub offers what the parent's agent lists; a subagent gets only the
            // MCP tools its own agent lists.
            if self.subagent.is_some() {
                let gate = self.active.gate();
                mcp.retain(|h| {
                    decode_policy::mcp::McpName::parse(&h.name())
                        .is_some_and(|n| gate.offers_mcp(&n))
                });
            }
            handlers.extend(mcp);
        }
        handlers
    }

    /// The handler of a tool the model called by name: a built-in tool, or a tool of
    /// a running MCP server.
    fn resolve(&self, name: &str) -> Option<Arc<dyn ToolHandler>> {
        if let Some(tool) = decode_policy::Tool::from_name(name).filter(|t| t.is_model_tool()) {
            return Some(tools::handler(tool));
        }
        if !decode_policy::mcp::is_mcp_name(name) {
            return None;
        }
        self.mcp.as_ref().and_then(|hub| hub.handler(name))
    }

    /// Sends every event to `sink`.
    pub fn with_sink(self, sink: EventSink) -> AgentLoop {
        let transcript = self.take_transcript();
        AgentLoop {
            emitter: Arc::new(Emitter {
                sink,
                transcript: Mutex::new(transcript),
                transcript_failed: Default::default(),
            }),
            ..self
        }
    }

    /// Appends every event to this transcript.
    pub fn with_transcript(self, session: Session) -> AgentLoop {
        *self
            .emitter
            .transcript
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(session);
        self
    }

    /// Uses these "allow for this session" rules (shared with the window, which lists
    /// them).
    pub fn with_session_rules(mut self, rules: Arc<SessionRules>) -> AgentLoop {
        self.session_rules = rules;
        self
    }

    /// Starts from an earlier conversation (a resumed session).
    pub fn with_history(mut self, messages: Vec<Message>) -> AgentLoop {
        self.messages = messages;
        self
    }

    /// How many messages of the conversation the model sees so far.
    pub fn history_len(&self) -> usize {
        self.messages.len()
    }

    fn take_transcript(&self) -> Option<Session> {
        self.emitter
            .transcript
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The transcript's session id, when the loop writes one.
    pub fn session_id(&self) -> Option<String> {
        self.emitter
            .transcript
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|s| s.id().to_string())
    }

    /// The project's checkpoint store, opened on first use (none without a data
    /// folder; a store that cannot be opened is said once and not tried again).
    pub fn checkpoints(&mut self) -> Option<Arc<Checkpoints>> {
        if self.checkpoints.is_none() {
            let data = self.active.data_dir()?.to_path_buf();
            let opened = Checkpoints::open(&data, self.active.project_root());
            self.checkpoints = Some(match opened {
                Ok(c) => {
                    let c = Arc::new(c);
                    // Pruning runs beside the turn, at most once a day.
                    let store = Arc::clone(&c);
                    if let Ok(rt) = tokio::runtime::Handle::try_current() {
                        rt.spawn_blocking(move || store.prune_if_due(&data));
                    }
                    Ok(c)
                }
                Err(e) => {
                    tracing::warn!("checkpoints are off: {e}");
                    self.emit(LoopEvent::Notice {
                        text: format!("Decode cannot keep checkpoints of this project ({e}): what the agent changes cannot be undone"),
                    });
                    Err(())
                }
            });
        }
        self.checkpoints.clone().and_then(Result::ok)
    }

    /// The recorder of the turn the person's last prompt started.
    fn turn_recorder(&mut self) -> Option<Arc<TurnRecorder>> {
        let session = self.session_id()?;
        let (turn, prompt) = self
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::User { text } => Some(text.as_str()),
                _ => None,
            })
            .enumerate()
            .last()
            .map(|(i, t)| (i as u32 + 1, t.to_string()))?;
        let store = self.checkpoints()?;
        Some(Arc::new(TurnRecorder::new(store, &session, turn, &prompt)))
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The per-conversation tool state (shell folder, reads, todos).
    pub fn tool_session(&self) -> Arc<SessionState> {
        Arc::clone(&self.tool_session)
    }

    fn emit(&self, event: LoopEvent) {
        self.emitter.emit(event);
    }

    /// Runs the loop for a new prompt (or, with `None`, continues the conversation as
    /// it stands, e.g. after a resume) until it ends; see [`Outcome`].
    pub async fn run(&mut self, prompt: Option<&str>, cancel: CancellationToken) -> Outcome {
        if let Some(p) = prompt {
            self.messages.push(Message::User {
                text: p.to_string(),
            });
            self.emit(LoopEvent::UserPrompt {
                text: p.to_string(),
            });
        } else if matches!(self.messages.last(), None | Some(Message::Assistant { .. })) {
            // Nothing waits for the model: the conversation is complete.
            self.emit(LoopEvent::Done {
                outcome: Outcome::Completed,
                turns: 0,
            });
            return Outcome::Completed;
        }

        // A subagent records into its parent's turn (set when it started).
        if self.subagent.is_none() {
            self.recorder = self.turn_recorder();
        }
        self.over_context_said = false;
        let mut turns: u32 = 0;
        let mut unresolved_denial = false;
        let outcome = loop {
            if cancel.is_cancelled() {
                break Outcome::Cancelled;
            }
            if turns >= self.config.max_turns {
                self.emit(LoopEvent::Notice {
                    text: format!(
                        "stopped after {turns} model turns (the limit, maxTurns in config.json); send another prompt to go on"
                    ),
                });
                break Outcome::MaxTurns;
            }
            turns += 1;
            match self.turn(turns, &cancel, &mut unresolved_denial).await {
                TurnEnd::Continue => {}
                TurnEnd::Finished(o) => break o,
            }
        };
        let outcome = if outcome == Outcome::Completed && unresolved_denial {
            Outcome::Denied
        } else {
            outcome
        };
        self.emit(LoopEvent::Done { outcome, turns });
        self.emitter.sync();
        outcome
    }

    fn tool_specs(&self, handlers: &[Arc<dyn ToolHandler>]) -> Vec<ToolSpec> {
        handlers
            .iter()
            .map(|h| ToolSpec {
                name: h.name(),
                description: if h.tool() == decode_policy::Tool::Task {
                    self.task_description(h.description())
                } else {
                    h.description().to_string()
                },
                input_schema: h.input_schema(),
            })
            .collect()
    }

    /// The `task` tool's description with the agents it can start (those with a
    /// description), one line each.
    fn task_description(&self, base: &str) -> String {
        let mut text = format!("{base}\n\nThe agents you can start:");
        for a in self.active.catalog().agents() {
            if !a.description.trim().is_empty() {
                text.push_str(&format!("\n- {}: {}", a.name, a.description.trim()));
            }
        }
        text
    }

    async fn turn(
        &mut self,
        turn: u32,
        cancel: &CancellationToken,
        unresolved_denial: &mut bool,
    ) -> TurnEnd {
        let agent = self.active.agent();
        let handlers = self.offered_handlers().await;
        let system = self.active.system_prompt();
        let specs = self.tool_specs(&handlers);
        self.fit_context(&system, &specs);
        let request = ModelRequest {
            system,
            messages: self.messages.clone(),
            tools: specs,
            max_output_tokens: self.config.max_output_tokens,
        };
        let info = self.client.info();
        self.emit(LoopEvent::TurnStart {
            turn,
            agent: agent.name.clone(),
            mode: self.active.mode(),
            model: format!("{}/{}", info.provider, info.model),
        });

        let mut stream = self.client.stream(request, cancel.child_token());
        let mut text = String::new();
        let mut calls = ToolCallAssembler::default();
        let mut stop: Option<StopReason> = None;
        let mut usage: Option<Usage> = None;
        let mut error = None;
        let mut cancelled = false;
        loop {
            let event = tokio::select! {
                biased;
                _ = cancel.cancelled() => { cancelled = true; break; }
                e = stream.next() => e,
            };
            let Some(event) = event else { break };
            match event {
                ModelEvent::TextDelta { text: t } => {
                    text.push_str(&t);
                    self.emit(LoopEvent::TextDelta { text: t });
                }
                ModelEvent::Usage(u) => usage = Some(u),
                ModelEvent::Stop(r) => stop = Some(r),
                ModelEvent::Retrying {
                    attempt,
                    delay_ms,
                    reason,
                } => self.emit(LoopEvent::Notice {
                    text: format!(
                        "the model request failed ({reason}); trying again in {:.1} s (try {})",
                        delay_ms as f64 / 1000.0,
                        attempt + 1
                    ),
                }),
                ModelEvent::Error(e) => {
                    error = Some(e);
                    break;
                }
                other => {
                    calls.feed(&other);
                }
            }
        }
        drop(stream);

        if cancelled || error.is_some() || stop.is_none() {
            // Keep what the person already saw, without half-made tool calls.
            if !text.is_empty() {
                self.push_assistant(text, Vec::new());
            }
            if cancelled {
                return TurnEnd::Finished(Outcome::Cancelled);
            }
            let (kind, message) = match error {
                Some(e) => (e.error_kind(), e.message),
                None => (
                    ErrorKind::StreamCut,
                    format!(
                        "the answer from {} ended before it was complete",
                        info.provider
                    ),
                ),
            };
            self.emit(LoopEvent::Error { kind, message });
            return TurnEnd::Finished(Outcome::ProviderFailed);
        }

        let calls = calls.finish();
        self.push_assistant(text, calls.clone());
        if calls.is_empty() {
            if stop == Some(StopReason::MaxTokens) {
                self.emit(LoopEvent::Notice {
                    text: "the model reached its output limit for one turn; its answer may be cut short".into(),
                });
            }
            self.emit(LoopEvent::TurnEnd {
                turn,
                stop_reason: stop,
                usage,
            });
            self.emitter.sync();
            return TurnEnd::Finished(Outcome::Completed);
        }

        let results = self.run_calls(&calls, cancel).await;
        let any_denied = results.iter().any(|r| r.denied);
        let any_ran = results.iter().any(|r| r.ran);
        if any_denied {
            *unresolved_denial = true;
        } else if any_ran {
            *unresolved_denial = false;
        }
        self.messages.push(Message::Tool {
            results: results.into_iter().map(|r| r.output).collect(),
        });
        self.emit(LoopEvent::TurnEnd {
            turn,
            stop_reason: stop,
            usage,
        });
        self.emitter.sync();
        if cancel.is_cancelled() {
            return TurnEnd::Finished(Outcome::Cancelled);
        }
        TurnEnd::Continue
    }

    fn push_assistant(&mut self, text: String, tool_calls: Vec<ToolCall>) {
        self.messages.push(Message::Assistant {
            text: text.clone(),
            tool_calls: tool_calls.clone(),
        });
        self.emit(LoopEvent::AssistantMessage { text, tool_calls });
    }

    /// Runs a turn's calls: consecutive read-only calls together, others one by one.
    async fn run_calls(&self, calls: &[ToolCall], cancel: &CancellationToken) -> Vec<CallReport> {
        let mut reports = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let parallel = is_parallel_safe(&calls[i]);
            let mut j = i + 1;
            if parallel {
                while j < calls.len() && is_parallel_safe(&calls[j]) {
                    j += 1;
                }
            }
            let batch = &calls[i..j];
            if cancel.is_cancelled() {
                reports.extend(batch.iter().map(|c| self.cancelled_report(c)));
            } else {
                let futures = batch.iter().map(|c| self.run_one(c, cancel));
                let all = join_all(futures);
                tokio::pin!(all);
                let done = tokio::select! {
                    r = &mut all => Some(r),
                    _ = cancel.cancelled() => {
                        tokio::time::timeout(self.config.cancel_grace, &mut all).await.ok()
                    }
                };
                match done {
                    Some(r) => reports.extend(r),
                    None => reports.extend(batch.iter().map(|c| self.cancelled_report(c))),
                }
            }
            i = j;
        }
        reports
    }

    fn cancelled_report(&self, call: &ToolCall) -> CallReport {
        self.not_run_as(call, "not run: the run was stopped".to_string(), true)
    }

    /// A call that did not run: reported to the sink and to the model as an error.
    fn not_run(&self, call: &ToolCall, content: String) -> CallReport {
        self.not_run_as(call, content, false)
    }

    fn not_run_as(&self, call: &ToolCall, content: String, stopped: bool) -> CallReport {
        self.emit(LoopEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            content: content.clone(),
            is_error: true,
            ran: false,
            verdict: None,
            answer: None,
            note: None,
            diff: None,
            edited_command: None,
            sandboxed: None,
            exit_code: None,
            duration_ms: None,
            stopped,
        });
        CallReport {
            output: ToolOutput {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error: true,
                shortened: false,
            },
            ran: false,
            denied: false,
        }
    }

    async fn run_one(&self, call: &ToolCall, cancel: &CancellationToken) -> CallReport {
        let fail = |content: String| self.not_run(call, content);

        let Some(handler) = self.resolve(&call.name) else {
            self.emit(LoopEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                decision: None,
                title: None,
            });
            let offered: Vec<String> = self
                .offered_handlers()
                .await
                .iter()
                .map(|h| h.name())
                .collect();
            return fail(format!(
                "error: there is no tool `{}`; the tools available are: {}",
                call.name,
                offered.join(", ")
            ));
        };
        if let Some(raw) = &call.invalid_input {
            self.emit(LoopEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
                input: Value::String(raw.clone()),
                decision: None,
                title: None,
            });
            let why = match serde_json::from_str::<Value>(raw) {
                Err(e) => format!("they are not valid JSON ({e})"),
                Ok(_) => "they are not a JSON object".to_string(),
            };
            return fail(format!(
                "error: the arguments of this `{}` call could not be used: {why}. Nothing was run. Call the tool again with a JSON object as its arguments.",
                call.name
            ));
        }

        if handler.tool() == decode_policy::Tool::Task {
            let decision = self
                .active
                .decide_in(&handler.gate_call(&call.input), &self.tool_session.cwd());
            self.emit(LoopEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                decision: Some(decision.clone()),
                title: None,
            });
            return self.run_task(call, decision, cancel).await;
        }
        // The call's start is reported when the tool's own path first judges it:
        // one judging for the card and for the run (the host of a fetch resolved,
        // a file's links followed).
        let started = {
            let emitter = Arc::clone(&self.emitter);
            let (id, name, input) = (call.id.clone(), call.name.clone(), call.input.clone());
            Arc::new(move |decision: &Decision| {
                emitter.emit(LoopEvent::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    decision: Some(decision.clone()),
                    title: None,
                });
            })
        };

        let emitter = Arc::clone(&self.emitter);
        let id = call.id.clone();
        let progress: tools::ProgressSink = Arc::new(move |p: ToolProgress| {
            let (stream, text) = match p {
                ToolProgress::Stdout { text } => (ProgressStream::Stdout, text),
                ToolProgress::Stderr { text } => (ProgressStream::Stderr, text),
                ToolProgress::Note { text } => (ProgressStream::Note, text),
            };
            emitter.emit(LoopEvent::ToolProgress {
                id: id.clone(),
                stream,
                text,
            });
        });
        let ctx = ToolContext::new(Arc::clone(&self.active), Arc::clone(&self.decisions))
            .with_session(Arc::clone(&self.tool_session))
            .with_session_rules(Arc::clone(&self.session_rules))
            .with_cancel(cancel.child_token())
            .with_progress(progress)
            .with_checkpoint(self.recorder.clone())
            .with_intent(match self.messages.last() {
                Some(Message::Assistant { text, .. }) => tools::last_sentence(text),
                _ => None,
            })
            .with_on_judged(started);
        let outcome = tools::call_tool(&*handler, call.input.clone(), &ctx).await;

        let denied = !outcome.ran
            && (outcome.decision.verdict == Verdict::Deny
                || matches!(
                    outcome.answer,
                    Some(DecisionAnswer::Deny { .. }) | Some(DecisionAnswer::Unavailable { .. })
                ));
        self.emit(LoopEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            content: outcome.result.content.clone(),
            is_error: outcome.result.is_error,
            ran: outcome.ran,
            verdict: Some(outcome.decision.verdict),
            answer: outcome.answer.clone(),
            note: outcome.note.clone(),
            diff: outcome.result.diff.clone(),
            edited_command: outcome.edited_command.clone(),
            sandboxed: outcome.result.sandboxed,
            exit_code: outcome.result.exit_code,
            duration_ms: outcome.result.duration_ms,
            stopped: cancel.is_cancelled(),
        });
        for image in &outcome.result.images {
            self.emit(LoopEvent::ToolImage {
                id: call.id.clone(),
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
            });
        }
        CallReport {
            output: ToolOutput {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: outcome.result.content,
                is_error: outcome.result.is_error,
                shortened: false,
            },
            ran: outcome.ran,
            denied,
        }
    }

    /// The model's context in tokens.
    pub fn context_tokens(&self) -> usize {
        self.config
            .context_tokens
            .unwrap_or_else(|| self.client.context_tokens())
            .max(1)
    }

    /// The estimated tokens of the next request.
    pub fn estimated_tokens(&self, system: &str, tools: &[ToolSpec]) -> usize {
        let fixed = system.chars().count()
            + tools
                .iter()
                .map(|t| t.description.len() + t.input_schema.to_string().len() + t.name.len())
                .sum::<usize>();
        estimate_tokens(fixed + self.messages.iter().map(message_chars).sum::<usize>())
    }

    /// Shortens the oldest tool outputs when the conversation nears the context limit.
    fn fit_context(&mut self, system: &str, tools: &[ToolSpec]) {
        let limit = self.context_tokens();
        let before = self.estimated_tokens(system, tools);
        if before * 100 <= limit * CONTEXT_HIGH_WATER {
            return;
        }
        let target = limit * CONTEXT_TARGET / 100;
        // Work in characters: tokens ≈ characters / 4.
        let mut chars = before * 4;
        let mut shortened = 0usize;
        // Oldest first; the newest tool results last of all.
        let last_tool = self
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::Tool { .. }));
        let mut order: Vec<usize> = self
            .messages
            .iter()
            .enumerate()
            .filter(|(i, m)| matches!(m, Message::Tool { .. }) && Some(*i) != last_tool)
            .map(|(i, _)| i)
            .collect();
        order.extend(last_tool);
        'outer: for mi in order {
            if let Message::Tool { results } = &mut self.messages[mi] {
                for r in results.iter_mut() {
                    if estimate_tokens(chars) <= target {
                        break 'outer;
                    }
                    if r.shortened {
                        continue;
                    }
                    let total = r.content.chars().count();
                    if total <= SHORTENED_KEEP_CHARS + 200 {
                        continue;
                    }
                    let kept: String = r.content.chars().take(SHORTENED_KEEP_CHARS).collect();
                    let removed = total - SHORTENED_KEEP_CHARS;
                    r.content = format!(
                        "{kept}\n[… Decode shortened this old tool output to save context: {removed} of {total} characters were removed. Run the tool again if you need them.]"
                    );
                    r.shortened = true;
                    shortened += 1;
                    chars = chars.saturating_sub(total) + r.content.chars().count();
                }
            }
        }
        let estimate = self.estimated_tokens(system, tools);
        let pct = |t: usize| t * 100 / limit;
        if shortened > 0 {
            tracing::info!(
                shortened,
                before,
                after = estimate,
                limit,
                "context shortened"
            );
            self.emit(LoopEvent::Notice {
                text: format!(
                    "the conversation neared the model's context limit (≈{before} of {limit} tokens, {}%): shortened {shortened} old tool output{} to ≈{} tokens ({}%); your messages are kept whole",
                    pct(before),
                    if shortened == 1 { "" } else { "s" },
                    estimate,
                    pct(estimate)
                ),
            });
        }
        if estimate > limit && !self.over_context_said {
            self.over_context_said = true;
            self.emit(LoopEvent::Notice {
                text: format!(
                    "the conversation (≈{estimate} tokens) is larger than the model's context ({limit} tokens) even with old tool outputs shortened; the provider may refuse it — start a new session or raise contextTokens"
                ),
            });
        }
    }
}

enum TurnEnd {
    Continue,
    Finished(Outcome),
}

struct CallReport {
    output: ToolOutput,
    ran: bool,
    denied: bool,
}

/// Read-only calls and `task` calls (subagents, each gated call by call) with usable
/// arguments may run beside each other.
fn is_parallel_safe(call: &ToolCall) -> bool {
    call.invalid_input.is_none()
        && decode_policy::Tool::from_name(&call.name)
            .is_some_and(|t| t.kind() == ToolKind::ReadOnly || t == decode_policy::Tool::Task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_is_chars_over_four() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(4), 1);
        assert_eq!(estimate_tokens(5), 2);
    }
}
