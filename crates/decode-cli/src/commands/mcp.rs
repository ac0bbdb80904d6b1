//! `decode mcp list|tools|add|remove|approve|refuse|key` (docs/mcp.md): the MCP
//! servers of a project — the person's `~/.config/decode/mcp.json` and the project's
//! `.decode/mcp.json` / `.mcp.json`.
//!
//! Exit codes: 0 done; 1 a server failed or a file could not be written; 2 a usage
//! error (bad name, unknown server, bad `KEY=VALUE`), with one line on stderr.
//! Names, command lines, descriptions and errors from the files and the servers are
//! printed escaped (they are hostile input).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;

use decode_core::dirs::Dirs;
use decode_core::display::{one_line, sanitize};
use decode_engine::mcp::{config, McpHub, Scope, ServerInfo, Status};
use serde_json::{json, Value};

use super::{open_state, project_dir};
use crate::cli::{KeyAction, McpAction, McpArgs, McpScope, McpTransport, SelectArgs};
use crate::output;

pub fn run(args: McpArgs, dirs: &Dirs) -> ExitCode {
    match args.action {
        McpAction::List { project, json } => list(project.as_deref(), json, dirs),
        McpAction::Tools {
            project,
            json,
            server,
        } => tools(project.as_deref(), json, server.as_deref(), dirs),
        McpAction::Add {
            project,
            scope,
            transport,
            env,
            header,
            timeout,
            name,
            command_or_url,
            args,
        } => add(
            project.as_deref(),
            scope,
            transport,
            &env,
            &header,
            timeout,
            &name,
            &command_or_url,
            &args,
            dirs,
        ),
        McpAction::Remove {
            project,
            scope,
            name,
        } => remove(project.as_deref(), scope, &name, dirs),
        McpAction::Approve { project, name } => answer(project.as_deref(), &name, true, dirs),
        McpAction::Refuse { project, name } => answer(project.as_deref(), &name, false, dirs),
        McpAction::Key { action } => key(action),
    }
}

fn hub(project: Option<&std::path::Path>, dirs: &Dirs) -> Result<Arc<McpHub>, ExitCode> {
    let state = open_state(project, &SelectArgs::default(), dirs)?;
    let hub = McpHub::open_with(Arc::new(state), &dirs.config);
    for p in hub.problems() {
        output::err(&format!("decode: warning: {}", one_line(p)));
    }
    Ok(hub)
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            output::err(&format!("decode: cannot start the async runtime: {e}"));
            ExitCode::FAILURE
        })
}

fn server_line(s: &ServerInfo) -> String {
    let mut line = format!(
        "{}  [{}, {}]  {}",
        one_line(&s.name),
        s.scope,
        s.status.name(),
        one_line(&s.command_line)
    );
    if let Some(d) = &s.detail {
        line.push_str(&format!("\n    {}", one_line(d)));
    }
    line
}

fn list(project: Option<&std::path::Path>, json: bool, dirs: &Dirs) -> ExitCode {
    let hub = match hub(project, dirs) {
        Ok(h) => h,
        Err(c) => return c,
    };
    let servers = hub.servers();
    if json {
        output::json(&json!({"servers": servers, "problems": hub.problems()}).to_string());
        return ExitCode::SUCCESS;
    }
    if servers.is_empty() {
        output::out(
            "no MCP servers are configured (`decode mcp add NAME -- COMMAND [ARGS…]` adds one)",
        );
    }
    for s in &servers {
        output::out(&server_line(s));
    }
    ExitCode::SUCCESS
}

fn tools(
    project: Option<&std::path::Path>,
    json: bool,
    server: Option<&str>,
    dirs: &Dirs,
) -> ExitCode {
    let hub = match hub(project, dirs) {
        Ok(h) => h,
        Err(c) => return c,
    };
    let rt = match runtime() {
        Ok(r) => r,
        Err(c) => return c,
    };
    let mut failed = false;
    rt.block_on(async {
        match server {
            Some(name) => {
                if let Err(e) = hub.start_one(name).await {
                    output::err(&format!(
                        "decode: MCP server `{}`: {}",
                        one_line(name),
                        one_line(&e)
                    ));
                    failed = true;
                }
            }
            None => hub.start().await,
        }
    });
    let servers: Vec<ServerInfo> = hub
        .servers()
        .into_iter()
        .filter(|s| server.is_none_or(|n| s.name.eq_ignore_ascii_case(n)))
        .collect();
    rt.block_on(hub.shutdown());
    if server.is_some() && servers.is_empty() {
        return output::usage_error(&format!(
            "decode: no MCP server `{}` is configured (`decode mcp list` shows them)",
            one_line(server.unwrap_or_default())
        ));
    }
    if json {
        output::json(&json!({ "servers": servers }).to_string());
    } else {
        for s in &servers {
            output::out(&server_line(s));
            for t in &s.tools {
                let mut marks = Vec::new();
                if t.marked_read_only {
                    marks.push("read-only (your mark)".to_string());
                }
                if let Some(h) = t.read_only_hint {
                    marks.push(format!(
                        "server says {} (not trusted)",
                        if h { "read-only" } else { "not read-only" }
                    ));
                }
                if !t.offered {
                    marks.push("not offered to the build agent".into());
                }
                let marks = if marks.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", marks.join("; "))
                };
                output::out(&format!("  {}{marks}", one_line(&t.name)));
                let d = t.description.lines().next().unwrap_or("").trim();
                if !d.is_empty() {
                    let d: String = d.chars().take(160).collect();
                    output::out(&format!("      {}", one_line(&d)));
                }
            }
        }
    }
    let any_failed = servers.iter().any(|s| s.status == Status::Failed);
    if failed || any_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[allow(clippy::too_many_arguments)]
fn add(
    project: Option<&std::path::Path>,
    scope: McpScope,
    transport: McpTransport,
    env: &[String],
    header: &[String],
    timeout: Option<u64>,
    name: &str,
    command_or_url: &str,
    args: &[String],
    dirs: &Dirs,
) -> ExitCode {
    if let Err(e) = decode_policy::mcp::check_server_name(name) {
        return output::usage_error(&format!("decode: {e}"));
    }
    let mut entry = serde_json::Map::new();
    match transport {
        McpTransport::Stdio => {
            if !header.is_empty() {
                return output::usage_error(
                    "decode: --header is for http servers (--transport http)",
                );
            }
            entry.insert("command".into(), json!(command_or_url));
            if !args.is_empty() {
                entry.insert("args".into(), json!(args));
            }
            let mut vars = BTreeMap::new();
            for e in env {
                match e.split_once('=') {
                    Some((k, v)) if !k.is_empty() => {
                        vars.insert(k.to_string(), v.to_string());
                    }
                    _ => {
                        return output::usage_error(&format!(
                            "decode: --env takes KEY=VALUE, not `{}`",
                            one_line(e)
                        ))
                    }
                }
            }
            if !vars.is_empty() {
                entry.insert("env".into(), json!(vars));
            }
        }
        McpTransport::Http => {
            if !args.is_empty() || !env.is_empty() {
                return output::usage_error(
                    "decode: an http server takes a URL and headers, no arguments or --env",
                );
            }
            entry.insert("type".into(), json!("http"));
            entry.insert("url".into(), json!(command_or_url));
            let mut headers = BTreeMap::new();
            for h in header {
                match h.split_once(':') {
                    Some((k, v)) if !k.trim().is_empty() => {
                        headers.insert(k.trim().to_string(), v.trim().to_string());
                    }
                    _ => {
                        return output::usage_error(&format!(
                            "decode: --header takes 'Name: value', not `{}`",
                            one_line(h)
                        ))
                    }
                }
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), json!(headers));
            }
        }
    }
    if let Some(ms) = timeout {
        entry.insert("timeout".into(), json!(ms));
    }
    let entry = Value::Object(entry);
    let root = match project_dir(project) {
        Ok(r) => r,
        Err(l) => return output::usage_error(&l),
    };
    let file = match scope {
        McpScope::User => config::user_file(&dirs.config),
        McpScope::Project => root.join(".mcp.json"),
    };
    let server_scope = match scope {
        McpScope::User => Scope::User { file: file.clone() },
        McpScope::Project => Scope::Project { file: file.clone() },
    };
    let parsed = match config::parse_entry(name, &entry, server_scope) {
        Ok(p) => p,
        Err(e) => return output::usage_error(&format!("decode: {}", one_line(&e))),
    };
    if let Err(e) = config::write_entry(&file, name, entry) {
        output::err(&format!("decode: {}", one_line(&e)));
        return ExitCode::FAILURE;
    }
    // The person typed this command line: a project server they add is approved.
    if scope == McpScope::Project {
        if let Err(e) = decode_engine::mcp::Approvals::open(&dirs.data).record(&root, &parsed, true)
        {
            output::err(&format!("decode: warning: {}", one_line(&e.to_string())));
        }
    }
    output::out(&format!(
        "added MCP server `{name}` to {}: {}",
        file.display(),
        one_line(&parsed.command_line())
    ));
    ExitCode::SUCCESS
}

fn remove(
    project: Option<&std::path::Path>,
    scope: Option<McpScope>,
    name: &str,
    dirs: &Dirs,
) -> ExitCode {
    let root = match project_dir(project) {
        Ok(r) => r,
        Err(l) => return output::usage_error(&l),
    };
    let mut candidates: Vec<std::path::PathBuf> = Vec::new();
    if scope != Some(McpScope::Project) {
        candidates.push(config::user_file(&dirs.config));
    }
    if scope != Some(McpScope::User) {
        candidates.extend(config::project_files(&root));
    }
    let defined_in = |file: &std::path::Path| -> bool {
        decode_core::mcp::read_json_file(file, false)
            .ok()
            .flatten()
            .and_then(|v| v.get("mcpServers").cloned())
            .and_then(|s| {
                s.as_object()
                    .map(|m| m.keys().any(|k| k.eq_ignore_ascii_case(name)))
            })
            .unwrap_or(false)
    };
    let files: Vec<_> = candidates.into_iter().filter(|f| defined_in(f)).collect();
    if files.is_empty() {
        return output::usage_error(&format!(
            "decode: no MCP server `{}` is configured there (`decode mcp list` shows them)",
            one_line(name)
        ));
    }
    for f in &files {
        if let Err(e) = config::remove_entry(f, name) {
            output::err(&format!("decode: {}", one_line(&e)));
            return ExitCode::FAILURE;
        }
        output::out(&format!(
            "removed MCP server `{}` from {}",
            one_line(name),
            f.display()
        ));
    }
    let _ = decode_engine::mcp::Approvals::open(&dirs.data).forget(&root, name);
    ExitCode::SUCCESS
}

fn answer(project: Option<&std::path::Path>, name: &str, approved: bool, dirs: &Dirs) -> ExitCode {
    let hub = match hub(project, dirs) {
        Ok(h) => h,
        Err(c) => return c,
    };
    let Some(server) = hub
        .configs()
        .into_iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))
    else {
        return output::usage_error(&format!(
            "decode: no MCP server `{}` is configured (`decode mcp list` shows them)",
            one_line(name)
        ));
    };
    match hub.answer(name, approved) {
        Ok(()) => {
            output::out(&format!(
                "{} MCP server `{}` of this project: {}",
                if approved { "approved" } else { "refused" },
                server.name,
                one_line(&server.command_line())
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::err(&format!("decode: {}", one_line(&e)));
            ExitCode::FAILURE
        }
    }
}

/// The most bytes of a header value read from stdin.
const MAX_VALUE_BYTES: usize = 16 * 1024;

fn key(action: KeyAction) -> ExitCode {
    match action {
        KeyAction::Set { provider: name } => {
            if name.trim().is_empty() || name.chars().any(|c| c.is_control()) {
                return output::usage_error("decode: give the NAME of `keyring:NAME`");
            }
            let text = if std::io::stdin().is_terminal() {
                match rpassword::prompt_password(format!(
                    "value for keyring:{name} (input hidden): "
                )) {
                    Ok(t) => t,
                    Err(e) => {
                        output::err(&format!("decode: could not read the value: {e}"));
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                let mut bytes = Vec::new();
                if let Err(e) = std::io::stdin()
                    .lock()
                    .take(MAX_VALUE_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)
                {
                    output::err(&format!("decode: could not read the value from stdin: {e}"));
                    return ExitCode::FAILURE;
                }
                if bytes.len() > MAX_VALUE_BYTES {
                    return output::usage_error(
                        "decode: the value on stdin is over 16 KiB; nothing was stored",
                    );
                }
                match String::from_utf8(bytes) {
                    Ok(t) => t,
                    Err(_) => return output::usage_error("decode: the value is not UTF-8 text"),
                }
            };
            let value = text.strip_suffix('\n').unwrap_or(&text);
            let value = value.strip_suffix('\r').unwrap_or(value);
            if value.is_empty() || value.chars().any(|c| c.is_control()) {
                return output::usage_error(
                    "decode: the value is empty or holds a line break or control character; nothing was stored",
                );
            }
            match decode_engine::mcp::client::store_keyring_value(&name, value) {
                Ok(()) => {
                    output::out(&format!(
                        "stored keyring:{} for MCP headers",
                        one_line(&name)
                    ));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    output::err(&format!("decode: {}", sanitize(&e)));
                    ExitCode::FAILURE
                }
            }
        }
        KeyAction::Delete { provider: name } => {
            match decode_engine::mcp::client::delete_keyring_value(&name) {
                Ok(true) => {
                    output::out(&format!("deleted keyring:{}", one_line(&name)));
                    ExitCode::SUCCESS
                }
                Ok(false) => {
                    output::out(&format!("keyring:{} was not stored", one_line(&name)));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    output::err(&format!("decode: {}", sanitize(&e)));
                    ExitCode::FAILURE
                }
            }
        }
    }
}
