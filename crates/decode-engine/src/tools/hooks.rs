//! Command hooks around tool calls (docs/permissions.md, "Hooks"): `preToolUse`
//! hooks see the call and the gate's verdict (Claude Code's PreToolUse JSON on stdin,
//! plus `decode_verdict`) and may tighten it — deny, or ask where the gate would
//! allow — and a hook from the user or managed settings may also allow a call the gate
//! would only ask about (never one a deny rule, an ask rule, an opaque command or a
//! cap stopped). `postToolUse` hooks run after the tool; what they print is appended
//! to the result. A hook that fails, times out or answers something that is not JSON
//! is no answer, and every hook's outcome is a step of the call's trace.
//!
//! Hooks of the user and managed settings run as the person, in the project folder.
//! A project's hooks (its shared and local files) run only in a trusted project, and
//! only inside the sandbox a `bash` call of the project gets (the same bounds, no keys
//! or tokens in the environment); where there is no sandbox they do not run, and in
//! an untrusted project they never do — the trace says which.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use decode_core::settings::HookEntry;
use decode_policy::{Decision, Level, Mode, Stage, Tool, TraceStep, Verdict};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{ToolContext, ToolResult};

/// How long a hook may run unless it says (`timeout`, seconds).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of a hook's stdout or stderr read.
const MAX_OUTPUT: u64 = 1 << 20;

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
}

impl HookEvent {
    fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
        }
    }
}

/// One hook that applies to a call, with where it comes from.
#[derive(Debug, Clone)]
pub struct Hook {
    pub level: Level,
    /// Its settings file, as reasons name it.
    pub file: String,
    pub entry: HookEntry,
}

impl Hook {
    fn describe(&self) -> String {
        format!(
            "hook `{}` from {} ({})",
            one_line(&self.entry.command),
            self.file,
            self.level
        )
    }
}

/// What one hook answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    Allow(String),
    Ask(String),
    Deny(String),
    /// It ran and said nothing about the decision (a post-tool hook's output).
    Nothing(String),
    /// It failed, timed out or answered garbage: no answer.
    Failed(String),
}

/// Claude Code's name of a tool (what its hook scripts match and read).
pub fn claude_tool_name(tool: Tool) -> &'static str {
    match tool {
        Tool::Bash => "Bash",
        Tool::Read => "Read",
        Tool::Write => "Write",
        Tool::Edit => "Edit",
        Tool::Glob => "Glob",
        Tool::Grep => "Grep",
        Tool::WebFetch => "WebFetch",
        Tool::TodoWrite => "TodoWrite",
        Tool::ExitPlanMode => "ExitPlanMode",
        other => other.name(),
    }
}

fn claude_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Default => "default",
        Mode::Edit => "acceptEdits",
        Mode::Plan => "plan",
        Mode::Auto => "auto",
        Mode::Bypass => "bypassPermissions",
    }
}

/// Whether a `matcher` names `tool`: `|`-separated globs (`*`, `?`), without regard
/// to case, against Decode's and Claude Code's names; absent, empty or `*`: every tool.
pub fn matches(matcher: Option<&str>, tool: Tool) -> bool {
    let Some(m) = matcher.map(str::trim).filter(|m| !m.is_empty()) else {
        return true;
    };
    let names = [
        tool.name().to_lowercase(),
        claude_tool_name(tool).to_lowercase(),
    ];
    m.split('|')
        .map(|p| p.trim().to_lowercase())
        .any(|p| names.iter().any(|n| wildcard(p.as_bytes(), n.as_bytes())))
}

fn wildcard(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// The hooks of `event` that apply to `tool`, managed first, then user, then (in a
/// trusted project) the project's shared and local files; and a trace note for a
/// project's hooks that are not run because the project is not trusted.
pub fn hooks_for(ctx: &ToolContext, event: HookEvent, tool: Tool) -> (Vec<Hook>, Option<String>) {
    let levels = ctx.active.levels();
    let pick = |s: &decode_core::Settings| -> Vec<HookEntry> {
        match event {
            HookEvent::PreToolUse => s.pre_tool_hooks.clone(),
            HookEvent::PostToolUse => s.post_tool_hooks.clone(),
        }
    };
    let mut out = Vec::new();
    for level in [Level::Managed, Level::User] {
        let Some(s) = levels.get(level) else { continue };
        for entry in pick(s) {
            if matches(entry.matcher.as_deref(), tool) {
                out.push(Hook {
                    level,
                    file: levels.display_path(level).display().to_string(),
                    entry,
                });
            }
        }
    }
    let project: Vec<Hook> = [
        (Level::Project, pick(&ctx.active.settings())),
        (Level::Local, pick(&levels.local)),
    ]
    .into_iter()
    .flat_map(|(level, entries)| {
        let file = levels.display_path(level).display().to_string();
        entries
            .into_iter()
            .filter(|e| matches(e.matcher.as_deref(), tool))
            .map(move |entry| Hook {
                level,
                file: file.clone(),
                entry,
            })
    })
    .collect();
    if ctx.active.trusted() {
        out.extend(project);
        return (out, None);
    }
    let n = project.len();
    let note = (n > 0).then(|| {
        format!(
            "{n} project hook{} not run: the project is not trusted (a project's hooks run only once the person trusts it)",
            if n == 1 { "" } else { "s" }
        )
    });
    (out, note)
}

/// Whether a hook comes from the project (its shared or local file): it then runs
/// only in the sandbox.
fn from_project(hook: &Hook) -> bool {
    matches!(hook.level, Level::Project | Level::Local)
}

/// The JSON a hook reads on stdin: Claude Code's shape (`tool_name` and
/// `tool_input` in its names, `file_path` beside `path`) plus Decode's own.
pub fn event_json(
    ctx: &ToolContext,
    event: HookEvent,
    tool: Tool,
    input: &Value,
    decision: &Decision,
    result: Option<&ToolResult>,
) -> Value {
    let mut tool_input = input.clone();
    if let Some(obj) = tool_input.as_object_mut() {
        if let Some(p) = obj.get("path").cloned() {
            obj.entry("file_path").or_insert(p);
        }
    }
    let mut v = json!({
        "session_id": "",
        "cwd": ctx.session.cwd().display().to_string(),
        "hook_event_name": event.name(),
        "permission_mode": claude_mode(ctx.active.mode()),
        "tool_name": claude_tool_name(tool),
        "tool_input": tool_input,
        "decode_tool": tool.name(),
        "decode_verdict": {
            "verdict": decision.verdict.name(),
            "reason": decision.reason,
            "capped": decision.capped,
        },
    });
    if let Some(r) = result {
        v["tool_response"] = json!({"content": r.content, "is_error": r.is_error});
    }
    v
}

/// Runs one hook with `stdin` and reads its answer: a user or managed hook as the
/// person, a project's hook in the project's sandbox (not at all where there is
/// none: no answer, and the reason).
pub async fn run_hook(
    ctx: &ToolContext,
    hook: &Hook,
    stdin: &str,
    cwd: &Path,
    event: HookEvent,
) -> HookAnswer {
    let timeout = hook
        .entry
        .timeout
        .filter(|t| *t > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let (child, sandbox) = if from_project(hook) {
        let dir = cwd.as_os_str();
        let extra = [("DECODE_PROJECT_DIR", dir), ("CLAUDE_PROJECT_DIR", dir)];
        match crate::tools::bash::SandboxedHook::start(ctx, &hook.entry.command, cwd, &extra).await
        {
            Ok((c, s)) => (c, Some(s)),
            Err(why) => return HookAnswer::Failed(why),
        }
    } else {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(&hook.entry.command)
            .current_dir(cwd)
            .env("DECODE_PROJECT_DIR", cwd)
            .env("CLAUDE_PROJECT_DIR", cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        match cmd.spawn() {
            Ok(c) => (c, None),
            Err(e) => return HookAnswer::Failed(format!("could not start: {e}")),
        }
    };
    let answer = wait_for(child, stdin, timeout, event).await;
    if let Some(s) = sandbox {
        for note in s.finish(ctx).await {
            tracing::info!(hook = %hook.entry.command, %note, "after a project hook");
        }
    }
    answer
}

/// Feeds `stdin` to a started hook, waits for it at most `timeout` (then kills its
/// process group) and reads its answer.
async fn wait_for(
    mut child: tokio::process::Child,
    stdin: &str,
    timeout: Duration,
    event: HookEvent,
) -> HookAnswer {
    let pid = child.id();
    let mut child_in = child.stdin.take();
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let body = stdin.to_string();
    let work = async {
        if let Some(mut i) = child_in.take() {
            // A hook that does not read its stdin is fine.
            let _ = i.write_all(body.as_bytes()).await;
            drop(i);
        }
        let read = |r: Option<tokio::process::ChildStdout>| async move {
            let mut buf = Vec::new();
            if let Some(r) = r {
                let _ = r.take(MAX_OUTPUT).read_to_end(&mut buf).await;
            }
            buf
        };
        let read_err = |r: Option<tokio::process::ChildStderr>| async move {
            let mut buf = Vec::new();
            if let Some(r) = r {
                let _ = r.take(MAX_OUTPUT).read_to_end(&mut buf).await;
            }
            buf
        };
        let (o, e, status) = tokio::join!(read(out.take()), read_err(err.take()), child.wait());
        (o, e, status)
    };
    let (stdout, stderr, status) = match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => {
            if let Some(pid) = pid {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return HookAnswer::Failed(format!("timed out after {} s", timeout.as_secs()));
        }
    };
    let stdout = String::from_utf8_lossy(&stdout).trim().to_string();
    let stderr = String::from_utf8_lossy(&stderr).trim().to_string();
    let code = match status {
        Ok(s) => s.code(),
        Err(e) => return HookAnswer::Failed(format!("could not wait for it: {e}")),
    };
    parse_answer(code, &stdout, &stderr, event)
}

/// Reads a hook's answer as Claude Code does: exit 2 blocks (the reason on stderr);
/// exit 0 may print JSON with `hookSpecificOutput.permissionDecision` (`allow`, `ask`,
/// `deny`) and `permissionDecisionReason`, or the older `decision` (`block`,
/// `approve`) and `reason`.
pub fn parse_answer(code: Option<i32>, stdout: &str, stderr: &str, event: HookEvent) -> HookAnswer {
    match code {
        Some(2) => {
            let why = if stderr.is_empty() {
                "blocked by the hook"
            } else {
                stderr
            };
            return HookAnswer::Deny(one_line(why));
        }
        Some(0) => {}
        Some(c) => {
            return HookAnswer::Failed(format!(
                "exited with status {c}{}",
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {}", one_line(stderr))
                }
            ))
        }
        None => return HookAnswer::Failed("killed by a signal".into()),
    }
    if event == HookEvent::PostToolUse {
        return HookAnswer::Nothing(stdout.to_string());
    }
    if stdout.is_empty() {
        return HookAnswer::Nothing(String::new());
    }
    let Ok(v) = serde_json::from_str::<Value>(stdout) else {
        return HookAnswer::Failed(format!(
            "answered something that is not JSON: {}",
            one_line(stdout)
        ));
    };
    let specific = v.get("hookSpecificOutput");
    let decision = specific
        .and_then(|h| h.get("permissionDecision"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            v.get("decision").and_then(Value::as_str).map(|d| match d {
                "block" => "deny".to_string(),
                "approve" => "allow".to_string(),
                other => other.to_string(),
            })
        });
    let reason = specific
        .and_then(|h| h.get("permissionDecisionReason"))
        .or_else(|| v.get("reason"))
        .and_then(Value::as_str)
        .map(one_line)
        .unwrap_or_default();
    match decision.as_deref() {
        Some("allow") => HookAnswer::Allow(reason),
        Some("ask") => HookAnswer::Ask(reason),
        Some("deny") => HookAnswer::Deny(reason),
        None => HookAnswer::Nothing(String::new()),
        Some(other) => HookAnswer::Failed(format!(
            "answered an unknown decision `{}`",
            one_line(other)
        )),
    }
}

/// Whether an ask of the gate is one a user or managed hook may turn into an allow:
/// the mode (or a partial allow) asked — not a deny or ask rule, an opaque command, a
/// cap, or a plan-mode stop.
fn liftable(decision: &Decision) -> bool {
    if decision.verdict != Verdict::Ask || decision.capped {
        return false;
    }
    let decisive = decision.trace.iter().rev().find(|t| {
        !(t.stage == Stage::Caps && t.result.starts_with("no cap")) && t.stage != Stage::Hooks
    });
    matches!(
        decisive.map(|t| t.stage),
        Some(Stage::Mode | Stage::AllowRules)
    )
}

/// Runs the pre-tool hooks of a call and applies their answers to `decision`: deny
/// wins, then ask (over an allow), then a user or managed allow of a liftable ask.
/// Every hook's outcome is added to the trace.
pub async fn apply_pre(ctx: &ToolContext, tool: Tool, input: &Value, decision: &mut Decision) {
    let (hooks, note) = hooks_for(ctx, HookEvent::PreToolUse, tool);
    if let Some(n) = note {
        decision.trace.push(TraceStep {
            stage: Stage::Hooks,
            result: n,
        });
    }
    if hooks.is_empty() {
        return;
    }
    let stdin = event_json(ctx, HookEvent::PreToolUse, tool, input, decision, None).to_string();
    let mut deny: Option<String> = None;
    let mut ask: Option<String> = None;
    let mut allow: Option<String> = None;
    for hook in &hooks {
        let answer = run_hook(ctx, hook, &stdin, &ctx.project_root, HookEvent::PreToolUse).await;
        let who = hook.describe();
        let with = |r: &str| {
            if r.is_empty() {
                String::new()
            } else {
                format!(": {r}")
            }
        };
        let step = match &answer {
            HookAnswer::Deny(r) => {
                deny.get_or_insert(format!("denied by {who}{}", with(r)));
                format!("{who}: deny{}", with(r))
            }
            HookAnswer::Ask(r) => {
                ask.get_or_insert(format!("asks by {who}{}", with(r)));
                format!("{who}: ask{}", with(r))
            }
            HookAnswer::Allow(r) if matches!(hook.level, Level::User | Level::Managed) => {
                allow.get_or_insert(format!("allowed by {who}{}", with(r)));
                format!("{who}: allow{}", with(r))
            }
            HookAnswer::Allow(r) => format!(
                "{who}: allow{} (ignored: only user and managed hooks may allow)",
                with(r)
            ),
            HookAnswer::Nothing(_) => format!("{who}: no answer"),
            HookAnswer::Failed(why) => {
                tracing::warn!(hook = %hook.entry.command, %why, "hook failed: no answer");
                format!("{who}: {why}: no answer")
            }
        };
        decision.trace.push(TraceStep {
            stage: Stage::Hooks,
            result: step,
        });
        if deny.is_some() {
            break;
        }
    }
    if let Some(reason) = deny {
        decision.verdict = Verdict::Deny;
        decision.reason = reason;
    } else if let Some(reason) = ask.filter(|_| decision.verdict == Verdict::Allow) {
        decision.verdict = Verdict::Ask;
        decision.reason = reason;
    } else if let Some(reason) = allow {
        if liftable(decision) {
            decision.verdict = Verdict::Allow;
            decision.reason = reason;
        } else if decision.verdict == Verdict::Ask {
            decision.trace.push(TraceStep {
                stage: Stage::Hooks,
                result:
                    "a hook's allow does not lift a deny or ask rule, an opaque command or a cap"
                        .into(),
            });
        }
    }
}

/// Runs the post-tool hooks of a call that ran and appends what they print to the
/// result (a failing hook is named there too).
pub async fn apply_post(
    ctx: &ToolContext,
    tool: Tool,
    input: &Value,
    decision: &Decision,
    result: &mut ToolResult,
) {
    let (hooks, _) = hooks_for(ctx, HookEvent::PostToolUse, tool);
    if hooks.is_empty() {
        return;
    }
    let stdin = event_json(
        ctx,
        HookEvent::PostToolUse,
        tool,
        input,
        decision,
        Some(result),
    )
    .to_string();
    for hook in &hooks {
        match run_hook(ctx, hook, &stdin, &ctx.project_root, HookEvent::PostToolUse).await {
            HookAnswer::Nothing(out) if !out.is_empty() => {
                result
                    .content
                    .push_str(&format!("\n[{}]\n{out}", hook.describe()));
            }
            HookAnswer::Failed(why) | HookAnswer::Deny(why) => {
                result
                    .content
                    .push_str(&format!("\n[{}: {why}]", hook.describe()));
            }
            _ => {}
        }
    }
}

fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_take_either_name_and_globs() {
        assert!(matches(None, Tool::Bash));
        assert!(matches(Some("*"), Tool::Read));
        assert!(matches(Some("bash|edit|mcp__*"), Tool::Bash));
        assert!(matches(Some("Bash"), Tool::Bash));
        assert!(matches(Some("Write|Edit"), Tool::Edit));
        assert!(matches(Some("web*"), Tool::WebFetch));
        assert!(!matches(Some("bash|edit"), Tool::Write));
        assert!(!matches(Some("Bas"), Tool::Bash));
    }

    #[test]
    fn answers_are_read_as_claude_code_writes_them() {
        let pre = HookEvent::PreToolUse;
        assert_eq!(
            parse_answer(Some(2), "", "no curl here", pre),
            HookAnswer::Deny("no curl here".into())
        );
        let j = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "check it"}}"#;
        assert_eq!(
            parse_answer(Some(0), j, "", pre),
            HookAnswer::Ask("check it".into())
        );
        assert_eq!(
            parse_answer(Some(0), r#"{"decision": "block", "reason": "no"}"#, "", pre),
            HookAnswer::Deny("no".into())
        );
        assert_eq!(
            parse_answer(Some(0), r#"{"decision": "approve"}"#, "", pre),
            HookAnswer::Allow(String::new())
        );
        assert_eq!(
            parse_answer(Some(0), "", "", pre),
            HookAnswer::Nothing(String::new())
        );
        assert!(
            matches!(parse_answer(Some(0), "garbage{", "", pre), HookAnswer::Failed(m) if m.contains("not JSON"))
        );
        assert!(
            matches!(parse_answer(Some(1), "", "boom", pre), HookAnswer::Failed(m) if m.contains("status 1"))
        );
        assert!(matches!(
            parse_answer(None, "", "", pre),
            HookAnswer::Failed(_)
        ));
        assert!(matches!(
            parse_answer(
                Some(0),
                r#"{"hookSpecificOutput": {"permissionDecision": "maybe"}}"#,
                "",
                pre
            ),
            HookAnswer::Failed(_)
        ));
    }
}
