//! Arbitrary text → shell fragments, and through the whole gate. Must never panic.
#![no_main]

use std::sync::OnceLock;

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};
use libfuzzer_sys::fuzz_target;

fn gate() -> &'static Gate {
    static G: OnceLock<Gate> = OnceLock::new();
    G.get_or_init(|| {
        let mut input = PolicyInput::new("/nonexistent/proj", "/nonexistent/home");
        input.project_rules.allow = vec!["bash(git *)".into(), "bash(ls *)".into()];
        input.project_rules.ask = vec!["bash(curl *)".into()];
        input.project_rules.deny = vec!["bash(rm *)".into()];
        Gate::new(input).0
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let f = decode_policy::fragments(s);
    if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        assert!(
            f.opaque.is_some(),
            "control characters make a command opaque"
        );
    }
    for mode in [Mode::Default, Mode::Bypass] {
        let d = gate().decide(&Call::new(Tool::Bash, s), mode);
        assert!(!d.reason.is_empty());
    }
});
