//! `read`: a text file with line numbers (`cat -n` style), a window of lines at a time.

use std::io::{BufRead, BufReader, Read};

use async_trait::async_trait;
use decode_policy::Tool;
use serde::Deserialize;
use serde_json::json;

use super::files::{
    io_message, judged_target, looks_binary, parse_input, truncate_chars, SNIFF_BYTES,
};
use super::paths::{display, tool_path};
use super::session::{FileStamp, StreamHasher};
use super::{ToolContext, ToolHandler, ToolResult};
use crate::beneath;

/// Lines shown when no `limit` is given.
pub const READ_DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut at this many characters.
pub const READ_MAX_LINE_CHARS: usize = 2000;
/// The whole output stops growing past this many characters.
const READ_MAX_OUTPUT_CHARS: usize = 100_000;
/// Files up to this size are hashed whole (for edit's staleness check) even when only
/// a window is shown; bigger ones are stamped by length and modification time.
const HASH_LIMIT: u64 = 64 * 1024 * 1024;

#[derive(Debug, Deserialize)]
struct ReadInput {
    #[serde(alias = "file_path")]
    path: String,
    #[serde(default)]
    offset: Option<i64>,
    #[serde(default)]
    limit: Option<i64>,
}

fn check(input: &ReadInput) -> Result<(), String> {
    if input.path.trim().is_empty() {
        return Err("read: `path` is empty".into());
    }
    if matches!(input.offset, Some(o) if o < 0) {
        return Err("read: `offset` must be a line number (1 or more)".into());
    }
    if matches!(input.limit, Some(l) if l < 1) {
        return Err("read: `limit` must be 1 or more".into());
    }
    Ok(())
}

/// The `read` tool.
pub struct ReadTool;

#[async_trait]
impl ToolHandler for ReadTool {
    fn tool(&self) -> Tool {
        Tool::Read
    }

    fn description(&self) -> &'static str {
        "Reads a text file and returns its lines numbered like `cat -n`. Relative paths are \
         relative to the project root. By default up to 2000 lines from the start; use \
         `offset` (1-based line number) and `limit` (number of lines) to page through longer \
         files. Lines longer than 2000 characters are cut. Binary files are refused. Read a \
         file before editing it."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file to read (absolute, or relative to the project root)."},
                "offset": {"type": "integer", "minimum": 1, "description": "The first line to show (1-based). Default 1."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show. Default 2000."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check(&parse_input::<ReadInput>("read", input)?)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: ReadInput = match parse_input("read", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check(&input) {
            return ToolResult::error(e);
        }
        let ctx = ctx.clone();
        match tokio::task::spawn_blocking(move || read_file(&input, &ctx)).await {
            Ok(r) => r,
            Err(e) => ToolResult::error(format!("read failed: {e}")),
        }
    }
}

fn read_file(input: &ReadInput, ctx: &ToolContext) -> ToolResult {
    let given = tool_path(ctx, &input.path);
    let shown = display(&ctx.project_root, &given);
    let path = match judged_target(ctx, &input.path, &shown) {
        Ok(p) => p,
        Err(e) => return ToolResult::error(e),
    };
    // Opened without following any link: exactly the judged file.
    let file = match beneath::open_read(&path) {
        Ok((f, _)) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolResult::error(format!("{shown} does not exist"));
        }
        Err(e) => return ToolResult::error(format!("cannot read {shown}: {}", io_message(&e))),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return ToolResult::error(format!("cannot read {shown}: {}", io_message(&e))),
    };
    if meta.is_dir() {
        return ToolResult::error(format!(
            "{shown} is a folder, not a file; use glob (e.g. pattern \"{}/*\") to list its files",
            shown.trim_end_matches('/')
        ));
    }
    if !meta.is_file() {
        return ToolResult::error(format!(
            "{shown} is not a regular file (a device, socket or pipe); read shows text files only"
        ));
    }
    let len = meta.len();
    let mut reader = BufReader::with_capacity(64 * 1024, file);

    // Sniff the first bytes for binary content.
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    if let Err(e) = (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
    {
        return ToolResult::error(format!("cannot read {shown}: {}", io_message(&e)));
    }
    if looks_binary(&head) {
        return ToolResult::error(format!(
            "{shown} is a binary file ({len} bytes); read shows text files only"
        ));
    }
    let mut reader = std::io::Cursor::new(head).chain(reader);

    let offset = input.offset.unwrap_or(1).max(1) as usize;
    let limit = input
        .limit
        .map(|l| l as usize)
        .unwrap_or(READ_DEFAULT_LIMIT);
    let hash_whole = len <= HASH_LIMIT;

    let mut hasher = StreamHasher::new();
    let mut out = String::new();
    let mut line = Vec::new();
    let mut n = 0usize; // lines seen
    let mut shown_last = 0usize; // last line shown
    let mut cut_lines = 0usize;
    let mut output_full = false;
    let mut more_after = false;
    let mut complete = true; // whether every line was counted
    loop {
        line.clear();
        let read = match reader.read_until(b'\n', &mut line) {
            Ok(r) => r,
            Err(e) => return ToolResult::error(format!("cannot read {shown}: {}", io_message(&e))),
        };
        if read == 0 {
            break;
        }
        hasher.update(&line);
        n += 1;
        if n < offset {
            continue;
        }
        if n >= offset + limit || output_full {
            more_after = true;
            if !hash_whole {
                complete = false;
                break;
            }
            continue;
        }
        let mut text = String::from_utf8_lossy(&line).into_owned();
        while text.ends_with('\n') || text.ends_with('\r') {
            text.pop();
        }
        if truncate_chars(&mut text, READ_MAX_LINE_CHARS) {
            text.push_str(" … [line cut]");
            cut_lines += 1;
        }
        out.push_str(&format!("{n:>6}\t{text}\n"));
        shown_last = n;
        if out.len() >= READ_MAX_OUTPUT_CHARS {
            output_full = true;
        }
    }

    let stamp = FileStamp {
        len,
        modified: meta.modified().ok(),
        hash: complete.then(|| hasher.finish()),
    };
    ctx.session.record_read(&path, stamp);

    if n == 0 {
        return ToolResult::ok(format!("{shown} is empty (0 lines)"));
    }
    if shown_last == 0 {
        return ToolResult::ok(format!(
            "{shown} has {n} lines; offset {offset} is past the end (nothing shown)"
        ));
    }
    let mut notes = Vec::new();
    if more_after {
        let total = if complete {
            format!(" of {n}")
        } else {
            String::new()
        };
        notes.push(format!(
            "[showing lines {offset}-{shown_last}{total}; call read with offset {} to see more]",
            shown_last + 1
        ));
    }
    if cut_lines > 0 {
        notes.push(format!(
            "[{cut_lines} line(s) longer than {READ_MAX_LINE_CHARS} characters were cut]"
        ));
    }
    for note in notes {
        out.push_str(&note);
        out.push('\n');
    }
    if out.ends_with('\n') {
        out.pop();
    }
    ToolResult::ok(out)
}
