//! Judges one of the gate bench's calls (benches/decide.rs: 1,000 rules, the same
//! twenty calls plus the compound command) N times, for counting what a decision
//! costs where time is too noisy to compare: `bench/gate-instructions.sh` runs it
//! under valgrind (instructions) and strace (system calls) at two N and prints the
//! difference per decision. `decide_calls N [INDEX]`; `decide_calls list`.
#![allow(clippy::print_stdout)]

use std::hint::black_box;

use decode_policy::{Call, Mode, Tool};

#[path = "../benches/support/mod.rs"]
mod support;

fn main() {
    let mut calls = support::calls();
    calls.push(Call::new(Tool::Bash, support::COMPOUND));
    let arg = std::env::args().nth(1).unwrap_or_default();
    if arg == "list" {
        for (i, c) in calls.iter().enumerate() {
            println!("{i}\t{} {}", c.tool, c.subject);
        }
        return;
    }
    let n: usize = arg.parse().expect("usage: decide_calls N [INDEX] | list");
    let pick: Option<usize> = std::env::args().nth(2).map(|i| i.parse().expect("INDEX"));
    let (_dir, gate) = support::gate();
    for (i, c) in calls.iter().enumerate() {
        if pick.is_none_or(|p| p == i) {
            for _ in 0..n {
                black_box(gate.decide(black_box(c), Mode::Default));
            }
        }
    }
}
