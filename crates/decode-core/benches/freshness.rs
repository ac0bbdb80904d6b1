//! What following the files on disk costs per decision (docs/permissions.md, "Rules on
//! disk now"): a settled project (settings, three agent files, a trust store) whose
//! files do not change, judged through `ActiveState::decide` — which stats every file
//! first — against the same gate judging the same call directly.
//!
//! `cargo bench -p decode-core --bench freshness`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use decode_core::freshness::Watch;
use decode_core::state::ActiveState;
use decode_core::TrustStore;
use decode_policy::{Call, Mode, Tool};

fn project() -> (tempfile::TempDir, tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".decode/agents")).unwrap();
    std::fs::write(
        p.join(".decode/settings.json"),
        r#"{"permissions": {"allow": ["bash(cargo *)", "bash(git status)"], "deny": ["read(.env)", "bash(curl *)"]}}"#,
    )
    .unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(
            p.join(format!(".decode/agents/{name}.md")),
            format!("---\nname: {name}\ndescription: Agent {name}.\ntools: [read, bash]\nmode: default\n---\nPrompt.\n"),
        )
        .unwrap();
    }
    TrustStore::open(data.path()).trust(p).unwrap();
    (project, home, data)
}

fn bench(c: &mut Criterion) {
    let (project, home, data) = project();
    // Past the window in which a just-written file is read again at every check.
    std::thread::sleep(Duration::from_millis(200));
    let (state, _) = ActiveState::open(
        project.path(),
        home.path(),
        data.path(),
        None,
        Some(Mode::Default),
    )
    .unwrap();
    state.refresh();
    std::thread::sleep(Duration::from_millis(200));
    state.refresh();
    let reloads = (0..1000).filter(|_| state.refresh()).count();
    assert_eq!(reloads, 0, "a settled project is not read again");
    let call = Call::new(Tool::Bash, "cargo test --workspace");
    let gate = state.gate();

    let mut g = c.benchmark_group("freshness");
    g.bench_function("gate.decide (no check)", |b| {
        b.iter(|| gate.decide(&call, Mode::Default))
    });
    g.bench_function("state.decide (stat every file, then decide)", |b| {
        b.iter(|| state.decide(&call))
    });
    let watch = Watch::take(
        [
            ".decode/settings.json",
            ".decode/agents",
            ".decode/agents/a.md",
            ".decode/agents/b.md",
            ".decode/agents/c.md",
            ".claude/agents",
        ]
        .iter()
        .map(|p| project.path().join(p))
        .chain([data.path().join("trust.json")]),
    );
    std::thread::sleep(Duration::from_millis(200));
    g.bench_function("the check alone (7 stats)", |b| b.iter(|| watch.changed()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
