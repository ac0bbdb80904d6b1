//! The control tools (docs/agents.md, "The control tools"): never gated. `ask_user` asks the person a question,
//! `enter_plan_mode` / `exit_plan_mode` move in and out of plan mode (leaving needs
//! the person's approval of the plan), `sleep` waits.

use std::time::Duration;

use async_trait::async_trait;
use decode_policy::{Mode, Tool};
use serde::Deserialize;
use serde_json::json;

use super::files::parse_input;
use super::{ToolContext, ToolHandler, ToolResult};
use crate::decision::{DecisionAnswer, DecisionRequest};

#[derive(Debug, Deserialize)]
struct AskInput {
    question: String,
    #[serde(default)]
    options: Option<Vec<String>>,
}

fn check_ask(i: &AskInput) -> Result<(), String> {
    if i.question.trim().is_empty() {
        return Err("ask_user: `question` is empty".into());
    }
    Ok(())
}

/// The `ask_user` tool.
pub struct AskUserTool;

#[async_trait]
impl ToolHandler for AskUserTool {
    fn tool(&self) -> Tool {
        Tool::AskUser
    }

    fn description(&self) -> &'static str {
        "Asks the person a question and returns their answer. Use it when a decision is \
         theirs to make or the request is ambiguous — not for permission to run tools (the \
         permission gate asks for that by itself). `options` suggests answers; the person may \
         also type their own."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question, self-contained."},
                "options": {"type": "array", "items": {"type": "string"}, "description": "Suggested answers (optional)."}
            },
            "required": ["question"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check_ask(&parse_input::<AskInput>("ask_user", input)?)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: AskInput = match parse_input("ask_user", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check_ask(&input) {
            return ToolResult::error(e);
        }
        let request = DecisionRequest::Question {
            question: input.question.trim().to_string(),
            options: input
                .options
                .unwrap_or_default()
                .into_iter()
                .map(|o| o.trim().to_string())
                .filter(|o| !o.is_empty())
                .collect(),
        };
        let answer = tokio::select! {
            a = ctx.decisions.ask(request) => a,
            _ = ctx.cancel.cancelled() => return ToolResult::error("the question was cancelled"),
        };
        match answer {
            DecisionAnswer::Answer { text } => ToolResult::ok(text),
            DecisionAnswer::Unavailable { reason } => ToolResult::error(format!(
                "nobody can answer questions now ({reason}); continue with your best judgement and say what you assumed, or stop and explain what you need"
            )),
            DecisionAnswer::Deny { feedback } | DecisionAnswer::PlanRejected { feedback } => {
                ToolResult::error(match feedback {
                    Some(f) if !f.trim().is_empty() => {
                        format!("the person declined to answer: {}", f.trim())
                    }
                    _ => "the person declined to answer".to_string(),
                })
            }
            other => ToolResult::error(format!(
                "the question got an answer of the wrong kind ({other:?})"
            )),
        }
    }
}

/// The `enter_plan_mode` tool.
pub struct EnterPlanModeTool;

#[async_trait]
impl ToolHandler for EnterPlanModeTool {
    fn tool(&self) -> Tool {
        Tool::EnterPlanMode
    }

    fn description(&self) -> &'static str {
        "Switches to plan mode: you can read, search and fetch, but file edits and shell \
         commands are denied. Use it to explore and design before changing anything; when the \
         plan is ready, present it with exit_plan_mode."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        if input.is_object() || input.is_null() {
            Ok(())
        } else {
            Err("enter_plan_mode: the input must be a JSON object".into())
        }
    }

    async fn execute(&self, _input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let before = ctx.active.mode();
        if before == Mode::Plan {
            return ToolResult::ok(
                "Already in plan mode: read and search, then present your plan with exit_plan_mode.",
            );
        }
        ctx.active.set_mode(Mode::Plan);
        ToolResult::ok(format!(
            "Plan mode is on (was {before}). You can read, search and fetch; file edits and shell commands are denied. Explore, then present your plan with exit_plan_mode."
        ))
    }
}

#[derive(Debug, Deserialize)]
struct ExitPlanInput {
    plan: String,
}

/// The `exit_plan_mode` tool.
pub struct ExitPlanModeTool;

#[async_trait]
impl ToolHandler for ExitPlanModeTool {
    fn tool(&self) -> Tool {
        Tool::ExitPlanMode
    }

    fn description(&self) -> &'static str {
        "Presents your plan (Markdown) to the person for approval, to leave plan mode. If \
         they approve, the mode changes (to edit unless they pick another) and you carry out \
         the plan; if they reject it, you stay in plan mode and get their feedback."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The plan, in Markdown: what you will change and how."}
            },
            "required": ["plan"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        let i: ExitPlanInput = parse_input("exit_plan_mode", input)?;
        if i.plan.trim().is_empty() {
            return Err("exit_plan_mode: `plan` is empty".into());
        }
        Ok(())
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        if let Err(e) = self.validate(&input) {
            return ToolResult::error(e);
        }
        let input: ExitPlanInput = match parse_input("exit_plan_mode", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        let mode = ctx.active.mode();
        if mode != Mode::Plan {
            return ToolResult::ok(format!(
                "Not in plan mode (the mode is {mode}); there is nothing to approve. Carry on."
            ));
        }
        // A mode the managed settings turned off is not offered.
        let offered: Vec<Mode> = decode_protocol::plan_modes()
            .into_iter()
            .filter(|m| ctx.active.mode_refusal(*m).is_none())
            .collect();
        let request = DecisionRequest::PlanApproval {
            plan: input.plan.trim().to_string(),
            modes: offered.clone(),
        };
        let answer = tokio::select! {
            a = ctx.decisions.ask(request) => a,
            _ = ctx.cancel.cancelled() => return ToolResult::error("the plan approval was cancelled; you are still in plan mode"),
        };
        match answer {
            // Every surface's answer is checked against the modes offered; one that
            // reached here another way (a scripted surface) is held to them too.
            DecisionAnswer::PlanApproved { mode } if !offered.contains(&mode) => {
                ToolResult::error(format!(
                    "the plan approval named {mode} mode, which it does not offer; you are still in plan mode"
                ))
            }
            DecisionAnswer::PlanApproved { mode } => {
                ctx.active.set_mode(mode);
                ToolResult::ok(format!(
                    "approved: the person approved the plan and the mode is now {mode} ({}). Carry out the plan.",
                    mode.describe()
                ))
            }
            DecisionAnswer::PlanRejected { feedback } | DecisionAnswer::Deny { feedback } => {
                let mut text = "The plan was not approved; you are still in plan mode. Refine the plan and call exit_plan_mode again.".to_string();
                if let Some(f) = feedback.filter(|f| !f.trim().is_empty()) {
                    text.push_str(&format!("\nFeedback from the person: {}", f.trim()));
                }
                ToolResult::error(text)
            }
            DecisionAnswer::Unavailable { reason } => ToolResult::error(format!(
                "nobody can approve the plan now ({reason}); you are still in plan mode"
            )),
            other => ToolResult::error(format!(
                "the plan approval got an answer of the wrong kind ({other:?}); you are still in plan mode"
            )),
        }
    }
}

#[derive(Debug, Deserialize)]
struct SleepInput {
    seconds: f64,
}

fn check_sleep(i: &SleepInput) -> Result<(), String> {
    if !i.seconds.is_finite() {
        return Err("sleep: `seconds` must be a number".into());
    }
    if i.seconds < 0.0 {
        return Err(format!(
            "sleep: `seconds` must not be negative (got {})",
            i.seconds
        ));
    }
    Ok(())
}

/// The `sleep` tool.
pub struct SleepTool;

#[async_trait]
impl ToolHandler for SleepTool {
    fn tool(&self) -> Tool {
        Tool::Sleep
    }

    fn description(&self) -> &'static str {
        "Waits for the given number of seconds (at most the project's sleepMaxSeconds, 60 by \
         default), e.g. to let a server start or a build finish before checking on it."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "seconds": {"type": "number", "minimum": 0, "description": "How long to wait, in seconds."}
            },
            "required": ["seconds"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check_sleep(&parse_input::<SleepInput>("sleep", input)?)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: SleepInput = match parse_input("sleep", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check_sleep(&input) {
            return ToolResult::error(e);
        }
        let max = ctx.active.settings().sleep_max_seconds as f64;
        let capped = input.seconds > max;
        let secs = input.seconds.min(max);
        let started = tokio::time::Instant::now();
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs_f64(secs)) => {}
            _ = ctx.cancel.cancelled() => {
                return ToolResult::error(format!(
                    "sleep was cancelled after {} s",
                    fmt(started.elapsed().as_secs_f64())
                ));
            }
        }
        let mut text = format!("Slept {} s.", fmt(secs));
        if capped {
            text.push_str(&format!(
                " (capped: {} s were asked; the project's sleepMaxSeconds is {})",
                fmt(input.seconds),
                fmt(max)
            ));
        }
        ToolResult::ok(text)
    }
}

fn fmt(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s:.1}")
    }
}
