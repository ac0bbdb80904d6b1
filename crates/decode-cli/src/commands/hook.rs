//! `decode hook claude-code|gemini-cli`: Decode's gate in front of another agent.
//!
//! Reads one pre-tool-use event on stdin, maps its tool and input to Decode's, judges
//! it with the project's settings and trust, and prints the agent's decision JSON
//! (docs/hooks.md). The event shapes are the agents' own:
//! - Claude Code `PreToolUse`: <https://code.claude.com/docs/en/hooks> ("PreToolUse
//!   input", "PreToolUse decision control"): `tool_name`, `tool_input`, `cwd`,
//!   `permission_mode`; the answer is `hookSpecificOutput.permissionDecision`
//!   (`allow`, `ask`, `deny`), and an empty stdout with exit 0 is no decision.
//! - Gemini CLI `BeforeTool`: <https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md>
//!   ("Base input schema", "BeforeTool"): `tool_name`, `tool_input`, `cwd`; the
//!   answer is `decision` (`allow`, `deny`), and `{}` is no decision.
//!
//! A malformed event prints one line on stderr and exits 1, which both agents treat
//! as a hook error that decides nothing (their own permission flow runs); it never
//! allows. An ask becomes "no decision" for Gemini CLI, whose own confirmation then
//! runs; a tool Decode does not know gets no decision from either.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_core::state::{parse_mode, ActiveState};
use decode_policy::{Call, Decision, Mode, Tool, Verdict};
use serde_json::{json, Value};

use super::check::explain;
use crate::cli::{HookAgent, HookArgs};
use crate::output;

/// The largest event read (a write's content is in it).
const MAX_EVENT_BYTES: u64 = 64 * 1024 * 1024;

/// One event, as Decode reads it.
#[derive(Debug)]
struct Event {
    cwd: PathBuf,
    tool_name: String,
    input: serde_json::Map<String, Value>,
    /// The mode the event names (Claude Code's `permission_mode`), if Decode knows it.
    mode: Option<Mode>,
}

pub fn run(args: HookArgs, dirs: &Dirs) -> ExitCode {
    let event = match read_event(args.from) {
        Ok(e) => e,
        Err(line) => {
            output::err(&format!("decode hook: {line}"));
            return ExitCode::FAILURE;
        }
    };
    let calls = match calls(args.from, &event) {
        Ok(c) => c,
        Err(line) => {
            output::err(&format!("decode hook: {line}"));
            return ExitCode::FAILURE;
        }
    };
    if calls.is_empty() {
        tracing::debug!(tool = %event.tool_name, "a tool Decode does not know: no decision");
        no_decision(args.from);
        return ExitCode::SUCCESS;
    }
    let project = match &args.project {
        Some(p) => p.clone(),
        None => project_of(&event.cwd),
    };
    let mode = match event.mode {
        Some(m) => Some(m),
        None => match args.select.mode.as_deref().map(parse_mode).transpose() {
            Ok(m) => m,
            Err(e) => return output::usage_error(&format!("decode: {e}")),
        },
    };
    let (state, diagnostics) = match ActiveState::open(
        &project,
        &dirs.home,
        &dirs.data,
        args.select.agent.as_deref(),
        mode,
    ) {
        Ok(s) => s,
        Err(e) => {
            output::err(&format!("decode hook: {e}"));
            return ExitCode::FAILURE;
        }
    };
    for d in diagnostics {
        tracing::warn!("{d}");
    }
    // Every call the event makes is judged; the strictest answer stands.
    let mut worst: Option<Decision> = None;
    for (call, cwd) in &calls {
        let d = state.decide_in(call, cwd);
        tracing::info!(tool = %call.tool, subject = %call.subject, verdict = %d.verdict, "hook event judged");
        if worst
            .as_ref()
            .is_none_or(|w| strictness(d.verdict) > strictness(w.verdict))
        {
            worst = Some(d);
        }
    }
    let Some(decision) = worst else {
        no_decision(args.from);
        return ExitCode::SUCCESS;
    };
    print_decision(args.from, &decision);
    ExitCode::SUCCESS
}

fn strictness(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

fn read_event(agent: HookAgent) -> Result<Event, String> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_EVENT_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("cannot read the event on stdin: {e}"))?;
    if raw.len() as u64 > MAX_EVENT_BYTES {
        return Err(format!(
            "the event on stdin is over {} MiB",
            MAX_EVENT_BYTES >> 20
        ));
    }
    let v: Value =
        serde_json::from_slice(&raw).map_err(|e| format!("the event on stdin is not JSON: {e}"))?;
    let Value::Object(obj) = v else {
        return Err("the event on stdin is not a JSON object".into());
    };
    let (event_name, who) = match agent {
        HookAgent::ClaudeCode => ("PreToolUse", "Claude Code"),
        HookAgent::GeminiCli => ("BeforeTool", "Gemini CLI"),
    };
    if let Some(name) = obj.get("hook_event_name") {
        if name.as_str() != Some(event_name) {
            return Err(format!(
                "the event is {name}, not a {who} {event_name} event"
            ));
        }
    }
    let tool_name = obj
        .get("tool_name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("the event has no `tool_name`")?
        .to_string();
    let input = match obj.get("tool_input") {
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("the event's `tool_input` is not an object".into()),
        None => return Err("the event has no `tool_input`".into()),
    };
    let cwd = obj
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .ok_or("the event has no `cwd`")?;
    let cwd = PathBuf::from(cwd);
    if !cwd.is_absolute() {
        return Err(format!(
            "the event's `cwd` is not absolute: {}",
            cwd.display()
        ));
    }
    let mode = match (agent, obj.get("permission_mode").and_then(Value::as_str)) {
        (HookAgent::ClaudeCode, Some(m)) => claude_mode(m),
        _ => None,
    };
    Ok(Event {
        cwd,
        tool_name,
        input,
        mode,
    })
}

/// Claude Code's `permission_mode` as Decode's mode; `None` for a value Decode
/// does not map (the `--mode` flag or the agent's mode then applies).
fn claude_mode(m: &str) -> Option<Mode> {
    match m {
        "default" | "dontAsk" => Some(Mode::Default),
        "acceptEdits" => Some(Mode::Edit),
        "plan" => Some(Mode::Plan),
        "bypassPermissions" => Some(Mode::Bypass),
        _ => None,
    }
}

/// The project: the nearest folder at or above `cwd` that holds `.decode/` or `.git`,
/// else `cwd`.
fn project_of(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".decode").is_dir() || d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// A path from the event, absolute (a relative one is relative to `cwd`).
fn abs(cwd: &Path, p: &str) -> String {
    let p = Path::new(p);
    if p.is_absolute() {
        p.display().to_string()
    } else {
        cwd.join(p).display().to_string()
    }
}

/// The Decode calls an event makes, each with the folder it runs in; empty for a tool
/// Decode does not know. An input that lacks what the tool needs is an error.
fn calls(agent: HookAgent, e: &Event) -> Result<Vec<(Call, PathBuf)>, String> {
    let field = |names: &[&str]| -> Option<String> {
        names
            .iter()
            .find_map(|n| e.input.get(*n).and_then(Value::as_str))
            .map(str::to_string)
    };
    let need = |names: &[&str]| -> Result<String, String> {
        field(names).ok_or_else(|| {
            format!(
                "the {} event has no `{}` in its tool_input",
                e.tool_name, names[0]
            )
        })
    };
    let cwd = e.cwd.clone();
    let one = |tool: Tool, subject: String| Ok(vec![(Call::new(tool, subject), cwd.clone())]);
    let glob = |pattern: &str, dir: Option<String>| {
        let dir = abs(&cwd, dir.as_deref().unwrap_or("."));
        Call::new(Tool::Glob, decode_policy::glob_search(&dir, pattern).0)
    };
    match (agent, e.tool_name.as_str()) {
        (HookAgent::ClaudeCode, "Bash") => one(Tool::Bash, need(&["command"])?),
        (HookAgent::ClaudeCode, "Read") => one(Tool::Read, abs(&cwd, &need(&["file_path"])?)),
        (HookAgent::ClaudeCode, "Write") => one(Tool::Write, abs(&cwd, &need(&["file_path"])?)),
        (HookAgent::ClaudeCode, "Edit" | "MultiEdit") => {
            one(Tool::Edit, abs(&cwd, &need(&["file_path"])?))
        }
        (HookAgent::ClaudeCode, "NotebookEdit") => {
            one(Tool::Edit, abs(&cwd, &need(&["notebook_path"])?))
        }
        (HookAgent::ClaudeCode, "Glob") => Ok(vec![(
            glob(&need(&["pattern"])?, field(&["path"])),
            cwd.clone(),
        )]),
        (HookAgent::ClaudeCode, "Grep") => one(
            Tool::Grep,
            abs(&cwd, field(&["path"]).as_deref().unwrap_or(".")),
        ),
        (HookAgent::ClaudeCode, "WebFetch") => one(Tool::WebFetch, need(&["url"])?),
        (HookAgent::GeminiCli, "run_shell_command") => {
            let command = need(&["command"])?;
            let dir = field(&["dir_path", "directory"])
                .map(|d| PathBuf::from(abs(&cwd, &d)))
                .unwrap_or_else(|| cwd.clone());
            Ok(vec![(Call::new(Tool::Bash, command), dir)])
        }
        (HookAgent::GeminiCli, "read_file") => one(
            Tool::Read,
            abs(&cwd, &need(&["file_path", "absolute_path", "path"])?),
        ),
        (HookAgent::GeminiCli, "write_file") => one(
            Tool::Write,
            abs(&cwd, &need(&["file_path", "absolute_path", "path"])?),
        ),
        (HookAgent::GeminiCli, "replace") => one(
            Tool::Edit,
            abs(&cwd, &need(&["file_path", "absolute_path", "path"])?),
        ),
        (HookAgent::GeminiCli, "glob") => Ok(vec![(
            glob(&need(&["pattern"])?, field(&["dir_path", "path"])),
            cwd.clone(),
        )]),
        (HookAgent::GeminiCli, "list_directory") => Ok(vec![(
            glob("*", Some(need(&["dir_path", "path"])?)),
            cwd.clone(),
        )]),
        (HookAgent::GeminiCli, "grep_search" | "search_file_content") => one(
            Tool::Grep,
            abs(&cwd, field(&["dir_path", "path"]).as_deref().unwrap_or(".")),
        ),
        (HookAgent::GeminiCli, "read_many_files") => {
            let include = match e.input.get("include").or_else(|| e.input.get("paths")) {
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("the read_many_files event's `include` holds a non-string")?,
                _ => return Err("the read_many_files event has no `include` list".into()),
            };
            Ok(include
                .iter()
                .map(|p| (glob(p, None), cwd.clone()))
                .collect())
        }
        (HookAgent::GeminiCli, "web_fetch") => {
            // The URL is in `url` (direct fetch) or in the prompt's text (up to 20).
            let mut urls: Vec<String> = field(&["url"]).into_iter().collect();
            if let Some(prompt) = field(&["prompt"]) {
                urls.extend(
                    prompt
                        .split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\''))
                        .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
                        .map(|w| {
                            w.trim_end_matches(['.', ',', ')', ';', ':', '!', '?'])
                                .to_string()
                        }),
                );
            }
            if urls.is_empty() {
                // Nothing Decode can judge: Gemini CLI's own confirmation decides.
                return Ok(Vec::new());
            }
            Ok(urls
                .into_iter()
                .map(|u| (Call::new(Tool::WebFetch, u), cwd.clone()))
                .collect())
        }
        _ => Ok(Vec::new()),
    }
}

fn no_decision(agent: HookAgent) {
    match agent {
        // Claude Code: exit 0 with nothing on stdout.
        HookAgent::ClaudeCode => {}
        HookAgent::GeminiCli => output::json("{}"),
    }
}

fn print_decision(agent: HookAgent, d: &Decision) {
    let reason = format!("Decode: {}", explain(d));
    let out = match agent {
        HookAgent::ClaudeCode => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": d.verdict.name(),
                "permissionDecisionReason": reason,
            }
        }),
        HookAgent::GeminiCli => match d.verdict {
            // BeforeTool has no ask: Gemini CLI's own confirmation runs.
            Verdict::Ask => json!({}),
            Verdict::Allow => json!({"decision": "allow", "reason": reason}),
            Verdict::Deny => json!({
                "decision": "deny",
                "reason": reason,
                "systemMessage": reason,
            }),
        },
    };
    output::json(&out.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_modes() {
        assert_eq!(claude_mode("acceptEdits"), Some(Mode::Edit));
        assert_eq!(claude_mode("dontAsk"), Some(Mode::Default));
        assert_eq!(claude_mode("bypassPermissions"), Some(Mode::Bypass));
        assert_eq!(claude_mode("auto"), None);
    }

    #[test]
    fn the_project_is_the_nearest_folder_with_decode_or_git() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("p/.git")).unwrap();
        std::fs::create_dir_all(root.join("p/a/b")).unwrap();
        assert_eq!(project_of(&root.join("p/a/b")), root.join("p"));
        std::fs::create_dir_all(root.join("p/a/.decode")).unwrap();
        assert_eq!(project_of(&root.join("p/a/b")), root.join("p/a"));
        assert_eq!(project_of(&root), root);
    }
}
