//! What the window receives of big texts (docs/window.md, "Big arguments and outputs").
//!
//! A model may send a 5 MB argument (a whole file to `write`, a generated command), and a
//! tool may print 20 MB. The transcript keeps what the model sent and read; the page only
//! needs enough to show a card: every text longer than [`PAGE_TEXT_MAX`] reaches it as its
//! head and a line saying how much was left out, so no event or request makes the page
//! parse, diff or lay out megabytes. A person who wants the whole text has the transcript
//! and the files themselves.

use serde_json::Value;

use crate::decision::DecisionRequest;
use crate::events::LoopEvent;

/// The most characters of one text (an argument, a diff, a result) the page receives.
pub const PAGE_TEXT_MAX: usize = 64 * 1024;

fn size_words(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / f64::from(1u32 << 20))
    } else {
        format!("{:.0} KB", (bytes as f64 / 1024.0).ceil())
    }
}

/// `text` cut to [`PAGE_TEXT_MAX`] characters, with a last line saying what was left
/// out; unchanged when it is shorter.
pub fn page_text(text: &str) -> String {
    match text.char_indices().nth(PAGE_TEXT_MAX) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}\n… {} more not shown here ({} in all)",
            &text[..cut],
            size_words(text.len() - cut),
            size_words(text.len())
        ),
    }
}

fn page_value(value: &Value) -> Value {
    match value {
        Value::String(s) if s.len() > PAGE_TEXT_MAX => Value::String(page_text(s)),
        Value::Array(items) => Value::Array(items.iter().map(page_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), page_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn page_opt(text: &Option<String>) -> Option<String> {
    text.as_deref().map(page_text)
}

impl LoopEvent {
    /// The event as the window receives it: every long text cut (module docs).
    pub fn for_page(&self) -> LoopEvent {
        match self {
            LoopEvent::AssistantMessage { text, tool_calls } => LoopEvent::AssistantMessage {
                text: text.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| {
                        let mut c = c.clone();
                        c.input = page_value(&c.input);
                        c.invalid_input = page_opt(&c.invalid_input);
                        c
                    })
                    .collect(),
            },
            LoopEvent::ToolCallStarted {
                id,
                name,
                input,
                decision,
                ..
            } => LoopEvent::ToolCallStarted {
                id: id.clone(),
                name: name.clone(),
                input: page_value(input),
                decision: decision.clone(),
                // Derived from the whole input, before any of it is cut.
                title: Some(crate::title::call_title(name, input)),
            },
            LoopEvent::ToolResult {
                id,
                name,
                content,
                is_error,
                ran,
                verdict,
                answer,
                note,
                diff,
                edited_command,
                sandboxed,
                exit_code,
                duration_ms,
                stopped,
            } => LoopEvent::ToolResult {
                id: id.clone(),
                name: name.clone(),
                content: page_text(content),
                is_error: *is_error,
                ran: *ran,
                verdict: *verdict,
                answer: answer.clone(),
                note: note.clone(),
                diff: page_opt(diff),
                edited_command: page_opt(edited_command),
                sandboxed: *sandboxed,
                exit_code: *exit_code,
                duration_ms: *duration_ms,
                stopped: *stopped,
            },
            LoopEvent::ToolProgress { id, stream, text } => LoopEvent::ToolProgress {
                id: id.clone(),
                stream: *stream,
                text: page_text(text),
            },
            LoopEvent::Subagent {
                parent_id,
                agent,
                event,
            } => LoopEvent::Subagent {
                parent_id: parent_id.clone(),
                agent: agent.clone(),
                event: Box::new(event.for_page()),
            },
            other => other.clone(),
        }
    }
}

impl LoopEvent {
    /// A tool result with its diff cut as the page shows it, everything else whole
    /// (what the transcript keeps: the model never reads the diff).
    pub fn for_page_diff(&self) -> LoopEvent {
        let mut event = self.clone();
        match &mut event {
            LoopEvent::ToolResult { diff, .. } => *diff = page_opt(diff),
            LoopEvent::Subagent { event: inner, .. } => **inner = inner.for_page_diff(),
            _ => {}
        }
        event
    }
}

impl DecisionRequest {
    /// The request as the window shows it: the tool's input and the diff cut (module
    /// docs). The subject stays whole up to a bound (the gate judges a command of at
    /// most 10,000 characters; a longer one is opaque and shown cut).
    pub fn for_page(&self) -> DecisionRequest {
        match self {
            DecisionRequest::Permission {
                tool,
                subject,
                intent,
                input,
                decision,
                cwd,
                diff,
                suggested_rules,
                edited,
                mcp,
            } => DecisionRequest::Permission {
                tool: *tool,
                subject: page_text(subject),
                intent: page_opt(intent),
                input: page_value(input),
                decision: decision.clone(),
                cwd: cwd.clone(),
                diff: page_opt(diff),
                suggested_rules: suggested_rules.clone(),
                edited: *edited,
                mcp: mcp.clone(),
            },
            DecisionRequest::Question { question, options } => DecisionRequest::Question {
                question: page_text(question),
                options: options.iter().map(|o| page_text(o)).collect(),
            },
            DecisionRequest::PlanApproval { plan, modes } => DecisionRequest::PlanApproval {
                plan: page_text(plan),
                modes: modes.clone(),
            },
            DecisionRequest::RunOutside {
                command,
                cwd,
                bound,
                output,
            } => DecisionRequest::RunOutside {
                command: page_text(command),
                cwd: cwd.clone(),
                bound: bound.clone(),
                output: page_text(output),
            },
            DecisionRequest::Network {
                host,
                port,
                command,
                cwd,
                decision,
            } => DecisionRequest::Network {
                host: page_text(host),
                port: *port,
                command: page_text(command),
                cwd: cwd.clone(),
                decision: decision.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_huge_argument_reaches_the_page_as_its_head_and_its_size() {
        let content = "x".repeat(5 << 20);
        let e = LoopEvent::ToolCallStarted {
            id: "c".into(),
            name: "write".into(),
            input: json!({"path": "big.txt", "content": content, "n": 3}),
            decision: None,
            title: None,
        };
        let page = serde_json::to_string(&e.for_page()).unwrap();
        assert!(page.len() < PAGE_TEXT_MAX + 1024, "{}", page.len());
        let LoopEvent::ToolCallStarted { input, title, .. } = e.for_page() else {
            unreachable!()
        };
        assert_eq!(title.as_deref(), Some("big.txt"));
        assert_eq!(input["path"], "big.txt");
        assert_eq!(input["n"], 3);
        let shown = input["content"].as_str().unwrap();
        assert!(shown.starts_with("xxxx"));
        assert!(
            shown.ends_with("(5.0 MB in all)"),
            "{}",
            &shown[shown.len() - 60..]
        );
    }

    #[test]
    fn short_texts_are_untouched_and_cuts_keep_whole_characters() {
        assert_eq!(page_text("héllo"), "héllo");
        let long = "é".repeat(PAGE_TEXT_MAX + 10);
        let cut = page_text(&long);
        assert!(cut.starts_with(&"é".repeat(PAGE_TEXT_MAX)));
        assert!(cut.contains("more not shown here"));
        let e = LoopEvent::TextDelta { text: long.clone() };
        assert_eq!(e.for_page(), e, "the model's own text is never cut");
    }
}
