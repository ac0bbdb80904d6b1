//! `cargo run --example check -- [--project DIR] [--home DIR] [--mode M]
//! [--allow R]… [--ask R]… [--deny R]… [--untrusted] TOOL SUBJECT`:
//! prints the decision as JSON (a development aid). With `--batch`, reads
//! `{"tool", "subject", "mode"}` lines on standard input and prints one
//! `{"verdict", "reason"}` line each (`--protected-branch B`,
//! `--cap-external P` as in a project's settings).
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
    let mut batch = false;
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
            "--batch" => batch = true,
            "--protected-branch" => input.protected_branches.push(val()),
            "--cap-external" => input.external_caps.push(val()),
            "--subject-file" => {
                let bytes = std::fs::read(val()).expect("read subject file");
                rest.push(String::from_utf8_lossy(&bytes).into_owned());
            }
            _ => rest.push(a),
        }
    }
    if batch {
        run_batch(input);
        return;
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

fn run_batch(input: PolicyInput) {
    use std::io::BufRead;
    let (gate, warnings) = Gate::new(input);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("read stdin");
        let v: serde_json::Value = serde_json::from_str(&line).expect("json line");
        let tool = Tool::from_name(v["tool"].as_str().expect("tool")).expect("known tool");
        let subject = v["subject"].as_str().expect("subject").to_string();
        let mode: Mode = v["mode"]
            .as_str()
            .unwrap_or("default")
            .parse()
            .expect("mode");
        let d = gate.decide(&Call::new(tool, subject), mode);
        let out = serde_json::json!({"verdict": d.verdict.to_string(), "reason": d.reason});
        println!("{out}");
    }
}
