//! `decode hook claude-code|gemini-cli`: Decode's gate in front of another agent.
//!
//! Reads one pre-tool-use event on stdin, maps its tool and input to Decode's, judges
//! it with the project's settings and trust (and the deny and ask rules of every folder
//! around the project that holds `.decode/settings.json`), and prints the agent's
//! decision JSON (docs/hooks.md). The event shapes are the agents' own:
//! - Claude Code `PreToolUse`: <https://code.claude.com/docs/en/hooks> ("PreToolUse
//!   input", "PreToolUse decision control"): `tool_name`, `tool_input`, `cwd`,
//!   `permission_mode`; the answer is `hookSpecificOutput.permissionDecision`
//!   (`allow`, `ask`, `deny`), and an empty stdout with exit 0 is no decision.
//! - Gemini CLI `BeforeTool`: `docs/hooks/reference.md` and
//!   `packages/core/src/scheduler/hook-utils.ts` in google-gemini/gemini-cli:
//!   `tool_name`, `tool_input`, `cwd`; the answer is `decision`: `deny` (the tool is
//!   blocked with the reason), `ask` (Gemini CLI's own confirmation, even in YOLO
//!   mode, showing `systemMessage`); `allow` is ignored, so Decode sends `{}` there.
//!
//! The mode is the event's (Claude Code's `permission_mode`), else `--mode`, else auto:
//! Gemini CLI's events name no mode, and in auto mode Decode answers only what auto
//! mode would not let through (deny rules, ask rules, opaque commands, caps). When the
//! mode is that fallback, an allow is sent as no decision (the agent's own rules
//! decide).
//!
//! A settings file that is malformed or unreadable never drops its rules silently:
//! while it is broken, every call Decode would allow or leave to the agent is
//! answered ask, the file, line and column in the reason.
//!
//! Exit codes: 0 — answered (a decision, or none); 1 — the event is malformed or the
//! project cannot be opened, one line on stderr (both agents take it as a hook error
//! that decides nothing: their own permission flow runs); 2 — a usage error (an
//! unknown agent or mode, a bad flag), one line on stderr (both agents take exit 2 as
//! "block this call", with that line as the reason).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_core::state::{parse_mode, ActiveState, StateError};
use decode_policy::{Call, Mode, Tool, Verdict};
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

/// Where the mode of a judgement came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModeFrom {
    /// The event said it.
    Event,
    /// `--mode`.
    Flag,
    /// Neither: auto, and an allow is left to the agent.
    Fallback,
}

/// What Decode answers: a verdict with its one-line reason, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    Decide(Verdict, String),
    NoDecision,
}

pub fn run(args: HookArgs, dirs: &Dirs) -> ExitCode {
    // Usage errors first (exit 2, which both agents take as a block).
    let flag_mode = match args.select.mode.as_deref().map(parse_mode).transpose() {
        Ok(m) => m,
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
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
    let project = match &args.project {
        Some(p) => p.clone(),
        None => project_of(&event.cwd),
    };
    let (mode, from) = match (event.mode, flag_mode) {
        (Some(m), _) => (m, ModeFrom::Event),
        (None, Some(m)) => (m, ModeFrom::Flag),
        (None, None) => (Mode::Auto, ModeFrom::Fallback),
    };
    let open = |mode: Mode| {
        ActiveState::open(
            &project,
            &dirs.home,
            &dirs.data,
            args.select.agent.as_deref(),
            Some(mode),
        )
    };
    // A mode the managed settings turned off is judged as default mode (stricter),
    // never left to the agent.
    let opened = match open(mode) {
        Err(StateError::ModeDisabled { reason, .. }) => {
            tracing::info!(%reason, "judging in default mode instead");
            open(Mode::Default)
        }
        other => other,
    };
    let (state, diagnostics) = match opened {
        Ok(s) => s,
        Err(e @ StateError::UnknownAgent { .. }) | Err(e @ StateError::UnknownMode { .. }) => {
            return output::usage_error(&format!("decode: {e}"))
        }
        Err(e) => {
            output::err(&format!("decode hook: {e}"));
            return ExitCode::FAILURE;
        }
    };
    for d in diagnostics {
        tracing::warn!("{d}");
    }
    let answer = judge(args.from, &event, &calls, &state, from);
    print_answer(args.from, &answer);
    ExitCode::SUCCESS
}

/// The answer to an event: the strictest verdict of its calls, worded for the agent,
/// held to ask while a settings file is broken.
fn judge(
    agent: HookAgent,
    event: &Event,
    calls: &[HookCall],
    state: &ActiveState,
    from: ModeFrom,
) -> Answer {
    // Every call the event makes is judged; the strictest answer stands.
    let mut worst: Option<(Verdict, String, Tool)> = None;
    // A fetch of a host *name* is never allowed on Decode's word: the agent resolves
    // the name again when it fetches, and a name that rebinds to the host's loopback
    // in between would ride on the allow. Decode answers deny or ask; an allow is
    // left to the agent's own confirmation (docs/network.md).
    let fetches_a_name = calls
        .iter()
        .any(|c| decode_engine::net::host_name(&c.call).is_some());
    for c in calls {
        let (verdict, explained) = judge_one(c, state);
        tracing::info!(tool = %c.call.tool, subject = %c.call.subject, %verdict, "hook event judged");
        if worst
            .as_ref()
            .is_none_or(|(w, _, _)| strictness(verdict) > strictness(*w))
        {
            worst = Some((verdict, explained, c.call.tool));
        }
    }
    let answer = match &worst {
        None => {
            tracing::debug!(tool = %event.tool_name, "a tool Decode does not know: no decision");
            Answer::NoDecision
        }
        Some((verdict, explained, tool)) => {
            let reason = worded(agent, &event.tool_name, *tool, explained);
            let left_to_agent = *verdict == Verdict::Allow
                && (agent == HookAgent::GeminiCli || from == ModeFrom::Fallback || fetches_a_name);
            if left_to_agent {
                Answer::NoDecision
            } else {
                Answer::Decide(*verdict, reason)
            }
        }
    };
    // A broken settings file: its rules are unknown, so nothing is let through on
    // Decode's word or left to the agent.
    let problems = state.settings_problems();
    if problems.is_empty() {
        return answer;
    }
    let files: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let broken = format!(
        "settings unreadable · {}: until it is fixed, Decode asks before every call",
        files.join("; ")
    );
    tracing::warn!(%broken, "a settings file is broken: asking");
    match answer {
        Answer::Decide(Verdict::Deny, reason) => Answer::Decide(Verdict::Deny, reason),
        Answer::Decide(Verdict::Ask, reason) => {
            Answer::Decide(Verdict::Ask, one_line(&format!("{reason} · also {broken}")))
        }
        _ => Answer::Decide(Verdict::Ask, one_line(&format!("Decode: ask · {broken}"))),
    }
}

/// One call's verdict and its one-line explanation. A search Decode would let
/// through that could reach files a read deny or ask rule covers asks: Decode's own
/// `grep` and `glob` leave such files out of their results, another agent's search
/// cannot be filtered.
fn judge_one(c: &HookCall, state: &ActiveState) -> (Verdict, String) {
    // A fetch is judged by its host's name, then by what the name resolves to: a name
    // that points at a private or metadata address asks (docs/network.md).
    let d = decode_engine::net::decide_host_blocking(
        &|call| state.decide_in(call, &c.cwd),
        c.call.clone(),
        state.gate().addresses_matter(state.mode()),
    )
    .decision;
    let explained = explain(&d);
    if d.verdict == Verdict::Allow && state.mode() != Mode::Bypass {
        if let Some(file) = agent_settings_named(&c.call) {
            return (
                Verdict::Ask,
                format!(
                    "ask · cap: agent settings · {file} is where the agent's hooks (Decode's gate among them) and permissions are configured: changing it is never automatic"
                ),
            );
        }
    }
    let Some(pattern) = c.search.as_deref() else {
        return (d.verdict, explained);
    };
    if d.verdict != Verdict::Allow {
        return (d.verdict, explained);
    }
    match state
        .gate()
        .search_could_reach(Path::new(&c.call.subject), pattern)
    {
        Some((list, rule)) => {
            let what = if list == Verdict::Deny {
                "denies"
            } else {
                "asks before"
            };
            (
                Verdict::Ask,
                format!(
                    "ask · search reach · a search of {} could reach files that {rule} {what} reading, and Decode cannot filter another agent's results: search a folder that holds none",
                    c.call.subject
                ),
            )
        }
        None => (d.verdict, explained),
    }
}

/// The agents' own settings, where their hooks (Decode's gate among them) and
/// permissions live, at any depth: an agent that rewrote them could drop the gate.
const AGENT_SETTINGS: [&str; 5] = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude.json",
    ".gemini/settings.json",
    ".gemini/trustedFolders.json",
];

/// The agent settings file a call writes or names, if any: a file tool's path (as
/// written and through links), or a shell command whose text names one (any mention
/// counts: a command that only reads it asks too).
fn agent_settings_named(call: &Call) -> Option<String> {
    let hit = |p: &Path| {
        AGENT_SETTINGS
            .iter()
            .any(|name| p.ends_with(name))
            .then(|| p.display().to_string())
    };
    match call.tool {
        Tool::Write | Tool::Edit => {
            let given = decode_policy::paths::lexical(Path::new("/"), Path::new(&call.subject));
            hit(&given).or_else(|| hit(&decode_policy::paths::resolve(&given)))
        }
        Tool::Bash => AGENT_SETTINGS
            .iter()
            .find(|name| call.subject.contains(*name))
            .map(|name| format!("`{name}`")),
        _ => None,
    }
}

/// Decode's reason in the agent's words: its own tool names, not Decode's.
fn worded(agent: HookAgent, tool_name: &str, tool: Tool, explained: &str) -> String {
    let mut reason = explained.replace(&format!("`{}`", tool.name()), &format!("`{tool_name}`"));
    let exit_plan = match agent {
        HookAgent::ClaudeCode => "ExitPlanMode",
        HookAgent::GeminiCli => "exit_plan_mode",
    };
    reason = reason.replace(Tool::ExitPlanMode.name(), exit_plan);
    one_line(&format!("Decode: {reason}"))
}

/// One line, with what a terminal would act on (escape sequences, control, bidi and
/// invisible characters from a command or a path) shown escaped: the agents print the
/// reason in their terminal.
fn one_line(s: &str) -> String {
    let joined = s.lines().collect::<Vec<_>>().join(" ");
    decode_core::display::one_line(&joined).into_owned()
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
/// does not map (the `--mode` flag, else auto, then applies).
fn claude_mode(m: &str) -> Option<Mode> {
    match m {
        "default" | "dontAsk" => Some(Mode::Default),
        "acceptEdits" => Some(Mode::Edit),
        "plan" => Some(Mode::Plan),
        "auto" => Some(Mode::Auto),
        "bypassPermissions" => Some(Mode::Bypass),
        _ => None,
    }
}

/// The project: the nearest folder at or above `cwd` that holds `.decode/` or `.git`,
/// else `cwd`. A `cwd` that no longer exists (the agent removed the folder it stood
/// in) counts from its nearest existing folder: the rules of the project around it
/// still apply rather than the hook failing.
fn project_of(cwd: &Path) -> PathBuf {
    let existing = cwd
        .ancestors()
        .find(|d| d.is_dir())
        .unwrap_or_else(|| Path::new("/"));
    existing
        .ancestors()
        .find(|d| d.join(".decode").is_dir() || d.join(".git").exists())
        .unwrap_or(existing)
        .to_path_buf()
}

/// A path from the event, absolute (a relative one is relative to `cwd`), with `.`
/// and `..` folded as the gate folds them.
fn abs(cwd: &Path, p: &str) -> String {
    decode_policy::paths::lexical(cwd, Path::new(p))
        .display()
        .to_string()
}

/// One Decode call an event makes.
#[derive(Debug)]
struct HookCall {
    call: Call,
    /// The folder it runs in.
    cwd: PathBuf,
    /// For a search (`glob`, `grep`): what it looks for under its root (a glob;
    /// `*` for any file).
    search: Option<String>,
}

/// The Decode calls an event makes; empty for a tool Decode does not know. An input
/// that lacks what the tool needs is an error.
fn calls(agent: HookAgent, e: &Event) -> Result<Vec<HookCall>, String> {
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
    let at = |call: Call, cwd: PathBuf| HookCall {
        call,
        cwd,
        search: None,
    };
    let one = |tool: Tool, subject: String| Ok(vec![at(Call::new(tool, subject), cwd.clone())]);
    let grep = |subject: String| {
        Ok(vec![HookCall {
            call: Call::new(Tool::Grep, subject),
            cwd: cwd.clone(),
            search: Some("*".into()),
        }])
    };
    let glob = |pattern: &str, dir: Option<String>| {
        let dir = abs(&cwd, dir.as_deref().unwrap_or("."));
        let (root, rest) = decode_policy::glob_search(&dir, pattern);
        HookCall {
            call: Call::new(Tool::Glob, root),
            cwd: cwd.clone(),
            search: Some(rest),
        }
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
        (HookAgent::ClaudeCode, "Glob") => Ok(vec![glob(&need(&["pattern"])?, field(&["path"]))]),
        (HookAgent::ClaudeCode, "Grep") => {
            grep(abs(&cwd, field(&["path"]).as_deref().unwrap_or(".")))
        }
        (HookAgent::ClaudeCode, "WebFetch") => one(Tool::WebFetch, need(&["url"])?),
        (HookAgent::GeminiCli, "run_shell_command") => {
            let command = need(&["command"])?;
            let dir = field(&["dir_path", "directory"])
                .map(|d| PathBuf::from(abs(&cwd, &d)))
                .unwrap_or_else(|| cwd.clone());
            Ok(vec![at(Call::new(Tool::Bash, command), dir)])
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
        (HookAgent::GeminiCli, "glob") => Ok(vec![glob(
            &need(&["pattern"])?,
            field(&["dir_path", "path"]),
        )]),
        (HookAgent::GeminiCli, "list_directory") => {
            Ok(vec![glob("*", Some(need(&["dir_path", "path"])?))])
        }
        (HookAgent::GeminiCli, "grep_search" | "search_file_content") => grep(abs(
            &cwd,
            field(&["dir_path", "path"]).as_deref().unwrap_or("."),
        )),
        (HookAgent::GeminiCli, "read_many_files") => {
            let include = match e.input.get("include").or_else(|| e.input.get("paths")) {
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("the read_many_files event's `include` holds a non-string")?,
                _ => return Err("the read_many_files event has no `include` list".into()),
            };
            // An entry naming a folder reads everything under it (Gemini CLI
            // expands `dir` to `dir/**`), so it is a search of that folder.
            Ok(include
                .iter()
                .map(|p| match Path::new(&abs(&cwd, p)).is_dir() {
                    true => glob("**", Some(p.clone())),
                    false => glob(p, None),
                })
                .collect())
        }
        (HookAgent::GeminiCli, "web_fetch") => {
            // The URL is in `url` (direct fetch) or in the prompt's text (up to 20).
            let mut urls: Vec<String> = field(&["url"]).into_iter().collect();
            if let Some(prompt) = field(&["prompt"]) {
                urls.extend(
                    prompt
                        .split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\''))
                        .filter(|w| {
                            // Gemini CLI reads a scheme in any case (`HTTP://…`).
                            let w = w.to_ascii_lowercase();
                            w.starts_with("http://") || w.starts_with("https://")
                        })
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
                .map(|u| at(Call::new(Tool::WebFetch, u), cwd.clone()))
                .collect())
        }
        _ => Ok(Vec::new()),
    }
}

fn print_answer(agent: HookAgent, answer: &Answer) {
    let out = match (agent, answer) {
        // Claude Code: exit 0 with nothing on stdout.
        (HookAgent::ClaudeCode, Answer::NoDecision) => return,
        (HookAgent::ClaudeCode, Answer::Decide(verdict, reason)) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": verdict.name(),
                "permissionDecisionReason": reason,
            }
        }),
        // Gemini CLI ignores `allow`: an allow is never sent.
        (HookAgent::GeminiCli, Answer::NoDecision | Answer::Decide(Verdict::Allow, _)) => {
            json!({})
        }
        // `ask`: its own confirmation shows `systemMessage`; `deny`: the model reads
        // `reason`.
        (HookAgent::GeminiCli, Answer::Decide(verdict, reason)) => json!({
            "decision": verdict.name(),
            "reason": reason,
            "systemMessage": reason,
        }),
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
        assert_eq!(claude_mode("auto"), Some(Mode::Auto));
        assert_eq!(claude_mode("someFutureMode"), None);
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
        // A folder that is gone counts from the nearest one that is there.
        assert_eq!(project_of(&root.join("p/a/gone/deeper")), root.join("p/a"));
    }
}
