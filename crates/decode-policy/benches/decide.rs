//! Decisions per second with 1,000 rules over a mix of simple and compound
//! shell commands and file calls.
//!
//! `cargo bench -p decode-policy --bench decide` prints criterion figures and,
//! first, a direct measurement: decisions/s and p50/p99 latency per decision.
#![allow(clippy::print_stderr)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};

fn rules() -> (Vec<String>, Vec<String>, Vec<String>) {
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
    ]
}

fn gate() -> (tempfile::TempDir, Gate) {
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

fn direct_measurement(gate: &Gate, calls: &[Call]) {
    let modes = [Mode::Default, Mode::Edit, Mode::Auto];
    // Warm up (thread-local parser, page cache).
    for c in calls {
        black_box(gate.decide(c, Mode::Default));
    }
    let rounds = 5_000;
    let mut lat = Vec::with_capacity(rounds * calls.len());
    let start = Instant::now();
    for r in 0..rounds {
        let mode = modes[r % modes.len()];
        for c in calls {
            let t = Instant::now();
            black_box(gate.decide(black_box(c), mode));
            lat.push(t.elapsed().as_nanos() as u64);
        }
    }
    let total = start.elapsed();
    lat.sort_unstable();
    let n = lat.len();
    let pct = |p: f64| lat[((n as f64 * p) as usize).min(n - 1)] as f64 / 1000.0;
    eprintln!(
        "decide: {n} decisions in {:.2?}: {:.0} decisions/s; p50 {:.2} µs, p90 {:.2} µs, p99 {:.2} µs, max {:.1} µs",
        total,
        n as f64 / total.as_secs_f64(),
        pct(0.50),
        pct(0.90),
        pct(0.99),
        *lat.last().unwrap_or(&0) as f64 / 1000.0
    );
    let mut per: Vec<(String, f64)> = calls
        .iter()
        .map(|c| {
            let reps = 2_000;
            let t = Instant::now();
            for _ in 0..reps {
                black_box(gate.decide(black_box(c), Mode::Default));
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
            (format!("{} {}", c.tool, c.subject), us)
        })
        .collect();
    per.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (name, us) in per.iter().take(6) {
        eprintln!("  slowest: {us:7.2} µs  {name}");
    }
}

fn bench(c: &mut Criterion) {
    let (_dir, gate) = gate();
    let calls = calls();
    direct_measurement(&gate, &calls);
    c.bench_function("decide/mixed-20-calls", |b| {
        b.iter(|| {
            for call in &calls {
                black_box(gate.decide(black_box(call), Mode::Default));
            }
        })
    });
    c.bench_function("decide/simple-bash", |b| {
        let call = Call::new(Tool::Bash, "git status");
        b.iter(|| black_box(gate.decide(black_box(&call), Mode::Default)))
    });
    c.bench_function("decide/compound-bash", |b| {
        let call = Call::new(
            Tool::Bash,
            "git add -A && git commit -m \"fix: x\" && cargo test 2>&1 | tail -n 20",
        );
        b.iter(|| black_box(gate.decide(black_box(&call), Mode::Default)))
    });
    c.bench_function("decide/file-read", |b| {
        let call = Call::new(Tool::Read, "src/main.rs");
        b.iter(|| black_box(gate.decide(black_box(&call), Mode::Default)))
    });
    // A path of 120,000 components (240 KB): resolving it must stay linear in its
    // length (it was quadratic: 25 s for a 1.2 MB path in a whole turn).
    c.bench_function("paths/resolve-120k-components", |b| {
        let long = "a/".repeat(120_000);
        let path = std::path::Path::new(&long);
        b.iter(|| black_box(decode_policy::paths::resolve(black_box(path))))
    });
    c.bench_function("compile/gate-1000-rules", |b| {
        b.iter(|| black_box(self::gate()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
