//! In-process timings of the grep and glob tools on the tree `bench/tools.sh`
//! generates, next to `rg` / `fd` on the same tree — the tool's own cost, without the
//! `decode` binary's start-up (which loads the whole Tauri/WebKit stack). Prints
//! medians and ratios; asserts nothing.
//!
//!   bench/tools.sh            # generates the tree, then runs this too
//!   BENCH_TREE=/tmp/decode-bench-tree cargo bench -p decode-core --bench tools
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use decode_core::agents::Catalog;
use decode_core::decision::NoSurface;
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_engine::tools::{handler, ToolContext};
use decode_policy::{Mode, Tool};
use serde_json::{json, Value};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn time_tool(
    rt: &tokio::runtime::Runtime,
    ctx: &ToolContext,
    tool: Tool,
    input: &Value,
    runs: usize,
) -> f64 {
    let h = handler(tool);
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + 2 {
        let started = Instant::now();
        let r = rt.block_on(h.execute(input.clone(), ctx));
        let took = started.elapsed();
        assert!(!r.is_error, "{}", r.content);
        if i >= 2 {
            times.push(took);
        }
    }
    median(times)
}

fn time_cmd(dir: &Path, argv: &[&str], runs: usize) -> f64 {
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + 2 {
        let started = Instant::now();
        let status = Command::new(argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run the reference tool");
        let took = started.elapsed();
        assert!(
            status.success() || status.code() == Some(1),
            "{argv:?} failed"
        );
        if i >= 2 {
            times.push(took);
        }
    }
    median(times)
}

fn main() {
    let tree = PathBuf::from(
        std::env::var("BENCH_TREE").unwrap_or_else(|_| "/tmp/decode-bench-tree".into()),
    );
    if !tree.join(".bench-done").exists() {
        println!(
            "no bench tree at {} (run bench/tools.sh first); nothing timed",
            tree.display()
        );
        return;
    }
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let root = tree.canonicalize().expect("tree");
    let home = std::env::temp_dir();
    let (state, _) = ActiveState::new(
        &root,
        Catalog::builtin(),
        Settings::empty(&root),
        true,
        &home,
    );
    state.set_mode(Mode::Bypass);
    let ctx = ToolContext::new(
        Arc::new(state),
        Arc::new(NoSurface {
            reason: "bench".into(),
        }),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let fd = if Command::new("fdfind").arg("--version").output().is_ok() {
        "fdfind"
    } else {
        "fd"
    };

    let rows = [
        (
            "grep files   vs rg -l",
            time_tool(
                &rt,
                &ctx,
                Tool::Grep,
                &json!({"pattern": "deadbeef", "output_mode": "files"}),
                runs,
            ),
            time_cmd(&root, &["rg", "--hidden", "-l", "deadbeef"], runs),
        ),
        (
            "grep content vs rg -n",
            time_tool(
                &rt,
                &ctx,
                Tool::Grep,
                &json!({"pattern": "TODO\\(bench\\)", "output_mode": "content"}),
                runs,
            ),
            time_cmd(&root, &["rg", "--hidden", "-n", "TODO\\(bench\\)"], runs),
        ),
        (
            "glob **/*.rs vs fd -g '*.rs'",
            time_tool(&rt, &ctx, Tool::Glob, &json!({"pattern": "**/*.rs"}), runs),
            time_cmd(&root, &[fd, "--hidden", "-g", "*.rs"], runs),
        ),
    ];
    println!(
        "\nin-process tool (no binary start-up) vs the reference process, {runs} runs, medians:"
    );
    println!(
        "{:32} {:>10} {:>10} {:>7}",
        "benchmark", "tool ms", "ref ms", "ratio"
    );
    for (label, tool, reference) in rows {
        println!(
            "{label:32} {tool:10.1} {reference:10.1} {:7.2}",
            tool / reference
        );
    }
}
