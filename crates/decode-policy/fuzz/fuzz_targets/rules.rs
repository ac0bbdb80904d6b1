//! Arbitrary text → `Rule::parse` → compiled into a gate → matched. Must never panic.
#![no_main]

use decode_policy::{Call, Gate, Mode, PolicyInput, Rule, Tool};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Rule::parse(s);
    if let Ok(rule) = &parsed {
        // Display gives back a rule that parses to the same rule.
        let again = Rule::parse(&rule.to_string()).expect("canonical text parses");
        assert_eq!(&again, rule);
    }
    let mut input = PolicyInput::new("/nonexistent/proj", "/nonexistent/home");
    input.project_rules.allow = vec![s.to_string()];
    input.project_rules.deny = vec![s.to_string()];
    input.external_caps = vec![s.to_string()];
    let (gate, warnings) = Gate::new(input);
    if parsed.is_err() {
        assert!(!warnings.is_empty());
    }
    let subject = s
        .split_once('(')
        .map(|(_, r)| r.trim_end_matches(')'))
        .unwrap_or(s);
    for tool in [
        Tool::Bash,
        Tool::Read,
        Tool::Edit,
        Tool::WebFetch,
        Tool::Glob,
    ] {
        for subject in [
            subject,
            "git status",
            "src/main.rs",
            "https://example.com/x",
            "",
        ] {
            let d = gate.decide(&Call::new(tool, subject), Mode::Default);
            if parsed.is_ok() && tool == Tool::Bash && subject == "git status" {
                // The same rule in deny and allow: deny always wins.
                assert!(d.verdict != decode_policy::Verdict::Allow);
            }
        }
    }
});
