//! Decisions per second with 1,000 rules over a mix of simple and compound
//! shell commands and file calls.
//!
//! `cargo bench -p decode-policy --bench decide` prints criterion figures and,
//! first, a direct measurement: decisions/s and p50/p99 latency per decision.
#![allow(clippy::print_stderr)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use decode_policy::{Call, Gate, Mode, Tool};

#[path = "support/mod.rs"]
mod support;
use support::{calls, gate};

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
        let call = Call::new(Tool::Bash, support::COMPOUND);
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
    // Commands far over the 10,000-character limit are opaque; judging them
    // must stay linear in their length (slash- and glob-heavy words, `case`
    // words and escapes once grew with the square of the text).
    for (name, unit, times) in [
        ("decide/over-limit-slashes-400k", "a/", 200_000),
        ("decide/over-limit-globs-400k", "*/", 200_000),
        ("decide/over-limit-case-400k", "case x in ", 40_000),
        ("decide/over-limit-escapes-400k", "echo \\x01", 40_000),
    ] {
        let call = Call::new(Tool::Bash, format!("ls {}", unit.repeat(times)));
        c.bench_function(name, |b| {
            b.iter(|| black_box(gate.decide(black_box(&call), Mode::Auto)))
        });
    }
    c.bench_function("compile/gate-1000-rules", |b| {
        b.iter(|| black_box(support::gate()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
