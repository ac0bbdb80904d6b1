//! Every command the window's backend registers is declared to Tauri (build.rs) and
//! granted to the window (capabilities/main.json), and nothing else is: a command
//! missing from either is refused at run time ("not allowed"), one granted but not
//! registered is a grant nobody needs.

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

    let gui = std::fs::read_to_string(format!("{dir}/src/gui.rs")).unwrap();
    let handler = between(&gui, "generate_handler![", "]");
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

    assert_eq!(registered, declared, "gui.rs generate_handler! vs build.rs");
    assert_eq!(declared, granted, "build.rs vs capabilities/main.json");
}
