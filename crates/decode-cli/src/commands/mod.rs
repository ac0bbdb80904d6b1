//! The window-less subcommands (README, "Command line"). Each is a thin adapter: parse, call
//! `decode-core` / `decode-policy`, print.

pub mod agents;
pub mod check;
pub mod doctor;
pub mod hook;
pub mod hook_setup;
pub mod key;
pub mod mcp;
pub mod run;
pub mod settings;
pub mod tool;
pub mod trust;
pub mod undo;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_core::state::{parse_mode, ActiveState};
use decode_policy::Tool;

use crate::cli::SelectArgs;
use crate::output;

/// Resolves a project folder argument (default: the current directory).
pub fn project_dir(arg: Option<&Path>) -> Result<PathBuf, String> {
    let raw = match arg {
        Some(p) => p.to_path_buf(),
        None => {
            std::env::current_dir().map_err(|e| format!("decode: no current directory: {e}"))?
        }
    };
    match std::fs::canonicalize(&raw) {
        Ok(p) if p.is_dir() => Ok(p),
        Ok(_) => Err(format!("decode: {} is not a folder", raw.display())),
        Err(e) => Err(format!("decode: cannot open {}: {e}", raw.display())),
    }
}

/// Opens the workbench on a folder (or a saved session's folder) with the agent, mode
/// and start-up flags asked for — the window and `decode run` alike. Usage errors (a
/// bad folder or session, an unknown agent or mode) are printed as one line and become
/// exit 2; other diagnostics go to stderr and do not stop.
pub fn open_workbench(
    project: Option<&Path>,
    resume: Option<&str>,
    select: &SelectArgs,
    overrides: decode_engine::config::Overrides,
    dirs: &Dirs,
) -> Result<decode_engine::workbench::Workbench, ExitCode> {
    // A session to continue brings its folder (unless one is given).
    let project = match (project, resume) {
        (Some(p), _) => Some(project_dir(Some(p)).map_err(|l| output::usage_error(&l))?),
        (None, Some(_)) => None,
        (None, None) => Some(project_dir(None).map_err(|l| output::usage_error(&l))?),
    };
    let mode = select
        .mode
        .as_deref()
        .map(parse_mode)
        .transpose()
        .map_err(|e| output::usage_error(&format!("decode: {e}")))?;
    let target = decode_engine::workbench::Target {
        project,
        resume: resume.map(str::to_string),
        agent: select.agent.clone(),
        mode,
    };
    let (bench, diagnostics) =
        decode_engine::workbench::Workbench::open(dirs.clone(), overrides, &target)
            .map_err(|e| output::usage_error(&format!("decode: {e}")))?;
    for d in diagnostics {
        output::err(&format!("decode: warning: {d}"));
    }
    Ok(bench)
}

/// Opens the project's active state with the requested agent and mode. Usage errors
/// (bad folder, unknown agent or mode) are printed as one line and become exit 2;
/// other diagnostics (a malformed settings file, say) go to stderr and do not stop.
pub fn open_state(
    project: Option<&Path>,
    select: &SelectArgs,
    dirs: &Dirs,
) -> Result<ActiveState, ExitCode> {
    let project = project_dir(project).map_err(|l| output::usage_error(&l))?;
    let mode = select
        .mode
        .as_deref()
        .map(parse_mode)
        .transpose()
        .map_err(|e| output::usage_error(&format!("decode: {e}")))?;
    let (state, diagnostics) = ActiveState::open(
        &project,
        &dirs.home,
        &dirs.data,
        select.agent.as_deref(),
        mode,
    )
    .map_err(|e| output::usage_error(&format!("decode: {e}")))?;
    for d in diagnostics {
        output::err(&format!("decode: warning: {d}"));
    }
    Ok(state)
}

/// A tool by any accepted name, or the one-line usage error listing the tools.
pub fn tool_from_name(name: &str) -> Result<Tool, String> {
    Tool::from_name(name).ok_or_else(|| unknown_tool(name))
}

/// A call of a tool by any accepted name — a built-in tool, or an MCP tool
/// `mcp__SERVER__TOOL` whose subject is its JSON arguments — or the one-line usage
/// error listing the tools.
pub fn call_from_name(name: &str, subject: &str) -> Result<decode_policy::Call, String> {
    decode_policy::Call::by_name(name, subject).ok_or_else(|| unknown_tool(name))
}

fn unknown_tool(name: &str) -> String {
    format!(
        "decode: unknown tool `{}` (tools: {}, net for a host, or an MCP tool mcp__SERVER__TOOL)",
        decode_core::display::one_line(name),
        Tool::ALL.map(Tool::name).join(", ")
    )
}
