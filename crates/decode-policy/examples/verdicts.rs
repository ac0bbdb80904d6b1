//! `cargo run --release -p decode-policy --example verdicts -- CORPUS > OUT`:
//! judges every line of CORPUS (JSON strings, one per line: bash commands) in
//! every mode, with no rules and with a set of common rules, in a fixed
//! project, and prints one line per decision: mode, rule set, verdict, the
//! cap that asked (if any) and the command. Two builds' outputs, diffed,
//! show every verdict a change moved (a refactor must move none).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};

fn main() {
    let path = std::env::args().nth(1).expect("usage: verdicts CORPUS");
    let text = std::fs::read_to_string(&path).expect("read corpus");
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let root = base.join("proj");
    let home = base.join("home");
    for d in [
        ".git/refs/heads",
        ".git/hooks",
        "src/secret",
        ".decode/agents",
        "docs/private",
    ] {
        std::fs::create_dir_all(root.join(d)).expect("mkdir");
    }
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/work\n").expect("HEAD");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("file");
    std::fs::write(root.join(".decode/settings.json"), "{}\n").expect("file");
    std::fs::write(home.join(".bashrc"), "\n").expect("file");
    let rules = |allow: &[&str], ask: &[&str], deny: &[&str]| {
        let mut input = PolicyInput::new(&root, &home);
        input.project_rules.allow = allow.iter().map(|s| s.to_string()).collect();
        input.project_rules.ask = ask.iter().map(|s| s.to_string()).collect();
        input.project_rules.deny = deny.iter().map(|s| s.to_string()).collect();
        Gate::new(input).0
    };
    let gates = [
        ("none", rules(&[], &[], &[])),
        (
            "rules",
            rules(
                &["bash(git *)", "bash(npm *)", "bash(cargo *)", "bash(ls *)"],
                &["bash(docker *)"],
                &[
                    "bash(rm -rf *)",
                    "bash(curl *)",
                    "bash(git push*)",
                    "bash(sudo *)",
                    "read(.env)",
                ],
            ),
        ),
        (
            "paths",
            rules(
                &["bash(make *)", "read(src/**)"],
                &[
                    "read(src/**/*.key)",
                    "read(docs/private/**)",
                    "read(~/.aws/**)",
                ],
                &[
                    "read(src/secret/**)",
                    "read(/etc/shadow)",
                    "read(**/.env*)",
                    "read(~/.ssh/**)",
                ],
            ),
        ),
    ];
    let modes = [
        Mode::Default,
        Mode::Edit,
        Mode::Plan,
        Mode::Auto,
        Mode::Bypass,
    ];
    let (r, h) = (root.to_string_lossy(), home.to_string_lossy());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let cmd: String = serde_json::from_str(line).expect("a JSON string per line");
        let cmd = cmd
            .replace("{root}", &r)
            .replace("{home}", &h)
            .replace("{base}", &base.to_string_lossy());
        for (name, gate) in &gates {
            for mode in modes {
                let d = gate.decide(&Call::new(Tool::Bash, cmd.as_str()), mode);
                let cap = d
                    .fragments
                    .iter()
                    .find_map(|f| f.cap)
                    .map_or("-".to_string(), |c| c.to_string());
                let opaque = d.trace.iter().any(|t| {
                    t.stage.to_string() == "opaque"
                        && d.verdict.to_string() == "ask"
                        && t.result != "not opaque"
                        && !t.result.ends_with("bypass mode goes on")
                });
                let reason = d.reason.replace(&*base.to_string_lossy(), "{base}");
                println!(
                    "{mode}\t{name}\t{}\t{cap}{}\t{line}\t{}",
                    d.verdict,
                    if opaque { "+opaque" } else { "" },
                    reason.replace(['\t', '\n'], " ")
                );
            }
        }
    }
}
