//! What decode-core knows of MCP servers (docs/mcp.md): the person's read-only marks
//! in their own settings file, and the bounded reader every MCP config file goes
//! through (the servers themselves are decode-engine's `mcp`).
//!
//! The marks live only in the person's `~/.config/decode/settings.json`:
//!
//! ```json
//! {"mcp": {"github": {"readOnlyTools": ["search_issues", "get_file"]},
//!          "docs":   {"readOnly": true}}}
//! ```
//!
//! `readOnly: true` marks every tool of the server, `readOnlyTools` the tools named
//! (the part after `mcp__SERVER__`, as `decode mcp tools` lists them; `*` wildcards
//! allowed). A project's `.decode/settings.json` can never mark a tool read-only: its
//! `mcp` key is not read. A mark the file does not spell right is reported and
//! ignored (the tool stays `other`, so it asks).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::settings::SettingsWarning;

/// The largest MCP config or settings file read.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// How deeply JSON may nest in one.
pub const MAX_NESTING: usize = 64;

/// Decode's config folder for `home`, as the environment places it
/// (`$XDG_CONFIG_HOME/decode`, else `~/.config/decode`).
pub fn user_config_dir(home: &Path) -> PathBuf {
    crate::dirs::Dirs::with_home(home, |k| std::env::var_os(k)).config
}

/// The person's own settings file: `<config>/settings.json`.
pub fn user_settings_path(config_dir: &Path) -> PathBuf {
    config_dir.join("settings.json")
}

/// Reads a JSON file as hostile input: a regular file after links (a FIFO or a
/// device is refused without blocking), at most 1 MiB, nested at most 64 deep, and
/// (with `one_link`, for a project's files) without other hard links. `Ok(None)`
/// when it does not exist; a problem names the file, line and column.
pub fn read_json_file(path: &Path, one_link: bool) -> Result<Option<Value>, SettingsWarning> {
    let warn = |line: Option<usize>, column: Option<usize>, message: String| SettingsWarning {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let read = if one_link {
        decode_policy::paths::read_permission_file(path, MAX_FILE_BYTES)
    } else {
        decode_policy::paths::read_small_file(path, MAX_FILE_BYTES)
    };
    let text = match read {
        Ok(t) => t,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => return Err(warn(None, None, format!("could not read the file: {e}"))),
    };
    if text.trim().is_empty() {
        return Ok(Some(Value::Object(Default::default())));
    }
    if decode_policy::paths::nesting_depth(&text) > MAX_NESTING {
        return Err(warn(
            Some(1),
            Some(1),
            format!("the file nests deeper than {MAX_NESTING} levels"),
        ));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        Ok(_) => Err(warn(
            Some(1),
            Some(1),
            "the file must hold a JSON object".into(),
        )),
        Err(e) => {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
            Err(warn(
                Some(e.line().max(1)),
                Some(e.column().max(1)),
                message,
            ))
        }
    }
}

/// The person's read-only marks as gate patterns (`mcp__SERVER__*`,
/// `mcp__SERVER__TOOL`), from their settings file in `config_dir`, and what was
/// wrong with it. A malformed file marks nothing.
pub fn load_read_only_marks(config_dir: &Path) -> (Vec<String>, Vec<SettingsWarning>) {
    let path = user_settings_path(config_dir);
    match read_json_file(&path, false) {
        Ok(None) => (Vec::new(), Vec::new()),
        Ok(Some(v)) => read_only_marks(&path, &v),
        Err(w) => {
            tracing::warn!(warning = %w, "your settings file cannot be read: no MCP tool is marked read-only");
            (Vec::new(), vec![w])
        }
    }
}

/// The marks of a parsed settings file (see the module docs).
pub fn read_only_marks(path: &Path, settings: &Value) -> (Vec<String>, Vec<SettingsWarning>) {
    let mut marks = Vec::new();
    let mut warnings = Vec::new();
    let mut warn = |message: String| {
        warnings.push(SettingsWarning {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message,
        })
    };
    let Some(mcp) = settings.get("mcp") else {
        return (marks, warnings);
    };
    let Some(servers) = mcp.as_object() else {
        warn("`mcp` must be an object of servers: no MCP tool is marked read-only".into());
        return (marks, warnings);
    };
    for (server, entry) in servers {
        if let Err(e) = decode_policy::mcp::check_server_name(server) {
            warn(format!("`mcp`: {e}; its marks are ignored"));
            continue;
        }
        let Some(entry) = entry.as_object() else {
            warn(format!(
                "`mcp.{server}` must be an object; its marks are ignored"
            ));
            continue;
        };
        match entry.get("readOnly") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => marks.push(format!("mcp__{server}__*")),
            Some(_) => warn(format!(
                "`mcp.{server}.readOnly` must be true or false; ignored"
            )),
        }
        match entry.get("readOnlyTools") {
            None => {}
            Some(Value::Array(tools)) => {
                for t in tools {
                    let Some(t) = t.as_str() else {
                        warn(format!(
                            "`mcp.{server}.readOnlyTools` must list tool names; a {} is ignored",
                            kind(t)
                        ));
                        continue;
                    };
                    let t = t.trim();
                    let pattern = if decode_policy::mcp::is_mcp_name(t) {
                        t.to_string()
                    } else {
                        format!("mcp__{server}__{t}")
                    };
                    match decode_policy::McpPattern::parse(&pattern) {
                        Ok(p) if p.as_str().starts_with(&format!("mcp__{}__", server.to_ascii_lowercase())) => {
                            marks.push(p.as_str().to_string())
                        }
                        Ok(_) => warn(format!(
                            "`mcp.{server}.readOnlyTools`: `{}` names another server's tool; ignored",
                            t.escape_debug()
                        )),
                        Err(e) => warn(format!("`mcp.{server}.readOnlyTools`: {e}; ignored")),
                    }
                }
            }
            Some(_) => warn(format!(
                "`mcp.{server}.readOnlyTools` must be a list of tool names; ignored"
            )),
        }
    }
    (marks, warnings)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_from_the_settings_shape() {
        let v: Value = serde_json::from_str(
            r#"{"mcp": {"docs": {"readOnly": true},
                        "GitHub": {"readOnlyTools": ["search_*", "mcp__github__get_file", "mcp__other__x", 3]},
                        "bad name": {"readOnly": true},
                        "x": {"readOnly": "yes"},
                        "y": {"readOnly": false}}}"#,
        )
        .unwrap();
        let (marks, warnings) = read_only_marks(Path::new("/s.json"), &v);
        assert_eq!(
            marks,
            [
                "mcp__docs__*",
                "mcp__github__search_*",
                "mcp__github__get_file"
            ]
        );
        assert_eq!(warnings.len(), 4, "{warnings:?}");
    }

    #[test]
    fn a_malformed_or_hostile_file_marks_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = user_settings_path(dir.path());
        std::fs::write(&p, r#"{"mcp": {"docs": {"readOnly": true}"#).unwrap();
        let (marks, warnings) = load_read_only_marks(dir.path());
        assert!(marks.is_empty());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].line.is_some(), "{}", warnings[0]);
        std::fs::write(&p, "[".repeat(100) + &"]".repeat(100)).unwrap();
        let (marks, warnings) = load_read_only_marks(dir.path());
        assert!(marks.is_empty());
        assert!(warnings[0].message.contains("deeper"), "{}", warnings[0]);
        std::fs::remove_file(&p).unwrap();
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (marks, warnings) = load_read_only_marks(dir.path());
        assert!(marks.is_empty());
        assert_eq!(warnings.len(), 1, "a FIFO is refused, without blocking");
        std::fs::remove_file(&p).unwrap();
        assert_eq!(load_read_only_marks(dir.path()), (Vec::new(), Vec::new()));
    }
}
