//! `write`: creates or replaces a whole file, atomically, and returns the diff.

use async_trait::async_trait;
use decode_policy::Tool;
use serde::Deserialize;
use serde_json::json;

use super::files::{
    count, diff_stat, io_message, judged_target, parse_input, read_beneath, staleness,
    unified_diff, write_and_record,
};
use super::paths::{display, tool_path};
use super::{ToolContext, ToolHandler, ToolResult};

#[derive(Debug, Deserialize)]
struct WriteInput {
    #[serde(alias = "file_path")]
    path: String,
    content: String,
}

/// The `write` tool.
pub struct WriteTool;

#[async_trait]
impl ToolHandler for WriteTool {
    fn tool(&self) -> Tool {
        Tool::Write
    }

    fn description(&self) -> &'static str {
        "Writes a whole file: creates it (and any missing parent folders) or replaces its \
         contents. The write is atomic and keeps the file's permissions. Returns a summary; \
         the person sees the diff. Prefer edit for changing part of an existing file; if you \
         read the file earlier and it changed on disk since, the write is refused."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file to write (absolute, or relative to the project root)."},
                "content": {"type": "string", "description": "The complete new contents of the file."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        let i: WriteInput = parse_input("write", input)?;
        if i.path.trim().is_empty() {
            return Err("write: `path` is empty".into());
        }
        Ok(())
    }

    fn precheck(&self, input: &serde_json::Value, ctx: &ToolContext) -> Result<(), String> {
        precheck(input, ctx)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        if let Err(e) = self.validate(&input) {
            return ToolResult::error(e);
        }
        let input: WriteInput = match parse_input("write", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        let ctx = ctx.clone();
        match tokio::task::spawn_blocking(move || write_file(&input, &ctx)).await {
            Ok(r) => r,
            Err(e) => ToolResult::error(format!("write failed: {e}")),
        }
    }
}

/// Whether the write can succeed as asked, checked before the person is asked: the
/// file did not change on disk since the agent read it, and the path is no folder.
pub(crate) fn precheck(input: &serde_json::Value, ctx: &ToolContext) -> Result<(), String> {
    let input: WriteInput = parse_input("write", input)?;
    let given = tool_path(ctx, &input.path);
    let shown = display(&ctx.project_root, &given);
    let path = judged_target(ctx, &input.path, &shown)?;
    match read_beneath(&path) {
        Ok(Some((bytes, meta))) => match staleness(ctx, &path, &shown, &bytes, &meta, false) {
            Some(why) => Err(why),
            None => Ok(()),
        },
        Ok(None) => Ok(()),
        Err(_) if path.is_dir() => Err(format!("{shown} is a folder; give a file path")),
        // Anything else is said when the write is tried.
        Err(_) => Ok(()),
    }
}

fn write_file(input: &WriteInput, ctx: &ToolContext) -> ToolResult {
    let given = tool_path(ctx, &input.path);
    let shown = display(&ctx.project_root, &given);
    let path = match judged_target(ctx, &input.path, &shown) {
        Ok(p) => p,
        Err(e) => return ToolResult::error(e),
    };
    let old = match read_beneath(&path) {
        Ok(Some((bytes, meta))) => {
            if let Some(why) = staleness(ctx, &path, &shown, &bytes, &meta, false) {
                return ToolResult::error(why);
            }
            Some(bytes)
        }
        Ok(None) => None,
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
            return ToolResult::error(format!("{shown} is a folder; give a file path"));
        }
        Err(e) => return ToolResult::error(format!("cannot write {shown}: {}", io_message(&e))),
    };
    if path.is_dir() {
        return ToolResult::error(format!("{shown} is a folder; give a file path"));
    }
    if old.as_deref() == Some(input.content.as_bytes()) {
        if let Ok(meta) = std::fs::metadata(&path) {
            ctx.session.record_read(
                &path,
                super::session::FileStamp::of_contents(input.content.as_bytes(), &meta),
            );
        }
        return ToolResult::ok(format!("{shown} already has this content; nothing changed"));
    }
    if let Err(e) = write_and_record(ctx, &path, input.content.as_bytes()) {
        return ToolResult::error(format!("cannot write {shown}: {}", io_message(&e)));
    }
    let old_text = old
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let diff = unified_diff(&shown, old_text.as_deref(), &input.content);
    let lines = count(input.content.lines().count(), "line");
    let bytes = count(input.content.len(), "byte");
    let content = match (&old, &diff) {
        (None, _) => format!("Created {shown} ({lines}, {bytes})"),
        (Some(_), None) => format!("Wrote {shown} ({lines}, {bytes})"),
        (Some(_), Some(d)) => {
            let (added, removed) = diff_stat(d);
            format!("Wrote {shown} ({lines}, {bytes}): +{added} -{removed} lines")
        }
    };
    ToolResult {
        content,
        is_error: false,
        diff,
        ..ToolResult::default()
    }
}
