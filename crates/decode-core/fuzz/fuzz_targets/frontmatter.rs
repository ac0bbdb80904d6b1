//! Arbitrary bytes → agent file parser, in both formats. Must never panic; a parsed
//! agent must satisfy the loader's invariants and every error must display.
#![no_main]

use std::path::Path;

use decode_core::agents::{parse_agent, split_frontmatter, AgentFormat, AgentSource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = split_frontmatter(text);
    }
    for format in [AgentFormat::Decode, AgentFormat::Claude] {
        match parse_agent(data, Path::new("fuzz.md"), format, AgentSource::Builtin) {
            Ok(agent) => {
                assert!(!agent.name.is_empty());
                assert_eq!(agent.name, agent.name.trim());
                let mut tools = agent.tools.clone();
                tools.sort();
                tools.dedup();
                assert_eq!(tools.len(), agent.tools.len(), "duplicate tools");
                for rule in agent
                    .rules
                    .allow
                    .iter()
                    .chain(&agent.rules.ask)
                    .chain(&agent.rules.deny)
                {
                    assert!(decode_policy::Rule::parse(rule).is_ok(), "kept a bad rule");
                }
            }
            Err(e) => {
                let shown = e.to_string();
                assert!(shown.starts_with("fuzz.md"));
            }
        }
    }
});
