//! `decode run`, `decode sessions` and `decode key` as a user runs them: a headless run
//! editing a temp project against a fake OpenAI-compatible server (127.0.0.1), exit
//! codes, JSON lines, a killed run resumed, and the keyring without a Secret Service.
//! Every run gets an isolated HOME and XDG folders and no API-key variables.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use decode_test_support::wire::{openai_turn, sse, Call, Seq};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common;

use common::{stderr, stdout, Env};

/// Where `decode run` keeps its transcripts under the isolated home.
fn sessions_dir(env: &Env) -> PathBuf {
    env.home.join(".local/share/decode/sessions")
}

// -- A fake OpenAI-compatible server ------------------------------------------------

/// One streamed OpenAI turn: text, then tool calls `(id, name, arguments)`.
fn turn(text: &str, calls: &[(&str, &str, Value)]) -> String {
    let args: Vec<String> = calls.iter().map(|(_, _, a)| a.to_string()).collect();
    let calls: Vec<Call<'_>> = calls
        .iter()
        .zip(&args)
        .map(|((id, name, _), a)| (*id, *name, a.as_str()))
        .collect();
    openai_turn(text, &calls)
}

async fn fake_server(turns: Vec<String>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Seq::new(turns.into_iter().map(sse).collect()))
        .mount(&server)
        .await;
    server
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

async fn run_async(env: &Env, args: &[&str]) -> Output {
    let mut cmd = env.cmd(args);
    tokio::task::spawn_blocking(move || cmd.output().expect("run decode"))
        .await
        .unwrap()
}

fn openai_args<'a>(base: &'a str, prompt: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--provider",
        "openai",
        "--base-url",
        base,
        "--model",
        "fake-coder",
        "-p",
        prompt,
    ]
}

// -- Tests ----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_run_edits_a_project_end_to_end() {
    let env = Env::new();
    env.write("src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n");
    let server = fake_server(vec![
        turn(
            "Let me read the code. ",
            &[("call_1", "read", json!({"path": "src/lib.rs"}))],
        ),
        turn(
            "Fixing the answer. ",
            &[(
                "call_2",
                "edit",
                json!({"path": "src/lib.rs", "old_string": "41", "new_string": "42"}),
            )],
        ),
        turn("Done: answer() now returns 42.", &[]),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let mut args = openai_args(&base, "make answer return 42");
    args.extend(["--mode", "edit"]);
    let out = run_async(&env, &args).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        env.read("src/lib.rs").as_deref(),
        Some("pub fn answer() -> u32 {\n    42\n}\n")
    );
    let text = stdout(&out);
    assert!(text.contains("Let me read the code."), "{text}");
    assert!(text.contains("→ read src/lib.rs"), "{text}");
    assert!(text.contains("→ edit src/lib.rs"), "{text}");
    assert!(text.contains("Done: answer() now returns 42."), "{text}");
    assert!(
        stderr(&out).contains("openai/fake-coder"),
        "{}",
        stderr(&out)
    );

    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    assert!(bodies[0].get("tools").is_some());
    assert!(bodies[2].to_string().contains("42"));
    // A local server gets no key.
    let reqs = server.received_requests().await.unwrap();
    assert!(reqs[0].headers.get("authorization").is_none());

    // The transcript is in the XDG data folder and listed.
    let files: Vec<_> = std::fs::read_dir(sessions_dir(&env)).unwrap().collect();
    assert_eq!(files.len(), 1);
    let listed = env.run(&["sessions", "--json"]);
    let list: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(list[0]["first_prompt"], "make answer return 42");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_without_a_terminal_is_denied_with_how_to_allow_it_and_exit_3() {
    let env = Env::new();
    let server = fake_server(vec![
        turn("", &[("c1", "bash", json!({"command": "cargo publish"}))]),
        turn("I could not publish.", &[]),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = run_async(&env, &openai_args(&base, "publish the crate")).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("nobody can answer"), "{text}");
    assert!(stderr(&out).contains("exit 3"), "{}", stderr(&out));
    let bodies = bodies(&server).await;
    let tool = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(tool.contains("no terminal"), "{tool}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_and_a_rule_that_allows() {
    let env = Env::new();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(echo *)"]}}"#,
    );
    let server = fake_server(vec![
        turn("", &[("c1", "bash", json!({"command": "echo json-mode"}))]),
        turn("Printed.", &[]),
    ])
    .await;
    // Rules of an untrusted project do not allow: trust it first.
    let trusted = env.run(&["trust", env.project.to_str().unwrap()]);
    assert!(trusted.status.success());
    let base = format!("{}/v1", server.uri());
    let mut args = openai_args(&base, "echo something");
    args.push("--json");
    let out = run_async(&env, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(
        lines[1],
        json!({"type": "user_prompt", "text": "echo something"})
    );
    let result = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["ran"], true);
    assert!(result["content"].as_str().unwrap().contains("json-mode"));
    assert_eq!(lines.last().unwrap()["type"], "done");
    assert_eq!(lines.last().unwrap()["outcome"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_failures_exit_1_with_one_sentence() {
    let env = Env::new();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_string(r#"{"error":{"message":"Invalid token","type":"auth"}}"#),
        )
        .mount(&server)
        .await;
    let base = format!("{}/v1", server.uri());
    let out = run_async(&env, &openai_args(&base, "hi")).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l
                .starts_with("decode: the API key was rejected by the OpenAI-compatible server")),
        "{err}"
    );

    // Nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let start = Instant::now();
    let out = run_async(&env, &openai_args(&base, "hi")).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "decode: could not reach {base}: is the server running?"
        )),
        "{}",
        stderr(&out)
    );
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_that_echoes_the_key_never_shows_logs_or_saves_it() {
    let env = Env::new();
    let key = "sk-ant-api03-Zq8vWm2KpL7xRt4NyB6cHd1FgJ9sUe3A";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(format!(
            r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key: {key}"}}}}"#
        )))
        .mount(&server)
        .await;
    let base = format!("{}/v1", server.uri());
    let mut cmd = env.cmd(&[
        "run",
        "--provider",
        "anthropic",
        "--base-url",
        &base,
        "--model",
        "claude-test",
        "-p",
        "hi",
    ]);
    cmd.env("ANTHROPIC_API_KEY", key).env("RUST_LOG", "debug");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("invalid x-api-key: [redacted key]"), "{err}");
    // Not on the terminal, not in the log, not in any saved session.
    let mut seen = vec![("stdout".to_string(), stdout(&out)), ("stderr".into(), err)];
    for dir in [
        env.home.join(".local/state/decode"),
        env.home.join(".local/share/decode"),
    ] {
        for entry in walk(&dir) {
            let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
            seen.push((entry.display().to_string(), text));
        }
    }
    assert!(
        seen.iter().any(|(p, _)| p.ends_with("decode.log")),
        "no log file written: {:?}",
        seen.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    let transcript = seen
        .iter()
        .find(|(p, _)| p.ends_with(".jsonl"))
        .unwrap_or_else(|| {
            panic!(
                "no session saved: {:?}",
                seen.iter().map(|(p, _)| p).collect::<Vec<_>>()
            )
        });
    assert!(transcript.1.contains("[redacted key]"), "{}", transcript.1);
    for (place, text) in seen {
        for part in [key, &key[..20], &key[key.len() - 20..]] {
            assert!(!text.contains(part), "{place} holds the key: {text}");
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn usage_and_setup_errors_exit_2_with_one_line() {
    let env = Env::new();
    let out = env.run(&["run", "--provider", "mistral", "-p", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "decode: unknown provider `mistral` (providers: gemini, anthropic, openai, script)"
    );

    let out = env.run(&["run", "--provider", "script"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    let out = env.run(&["run", "-p", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no model provider is configured"),
        "{}",
        stderr(&out)
    );

    let out = env.run(&["run", "--provider", "anthropic", "-p", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("no API key for anthropic: set ANTHROPIC_API_KEY"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    std::fs::create_dir_all(env.home.join(".config/decode")).unwrap();
    let cfg = env.home.join(".config/decode/config.json");
    std::fs::write(&cfg, "{\"provider\": \"openai\",\n \"model\": }\n").unwrap();
    let out = env.run(&["run", "-p", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(&format!("decode: {}:2:11:", cfg.display())),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&cfg).unwrap(),
        "{\"provider\": \"openai\",\n \"model\": }\n"
    );
}

#[test]
fn the_config_file_selects_the_provider() {
    let env = Env::new();
    let script = env.write(
        "s.json",
        r#"{"turns": [{"text": "configured script says hi"}]}"#,
    );
    std::fs::create_dir_all(env.home.join(".config/decode")).unwrap();
    std::fs::write(
        env.home.join(".config/decode/config.json"),
        json!({"provider": "script", "script": script, "maxTurns": 3}).to_string(),
    )
    .unwrap();
    let out = env.run(&["run", "-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("configured script says hi"));
}

/// Waits until the newest transcript holds `needle`; returns the session id.
fn wait_for_transcript(dir: &Path, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                if text.contains(needle) {
                    return e.path().file_stem().unwrap().to_string_lossy().into_owned();
                }
            }
        }
        assert!(Instant::now() < deadline, "no transcript with {needle}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_is_resumed_and_the_model_sees_the_earlier_conversation() {
    let env = Env::new();
    let script = env.write(
        "slow.json",
        &json!({"turns": [
            {"text": "Waiting for the build.", "tool_calls": [{"name": "sleep", "input": {"seconds": 30}}]},
            {"text": "never reached"}
        ]})
        .to_string(),
    );
    let mut child = env
        .cmd(&[
            "run",
            "--provider",
            "script",
            "--script",
            script.to_str().unwrap(),
            "-p",
            "first prompt: wait for the build",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = wait_for_transcript(&sessions_dir(&env), "tool_call_started");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let server = fake_server(vec![turn("You asked me to wait for the build.", &[])]).await;
    let base = format!("{}/v1", server.uri());
    let out = run_async(
        &env,
        &[
            "run",
            "--resume",
            &id,
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "fake-coder",
            "-p",
            "second prompt: what did I ask?",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(&format!("resuming session {id}")),
        "{}",
        stderr(&out)
    );

    let body = &bodies(&server).await[0];
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(msgs[1]["content"], "first prompt: wait for the build");
    assert_eq!(msgs[2]["content"], "Waiting for the build.");
    assert_eq!(msgs[2]["tool_calls"][0]["function"]["name"], "sleep");
    assert!(msgs[3]["content"].as_str().unwrap().contains("interrupted"));
    assert_eq!(msgs[4]["content"], "second prompt: what did I ask?");

    let transcript =
        std::fs::read_to_string(sessions_dir(&env).join(format!("{id}.jsonl"))).unwrap();
    assert!(transcript.contains("first prompt: wait for the build"));
    assert!(transcript.contains("You asked me to wait for the build."));
    for line in transcript.lines() {
        serde_json::from_str::<Value>(line).expect("every transcript line is JSON");
    }
}

#[test]
fn keys_without_a_secret_service_point_to_the_environment() {
    let env = Env::new();
    let mut child = env
        .cmd(&["key", "set", "openai"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"sk-very-secret-test-key\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("decode: could not store the key: the system keyring is not available"),
        "{err}"
    );
    assert!(
        err.contains("set OPENAI_API_KEY (or DECODE_API_KEY) in the environment instead"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("sk-very-secret") && !stdout(&out).contains("sk-very-secret"));

    let out = env.run(&["key", "set", "script"]);
    assert_eq!(out.status.code(), Some(2));
    let out = env.run(&["key", "delete", "nope"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A headless run decides every call with the settings on disk at that moment: a deny
/// rule the person adds while `decode run` works applies to its next call.
#[test]
fn decode_run_follows_a_settings_change_made_while_it_runs() {
    use std::io::{BufRead, BufReader};
    let env = Env::new();
    assert!(env
        .run(&["trust", env.project.to_str().unwrap()])
        .status
        .success());
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(echo *)"]}}"#,
    );
    let script = env.write(
        "script.json",
        &json!({"turns": [
            {"text": "first", "tool_calls": [{"name": "bash", "input": {"command": "echo first-call"}}]},
            {"text": "second", "delay_ms": 1500, "tool_calls": [{"name": "bash", "input": {"command": "echo second-call"}}]},
            {"text": "all done"}
        ]})
        .to_string(),
    );
    let mut child = env
        .cmd(&[
            "run",
            "--provider",
            "script",
            "--script",
            script.to_str().unwrap(),
            "--json",
            "-p",
            "go",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut events = Vec::new();
    let mut edited = false;
    for line in stdout.lines() {
        let line = line.unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if !edited && v["type"] == "tool_result" {
            // The first call ran under the allow rule; now the person changes the file.
            let path = env.project.join(".decode/settings.json");
            let tmp = env.project.join(".decode/settings.json.new");
            std::fs::write(
                &tmp,
                r#"{"permissions": {"deny": ["bash(echo second*)"], "allow": ["bash(echo *)"]}}"#,
            )
            .unwrap();
            std::fs::rename(&tmp, &path).unwrap();
            edited = true;
        }
        events.push(v);
    }
    child.wait().unwrap();
    let results: Vec<&Value> = events
        .iter()
        .filter(|v| v["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    assert_eq!(results[0]["ran"], true);
    assert_eq!(results[1]["ran"], false, "{:?}", results[1]);
    assert_eq!(results[1]["verdict"], "deny");
}

/// A 5 MB argument is stored once in the transcript (its `tool_call_started` leaves it
/// to the model turn that holds it) and a 20 MB output's progress is not kept beyond a
/// bound; the session still resumes with the whole argument.
#[test]
fn huge_arguments_and_outputs_are_stored_once() {
    let env = Env::new();
    let content = "x".repeat(5 << 20);
    let script = env.write(
        "script.json",
        &json!({"turns": [
            {"text": "writing", "tool_calls": [{"name": "write", "input": {"path": "big.txt", "content": content}}]},
            {"text": "printing", "tool_calls": [{"name": "bash", "input": {"command": "head -c 20000000 /dev/zero | tr '\\0' y"}}]},
            {"text": "done"},
            {"text": "resumed fine"}
        ]})
        .to_string(),
    );
    let out = env.run(&[
        "run",
        "--provider",
        "script",
        "--script",
        script.to_str().unwrap(),
        "--mode",
        "auto",
        "-p",
        "go",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::metadata(env.project.join("big.txt"))
            .unwrap()
            .len(),
        5 << 20
    );
    let dir = sessions_dir(&env);
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    #[allow(clippy::print_stderr)]
    {
        eprintln!("session file for a 5 MB argument and a 20 MB output: {size} bytes");
    }
    assert!(
        size < (5 << 20) + (1 << 20),
        "the transcript holds {size} bytes"
    );
    // The history still has the whole argument for the started call.
    let id = file.file_stem().unwrap().to_str().unwrap().to_string();
    let resumed = env.run(&[
        "run",
        "--provider",
        "script",
        "--script",
        script.to_str().unwrap(),
        "--resume",
        &id,
        "--json",
        "-p",
        "again",
    ]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(stdout(&resumed).contains("resumed fine"));
}

#[test]
fn key_set_refuses_several_lines_and_an_oversized_key_and_stores_nothing() {
    let env = Env::new();
    let big = "k".repeat(50 * 1024 * 1024);
    let cases: [(&[u8], &str); 4] = [
        (b"sk-first-line\nsk-second-line\n", "lines"),
        (b"sk-one\r\nsk-two", "lines"),
        (big.as_bytes(), "longer than 8 KiB"),
        (b"sk-with a space\n", "space or a control character"),
    ];
    for (input, says) in cases {
        let out = env.run_bytes(&["key", "set", "openai"], input);
        assert_eq!(out.status.code(), Some(2), "{says}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{says}: {err}");
        // The key is never echoed.
        assert!(
            !err.contains("sk-") && !stdout(&out).contains("sk-"),
            "{err}"
        );
    }
}

#[test]
fn a_subagent_prints_indented_under_its_task_and_its_session_resumes() {
    let env = Env::new();
    env.write("README.md", "hello from the readme\n");
    let script = env.write(
        "s.json",
        &json!({
            "turns": [
                {"text": "Asking explore.", "tool_calls": [{"name": "task", "input": {
                    "agent": "explore", "description": "read the readme",
                    "prompt": "What does README.md say?"}}]},
                {"text": "Explore says hello."},
                {"text": "Resumed and still fine."}
            ],
            "subagents": {"explore": [
                {"text": "Reading.", "tool_calls": [{"name": "read", "input": {"path": "README.md"}}]},
                {"text": "It says hello from the readme."}
            ]}
        })
        .to_string(),
    );
    let s = script.to_str().unwrap();
    let out = env.run(&[
        "run",
        "--provider",
        "script",
        "--script",
        s,
        "-p",
        "readme?",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("→ task explore: read the readme"), "{text}");
    assert!(text.contains("  explore │ → read README.md"), "{text}");
    assert!(
        text.contains("  explore │ It says hello from the readme."),
        "{text}"
    );
    assert!(
        text.contains("  ✓ It says hello from the readme."),
        "{text}"
    );
    assert!(text.contains("Explore says hello."), "{text}");

    // The transcript keeps the subagent's steps, and the session resumes on them:
    // the model's conversation holds the task's result, not the subagent's turns.
    let id = wait_for_transcript(&sessions_dir(&env), r#""type":"subagent""#);
    let out = env.run(&[
        "run",
        "--resume",
        &id,
        "--provider",
        "script",
        "--script",
        s,
        "-p",
        "and now?",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Resumed and still fine."));
}
