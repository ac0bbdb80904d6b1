//! What a tool call is about, in one line, for a person: the command, the path, the
//! pattern and where it searches, the URL. Derived here once, for every surface:
//! the window's cards get it on each [`LoopEvent::ToolCallStarted`] it receives
//! (`title`, filled by `for_page`), and `decode run` prints it.
//!
//! [`LoopEvent::ToolCallStarted`]: crate::events::LoopEvent::ToolCallStarted

use serde_json::Value;

/// The most characters a title keeps (the end is cut with "…").
pub const TITLE_MAX_CHARS: usize = 200;

/// The call's title: its first line, at most [`TITLE_MAX_CHARS`] characters; empty
/// when the input names nothing (a control tool without arguments).
pub fn call_title(name: &str, input: &Value) -> String {
    let field = |k: &str| match input.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let title = match name {
        "bash" => field("command"),
        "read" | "write" | "edit" => field("path").or_else(|| field("file_path")),
        "glob" | "grep" => field("pattern").map(|p| match field("path") {
            Some(dir) => format!("{p} in {dir}"),
            None => p,
        }),
        "web_fetch" => field("url"),
        "ask_user" => field("question"),
        "sleep" => Some(format!(
            "{} s",
            field("seconds").unwrap_or_else(|| "?".into())
        )),
        "task" => field("agent").map(|a| match field("description") {
            Some(d) => format!("{a}: {d}"),
            None => a,
        }),
        _ => None,
    };
    let title = match (title, input) {
        (Some(t), _) => t,
        // Arguments that were not a JSON object reach the surfaces as their text.
        (None, Value::String(raw)) => raw.clone(),
        (None, _) => String::new(),
    };
    first_line(&title, TITLE_MAX_CHARS)
}

/// The first line of `text`, trimmed, cut at `max` characters with "…".
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if text.trim().lines().nth(1).is_some() => format!("{line} …"),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_tool_is_titled_by_what_it_is_about() {
        let cases = [
            (
                "bash",
                json!({"command": "ls -la", "description": "list"}),
                "ls -la",
            ),
            ("read", json!({"path": "src/main.rs"}), "src/main.rs"),
            ("edit", json!({"file_path": "a.rs"}), "a.rs"),
            (
                "grep",
                json!({"pattern": "fn main", "path": "src"}),
                "fn main in src",
            ),
            ("glob", json!({"pattern": "**/*.rs"}), "**/*.rs"),
            (
                "web_fetch",
                json!({"url": "https://example.com/"}),
                "https://example.com/",
            ),
            ("ask_user", json!({"question": "Which one?"}), "Which one?"),
            ("sleep", json!({"seconds": 5}), "5 s"),
            (
                "task",
                json!({"agent": "explore", "description": "find the parser"}),
                "explore: find the parser",
            ),
            ("task", json!({"agent": "explore"}), "explore"),
            ("todo_write", json!({"todos": []}), ""),
            ("write", json!("{not json"), "{not json"),
        ];
        for (name, input, want) in cases {
            assert_eq!(call_title(name, &input), want, "{name} {input}");
        }
    }

    #[test]
    fn a_title_is_one_line_and_bounded() {
        let t = call_title("bash", &json!({"command": "echo one\necho two"}));
        assert_eq!(t, "echo one …");
        let long = "x".repeat(5000);
        let t = call_title("bash", &json!({ "command": long }));
        assert_eq!(t.chars().count(), TITLE_MAX_CHARS + 1);
        assert!(t.ends_with('…'));
    }
}
