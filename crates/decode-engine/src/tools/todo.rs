//! `todo_write`: the agent's checklist, kept in the session and observed by the UI.

use async_trait::async_trait;
use decode_policy::Tool;
use serde::Deserialize;
use serde_json::json;

use super::files::parse_input;
use super::session::{TodoItem, TodoStatus};
use super::{ToolContext, ToolHandler, ToolResult};

/// At most this many items.
const MAX_ITEMS: usize = 100;

#[derive(Debug, Deserialize)]
struct TodoInput {
    todos: Vec<TodoItem>,
}

fn check(i: &TodoInput) -> Result<(), String> {
    if i.todos.len() > MAX_ITEMS {
        return Err(format!("todo_write: at most {MAX_ITEMS} items"));
    }
    if let Some(n) = i.todos.iter().position(|t| t.content.trim().is_empty()) {
        return Err(format!("todo_write: item {} has empty `content`", n + 1));
    }
    Ok(())
}

/// The list as the model and the person read it.
pub(crate) fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = items
        .iter()
        .filter(|t| t.status == TodoStatus::Done)
        .count();
    let mut out = format!("Todo list ({done}/{} done):", items.len());
    for t in items {
        let mark = match t.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Done => "[x]",
        };
        out.push_str(&format!("\n{mark} {}", t.content.trim()));
        if t.status == TodoStatus::InProgress {
            out.push_str("  (in progress)");
        }
    }
    out
}

/// The `todo_write` tool.
pub struct TodoWriteTool;

#[async_trait]
impl ToolHandler for TodoWriteTool {
    fn tool(&self) -> Tool {
        Tool::TodoWrite
    }

    fn description(&self) -> &'static str {
        "Replaces your todo list for this task with the given items (each with a status: \
         pending, in_progress or done) and shows it to the person. Use it to plan multi-step \
         work and to mark progress: keep one item in_progress at a time and mark items done \
         as soon as they are finished. Send the whole list every time."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "maxItems": MAX_ITEMS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What is to be done."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false
                    },
                    "description": "The complete list, in order."
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check(&parse_input::<TodoInput>("todo_write", input)?)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: TodoInput = match parse_input("todo_write", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check(&input) {
            return ToolResult::error(e);
        }
        let items: Vec<TodoItem> = input
            .todos
            .into_iter()
            .map(|t| TodoItem {
                content: t.content.trim().to_string(),
                status: t.status,
            })
            .collect();
        let mut text = render(&items);
        let active = items
            .iter()
            .filter(|t| t.status == TodoStatus::InProgress)
            .count();
        ctx.session.set_todos(items);
        if active > 1 {
            text.push_str(&format!(
                "\n(note: {active} items are in progress; finish one before starting the next)"
            ));
        }
        ToolResult::ok(text)
    }
}
