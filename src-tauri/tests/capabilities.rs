//! Every command of the wire (decode-protocol `wire.rs`, the one declaration the page's
//! TypeScript is generated from) is registered (`commands.rs`), declared to Tauri
//! (`build.rs`) and granted to the window (`capabilities/main.json`), and nothing else
//! is: a command missing from one of them is refused at run time ("not allowed"), one
//! granted but not declared is a grant nobody needs.

use std::collections::BTreeSet;

fn quoted_words(text: &str) -> BTreeSet<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start}")) + start.len();
    let to = text[from..].find(end).unwrap_or_else(|| panic!("no {end}")) + from;
    &text[from..to]
}

#[test]
fn registered_declared_and_granted_commands_are_the_same() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let build = std::fs::read_to_string(format!("{dir}/build.rs")).unwrap();
    let declared = quoted_words(between(&build, ".commands(&[", "])"));

    let commands = std::fs::read_to_string(format!("{dir}/src/commands.rs")).unwrap();
    let handler = between(&commands, "generate_handler![", "]");
    let registered: BTreeSet<String> = handler
        .split(',')
        .map(|s| s.trim().rsplit("::").next().unwrap_or("").to_string())
        .filter(|s| !s.is_empty())
        .collect();

    let caps = std::fs::read_to_string(format!("{dir}/capabilities/main.json")).unwrap();
    let granted: BTreeSet<String> = quoted_words(between(&caps, "\"permissions\"", "]"))
        .into_iter()
        .filter_map(|p| p.strip_prefix("allow-").map(|c| c.replace('-', "_")))
        .collect();

    let wire: BTreeSet<String> = decode_protocol::wire::COMMANDS
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(
        registered, wire,
        "commands.rs generate_handler! vs the wire"
    );
    assert_eq!(declared, wire, "build.rs vs the wire");
    assert_eq!(granted, wire, "capabilities/main.json vs the wire");
}
