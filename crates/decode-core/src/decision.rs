//! The decision surface (docs/permissions.md; docs/agents.md; docs/window.md): the one place where a person answers what
//! the agent cannot decide alone — a permission ask, an `ask_user` question, a plan
//! approval. Tools and the agent loop only see the [`DecisionSurface`] trait; the
//! queue that serves the UI modal, native dialogs and the terminal implements it.

use async_trait::async_trait;
pub use decode_protocol::{DecisionAnswer, DecisionRequest};

/// Where requests go to be answered, one at a time.
#[async_trait]
pub trait DecisionSurface: Send + Sync {
    /// Asks and waits for the answer. Implementations must return
    /// [`DecisionAnswer::Unavailable`] rather than wait forever when nobody can answer.
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer;

    /// Asks on behalf of `agent`, a subagent (docs/agents.md, "Subagents"): the
    /// person sees whose request it is. `None` is the agent the person talks to.
    /// The default asks without the label.
    async fn ask_as(&self, agent: Option<&str>, request: DecisionRequest) -> DecisionAnswer {
        let _ = agent;
        self.ask(request).await
    }
}

/// A surface that labels every request with a subagent's name and passes it on.
pub struct LabelledSurface {
    inner: std::sync::Arc<dyn DecisionSurface>,
    agent: String,
}

impl LabelledSurface {
    pub fn new(inner: std::sync::Arc<dyn DecisionSurface>, agent: &str) -> LabelledSurface {
        LabelledSurface {
            inner,
            agent: agent.to_string(),
        }
    }
}

#[async_trait]
impl DecisionSurface for LabelledSurface {
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer {
        self.inner.ask_as(Some(&self.agent), request).await
    }

    async fn ask_as(&self, agent: Option<&str>, request: DecisionRequest) -> DecisionAnswer {
        self.inner
            .ask_as(Some(agent.unwrap_or(&self.agent)), request)
            .await
    }
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
