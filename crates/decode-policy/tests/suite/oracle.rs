//! The gate against real bash: every command bash tries to run must be among
//! the gate's fragments, or the gate must call the command opaque. Runs each
//! case in a bubblewrap sandbox holding only bash (tests/support/oracle.rs);
//! skipped, with a note, where the machine cannot run bubblewrap.

use crate::support;

use support::oracle::{missed, Oracle, Record};

/// The review's classes and their variants, and ordinary agent commands.
const CASES: &str = include_str!("../data/oracle_cases.txt");

fn cases() -> Vec<String> {
    // One case per paragraph (blank-line separated), so cases can span lines.
    CASES
        .split("\n\n")
        .map(|c| c.trim_matches('\n').to_string())
        .filter(|c| !c.is_empty() && !c.starts_with("##"))
        .collect()
}

/// Checks one command; returns a description of what the gate missed.
fn check(o: &Oracle, cmd: &str) -> Option<String> {
    let f = decode_policy::fragments(cmd);
    let run = o.run(cmd);
    let miss: Vec<Record> = missed(&run, &f.patterns, &f.names);
    if miss.is_empty() || f.opaque.is_some() {
        return None;
    }
    Some(format!(
        "{cmd:?}\n    bash ran {miss:?}\n    gate saw {:?}",
        f.patterns
    ))
}

#[test]
fn every_command_bash_runs_is_a_fragment() {
    let Some(o) = Oracle::new() else {
        return;
    };
    let mut failures = Vec::new();
    let all = cases();
    for c in &all {
        if let Some(f) = check(&o, c) {
            failures.push(f);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands ran something the gate did not see:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn the_oracle_sees_what_bash_runs() {
    let Some(o) = Oracle::new() else {
        return;
    };
    let r = o.run("echo $'\\\\'; rm -rf src #'");
    assert_eq!(
        r.records,
        [Record::Lookup(vec![
            "rm".into(),
            "-rf".into(),
            "src".into()
        ])]
    );
    let r = o.run("/usr/bin/sudo -n true; eval 'git push'");
    assert!(r.records.contains(&Record::Exec(
        "/usr/bin/sudo".into(),
        vec!["/usr/bin/sudo".into(), "-n".into(), "true".into()]
    )));
    assert!(r
        .records
        .contains(&Record::Builtin("eval 'git push'".into())));
    assert!(r
        .records
        .contains(&Record::Lookup(vec!["git".into(), "push".into()])));
    // A shell string is run too.
    let r = o.run("sh -c 'curl x'");
    assert!(r
        .records
        .contains(&Record::Lookup(vec!["curl".into(), "x".into()])));
}
