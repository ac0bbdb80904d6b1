//! `edit`: replaces an exact string in a file (once, or everywhere with
//! `replace_all`), atomically, and returns the diff.

use async_trait::async_trait;
use decode_policy::Tool;
use serde::Deserialize;
use serde_json::json;

use super::files::{
    count, io_message, judged_target, looks_binary, parse_input, read_beneath, staleness,
    truncate_chars, unified_diff, write_and_record,
};
use super::paths::{display, tool_path};
use super::{ToolContext, ToolHandler, ToolResult};

#[derive(Debug, Deserialize)]
struct EditInput {
    #[serde(alias = "file_path")]
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

fn check(i: &EditInput) -> Result<(), String> {
    if i.path.trim().is_empty() {
        return Err("edit: `path` is empty".into());
    }
    if i.old_string == i.new_string {
        return Err(
            "edit: `old_string` and `new_string` are the same; there is nothing to change".into(),
        );
    }
    Ok(())
}

/// The `edit` tool.
pub struct EditTool;

#[async_trait]
impl ToolHandler for EditTool {
    fn tool(&self) -> Tool {
        Tool::Edit
    }

    fn description(&self) -> &'static str {
        "Replaces an exact string in a file. `old_string` must match the file exactly \
         (whitespace and indentation included, without read's line-number prefix) and must \
         occur exactly once, unless `replace_all` is true. Read the file first: the edit is \
         refused if the file was not read in this session or changed on disk since. With an \
         empty `old_string` a file that does not exist yet is created."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file to edit (absolute, or relative to the project root)."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false."}
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check(&parse_input::<EditInput>("edit", input)?)
    }

    fn precheck(&self, input: &serde_json::Value, ctx: &ToolContext) -> Result<(), String> {
        precheck(input, ctx)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: EditInput = match parse_input("edit", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check(&input) {
            return ToolResult::error(e);
        }
        let ctx = ctx.clone();
        match tokio::task::spawn_blocking(move || edit_file(&input, &ctx)).await {
            Ok(r) => r,
            Err(e) => ToolResult::error(format!("edit failed: {e}")),
        }
    }
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].bytes().filter(|b| *b == b'\n').count() + 1
}

/// What an edit would do, found before anything is written.
enum Planned {
    Create {
        path: std::path::PathBuf,
        shown: String,
    },
    Replace {
        path: std::path::PathBuf,
        shown: String,
        text: String,
        updated: String,
        count: usize,
        first_line: usize,
    },
}

fn edit_file(input: &EditInput, ctx: &ToolContext) -> ToolResult {
    match plan(input, ctx) {
        Ok(Planned::Create { path, shown }) => create(ctx, &path, &shown, &input.new_string),
        Ok(Planned::Replace {
            path,
            shown,
            text,
            updated,
            count,
            first_line,
        }) => replace_whole(ctx, &path, &shown, &text, updated, count, first_line),
        Err(e) => ToolResult::error(e),
    }
}

/// Whether the edit can succeed as asked, checked before the person is asked about it
/// (an approval is never spent on a call that would then fail on its own terms).
pub(crate) fn precheck(input: &serde_json::Value, ctx: &ToolContext) -> Result<(), String> {
    let input: EditInput = parse_input("edit", input)?;
    check(&input)?;
    plan(&input, ctx).map(|_| ())
}

/// Reads the file and finds what the edit changes, or why it cannot.
fn plan(input: &EditInput, ctx: &ToolContext) -> Result<Planned, String> {
    let given = tool_path(ctx, &input.path);
    let shown = display(&ctx.project_root, &given);
    let path = judged_target(ctx, &input.path, &shown)?;
    let (bytes, meta) = match read_beneath(&path) {
        Ok(Some(b)) => b,
        Ok(None) => {
            if input.old_string.is_empty() {
                return Ok(Planned::Create { path, shown });
            }
            return Err(format!(
                "{shown} does not exist (use write to create a file)"
            ));
        }
        Err(e) if path.is_dir() || e.kind() == std::io::ErrorKind::IsADirectory => {
            return Err(format!("{shown} is a folder, not a file"));
        }
        Err(e) => return Err(format!("cannot read {shown}: {}", io_message(&e))),
    };
    if let Some(why) = staleness(
        ctx,
        &path,
        &shown,
        &bytes,
        &meta,
        ctx.session.require_read_before_edit(),
    ) {
        return Err(why);
    }
    if looks_binary(&bytes) {
        return Err(format!(
            "{shown} is a binary file; edit changes text files only"
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => {
            return Err(format!(
                "{shown} is not valid UTF-8 text; edit changes UTF-8 text files only"
            ))
        }
    };
    if input.old_string.is_empty() {
        if text.is_empty() {
            return Ok(Planned::Replace {
                path,
                shown,
                text,
                updated: input.new_string.clone(),
                count: 1,
                first_line: 1,
            });
        }
        return Err(format!(
            "`old_string` is empty but {shown} is not: give the exact text to replace, or use write to replace the whole file"
        ));
    }

    let (old, new) = match find_form(&text, &input.old_string, &input.new_string) {
        Some(forms) => forms,
        None => return Err(not_found(&text, &input.old_string, &shown)),
    };
    let positions: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    if positions.len() > 1 && !input.replace_all {
        let mut lines: Vec<String> = positions
            .iter()
            .take(10)
            .map(|p| line_of(&text, *p).to_string())
            .collect();
        if positions.len() > 10 {
            lines.push("…".into());
        }
        return Err(format!(
            "`old_string` occurs {} times in {shown} (lines {}); include more surrounding lines to make it unique, or set replace_all to change every occurrence. Nothing was changed.",
            positions.len(),
            lines.join(", ")
        ));
    }
    let first_line = line_of(&text, positions[0]);
    let count = positions.len();
    let updated = if input.replace_all {
        text.replace(old.as_str(), &new)
    } else {
        text.replacen(old.as_str(), &new, 1)
    };
    Ok(Planned::Replace {
        path,
        shown,
        text,
        updated,
        count,
        first_line,
    })
}

/// The form of `old`/`new` that occurs in `text`: as given, or with `\n` turned into
/// `\r\n` for a file with Windows line endings.
fn find_form(text: &str, old: &str, new: &str) -> Option<(String, String)> {
    if text.contains(old) {
        return Some((old.to_string(), new.to_string()));
    }
    if text.contains("\r\n") && old.contains('\n') && !old.contains('\r') {
        let old2 = old.replace('\n', "\r\n");
        if text.contains(&old2) {
            let new2 = new.replace("\r\n", "\n").replace('\n', "\r\n");
            return Some((old2, new2));
        }
    }
    None
}

fn not_found(text: &str, old: &str, shown: &str) -> String {
    let mut msg = format!("`old_string` was not found in {shown}. Nothing was changed.");
    let trimmed = old.trim();
    if !trimmed.is_empty() && trimmed != old && text.contains(trimmed) {
        msg.push_str(
            " Its text without the leading/trailing whitespace does occur: check indentation and line breaks.",
        );
    } else {
        msg.push_str(
            " Check whitespace and indentation against the file (read's line-number prefix is not part of it), or read the file again.",
        );
    }
    msg
}

fn create(ctx: &ToolContext, path: &std::path::Path, shown: &str, content: &str) -> ToolResult {
    if let Err(e) = write_and_record(ctx, path, content.as_bytes()) {
        return ToolResult::error(format!("cannot write {shown}: {}", io_message(&e)));
    }
    ToolResult {
        content: format!(
            "Created {shown} ({})",
            count(content.lines().count(), "line")
        ),
        is_error: false,
        diff: unified_diff(shown, None, content),
        ..ToolResult::default()
    }
}

fn replace_whole(
    ctx: &ToolContext,
    path: &std::path::Path,
    shown: &str,
    before: &str,
    after: String,
    count: usize,
    first_line: usize,
) -> ToolResult {
    if let Err(e) = write_and_record(ctx, path, after.as_bytes()) {
        return ToolResult::error(format!("cannot write {shown}: {}", io_message(&e)));
    }
    let diff = unified_diff(shown, Some(before), &after);
    let what = if count == 1 {
        format!("replaced 1 occurrence (line {first_line})")
    } else {
        format!("replaced {count} occurrences (first at line {first_line})")
    };
    let mut content = format!("Edited {shown}: {what}.");
    let snippet = snippet(&after, first_line);
    if !snippet.is_empty() {
        content.push_str("\nThe lines around the change now read:\n");
        content.push_str(&snippet);
    }
    ToolResult {
        content,
        is_error: false,
        diff,
        ..ToolResult::default()
    }
}

/// A few numbered lines of `text` around `line`, for the model to check its edit.
fn snippet(text: &str, line: usize) -> String {
    let start = line.saturating_sub(3).max(1);
    let mut out = String::new();
    for (i, l) in text.lines().enumerate().skip(start - 1).take(8) {
        let mut l = l.trim_end_matches('\r').to_string();
        if truncate_chars(&mut l, 300) {
            l.push_str(" …");
        }
        out.push_str(&format!("{:>6}\t{l}\n", i + 1));
    }
    out.pop();
    out
}
