//! `grep`: a regex search over files, honouring `.gitignore` — ripgrep's own crates
//! (`ignore`'s parallel walker, `grep-searcher`, `grep-regex`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::SystemTime;

use async_trait::async_trait;
use decode_policy::Tool;
use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::types::{Types, TypesBuilder};
use ignore::WalkState;
use serde::Deserialize;
use serde_json::json;

use super::files::{found_in_place, io_message, parse_input, truncate_chars, Found, PlaceCache};
use super::glob::walker;
use super::paths::{display, resolve_links, tool_path};
use super::{ToolContext, ToolHandler, ToolResult};

/// Paths listed in `files` mode / lines in `count` mode.
const MAX_FILES: usize = 200;
/// Lines shown in `content` mode.
const MAX_CONTENT_LINES: usize = 500;
/// Characters shown in `content` mode.
const MAX_CONTENT_CHARS: usize = 30_000;
/// A shown line is cut at this many characters.
const MAX_LINE_CHARS: usize = 1000;
/// Lines kept in memory in `content` mode before only counting.
const STORE_LINES: usize = 5_000;
/// Context lines at most.
const MAX_CONTEXT: u64 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OutputMode {
    #[serde(
        alias = "files_with_matches",
        alias = "files-with-matches",
        alias = "list"
    )]
    Files,
    Content,
    Count,
}

#[derive(Debug, Deserialize)]
struct GrepInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, rename = "type")]
    file_type: Option<String>,
    #[serde(default, alias = "-i", alias = "ignore_case")]
    case_insensitive: bool,
    #[serde(default, alias = "-C", alias = "context_lines")]
    context: Option<u64>,
    #[serde(default)]
    output_mode: Option<OutputMode>,
    #[serde(default)]
    multiline: bool,
}

struct Plan {
    matcher: RegexMatcher,
    types: Option<Types>,
    filter: Option<(GlobMatcher, bool, bool)>, // (glob, negated, whole path)
    mode: OutputMode,
    context: u64,
    multiline: bool,
}

fn plan(i: &GrepInput) -> Result<Plan, String> {
    if i.pattern.is_empty() {
        return Err("grep: `pattern` is empty".into());
    }
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(i.case_insensitive).multi_line(true);
    if i.multiline {
        b.dot_matches_new_line(true);
    } else {
        b.line_terminator(Some(b'\n'));
    }
    let matcher = b.build(&i.pattern).map_err(|e| {
        let first = e.to_string();
        let first = first.lines().last().unwrap_or("invalid").trim().to_string();
        format!(
            "grep: `pattern` is not a valid regular expression ({first}); escape special characters such as ( [ {{ . * with a backslash to match them literally"
        )
    })?;
    let types = match i.file_type.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(t) => {
            let mut tb = TypesBuilder::new();
            tb.add_defaults();
            tb.select(t);
            Some(tb.build().map_err(|_| {
                format!("grep: unknown file type `{t}` (e.g. rust, py, js, ts, go, java, c, cpp, md, json, yaml, sh)")
            })?)
        }
    };
    let filter = match i.glob.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(g) => {
            let (negated, g) = match g.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, g),
            };
            let whole = g.contains('/');
            let g = g.trim_start_matches("./");
            let glob = GlobBuilder::new(g)
                .literal_separator(whole)
                .build()
                .map_err(|e| format!("grep: `glob` is not a valid glob: {}", e.kind()))?;
            Some((glob.compile_matcher(), negated, whole))
        }
    };
    let context = i.context.unwrap_or(0);
    if context > MAX_CONTEXT {
        return Err(format!("grep: `context` is at most {MAX_CONTEXT} lines"));
    }
    Ok(Plan {
        matcher,
        types,
        filter,
        mode: i.output_mode.unwrap_or(OutputMode::Files),
        context,
        multiline: i.multiline,
    })
}

/// The `grep` tool.
pub struct GrepTool;

#[async_trait]
impl ToolHandler for GrepTool {
    fn tool(&self) -> Tool {
        Tool::Grep
    }

    fn description(&self) -> &'static str {
        "Searches file contents with a regular expression (Rust regex syntax, like ripgrep). \
         Searches `path` (a folder or a file; default the project root), skipping files ignored \
         by .gitignore, the .git folder and binary files. Filter files with `glob` (e.g. \
         `*.rs`, `*.{ts,tsx}`, `src/**/*.py`; `!` excludes) or `type` (rust, py, js, ts, go, \
         …). `output_mode`: `files` (default: matching file paths, newest first), `content` \
         (matching lines as path:line:text, with `context` lines around them), or `count` \
         (matching lines per file). Output is capped; narrow the search when it is."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression to search for."},
                "path": {"type": "string", "description": "The folder or file to search (default: the project root)."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.rs\" or \"src/**/*.ts\"; a leading ! excludes instead."},
                "type": {"type": "string", "description": "Only search files of this type, e.g. rust, py, js, ts, go."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."},
                "context": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "description": "Lines of context before and after each match (content mode)."},
                "output_mode": {"type": "string", "enum": ["files", "content", "count"], "description": "files (default), content or count."},
                "multiline": {"type": "boolean", "description": "Let the pattern span lines (`.` matches newlines too). Default false."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        plan(&parse_input::<GrepInput>("grep", input)?).map(|_| ())
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: GrepInput = match parse_input("grep", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        let plan = match plan(&input) {
            Ok(p) => p,
            Err(e) => return ToolResult::error(e),
        };
        let ctx = ctx.clone();
        let cancel = ctx.cancel.clone();
        let work = tokio::task::spawn_blocking(move || grep(&input, plan, &ctx));
        tokio::select! {
            r = work => r.unwrap_or_else(|e| ToolResult::error(format!("grep failed: {e}"))),
            _ = cancel.cancelled() => ToolResult::error("grep was cancelled"),
        }
    }
}

/// What one file produced.
struct FileHit {
    path: PathBuf,
    /// Matching lines (count mode / totals).
    count: usize,
    /// Formatted lines (content mode).
    lines: Vec<String>,
}

/// Collects one file's matches.
struct Collect<'a> {
    mode: OutputMode,
    shown: &'a str,
    count: usize,
    lines: Vec<String>,
    stored: &'a AtomicUsize,
}

impl Collect<'_> {
    fn push(&mut self, sep: char, number: Option<u64>, bytes: &[u8]) {
        if self.stored.load(Ordering::Relaxed) >= STORE_LINES {
            return;
        }
        self.stored.fetch_add(1, Ordering::Relaxed);
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        while text.ends_with('\n') || text.ends_with('\r') {
            text.pop();
        }
        if truncate_chars(&mut text, MAX_LINE_CHARS) {
            text.push_str(" … [line cut]");
        }
        let n = number.map(|n| n.to_string()).unwrap_or_default();
        self.lines
            .push(format!("{}{sep}{n}{sep}{text}", self.shown));
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        match self.mode {
            OutputMode::Files => {
                self.count += 1;
                Ok(false)
            }
            OutputMode::Count => {
                self.count += 1;
                Ok(true)
            }
            OutputMode::Content => {
                let first = mat.line_number();
                for (n, line) in mat.lines().enumerate() {
                    self.count += 1;
                    let number = first.map(|f| f + n as u64);
                    self.push(':', number, line);
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _s: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content {
            self.push('-', ctx.line_number(), ctx.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content && !self.lines.is_empty() {
            self.lines.push("--".to_string());
        }
        Ok(true)
    }
}

fn grep(input: &GrepInput, plan: Plan, ctx: &ToolContext) -> ToolResult {
    let root = match &input.path {
        Some(p) if !p.is_empty() => tool_path(ctx, p),
        _ => ctx.project_root.clone(),
    };
    // Files a read rule denies are never searched (not even named); files
    // an ask rule covers are skipped and counted.
    let gate = ctx.active.gate();
    let asked = AtomicUsize::new(0);
    let root_shown = display(&ctx.project_root, &root);
    let root_is_dir = match std::fs::metadata(&root) {
        Ok(m) if m.is_dir() => true,
        Ok(m) if m.is_file() => false,
        Ok(_) => {
            return ToolResult::error(format!(
                "{root_shown} is not a regular file or folder; grep searches files"
            ))
        }
        Err(e) => {
            return ToolResult::error(format!("cannot search {root_shown}: {}", io_message(&e)))
        }
    };

    // What the gate judged: nothing outside it is searched, whatever link a
    // folder on the way turns into meanwhile.
    let scope = ctx
        .judged_path
        .clone()
        .unwrap_or_else(|| resolve_links(&root));
    let mut wb = walker(&root);
    if let Some(types) = &plan.types {
        wb.types(types.clone());
    }
    let (tx, rx) = mpsc::channel::<FileHit>();
    let stored = AtomicUsize::new(0);
    let searcher_builder = searcher_for(&plan);
    let project_root = ctx.project_root.clone();
    let cancel = ctx.cancel.clone();
    wb.build_parallel().run(|| {
        let tx = tx.clone();
        let matcher = plan.matcher.clone();
        let mut searcher = searcher_builder.build();
        let filter = plan.filter.clone();
        let root = root.clone();
        let project_root = project_root.clone();
        let cancel = cancel.clone();
        let stored = &stored;
        let asked = &asked;
        let gate = gate.clone();
        let scope = scope.clone();
        let mode = plan.mode;
        let mut place = PlaceCache::default();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false)
                || (entry.depth() == 0 && !root_is_dir);
            if !is_file {
                return WalkState::Continue;
            }
            if let Some((glob, negated, whole)) = &filter {
                let hit = if *whole {
                    let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
                    glob.is_match(rel)
                } else {
                    glob.is_match(Path::new(entry.file_name()))
                };
                if hit == *negated {
                    return WalkState::Continue;
                }
            }
            // Searched only where it is now, read where the rules judged it.
            let ino = if entry.depth() == 0 {
                None
            } else {
                entry.ino()
            };
            let file = match found_in_place(&gate, &scope, entry.path(), ino, true, &mut place) {
                Found::Shown(Some(f)) => f,
                Found::Asked => {
                    asked.fetch_add(1, Ordering::Relaxed);
                    return WalkState::Continue;
                }
                Found::Shown(None) | Found::Denied | Found::Moved => return WalkState::Continue,
            };
            let shown = display(&project_root, entry.path());
            let mut sink = Collect {
                mode,
                shown: &shown,
                count: 0,
                lines: Vec::new(),
                stored,
            };
            if searcher.search_file(&matcher, &file, &mut sink).is_err() {
                return WalkState::Continue;
            }
            if sink.count > 0 {
                let hit = FileHit {
                    path: entry.into_path(),
                    count: sink.count,
                    lines: sink.lines,
                };
                if tx.send(hit).is_err() {
                    return WalkState::Quit;
                }
            }
            WalkState::Continue
        })
    });
    drop(tx);
    let hits: Vec<FileHit> = rx.into_iter().collect();
    if ctx.cancel.is_cancelled() {
        return ToolResult::error("grep was cancelled");
    }
    let asked = asked.load(Ordering::Relaxed);
    let asked_note = (asked > 0).then(|| {
        format!(
            "({asked} file{} not searched: an ask rule covers reading {}; read {} with the read tool to be asked)",
            if asked == 1 { "" } else { "s" },
            if asked == 1 { "it" } else { "them" },
            if asked == 1 { "it" } else { "them" },
        )
    });
    if hits.is_empty() {
        return ToolResult::ok(no_matches(input, &root_shown, asked_note.as_deref()));
    }
    let total: usize = hits.iter().map(|h| h.count).sum();
    let shown = |p: &Path| display(&ctx.project_root, p);
    let out = match plan.mode {
        OutputMode::Files => files_report(hits, &shown),
        OutputMode::Count => count_report(hits, total, &shown),
        OutputMode::Content => content_report(
            hits,
            total,
            plan.context,
            stored.load(Ordering::Relaxed) >= STORE_LINES,
            &shown,
        ),
    };
    let out = match asked_note {
        Some(n) => format!("{out}\n{n}"),
        None => out,
    };
    ToolResult::ok(out)
}

/// The searcher a plan asks for: binary files skipped, line numbers and context only in
/// `content` mode.
fn searcher_for(plan: &Plan) -> SearcherBuilder {
    let mut builder = SearcherBuilder::new();
    builder
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(plan.mode == OutputMode::Content)
        .multi_line(plan.multiline);
    if plan.mode == OutputMode::Content {
        builder
            .before_context(plan.context as usize)
            .after_context(plan.context as usize);
    }
    builder
}

/// What a search without a match says: where it looked, and what it left out.
fn no_matches(input: &GrepInput, root_shown: &str, asked_note: Option<&str>) -> String {
    let mut msg = format!("No matches for `{}` in {root_shown}", input.pattern);
    if let Some(g) = &input.glob {
        msg.push_str(&format!(" (files matching `{g}`)"));
    }
    if let Some(t) = &input.file_type {
        msg.push_str(&format!(" (type {t})"));
    }
    if let Some(n) = asked_note {
        msg.push('\n');
        msg.push_str(n);
    }
    msg
}

/// `files` mode: the matching files, most recently changed first.
fn files_report(hits: Vec<FileHit>, shown: &dyn Fn(&Path) -> String) -> String {
    let files = hits.len();
    let mut dated: Vec<(SystemTime, FileHit)> = hits
        .into_iter()
        .map(|h| {
            let t = std::fs::metadata(&h.path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (t, h)
        })
        .collect();
    dated.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    let mut lines: Vec<String> = dated
        .iter()
        .take(MAX_FILES)
        .map(|(_, h)| shown(&h.path))
        .collect();
    if files > MAX_FILES {
        lines.push(format!(
            "(… and {} more; {files} files match: narrow the search with path, glob or type)",
            files - MAX_FILES
        ));
    }
    lines.join("\n")
}

/// `count` mode: each file with its number of matching lines, and the total.
fn count_report(mut hits: Vec<FileHit>, total: usize, shown: &dyn Fn(&Path) -> String) -> String {
    let files = hits.len();
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let mut lines: Vec<String> = hits
        .iter()
        .take(MAX_FILES)
        .map(|h| format!("{}:{}", shown(&h.path), h.count))
        .collect();
    if files > MAX_FILES {
        lines.push(format!("(… and {} more files)", files - MAX_FILES));
    }
    lines.push(format!(
        "({total} matching line{} in {files} file{})",
        plural(total),
        plural(files)
    ));
    lines.join("\n")
}

/// `content` mode: the matching lines (with their context), capped in lines and
/// characters; `capped` when the search itself stopped storing lines.
fn content_report(
    mut hits: Vec<FileHit>,
    total: usize,
    context: u64,
    mut capped: bool,
    shown: &dyn Fn(&Path) -> String,
) -> String {
    let files = hits.len();
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let mut out = String::new();
    let mut shown_lines = 0usize;
    let mut shown_matches = 0usize;
    'files: for (i, h) in hits.iter().enumerate() {
        if h.lines.is_empty() {
            continue;
        }
        if i > 0 && context > 0 && !out.is_empty() {
            out.push_str("--\n");
        }
        for line in &h.lines {
            if shown_lines >= MAX_CONTENT_LINES || out.len() + line.len() > MAX_CONTENT_CHARS {
                capped = true;
                break 'files;
            }
            if !line.starts_with(&format!("{}-", shown(&h.path))) && line != "--" {
                shown_matches += 1;
            }
            out.push_str(line);
            out.push('\n');
            shown_lines += 1;
        }
    }
    if capped {
        out.push_str(&format!(
            "[output capped: {shown_matches} of {total} matching lines shown ({files} file{}); narrow the search with path, glob or type, or use output_mode \"files\"]",
            plural(files)
        ));
    } else if out.ends_with('\n') {
        out.pop();
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
