//! What the agent loop reports: every [`LoopEvent`] goes to the surfaces (the window's
//! per-prompt channel, `decode run`'s printer) and into the session transcript.

use decode_policy::{Decision, Mode, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::decision::DecisionAnswer;
use crate::error::ErrorKind;
use crate::messages::{StopReason, ToolCall, Usage};
use crate::policy_ts::{DecisionTs, ModeTs, VerdictTs};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered without calling a tool, and nothing it needed was denied.
    Completed,
    /// The run ended right after a denied call the model did not get around: the last
    /// turn with tool calls had a denial, and no later call ran.
    Denied,
    /// The provider failed (after its retries).
    ProviderFailed,
    /// `maxTurns` model turns were used up.
    MaxTurns,
    /// The run was stopped.
    Cancelled,
}

impl Outcome {
    /// The exit code of `decode run`: 0 completed, 1 provider failure, 3 denied,
    /// 4 turn limit, 130 stopped.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Completed => 0,
            Outcome::ProviderFailed => 1,
            Outcome::Denied => 3,
            Outcome::MaxTurns => 4,
            Outcome::Cancelled => 130,
        }
    }
}

/// Which stream a piece of tool output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProgressStream {
    Stdout,
    Stderr,
    Note,
}

/// Everything the loop reports. Serialises as `{"type": "text_delta", …}` (snake_case
/// type names); the `--json` output of `decode run` and the transcripts are these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LoopEvent {
    /// The person's prompt.
    UserPrompt { text: String },
    /// A model turn begins.
    TurnStart {
        turn: u32,
        agent: String,
        #[ts(as = "ModeTs")]
        mode: Mode,
        model: String,
    },
    /// Text from the model.
    TextDelta { text: String },
    /// The model's whole turn: its text and its tool calls.
    AssistantMessage {
        text: String,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool call is about to go through the gate; `decision` is the gate's verdict
    /// at this moment (absent for calls that cannot be judged: an unknown tool or
    /// arguments that are not JSON).
    ToolCallStarted {
        id: String,
        name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(as = "Option<DecisionTs>", optional)]
        decision: Option<Decision>,
        /// What the call is about, in one line ([`crate::title::call_title`]): filled
        /// for the window by `for_page`, never stored in transcripts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        title: Option<String>,
    },
    /// An image a tool returned (an MCP tool), for the call `id`: a raster type
    /// (PNG, JPEG, GIF, WebP) and its base64 data. Shown as an image, never as HTML;
    /// the model reads a line in the result saying it was shown.
    ToolImage {
        id: String,
        mime_type: String,
        data: String,
    },
    /// Output of a running tool (bash's stdout and stderr as they come).
    ToolProgress {
        id: String,
        stream: ProgressStream,
        text: String,
    },
    /// A tool call finished (or was denied).
    ToolResult {
        id: String,
        name: String,
        /// What the model reads.
        content: String,
        is_error: bool,
        /// Whether the tool actually ran.
        ran: bool,
        /// The gate's verdict.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(as = "Option<VerdictTs>", optional)]
        verdict: Option<Verdict>,
        /// The person's answer, when the gate asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        answer: Option<DecisionAnswer>,
        /// For the person: a saved rule, or why it could not be saved.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        note: Option<String>,
        /// File tools: the change, as a unified diff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        diff: Option<String>,
        /// Bash: the command as the person edited it before it ran ("edited by you").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        edited_command: Option<String>,
        /// Bash: whether the command ran in the sandbox (false: the person approved
        /// it, or this machine has no sandbox).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        sandboxed: Option<bool>,
        /// Bash: the command's exit code, when it ran to its end.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        exit_code: Option<i32>,
        /// How long the tool ran (not the time spent waiting for an answer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        duration_ms: Option<u64>,
        /// The run was stopped while this call ran or before it started.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        #[ts(as = "Option<_>", optional)]
        stopped: bool,
    },
    /// Something the person should know (retries, shortened context, limits).
    Notice { text: String },
    /// A model turn and its tool calls are over.
    TurnEnd {
        turn: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        stop_reason: Option<StopReason>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        usage: Option<Usage>,
    },
    /// The run failed: one sentence.
    Error { kind: ErrorKind, message: String },
    /// The run is over.
    Done { outcome: Outcome, turns: u32 },
    /// A step of a subagent that the `task` call `parent_id` started (docs/agents.md,
    /// "Subagents"): `event` as the subagent's own loop reported it. A surface nests
    /// these under that call; they are never part of the parent's conversation.
    Subagent {
        parent_id: String,
        agent: String,
        event: Box<LoopEvent>,
    },
}

impl LoopEvent {
    /// The tokens a finished model turn used, the turns of subagents included.
    pub fn turn_usage(&self) -> Option<Usage> {
        match self {
            LoopEvent::TurnEnd { usage, .. } => *usage,
            LoopEvent::Subagent { event, .. } => event.turn_usage(),
            _ => None,
        }
    }
}

/// A loop event on its way to the window, stamped with the wall-clock time (Unix
/// milliseconds, fractional) at which the backend handed it over: the UI measures the
/// token-to-paint latency against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct StreamEvent {
    pub at_ms: f64,
    pub event: LoopEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_with_snake_case_types() {
        let e = LoopEvent::TextDelta { text: "hi".into() };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"type": "text_delta", "text": "hi"})
        );
        let d = LoopEvent::Done {
            outcome: Outcome::Denied,
            turns: 2,
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["outcome"], "denied");
        assert_eq!(serde_json::from_value::<LoopEvent>(v).unwrap(), d);
    }

    #[test]
    fn progress_streams_keep_their_transcript_names() {
        let e = LoopEvent::ToolProgress {
            id: "c1".into(),
            stream: ProgressStream::Stderr,
            text: "x".into(),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["stream"], "stderr");
    }

    #[test]
    fn older_transcripts_still_parse() {
        // A tool result written before `edited_command` existed, and an error kind
        // this version does not know.
        let r: LoopEvent = serde_json::from_str(
            r#"{"type":"tool_result","id":"a","name":"bash","content":"ok","is_error":false,"ran":true,"verdict":"allow"}"#,
        )
        .unwrap();
        assert!(matches!(
            r,
            LoopEvent::ToolResult {
                edited_command: None,
                sandboxed: None,
                ..
            }
        ));
        let e: LoopEvent =
            serde_json::from_str(r#"{"type":"error","kind":"from_the_future","message":"m"}"#)
                .unwrap();
        assert_eq!(
            e,
            LoopEvent::Error {
                kind: ErrorKind::Other,
                message: "m".into()
            }
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Outcome::Completed.exit_code(), 0);
        assert_eq!(Outcome::ProviderFailed.exit_code(), 1);
        assert_eq!(Outcome::Denied.exit_code(), 3);
        assert_eq!(Outcome::MaxTurns.exit_code(), 4);
        assert_eq!(Outcome::Cancelled.exit_code(), 130);
    }
}
