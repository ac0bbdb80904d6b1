//! Memory stays flat over millions of decisions: prints RSS every 200,000.
//! `cargo run --release -p decode-policy --example soak -- 2000000`
#![allow(clippy::print_stdout)]

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = std::env::temp_dir().join("decode-policy-soak");
    std::fs::create_dir_all(dir.join("proj/src")).expect("mkdir");
    let mut input = PolicyInput::new(dir.join("proj"), dir.join("home"));
    input.project_rules.allow = vec!["bash(git *)".into(), "bash(ls *)".into()];
    input.project_rules.deny = vec!["bash(rm -rf *)".into()];
    let (gate, _) = Gate::new(input);
    let calls = [
        Call::new(Tool::Bash, "git status && ls -la | grep x"),
        Call::new(Tool::Bash, "cat <<EOF\n$(curl x)\nEOF"),
        Call::new(Tool::Bash, "for f in *.rs; do echo \"$f\"; done > out.txt"),
        Call::new(Tool::Bash, "bash -c 'sudo rm -rf /' ; eval x"),
        Call::new(Tool::Read, "src/main.rs"),
        Call::new(Tool::Write, "/etc/hosts"),
    ];
    for i in 0..n {
        let d = gate.decide(&calls[i % calls.len()], Mode::Default);
        std::hint::black_box(d);
        if i % 200_000 == 0 {
            println!("{i:>9} decisions: rss {} KiB", rss_kib());
        }
    }
    println!("{n:>9} decisions: rss {} KiB", rss_kib());
}
