//! Judges one of the gate bench's calls (benches/decide.rs: 1,000 rules, the same
//! twenty calls plus the compound command) N times, for counting what a decision
//! costs where time is too noisy to compare: `bench/gate-instructions.sh` runs it
//! under valgrind (instructions) and strace (system calls) at two N and prints the
//! difference per decision. `decide_calls N [INDEX]`; `decide_calls list`.
#![allow(clippy::print_stdout)]

use std::hint::black_box;

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};

fn rules() -> (Vec<String>, Vec<String>, Vec<String>) {
    let tools = [
        "git", "npm", "cargo", "make", "docker", "kubectl", "python3", "node", "go", "rustc", "ls",
        "cat", "grep", "sed", "awk", "curl", "wget", "tar", "zip", "jq",
    ];
    let (mut allow, mut ask, mut deny) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..1000 {
        let t = tools[i % tools.len()];
        let r = match i % 10 {
            0 => format!("bash({t} sub{i} *)"),
            1 => format!("bash({t} --flag-{i}*)"),
            2 => format!("read(src/module{i}/**)"),
            3 => format!("edit(docs/page{i}.md)"),
            4 => format!("bash({t} run task{i}:*)"),
            5 => format!("read(/opt/data{i}/*)"),
            6 => format!("web_fetch(domain:host{i}.example.com)"),
            7 => format!("bash(./scripts/tool{i}.sh *)"),
            8 => format!("edit(gen/**/file{i}.rs)"),
            _ => format!("bash({t} exact command {i})"),
        };
        match i % 7 {
            0 => deny.push(r),
            1 => ask.push(r),
            _ => allow.push(r),
        }
    }
    allow.extend([
        "bash(git *)".to_string(),
        "bash(cargo *)".into(),
        "bash(ls *)".into(),
    ]);
    deny.push("bash(rm -rf *)".into());
    (allow, ask, deny)
}

fn calls() -> Vec<Call> {
    let b = |s: &str| Call::new(Tool::Bash, s);
    vec![
        b("git status"),
        b("cargo test --workspace"),
        b("ls -la src"),
        b("npm run build"),
        b("git add -A && git commit -m \"fix: handle the edge case\" && git push origin main"),
        b("cargo build --release 2>&1 | tail -n 20"),
        b("find . -name '*.rs' -exec grep -l TODO {} \\;"),
        b("for f in src/*.rs; do echo $f; wc -l $f; done"),
        b("cd src && ls | head -5"),
        b("echo \"$(date) build ok\" >> build.log"),
        b("timeout 30 npm test -- --watch=false"),
        b("sudo apt-get install -y jq"),
        Call::new(Tool::Read, "src/main.rs"),
        Call::new(Tool::Read, "/etc/hosts"),
        Call::new(Tool::Write, "docs/page3.md"),
        Call::new(Tool::Edit, "src/lib.rs"),
        Call::new(Tool::Glob, ""),
        Call::new(Tool::Grep, "src"),
        Call::new(Tool::WebFetch, "https://host16.example.com/a"),
        Call::new(Tool::Write, ".decode/settings.json"),
        b("git add -A && git commit -m \"fix: x\" && cargo test 2>&1 | tail -n 20"),
    ]
}

fn main() {
    let calls = calls();
    let arg = std::env::args().nth(1).unwrap_or_default();
    if arg == "list" {
        for (i, c) in calls.iter().enumerate() {
            println!("{i}\t{} {}", c.tool, c.subject);
        }
        return;
    }
    let n: usize = arg.parse().expect("usage: decide_calls N [INDEX] | list");
    let pick: Option<usize> = std::env::args().nth(2).map(|i| i.parse().expect("INDEX"));
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
    let mut input = PolicyInput::new(&root, dir.path().join("home"));
    let (allow, ask, deny) = rules();
    input.project_rules.allow = allow;
    input.project_rules.ask = ask;
    input.project_rules.deny = deny;
    let (gate, _) = Gate::new(input);
    for (i, c) in calls.iter().enumerate() {
        if pick.is_none_or(|p| p == i) {
            for _ in 0..n {
                black_box(gate.decide(black_box(c), Mode::Default));
            }
        }
    }
}
