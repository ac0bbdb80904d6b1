//! `bash`: runs a command with `bash -c` in the session's working folder.
//!
//! - The command runs in the sandbox (crate::sandbox, docs/sandbox.md) unless the
//!   person approved this very call: its own process namespace, so nothing it starts
//!   outlives the call, detached or not. Outside the sandbox it runs in its own process
//!   group; a timeout, a cancellation or the end of the command kills the whole group,
//!   so no child (not even `sleep 100 &`) outlives the call; there a daemon must
//!   detach itself (`setsid`).
//! - The working folder persists across calls: an `EXIT` trap writes the shell's
//!   final `pwd -P` to a temp file, so a `cd` is known without parsing the command. A
//!   folder outside the project (and `additionalDirectories`) is not kept: the next
//!   call starts in the project root again, and the result says so.
//! - stdout and stderr stream to the progress sink as they come; the result keeps the
//!   last 30,000 characters of both, in arrival order, and the exit code.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use decode_policy::Tool;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use super::files::parse_input;
use super::paths::{display, expand_home, lexical, resolve_links, within};
use super::{ToolContext, ToolHandler, ToolProgress, ToolResult};
use crate::sandbox::{Inputs, Plan, ReadDeny, Support};

/// The timeout when `timeout_s` is not given.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout a call may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// The result keeps this many characters (the last ones).
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// After the shell exits, how long output still held open by leftovers is awaited
/// before the group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(100);
/// After the group is killed, how long the pipes are drained.
const KILL_DRAIN: Duration = Duration::from_millis(500);

#[derive(Debug, Deserialize)]
struct BashInput {
    command: String,
    #[serde(default)]
    timeout_s: Option<f64>,
    /// What the command is for, in a few words: shown to the person when they are
    /// asked (read by the gated path, not here).
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
}

fn check(i: &BashInput) -> Result<(), String> {
    if i.command.trim().is_empty() {
        return Err("bash: `command` is empty".into());
    }
    if let Some(t) = i.timeout_s {
        if !t.is_finite() || t <= 0.0 {
            return Err("bash: `timeout_s` must be a positive number of seconds".into());
        }
    }
    Ok(())
}

/// The `bash` tool.
pub struct BashTool;

#[async_trait]
impl ToolHandler for BashTool {
    fn tool(&self) -> Tool {
        Tool::Bash
    }

    fn description(&self) -> &'static str {
        "Runs a shell command with `bash -c` and returns its combined stdout and stderr (the \
         last 30,000 characters) and exit code. The working folder persists between calls (a \
         `cd` sticks, within the project). No input is available on stdin; don't start \
         interactive programs. The command and everything it started are stopped when it \
         finishes, when the timeout passes (`timeout_s`, default 120, at most 600) or when \
         the run is cancelled."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run."},
                "description": {"type": "string", "description": "What this command does and why, in 5-10 words (shown to the person if they are asked to approve it), e.g. \"Run the unit tests\"."},
                "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_SECS, "description": "Seconds before the command is stopped (default 120, at most 600)."}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        check(&parse_input::<BashInput>("bash", input)?)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: BashInput = match parse_input("bash", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        if let Err(e) = check(&input) {
            return ToolResult::error(e);
        }
        run(&input, ctx).await
    }
}

/// Quotes `s` for the shell (single quotes).
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Which stream a chunk came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

/// Turns byte chunks into text, keeping a UTF-8 sequence split across chunks whole.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(std::str::from_utf8(&rest[..valid]).unwrap_or_default());
                    match e.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            rest = &rest[valid + bad..];
                        }
                        None => {
                            rest = &rest[valid..];
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    fn finish(&mut self) -> String {
        let s = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        s
    }
}

/// The combined output, keeping only the tail.
#[derive(Default)]
struct Tail {
    text: String,
    dropped: usize,
}

impl Tail {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        if self.text.len() > 4 * MAX_OUTPUT_CHARS + 4096 {
            self.trim();
        }
    }

    /// Keeps the last [`MAX_OUTPUT_CHARS`] characters.
    fn trim(&mut self) {
        let chars = self.text.chars().count();
        if chars > MAX_OUTPUT_CHARS {
            let cut = chars - MAX_OUTPUT_CHARS;
            let idx = self
                .text
                .char_indices()
                .nth(cut)
                .map(|(i, _)| i)
                .unwrap_or(self.text.len());
            self.text.drain(..idx);
            self.dropped += cut;
        }
    }

    fn finish(mut self) -> (String, usize) {
        self.trim();
        (self.text, self.dropped)
    }
}

/// Kills the command's process group when dropped, so that even a call whose future
/// is dropped midway (an aborted task) leaves no process behind.
struct GroupGuard(i32);

/// A small process that kills a command's group when Decode dies: it waits for the end
/// of a pipe whose other end only Decode holds, so the pipe closes when Decode ends,
/// however it ends (a `kill -9` included), and then it kills the group. When the
/// command ends first, the watcher is killed before the group is (see [`GroupGuard`]),
/// so it never signals a group number that could have been reused.
struct DeathWatch {
    child: tokio::process::Child,
    /// Decode's end of the pipe: never written, closed by Decode's death.
    _pipe: tokio::process::ChildStdin,
}

impl DeathWatch {
    fn start(pgid: i32) -> Option<DeathWatch> {
        let spawned = tokio::process::Command::new("sh")
            .args([
                "-c",
                "cat >/dev/null; kill -s KILL -- \"-$1\" 2>/dev/null",
                "decode-watch",
            ])
            .arg(pgid.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: a signal to the command's group or to Decode's does not
            // take it along.
            .process_group(0)
            .spawn();
        match spawned {
            Ok(mut child) => {
                let pipe = child.stdin.take()?;
                Some(DeathWatch { child, _pipe: pipe })
            }
            Err(e) => {
                tracing::warn!(pgid, error = %e, "cannot start the watcher of a command run outside the sandbox");
                None
            }
        }
    }
}

impl Drop for DeathWatch {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

/// Stops a command on timeout or cancel. In the sandbox, process 1 of the command's
/// process namespace is killed first (the kernel then ends everything in it), and
/// the process waiting outside ends only once that is done: what Decode does next
/// (taking back what the command planted) never races a process of the command's
/// still running. Outside the sandbox (or when process 1 cannot be found), the
/// command's process group is killed.
fn stop(pgid: i32, sandboxed: bool) {
    if sandboxed {
        let children = std::fs::read_to_string(format!("/proc/{pgid}/task/{pgid}/children"))
            .unwrap_or_default();
        let mut killed = false;
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            killed |= nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok();
        }
        if killed {
            return;
        }
    }
    kill_group(pgid);
}

fn kill_group(pgid: i32) {
    match killpg(Pid::from_raw(pgid), Signal::SIGKILL) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pgid, error = %e, "could not kill a command's process group"),
    }
}

/// The folders a `cd` may leave the shell in: the project root and the settings'
/// `additionalDirectories`.
fn allowed_dirs(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut dirs = vec![ctx.project_root.clone()];
    for d in ctx.active.settings().additional_directories {
        let p = lexical(&ctx.project_root, &expand_home(d.trim(), ctx.active.home()));
        dirs.push(resolve_links(&p));
    }
    dirs
}

enum End {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
    WaitFailed(String),
}

async fn run(input: &BashInput, ctx: &ToolContext) -> ToolResult {
    let mut notes: Vec<String> = Vec::new();
    let timeout = timeout_of(input, &mut notes);
    let cwd = working_folder(ctx, &mut notes);

    let pwd_file = match tempfile::Builder::new().prefix("decode-pwd-").tempfile() {
        Ok(f) => f,
        Err(e) => return ToolResult::error(format!("bash: cannot create a temp file: {e}")),
    };
    let script = format!(
        "trap 'pwd -P >{} 2>/dev/null' EXIT\n{}",
        shell_quote(&pwd_file.path().to_string_lossy()),
        input.command
    );

    // The sandbox, unless the person approved this very call (or the machine has
    // none: said once in the log, the status bar and `decode run`'s start line).
    let sandbox = match crate::sandbox::support() {
        Support::Enforced { bwrap, .. } if !ctx.approved_by_person => {
            match prepare_sandbox(ctx).await {
                Ok(s) => Some((bwrap.clone(), s)),
                Err(why) => return ToolResult::error(why),
            }
        }
        _ => None,
    };
    let (mut child, held_mounts, mut listeners) = match spawn(ctx, &sandbox, &cwd, &script).await {
        Ok(started) => started,
        Err(e) => return ToolResult::error(format!("bash: cannot start bash: {e}")),
    };
    // The command's own network: Decode's proxy serves its listening sockets,
    // judging each destination for this call (docs/network.md).
    let net_judge = (!listeners.is_empty()).then(|| {
        std::sync::Arc::new(super::net_ask::CallJudge::new(
            ctx,
            &input.command,
            cwd.clone(),
        ))
    });
    let _proxy = net_judge
        .as_ref()
        .map(|j| serve_proxy(ctx, j.clone(), std::mem::take(&mut listeners)));
    let Some(pid) = child.id() else {
        return ToolResult::error("bash: the shell exited before it could be watched");
    };
    let pgid = pid as i32;
    let _guard = GroupGuard(pgid);
    // Outside the sandbox nothing else ties the command to Decode's life: a watcher
    // kills its group if Decode dies, and a record lets the next Decode do it if even
    // the watcher is gone (decode-core running_groups). Dropped before `_guard`.
    let (_record, _watcher) = if sandbox.is_none() {
        (
            decode_core::running_groups::register(pgid),
            DeathWatch::start(pgid),
        )
    } else {
        (None, None)
    };
    tracing::debug!(pgid, cwd = %cwd.display(), sandboxed = sandbox.is_some(), "bash started");

    let (end, tail) = collect(&mut child, ctx, timeout, pgid, sandbox.is_some()).await;
    follow_working_folder(ctx, pwd_file.path(), &cwd, &mut notes);
    let ended_by_itself = matches!(end, End::Exited(_));
    let exit_code = match &end {
        End::Exited(s) => s.code(),
        _ => None,
    };
    let (mut text, is_error) = result_text(tail, end, timeout, notes);
    let mut bound = None;
    if let Some((_, s)) = &sandbox {
        bound = after_sandbox(
            ctx,
            s,
            net_judge.as_deref(),
            &cwd,
            is_error && ended_by_itself,
            &mut text,
        )
        .await;
    }
    // The command's copy of the mount table is taken apart off the critical path.
    if let Some(m) = held_mounts {
        tokio::task::spawn_blocking(move || drop(m));
    }
    let cwd_now = display(&ctx.project_root, &ctx.session.cwd());
    tracing::debug!(pgid, cwd = %cwd_now, "bash finished");
    ToolResult {
        content: text,
        is_error,
        diff: None,
        sandboxed: Some(sandbox.is_some()),
        bound,
        exit_code,
        duration_ms: None,
        ..ToolResult::default()
    }
}

/// The command's time limit (capped, with a note saying so).
fn timeout_of(input: &BashInput, notes: &mut Vec<String>) -> Duration {
    let (timeout, capped) = match input.timeout_s {
        Some(t) if t > MAX_TIMEOUT_SECS as f64 => (Duration::from_secs(MAX_TIMEOUT_SECS), true),
        Some(t) => (Duration::from_secs_f64(t), false),
        None => (Duration::from_secs(DEFAULT_TIMEOUT_SECS), false),
    };
    if capped {
        notes.push(format!(
            "[timeout_s was capped at {MAX_TIMEOUT_SECS} seconds]"
        ));
    }
    timeout
}

/// The session's shell folder, or the project root (with a note) when it is gone.
fn working_folder(ctx: &ToolContext, notes: &mut Vec<String>) -> PathBuf {
    let mut cwd = ctx.session.cwd();
    if !cwd.is_dir() {
        notes.push(format!(
            "[the working folder {} no longer exists; the command ran in the project root]",
            cwd.display()
        ));
        cwd = ctx.project_root.clone();
        ctx.session.set_cwd(cwd.clone());
    }
    cwd
}

/// A started command's shell, its mount table when it is held, and the listening
/// sockets of its own network.
type Spawned = (
    tokio::process::Child,
    Option<std::fs::File>,
    Vec<std::net::TcpListener>,
);

/// Starts `script` in `sandbox`, or as the person's own process when there is none.
/// The environment is Decode's, with the pager and prompts switched off; in the
/// sandbox without keys, tokens and service addresses.
async fn spawn(
    ctx: &ToolContext,
    sandbox: &Option<(PathBuf, Prepared)>,
    cwd: &std::path::Path,
    script: &str,
) -> std::io::Result<Spawned> {
    let env = command_env(sandbox.as_ref().map(|(_, s)| s), ctx.approved_by_person);
    match sandbox {
        Some((bwrap, s)) => spawn_sandboxed(bwrap, s, cwd, script, &env).await,
        None => {
            let mut c = tokio::process::Command::new("bash");
            c.process_group(0).arg("-c").arg(script).current_dir(cwd);
            Ok((with_io(&mut c, &env).spawn()?, None, Vec::new()))
        }
    }
}

/// Streams the command's output (to the progress sink and a tail) until it ends —
/// by itself, at its time limit or when the run is stopped — and then what it
/// or its leftovers still write, briefly; the group is gone when this returns.
async fn collect(
    child: &mut tokio::process::Child,
    ctx: &ToolContext,
    timeout: Duration,
    pgid: i32,
    sandboxed: bool,
) -> (End, Tail) {
    // Readers: one task per stream, chunks to one channel so arrival order is kept.
    let (tx, mut rx) = mpsc::unbounded_channel::<(Stream, Vec<u8>)>();
    let mut readers = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = out.read(&mut buf).await {
                if n == 0 || tx.send((Stream::Out, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        }));
    }
    if let Some(mut err) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 || tx.send((Stream::Err, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        }));
    }
    drop(tx);

    let mut tail = Tail::default();
    let mut out_text = Utf8Stream::default();
    let mut err_text = Utf8Stream::default();
    let mut take = |stream: Stream, bytes: &[u8], tail: &mut Tail| {
        let text = match stream {
            Stream::Out => out_text.push(bytes),
            Stream::Err => err_text.push(bytes),
        };
        if text.is_empty() {
            return;
        }
        (ctx.progress)(match stream {
            Stream::Out => ToolProgress::Stdout { text: text.clone() },
            Stream::Err => ToolProgress::Stderr { text: text.clone() },
        });
        tail.push(&text);
    };

    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut streams_open = true;
    let end = loop {
        tokio::select! {
            status = child.wait() => break match status {
                Ok(s) => End::Exited(s),
                Err(e) => End::WaitFailed(e.to_string()),
            },
            chunk = rx.recv(), if streams_open => match chunk {
                Some((stream, bytes)) => take(stream, &bytes, &mut tail),
                None => streams_open = false,
            },
            _ = &mut deadline => {
                stop(pgid, sandboxed);
                break End::TimedOut;
            }
            _ = ctx.cancel.cancelled() => {
                stop(pgid, sandboxed);
                break End::Cancelled;
            }
        }
    };
    if !matches!(end, End::Exited(_)) {
        // Reap the shell itself (it was killed with its group). In the sandbox, the
        // process waiting outside ends only once the command's process namespace is
        // empty; should it not (a process stuck in the kernel), the group goes.
        if tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .is_err()
        {
            kill_group(pgid);
            let _ = child.wait().await;
        }
    }

    // Output still buffered, or held open by leftovers: a short grace, then the group
    // is killed and the pipes drained.
    let grace = tokio::time::sleep(EXIT_GRACE);
    tokio::pin!(grace);
    let mut killed_leftovers = false;
    let drain_until = tokio::time::sleep(EXIT_GRACE + KILL_DRAIN);
    tokio::pin!(drain_until);
    while streams_open {
        tokio::select! {
            chunk = rx.recv() => match chunk {
                Some((stream, bytes)) => take(stream, &bytes, &mut tail),
                None => streams_open = false,
            },
            _ = &mut grace, if !killed_leftovers => {
                killed_leftovers = true;
                kill_group(pgid);
            }
            _ = &mut drain_until => break,
        }
    }
    // Whatever is left of the group goes now (background jobs whose output was
    // redirected elsewhere).
    kill_group(pgid);
    for r in readers {
        r.abort();
    }
    let rest = out_text.finish() + &err_text.finish();
    if !rest.is_empty() {
        tail.push(&rest);
    }

    (end, tail)
}

/// Follows the shell to the folder it ended in, when that is inside the project or an
/// allowed folder; elsewhere the session goes back to the project root (with a note).
fn follow_working_folder(
    ctx: &ToolContext,
    pwd_file: &std::path::Path,
    cwd: &std::path::Path,
    notes: &mut Vec<String>,
) {
    // Where the shell ended up (the command could have swapped the file for a link,
    // a FIFO or a huge file: only a small regular file is read).
    if let Some(text) = read_pwd_file(pwd_file) {
        let new = PathBuf::from(text.trim_end_matches('\n'));
        if new.is_absolute() && new.is_dir() && new != *cwd {
            if allowed_dirs(ctx).iter().any(|d| within(&new, d)) {
                ctx.session.set_cwd(new);
            } else {
                notes.push(format!(
                    "[the working folder was reset to the project root: {} is outside the project]",
                    new.display()
                ));
                ctx.session.set_cwd(ctx.project_root.clone());
            }
        }
    }
}

/// What the model reads: the output's tail, how the command ended, and the notes;
/// and whether it failed.
fn result_text(tail: Tail, end: End, timeout: Duration, notes: Vec<String>) -> (String, bool) {
    let (mut text, dropped) = tail.finish();
    if dropped > 0 {
        text = format!(
            "[output truncated: the first {dropped} characters were dropped; the last {MAX_OUTPUT_CHARS} follow]\n{text}"
        );
    }
    let (status_note, is_error) = match end {
        End::Exited(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
            (Some(0), _) => (None, false),
            (Some(code), _) => (Some(format!("[exit code {code}]")), true),
            (None, Some(sig)) => (Some(format!("[terminated by signal {sig}]")), true),
            (None, None) => (Some("[terminated]".to_string()), true),
        },
        End::TimedOut => (
            Some(format!(
                "[timed out after {} s: the command and every process it started were stopped]",
                fmt_secs(timeout)
            )),
            true,
        ),
        End::Cancelled => (
            Some("[cancelled: the command and every process it started were stopped]".into()),
            true,
        ),
        End::WaitFailed(e) => (Some(format!("[could not wait for the command: {e}]")), true),
    };
    if text.trim().is_empty() && status_note.is_none() {
        text = "(no output)".to_string();
    }
    while text.ends_with('\n') {
        text.pop();
    }
    for note in status_note.into_iter().chain(notes) {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&note);
    }
    (text, is_error)
}

/// After a sandboxed command: its clean-up, the network's saved answers and report,
/// the bound it hit when it failed by itself (`failed_by_itself`), and what it
/// changed for the next command; each a line of `text`.
async fn after_sandbox(
    ctx: &ToolContext,
    s: &Prepared,
    net_judge: Option<&super::net_ask::CallJudge>,
    cwd: &std::path::Path,
    failed_by_itself: bool,
    text: &mut String,
) -> Option<decode_protocol::SandboxBound> {
    let quarantine = crate::running_commands::quarantine_folder();
    for note in s.plan.undo(&quarantine, &s.held) {
        text.push_str(&format!("\n[{note}]"));
    }
    if let Some(j) = net_judge {
        // "Always allow" of a host: saved now that nothing of the command's runs.
        for note in j.save() {
            text.push_str(&format!("\n[{note}]"));
        }
        // What the proxy refused, and what the person was asked.
        j.end().await;
        for line in j.report() {
            text.push_str(&format!("\n[{line}]"));
        }
    }
    // A command that failed because it crossed a bound says which, and where.
    // A host the policy refused is not offered outside: the policy holds.
    let refused = net_judge.is_some_and(|j| j.refused_any());
    let mut bound = None;
    if failed_by_itself {
        bound = crate::sandbox::bounds::find(text, &s.plan, cwd)
            .filter(|b| !(refused && b.kind == decode_protocol::BoundKind::Network));
        if let Some(b) = &bound {
            text.push_str(&format!("\n[sandbox: {}]", b.message));
        }
    }
    // What this command changed is seen by the next one; a repository it
    // created keeps nothing git would run.
    for note in ctx
        .session
        .rescan_for_sandbox(s.deny.clone(), s.inputs.extra_writable(), s.started)
        .await
    {
        text.push_str(&format!("\n[sandbox: {note}]"));
    }
    bound
}

/// The proxy for one command: a task serving each listening socket of its network,
/// ended (with the listeners) when the returned guard is dropped.
fn serve_proxy(
    ctx: &ToolContext,
    judge: std::sync::Arc<super::net_ask::CallJudge>,
    listeners: Vec<std::net::TcpListener>,
) -> crate::net::Serving {
    crate::net::serve(ctx.resolver.clone(), judge, listeners)
}

/// The environment of a command: Decode's, with pagers and git's prompts switched
/// off and `$TMPDIR` set (the gate reads an unset one as /tmp); in the sandbox
/// (`sandboxed`), without the variables it keeps out (keys, tokens, services).
fn command_env(
    sandboxed: Option<&Prepared>,
    approved: bool,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let tmpdir = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "/tmp".into());
    let overrides: [(&str, std::ffi::OsString); 4] = [
        ("PAGER", "cat".into()),
        ("GIT_PAGER", "cat".into()),
        ("TMPDIR", tmpdir),
        ("GIT_TERMINAL_PROMPT", "0".into()),
    ];
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(k, _)| !overrides.iter().any(|(o, _)| k == o))
        .filter(|(k, _)| match sandboxed {
            Some(s) => crate::sandbox::env::removed(k, &s.inputs.user.env_pass).is_none(),
            // Approved to run outside: the person's services stay (an ssh agent, the
            // display) and so do their tokens (a push the person approved needs
            // them), but no command inherits the keys Decode itself reads.
            None if approved => !k.to_str().is_none_or(crate::sandbox::env::is_provider_key),
            // No sandbox on this machine: still no key or token in a command nobody
            // approved.
            None => !k.to_str().is_none_or(crate::sandbox::env::is_secret_var),
        })
        .collect();
    env.extend(overrides.into_iter().map(|(k, v)| (k.into(), v)));
    // In the sandbox's own network the proxy is the only way out: the usual
    // variables point at it (and replace any of Decode's own).
    if sandboxed.is_some() && crate::sandbox::own_network() {
        let proxy = crate::net::proxy_env();
        env.retain(|(k, _)| !proxy.iter().any(|(p, _)| p == k));
        env.extend(proxy);
    }
    env.sort();
    env
}

/// Stdin from nothing, stdout and stderr piped, exactly `env`, killed if dropped.
fn with_io<'a>(
    c: &'a mut tokio::process::Command,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> &'a mut tokio::process::Command {
    c.env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
}

/// Starts `script` in the sandbox `s`: in the shell started ahead for it when there
/// is one, else entering the kept sandbox (built by bubblewrap the first time),
/// else with bubblewrap for this one command. The process returned leads the
/// command's process group; with it, the command's mount table when it is held.
async fn spawn_sandboxed(
    bwrap: &std::path::Path,
    s: &Prepared,
    cwd: &std::path::Path,
    script: &str,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> std::io::Result<(
    tokio::process::Child,
    Option<std::fs::File>,
    Vec<std::net::TcpListener>,
)> {
    use crate::sandbox::warm;
    let own_network = crate::sandbox::own_network() && crate::net::commands_get_the_proxy();
    let build = |plan: Plan| {
        let bwrap = bwrap.to_path_buf();
        async move {
            tokio::task::spawn_blocking(move || warm::for_plan(&bwrap, &plan))
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r)
        }
    };
    let mut plan = s.plan.clone();
    let mut kept = build(plan.clone()).await;
    if kept.is_err() && warm::enabled() {
        // Something it mounts went away meanwhile (a server of the person's
        // stopped, taking its socket along): the sandbox is planned again.
        plan = Plan::new(&s.gate, &s.scan, &s.inputs);
        kept = build(plan.clone()).await;
    }
    match kept {
        Ok(w) => {
            let key = warm::env_key(env);
            let spare = if script.len() <= warm::SPARE_MAX_TEXT {
                w.take_spare(key).await
            } else {
                None
            };
            // The next command's shell starts now, while this one runs.
            w.prepare_spare(env.to_vec(), own_network);
            if let Some(spare) = spare {
                let bash_env = env
                    .iter()
                    .find(|(k, _)| k == "BASH_ENV")
                    .map(|(_, v)| v.as_os_str());
                match spare.start(cwd, bash_env, script) {
                    Ok(started) => return Ok((started.child, started.mounts, started.listeners)),
                    Err(e) => {
                        tracing::debug!(error = %e, "the shell started ahead could not take the command")
                    }
                }
            }
            warm::ENTERED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let spawn = |own_network: bool| {
                let mut c = tokio::process::Command::new("bash");
                c.arg("-c").arg(script);
                with_io(&mut c, env);
                let l = warm::apply(&w, cwd, own_network, &mut c)?;
                let child = c.spawn()?;
                Ok::<_, std::io::Error>((child, warm::take_listeners(l)))
            };
            let (child, listeners) = match spawn(own_network) {
                Ok(r) => r,
                Err(e) if own_network => {
                    // The kept sandbox's network, without a way out.
                    tracing::warn!(error = %e, "cannot give a command a network of its own; it runs without network");
                    spawn(false)?
                }
                Err(e) => return Err(e),
            };
            Ok((child, None, listeners))
        }
        Err(e) => {
            // bubblewrap for this one command: slower, as safe.
            if warm::enabled() {
                tracing::warn!(error = %e, "cannot keep a sandbox warm; bubblewrap runs the command");
            }
            let mut c = plan.bwrap(bwrap, cwd);
            // Its own network (bubblewrap's) gets the proxy's listeners too.
            let net = own_network
                .then(crate::sandbox::BwrapProxy::new)
                .transpose()?;
            if let Some(n) = &net {
                n.pass(&mut c);
            }
            c.process_group(0)
                .arg("--")
                .arg("bash")
                .arg("-c")
                .arg(script)
                .current_dir(cwd);
            let child = with_io(&mut c, env).spawn()?;
            let listeners = match net {
                Some(n) => n.listeners().await,
                None => Vec::new(),
            };
            Ok((child, None, listeners))
        }
    }
}

/// A project's hook started in the sandbox a `bash` call of the project gets
/// (docs/permissions.md, "Hooks"): the same bounds, the same environment without
/// keys and tokens, stdin piped. [`SandboxedHook::finish`] cleans up after it as
/// after a command.
pub(crate) struct SandboxedHook {
    prepared: Prepared,
    /// The proxy serving its own network, while it runs.
    _proxy: Option<crate::net::Serving>,
}

impl SandboxedHook {
    /// Starts `command` (`sh -c`) in `cwd` in the project's sandbox, with `extra`
    /// variables; `Err` says why it cannot run there (no sandbox on this machine, or
    /// none can be made for this project now) — it is then not run at all.
    pub(crate) async fn start(
        ctx: &ToolContext,
        command: &str,
        cwd: &std::path::Path,
        extra: &[(&str, &std::ffi::OsStr)],
    ) -> Result<(tokio::process::Child, SandboxedHook), String> {
        let bwrap = match crate::sandbox::support() {
            Support::Enforced { bwrap, .. } => bwrap.clone(),
            Support::Unavailable { why } => {
                return Err(format!(
                    "not run: a project's hooks run only in the sandbox, and there is none on this machine ({why})"
                ))
            }
        };
        let prepared = prepare_sandbox(ctx)
            .await
            .map_err(|why| format!("not run: no sandbox could be made for it: {why}"))?;
        let mut env = command_env(Some(&prepared), false);
        env.extend(extra.iter().map(|(k, v)| ((*k).into(), (*v).to_owned())));
        let mut c = prepared.plan.bwrap(&bwrap, cwd);
        // Its own network's only way out is the proxy, judged by the host policy
        // (a host it would ask about is refused: a hook has nobody to ask).
        let net = (crate::sandbox::own_network() && crate::net::commands_get_the_proxy())
            .then(crate::sandbox::BwrapProxy::new)
            .transpose()
            .map_err(|e| format!("could not start in the sandbox: {e}"))?;
        if let Some(n) = &net {
            n.pass(&mut c);
        }
        c.process_group(0)
            .arg("--")
            .arg("sh")
            .arg("-c")
            .arg(command)
            .current_dir(cwd)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = c
            .spawn()
            .map_err(|e| format!("could not start in the sandbox: {e}"))?;
        let proxy = match net {
            Some(n) => {
                let judge = std::sync::Arc::new(crate::net::GateJudge::new(ctx.active.clone()));
                Some(crate::net::serve(
                    ctx.resolver.clone(),
                    judge,
                    n.listeners().await,
                ))
            }
            None => None,
        };
        Ok((
            child,
            SandboxedHook {
                prepared,
                _proxy: proxy,
            },
        ))
    }

    /// Takes away what the hook created where the sandbox keeps things read-only
    /// (returns what was taken, one note each) and lets the next command see what it
    /// changed.
    pub(crate) async fn finish(self, ctx: &ToolContext) -> Vec<String> {
        let s = self.prepared;
        let quarantine = crate::running_commands::quarantine_folder();
        let mut notes = s.plan.undo(&quarantine, &s.held);
        notes.extend(
            ctx.session
                .rescan_for_sandbox(s.deny.clone(), s.inputs.extra_writable(), s.started)
                .await,
        );
        notes
    }
}

/// One command's sandbox, made before it starts and kept until its clean-up.
struct Prepared {
    plan: Plan,
    /// What the plan was made from (to make it again).
    gate: std::sync::Arc<decode_policy::Gate>,
    scan: std::sync::Arc<crate::sandbox::Scan>,
    inputs: Inputs,
    deny: ReadDeny,
    /// The folders checked at the end, held open since before the start.
    held: crate::sandbox::Held,
    /// When the sandbox was made (just before the command started).
    started: std::time::SystemTime,
    /// Recorded before the command starts, dropped after its undo.
    _record: Option<crate::sandbox::Running>,
}

/// The sandbox of a command in `ctx`'s project now, or why none can be made (the
/// command then does not run).
async fn prepare_sandbox(ctx: &ToolContext) -> Result<Prepared, String> {
    let inputs = Inputs::for_state(&ctx.active);
    let deny = ReadDeny::of(&ctx.active, &inputs.homes);
    let scan = ctx
        .session
        .sandbox_scan(&deny, &inputs.extra_writable())
        .await;
    let only_approved =
        "Only a command the person approves when asked runs here (outside the sandbox)";
    if scan.truncated {
        // The walk stopped before the end: a repository beyond it would have
        // hooks and a config the sandbox does not keep read-only.
        return Err(format!(
            "bash: not run: this project holds more than {} files and folders, too \
             many for Decode to find every git folder, .envrc and .vscode in it, so \
             its sandbox cannot protect them. {only_approved}: ask the person, or remove \
             generated files from the project.",
            crate::sandbox::MAX_SCAN_ENTRIES
        ));
    }
    if !scan.deny_unenforced.is_empty() {
        return Err(format!(
            "bash: not run: the `read` deny rule{} {} cover{} folders too big for Decode to \
             find every file in them, so its sandbox cannot hide them. {only_approved}: ask \
             the person, or narrow the rule.",
            if scan.deny_unenforced.len() == 1 {
                ""
            } else {
                "s"
            },
            scan.deny_unenforced
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if scan.deny_unenforced.len() == 1 {
                "s"
            } else {
                ""
            },
        ));
    }
    if scan.denied_reads.len() > crate::sandbox::denied::MAX_HIDDEN {
        return Err(format!(
            "bash: not run: `read` deny rules cover {} files and folders here, more than the \
             {} Decode's sandbox hides one by one. {only_approved}: ask the person, or make \
             the rules cover whole folders.",
            scan.denied_reads.len(),
            crate::sandbox::denied::MAX_HIDDEN
        ));
    }
    let gate = ctx.active.gate();
    let plan = Plan::new(&gate, &scan, &inputs);
    let held = plan.hold();
    let record = plan.register();
    Ok(Prepared {
        plan,
        gate,
        scan,
        inputs,
        deny,
        held,
        started: std::time::SystemTime::now(),
        _record: record,
    })
}

/// The shell's last working folder from the `EXIT` trap's file: at most 8 KiB of a
/// regular file, opened without following a link and without blocking.
fn read_pwd_file(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(8192).read_to_string(&mut text).ok()?;
    Some(text)
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_chunks() {
        let mut s = Utf8Stream::default();
        let bytes = "é€".as_bytes();
        assert_eq!(s.push(&bytes[..1]), "");
        assert_eq!(s.push(&bytes[1..3]), "é");
        assert_eq!(s.push(&bytes[3..]), "€");
        assert_eq!(s.push(b"\xffa"), "\u{FFFD}a");
    }

    #[test]
    fn tail_keeps_the_last_characters() {
        let mut t = Tail::default();
        for _ in 0..10 {
            t.push(&"x".repeat(MAX_OUTPUT_CHARS / 2));
        }
        t.push("END");
        let (text, dropped) = t.finish();
        assert_eq!(text.chars().count(), MAX_OUTPUT_CHARS);
        assert!(text.ends_with("END"));
        assert_eq!(dropped, 5 * MAX_OUTPUT_CHARS + 3 - MAX_OUTPUT_CHARS);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("a'b"), r"'a'\''b'");
    }
}
