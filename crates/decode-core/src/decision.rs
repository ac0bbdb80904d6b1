//! The decision surface (SPEC §6, §8, §9): the one place where a person answers what
//! the agent cannot decide alone — a permission ask, an `ask_user` question, a plan
//! approval. Tools and the agent loop only see the [`DecisionSurface`] trait; the
//! queue that serves the UI modal, native dialogs and the terminal implements it.

use async_trait::async_trait;
use decode_policy::{Decision, Mode, Tool};
use serde::{Deserialize, Serialize};

/// What a person is asked.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionRequest {
    /// The gate said "ask" for a tool call.
    Permission {
        tool: Tool,
        /// The call's subject (command, path, URL) as the gate saw it.
        subject: String,
        /// The tool's input, for display.
        input: serde_json::Value,
        /// The gate's decision: reason, fragments, whether it is capped and the rules
        /// "always allow" would save.
        decision: Decision,
    },
    /// The model asked the person a question (`ask_user`).
    Question {
        question: String,
        /// Suggested answers; the person may also type their own.
        options: Vec<String>,
    },
    /// The model presents a plan to leave plan mode (`exit_plan_mode`).
    PlanApproval { plan: String },
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionAnswer {
    /// Permission: run this call once.
    AllowOnce,
    /// Permission: run it and save these allow rules (possibly edited by the person).
    AlwaysAllow { rules: Vec<String> },
    /// Permission: do not run it; the feedback goes back to the model.
    Deny { feedback: Option<String> },
    /// Question: the person's answer.
    Answer { text: String },
    /// Plan: approved; continue in this mode (edit unless the person picked another).
    PlanApproved { mode: Mode },
    /// Plan: rejected; stay in plan mode; the feedback goes back to the model.
    PlanRejected { feedback: Option<String> },
    /// Nobody can answer (no terminal, the run was stopped): treated as a denial.
    Unavailable { reason: String },
}

/// Where requests go to be answered, one at a time.
#[async_trait]
pub trait DecisionSurface: Send + Sync {
    /// Asks and waits for the answer. Implementations must return
    /// [`DecisionAnswer::Unavailable`] rather than wait forever when nobody can answer.
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer;
}

/// A surface that can never ask anyone: every request is answered `Unavailable` with
/// the given reason (headless runs without a terminal).
pub struct NoSurface {
    pub reason: String,
}

#[async_trait]
impl DecisionSurface for NoSurface {
    async fn ask(&self, _request: DecisionRequest) -> DecisionAnswer {
        DecisionAnswer::Unavailable {
            reason: self.reason.clone(),
        }
    }
}
