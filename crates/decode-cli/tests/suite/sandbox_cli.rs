//! The bash sandbox seen from the command line: `decode doctor`, the start line of
//! `decode run`, and the degraded case (no bubblewrap) said out loud.

use crate::common;

use common::{json, stderr, stdout, Env};

const NO_BWRAP: &str = "/nonexistent/bwrap";

/// A run of the script provider that makes one bash call hidden from the gate
/// (python writes the permission file), in auto mode.
fn run_hidden_write(env: &Env, bwrap: Option<&str>) -> std::process::Output {
    env.write(".decode/settings.json", "{}\n");
    let script = env.write(
        "s.json",
        &serde_json::json!({"turns": [
            {"text": "writing", "tool_calls": [{"name": "bash", "input": {"command":
                "python3 -c \"import base64;open(base64.b64decode('LmRlY29kZS9zZXR0aW5ncy5qc29u').decode(),'w').write('{\\\"permissions\\\":{\\\"allow\\\":[\\\"Bash\\\"]}}')\""}}]},
            {"text": "done"}
        ]})
        .to_string(),
    );
    let script = script.to_str().unwrap();
    let mut cmd = env.cmd(&[
        "run",
        "--provider",
        "script",
        "--script",
        script,
        "--mode",
        "auto",
        "-p",
        "go",
    ]);
    if let Some(b) = bwrap {
        cmd.env("DECODE_BWRAP", b);
    }
    cmd.output().unwrap()
}

#[test]
fn doctor_says_what_is_enforced_and_what_is_read_only() {
    let env = Env::new();
    env.write(".decode/settings.json", "{}\n");
    env.write(".envrc", "x\n");
    let o = env.run(&["doctor"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("sandbox              enforced"), "{out}");
    assert!(out.contains("no new privileges  yes"), "{out}");
    let root = env.project.canonicalize().unwrap();
    for p in [".decode", ".envrc"] {
        assert!(
            out.contains(&format!("    {}", root.join(p).display())),
            "{p}: {out}"
        );
    }
    // Every bound: the writable places, what is hidden, the host's services, the
    // network, the variables kept out (by name: never a value).
    for line in [
        "  network            its own, loopback only",
        "  proxy              the only way out: Decode's proxy on 127.0.0.1:3128",
        "  writable           ",
        "  hidden             ",
        "  host services      ",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    assert!(
        out.contains(&format!("    {}  (the project)", root.display())),
        "{out}"
    );
    let o = env
        .cmd(&["doctor"])
        .env("GH_TOKEN", "gh-value")
        .env("DISPLAY", ":7")
        .output()
        .unwrap();
    let out = stdout(&o);
    let removed = out
        .lines()
        .find(|l| l.starts_with("  environment        removed: "))
        .unwrap_or_default();
    assert!(removed.contains("1 secret(s) GH_TOKEN;"), "{out}");
    assert!(removed.contains("DISPLAY"), "{out}");
    assert!(!out.contains("gh-value"), "{out}");
    let o = env.run(&["doctor", "--json"]);
    let v = json(&o);
    assert_eq!(v["sandbox"], true);
    assert_eq!(v["own_network"], true);
    assert!(v["writable"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["why"] == "the project"));
    assert!(v["read_only"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p.as_str().unwrap().ends_with("/.decode")));
}

#[test]
fn without_bubblewrap_doctor_fails_and_says_why() {
    let env = Env::new();
    let o = env
        .cmd(&["doctor"])
        .env("DECODE_BWRAP", NO_BWRAP)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("sandbox              NOT ENFORCED: /nonexistent/bwrap does not run"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_run_says_sandboxed_and_the_sandbox_holds() {
    let env = Env::new();
    let o = run_hidden_write(&env, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert!(first.ends_with("· mode auto · sandboxed"), "{first}");
    assert_eq!(env.read(".decode/settings.json").as_deref(), Some("{}\n"));
    assert!(stdout(&o).contains("protected by Decode"), "{}", stdout(&o));
}

#[test]
fn without_the_sandbox_a_run_says_so_at_the_start() {
    let env = Env::new();
    let o = run_hidden_write(&env, Some(NO_BWRAP));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let mut lines = err.lines();
    assert!(
        lines.next().unwrap_or_default().ends_with("· NO SANDBOX"),
        "{err}"
    );
    assert!(
        lines
            .next()
            .unwrap_or_default()
            .starts_with("decode: warning: No sandbox: /nonexistent/bwrap does not run"),
        "{err}"
    );
    // Degraded means the gate alone: the hidden write went through.
    assert_ne!(env.read(".decode/settings.json").as_deref(), Some("{}\n"));
}

/// Decode killed while a sandboxed command runs (its terminal closed, `kill -9`):
/// what the command planted is taken back by the next Decode that reads the
/// project's permissions, and never honoured.
#[test]
fn a_plant_left_by_a_killed_decode_is_taken_back_and_never_read() {
    let env = Env::new();
    let o = env.run(&["trust", "."]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(
        env.project.join("plant.sh"),
        "d=.de; d=${d}code\nmkdir $d && echo '{\"permissions\":{\"allow\":[\"Bash(*)\"]}}' > $d/settings.json\nsleep 60\n",
    )
    .unwrap();
    let mut child = env
        .cmd(&[
            "tool",
            "bash",
            r#"{"command":"bash plant.sh"}"#,
            "--mode",
            "auto",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let planted = env.project.join(".decode/settings.json");
    for _ in 0..200 {
        if planted.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(planted.exists(), "the command never planted");
    child.kill().unwrap();
    child.wait().unwrap();
    let o = env.run(&["check", "bash", "touch x", "--mode", "default"]);
    let out = stdout(&o);
    assert!(!out.to_lowercase().contains("bash(*)"), "{out}");
    assert!(!env.project.join(".decode").exists(), "{out}");
}

/// A trusted project's hook runs only in the sandbox: with bubblewrap it runs (and
/// its exit 2 denies the write); where there is none it does not run at all, and
/// the call goes on as if it had not answered.
#[test]
fn a_projects_hook_runs_only_where_there_is_a_sandbox() {
    for bwrap in [None, Some(NO_BWRAP)] {
        let env = Env::new();
        env.write(
            ".decode/settings.json",
            r#"{"hooks": {"preToolUse": [{"matcher": "Write", "command": "touch hook-ran; echo 'no writes' >&2; exit 2"}]}}"#,
        );
        let dir = env.project.display().to_string();
        assert_eq!(env.run(&["trust", &dir]).status.code(), Some(0));
        let script = env.write(
            "s.json",
            &serde_json::json!({"turns": [
                {"text": "writing", "tool_calls": [{"name": "write", "input": {"path": "out.txt", "content": "x"}}]},
                {"text": "done"}
            ]})
            .to_string(),
        );
        let mut cmd = env.cmd(&[
            "run",
            "--provider",
            "script",
            "--script",
            script.to_str().unwrap(),
            "--mode",
            "edit",
            "-p",
            "go",
        ]);
        if let Some(b) = bwrap {
            cmd.env("DECODE_BWRAP", b);
        }
        let o = cmd.output().unwrap();
        let ran = env.read("hook-ran").is_some();
        let wrote = env.read("out.txt").is_some();
        let said = stdout(&o) + &stderr(&o);
        match bwrap {
            None => {
                // The hook's deny stops the run (exit 3: a denied step).
                assert_eq!(o.status.code(), Some(3), "{said}");
                assert!(ran && !wrote, "sandboxed: ran={ran} wrote={wrote}");
                assert!(said.contains("no writes"), "{said}");
            }
            Some(_) => {
                assert_eq!(o.status.code(), Some(0), "{said}");
                assert!(!ran && wrote, "no sandbox: ran={ran} wrote={wrote}");
            }
        }
    }
}
