//! Decode's hook inside the real clients: Claude Code and Gemini CLI installed from npm
//! at pinned versions, driven headless by a fake model on 127.0.0.1, with the hook
//! configured exactly as README.md and docs/hooks.md show it (the absolute path of
//! `decode`). A capped command (`git push`) must not run, and a denied one (`curl`,
//! under a deny rule) must be blocked with Decode's reason, which the model reads.
//!
//! The clients are installed once into a cache folder (`$DECODE_CLIENTS_CACHE`, else
//! `$XDG_CACHE_HOME/decode-tests/clients`, else `~/.cache/decode-tests/clients`), without
//! running their install scripts. A test is skipped, with a message saying so, only
//! when the client is not in the cache and the npm registry cannot be reached.

// A skip and a slow first install say so on stderr.
#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use decode_test_support::wire::{anthropic_turn, gemini_turn, sse};
use serde_json::{json, Value};
use wiremock::{MockServer, Request, Respond, ResponseTemplate};

use crate::common::Env;

/// The versions tested (docs/hooks.md names them).
const CLAUDE_CODE: (&str, &str) = ("@anthropic-ai/claude-code", "2.1.332");
const GEMINI_CLI: (&str, &str) = ("@google/gemini-cli", "0.61.0");

/// How long one client run may take before the test gives up on it.
const RUN_LIMIT: Duration = Duration::from_secs(120);

// -- The clients, from npm ------------------------------------------------------------

fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("DECODE_CLIENTS_CACHE") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
        });
    base.join("decode-tests/clients")
}

/// Whether npm's error output says the registry could not be reached.
fn unreachable(npm_output: &str) -> bool {
    [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "network request",
        "socket hang up",
    ]
    .iter()
    .any(|m| npm_output.contains(m))
}

/// The folder holding `PACKAGE@VERSION`'s `node_modules`, installed now if it is not
/// in the cache; `None` (with the reason on stderr) when the registry is unreachable.
fn installed((package, version): (&str, &str)) -> Option<PathBuf> {
    let root = cache_root();
    std::fs::create_dir_all(&root).expect("create the clients cache");
    let name = format!("{}-{version}", package.replace(['@', '/'], "_"));
    let dir = root.join(&name);
    let stamp = dir.join(".installed");
    // One installer at a time (other test processes may want the same client).
    let lock = std::fs::File::create(root.join(format!("{name}.lock"))).expect("lock file");
    lock.lock().expect("lock the clients cache");
    if stamp.exists() {
        return Some(dir);
    }
    let staging = root.join(format!("{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).unwrap();
    let spec = format!("{package}@{version}");
    eprintln!("installing {spec} from npm into {}", dir.display());
    let out = Command::new("npm")
        .args([
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&staging)
        .arg(&spec)
        .output()
        .expect("npm is installed (dev.sh needs it)");
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&staging);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if unreachable(&text) {
            eprintln!(
                "SKIPPED: {spec} is not in {} and the npm registry cannot be reached:\n{text}",
                root.display()
            );
            return None;
        }
        panic!("npm install {spec} failed:\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).expect("move the install into the cache");
    std::fs::write(&stamp, format!("{spec}\n")).unwrap();
    Some(dir)
}

/// Claude Code's native program for this machine (the npm package's install script,
/// not run here, would only copy it over its placeholder).
fn claude_program(dir: &Path) -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => panic!("no Claude Code build for {other}"),
    };
    let p = dir.join(format!(
        "node_modules/@anthropic-ai/claude-code-linux-{arch}/claude"
    ));
    assert!(p.is_file(), "{} is missing", p.display());
    p
}

fn gemini_program(dir: &Path) -> PathBuf {
    let p = dir.join("node_modules/@google/gemini-cli/bundle/gemini.js");
    assert!(p.is_file(), "{} is missing", p.display());
    p
}

// -- The project ------------------------------------------------------------------------

/// A git project on `main` with one commit, a bare remote beside it (a push that ran
/// would leave a branch there), and a deny rule for `curl`.
fn project(env: &Env) -> PathBuf {
    let remote = env.project.parent().unwrap().join("remote.git");
    git(
        env.project.parent().unwrap(),
        &["init", "-q", "--bare", "remote.git"],
    );
    git(&env.project, &["init", "-q", "-b", "main"]);
    env.write("README.md", "hello\n");
    git(&env.project, &["add", "README.md"]);
    git(
        &env.project,
        &[
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    );
    git(
        &env.project,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["Bash(curl *)"]}}"#,
    );
    remote
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The branches the remote has (empty: nothing was pushed).
fn remote_refs(remote: &Path) -> String {
    let out = Command::new("git")
        .args(["for-each-ref"])
        .current_dir(remote)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The hook command exactly as the docs show it, with this build's `decode`.
fn hook_command(agent: &str) -> String {
    format!("{} hook {agent}", env!("CARGO_BIN_EXE_decode"))
}

/// A client run with the isolated home and only the variables it needs.
fn client(env: &Env, program: &Path, vars: &[(&str, String)]) -> Command {
    let mut c = env.program(program);
    c.env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

/// Waits for `child` (killing it past `limit`), reading its output meanwhile.
fn finish(child: Child, limit: Duration) -> (Output, bool) {
    let id = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    let killer = std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < limit {
            if d.load(std::sync::atomic::Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY-free: kill by the child's own id.
        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
        true
    });
    let out = child.wait_with_output().expect("wait for the client");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let killed = killer.join().unwrap();
    (out, killed)
}

fn text(o: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

// -- The fake model -----------------------------------------------------------------------

/// Plays a fixed list of shell commands: the Nth model request of the main loop (the
/// one that offers the shell tool, after N-1 tool results) asks for the Nth command;
/// after the last, the model answers "done".
struct Script {
    commands: Vec<String>,
    anthropic: bool,
}

impl Script {
    fn anthropic_results(body: &Value) -> usize {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|c| c["type"] == "tool_result")
            .count()
    }

    fn gemini_results(body: &Value) -> usize {
        body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["parts"].as_array())
            .flatten()
            .filter(|p| p.get("functionResponse").is_some())
            .count()
    }
}

impl Respond for Script {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let path = req.url.path();
        if self.anthropic {
            if !path.starts_with("/v1/messages") || path.contains("count_tokens") {
                return ResponseTemplate::new(200).set_body_json(json!({"input_tokens": 10}));
            }
            let offers_bash = body["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "Bash"));
            let n = Script::anthropic_results(&body);
            let turn = match self.commands.get(n) {
                Some(cmd) if offers_bash => {
                    let args = json!({"command": cmd, "description": "as asked"}).to_string();
                    let id = format!("toolu_0{n}decode");
                    anthropic_turn("", &[(id.as_str(), "Bash", args.as_str())])
                }
                _ => anthropic_turn("done", &[]),
            };
            if body["stream"] == true {
                return sse(turn);
            }
            return ResponseTemplate::new(200).set_body_json(json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}));
        }
        if !path.contains(":streamGenerateContent") {
            return ResponseTemplate::new(404);
        }
        let offers_shell = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["functionDeclarations"].as_array())
            .flatten()
            .any(|f| f["name"] == "run_shell_command");
        let n = Script::gemini_results(&body);
        match self.commands.get(n) {
            Some(cmd) if offers_shell => {
                let args = json!({"command": cmd, "description": "as asked"}).to_string();
                sse(gemini_turn(
                    "",
                    &[("c", "run_shell_command", args.as_str())],
                ))
            }
            _ => sse(gemini_turn("done", &[])),
        }
    }
}

async fn fake_model(anthropic: bool, commands: impl FnOnce(&str) -> Vec<String>) -> MockServer {
    let server = MockServer::start().await;
    let commands = commands(&server.uri());
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Script {
            commands,
            anthropic,
        })
        .mount(&server)
        .await;
    server
}

async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

fn exfiltrated(reqs: &[Request]) -> bool {
    reqs.iter().any(|r| r.url.path() == "/exfil")
}

/// Every tool result the client sent back to the model, as text.
fn tool_results(reqs: &[Request]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in reqs {
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        for m in body["messages"].as_array().into_iter().flatten() {
            for c in m["content"].as_array().into_iter().flatten() {
                if c["type"] == "tool_result" {
                    out.push(c["content"].to_string());
                }
            }
        }
        for m in body["contents"].as_array().into_iter().flatten() {
            for p in m["parts"].as_array().into_iter().flatten() {
                if let Some(f) = p.get("functionResponse") {
                    out.push(f.to_string());
                }
            }
        }
    }
    out.dedup();
    out
}

// -- The tests ------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inside_claude_code_a_capped_push_does_not_run_and_a_denied_curl_is_blocked_with_decodes_reason(
) {
    let Some(dir) = tokio::task::spawn_blocking(|| installed(CLAUDE_CODE))
        .await
        .unwrap()
    else {
        return;
    };
    let program = claude_program(&dir);
    let env = Env::new();
    let remote = project(&env);
    let push = "git push origin main".to_string();
    // The fake model asks for the push, then a curl to itself.
    let server = fake_model(true, |url| {
        vec![push.clone(), format!("curl -s {url}/exfil")]
    })
    .await;
    let url = server.uri();
    // ~/.claude/settings.json exactly as the README shows it.
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*",
        "hooks": [{"type": "command", "command": hook_command("claude-code"), "timeout": 30}]}]}});
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::fs::write(
        env.home.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    // Claude Code's own rules would let both run (and acceptEdits is edit mode for
    // Decode, where a push is capped): only Decode's answers stop them.
    let mut cmd = client(
        &env,
        &program,
        &[
            ("ANTHROPIC_BASE_URL", url.clone()),
            ("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ],
    );
    cmd.args([
        "-p",
        "push the branch, then fetch the page",
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash(git push:*)",
        "Bash(curl:*)",
    ]);
    let child = cmd.spawn().expect("start Claude Code");
    let (out, killed) = tokio::task::spawn_blocking(move || finish(child, RUN_LIMIT))
        .await
        .unwrap();
    assert!(!killed, "Claude Code did not finish:\n{}", text(&out));
    let reqs = requests(&server).await;
    assert_eq!(remote_refs(&remote), "", "the push ran:\n{}", text(&out));
    assert!(!exfiltrated(&reqs), "the denied curl ran:\n{}", text(&out));
    let results = tool_results(&reqs);
    assert!(
        results.iter().any(|r| r.contains(
            "Decode: deny · deny rule · denied by rule bash(curl *) from .decode/settings.json (project)"
        )),
        "the model did not read Decode's reason: {results:#?}\n{}",
        text(&out)
    );
    // The push was asked about (headless: refused), not run.
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("Claude Code's JSON result ({e}):\n{}", text(&out)));
    let denied: Vec<String> = v["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            d["tool_input"]["command"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(denied.contains(&push), "{denied:?}\n{}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inside_gemini_cli_a_denied_curl_is_blocked_and_a_capped_push_waits_for_its_confirmation_even_in_yolo(
) {
    let Some(dir) = tokio::task::spawn_blocking(|| installed(GEMINI_CLI))
        .await
        .unwrap()
    else {
        return;
    };
    let program = gemini_program(&dir);
    let env = Env::new();
    let remote = project(&env);
    let push = "git push origin main".to_string();
    // The fake model asks for a curl to itself, then the push.
    let server = fake_model(false, |url| {
        vec![format!("curl -s {url}/exfil"), push.clone()]
    })
    .await;
    let url = server.uri();
    // ~/.gemini/settings.json: the README's hook, plus what a headless run against a
    // fake model needs (the API-key login, no usage statistics) and a Notification hook
    // that tells this test when Gemini CLI waits for the person's confirmation.
    let waiting = env.home.join("waiting-for-confirmation.json");
    let settings = json!({
        "hooks": {
            "BeforeTool": [{"matcher": "*",
                "hooks": [{"name": "decode", "type": "command",
                           "command": hook_command("gemini-cli"), "timeout": 30000}]}],
            "Notification": [{"matcher": "*",
                "hooks": [{"name": "test-observer", "type": "command",
                           "command": format!("cat > {}", waiting.display()), "timeout": 5000}]}]
        },
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false}
    });
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    std::fs::write(
        env.home.join(".gemini/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    // A trusted folder (else Gemini CLI turns YOLO off by itself).
    std::fs::write(
        env.home.join(".gemini/trustedFolders.json"),
        json!({ env.project.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let node = PathBuf::from("node");
    let mut cmd = client(
        &env,
        &node,
        &[
            ("GOOGLE_GEMINI_BASE_URL", url.clone()),
            ("GEMINI_API_KEY", "test-not-a-key".into()),
        ],
    );
    cmd.arg(&program).args([
        "-m",
        "gemini-2.5-flash",
        "-p",
        "fetch the page, then push the branch",
        "--yolo",
        "--output-format",
        "json",
    ]);
    let child = cmd.spawn().expect("start Gemini CLI");
    // The push waits for a confirmation nobody gives: once Gemini CLI says it waits,
    // the run is stopped.
    let w = waiting.clone();
    let (out, never_asked) = tokio::task::spawn_blocking(move || {
        let id = child.id();
        let watcher = std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < RUN_LIMIT {
                if std::fs::metadata(&w).is_ok_and(|m| m.len() > 0) {
                    // Give a run that wrongly went on the time to show it.
                    std::thread::sleep(Duration::from_secs(2));
                    let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        });
        let (out, _) = finish(child, RUN_LIMIT + Duration::from_secs(5));
        let asked = watcher.join().unwrap();
        (out, !asked)
    })
    .await
    .unwrap();
    let reqs = requests(&server).await;
    assert_eq!(remote_refs(&remote), "", "the push ran:\n{}", text(&out));
    assert!(!exfiltrated(&reqs), "the denied curl ran:\n{}", text(&out));
    assert!(!never_asked, "Gemini CLI never asked:\n{}", text(&out));
    let results = tool_results(&reqs);
    assert!(
        results.iter().any(|r| r.contains(
            "Tool execution blocked: Decode: deny · deny rule · denied by rule bash(curl *) from .decode/settings.json (project)"
        )),
        "the model did not read Decode's reason: {results:#?}\n{}",
        text(&out)
    );
    let asked: Value = serde_json::from_slice(&std::fs::read(&waiting).unwrap()).unwrap();
    assert_eq!(asked["notification_type"], "ToolPermission", "{asked}");
    assert_eq!(asked["details"]["command"], push.as_str(), "{asked}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Decode: ask · cap: external effects · git push has external effects"),
        "{}",
        text(&out)
    );
}
