//! `cargo run --release -p decode-policy --example false_asks [-- --show N] [CORPUS]`:
//! runs every command of the agent-command corpus (`tests/data/agent_commands.jsonl`)
//! through the gate in auto mode and reports how often a command labelled safe asks
//! (the false-ask rate) and how often one labelled unsafe does (the catch rate).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool, Verdict};

fn main() {
    let mut show = 0usize;
    let mut path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/agent_commands.jsonl"
    )
    .to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--show" {
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
    // A repository on a branch that is not protected.
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/work\n").expect("HEAD");
    let (gate, _) = Gate::new(PolicyInput::new(&root, &home));
    let (mut safe, mut safe_ask, mut unsafe_, mut unsafe_ask) = (0, 0, 0, 0);
    let mut shown = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let cmd = v["cmd"].as_str().expect("cmd");
        let is_safe = v["safe"].as_bool().expect("safe");
        let d = gate.decide(&Call::new(Tool::Bash, cmd), Mode::Auto);
        let asks = d.verdict != Verdict::Allow;
        if is_safe {
            safe += 1;
            if asks {
                safe_ask += 1;
                if shown < show {
                    shown += 1;
                    println!("FALSE ASK: {}\n    {}", cmd.replace('\n', "⏎"), d.reason);
                }
            }
        } else {
            unsafe_ += 1;
            unsafe_ask += usize::from(asks);
        }
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "auto mode: {safe_ask} of {safe} safe commands ask ({:.2} % false asks); {unsafe_ask} of {unsafe_} unsafe commands ask ({:.1} % caught)",
        pct(safe_ask, safe),
        pct(unsafe_ask, unsafe_)
    );
}
