//! `decode run` (README): the agent headless on one prompt, streaming the
//! model's text and the tool activity to stdout (`--json`: one loop event a line).
//! `decode sessions` lists the saved sessions to resume.
//!
//! Asks are answered on the terminal when stdin and stderr are terminals (y/a/n);
//! otherwise they are denied, and the model and the person are told how to allow such
//! a call (the rule to add, or the `--mode` to use).
//!
//! Exit codes: 0 the model finished; 1 the provider failed; 2 a usage or setup error
//! (unknown agent, mode or provider, malformed config, missing key or script); 3 a
//! required step was denied — the last model turn that called tools had a denied call
//! and no later call ran, so the model could not get around it; 4 the turn limit was
//! reached; 130 stopped with Ctrl-C.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use crate::terminal::TerminalSurface;
use decode_core::dirs::Dirs;
use decode_engine::agent_loop::{LoopEvent, Outcome};
use decode_engine::chat::ChatSetup;
use decode_engine::session::SessionStore;
use decode_engine::workbench::Project;
use decode_policy::Verdict;
use decode_protocol::title::call_title;
use serde_json::json;

use crate::cli::{RunArgs, SessionsArgs};
use crate::output;

pub fn run(args: RunArgs, dirs: &Dirs) -> ExitCode {
    let overrides = match args.provider.overrides(args.max_turns) {
        Ok(o) => o,
        Err(line) => return output::usage_error(&line),
    };
    let bench = match super::open_workbench(
        args.project.as_deref(),
        args.resume.as_deref(),
        &args.select,
        overrides,
        dirs,
    ) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let project = bench.project();
    if let ChatSetup::Missing { cause, .. } = bench.chat_setup() {
        return output::usage_error(&format!("decode: {cause}"));
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            output::err(&format!("decode: cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    // Asks are answered on the terminal when there is one (the decision channel's one
    // surface here), denied with the reason when there is not.
    let _terminal = crate::terminal::answer_channel(
        project.chat.decisions(),
        TerminalSurface::for_cli(),
        runtime.handle().clone(),
    );
    let chat = Arc::clone(&project.chat);
    let (session_id, earlier) = match runtime.block_on(chat.open_session()) {
        Ok(s) => s,
        Err(e) => {
            output::err(&format!("decode: {e}"));
            return ExitCode::FAILURE;
        }
    };
    announce(&args, &session_id, &project, earlier);

    // The project's MCP servers (docs/mcp.md): started before the first turn; those
    // that cannot be used are named.
    let hub = Arc::clone(chat.mcp());
    for p in hub.problems() {
        output::err(&format!("decode: warning: {p}"));
    }
    let started = runtime.block_on(async {
        tokio::select! {
            _ = hub.ensure_started() => true,
            _ = tokio::signal::ctrl_c() => false,
        }
    });
    if !started {
        return ExitCode::from(130);
    }
    for server in hub.servers() {
        use decode_engine::mcp::Status;
        if server.status != Status::Ready {
            output::err(&format!(
                "decode: MCP server `{}` is not used: {}",
                server.name,
                decode_core::display::one_line(
                    server.detail.as_deref().unwrap_or(server.status.name())
                )
            ));
        }
    }

    let printer = Arc::new(Mutex::new(Printer::new(args.json)));
    let sink_printer = Arc::clone(&printer);
    let sink = Arc::new(move |e: &LoopEvent| {
        sink_printer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .print(e);
    });
    let prompt = args.prompt.clone().filter(|p| !p.trim().is_empty());
    let turn = match chat.start_turn(prompt, sink) {
        Ok(t) => t,
        Err(e) => {
            output::err(&format!("decode: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let stopper = Arc::clone(&chat);
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stopper.stop();
            }
        });
        let outcome = turn.await;
        watcher.abort();
        hub.shutdown().await;
        outcome
    });
    drop(project);
    drop(chat);
    drop(bench);
    runtime.shutdown_background();

    printer
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .finish(outcome, &session_id);
    ExitCode::from(outcome.exit_code())
}

/// The first lines: which session, model, agent and mode (stderr; JSON on stdout with
/// `--json`).
fn announce(args: &RunArgs, session: &str, project: &Project, earlier: usize) {
    let state = &project.active;
    let snap = state.snapshot();
    let status = project.chat.status();
    let provider = status.provider.unwrap_or_default();
    let model = status.model.unwrap_or_default();
    if args.json {
        let line = json!({
            "type": "session",
            "id": session,
            "project": state.project_root(),
            "provider": provider,
            "model": model,
            "agent": snap.agent,
            "mode": snap.mode,
            "resumed": args.resume.is_some(),
            "sandbox": decode_engine::sandbox::problem().is_none(),
        });
        output::json(&line.to_string());
        return;
    }
    let what = if args.resume.is_some() {
        format!("resuming session {session} ({earlier} earlier messages)")
    } else {
        format!("session {session}")
    };
    let sandbox = decode_engine::sandbox::problem();
    output::err(&format!(
        "decode: {what} · {provider}/{model} · agent {} · mode {} · {}",
        snap.agent,
        snap.mode,
        if sandbox.is_some() {
            "NO SANDBOX"
        } else {
            "sandboxed"
        }
    ));
    if let Some(p) = sandbox {
        output::err(&format!("decode: warning: {p}"));
    }
    for problem in state.instruction_problems() {
        output::err(&format!("decode: warning: {problem}"));
    }
}

/// Prints loop events for people (or as JSON lines).
struct Printer {
    json: bool,
    /// Whether stdout is at the start of a line.
    at_line_start: bool,
}

fn one_line(s: &str, max: usize) -> String {
    let s = s.lines().next().unwrap_or("").trim();
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s.to_string()
    }
}

/// The lines a tool step prints: the call with its verdict, an image, the result.
fn step_lines(event: &LoopEvent) -> Vec<String> {
    let mut out = Vec::new();
    match event {
        LoopEvent::ToolCallStarted {
            name,
            input,
            decision,
            ..
        } => {
            let subject = match call_title(name, input) {
                t if name == "bash" && !t.is_empty() => format!("$ {t}"),
                t => t,
            };
            let verdict = match decision {
                Some(d) if d.verdict == Verdict::Allow => String::new(),
                Some(d) => format!("  [{}: {}]", d.verdict, d.reason),
                None => String::new(),
            };
            let head = if subject.is_empty() {
                format!("→ {name}")
            } else {
                format!("→ {name} {subject}")
            };
            out.push(format!("{head}{verdict}"));
        }
        LoopEvent::ToolImage {
            mime_type, data, ..
        } => out.push(format!(
            "  [image: {}, {} KB — shown in the window]",
            decode_core::display::one_line(mime_type),
            (data.len() * 3 / 4).div_ceil(1024)
        )),
        LoopEvent::ToolResult {
            content,
            is_error,
            note,
            diff,
            ..
        } => {
            if *is_error {
                for (i, l) in content.lines().enumerate() {
                    out.push(format!("  {} {l}", if i == 0 { "✗" } else { " " }));
                }
            } else {
                let lines = content.lines().count();
                let more = if lines > 1 {
                    format!(" (+{} more lines)", lines - 1)
                } else {
                    String::new()
                };
                out.push(format!("  ✓ {}{more}", one_line(content, 120)));
            }
            if let Some(diff) = diff {
                out.extend(
                    diff.lines()
                        .filter(|l| {
                            (l.starts_with('+') || l.starts_with('-'))
                                && !l.starts_with("+++")
                                && !l.starts_with("---")
                        })
                        .map(|l| format!("    {l}")),
                );
            }
            if let Some(note) = note {
                out.push(format!("  note: {note}"));
            }
        }
        _ => {}
    }
    out
}

/// The lines a subagent's step prints (its text once its turn is complete, not
/// word by word: several subagents may run at once).
fn subagent_lines(event: &LoopEvent) -> Vec<String> {
    match event {
        LoopEvent::AssistantMessage { text, .. } => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect(),
        LoopEvent::Notice { text } => vec![format!("note: {}", one_line(text, 200))],
        LoopEvent::Error { message, .. } => vec![format!("error: {}", one_line(message, 200))],
        LoopEvent::Done { outcome, turns } => {
            vec![format!("done ({outcome:?}, {turns} model turns)").to_lowercase()]
        }
        _ => step_lines(event),
    }
}

impl Printer {
    fn new(json: bool) -> Printer {
        Printer {
            json,
            at_line_start: true,
        }
    }

    fn write(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        // The model's text never reaches the terminal raw.
        let text = decode_core::display::sanitize(text);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        self.at_line_start = text.ends_with('\n');
    }

    fn line(&mut self, text: &str) {
        if !self.at_line_start {
            self.write("\n");
        }
        self.write(&format!("{text}\n"));
    }

    fn print(&mut self, event: &LoopEvent) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                output::json(&line);
            }
            return;
        }
        match event {
            LoopEvent::TextDelta { text } => self.write(text),
            LoopEvent::ToolCallStarted { .. }
            | LoopEvent::ToolImage { .. }
            | LoopEvent::ToolResult { .. } => {
                for l in step_lines(event) {
                    self.line(&l);
                }
            }
            LoopEvent::Notice { text } => {
                if !self.at_line_start {
                    self.write("\n");
                }
                output::err(&format!("decode: note: {text}"));
            }
            LoopEvent::Error { message, .. } => {
                if !self.at_line_start {
                    self.write("\n");
                }
                output::err(&format!("decode: {message}"));
            }
            LoopEvent::Subagent { agent, event, .. } => {
                // A subagent's steps, indented under its `task` call, a whole line at
                // a time (several may run at once).
                let prefix = format!("  {} │ ", decode_core::display::one_line(agent));
                for l in subagent_lines(event) {
                    self.line(&format!("{prefix}{l}"));
                }
            }
            LoopEvent::ToolProgress { .. }
            | LoopEvent::UserPrompt { .. }
            | LoopEvent::TurnStart { .. }
            | LoopEvent::AssistantMessage { .. }
            | LoopEvent::TurnEnd { .. }
            | LoopEvent::Done { .. } => {}
        }
    }

    fn finish(&mut self, outcome: Outcome, session_id: &str) {
        if self.json {
            return;
        }
        if !self.at_line_start {
            self.write("\n");
        }
        match outcome {
            Outcome::Completed => {}
            Outcome::Denied => output::err(
                "decode: stopped after a denied step the model could not get around (exit 3); \
                 the denial above says how such a call can be allowed",
            ),
            Outcome::MaxTurns => output::err(&format!(
                "decode: the turn limit was reached; continue with `decode run --resume {session_id} -p …`"
            )),
            Outcome::Cancelled => output::err(&format!(
                "decode: stopped; continue with `decode run --resume {session_id}`"
            )),
            Outcome::ProviderFailed => output::err(&format!(
                "decode: the session is saved; retry with `decode run --resume {session_id}`"
            )),
        }
    }
}

/// `decode sessions`: the saved sessions, most recent first.
pub fn sessions(args: SessionsArgs, dirs: &Dirs) -> ExitCode {
    let store = SessionStore::new(&dirs.data);
    let list = store.list();
    if args.json {
        output::json(&serde_json::to_string(&list).unwrap_or_else(|_| "[]".into()));
        return ExitCode::SUCCESS;
    }
    if list.is_empty() {
        output::out(&format!("no sessions yet in {}", store.dir().display()));
        return ExitCode::SUCCESS;
    }
    for s in list {
        output::out(&format!(
            "{}  {}  {}",
            s.id,
            s.project.display(),
            if s.first_prompt.is_empty() {
                "(no prompt)".to_string()
            } else {
                s.first_prompt
            }
        ));
    }
    ExitCode::SUCCESS
}
