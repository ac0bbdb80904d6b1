//! The bash oracle as a fuzz target: every command real bash tries to run
//! (in a sandbox where nothing can run, tests/support/oracle.rs) must be
//! among the gate's fragments, unless the gate calls the command opaque.
//! Seeds: `seeds/oracle/` (the review's classes and real agent commands).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/oracle.rs"]
mod oracle;

fn sandbox() -> Option<&'static oracle::Oracle> {
    static O: OnceLock<Option<oracle::Oracle>> = OnceLock::new();
    O.get_or_init(oracle::Oracle::new).as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Ok(cmd) = std::str::from_utf8(data) else {
        return;
    };
    if cmd.len() > 2_000 || cmd.contains('\0') {
        return;
    }
    // Inputs that tamper with the oracle's own recorders say nothing about the gate.
    for own in ["command_not_found_handle", "__oracle", "BASH_ENV", "LD_PRELOAD", "DEBUG", "/log/", "enable"] {
        if cmd.contains(own) {
            return;
        }
    }
    let Some(o) = sandbox() else {
        return;
    };
    let f = decode_policy::fragments(cmd);
    if f.opaque.is_some() {
        return;
    }
    let run = o.run(cmd);
    let missed = oracle::missed(&run, &f.patterns, &f.names);
    assert!(
        missed.is_empty(),
        "bash ran what the gate did not see\n  command: {cmd:?}\n  bash ran: {missed:?}\n  gate saw: {:?}",
        f.patterns
    );
});
