//! The gate bench's setting, shared by the bench (`benches/decide.rs`) and the
//! examples that count or profile the same decisions (`decide_calls`,
//! `mixprof`): 1,000 rules of every kind, and the calls judged.
#![allow(dead_code)]

use decode_policy::{Call, Gate, PolicyInput, Tool};

pub(crate) fn rules() -> (Vec<String>, Vec<String>, Vec<String>) {
    let tools = [
        "git", "npm", "cargo", "make", "docker", "kubectl", "python3", "node", "go", "rustc", "ls",
        "cat", "grep", "sed", "awk", "curl", "wget", "tar", "zip", "jq",
    ];
    let mut allow = Vec::new();
    let mut ask = Vec::new();
    let mut deny = Vec::new();
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

/// The compound command the bench judges on its own.
pub(crate) const COMPOUND: &str =
    "git add -A && git commit -m \"fix: x\" && cargo test 2>&1 | tail -n 20";

pub(crate) fn calls() -> Vec<Call> {
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
    ]
}

pub(crate) fn gate() -> (tempfile::TempDir, Gate) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
    let mut input = PolicyInput::new(&root, dir.path().join("home"));
    let (allow, ask, deny) = rules();
    input.project_rules.allow = allow;
    input.project_rules.ask = ask;
    input.project_rules.deny = deny;
    let (gate, warnings) = Gate::new(input);
    assert!(warnings.is_empty(), "{warnings:?}");
    (dir, gate)
}
