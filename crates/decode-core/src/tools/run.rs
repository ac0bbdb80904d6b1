//! [`run_call`]: the one gated path every tool call takes — from the agent loop and
//! from `decode tool` alike.

use decode_policy::{Decision, ToolKind, Verdict};
use serde::Serialize;

use super::{ToolContext, ToolHandler, ToolResult};
use crate::decision::{DecisionAnswer, DecisionRequest};
use crate::settings::append_allow_rules;

/// What happened to one call.
#[derive(Debug, Clone, Serialize)]
pub struct CallOutcome {
    /// The gate's decision (verdict, reason, trace).
    pub decision: Decision,
    /// The person's answer, when the gate asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<DecisionAnswer>,
    /// What goes back to the model (a denial is an error result with the reason).
    pub result: ToolResult,
    /// Whether the tool actually ran.
    pub ran: bool,
    /// Something the person should see beside the result: a saved rule, or why an
    /// "always allow" could not be saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Runs one tool call through the gate, exactly as the agent makes it:
///
/// 1. the gate judges `handler.gate_call(&input)` in the current mode (control tools
///    pass stage 0 and are allowed);
/// 2. deny → an error result with the reason (nothing runs);
/// 3. the input is checked against the tool's shape (an error result if it does not fit);
/// 4. ask → the decision surface is asked: allow once runs it; always allow saves the
///    rules to `.decode/settings.json`, reloads the gate and runs it (if saving fails
///    it runs once and the note says why); deny returns the person's feedback; nobody
///    to answer returns the reason and how to allow such a call;
/// 5. allow → the tool runs.
pub async fn run_call(
    handler: &dyn ToolHandler,
    input: serde_json::Value,
    ctx: &ToolContext,
) -> CallOutcome {
    let tool = handler.tool();
    let call = handler.gate_call(&input);
    let decision = ctx.active.decide_in(&call, &ctx.session.cwd());
    tracing::info!(
        tool = %tool,
        subject = %call.subject,
        verdict = %decision.verdict,
        reason = %decision.reason,
        "tool call judged"
    );
    let mut outcome = CallOutcome {
        decision,
        answer: None,
        result: ToolResult::default(),
        ran: false,
        note: None,
    };

    if outcome.decision.verdict == Verdict::Deny {
        outcome.result = ToolResult::error(format!(
            "denied by the permission gate: {}",
            outcome.decision.reason
        ));
        return outcome;
    }
    if let Err(e) = handler.validate(&input) {
        outcome.result = ToolResult::error(format!("invalid input: {e}"));
        return outcome;
    }

    if outcome.decision.verdict == Verdict::Ask {
        let request = DecisionRequest::Permission {
            tool,
            subject: call.subject.clone(),
            input: input.clone(),
            decision: outcome.decision.clone(),
        };
        let answer = tokio::select! {
            a = ctx.decisions.ask(request) => a,
            _ = ctx.cancel.cancelled() => DecisionAnswer::Unavailable {
                reason: "the run was stopped".to_string(),
            },
        };
        outcome.answer = Some(answer.clone());
        match answer {
            DecisionAnswer::AllowOnce => {}
            DecisionAnswer::AlwaysAllow { rules } => {
                outcome.note = Some(always_allow(ctx, &outcome.decision, rules));
            }
            DecisionAnswer::Deny { feedback } => {
                let mut text = format!("denied by the person: {}", outcome.decision.reason);
                if let Some(f) = feedback
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                {
                    text.push_str(&format!("\nTheir feedback: {f}"));
                }
                outcome.result = ToolResult::error(text);
                return outcome;
            }
            DecisionAnswer::Unavailable { reason } => {
                outcome.result =
                    ToolResult::error(unavailable(handler, &outcome.decision, &reason));
                return outcome;
            }
            other => {
                outcome.result = ToolResult::error(format!(
                    "not run: the permission ask got an answer of the wrong kind ({other:?})"
                ));
                return outcome;
            }
        }
    }

    outcome.result = handler.execute(input, ctx).await;
    outcome.ran = true;
    outcome
}

/// Saves the rules of an "always allow" (unless the call is capped), reloads the gate,
/// and returns the note for the person.
fn always_allow(ctx: &ToolContext, decision: &Decision, rules: Vec<String>) -> String {
    if decision.capped {
        return "\"always allow\" is not offered for this call (it is capped); it was allowed once"
            .to_string();
    }
    let rules: Vec<String> = if rules.iter().any(|r| !r.trim().is_empty()) {
        rules
            .into_iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect()
    } else {
        decision.always_allow_rules.clone()
    };
    if rules.is_empty() {
        return "there is no rule to save for this call; it was allowed once".to_string();
    }
    match append_allow_rules(&ctx.project_root, &rules) {
        Ok(saved) => {
            for d in ctx.active.reload_settings() {
                tracing::warn!(diagnostic = %d, "after saving an allow rule");
            }
            let list = |v: &[String]| {
                v.iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let untrusted = if ctx.active.trusted() {
                String::new()
            } else {
                format!(
                    " (this project is not trusted, so its allow rules are ignored until it is: `decode trust {}`)",
                    ctx.project_root.display()
                )
            };
            let text = if saved.added.is_empty() {
                format!(
                    "{} already in {}",
                    list(&saved.already_present),
                    saved.path.display()
                )
            } else {
                format!(
                    "saved the allow rule{} {} to {}",
                    if saved.added.len() == 1 { "" } else { "s" },
                    list(&saved.added),
                    saved.path.display()
                )
            };
            text + &untrusted
        }
        Err(e) => {
            tracing::warn!(error = %e, "always-allow rule not saved; allowing once");
            format!("{e}; the call was allowed once")
        }
    }
}

/// The error result when nobody can answer an ask: why, and how it could be allowed.
fn unavailable(handler: &dyn ToolHandler, decision: &Decision, reason: &str) -> String {
    let mut text = format!(
        "not run: this call needs the person's approval ({}) and nobody can answer: {reason}.",
        decision.reason
    );
    if decision.capped {
        let cap = decision
            .fragments
            .iter()
            .find_map(|f| f.cap.clone())
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        text.push_str(&format!(
            " The call is capped{cap}: no rule allows it automatically, so only a person can allow it, once."
        ));
        return text;
    }
    let mut ways = Vec::new();
    if !decision.always_allow_rules.is_empty() {
        ways.push(format!(
            "add {} to permissions.allow in .decode/settings.json",
            decision
                .always_allow_rules
                .iter()
                .map(|r| format!("\"{r}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match handler.tool().kind() {
        ToolKind::FileEdit => ways.push("use edit mode".to_string()),
        ToolKind::Other => ways.push("use auto mode".to_string()),
        _ => {}
    }
    if !ways.is_empty() {
        text.push_str(&format!(" To allow it: {}.", ways.join(", or ")));
    }
    text
}
