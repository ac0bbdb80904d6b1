//! MCP servers through the same gate (docs/mcp.md), against real servers written by
//! others — `@modelcontextprotocol/server-everything` and `server-filesystem` from npm,
//! `mcp-server-git` from PyPI — and a hostile one of ours (tests/data/hostile_mcp.py:
//! it lies about readOnlyHint, returns escape sequences and huge results, sends
//! malformed JSON-RPC, hangs and crashes).
//!
//! The real servers are installed once into a cache folder (`$DECODE_MCP_CACHE`, else
//! `$XDG_CACHE_HOME/decode-tests/mcp`, else `~/.cache/decode-tests/mcp`); a test that
//! needs one is skipped, saying so on stderr, only when it is not in the cache and its
//! registry cannot be reached.

// A skip and a first install say so on stderr.
#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use decode_core::decision::{DecisionAnswer, DecisionRequest, DecisionSurface};
use decode_core::state::ActiveState;
use decode_core::TrustStore;
use decode_engine::agent_loop::{AgentLoop, LoopConfig, LoopEvent, Outcome};
use decode_engine::mcp::{McpHub, Status};
use decode_engine::providers::ProviderKind;
use decode_engine::tools::{call_tool, ToolContext};
use decode_policy::{Mode, Verdict};
use decode_test_support::TempProject;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::fake_model::*;

const NPM_PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];
const PYPI_PACKAGE: &str = "mcp-server-git==2026.10.19";

fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("DECODE_MCP_CACHE") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    base.join("decode-tests/mcp")
}

fn unreachable(output: &str) -> bool {
    [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ENETUNREACH",
        "network request",
        "Temporary failure in name resolution",
        "Failed to establish a new connection",
        "No matching distribution",
        "Could not find a version",
    ]
    .iter()
    .any(|m| output.contains(m))
}

/// Installs once (under a lock, in place: a virtualenv cannot move) and returns the
/// folder, or `None` when the registry cannot be reached. The folder counts only once
/// its stamp is written, after a complete install.
fn installed(name: &str, install: impl FnOnce(&Path) -> std::process::Output) -> Option<PathBuf> {
    let root = cache_root();
    std::fs::create_dir_all(&root).unwrap();
    let dir = root.join(name);
    let lock = std::fs::File::create(root.join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    if dir.join(".installed").exists() {
        return Some(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    eprintln!("installing {name} into {} (once)", dir.display());
    let out = install(&dir);
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        if unreachable(&text) {
            eprintln!("SKIPPED: {name} is not cached and its registry cannot be reached:\n{text}");
            return None;
        }
        panic!("installing {name} failed:\n{text}");
    }
    std::fs::write(dir.join(".installed"), "").unwrap();
    Some(dir)
}

/// `server-everything`'s and `server-filesystem`'s entry scripts.
fn npm_servers() -> Option<(PathBuf, PathBuf)> {
    let dir = installed("npm-2026.8.31", |d| {
        Command::new("npm")
            .args([
                "install",
                "--no-save",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(d)
            .args(NPM_PACKAGES)
            .output()
            .expect("npm runs")
    })?;
    let m = dir.join("node_modules/@modelcontextprotocol");
    Some((
        m.join("server-everything/dist/index.js"),
        m.join("server-filesystem/dist/index.js"),
    ))
}

/// `mcp-server-git` in a virtualenv.
fn git_server() -> Option<PathBuf> {
    let dir = installed("pypi-mcp-server-git-2026.10.19", |d| {
        let venv = Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(d)
            .output()
            .expect("python3 runs");
        if !venv.status.success() {
            return venv;
        }
        Command::new(d.join("bin/pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                PYPI_PACKAGE,
            ])
            .output()
            .expect("pip runs")
    })?;
    Some(dir.join("bin/mcp-server-git"))
}

fn hostile() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile_mcp.py")
}

/// A project, an isolated home with Decode's config and data folders, the state opened
/// from disk (so trust, approvals and the person's marks count).
struct Env {
    tmp: TempProject,
    config: PathBuf,
    data: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = TempProject::new().unwrap();
        let config = tmp.home.join(".config/decode");
        let data = tmp.home.join(".local/share/decode");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        Env { tmp, config, data }
    }

    fn root(&self) -> &Path {
        &self.tmp.project
    }

    fn user_servers(&self, servers: Value) {
        std::fs::write(
            self.config.join("mcp.json"),
            json!({"mcpServers": servers}).to_string(),
        )
        .unwrap();
    }

    fn project_servers(&self, servers: Value) {
        std::fs::write(
            self.root().join(".mcp.json"),
            json!({"mcpServers": servers}).to_string(),
        )
        .unwrap();
    }

    fn trust(&self) {
        TrustStore::open(&self.data).trust(self.root()).unwrap();
    }

    fn state(&self, mode: Mode) -> Arc<ActiveState> {
        let (s, _) =
            ActiveState::open(self.root(), &self.tmp.home, &self.data, None, Some(mode)).unwrap();
        Arc::new(s)
    }

    fn hub(&self, state: &Arc<ActiveState>) -> Arc<McpHub> {
        McpHub::open_with(Arc::clone(state), &self.config)
    }
}

/// A surface answering every ask with `answer`, keeping what it was asked.
struct Bot {
    answer: DecisionAnswer,
    seen: Mutex<Vec<DecisionRequest>>,
}

#[async_trait::async_trait]
impl DecisionSurface for Bot {
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer {
        self.seen.lock().unwrap().push(request);
        self.answer.clone()
    }
}

fn bot(answer: DecisionAnswer) -> Arc<Bot> {
    Arc::new(Bot {
        answer,
        seen: Mutex::new(Vec::new()),
    })
}

async fn call(
    hub: &Arc<McpHub>,
    state: &Arc<ActiveState>,
    surface: Arc<Bot>,
    name: &str,
    input: Value,
) -> decode_engine::tools::CallOutcome {
    let handler = hub
        .handler(name)
        .unwrap_or_else(|| panic!("no handler for {name}"));
    let ctx = ToolContext::new(Arc::clone(state), surface);
    call_tool(handler.as_ref(), input, &ctx).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_list_and_call_tools_through_the_gate_in_the_sandbox() {
    let (Some((everything, filesystem)), Some(git)) = (npm_servers(), git_server()) else {
        return;
    };
    let env = Env::new();
    std::fs::write(env.root().join("notes.txt"), "hello from the project\n").unwrap();
    std::fs::create_dir_all(env.root().join(".decode")).unwrap();
    std::fs::write(env.root().join(".decode/settings.json"), "{}\n").unwrap();
    let repo = env.root();
    assert!(Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(repo)
        .status()
        .unwrap()
        .success());
    env.user_servers(json!({
        "everything": {"command": "node", "args": [everything, "stdio"]},
        "fs": {"command": "node", "args": [filesystem, env.root()]},
        "git": {"command": git, "args": ["--repository", env.root()]},
    }));
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    for s in hub.servers() {
        assert_eq!(s.status, Status::Ready, "{}: {:?}", s.name, s.detail);
        if decode_engine::sandbox::problem().is_none() {
            assert_eq!(s.sandboxed, Some(true), "{}", s.name);
        }
    }
    let names: Vec<String> = hub.tools().into_iter().map(|t| t.name).collect();
    for n in [
        "mcp__everything__echo",
        "mcp__fs__read_text_file",
        "mcp__git__git_status",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
    }

    // Default mode asks; the person sees which tool, and what the server claims.
    let ask = bot(DecisionAnswer::AllowOnce);
    let out = call(
        &hub,
        &state,
        Arc::clone(&ask),
        "mcp__everything__echo",
        json!({"message": "hi there"}),
    )
    .await;
    assert_eq!(out.decision.verdict, Verdict::Ask);
    assert!(out.ran && !out.result.is_error, "{}", out.result.content);
    assert!(
        out.result.content.contains("hi there"),
        "{}",
        out.result.content
    );
    let seen = ask.seen.lock().unwrap().clone();
    let DecisionRequest::Permission {
        mcp: Some(info), ..
    } = &seen[0]
    else {
        panic!("{seen:?}")
    };
    assert_eq!(info.name, "mcp__everything__echo");
    assert_eq!(info.read_only_hint, Some(true), "the hint is shown");

    // Bypass: images come back as data, the environment holds only what the entry names.
    state.set_mode(Mode::Bypass);
    let none = bot(DecisionAnswer::Deny { feedback: None });
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__everything__get-tiny-image",
        json!({}),
    )
    .await;
    assert_eq!(out.result.images.len(), 1, "{}", out.result.content);
    assert_eq!(out.result.images[0].mime_type, "image/png");
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__everything__get-env",
        json!({}),
    )
    .await;
    assert!(
        out.result.content.contains("PATH"),
        "{}",
        out.result.content
    );
    assert!(
        !out.result.content.contains("CARGO_PKG_NAME"),
        "{}",
        out.result.content
    );
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__fs__read_text_file",
        json!({"path": env.root().join("notes.txt")}),
    )
    .await;
    assert!(
        out.result.content.contains("hello from the project"),
        "{}",
        out.result.content
    );
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__git__git_status",
        json!({"repo_path": env.root()}),
    )
    .await;
    assert!(!out.result.is_error, "{}", out.result.content);
    assert!(
        out.result.content.to_lowercase().contains("branch"),
        "{}",
        out.result.content
    );
    // The sandbox keeps the project's permission files read-only, even for a server.
    if decode_engine::sandbox::problem().is_none() {
        let out = call(
            &hub,
            &state,
            Arc::clone(&none),
            "mcp__fs__write_file",
            json!({"path": env.root().join(".decode/settings.json"), "content": "{\"permissions\":{\"allow\":[\"bash\"]}}"}),
        )
        .await;
        assert!(out.result.is_error, "{}", out.result.content);
        assert_eq!(
            std::fs::read_to_string(env.root().join(".decode/settings.json")).unwrap(),
            "{}\n"
        );
    }
    assert!(none.seen.lock().unwrap().is_empty());
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_asks_in_default_denies_in_plan_and_asks_in_auto_unless_marked_or_allowed() {
    let env = Env::new();
    env.user_servers(json!({"h": {"command": "python3", "args": [hostile()]}}));
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    assert_eq!(
        hub.servers()[0].status,
        Status::Ready,
        "{:?}",
        hub.servers()[0].detail
    );

    // `wipe` says it only reads: never trusted.
    let deny = bot(DecisionAnswer::Deny {
        feedback: Some("no".into()),
    });
    let out = call(
        &hub,
        &state,
        Arc::clone(&deny),
        "mcp__h__wipe",
        json!({"target": "/"}),
    )
    .await;
    assert_eq!(out.decision.verdict, Verdict::Ask);
    assert!(!out.ran);
    state.set_mode(Mode::Edit);
    let out = call(&hub, &state, Arc::clone(&deny), "mcp__h__wipe", json!({})).await;
    assert_eq!(out.decision.verdict, Verdict::Ask);
    state.set_mode(Mode::Plan);
    let out = call(&hub, &state, Arc::clone(&deny), "mcp__h__wipe", json!({})).await;
    assert_eq!(out.decision.verdict, Verdict::Deny);
    assert!(!out.ran);
    state.set_mode(Mode::Auto);
    let out = call(&hub, &state, Arc::clone(&deny), "mcp__h__wipe", json!({})).await;
    assert_eq!(
        out.decision.verdict,
        Verdict::Ask,
        "{}",
        out.decision.reason
    );
    assert!(out.decision.capped);
    assert_eq!(
        deny.seen.lock().unwrap().len(),
        3,
        "default, edit and auto asked; plan denied"
    );

    // Marked read-only in the person's own settings: runs in auto and plan.
    std::fs::write(
        env.config.join("settings.json"),
        r#"{"mcp": {"h": {"readOnlyTools": ["wipe"]}}}"#,
    )
    .unwrap();
    let out = call(
        &hub,
        &state,
        Arc::clone(&deny),
        "mcp__h__wipe",
        json!({"target": "x"}),
    )
    .await;
    assert_eq!(
        out.decision.verdict,
        Verdict::Allow,
        "{}",
        out.decision.reason
    );
    assert!(out.ran);
    state.set_mode(Mode::Plan);
    assert!(
        call(&hub, &state, Arc::clone(&deny), "mcp__h__wipe", json!({}))
            .await
            .ran
    );
    // A rule naming the server lifts the auto-mode ask.
    std::fs::remove_file(env.config.join("settings.json")).unwrap();
    state.set_mode(Mode::Auto);
    std::fs::create_dir_all(env.root().join(".decode")).unwrap();
    env.trust();
    std::fs::write(
        env.root().join(".decode/settings.json"),
        r#"{"permissions": {"allow": ["mcp__h__*"]}}"#,
    )
    .unwrap();
    let out = call(&hub, &state, Arc::clone(&deny), "mcp__h__wipe", json!({})).await;
    assert_eq!(
        out.decision.verdict,
        Verdict::Allow,
        "{}",
        out.decision.reason
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_projects_server_never_starts_and_a_changed_command_line_asks_again() {
    let env = Env::new();
    // In the project: the sandbox keeps the home read-only.
    let marker = env.root().join("started");
    let entry =
        |extra: &str| json!({"command": "python3", "args": [hostile(), "--marker", marker, extra]});
    env.project_servers(json!({"proj": entry("a")}));
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    assert_eq!(hub.servers()[0].status, Status::Untrusted);
    assert!(!marker.exists(), "an untrusted project's server started");

    env.trust();
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    assert_eq!(hub.servers()[0].status, Status::NeedsApproval);
    assert!(!marker.exists(), "an unapproved server started");
    assert_eq!(hub.pending_approvals().len(), 1);
    hub.answer("proj", true).unwrap();
    hub.start().await;
    assert_eq!(
        hub.servers()[0].status,
        Status::Ready,
        "{:?}",
        hub.servers()[0].detail
    );
    assert!(marker.exists());
    hub.shutdown().await;
    std::fs::remove_file(&marker).unwrap();

    // The repository changes the command line: it asks again, and does not start.
    env.project_servers(json!({"proj": entry("b")}));
    let hub = env.hub(&state);
    hub.start().await;
    let s = &hub.servers()[0];
    assert_eq!(s.status, Status::NeedsApproval);
    assert!(
        s.detail.as_deref().unwrap().contains("changed"),
        "{:?}",
        s.detail
    );
    assert!(hub.pending_approvals()[0].1, "the command line changed");
    assert!(!marker.exists());
    // Refused: stays off.
    hub.answer("proj", false).unwrap();
    hub.start().await;
    assert_eq!(hub.servers()[0].status, Status::Refused);
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_server_is_escaped_capped_reported_and_restarted_at_most_twice() {
    let env = Env::new();
    let counter = env.root().join("starts");
    env.user_servers(json!({
        "h": {"command": "python3", "args": [hostile(), "--counter", counter], "timeout": 700},
        "ok": {"command": "python3", "args": [hostile()]},
    }));
    let state = env.state(Mode::Bypass);
    let hub = env.hub(&state);
    hub.start().await;
    let none = bot(DecisionAnswer::Deny { feedback: None });
    let starts = || std::fs::read_to_string(&counter).unwrap().lines().count();

    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__h__escapes",
        json!({}),
    )
    .await;
    let c = &out.result.content;
    assert!(
        !c.contains('\u{1b}') && !c.contains('\u{7}') && !c.contains('\u{202e}'),
        "{c:?}"
    );
    assert!(c.contains("\\x1b[2J"), "{c}");
    let d = hub
        .tools()
        .into_iter()
        .find(|t| t.name == "mcp__h__escapes")
        .unwrap()
        .description;
    assert!(!d.contains('\u{1b}'), "descriptions are escaped too: {d:?}");

    let out = call(&hub, &state, Arc::clone(&none), "mcp__h__huge", json!({})).await;
    assert!(
        out.result.content.len() < 40_000,
        "{}",
        out.result.content.len()
    );
    assert!(out.result.content.contains("output truncated"));

    let out = call(&hub, &state, Arc::clone(&none), "mcp__h__svg", json!({})).await;
    assert!(out.result.images.is_empty());
    let out = call(&hub, &state, Arc::clone(&none), "mcp__h__fail", json!({})).await;
    assert!(out.result.is_error && out.result.content.contains("it went wrong"));

    // Malformed, hang, crash: each reported, each restarting the server.
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__h__malformed",
        json!({}),
    )
    .await;
    assert!(out.result.is_error);
    assert!(
        out.result.content.contains("malformed message"),
        "{}",
        out.result.content
    );
    assert!(
        out.result.content.contains("restart 1 of 2"),
        "{}",
        out.result.content
    );
    let t = std::time::Instant::now();
    let out = call(&hub, &state, Arc::clone(&none), "mcp__h__hang", json!({})).await;
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    assert!(
        out.result.content.contains("did not answer within"),
        "{}",
        out.result.content
    );
    assert!(
        out.result.content.contains("restart 2 of 2"),
        "{}",
        out.result.content
    );
    assert_eq!(starts(), 3);
    let out = call(&hub, &state, Arc::clone(&none), "mcp__h__crash", json!({})).await;
    assert!(
        out.result.content.contains("crashing on purpose"),
        "{}",
        out.result.content
    );
    assert!(
        out.result.content.contains("does not restart it again"),
        "{}",
        out.result.content
    );
    assert_eq!(starts(), 3, "restarted at most twice");
    let s = hub.servers().into_iter().find(|s| s.name == "h").unwrap();
    assert_eq!(s.status, Status::Failed);
    assert_eq!(s.restarts, 2);
    // Its tools are gone; the other server goes on.
    assert!(hub.handler("mcp__h__escapes").is_none());
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__ok__wipe",
        json!({"target": "t"}),
    )
    .await;
    assert!(
        out.ran && out.result.content.contains("wiped t"),
        "{}",
        out.result.content
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_cancels_a_running_call() {
    let env = Env::new();
    env.user_servers(json!({"h": {"command": "python3", "args": [hostile()]}}));
    let state = env.state(Mode::Bypass);
    let hub = env.hub(&state);
    hub.start().await;
    let handler = hub.handler("mcp__h__hang").unwrap();
    let ctx = ToolContext::new(Arc::clone(&state), bot(DecisionAnswer::AllowOnce));
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let t = std::time::Instant::now();
    let out = call_tool(handler.as_ref(), json!({}), &ctx).await;
    assert!(t.elapsed() < std::time::Duration::from_secs(10));
    assert!(
        out.result.content.contains("cancelled"),
        "{}",
        out.result.content
    );
    // Stopping a call is not a failure of the server.
    assert_eq!(hub.servers()[0].status, Status::Ready);
    assert_eq!(hub.servers()[0].restarts, 0);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_an_mcp_tool_the_person_approves_and_the_result_reaches_the_model() {
    let env = Env::new();
    env.user_servers(json!({"h": {"command": "python3", "args": [hostile()]}}));
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Seq::new(vec![
            sse(openai_turn(
                "",
                &[("c1", "mcp__h__wipe", r#"{"target":"tmp"}"#)],
            )),
            sse(openai_turn("Done.", &[])),
        ]))
        .mount(&server)
        .await;
    let surface = bot(DecisionAnswer::AllowOnce);
    let rec = Recorder::default();
    let mut agent = AgentLoop::new(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        Arc::clone(&state),
        surface.clone(),
        LoopConfig::default(),
    )
    .with_sink(rec.sink())
    .with_mcp(Arc::clone(&hub));
    let outcome = agent.run(Some("wipe tmp"), CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    let first = body_json(&server.received_requests().await.unwrap()[0]);
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"mcp__h__wipe"), "{offered:?}");
    assert_eq!(surface.seen.lock().unwrap().len(), 1);
    let LoopEvent::ToolResult {
        name, content, ran, ..
    } = &rec.results()[0]
    else {
        unreachable!()
    };
    assert_eq!(name, "mcp__h__wipe");
    assert!(ran);
    assert_eq!(content, "wiped tmp");
    let second = body_json(&server.received_requests().await.unwrap()[1]);
    assert!(second.to_string().contains("wiped tmp"));
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_is_offered_only_the_tools_its_own_agent_lists() {
    let env = Env::new();
    env.user_servers(json!({"h": {"command": "python3", "args": [hostile()]}}));
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    let server = wiremock::MockServer::start().await;
    let task = r#"{"agent":"explore","description":"look","prompt":"look around"}"#;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Seq::new(vec![
            sse(openai_turn("", &[("t1", "task", task)])),
            sse(openai_turn("Nothing here.", &[])),
            sse(openai_turn("Done.", &[])),
        ]))
        .mount(&server)
        .await;
    let mut agent = AgentLoop::new(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        Arc::clone(&state),
        bot(DecisionAnswer::AllowOnce),
        LoopConfig::default(),
    )
    .with_mcp(Arc::clone(&hub));
    let outcome = agent.run(Some("look"), CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    let requests = server.received_requests().await.unwrap();
    let offered = |i: usize| -> Vec<String> {
        body_json(&requests[i])["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    // The parent (build) is offered the server's tool and `task`…
    let parent = offered(0);
    assert!(parent.iter().any(|t| t == "mcp__h__wipe"), "{parent:?}");
    assert!(parent.iter().any(|t| t == "task"), "{parent:?}");
    // …the subagent (explore) neither.
    let child = offered(1);
    assert!(child.iter().any(|t| t == "read"), "{child:?}");
    assert!(
        !child.iter().any(|t| t.starts_with("mcp__") || t == "task"),
        "{child:?}"
    );
    assert!(body_json(&requests[2])
        .to_string()
        .contains("Nothing here."));
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_runs_within_the_bounds_of_the_bash_sandbox() {
    if let Some(why) = decode_engine::sandbox::problem() {
        eprintln!("skipped: no sandbox on this machine ({why})");
        return;
    }
    let env = Env::new();
    let ssh = env.tmp.home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_ed25519"), "PRIVATE KEY\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let home_marker = env.tmp.home.join("started");
    // The interpreter itself, not a launcher (pyenv's shim sets variables of its own).
    let python = String::from_utf8(
        Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    env.user_servers(json!({
        "h": {"command": python, "args": [hostile()], "env": {"GREETING": "hello"}},
        "home": {"command": python, "args": [hostile(), "--marker", home_marker]},
    }));
    let state = env.state(Mode::Bypass);
    let hub = env.hub(&state);
    hub.start().await;

    // A server that writes to the home when it starts fails, and the report says why.
    let home = hub
        .servers()
        .into_iter()
        .find(|s| s.name == "home")
        .unwrap();
    assert_eq!(home.status, Status::Failed);
    let detail = home.detail.unwrap_or_default();
    assert!(detail.contains("Read-only file system"), "{detail}");
    assert!(!home_marker.exists());
    let h = hub.servers().into_iter().find(|s| s.name == "h").unwrap();
    assert_eq!(h.status, Status::Ready, "{:?}", h.detail);
    assert_eq!(h.sandboxed, Some(true));

    let none = bot(DecisionAnswer::Deny { feedback: None });
    // Writes: in the project, yes; in the home, no.
    let made = env.root().join("made.txt");
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__h__touch",
        json!({"path": made}),
    )
    .await;
    assert!(!out.result.is_error, "{}", out.result.content);
    assert!(made.exists());
    let outside = env.tmp.home.join("made.txt");
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__h__touch",
        json!({"path": outside}),
    )
    .await;
    assert!(out.result.is_error, "{}", out.result.content);
    assert!(!outside.exists());
    // Secrets are hidden.
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__h__cat",
        json!({"path": ssh.join("id_ed25519")}),
    )
    .await;
    assert!(out.result.is_error, "{}", out.result.content);
    assert!(!out.result.content.contains("PRIVATE KEY"));
    // A network of its own: the host's ports are out of reach.
    let out = call(
        &hub,
        &state,
        Arc::clone(&none),
        "mcp__h__connect",
        json!({"host": "127.0.0.1", "port": port}),
    )
    .await;
    assert!(
        out.result.is_error && out.result.content.contains("could not connect"),
        "{}",
        out.result.content
    );
    // Only the basics and the entry's own variables.
    let out = call(&hub, &state, Arc::clone(&none), "mcp__h__env", json!({})).await;
    let vars: serde_json::Map<String, Value> = serde_json::from_str(&out.result.content).unwrap();
    assert_eq!(vars.get("GREETING"), Some(&json!("hello")));
    let basics = [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
        "GREETING", // and PWD, which bubblewrap sets for the working folder
        "PWD",
    ];
    // And the proxy's variables: its own network's only way out (docs/network.md).
    let proxy: Vec<String> = decode_engine::net::proxy_env()
        .into_iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        vars.get("HTTP_PROXY"),
        Some(&json!("http://127.0.0.1:3128"))
    );
    for k in vars.keys() {
        assert!(
            basics.contains(&k.as_str()) || proxy.contains(k),
            "{k} reached the server"
        );
    }
    drop(listener);
    hub.shutdown().await;
}

/// The window's chat (and `decode run`'s, both on the Workbench): the project's servers
/// start before the first turn, their tools are offered, and a call is an ordinary tool
/// call of the loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_starts_the_projects_servers_and_offers_their_tools() {
    use decode_engine::channel::DecisionChannel;
    use decode_engine::chat::{ChatSession, ChatSetup};
    use decode_engine::providers::script::{Script, ScriptClient};
    use decode_engine::session::SessionStore;

    let env = Env::new();
    env.user_servers(json!({"h": {"command": "python3", "args": [hostile()]}}));
    let state = env.state(Mode::Bypass);
    let script: Script = serde_json::from_value(json!({"turns": [
        {"tool_calls": [{"name": "mcp__h__wipe", "input": {"target": "tmp"}}]},
        {"text": "Done."},
    ]}))
    .unwrap();
    let chat = Arc::new(ChatSession::new(
        Arc::clone(&state),
        Arc::new(DecisionChannel::new()),
        SessionStore::new(&env.data),
        ChatSetup::Ready {
            client: Arc::new(ScriptClient::new(script, Path::new("script.json"))),
            config: LoopConfig::default(),
        },
        None,
    ));
    assert_eq!(chat.mcp().servers()[0].status, Status::Stopped);
    let rec = Recorder::default();
    let outcome = chat.start("wipe tmp", rec.sink()).unwrap().await;
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(chat.mcp().servers()[0].status, Status::Ready);
    let LoopEvent::ToolResult {
        name, content, ran, ..
    } = &rec.results()[0]
    else {
        unreachable!()
    };
    assert_eq!(name, "mcp__h__wipe");
    assert!(ran);
    assert_eq!(content, "wiped tmp");
    chat.mcp().shutdown().await;
}

/// The window's on/off switch: a user server's file gets `"disabled": true` and the
/// server stops at once; turned on again it starts at once. A project's server is
/// approved or refused by the same switch (the record `decode mcp approve` writes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_switch_turns_servers_off_and_on_and_approves_project_servers() {
    let env = Env::new();
    env.user_servers(json!({"mine": {"command": "python3", "args": [hostile()]}}));
    let marker = env.root().join("proj-started");
    env.project_servers(
        json!({"proj": {"command": "python3", "args": [hostile(), "--marker", marker]}}),
    );
    env.trust();
    let state = env.state(Mode::Default);
    let hub = env.hub(&state);
    hub.start().await;
    let status = |name: &str| {
        hub.servers()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.status)
            .unwrap()
    };
    assert_eq!(status("mine"), Status::Ready);
    assert_eq!(status("proj"), Status::NeedsApproval);

    hub.set_enabled("mine", false).await.unwrap();
    assert_eq!(status("mine"), Status::Disabled);
    assert!(hub
        .tools()
        .iter()
        .all(|t| !t.name.starts_with("mcp__mine__")));
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(env.config.join("mcp.json")).unwrap())
            .unwrap();
    assert_eq!(file["mcpServers"]["mine"]["disabled"], json!(true));
    // A new hub (Decode opened again) keeps it off.
    assert_eq!(env.hub(&state).servers()[0].status, Status::Disabled);

    hub.set_enabled("mine", true).await.unwrap();
    assert_eq!(status("mine"), Status::Ready);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(env.config.join("mcp.json")).unwrap())
            .unwrap();
    assert!(
        file["mcpServers"]["mine"].get("disabled").is_none(),
        "{file}"
    );

    // The project's server: on = approved (it starts), off = refused (it stops).
    hub.set_enabled("proj", true).await.unwrap();
    assert_eq!(status("proj"), Status::Ready);
    assert!(marker.exists());
    assert!(hub.pending_approvals().is_empty());
    hub.set_enabled("proj", false).await.unwrap();
    assert_eq!(status("proj"), Status::Refused);
    assert!(hub
        .tools()
        .iter()
        .all(|t| !t.name.starts_with("mcp__proj__")));
    // Its file is the repository's: the switch never writes it.
    assert!(!std::fs::read_to_string(env.root().join(".mcp.json"))
        .unwrap()
        .contains("disabled"));
    assert!(hub.set_enabled("nope", true).await.is_err());
    hub.shutdown().await;
}
