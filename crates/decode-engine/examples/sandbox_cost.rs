//! What the bash sandbox adds to one command (bench/sandbox.sh runs it in release).
//!
//! `sandbox_cost [BIG_TREE]`: runs `true` through the bash tool N times unsandboxed
//! (as an approved call), sandboxed (the sandbox kept warm: what Decode does), and
//! sandboxed with bubblewrap building the sandbox for every command (what Decode did
//! before), interleaved, in a small temp project, and prints the medians; with
//! BIG_TREE, also the time of one walk of that tree and of a sandboxed command
//! there, back to back and with a pause (a model's thinking) between calls.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use decode_core::agents::Catalog;
use decode_core::decision::NoSurface;
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_engine::sandbox;
use decode_engine::tools::{self, ToolContext};
use decode_policy::{Mode, Tool};
use serde_json::json;

const N: usize = 30;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn ctx(root: &Path, home: &Path) -> ToolContext {
    let (settings, _) = Settings::load(root);
    let (state, _) = ActiveState::new(root, Catalog::builtin(), settings, true, home);
    state.set_mode(Mode::Auto);
    ToolContext::new(
        Arc::new(state),
        Arc::new(NoSurface {
            reason: "bench".into(),
        }),
    )
}

async fn time_calls(ctx: &ToolContext, approved: bool, pause: Duration) -> Duration {
    let ctx = ToolContext {
        approved_by_person: approved,
        ..ctx.clone()
    };
    let bash = tools::handler(Tool::Bash);
    let mut times = Vec::new();
    for _ in 0..N {
        tokio::time::sleep(pause).await;
        let t = Instant::now();
        let r = bash.execute(json!({"command": "true"}), &ctx).await;
        times.push(t.elapsed());
        assert!(!r.is_error, "{}", r.content);
        assert_eq!(r.sandboxed, Some(!approved));
    }
    median(times)
}

#[tokio::main]
async fn main() {
    println!("sandbox: {:?}", sandbox::support());
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    std::fs::create_dir_all(root.join(".decode")).unwrap();
    std::fs::write(root.join(".decode/settings.json"), "{}").unwrap();
    let c = ctx(&root, home.path());
    // Warm up (the first sandboxed call walks the project and builds the sandbox).
    time_calls(&c, false, Duration::ZERO).await;
    // Interleaved rounds, so a busy machine weighs on each the same; back to back,
    // and 50 ms apart (as when a model thinks between calls: the sandbox's next
    // shell is started ahead meanwhile).
    for (label, pause) in [
        ("back to back", Duration::ZERO),
        ("50 ms apart", Duration::from_millis(50)),
    ] {
        let (mut plain, mut warm, mut cold) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..5 {
            plain.push(time_calls(&c, true, pause).await);
            warm.push(time_calls(&c, false, pause).await);
            sandbox::warm::keep_warm(false);
            cold.push(time_calls(&c, false, pause).await);
            sandbox::warm::keep_warm(true);
        }
        let (plain, warm, cold) = (median(plain), median(warm), median(cold));
        println!("small project, `true`, {label}, median of 5 rounds of {N}:");
        println!("  unsandboxed                          {}", ms(plain));
        println!(
            "  sandboxed (kept warm)                {}   added {} ({:.2}x)",
            ms(warm),
            ms(warm.saturating_sub(plain)),
            warm.as_secs_f64() / plain.as_secs_f64()
        );
        println!(
            "  sandboxed (bubblewrap every command) {}   added {} ({:.2}x)",
            ms(cold),
            ms(cold.saturating_sub(plain)),
            cold.as_secs_f64() / plain.as_secs_f64()
        );
    }

    if let Some(big) = std::env::args().nth(1) {
        let big = Path::new(&big).canonicalize().unwrap();
        let mut walks = Vec::new();
        let mut entries = 0;
        for _ in 0..5 {
            let t = Instant::now();
            entries = sandbox::scan(&big).entries;
            walks.push(t.elapsed());
        }
        println!("{} ({entries} entries):", big.display());
        println!("  one walk                     {}", ms(median(walks)));
        let c = ctx(&big, home.path());
        time_calls(&c, false, Duration::ZERO).await;
        let plain = time_calls(&c, true, Duration::ZERO).await;
        let back_to_back = time_calls(&c, false, Duration::ZERO).await;
        let paused = time_calls(&c, false, Duration::from_millis(400)).await;
        println!("  unsandboxed                  {}", ms(plain));
        println!("  sandboxed, back to back      {}", ms(back_to_back));
        println!("  sandboxed, 400 ms apart      {}", ms(paused));
    }
}
