//! `glob`: files whose path matches a glob, newest first, honouring `.gitignore`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::SystemTime;

use async_trait::async_trait;
use decode_policy::Tool;
use globset::GlobBuilder;
use ignore::{WalkBuilder, WalkState};
use serde::Deserialize;
use serde_json::json;

use super::files::{found_in_place, io_message, parse_input, Found, PlaceCache};
use super::paths::{display, resolve_links, tool_path};
use super::{ToolContext, ToolHandler, ToolResult};

/// At most this many paths are listed; the rest are counted.
pub const GLOB_MAX_RESULTS: usize = 100;

#[derive(Debug, Deserialize)]
struct GlobInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

fn check(i: &GlobInput) -> Result<(), String> {
    if i.pattern.trim().is_empty() {
        return Err("glob: `pattern` is empty".into());
    }
    GlobBuilder::new(i.pattern.trim())
        .literal_separator(true)
        .build()
        .map_err(|e| format!("glob: `pattern` is not a valid glob: {}", e.kind()))?;
    Ok(())
}

/// The `glob` tool.
pub struct GlobTool;

#[async_trait]
impl ToolHandler for GlobTool {
    fn tool(&self) -> Tool {
        Tool::Glob
    }

    fn description(&self) -> &'static str {
        "Finds files by glob pattern, e.g. `**/*.rs` or `src/**/test_*.py`, relative to the \
         search folder (`path`, default the project root). `*` does not cross `/`; `**` does; \
         `{a,b}` and `[abc]` work. Files ignored by .gitignore (and .ignore) and the .git \
         folder are skipped. Returns matching file paths, newest first, at most 100."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob to match file paths against, relative to `path`."},
                "path": {"type": "string", "description": "The folder to search (default: the project root)."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check(&parse_input::<GlobInput>("glob", input)?)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: GlobInput = match parse_input("glob", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check(&input) {
            return ToolResult::error(e);
        }
        let ctx = ctx.clone();
        let cancel = ctx.cancel.clone();
        let work = tokio::task::spawn_blocking(move || glob(&input, &ctx));
        tokio::select! {
            r = work => r.unwrap_or_else(|e| ToolResult::error(format!("glob failed: {e}"))),
            _ = cancel.cancelled() => ToolResult::error("glob was cancelled"),
        }
    }
}

/// Builds the walker the file tools share: .gitignore / .ignore / git excludes
/// honoured even outside a git repository, hidden files included, `.git` skipped,
/// links not followed.
pub(crate) fn walker(start: &Path) -> WalkBuilder {
    let mut b = WalkBuilder::new(start);
    b.hidden(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    b
}

fn glob(input: &GlobInput, ctx: &ToolContext) -> ToolResult {
    // The folder searched is the one the gate judged: `path`, then the
    // pattern's literal leading folders (an absolute or `..` pattern names
    // a folder outside the root, judged as such).
    let (folder, pattern) =
        decode_policy::glob_search(input.path.as_deref().unwrap_or(""), &input.pattern);
    let root = if folder.is_empty() {
        ctx.project_root.clone()
    } else {
        tool_path(ctx, &folder)
    };
    let root_shown = display(&ctx.project_root, &root);
    match std::fs::metadata(&root) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return ToolResult::error(format!(
                "{root_shown} is a file; `path` must be a folder to search"
            ))
        }
        Err(e) => {
            return ToolResult::error(format!("cannot search {root_shown}: {}", io_message(&e)))
        }
    }
    let gate = ctx.active.gate();
    // Nothing outside the searched folder (as resolved now) is named,
    // whatever link a folder on the way turns into meanwhile.
    let scope = resolve_links(&root);
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let matcher = match GlobBuilder::new(&pattern).literal_separator(true).build() {
        Ok(g) => g.compile_matcher(),
        Err(e) => return ToolResult::error(format!("`pattern` is not a valid glob: {}", e.kind())),
    };

    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    if root.is_dir() {
        let (tx, rx) = mpsc::channel::<(SystemTime, PathBuf)>();
        let cancel = ctx.cancel.clone();
        walker(&root).build_parallel().run(|| {
            let tx = tx.clone();
            let root = root.clone();
            let matcher = matcher.clone();
            let gate = gate.clone();
            let scope = scope.clone();
            let asked = &asked;
            let cancel = cancel.clone();
            let mut place = PlaceCache::default();
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let is_file = match entry.file_type() {
                    Some(t) if t.is_file() => true,
                    // A link counts when it leads to a file.
                    Some(t) if t.is_symlink() => entry.path().is_file(),
                    _ => false,
                };
                if !is_file {
                    return WalkState::Continue;
                }
                let Ok(rel) = entry.path().strip_prefix(&root) else {
                    return WalkState::Continue;
                };
                if matcher.is_match(rel) {
                    // Named only if it is still where the walker found it,
                    // in a place the read rules allow.
                    match found_in_place(
                        &gate,
                        &scope,
                        entry.path(),
                        entry.ino(),
                        false,
                        &mut place,
                    ) {
                        Found::Shown(_) => {}
                        Found::Asked => {
                            asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            return WalkState::Continue;
                        }
                        Found::Denied | Found::Moved => return WalkState::Continue,
                    }
                    let modified = std::fs::metadata(entry.path())
                        .and_then(|m| m.modified())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    let _ = tx.send((modified, entry.into_path()));
                }
                WalkState::Continue
            })
        });
        drop(tx);
        found.extend(rx);
    }
    let asked = asked.load(std::sync::atomic::Ordering::Relaxed);
    let asked_note = (asked > 0).then(|| {
        format!(
            "({asked} matching file{} not listed: an ask rule covers reading {})",
            if asked == 1 { "" } else { "s" },
            if asked == 1 { "it" } else { "them" },
        )
    });

    if found.is_empty() {
        let mut msg = format!("No files match `{}` in {root_shown}", input.pattern);
        if !input.pattern.contains('/') {
            msg.push_str(&format!(
                " (`{0}` matches at the top level only; try `**/{0}` to search every folder)",
                input.pattern
            ));
        }
        if let Some(n) = &asked_note {
            msg.push('\n');
            msg.push_str(n);
        }
        return ToolResult::ok(msg);
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out: Vec<String> = found
        .iter()
        .take(GLOB_MAX_RESULTS)
        .map(|(_, p)| display(&ctx.project_root, p))
        .collect();
    if total > GLOB_MAX_RESULTS {
        out.push(format!(
            "(… and {} more; {total} files match: narrow the pattern or the path)",
            total - GLOB_MAX_RESULTS
        ));
    }
    if let Some(n) = asked_note {
        out.push(n);
    }
    ToolResult::ok(out.join("\n"))
}
