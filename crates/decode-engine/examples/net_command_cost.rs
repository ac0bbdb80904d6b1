//! What the network proxy adds to a sandboxed command that opens no connection
//! (bench/network.sh runs it in release): `true` through the bash tool, sandboxed and
//! kept warm, with each command given a network of its own and the proxy's
//! listeners (what Decode does) and without (the kept sandbox's network, no way
//! out: before the proxy), interleaved, back to back and 50 ms apart; medians.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use decode_core::agents::Catalog;
use decode_core::decision::NoSurface;
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_engine::tools::{self, ToolContext};
use decode_policy::{Mode, Tool};
use serde_json::json;

const N: usize = 30;
const ROUNDS: usize = 7;

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

/// The median of N calls of `command` (the first, which may find a shell started
/// under the other setting, is left out).
async fn time_calls(ctx: &ToolContext, command: &str, pause: Duration) -> Duration {
    let bash = tools::handler(Tool::Bash);
    let mut times = Vec::new();
    for i in 0..=N {
        tokio::time::sleep(pause).await;
        let t = Instant::now();
        let r = bash.execute(json!({ "command": command }), ctx).await;
        if i > 0 {
            times.push(t.elapsed());
        }
        assert!(!r.is_error, "{}", r.content);
        assert_eq!(r.sandboxed, Some(true));
    }
    median(times)
}

#[tokio::main]
async fn main() {
    println!("sandbox: {:?}", decode_engine::sandbox::support());
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".decode")).unwrap();
    std::fs::write(root.join(".decode/settings.json"), "{}").unwrap();
    let c = ctx(&root, home.path());
    // The proxy is there: the variables point at a listener that answers.
    let r = tools::handler(Tool::Bash)
        .execute(
            json!({"command": "exec 3<>/dev/tcp/127.0.0.1/3128 && echo listening"}),
            &c,
        )
        .await;
    println!("proxy listener inside a command: {}", r.content.trim());
    time_calls(&c, "true", Duration::ZERO).await;
    for (label, pause) in [
        ("back to back", Duration::ZERO),
        ("50 ms apart", Duration::from_millis(50)),
    ] {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            decode_engine::net::give_commands_the_proxy(false);
            without.push(time_calls(&c, "true", pause).await);
            decode_engine::net::give_commands_the_proxy(true);
            with.push(time_calls(&c, "true", pause).await);
        }
        let (with, without) = (median(with), median(without));
        println!("`true` sandboxed, {label}, median of {ROUNDS} rounds of {N}:");
        println!("  without a network of its own  {}", ms(without));
        println!("  with its own network + proxy  {}", ms(with));
        println!(
            "  added by the proxy            {} ({:+.2} ms)",
            ms(with.saturating_sub(without)),
            (with.as_secs_f64() - without.as_secs_f64()) * 1000.0
        );
    }
}
