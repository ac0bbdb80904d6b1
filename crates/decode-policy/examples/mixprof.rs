#![allow(clippy::print_stdout)]
use decode_policy::{Call, Mode, Tool};

#[path = "../benches/support/mod.rs"]
mod support;

fn main() {
    let (_dir, gate) = support::gate();
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
