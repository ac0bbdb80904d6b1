//! Subagents (docs/agents.md, "Subagents"): a `task` call runs an agent of the
//! catalog on a sub-task, in a loop of its own.
//!
//! - its state comes from [`ActiveState::for_subagent`]: its own tools (never
//!   `task`), its own rules beside the project's, its own default mode but never
//!   looser than the parent's mode now;
//! - its context is the prompt alone, its tool session (shell folder, reads, todos)
//!   its own; the parent's "for this session" answers and checkpoint recorder are
//!   shared, and every call it makes goes through the gate like the parent's;
//! - its asks go to the parent's decision surface labelled with its name
//!   ([`LabelledSurface`]), so a deny and its feedback come back to it;
//! - its events reach the parent's sink and transcript wrapped in
//!   [`LoopEvent::Subagent`] under the `task` call's id;
//! - at most [`MAX_PARALLEL_SUBAGENTS`] run at once (the others wait), each for at
//!   most [`SUBAGENT_MAX_TURNS`] model turns; Stop (the parent's token) ends them all;
//! - its final answer — its last assistant text — is the `task` result, capped at
//!   [`TASK_RESULT_MAX_CHARS`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use decode_policy::{Decision, Verdict};
use tokio_util::sync::CancellationToken;

use super::{AgentLoop, CallReport, Emitter, EventSink, LoopConfig, LoopEvent, Outcome};
use crate::decision::LabelledSurface;
use crate::providers::{Message, ModelClient, ToolCall, ToolOutput, Usage};
use crate::tools::{SessionState, TaskInput};

/// How many subagents run at once; a further `task` call waits for one to end.
pub const MAX_PARALLEL_SUBAGENTS: usize = 4;
/// The most model turns one subagent takes before it is stopped.
pub const SUBAGENT_MAX_TURNS: u32 = 50;
/// The most characters of a subagent's answer that reach the parent (the end is cut).
pub const TASK_RESULT_MAX_CHARS: usize = crate::tools::MAX_OUTPUT_CHARS;

/// A `task` call's result before it is reported.
struct TaskEnd {
    content: String,
    is_error: bool,
    ran: bool,
    note: Option<String>,
}

impl TaskEnd {
    fn refused(content: String) -> TaskEnd {
        TaskEnd {
            content,
            is_error: true,
            ran: false,
            note: None,
        }
    }
}

impl AgentLoop {
    /// Runs a `task` call (see the module docs): judged like every call (a control
    /// tool: allowed, unless the agent does not offer it), then the subagent.
    pub(super) async fn run_task(
        &self,
        call: &ToolCall,
        decision: Decision,
        cancel: &CancellationToken,
    ) -> CallReport {
        let verdict = decision.verdict;
        let end = if let Some(me) = &self.subagent {
            TaskEnd::refused(format!(
                "error: a subagent cannot start subagents (you are the subagent `{me}`); do the work yourself with your own tools, or answer with what you found"
            ))
        } else if verdict != Verdict::Allow {
            TaskEnd::refused(format!(
                "denied by the permission gate: {}",
                decision.reason
            ))
        } else {
            match TaskInput::parse(&call.input) {
                Err(e) => TaskEnd::refused(format!("invalid input: {e}")),
                Ok(input) => self.start_subagent(call, &input, cancel).await,
            }
        };
        self.emit(LoopEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            content: end.content.clone(),
            is_error: end.is_error,
            ran: end.ran,
            verdict: Some(verdict),
            answer: None,
            note: end.note,
            diff: None,
            edited_command: None,
            sandboxed: None,
            exit_code: None,
            duration_ms: None,
            stopped: cancel.is_cancelled(),
        });
        CallReport {
            output: ToolOutput {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: end.content,
                is_error: end.is_error,
                shortened: false,
            },
            ran: end.ran,
            denied: verdict == Verdict::Deny,
        }
    }

    async fn start_subagent(
        &self,
        call: &ToolCall,
        input: &TaskInput,
        cancel: &CancellationToken,
    ) -> TaskEnd {
        let active = match self.active.for_subagent(input.agent.trim()) {
            Ok(a) => Arc::new(a),
            Err(e) => return TaskEnd::refused(format!("error: {e}")),
        };
        let agent = active.agent();
        // Wait for a free slot (Stop ends the wait).
        let permit = tokio::select! {
            p = Arc::clone(&self.task_slots).acquire_owned() => p.ok(),
            _ = cancel.cancelled() => None,
        };
        let Some(_permit) = permit else {
            return TaskEnd::refused("not run: the run was stopped".to_string());
        };
        let (client, same_model) = self.subagent_client(&agent.name, agent.model.as_deref());
        let usage = Arc::new(Mutex::new(Usage::default()));
        let sink = self.subagent_sink(&call.id, &agent.name, Arc::clone(&usage));
        let config = LoopConfig {
            max_turns: SUBAGENT_MAX_TURNS,
            context_tokens: if same_model {
                self.config.context_tokens
            } else {
                None
            },
            ..self.config
        };
        let mut child = AgentLoop::new(
            client,
            Arc::clone(&active),
            Arc::new(LabelledSurface::new(
                Arc::clone(&self.decisions),
                &agent.name,
            )),
            config,
        )
        .with_sink(sink)
        .with_session_rules(Arc::clone(&self.session_rules));
        child.tool_session = Arc::new(SessionState::new(active.project_root()));
        child.mcp = self.mcp.clone();
        child.recorder = self.recorder.clone();
        child.subagent = Some(agent.name.clone());
        tracing::info!(agent = %agent.name, mode = %active.mode(), description = %input.description, "subagent started");
        let outcome = run_boxed(&mut child, input.prompt.clone(), cancel.child_token()).await;
        let turns = child
            .messages()
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let used = *usage.lock().unwrap_or_else(|e| e.into_inner());
        tracing::info!(agent = %agent.name, ?outcome, turns, "subagent ended");
        task_end(
            &agent.name,
            outcome,
            final_answer(child.messages()),
            turns,
            used,
        )
    }

    /// The subagent's model client: the provider's own choice (the script provider),
    /// else the same configuration with the agent's `model`, else the parent's.
    /// Also whether it is the parent's model.
    fn subagent_client(&self, agent: &str, model: Option<&str>) -> (Arc<dyn ModelClient>, bool) {
        match self.client.for_subagent(agent, model) {
            Some(c) => {
                let same = c.info().model == self.client.info().model;
                (c, same)
            }
            None => {
                if let Some(m) = model.filter(|m| *m != self.client.info().model) {
                    tracing::warn!(agent, model = m, "the subagent's model is not available from this provider; it runs on the parent's");
                }
                (Arc::clone(&self.client), true)
            }
        }
    }

    /// A sink that wraps each of the subagent's events under the `task` call and
    /// hands it to the parent's emitter (sink and transcript), counting its tokens.
    fn subagent_sink(&self, parent_id: &str, agent: &str, usage: Arc<Mutex<Usage>>) -> EventSink {
        let parent: Arc<Emitter> = Arc::clone(&self.emitter);
        let (parent_id, agent) = (parent_id.to_string(), agent.to_string());
        Arc::new(move |event: &LoopEvent| {
            if let Some(u) = event.turn_usage() {
                usage.lock().unwrap_or_else(|e| e.into_inner()).add(u);
            }
            parent.emit(LoopEvent::Subagent {
                parent_id: parent_id.clone(),
                agent: agent.clone(),
                event: Box::new(event.clone()),
            });
        })
    }
}

/// Runs a subagent's loop. Boxed: the loop's future holds its calls' futures, and a
/// `task` call's future holds a loop.
fn run_boxed(
    child: &mut AgentLoop,
    prompt: String,
    cancel: CancellationToken,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + '_>> {
    Box::pin(async move { child.run(Some(&prompt), cancel).await })
}

/// The subagent's final answer: its last assistant text that is not empty.
fn final_answer(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant { text, .. } if !text.trim().is_empty() => Some(text.trim().to_string()),
        _ => None,
    })
}

/// What the parent reads, from how the subagent ended.
fn task_end(
    agent: &str,
    outcome: Outcome,
    answer: Option<String>,
    turns: usize,
    used: Usage,
) -> TaskEnd {
    let answer = answer.map(|a| cap(&a));
    let (content, is_error) = match (outcome, answer) {
        (Outcome::Completed | Outcome::Denied, Some(a)) => (a, false),
        (Outcome::Completed | Outcome::Denied, None) => (
            format!("the subagent `{agent}` finished without an answer"),
            false,
        ),
        (Outcome::MaxTurns, a) => (
            format!(
                "{}\n[the subagent `{agent}` was stopped after {SUBAGENT_MAX_TURNS} model turns, its limit; the text above is its last answer]",
                a.unwrap_or_default()
            )
            .trim_start()
            .to_string(),
            false,
        ),
        (Outcome::Cancelled, _) => (
            format!("the subagent `{agent}` was stopped before it finished"),
            true,
        ),
        (Outcome::ProviderFailed, _) => (
            format!("the subagent `{agent}` could not finish: its model request failed"),
            true,
        ),
    };
    TaskEnd {
        content,
        is_error,
        ran: true,
        note: Some(format!(
            "subagent {agent}: {turns} model turn{}, {} tokens in, {} out",
            if turns == 1 { "" } else { "s" },
            used.input_tokens,
            used.output_tokens
        )),
    }
}

/// The answer cut to [`TASK_RESULT_MAX_CHARS`] (its start kept), saying so.
fn cap(answer: &str) -> String {
    let total = answer.chars().count();
    if total <= TASK_RESULT_MAX_CHARS {
        return answer.to_string();
    }
    let kept: String = answer.chars().take(TASK_RESULT_MAX_CHARS).collect();
    format!(
        "{kept}\n[… the subagent's answer was cut: {} of {total} characters were left out]",
        total - TASK_RESULT_MAX_CHARS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_the_last_assistant_text() {
        let messages = vec![
            Message::User { text: "p".into() },
            Message::Assistant {
                text: "first".into(),
                tool_calls: Vec::new(),
            },
            Message::Assistant {
                text: " ".into(),
                tool_calls: Vec::new(),
            },
        ];
        assert_eq!(final_answer(&messages).as_deref(), Some("first"));
    }

    #[test]
    fn a_long_answer_is_capped() {
        let long = "x".repeat(TASK_RESULT_MAX_CHARS + 10);
        let capped = cap(&long);
        assert!(capped.starts_with(&"x".repeat(100)));
        assert!(capped.contains("10 of"));
    }
}
