//! One connection to one MCP server, on `rmcp` (docs/mcp.md).
//!
//! - stdio: Decode starts the program itself — inside the bash tool's bubblewrap
//!   sandbox (the same [`Plan`] bash builds: protected files read-only, secrets out of
//!   reach), in its own process group, with an environment of `PATH`, `HOME`, the
//!   locale and exactly the variables its entry names. Its stdout passes through a
//!   guard before rmcp reads it: every line must be a JSON-RPC 2.0 object of at most
//!   [`MAX_LINE_BYTES`]; the first one that is not ends the connection (the process is
//!   killed) and is what the failure says. The last [`STDERR_TAIL`] bytes of its
//!   stderr are kept for the report.
//! - streamable HTTP: rmcp's client over a reqwest client that follows no redirect
//!   (a header never goes to another host); a header value `keyring:NAME` is read from
//!   the OS keyring (service `decode-mcp`, user `NAME`).
//!
//! A server cannot make Decode do anything: sampling requests are refused, elicitation
//! is declined, and no roots are offered.

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams, Tool as RmcpTool,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, Peer, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use super::config::{expand_vars, ServerConfig, Transport, START_TIMEOUT};
use crate::sandbox::{Plan, Support};
use crate::state::ActiveState;

/// The longest line a stdio server may send (one JSON-RPC message).
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// How much of a server's stderr is kept for reports.
pub const STDERR_TAIL: usize = 4096;
/// The most pages of `tools/list` read.
pub const MAX_TOOL_PAGES: usize = 20;
/// The most tools read from one server.
pub const MAX_TOOLS: usize = 512;
/// The keyring service of header values `keyring:NAME`.
pub const KEYRING_SERVICE: &str = "decode-mcp";

/// The variables of Decode's environment a stdio server gets besides its entry's.
const BASE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// What Decode tells a server about itself, and how it answers a server's requests.
#[derive(Clone, Default)]
pub(crate) struct DecodeClient {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for DecodeClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("decode", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Relaxed);
    }
}

/// What went wrong on a connection besides the protocol: the first malformed
/// message and the end of stderr.
#[derive(Default)]
pub(crate) struct Diag {
    malformed: Mutex<Option<String>>,
    stderr: Mutex<String>,
}

impl Diag {
    pub(crate) fn malformed(&self) -> Option<String> {
        self.malformed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_malformed(&self, what: String) {
        let mut m = self.malformed.lock().unwrap_or_else(|e| e.into_inner());
        if m.is_none() {
            *m = Some(what);
        }
    }

    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn push_stderr(&self, text: &str) {
        let mut s = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        s.push_str(text);
        if s.len() > 2 * STDERR_TAIL {
            let mut cut = s.len() - STDERR_TAIL;
            while !s.is_char_boundary(cut) {
                cut += 1;
            }
            s.drain(..cut);
        }
    }

    /// One line for a report: what the server did wrong, and its last words.
    pub(crate) fn explain(&self) -> String {
        let mut out = String::new();
        if let Some(m) = self.malformed() {
            out.push_str(&format!("it sent a malformed message: {m}"));
        }
        let tail = self.stderr_tail();
        let tail = tail.trim();
        if !tail.is_empty() {
            let last: String = tail.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
            let last = super::results::escape_text(&last);
            let last: String = last.chars().take(300).collect();
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(&format!("its last output: {last}"));
        }
        out
    }
}

/// A stdio server's process: killed (its whole group) when dropped, and what its
/// sandbox kept from protected paths put right.
struct Process {
    child: tokio::process::Child,
    pgid: i32,
    sandbox: Option<(Plan, crate::sandbox::Held)>,
    /// The proxy serving the server's own network (its only way out), while it runs.
    _proxy: Option<crate::net::Serving>,
}

impl Drop for Process {
    fn drop(&mut self) {
        kill_group(self.pgid);
        let _ = self.child.start_kill();
        if let Some((plan, held)) = &self.sandbox {
            let quarantine = crate::running_commands::quarantine_folder();
            for note in plan.undo(&quarantine, held) {
                tracing::warn!("after an MCP server: {note}");
            }
        }
    }
}

fn kill_group(pgid: i32) {
    use nix::sys::signal::{killpg, Signal};
    match killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pgid, error = %e, "could not kill an MCP server's process group"),
    }
}

/// A live connection.
pub(crate) struct Connection {
    service: RunningService<RoleClient, DecodeClient>,
    _process: Option<Process>,
    pub(crate) diag: Arc<Diag>,
    pub(crate) tools_changed: Arc<AtomicBool>,
    /// Whether a stdio server runs sandboxed (`None`: an HTTP server).
    pub(crate) sandboxed: Option<bool>,
    /// The tools it listed when it started.
    pub(crate) tools: Vec<RmcpTool>,
}

impl Connection {
    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Whether the transport is gone (the process exited, the guard closed it).
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.peer().is_transport_closed()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.service.cancellation_token().cancel();
    }
}

/// Starts `server` and lists its tools, within [`START_TIMEOUT`].
pub(crate) async fn connect(
    server: &ServerConfig,
    active: &Arc<ActiveState>,
) -> Result<Connection, String> {
    match tokio::time::timeout(START_TIMEOUT, connect_inner(server, active)).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "it did not start and list its tools within {} s",
            START_TIMEOUT.as_secs()
        )),
    }
}

async fn connect_inner(
    server: &ServerConfig,
    active: &Arc<ActiveState>,
) -> Result<Connection, String> {
    let handler = DecodeClient::default();
    let tools_changed = Arc::clone(&handler.tools_changed);
    let diag = Arc::new(Diag::default());
    let (service, process, sandboxed) = match &server.transport {
        Transport::Stdio { command, args, env } => {
            let (process, stdin, stdout, sandboxed) =
                spawn_stdio(command, args, env, active, &diag).await?;
            let service = handler
                .serve((stdout, stdin))
                .await
                .map_err(|e| init_error(&e.to_string(), &diag))?;
            (service, Some(process), Some(sandboxed))
        }
        Transport::Http { url, headers } => {
            let transport = http_transport(url, headers).await?;
            let service = handler
                .serve(transport)
                .await
                .map_err(|e| format!("it did not answer the MCP handshake: {e}"))?;
            (service, None, None)
        }
    };
    let mut conn = Connection {
        service,
        _process: process,
        diag,
        tools_changed,
        sandboxed,
        tools: Vec::new(),
    };
    conn.tools = list_tools(conn.peer())
        .await
        .map_err(|e| init_error(&e, &conn.diag))?;
    Ok(conn)
}

fn init_error(e: &str, diag: &Diag) -> String {
    let extra = diag.explain();
    if extra.is_empty() {
        format!("it did not answer the MCP handshake: {e}")
    } else {
        format!("it did not answer the MCP handshake ({e}): {extra}")
    }
}

/// Every tool of a server, at most [`MAX_TOOL_PAGES`] pages and [`MAX_TOOLS`] tools.
pub(crate) async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<RmcpTool>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS {
            tracing::warn!(
                "an MCP server lists more than {MAX_TOOLS} tools; the rest are left out"
            );
            tools.truncate(MAX_TOOLS);
            break;
        }
        match page.next_cursor {
            Some(c) if !c.is_empty() => cursor = Some(c),
            _ => break,
        }
    }
    Ok(tools)
}

/// The environment a stdio server gets: the basics of Decode's own, then exactly
/// the entry's variables (`${VAR}` expanded).
pub(crate) fn server_env(entry: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = BASE_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    if !out.iter().any(|(k, _)| k == "PATH") {
        out.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
    }
    for (k, v) in entry {
        out.retain(|(x, _)| x != k);
        out.push((k.clone(), expand_vars(v)));
    }
    out
}

type Spawned = (
    Process,
    tokio::process::ChildStdin,
    tokio::io::DuplexStream,
    bool,
);

/// The sandbox a stdio server of `active`'s project runs in: the bash tool's
/// (docs/sandbox.md) — writes confined to the project and the temp and toolchain
/// folders, secrets and Decode's folders hidden, the host's services out of reach, a
/// network of its own — with the folders checked when it stops held open. Refused,
/// like a bash command, when the project is too big to find what the sandbox must
/// protect or the `read` deny rules cannot be enforced.
///
/// Not registered as a running command (docs/mcp.md): a record held for the server's
/// whole life would hold back every permission file Decode itself creates meanwhile.
/// What the server made at a protected path that did not exist is taken away when
/// it stops.
async fn plan_sandbox(active: &Arc<ActiveState>) -> Result<(Plan, crate::sandbox::Held), String> {
    let inputs = crate::sandbox::Inputs::for_state(active);
    let deny = crate::sandbox::ReadDeny::of(active, &inputs.homes);
    let root = active.project_root().to_path_buf();
    let extra = inputs.extra_writable();
    let scan =
        tokio::task::spawn_blocking(move || crate::sandbox::scan_all(&root, &extra, Some(&deny)))
            .await
            .map_err(|e| format!("cannot prepare its sandbox: {e}"))?;
    if scan.truncated {
        return Err(format!(
            "this project holds more than {} files and folders, too many for its sandbox to protect them",
            crate::sandbox::MAX_SCAN_ENTRIES
        ));
    }
    if !scan.deny_unenforced.is_empty() {
        return Err(format!(
            "its sandbox cannot hide what the `read` deny rules {} cover (folders too big to walk)",
            scan.deny_unenforced.join(", ")
        ));
    }
    if scan.denied_reads.len() > crate::sandbox::denied::MAX_HIDDEN {
        return Err(format!(
            "`read` deny rules cover {} files and folders here, more than its sandbox hides one by one",
            scan.denied_reads.len()
        ));
    }
    for p in &inputs.user_problems {
        tracing::warn!("sandbox settings: {p}");
    }
    let plan = Plan::new(&active.gate(), &scan, &inputs);
    let held = plan.hold();
    Ok((plan, held))
}

async fn spawn_stdio(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    active: &Arc<ActiveState>,
    diag: &Arc<Diag>,
) -> Result<Spawned, String> {
    let root = active.project_root().to_path_buf();
    let command = expand_vars(command);
    let args: Vec<String> = args.iter().map(|a| expand_vars(a)).collect();
    // The bash tool's sandbox (docs/sandbox.md), built the same way.
    let sandbox = match crate::sandbox::support() {
        Support::Enforced { bwrap, .. } => {
            let (plan, held) = plan_sandbox(active).await?;
            Some((bwrap.clone(), plan, held))
        }
        Support::Unavailable { why } => {
            tracing::warn!("MCP server runs WITHOUT a sandbox: {why}");
            None
        }
    };
    // In the sandbox's own network, the proxy is the server's only way out.
    let net = if sandbox.is_some()
        && crate::sandbox::own_network()
        && crate::net::commands_get_the_proxy()
    {
        Some(
            crate::sandbox::BwrapProxy::new()
                .map_err(|e| format!("cannot prepare its network: {e}"))?,
        )
    } else {
        None
    };
    let mut cmd = match &sandbox {
        Some((bwrap, plan, _)) => {
            let mut c = plan.bwrap(bwrap, &root);
            if let Some(n) = &net {
                n.pass(&mut c);
            }
            c.arg("--").arg(&command).args(&args);
            c
        }
        None => {
            let mut c = tokio::process::Command::new(&command);
            decode_nsenter::close_inherited_on_exec(c.as_std_mut());
            c.args(&args);
            c
        }
    };
    cmd.env_clear()
        .envs(server_env(env))
        .current_dir(&root)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if net.is_some() {
        // The usual proxy variables, pointing at its own loopback.
        cmd.envs(crate::net::proxy_env());
    }
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot start `{}`: {e}",
            super::results::escape_text(&command)
        )
    })?;
    let proxy = match net {
        Some(n) => Some(crate::net::serve(
            Arc::new(crate::net::Resolver::system()),
            Arc::new(crate::net::GateJudge::new(Arc::clone(active))),
            n.listeners().await,
        )),
        None => None,
    };
    let pgid = child.id().map(|p| p as i32).ok_or("it exited at once")?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    if let Some(mut stderr) = child.stderr.take() {
        let diag = Arc::clone(diag);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]);
                tracing::debug!(target: "decode::mcp::stderr", "{}", text.trim_end());
                diag.push_stderr(&text);
            }
        });
    }
    let (rmcp_side, guard_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(guard(stdout, guard_side, Arc::clone(diag), pgid));
    let sandboxed = sandbox.is_some();
    let process = Process {
        child,
        pgid,
        sandbox: sandbox.map(|(_, plan, held)| (plan, held)),
        _proxy: proxy,
    };
    Ok((process, stdin, rmcp_side, sandboxed))
}

/// Passes the server's stdout to rmcp line by line while every line is a JSON-RPC
/// 2.0 object; the first one that is not (or is longer than [`MAX_LINE_BYTES`])
/// closes the connection and kills the server.
async fn guard(
    stdout: tokio::process::ChildStdout,
    mut to_rmcp: tokio::io::DuplexStream,
    diag: Arc<Diag>,
    pgid: i32,
) {
    let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    loop {
        line.clear();
        match read_line(&mut reader, &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(LineError::TooLong) => {
                diag.set_malformed(format!(
                    "a message longer than {} MiB",
                    MAX_LINE_BYTES >> 20
                ));
                kill_group(pgid);
                break;
            }
            Err(LineError::Io) => break,
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let ok = matches!(
            serde_json::from_slice::<serde_json::Value>(text),
            Ok(serde_json::Value::Object(ref m)) if m.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0")
        );
        if !ok {
            let shown: String = String::from_utf8_lossy(text).chars().take(200).collect();
            diag.set_malformed(format!(
                "`{}` is not a JSON-RPC message",
                super::results::escape_text(&shown)
            ));
            tracing::warn!(
                pgid,
                "an MCP server sent a malformed message; its connection is closed"
            );
            kill_group(pgid);
            break;
        }
        if to_rmcp.write_all(text).await.is_err() || to_rmcp.write_all(b"\n").await.is_err() {
            break;
        }
    }
    let _ = to_rmcp.shutdown().await;
}

enum LineError {
    TooLong,
    Io,
}

/// Reads one line (through `\n`) into `out`, refusing one longer than
/// [`MAX_LINE_BYTES`] before it is all in memory.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    r: &mut R,
    out: &mut Vec<u8>,
) -> Result<usize, LineError> {
    loop {
        let buf = r.fill_buf().await.map_err(|_| LineError::Io)?;
        if buf.is_empty() {
            return Ok(out.len());
        }
        let (take, done) = match memchr(buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if out.len() + take > MAX_LINE_BYTES {
            return Err(LineError::TooLong);
        }
        out.extend_from_slice(&buf[..take]);
        r.consume(take);
        if done {
            return Ok(out.len());
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

async fn http_transport(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<rmcp::transport::StreamableHttpClientTransport<reqwest::Client>, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut custom = HashMap::new();
    for (k, v) in headers {
        let value = match v.trim().strip_prefix("keyring:") {
            Some(name) => keyring_value(name.trim()).await?,
            None => expand_vars(v),
        };
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| format!("header `{k}`: {e}"))?;
        let mut value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|e| format!("header `{k}`: {e}"))?;
        value.set_sensitive(true);
        custom.insert(name, value);
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(expand_vars(url)).custom_headers(custom);
    Ok(rmcp::transport::StreamableHttpClientTransport::with_client(
        client, config,
    ))
}

/// A header value from the OS keyring.
async fn keyring_value(name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("a header value `keyring:` names no keyring entry".into());
    }
    let owned = name.to_string();
    let got = tokio::task::spawn_blocking(move || {
        keyring::Entry::new(KEYRING_SERVICE, &owned).and_then(|e| e.get_password())
    })
    .await
    .map_err(|e| e.to_string())?;
    match got {
        Ok(v) if !v.is_empty() => Ok(v),
        Ok(_) | Err(keyring::Error::NoEntry) => Err(format!(
            "the keyring holds no value `{name}` (store it with `decode mcp key set {name}`)"
        )),
        Err(e) => Err(format!("the keyring value `{name}` cannot be read: {e}")),
    }
}

/// Stores a header value for `keyring:NAME` (`decode mcp key set`).
pub fn store_keyring_value(name: &str, value: &str) -> Result<(), String> {
    keyring::Entry::new(KEYRING_SERVICE, name)
        .and_then(|e| e.set_password(value))
        .map_err(|e| format!("cannot store `{name}` in the keyring: {e}"))
}

/// Removes a stored header value; whether there was one.
pub fn delete_keyring_value(name: &str) -> Result<bool, String> {
    match keyring::Entry::new(KEYRING_SERVICE, name).and_then(|e| e.delete_credential()) {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(e) => Err(format!("cannot delete `{name}` from the keyring: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_gets_only_the_basics_and_its_entrys_variables() {
        let mut entry = BTreeMap::new();
        entry.insert("TOKEN".to_string(), "x".to_string());
        let env = server_env(&entry);
        assert!(env.iter().any(|(k, _)| k == "PATH"));
        assert!(env.iter().any(|(k, v)| k == "TOKEN" && v == "x"));
        for (k, _) in &env {
            assert!(BASE_ENV.contains(&k.as_str()) || k == "TOKEN", "{k}");
        }
    }

    #[tokio::test]
    async fn lines_longer_than_the_limit_are_refused_before_they_are_read_whole() {
        let data = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut r = tokio::io::BufReader::new(&data[..]);
        let mut out = Vec::new();
        assert!(matches!(
            read_line(&mut r, &mut out).await,
            Err(LineError::TooLong)
        ));
        let mut r = tokio::io::BufReader::new(&b"a\nb"[..]);
        out.clear();
        assert!(matches!(read_line(&mut r, &mut out).await, Ok(2)));
        assert_eq!(out, b"a\n");
    }
}
