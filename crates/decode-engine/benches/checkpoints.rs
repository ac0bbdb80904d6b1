//! What recording a checkpoint costs (docs/checkpoints.md, "Cost"): for projects of
//! 1,000, 10,000 and 100,000 files (plus an ignored `target/` as large as the
//! project), the first checkpoint (every file read and stored), then a checkpoint
//! where nothing changed and one where 3 files changed. Prints medians and the 90th
//! percentile; asserts nothing.
//!
//! `cargo bench -p decode-engine --bench checkpoints` (sizes: `DECODE_BENCH_SIZES=1000,10000`).

#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use decode_engine::checkpoints::Checkpoints;

fn make_project(root: &Path, files: usize) {
    std::fs::write(root.join(".gitignore"), "/target\n").unwrap();
    let per_dir = 100;
    for i in 0..files {
        let dir = root.join(format!(
            "src/m{:03}/d{:03}",
            i / (per_dir * 10),
            (i / per_dir) % 10
        ));
        if i % per_dir == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("f{i}.rs")),
            format!("// file {i}\npub fn f{i}() -> usize {{ {i} }}\n"),
        )
        .unwrap();
    }
    // An ignored build folder: never walked.
    for i in 0..files.min(20_000) {
        let dir = root.join(format!("target/debug/deps/{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("lib{i}.rlib")), b"x").unwrap();
    }
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(v[v.len() / 2]);
    let p90 = ms(v[(v.len() * 9 / 10).min(v.len() - 1)]);
    (median, p90)
}

fn main() {
    let sizes: Vec<usize> = std::env::var("DECODE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    println!("checkpoint recording (median / p90 of the record, lock and index write included)");
    for files in sizes {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("proj");
        std::fs::create_dir_all(&root).unwrap();
        let data = tmp.path().join("data");
        make_project(&root, files);
        let store = Checkpoints::open(&data, &root).unwrap();

        let t = Instant::now();
        let first = store.record_now().unwrap();
        let cold = t.elapsed();
        // The files written a moment ago are "racy": read again once.
        std::thread::sleep(Duration::from_millis(1100));
        store.record_now().unwrap();

        let rounds = if files >= 100_000 { 7 } else { 21 };
        let mut idle = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            let s = store.record_now().unwrap();
            idle.push(t.elapsed());
            assert_eq!(s.changed, 0);
        }
        let mut little = Vec::new();
        for r in 0..rounds {
            for k in 0..3 {
                let i = (r * 7 + k * 13) % files;
                let dir = root.join(format!("src/m{:03}/d{:03}", i / 1000, (i / 100) % 10));
                std::fs::write(dir.join(format!("f{i}.rs")), format!("// changed {r}\n")).unwrap();
            }
            let t = Instant::now();
            let s = store.record_now().unwrap();
            little.push(t.elapsed());
            assert!(s.changed >= 1);
        }
        let (im, ip) = stats(idle);
        let (lm, lp) = stats(little);
        println!(
            "{files:>7} files: first {:>8.1} ms ({} entries) | nothing changed {:>6.1} / {:>6.1} ms | 3 files changed {:>6.1} / {:>6.1} ms",
            cold.as_secs_f64() * 1000.0,
            first.entries,
            im,
            ip,
            lm,
            lp
        );
    }
}
