//! Where MCP servers are configured (docs/mcp.md): the person's
//! `~/.config/decode/mcp.json`, and the project's `.decode/mcp.json` and `.mcp.json`,
//! all in Claude Code's format:
//!
//! ```json
//! {"mcpServers": {
//!   "git":    {"command": "uvx", "args": ["mcp-server-git"], "env": {"GIT_AUTHOR_NAME": "me"}},
//!   "issues": {"type": "http", "url": "https://mcp.example.com/mcp",
//!              "headers": {"Authorization": "keyring:issues-token"}}}}
//! ```
//!
//! Every file is hostile input (a regular file after links, at most 1 MiB, nested at
//! most 64 deep, never blocking: decode-core `mcp::read_json_file`). A server entry
//! that does not fit the shape is reported and left out; the others are kept.
//!
//! Choices (docs/mcp.md): a project's server never replaces one of the person's of the
//! same name (it is reported and left out); `.decode/mcp.json` wins over `.mcp.json`;
//! `"timeout"` (milliseconds, as in Gemini CLI) bounds one call; `"disabled": true`
//! keeps a server of the person's from starting; `${VAR}` and `${VAR:-default}` in
//! `command`, `args`, `env` values, `url` and header values are taken from Decode's
//! environment (as in Claude Code) — in a project's server that is part of the command
//! line the person approves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// The time one tool call may take when the entry sets no `timeout`.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest `timeout` an entry may set.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(3600);
/// The time a server gets to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// The most servers read from one file.
pub const MAX_SERVERS: usize = 64;

/// Where a server is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The person's own `mcp.json`: always trusted.
    User { file: PathBuf },
    /// A project's `.decode/mcp.json` or `.mcp.json`: starts only in a trusted project
    /// and after the person approved its exact command line.
    Project { file: PathBuf },
}

impl Scope {
    /// `user` or `project`.
    pub fn name(&self) -> &'static str {
        match self {
            Scope::User { .. } => "user",
            Scope::Project { .. } => "project",
        }
    }

    /// The file it is configured in.
    pub fn file(&self) -> &Path {
        match self {
            Scope::User { file } | Scope::Project { file } => file,
        }
    }
}

/// How Decode talks to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A program Decode starts, speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// The only environment variables it gets besides `PATH`, `HOME` and the
        /// locale (values as written: `${VAR}` expanded when it starts).
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP server.
    Http {
        url: String,
        /// Sent with every request; a value `keyring:NAME` is read from the OS keyring.
        headers: BTreeMap<String, String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub scope: Scope,
    pub transport: Transport,
    /// How long one tool call may take.
    pub timeout: Duration,
    /// `"disabled": true` in the entry.
    pub disabled: bool,
}

impl ServerConfig {
    /// The command line as the person approves it: the program and its arguments
    /// (quoted where a shell would need it), preceded by the environment the entry
    /// sets; or `http URL` and the headers. Exactly what runs, before `${VAR}`
    /// expansion; control characters are shown escaped.
    pub fn command_line(&self) -> String {
        let line = match &self.transport {
            Transport::Stdio { command, args, env } => {
                let mut parts: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k}={}", shell_word(v)))
                    .collect();
                parts.push(shell_word(command));
                parts.extend(args.iter().map(|a| shell_word(a)));
                parts.join(" ")
            }
            Transport::Http { url, headers } => {
                let mut parts = vec![format!("http {}", shell_word(url))];
                parts.extend(
                    headers
                        .iter()
                        .map(|(k, v)| format!("-H {}", shell_word(&format!("{k}: {v}")))),
                );
                parts.join(" ")
            }
        };
        crate::mcp::results::escape_text(&line)
    }

    /// What an approval is bound to: the whole entry as Decode reads it (transport,
    /// program, arguments, environment, URL, headers), in one canonical string. Any
    /// change asks again.
    pub fn fingerprint(&self) -> String {
        let v = match &self.transport {
            Transport::Stdio { command, args, env } => serde_json::json!({
                "type": "stdio", "command": command, "args": args, "env": env,
            }),
            Transport::Http { url, headers } => serde_json::json!({
                "type": "http", "url": url, "headers": headers,
            }),
        };
        decode_policy::mcp::canonical_json(&v)
    }
}

/// Quotes a word for display the way a shell would read it back.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The servers of every config file for a project, and what was wrong with them
/// (one line each, naming the file).
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub servers: Vec<ServerConfig>,
    pub problems: Vec<String>,
}

/// The person's config file: `<config_dir>/mcp.json`.
pub fn user_file(config_dir: &Path) -> PathBuf {
    config_dir.join("mcp.json")
}

/// The project's config files, the one that wins first.
pub fn project_files(project_root: &Path) -> [PathBuf; 2] {
    [
        project_root.join(".decode").join("mcp.json"),
        project_root.join(".mcp.json"),
    ]
}

/// Reads the person's file and the project's files (see the module docs).
pub fn load(config_dir: &Path, project_root: &Path) -> Loaded {
    let mut out = Loaded::default();
    let user = user_file(config_dir);
    read_file(&user, Scope::User { file: user.clone() }, false, &mut out);
    for file in project_files(project_root) {
        read_file(&file, Scope::Project { file: file.clone() }, true, &mut out);
    }
    out
}

fn read_file(path: &Path, scope: Scope, one_link: bool, out: &mut Loaded) {
    let value = match decode_core::mcp::read_json_file(path, one_link) {
        Ok(Some(v)) => v,
        Ok(None) => return,
        Err(w) => {
            out.problems
                .push(format!("{w} (no server of this file is used)"));
            return;
        }
    };
    let servers = match value.get("mcpServers") {
        None => return,
        Some(Value::Object(m)) => m,
        Some(_) => {
            out.problems.push(format!(
                "{}: `mcpServers` must be an object of servers",
                path.display()
            ));
            return;
        }
    };
    for (i, (name, entry)) in servers.iter().enumerate() {
        if i >= MAX_SERVERS {
            out.problems.push(format!(
                "{}: more than {MAX_SERVERS} servers; the rest are not used",
                path.display()
            ));
            break;
        }
        let shown = crate::mcp::results::escape_text(name);
        match parse_entry(name, entry, scope.clone()) {
            Ok(server) => {
                if let Some(first) = out
                    .servers
                    .iter()
                    .find(|s| s.name.eq_ignore_ascii_case(&server.name))
                {
                    out.problems.push(format!(
                        "{}: server `{shown}` is not used: {} already defines a server of that name",
                        path.display(),
                        first.scope.file().display()
                    ));
                    continue;
                }
                out.servers.push(server);
            }
            Err(e) => out
                .problems
                .push(format!("{}: server `{shown}`: {e}", path.display())),
        }
    }
}

/// Parses one entry; the message says what is wrong.
pub fn parse_entry(name: &str, entry: &Value, scope: Scope) -> Result<ServerConfig, String> {
    decode_policy::mcp::check_server_name(name)?;
    let obj = entry.as_object().ok_or("the entry must be an object")?;
    let string = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let map = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    _ => Err(format!("`{key}.{k}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be an object of strings")),
        }
    };
    let kind = string("type")?;
    let transport = match kind.as_deref() {
        None | Some("stdio") if obj.contains_key("command") || kind.is_some() => {
            let command = string("command")?.ok_or("`command` is missing")?;
            if command.trim().is_empty() {
                return Err("`command` is empty".into());
            }
            let args = match obj.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or("`args` must be a list of strings")
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`args` must be a list of strings".into()),
            };
            let env = map("env")?;
            for k in env.keys() {
                if k.is_empty() || k.contains(['=', '\0']) {
                    return Err(format!("`env` holds a bad variable name `{}`", k.escape_debug()));
                }
            }
            if [command.as_str()]
                .into_iter()
                .chain(args.iter().map(String::as_str))
                .chain(env.values().map(String::as_str))
                .any(|s| s.contains('\0'))
            {
                return Err("a NUL character in the command line".into());
            }
            Transport::Stdio { command, args, env }
        }
        None if obj.contains_key("url") => http(&string, &map)?,
        Some("http") | Some("streamable-http") | Some("streamableHttp") => http(&string, &map)?,
        Some("sse") => {
            return Err(
                "the old SSE transport is not supported; use the server's streamable HTTP endpoint (`\"type\": \"http\"`)"
                    .into(),
            )
        }
        Some(other) => {
            return Err(format!(
                "unknown `type` `{}` (expected stdio or http)",
                other.escape_debug()
            ))
        }
        None => return Err("the entry needs a `command` (stdio) or a `url` (http)".into()),
    };
    let timeout = match obj.get("timeout") {
        None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(ms) if ms > 0 => Duration::from_millis(ms).min(MAX_CALL_TIMEOUT),
            _ => return Err("`timeout` must be a positive number of milliseconds".into()),
        },
        Some(_) => return Err("`timeout` must be a number of milliseconds".into()),
    };
    let disabled = match obj.get("disabled") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`disabled` must be true or false".into()),
    };
    Ok(ServerConfig {
        name: name.to_string(),
        scope,
        transport,
        timeout,
        disabled,
    })
}

type StringMap = BTreeMap<String, String>;

fn http(
    string: &dyn Fn(&str) -> Result<Option<String>, String>,
    map: &dyn Fn(&str) -> Result<StringMap, String>,
) -> Result<Transport, String> {
    let url = string("url")?.ok_or("`url` is missing")?;
    let parsed = reqwest::Url::parse(&expand_vars(&url)).map_err(|e| format!("`url`: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("`url` must be an http:// or https:// address".into());
    }
    let headers = map("headers")?;
    for (k, v) in &headers {
        if reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_err() {
            return Err(format!(
                "`headers` holds a bad header name `{}`",
                k.escape_debug()
            ));
        }
        if v.contains(['\r', '\n', '\0']) {
            return Err(format!("header `{k}` holds a line break"));
        }
    }
    Ok(Transport::Http { url, headers })
}

/// Adds (or replaces) the entry `name` in the config file `path` (`decode mcp add`),
/// keeping every other key and server. A malformed file is left as it is; a file or
/// folder on the way that is a link is refused (Decode never writes through one).
pub fn write_entry(path: &Path, name: &str, entry: Value) -> Result<(), String> {
    edit_file(path, |servers| {
        servers.insert(name.to_string(), entry);
        Ok(())
    })
}

/// Removes the entry `name` from the config file `path`; an error when it has none.
pub fn remove_entry(path: &Path, name: &str) -> Result<(), String> {
    edit_file(path, |servers| {
        let key = servers
            .keys()
            .find(|k| k.eq_ignore_ascii_case(name))
            .cloned()
            .ok_or_else(|| format!("{} has no server `{name}`", path.display()))?;
        servers.remove(&key);
        Ok(())
    })
}

/// Sets or clears `"disabled": true` on the entry `name` of `path`.
pub fn set_disabled(path: &Path, name: &str, disabled: bool) -> Result<(), String> {
    edit_file(path, |servers| {
        let entry = servers
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("{} has no server `{name}`", path.display()))?;
        let obj = entry
            .as_object_mut()
            .ok_or_else(|| format!("the entry `{name}` is not an object"))?;
        if disabled {
            obj.insert("disabled".into(), Value::Bool(true));
        } else {
            obj.remove("disabled");
        }
        Ok(())
    })
}

fn edit_file(
    path: &Path,
    change: impl FnOnce(&mut serde_json::Map<String, Value>) -> Result<(), String>,
) -> Result<(), String> {
    for p in [Some(path), path.parent()].into_iter().flatten() {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "{} is a link: Decode does not write through it",
                p.display()
            ));
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let _lock = decode_core::fsutil::FileLock::acquire(&decode_core::fsutil::lock_path_for(path))
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    let mut root = match decode_core::mcp::read_json_file(path, false) {
        Ok(Some(v)) => v,
        Ok(None) => Value::Object(Default::default()),
        Err(w) => return Err(format!("{w} (the file was left as it is)")),
    };
    let obj = root
        .as_object_mut()
        .ok_or("the file does not hold a JSON object")?;
    let servers = obj
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Default::default()))
        .as_object_mut()
        .ok_or_else(|| {
            format!(
                "{}: `mcpServers` is not an object (the file was left as it is)",
                path.display()
            )
        })?;
    change(servers)?;
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    decode_core::fsutil::atomic_write(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `${VAR}` and `${VAR:-default}` replaced from Decode's environment (an unset
/// variable without a default becomes empty); everything else kept as written.
pub fn expand_vars(s: &str) -> String {
    expand_with(s, &|k| std::env::var(k).ok())
}

fn expand_with(s: &str, get: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        let valid = !var.is_empty()
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !var.starts_with(|c: char| c.is_ascii_digit());
        if valid {
            match get(var).filter(|v| !v.is_empty()) {
                Some(v) => out.push_str(&v),
                None => out.push_str(default.unwrap_or("")),
            }
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user() -> Scope {
        Scope::User {
            file: PathBuf::from("/c/mcp.json"),
        }
    }

    #[test]
    fn entries_in_claude_codes_shape() {
        let e = serde_json::json!({"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}});
        let s = parse_entry("x", &e, user()).unwrap();
        assert_eq!(s.command_line(), "A=1 npx -y pkg");
        assert_eq!(s.timeout, DEFAULT_CALL_TIMEOUT);
        let e = serde_json::json!({"type": "http", "url": "https://h/mcp", "headers": {"X-K": "keyring:k"}, "timeout": 5000});
        let s = parse_entry("h", &e, user()).unwrap();
        assert_eq!(s.command_line(), "http https://h/mcp -H 'X-K: keyring:k'");
        assert_eq!(s.timeout, Duration::from_secs(5));
        for (bad, why) in [
            (serde_json::json!({"args": []}), "needs a `command`"),
            (serde_json::json!({"command": ""}), "empty"),
            (
                serde_json::json!({"command": "x", "args": [1]}),
                "list of strings",
            ),
            (
                serde_json::json!({"command": "x", "env": {"A": 1}}),
                "must be a string",
            ),
            (serde_json::json!({"type": "sse", "url": "http://h"}), "SSE"),
            (
                serde_json::json!({"type": "http", "url": "file:///etc/passwd"}),
                "http://",
            ),
            (
                serde_json::json!({"type": "http", "url": "http://h", "headers": {"a": "b\r\nEvil: 1"}}),
                "line break",
            ),
            (
                serde_json::json!({"command": "x", "timeout": -1}),
                "timeout",
            ),
            (serde_json::json!("npx"), "object"),
        ] {
            let e = parse_entry("x", &bad, user()).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(parse_entry("a__b", &serde_json::json!({"command": "x"}), user()).is_err());
    }

    #[test]
    fn a_changed_entry_changes_the_fingerprint() {
        let a = parse_entry(
            "x",
            &serde_json::json!({"command": "npx", "args": ["a"]}),
            user(),
        )
        .unwrap();
        let b = parse_entry(
            "x",
            &serde_json::json!({"command": "npx", "args": ["b"]}),
            user(),
        )
        .unwrap();
        let c = parse_entry(
            "x",
            &serde_json::json!({"command": "npx", "args": ["a"], "env": {"X": "1"}}),
            user(),
        )
        .unwrap();
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        let a2 = parse_entry(
            "x",
            &serde_json::json!({"args": ["a"], "command": "npx", "timeout": 9}),
            user(),
        )
        .unwrap();
        assert_eq!(a.fingerprint(), a2.fingerprint());
    }

    #[test]
    fn command_lines_show_what_runs_escaped() {
        let e =
            serde_json::json!({"command": "sh", "args": ["-c", "echo 'hi'; \u{1b}[2Jrm -rf ~"]});
        let s = parse_entry("x", &e, user()).unwrap();
        let line = s.command_line();
        assert!(!line.contains('\u{1b}'), "{line}");
        assert!(line.contains("\\x1b[2J"), "{line}");
        assert!(line.starts_with("sh -c 'echo '\\''hi'\\''"), "{line}");
    }

    #[test]
    fn writing_keeps_the_rest_and_never_a_malformed_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("mcp.json");
        std::fs::write(&f, r#"{"other": 1, "mcpServers": {"a": {"command": "x"}}}"#).unwrap();
        write_entry(&f, "b", serde_json::json!({"command": "y"})).unwrap();
        set_disabled(&f, "a", true).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        assert_eq!(v["other"], 1);
        assert_eq!(v["mcpServers"]["b"]["command"], "y");
        assert_eq!(v["mcpServers"]["a"]["disabled"], true);
        remove_entry(&f, "A").unwrap();
        assert!(remove_entry(&f, "a").is_err());
        std::fs::write(&f, "{broken").unwrap();
        assert!(write_entry(&f, "c", serde_json::json!({"command": "z"})).is_err());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{broken");
        let target = dir.path().join("elsewhere.json");
        std::fs::write(&target, "{}").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_entry(&link, "c", serde_json::json!({"command": "z"})).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
    }

    #[test]
    fn variables_expand_from_the_environment() {
        let get = |k: &str| (k == "TOKEN").then(|| "t0k".to_string());
        assert_eq!(expand_with("a ${TOKEN} b", &get), "a t0k b");
        assert_eq!(expand_with("${NOPE:-dflt}/${NOPE}", &get), "dflt/");
        assert_eq!(expand_with("${1X} ${A-B} ${", &get), "${1X} ${A-B} ${");
    }

    #[test]
    fn files_and_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(project.join(".decode")).unwrap();
        std::fs::write(
            user_file(&config),
            r#"{"mcpServers": {"git": {"command": "mine"}}}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".decode/mcp.json"),
            r#"{"mcpServers": {"Git": {"command": "theirs"}, "docs": {"command": "d1"}}}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"docs": {"command": "d2"}, "bad": {"command": 3}}}"#,
        )
        .unwrap();
        let l = load(&config, &project);
        let names: Vec<(&str, &str)> = l
            .servers
            .iter()
            .map(|s| (s.name.as_str(), s.scope.name()))
            .collect();
        assert_eq!(names, [("git", "user"), ("docs", "project")]);
        assert_eq!(l.problems.len(), 3, "{:?}", l.problems);
        assert!(l.problems.iter().any(|p| p.contains("`Git` is not used")));
        // A malformed file is one problem, and none of its servers is used.
        std::fs::write(project.join(".mcp.json"), "{\"mcpServers\": {").unwrap();
        let l = load(&config, &project);
        assert_eq!(l.servers.len(), 2);
        assert!(
            l.problems.iter().any(|p| p.contains(".mcp.json:1:")),
            "{:?}",
            l.problems
        );
    }
}
