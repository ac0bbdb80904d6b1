//! [`call_tool`]: the one gated path every tool call takes — from the agent loop and
//! from `decode tool` alike.

use std::path::Path;

use decode_policy::{Call, Decision, Tool, ToolKind, Verdict};
use serde::Serialize;

use super::{ToolContext, ToolHandler, ToolResult};
use crate::decision::{DecisionAnswer, DecisionRequest};
use crate::settings::{append_allow_rules_to, WriteTarget};
use decode_protocol::SaveTarget;

/// What happened to one call.
#[derive(Debug, Clone, Serialize)]
pub struct CallOutcome {
    /// The gate's decision (verdict, reason, trace) — for an edited command, the
    /// decision on the command as edited.
    pub decision: Decision,
    /// The person's answer, when the gate asked (the last one, when it asked again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<DecisionAnswer>,
    /// What goes back to the model (a denial is an error result with the reason).
    pub result: ToolResult,
    /// Whether the tool actually ran.
    pub ran: bool,
    /// Something the person should see beside the result: a saved rule, or why an
    /// "always allow" could not be saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Bash: the command as the person edited it (what was judged again and run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited_command: Option<String>,
    /// Bash: the command hit a bound of the sandbox and the person was asked
    /// whether to run it again outside; their answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_outside: Option<DecisionAnswer>,
}

/// How many times one call may be edited and asked again.
const MAX_EDITS: usize = 10;

/// Runs one tool call through the gate, exactly as the agent makes it:
///
/// 1. the gate judges `handler.gate_call(&input)` in the current mode (control tools
///    pass stage 0 and are allowed);
/// 2. deny → an error result with the reason (nothing runs);
/// 3. the input is checked against the tool's shape (an error result if it does not fit);
/// 4. ask → if the rules allowed "for this session" cover the call, it runs;
///    otherwise the decision surface is asked: allow once runs it; allow for this
///    session keeps the rules in memory and runs it; always allow saves the rules to
///    `.decode/settings.json` (after checking them: they must parse, cover the call and
///    not be a wildcard over an interpreter, shell or privilege wrapper), reloads the
///    gate and runs it (if saving fails it runs once and the note says why); an edited
///    bash command replaces the input and is judged again from step 1; deny returns
///    the person's feedback; nobody to answer returns the reason and how to allow such
///    a call;
/// 5. allow → the tool runs.
pub async fn call_tool(
    handler: &dyn ToolHandler,
    input: serde_json::Value,
    ctx: &ToolContext,
) -> CallOutcome {
    let mut attempt = Attempt {
        input,
        edited: None,
        edits: 0,
    };
    let mut first = true;
    loop {
        let judged = judge(handler, ctx, &attempt).await;
        // The call's start is reported with its first verdict (an edited command is
        // judged again, and reported with its result).
        if std::mem::take(&mut first) {
            if let Some(tell) = &ctx.on_judged {
                tell(&judged.outcome.decision);
            }
        }
        match settle(handler, ctx, &mut attempt, judged).await {
            Next::Run(judged) => return run_judged(handler, ctx, attempt, judged).await,
            Next::Stop(outcome) => return outcome,
            Next::JudgeAgain => {}
        }
    }
}

/// The call as it stands: its input (with the person's edit applied), the command as
/// they edited it, and how many times they edited it.
struct Attempt {
    input: serde_json::Value,
    edited: Option<String>,
    edits: usize,
}

/// One judging of the call: what the gate saw and the outcome so far.
struct Judged {
    call: Call,
    cwd: std::path::PathBuf,
    /// The file tools' path as resolved when judged.
    path: Option<std::path::PathBuf>,
    /// web_fetch: the host and the addresses the gate judged.
    host: Option<(String, Vec<std::net::IpAddr>)>,
    outcome: CallOutcome,
}

/// Where the call goes after the gate (and perhaps the person) had their say.
enum Next {
    /// It runs as judged.
    Run(Judged),
    /// It does not run: the outcome says why.
    Stop(CallOutcome),
    /// The person edited the command: it is judged again.
    JudgeAgain,
}

/// Ends the call with `outcome`, its result the error `text`.
fn stop(mut outcome: CallOutcome, text: impl Into<String>) -> Next {
    outcome.result = ToolResult::error(text);
    Next::Stop(outcome)
}

/// Asks the gate about the call as it stands.
async fn judge(handler: &dyn ToolHandler, ctx: &ToolContext, attempt: &Attempt) -> Judged {
    let tool = handler.tool();
    let mut call = handler.gate_call(&attempt.input);
    let cwd = ctx.session.cwd();
    // web_fetch: the host is judged by its name first (a name the gate refuses or
    // asks about is never looked up), then resolved once: the gate judges its
    // addresses and the tool connects to exactly those (docs/network.md).
    let mut host = None;
    if tool == Tool::WebFetch && ctx.active.decide_in(&call, &cwd).verdict == Verdict::Allow {
        if let Some((name, resolved)) = resolve_url_host(ctx, &call.subject).await {
            call = call.with_addrs(resolved.judged);
            host = Some((name, resolved.addrs));
        }
    }
    // The file tools touch the path as resolved now or nothing (however
    // long the person takes to answer): the gate judges the call as
    // named and as that resolved path, and the stricter answer stands.
    let path = matches!(tool, Tool::Read | Tool::Write | Tool::Edit)
        .then(|| super::paths::resolve_links(&super::paths::tool_path(ctx, &call.subject)));
    let mut decision = ctx.active.decide_in(&call, &cwd);
    if let Some(r) = &path {
        let direct = ctx
            .active
            .decide_in(&Call::new(tool, r.to_string_lossy()), &cwd);
        if strictness(direct.verdict) > strictness(decision.verdict) {
            decision = direct;
        }
    }
    tracing::info!(
        tool = %call.tool_name(),
        subject = %call.subject,
        verdict = %decision.verdict,
        reason = %decision.reason,
        edited = attempt.edited.is_some(),
        "tool call judged"
    );
    let outcome = CallOutcome {
        decision,
        answer: None,
        result: ToolResult::default(),
        ran: false,
        note: None,
        edited_command: attempt.edited.clone(),
        run_outside: None,
    };
    Judged {
        call,
        cwd,
        path,
        host,
        outcome,
    }
}

/// Steps 2 to 4: a denial or an invalid input stops the call, the pre-tool hooks
/// have their say, and an ask is put to the person unless a session rule covers it.
async fn settle(
    handler: &dyn ToolHandler,
    ctx: &ToolContext,
    attempt: &mut Attempt,
    mut judged: Judged,
) -> Next {
    if judged.outcome.decision.verdict == Verdict::Deny {
        return denied_by_gate(attempt, judged.outcome);
    }
    if let Err(e) = handler.validate(&attempt.input) {
        return stop(judged.outcome, format!("invalid input: {e}"));
    }
    // The settings' pre-tool hooks may tighten the verdict (or, from the user or
    // managed settings, allow a plain ask).
    super::hooks::apply_pre(
        ctx,
        handler.tool(),
        &attempt.input,
        &mut judged.outcome.decision,
    )
    .await;
    if judged.outcome.decision.verdict == Verdict::Deny {
        return denied_by_gate(attempt, judged.outcome);
    }
    if judged.outcome.decision.verdict != Verdict::Ask {
        return Next::Run(judged);
    }
    if ctx.session_rules.allows(
        &ctx.active,
        &judged.call,
        &judged.cwd,
        &judged.outcome.decision,
    ) {
        judged.outcome.note = Some("allowed by a rule you allowed for this session".to_string());
        return Next::Run(judged);
    }
    // A call that would fail on its own terms is not put to the person.
    if let Err(e) = handler.precheck(&attempt.input, ctx) {
        return stop(judged.outcome, format!("{e} [the person was not asked]"));
    }
    ask_person(handler, ctx, attempt, judged).await
}

fn denied_by_gate(attempt: &Attempt, outcome: CallOutcome) -> Next {
    let text = with_edit_note(
        &attempt.edited,
        format!("denied by the permission gate: {}", outcome.decision.reason),
    );
    stop(outcome, text)
}

/// Puts the ask to the person and follows their answer.
async fn ask_person(
    handler: &dyn ToolHandler,
    ctx: &ToolContext,
    attempt: &mut Attempt,
    mut judged: Judged,
) -> Next {
    let request = permission_request(
        ctx,
        handler,
        &judged.call,
        &attempt.input,
        &judged.cwd,
        &judged.outcome.decision,
        attempt.edited.is_some(),
    );
    let answer = tokio::select! {
        a = ctx.decisions.ask(request) => a,
        _ = ctx.cancel.cancelled() => DecisionAnswer::Unavailable {
            reason: "the run was stopped".to_string(),
        },
    };
    judged.outcome.answer = Some(answer.clone());
    match answer {
        DecisionAnswer::AllowOnce => Next::Run(judged),
        DecisionAnswer::AllowForSession { rules } => {
            judged.outcome.note = Some(allow_for_session(
                ctx,
                &judged.call,
                &judged.cwd,
                &judged.outcome.decision,
                rules,
            ));
            Next::Run(judged)
        }
        DecisionAnswer::AlwaysAllow { rules, target } => {
            judged.outcome.note = Some(always_allow(
                ctx,
                &judged.call,
                &judged.cwd,
                &judged.outcome.decision,
                rules,
                target.unwrap_or_default(),
            ));
            Next::Run(judged)
        }
        DecisionAnswer::EditCommand { command } if handler.tool() == Tool::Bash => {
            edit_command(attempt, command, judged.outcome)
        }
        DecisionAnswer::Deny { feedback } => {
            let mut text = format!("denied by the person: {}", judged.outcome.decision.reason);
            if let Some(f) = feedback
                .map(|f| f.trim().to_string())
                .filter(|f| !f.is_empty())
            {
                text.push_str(&format!("\nTheir feedback: {f}"));
            }
            let text = with_edit_note(&attempt.edited, text);
            stop(judged.outcome, text)
        }
        DecisionAnswer::Unavailable { reason } => {
            let text = unavailable(handler, &judged.outcome.decision, &reason);
            stop(judged.outcome, text)
        }
        other => stop(
            judged.outcome,
            format!("not run: the permission ask got an answer of the wrong kind ({other:?})"),
        ),
    }
}

/// The person edited the bash command: it replaces the input, to be judged again.
fn edit_command(attempt: &mut Attempt, command: String, outcome: CallOutcome) -> Next {
    let command = command.trim().to_string();
    if command.is_empty() {
        return stop(
            outcome,
            "not run: the person cleared the command instead of editing it",
        );
    }
    attempt.edits += 1;
    if attempt.edits > MAX_EDITS {
        return stop(outcome, "not run: the command was edited too many times");
    }
    if let Some(obj) = attempt.input.as_object_mut() {
        obj.insert("command".into(), serde_json::Value::String(command.clone()));
    }
    tracing::info!(command = %command, "the person edited the command; judging it again");
    attempt.edited = Some(command);
    Next::JudgeAgain
}

/// Step 5: runs the call as judged, then offers a sandboxed command that hit a bound
/// a run outside, and lets the post-tool hooks see the result.
async fn run_judged(
    handler: &dyn ToolHandler,
    ctx: &ToolContext,
    attempt: Attempt,
    judged: Judged,
) -> CallOutcome {
    let tool = handler.tool();
    let Attempt { input, edited, .. } = attempt;
    let mut outcome = judged.outcome;
    // Only an answer to this very call lifts the bash sandbox.
    let approved_by_person = matches!(
        outcome.answer,
        Some(
            DecisionAnswer::AllowOnce
                | DecisionAnswer::AllowForSession { .. }
                | DecisionAnswer::AlwaysAllow { .. }
        )
    );
    let ctx = &ToolContext {
        judged_path: judged.path,
        approved_by_person,
        judged_host: judged.host,
        ..ctx.clone()
    };
    // What the call changes is recorded for the turn's undo (docs/checkpoints.md).
    let mut result = recorded(ctx, tool, timed(handler, &input, ctx)).await;
    // A sandboxed command that failed on a bound of the sandbox: the person is
    // asked whether to run it again outside, once (in every mode: no rule and no
    // mode lifts the sandbox).
    if let Some(bound) = result
        .bound
        .clone()
        .filter(|b| b.may_run_outside && result.sandboxed == Some(true))
    {
        let (again, note) = run_outside(handler, &input, ctx, &result, bound).await;
        outcome.run_outside = Some(note.0);
        match again {
            Some(r) => {
                outcome.note = Some(note.1);
                result = r;
            }
            None => result.content.push_str(&format!("\n[{}]", note.1)),
        }
    }
    super::hooks::apply_post(ctx, tool, &input, &outcome.decision, &mut result).await;
    if edited.is_some() {
        result.content = with_edit_note(&edited, result.content);
    }
    outcome.result = result;
    outcome.ran = true;
    outcome
}

/// Runs `execute`, recording what it changes for the turn's undo when the context has
/// a turn recorder (docs/checkpoints.md): the store's lock is held from just before
/// to just after, so another session's changes never mix in.
async fn recorded(
    ctx: &ToolContext,
    tool: Tool,
    execute: impl std::future::Future<Output = ToolResult>,
) -> ToolResult {
    let recording = match &ctx.checkpoint {
        Some(r) => {
            r.begin(tool, ctx.judged_path.as_deref(), &ctx.cancel, &ctx.progress)
                .await
        }
        None => None,
    };
    let result = execute.await;
    if let Some(r) = recording {
        r.finish(&ctx.progress).await;
    }
    result
}

/// Runs the tool and notes how long it ran.
async fn timed(
    handler: &dyn ToolHandler,
    input: &serde_json::Value,
    ctx: &ToolContext,
) -> ToolResult {
    let started = std::time::Instant::now();
    let mut result = handler.execute(input.clone(), ctx).await;
    result.duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    result
}

/// Asks the person whether a command that hit a bound of the sandbox should run
/// again outside it, and runs it when they allow it once. Returns the new result
/// (when it ran again) and the answer with a note for the person and the model.
async fn run_outside(
    handler: &dyn ToolHandler,
    input: &serde_json::Value,
    ctx: &ToolContext,
    sandboxed: &ToolResult,
    bound: decode_protocol::SandboxBound,
) -> (Option<ToolResult>, (DecisionAnswer, String)) {
    let command = input
        .get("command")
        .and_then(|c| c.as_str())
        .unwrap_or_default()
        .to_string();
    let tail: Vec<&str> = sandboxed.content.lines().rev().take(12).collect();
    let output = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    let request = DecisionRequest::RunOutside {
        command,
        cwd: ctx.session.cwd().display().to_string(),
        bound: bound.clone(),
        output,
    };
    let answer = tokio::select! {
        a = ctx.decisions.ask(request) => a,
        _ = ctx.cancel.cancelled() => DecisionAnswer::Unavailable {
            reason: "the run was stopped".to_string(),
        },
    };
    tracing::info!(bound = %bound.message, ?answer, "asked to run a command again outside the sandbox");
    match answer {
        DecisionAnswer::AllowOnce => {
            let outside = ToolContext {
                approved_by_person: true,
                ..ctx.clone()
            };
            // Recorded on its own: the store is not held while the person is asked.
            let mut r = recorded(&outside, Tool::Bash, timed(handler, input, &outside)).await;
            r.content = format!(
                "[in the sandbox it failed: {}; the person allowed it to run again outside the sandbox, once]\n{}",
                bound.message, r.content
            );
            (
                Some(r),
                (
                    DecisionAnswer::AllowOnce,
                    "ran again outside the sandbox: the person allowed it once".to_string(),
                ),
            )
        }
        DecisionAnswer::Deny { feedback } => {
            let mut text = "the person chose not to run it outside the sandbox".to_string();
            if let Some(f) = feedback
                .as_deref()
                .map(str::trim)
                .filter(|f| !f.is_empty())
            {
                text.push_str(&format!("; their feedback: {f}"));
            }
            (None, (DecisionAnswer::Deny { feedback }, text))
        }
        DecisionAnswer::Unavailable { reason } => {
            let text = format!(
                "running it again outside the sandbox needs the person's approval, and nobody can answer: {reason}"
            );
            (None, (DecisionAnswer::Unavailable { reason }, text))
        }
        other => (
            None,
            (
                other.clone(),
                format!("not run outside the sandbox: the ask got an answer of the wrong kind ({other:?}); only \"allow once\" runs it outside"),
            ),
        ),
    }
}

/// The host of a `web_fetch` URL (a name, not an address) and what it resolves
/// to; `None` for an address, a URL without a host, or a name that does not
/// resolve (the fetch then fails on its own: nothing is pinned for it).
async fn resolve_url_host(ctx: &ToolContext, url: &str) -> Option<(String, crate::net::Resolved)> {
    let u = decode_policy::normalize_url(url)?;
    let host = u.host_str()?.to_string();
    if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    let resolved = tokio::select! {
        r = ctx.resolver.resolve(&host) => r,
        _ = ctx.cancel.cancelled() => return None,
    };
    match resolved {
        Ok(r) => Some((host, r)),
        Err(e) => {
            tracing::info!(host = %host, error = %e, "web_fetch: host does not resolve");
            None
        }
    }
}

/// Deny over ask over allow.
fn strictness(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

/// Tells the model that the person changed its command, and what ran instead.
fn with_edit_note(edited: &Option<String>, text: String) -> String {
    match edited {
        Some(c) => {
            format!("[The person edited your command before it ran; the command was: {c}]\n{text}")
        }
        None => text,
    }
}

/// The permission request the person sees: the call, the gate's decision, the folder
/// a command runs in, the diff a file edit would make and a broader rule to offer.
fn permission_request(
    ctx: &ToolContext,
    handler: &dyn ToolHandler,
    call: &Call,
    input: &serde_json::Value,
    cwd: &Path,
    decision: &Decision,
    edited: bool,
) -> DecisionRequest {
    let tool = handler.tool();
    let diff = match tool.kind() {
        ToolKind::FileEdit => {
            crate::preview::preview_diff(tool, input, &ctx.project_root, ctx.active.home())
        }
        _ => None,
    };
    DecisionRequest::Permission {
        tool,
        subject: call.subject.clone(),
        intent: intent_of(input).or_else(|| ctx.intent.clone()),
        input: input.clone(),
        decision: decision.clone(),
        cwd: (tool == Tool::Bash).then(|| cwd.display().to_string()),
        diff,
        suggested_rules: crate::rule_check::suggest_broader(&ctx.active, call, cwd, decision),
        edited,
        mcp: handler.mcp_tool().map(|t| {
            Box::new(decode_protocol::McpCallInfo {
                name: t.name.clone(),
                server: t.server.clone(),
                tool: crate::mcp::results::escape_text(&t.original),
                title: t.title.clone(),
                read_only_hint: t.read_only_hint,
            })
        }),
    }
}

/// The longest intent an ask shows, in characters.
const INTENT_MAX_CHARS: usize = 300;

/// The call's own `description` (bash has one), cut to one short paragraph.
fn intent_of(input: &serde_json::Value) -> Option<String> {
    let text = input.get("description")?.as_str()?.trim();
    (!text.is_empty()).then(|| cut_chars(text, INTENT_MAX_CHARS))
}

fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The last sentence of what the agent wrote before its calls: what it said it is
/// about to do ("Let me run the tests."). None when it wrote nothing.
pub fn last_sentence(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    // The last paragraph, then its last sentence (a period, ! or ? followed by a space
    // ends one; "e.g." inside a sentence may cut it short, which only shortens it).
    let para = text.rsplit("\n\n").find(|p| !p.trim().is_empty())?.trim();
    let mut start = 0;
    let bytes = para.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?' | b'\n')
            && i + 1 < bytes.len()
            && bytes[i + 1].is_ascii_whitespace()
            && !para[i + 1..].trim().is_empty()
        {
            start = i + 1;
        }
    }
    let sentence = para[start..].trim();
    (!sentence.is_empty()).then(|| cut_chars(sentence, INTENT_MAX_CHARS))
}

/// The rules an answer carries, or the decision's exact rules when it carries none.
fn answer_rules(decision: &Decision, rules: Vec<String>) -> Vec<String> {
    if rules.iter().any(|r| !r.trim().is_empty()) {
        rules
            .into_iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect()
    } else {
        decision.always_allow_rules.clone()
    }
}

fn rule_list(v: &[String]) -> String {
    v.iter()
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Keeps the rules of an "allow for this session" in memory (after checking them) and
/// returns the note for the person.
pub(super) fn allow_for_session(
    ctx: &ToolContext,
    call: &Call,
    cwd: &Path,
    decision: &Decision,
    rules: Vec<String>,
) -> String {
    let rules = answer_rules(decision, rules);
    let check = crate::rule_check::check_rules(&ctx.active, call, cwd, decision, &rules);
    if !check.ok {
        tracing::warn!(problems = ?check.problems, "session rule refused; allowing once");
        return format!("{}; the call was allowed once", check.problems.join("; "));
    }
    ctx.session_rules.add(&rules);
    format!(
        "allowed for this session: {} (kept in memory, not saved)",
        rule_list(&rules)
    )
}

/// Saves the rules of an "always allow" (unless the call is capped or the rules do not
/// pass [`crate::rule_check::check_rules`]), reloads the gate, and returns the note for
/// the person.
pub(super) fn always_allow(
    ctx: &ToolContext,
    call: &Call,
    cwd: &Path,
    decision: &Decision,
    rules: Vec<String>,
    target: SaveTarget,
) -> String {
    if decision.capped {
        return "\"always allow\" is not offered for this call (it is capped); it was allowed once"
            .to_string();
    }
    let rules = answer_rules(decision, rules);
    if rules.is_empty() {
        return "there is no rule to save for this call; it was allowed once".to_string();
    }
    let check = crate::rule_check::check_rules(&ctx.active, call, cwd, decision, &rules);
    if !check.ok {
        tracing::warn!(problems = ?check.problems, "always-allow rule refused; allowing once");
        return format!(
            "not saved: {}; the call was allowed once",
            check.problems.join("; ")
        );
    }
    let config_dir = decode_core::levels::config_dir_for(ctx.active.home());
    let Some(file) = WriteTarget::of(target.level(), &ctx.project_root, &config_dir) else {
        return "the managed settings are not written by Decode; the call was allowed once".into();
    };
    match append_allow_rules_to(&file, &rules) {
        Ok(saved) => {
            // Remember which rules the person saved, so the settings screen can
            // mark them and revoke them (the settings file keeps its shape), and
            // so they count at once in an untrusted project. A rule that was in
            // the file already is the person's now too: they chose it.
            let chosen: Vec<String> = saved
                .added
                .iter()
                .chain(&saved.already_present)
                .cloned()
                .collect();
            let mut recorded = true;
            // The person's own file is always trusted: nothing to record.
            if let (Some(data), false) = (ctx.active.data_dir(), target == SaveTarget::User) {
                if let Err(e) = crate::projects::ProjectStore::open(data)
                    .record_always_allowed(&ctx.project_root, &chosen)
                {
                    recorded = false;
                    tracing::warn!("could not record the always-allow rules: {e}");
                }
            }
            for d in ctx.active.reload_settings() {
                tracing::warn!(diagnostic = %d, "after saving an allow rule");
            }
            let untrusted = if ctx.active.trusted() || (recorded && ctx.active.data_dir().is_some())
            {
                String::new()
            } else {
                format!(
                    " (this project is not trusted and Decode could not record the rule as yours, so it counts once the project is trusted: `decode trust {}`)",
                    ctx.project_root.display()
                )
            };
            let text = if saved.added.is_empty() {
                format!(
                    "{} already in {}",
                    rule_list(&saved.already_present),
                    saved.path.display()
                )
            } else {
                format!(
                    "saved the allow rule{} {} to {}",
                    if saved.added.len() == 1 { "" } else { "s" },
                    rule_list(&saved.added),
                    saved.path.display()
                )
            };
            text + &untrusted
        }
        Err(e) => {
            tracing::warn!(error = %e, "always-allow rule not saved; allowing once");
            format!("{e}; the call was allowed once")
        }
    }
}

/// The error result when nobody can answer an ask: why, and how it could be allowed.
fn unavailable(handler: &dyn ToolHandler, decision: &Decision, reason: &str) -> String {
    let mut text = format!(
        "not run: this call needs the person's approval ({}) and nobody can answer: {reason}.",
        decision.reason
    );
    if decision.capped {
        let cap = decision
            .fragments
            .iter()
            .find_map(|f| f.cap)
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        text.push_str(&format!(
            " The call is capped{cap}: no rule allows it automatically, so only a person can allow it, once."
        ));
        return text;
    }
    let mut ways = Vec::new();
    if !decision.always_allow_rules.is_empty() {
        ways.push(format!(
            "add {} to permissions.allow in .decode/settings.json",
            decision
                .always_allow_rules
                .iter()
                .map(|r| format!("\"{r}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match (handler.tool(), handler.tool().kind()) {
        (Tool::Mcp, _) => {
            if let Some(t) = handler.mcp_tool() {
                ways.push(format!(
                    "if it only reads, mark it read-only in your own settings (`\"mcp\": {{\"{}\": {{\"readOnlyTools\": [\"{}\"]}}}}` in ~/.config/decode/settings.json)",
                    t.server,
                    decode_policy::McpName::parse(&t.name)
                        .map(|n| n.tool().to_string())
                        .unwrap_or_default()
                ));
            }
        }
        (_, ToolKind::FileEdit) => ways.push("use edit mode".to_string()),
        (_, ToolKind::Other) => ways.push("use auto mode".to_string()),
        _ => {}
    }
    if !ways.is_empty() {
        text.push_str(&format!(" To allow it: {}.", ways.join(", or ")));
    }
    text
}
