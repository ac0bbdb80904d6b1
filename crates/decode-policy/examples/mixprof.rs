#![allow(clippy::print_stdout)]
use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};
fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let mut input = PolicyInput::new(&root, dir.path().join("home"));
    let tools = [
        "git", "npm", "cargo", "make", "docker", "kubectl", "python3", "node", "go", "rustc", "ls",
        "cat", "grep", "sed", "awk", "curl", "wget", "tar", "zip", "jq",
    ];
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
            0 => input.project_rules.deny.push(r),
            1 => input.project_rules.ask.push(r),
            _ => input.project_rules.allow.push(r),
        }
    }
    let (gate, _) = Gate::new(input);
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/agent_commands.jsonl"
    ))
    .unwrap();
    let cmds: Vec<String> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["cmd"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let t = std::time::Instant::now();
    let mut n = 0;
    for _ in 0..3 {
        for c in &cmds {
            std::hint::black_box(gate.decide(&Call::new(Tool::Bash, c.clone()), Mode::Default));
            n += 1;
        }
    }
    println!(
        "{n} in {:?}: {:.0}/s",
        t.elapsed(),
        n as f64 / t.elapsed().as_secs_f64()
    );
}
