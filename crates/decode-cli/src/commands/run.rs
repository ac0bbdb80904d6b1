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
use decode_engine::agent_loop::{AgentLoop, LoopConfig, LoopEvent, Outcome};
use decode_engine::config::{self, Config, KeyringStore, Overrides};
use decode_engine::providers::{self, ProviderKind};
use decode_engine::session::{Session, SessionStore};
use decode_policy::Verdict;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::open_state;
use crate::cli::{RunArgs, SessionsArgs};
use crate::output;

pub fn run(args: RunArgs, dirs: &Dirs) -> ExitCode {
    let config_path = Config::path_in(&dirs.config);
    let config = match Config::load(&dirs.config) {
        Ok((c, warnings)) => {
            for w in warnings {
                output::err(&format!("decode: warning: {w}"));
            }
            c
        }
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
    let provider = match args
        .provider
        .provider
        .as_deref()
        .map(str::parse::<ProviderKind>)
    {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return output::usage_error(&format!("decode: {e}")),
    };
    let overrides = Overrides {
        provider,
        model: args.provider.model.clone(),
        base_url: args.provider.base_url.clone(),
        script: args.provider.script.clone(),
        max_turns: args.max_turns,
    };

    // A resumed session brings its project (unless --project says otherwise).
    let store = SessionStore::new(&dirs.data);
    let resumed = match &args.resume {
        Some(id) => match store.open(id) {
            Ok(r) => Some(r),
            Err(e) => return output::usage_error(&format!("decode: {e}")),
        },
        None => None,
    };
    let project = args
        .project
        .clone()
        .or_else(|| resumed.as_ref().map(|r| r.session.header().project.clone()));
    let state = match open_state(project.as_deref(), &args.select, dirs) {
        Ok(s) => Arc::new(s),
        Err(code) => return code,
    };

    let env = |k: &str| std::env::var(k).ok();
    let setup = match config::resolve(&config, &overrides, &env, &KeyringStore, &config_path) {
        Ok(s) => s,
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
    let client = match providers::connect(&setup.provider) {
        Ok(c) => c,
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
    let info = client.info();

    let (session, history) = match resumed {
        Some(r) => {
            for w in &r.warnings {
                output::err(&format!("decode: warning: {w}"));
            }
            (r.session, r.messages)
        }
        None => {
            let snap = state.snapshot();
            match store.create(
                state.project_root(),
                &snap.agent,
                snap.mode.name(),
                &format!("{}/{}", info.provider, info.model),
            ) {
                Ok(s) => (s, Vec::new()),
                Err(e) => {
                    output::err(&format!("decode: {e}"));
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    announce(&args, &session, &info, &state, history.len());

    let printer = Arc::new(Mutex::new(Printer::new(args.json)));
    let sink_printer = Arc::clone(&printer);
    let sink = Arc::new(move |e: &LoopEvent| {
        sink_printer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .print(e);
    });
    let loop_config = LoopConfig {
        max_turns: setup.max_turns,
        context_tokens: setup.provider.context_tokens,
        ..LoopConfig::default()
    };
    let session_id = session.id().to_string();
    // The project's MCP servers (docs/mcp.md): started before the first turn.
    let hub = decode_engine::mcp::McpHub::open(Arc::clone(&state));
    for p in hub.problems() {
        output::err(&format!("decode: warning: {p}"));
    }
    let mut agent = AgentLoop::new(
        client,
        Arc::clone(&state),
        TerminalSurface::for_cli(),
        loop_config,
    )
    .with_history(history)
    .with_transcript(session)
    .with_sink(sink)
    .with_mcp(Arc::clone(&hub));

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
    let cancel = CancellationToken::new();
    let prompt = args.prompt.clone();
    let outcome = runtime.block_on(async {
        let c = cancel.clone();
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
            }
        });
        hub.start().await;
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
        let outcome = agent.run(prompt.as_deref(), cancel.clone()).await;
        watcher.abort();
        hub.shutdown().await;
        outcome
    });
    drop(agent);
    runtime.shutdown_background();

    printer
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .finish(outcome, &session_id);
    ExitCode::from(outcome.exit_code())
}

/// The first lines: which session, model, agent and mode (stderr; JSON on stdout with
/// `--json`).
fn announce(
    args: &RunArgs,
    session: &Session,
    info: &providers::ModelInfo,
    state: &decode_core::state::ActiveState,
    earlier: usize,
) {
    let snap = state.snapshot();
    if args.json {
        let line = json!({
            "type": "session",
            "id": session.id(),
            "project": state.project_root(),
            "provider": info.provider,
            "model": info.model,
            "agent": snap.agent,
            "mode": snap.mode,
            "resumed": args.resume.is_some(),
            "sandbox": decode_engine::sandbox::problem().is_none(),
        });
        output::json(&line.to_string());
        return;
    }
    let what = if args.resume.is_some() {
        format!(
            "resuming session {} ({earlier} earlier messages)",
            session.id()
        )
    } else {
        format!("session {}", session.id())
    };
    let sandbox = decode_engine::sandbox::problem();
    output::err(&format!(
        "decode: {what} · {}/{} · agent {} · mode {} · {}",
        info.provider,
        info.model,
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

/// What a call is about, for the activity line: the command, the path, the URL.
fn call_subject(name: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let s = match name {
        "bash" => field("command").map(|c| format!("$ {c}")),
        "read" | "write" | "edit" => field("path"),
        "glob" | "grep" => field("pattern").map(|p| match field("path") {
            Some(dir) => format!("{p} in {dir}"),
            None => p,
        }),
        "web_fetch" => field("url"),
        "ask_user" => field("question"),
        "sleep" => input.get("seconds").map(|s| format!("{s} s")),
        _ => None,
    };
    match s {
        Some(s) => one_line(&s, 160),
        None if input.is_string() => one_line(input.as_str().unwrap_or(""), 160),
        None => String::new(),
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
            LoopEvent::ToolCallStarted {
                name,
                input,
                decision,
                ..
            } => {
                let subject = call_subject(name, input);
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
                self.line(&format!("{head}{verdict}"));
            }
            LoopEvent::ToolProgress { .. } => {}
            LoopEvent::ToolImage {
                mime_type, data, ..
            } => {
                self.line(&format!(
                    "  [image: {}, {} KB — shown in the window]",
                    decode_core::display::one_line(mime_type),
                    (data.len() * 3 / 4).div_ceil(1024)
                ));
            }
            LoopEvent::ToolResult {
                content,
                is_error,
                note,
                diff,
                ..
            } => {
                if *is_error {
                    for (i, l) in content.lines().enumerate() {
                        self.line(&format!("  {} {l}", if i == 0 { "✗" } else { " " }));
                    }
                } else {
                    let lines = content.lines().count();
                    let more = if lines > 1 {
                        format!(" (+{} more lines)", lines - 1)
                    } else {
                        String::new()
                    };
                    self.line(&format!("  ✓ {}{more}", one_line(content, 120)));
                }
                if let Some(diff) = diff {
                    for l in diff.lines().filter(|l| {
                        (l.starts_with('+') || l.starts_with('-'))
                            && !l.starts_with("+++")
                            && !l.starts_with("---")
                    }) {
                        self.line(&format!("    {l}"));
                    }
                }
                if let Some(note) = note {
                    self.line(&format!("  note: {note}"));
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
            LoopEvent::UserPrompt { .. }
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
