//! `cargo run --release -p decode-policy --example read_only_figures [-- --show N]
//! [--as-root DIR]… [CORPUS]`:
//! runs every command of the agent-command corpus (`tests/data/agent_commands.jsonl`)
//! through the gate in default mode, with read-only commands on and off
//! (docs/permissions.md, "Read-only commands"), and reports how many asks
//! disappear, and how many of the commands it now allows are labelled unsafe.
//! `--as-root DIR` reads the folder the corpus's agent worked in (`/testbed`) as
//! the project root: the words naming it are rewritten to the temp project.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool, Verdict};

fn main() {
    let mut show = 0usize;
    let mut as_root: Vec<String> = Vec::new();
    let mut path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/agent_commands.jsonl"
    )
    .to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--as-root" {
            as_root.extend(args.next());
        } else if a == "--show" {
            show = args.next().and_then(|v| v.parse().ok()).unwrap_or(20);
        } else {
            path = a;
        }
    }
    let text = std::fs::read_to_string(&path).expect("read corpus");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proj");
    let home = dir.path().join("home");
    std::fs::create_dir_all(root.join(".git/refs/heads")).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/work\n").expect("HEAD");
    let gate = |on: bool| {
        let mut input = PolicyInput::new(&root, &home);
        input.read_only_commands = on;
        Gate::new(input).0
    };
    let (on, off) = (gate(true), gate(false));
    let (mut total, mut asks_off, mut gone, mut gone_unsafe) = (0, 0, 0, 0);
    let mut shown = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let cmd = v["cmd"].as_str().expect("cmd");
        let is_safe = v["safe"].as_bool().unwrap_or(false);
        total += 1;
        let mut cmd = cmd.to_string();
        for r in &as_root {
            cmd = cmd.replace(r.as_str(), &root.to_string_lossy());
        }
        let cmd = cmd.as_str();
        let call = Call::new(Tool::Bash, cmd);
        if off.decide(&call, Mode::Default).verdict != Verdict::Ask {
            continue;
        }
        asks_off += 1;
        if on.decide(&call, Mode::Default).verdict == Verdict::Allow {
            gone += 1;
            if !is_safe {
                gone_unsafe += 1;
                println!("ALLOWED, LABELLED UNSAFE: {}", cmd.replace('\n', "⏎"));
            } else if shown < show {
                shown += 1;
                println!("read-only: {}", cmd.replace('\n', "⏎"));
            }
        }
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "default mode, {total} commands: {asks_off} ask without read-only commands; {gone} of them \
         ({:.1} % of the asks, {:.1} % of all commands) are read-only and run without asking; \
         {gone_unsafe} of those are labelled unsafe",
        pct(gone, asks_off),
        pct(gone, total)
    );
}
