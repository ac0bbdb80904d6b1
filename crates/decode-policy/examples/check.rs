//! `cargo run --example check -- [--project DIR] [--home DIR] [--mode M]
//! [--allow R]… [--ask R]… [--deny R]… [--untrusted] TOOL SUBJECT`:
//! prints the decision as JSON (a development aid).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};

fn main() {
    let mut args = std::env::args().skip(1);
    let cwd = std::env::current_dir().expect("cwd");
    let mut input = PolicyInput::new(
        cwd,
        std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
    );
    let mut mode = Mode::Default;
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        let mut val = || args.next().expect("value");
        match a.as_str() {
            "--project" => input.project_root = val().into(),
            "--home" => input.home = val().into(),
            "--mode" => mode = val().parse().expect("mode"),
            "--allow" => input.project_rules.allow.push(val()),
            "--ask" => input.project_rules.ask.push(val()),
            "--deny" => input.project_rules.deny.push(val()),
            "--untrusted" => input.trusted = false,
            "--subject-file" => {
                let bytes = std::fs::read(val()).expect("read subject file");
                rest.push(String::from_utf8_lossy(&bytes).into_owned());
            }
            _ => rest.push(a),
        }
    }
    let [tool, subject] = rest.as_slice() else {
        eprintln!("usage: check [options] TOOL SUBJECT");
        std::process::exit(2);
    };
    let tool = Tool::from_name(tool).expect("tool");
    let (gate, warnings) = Gate::new(input);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let d = gate.decide(&Call::new(tool, subject.clone()), mode);
    println!("{}", serde_json::to_string_pretty(&d).expect("json"));
}
