//! `decode tool` (README, "Command line"): one tool call through the gate, exactly as the agent
//! makes it (`decode_engine::tools::call_tool`). An ask is answered on the terminal when
//! there is one and denied when there is not. Prints the tool's result (and diff).
//!
//! Exit codes: 0 the tool ran without error; 1 the tool failed or the call was denied;
//! 2 a usage error (unknown tool, agent or mode; input that is not a JSON object or
//! does not fit the tool), with one line on stderr.

use std::process::ExitCode;
use std::sync::Arc;

use decode_core::dirs::Dirs;
use decode_engine::tools::{self, call_tool, SessionState, ToolContext};

use crate::terminal::TerminalSurface;
use serde_json::{json, Value};

use super::{open_state, tool_from_name};
use crate::cli::ToolArgs;
use crate::output;

pub fn run(args: ToolArgs, dirs: &Dirs) -> ExitCode {
    // Usage errors first, so each is the only line on stderr.
    let mcp = decode_policy::McpName::parse(args.tool.trim());
    let tool = match (&mcp, tool_from_name(&args.tool)) {
        (_, Ok(t)) => t,
        (Some(_), Err(_)) => decode_policy::Tool::Mcp,
        (None, Err(line)) => return output::usage_error(&line),
    };
    let tool_name = mcp
        .as_ref()
        .map_or_else(|| tool.to_string(), |n| n.to_string());
    let input: Value = match serde_json::from_str(&args.input) {
        Ok(v) => v,
        Err(e) => {
            return output::usage_error(&format!(
                "decode: the input of {tool_name} is not valid JSON ({e}); give an object such as '{{\"path\":\"README.md\"}}'"
            ))
        }
    };
    if !input.is_object() {
        return output::usage_error(&format!(
            "decode: the input of {tool_name} must be a JSON object, such as '{{\"path\":\"README.md\"}}'"
        ));
    }
    let handler = tools::handler(tool);
    if mcp.is_none() {
        if let Err(e) = handler.validate(&input) {
            return output::usage_error(&format!("decode: {e}"));
        }
    }
    let state = match open_state(args.project.as_deref(), &args.select, dirs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            output::err(&format!("decode: cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };

    let active = Arc::new(state);
    // An MCP tool: its server is started (as the agent loop would have it), the call
    // goes through the same gated path, and the server is stopped afterwards.
    let (handler, hub) = match &mcp {
        None => (handler, None),
        Some(name) => {
            let hub = decode_engine::mcp::McpHub::open(Arc::clone(&active));
            for p in hub.problems() {
                output::err(&format!("decode: warning: {p}"));
            }
            let started = runtime.block_on(hub.start_one(name.server()));
            if let Err(e) = started {
                output::err(&format!(
                    "decode: MCP server `{}` cannot be used: {}",
                    name.server(),
                    decode_core::display::one_line(&e)
                ));
                return ExitCode::FAILURE;
            }
            match hub.handler(name.as_str()) {
                Some(h) => (h, Some(hub)),
                None => {
                    runtime.block_on(hub.shutdown());
                    return output::usage_error(&format!(
                        "decode: MCP server `{}` has no tool `{}` (`decode mcp tools {}` lists them)",
                        name.server(),
                        name.tool(),
                        name.server()
                    ));
                }
            }
        }
    };
    // One call, no conversation before it: nothing could have been read earlier.
    let session = Arc::new(SessionState::one_shot(active.project_root()));
    let ctx = ToolContext::new(active, TerminalSurface::for_cli()).with_session(session);
    let cancel = ctx.cancel.clone();
    let outcome = runtime.block_on(async {
        // Ctrl-C stops the call (and every process a bash command started).
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        let outcome = call_tool(handler.as_ref(), input, &ctx).await;
        watcher.abort();
        if let Some(hub) = &hub {
            hub.shutdown().await;
        }
        outcome
    });

    if let Some(note) = &outcome.note {
        output::err(&format!("decode: {note}"));
    }
    let ok = outcome.ran && !outcome.result.is_error;
    if args.json {
        let mut v = json!({
            "verdict": outcome.decision.verdict,
            "result": outcome.result.content,
            "is_error": outcome.result.is_error,
        });
        if let Some(answer) = &outcome.answer {
            v["answer"] = json!(answer);
        }
        output::json(&v.to_string());
    } else if outcome.ran {
        output::out(&outcome.result.content);
        if let Some(diff) = &outcome.result.diff {
            output::out(&format!("\n{}", diff.trim_end()));
        }
    } else {
        output::err(&format!("decode: {}", outcome.result.content));
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
