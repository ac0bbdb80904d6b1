//! `decode check` (SPEC §10): the gate's verdict, reason and trace for one call, or a
//! stream of calls with `--batch`. Never runs anything.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_core::state::{parse_mode, ActiveState};
use decode_policy::{Call, Decision, Mode, Tool};
use serde::Deserialize;

use super::{open_state, tool_from_name};
use crate::cli::CheckArgs;
use crate::output;

pub fn run(args: CheckArgs, dirs: &Dirs) -> ExitCode {
    // Usage errors first, so they are the only line on stderr.
    let single = match (&args.tool, &args.subject) {
        _ if args.batch => None,
        (Some(tool), Some(subject)) => match tool_from_name(tool) {
            Ok(t) => Some((t, subject.as_str())),
            Err(line) => return output::usage_error(&line),
        },
        _ => return output::usage_error("decode: check needs a TOOL and a SUBJECT (or --batch)"),
    };
    let state = match open_state(args.project.as_deref(), &args.select, dirs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let Some((tool, subject)) = single else {
        return batch(
            &state,
            args.select.agent.as_deref(),
            args.select.mode.is_some(),
        );
    };
    let decision = state.decide(&Call::new(tool, subject));
    if args.json {
        match serde_json::to_string(&decision) {
            Ok(json) => output::out(&json),
            Err(e) => {
                output::err(&format!("decode: could not encode the verdict: {e}"));
                return ExitCode::FAILURE;
            }
        }
    } else {
        output::out(&human(&decision, tool, subject, &state));
    }
    ExitCode::SUCCESS
}

/// The readable form: verdict and reason first, then the trace and the fragments.
pub fn human(decision: &Decision, tool: Tool, subject: &str, state: &ActiveState) -> String {
    let mut s = format!("{}: {}\n", decision.verdict.name(), decision.reason);
    let agent = state.agent();
    s.push_str(&format!(
        "  call: {}({})   mode: {}   agent: {}\n",
        tool.name(),
        subject,
        state.mode(),
        agent.name
    ));
    if !decision.trace.is_empty() {
        s.push_str("  trace:\n");
        let width = decision
            .trace
            .iter()
            .map(|t| t.stage.len())
            .max()
            .unwrap_or(0);
        for (i, step) in decision.trace.iter().enumerate() {
            s.push_str(&format!(
                "    {}. {:width$}  {}\n",
                i + 1,
                step.stage,
                step.result
            ));
        }
    }
    if !decision.fragments.is_empty() {
        s.push_str("  fragments:\n");
        for f in &decision.fragments {
            let mut line = format!("    {:5}  {}", f.verdict.name(), f.text);
            if let Some(rule) = &f.rule {
                line.push_str(&format!("   [rule {rule}]"));
            }
            if let Some(cap) = &f.cap {
                line.push_str(&format!("   [cap: {cap}]"));
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
    if decision.capped {
        s.push_str("  capped: only \"allow once\" is offered\n");
    } else if !decision.always_allow_rules.is_empty() {
        s.push_str(&format!(
            "  always allow would save: {}\n",
            decision.always_allow_rules.join(", ")
        ));
    }
    s.trim_end().to_string()
}

/// One line of `--batch` input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    tool: String,
    #[serde(default)]
    subject: String,
    mode: Option<String>,
    agent: Option<String>,
}

/// JSON lines in, one JSON verdict a line out. A bad line gets `{"error": "..."}` on
/// its own line and the stream goes on.
fn batch(state: &ActiveState, base_agent: Option<&str>, mode_given: bool) -> ExitCode {
    let base_agent = base_agent
        .map(str::to_string)
        .unwrap_or_else(|| state.agent().name);
    let base_mode = state.mode();
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                output::err(&format!("decode: could not read stdin: {e}"));
                return ExitCode::FAILURE;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = match batch_one(state, &line, &base_agent, base_mode, mode_given) {
            Ok(decision) => serde_json::to_string(&decision),
            Err(message) => serde_json::to_string(&serde_json::json!({
                "error": format!("line {}: {message}", n + 1)
            })),
        };
        let written = match answer {
            Ok(json) => writeln!(out, "{json}").and_then(|_| out.flush()),
            Err(e) => writeln!(out, "{{\"error\":\"could not encode: {e}\"}}"),
        };
        if written.is_err() {
            // The reader went away: stop quietly.
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
}

fn batch_one(
    state: &ActiveState,
    line: &str,
    base_agent: &str,
    base_mode: Mode,
    mode_given: bool,
) -> Result<Decision, String> {
    let req: BatchLine =
        serde_json::from_str(line).map_err(|e| format!("not a valid request: {e}"))?;
    let tool =
        tool_from_name(&req.tool).map_err(|l| l.trim_start_matches("decode: ").to_string())?;
    let agent = req.agent.as_deref().unwrap_or(base_agent);
    if state.agent().name != agent {
        state.select_agent(agent).map_err(|e| e.to_string())?;
    }
    let mode = match (&req.mode, &req.agent) {
        (Some(m), _) => parse_mode(m).map_err(|e| e.to_string())?,
        // A line naming its agent gets that agent's default mode, like `--agent` alone.
        (None, Some(_)) => state.agent().effective_default_mode(state.trusted()),
        (None, None) if mode_given || agent == base_agent => base_mode,
        (None, None) => state.agent().effective_default_mode(state.trusted()),
    };
    state.set_mode(mode);
    Ok(state.decide(&Call::new(tool, req.subject)))
}
