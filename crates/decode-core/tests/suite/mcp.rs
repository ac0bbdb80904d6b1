//! MCP in the core (docs/mcp.md): agents' `tools` lists name MCP tools by pattern, and
//! only the person's own settings mark MCP tools read-only (a project's never do).

use std::fs;
use std::path::Path;

use decode_core::agents::{parse_agent, AgentFormat, AgentSource};
use decode_core::state::ActiveState;
use decode_core::TrustStore;
use decode_policy::{Call, Mode, Verdict};

fn agent(front: &str, format: AgentFormat) -> Result<decode_core::Agent, decode_core::AgentError> {
    parse_agent(
        format!("---\n{front}\n---\nbody\n").as_bytes(),
        Path::new("/x/a.md"),
        format,
        AgentSource::Builtin,
    )
}

#[test]
fn an_agents_tools_list_names_mcp_tools_by_pattern() {
    let a = agent(
        "name: a\ndescription: d\nmode: default\ntools: [read, mcp__github__*, MCP__Docs, mcp__github__*]",
        AgentFormat::Decode,
    )
    .unwrap();
    assert_eq!(a.tools, vec![decode_policy::Tool::Read]);
    assert_eq!(a.mcp_tools, vec!["mcp__github__*", "mcp__docs__*"]);
    let a = agent(
        "name: a\ndescription: d\nmode: default\ntools: [read]",
        AgentFormat::Decode,
    )
    .unwrap();
    assert!(
        a.mcp_tools.is_empty(),
        "a list without MCP patterns offers none"
    );
    let a = agent(
        "name: a\ndescription: d\nmode: default\ntools: '*'",
        AgentFormat::Decode,
    )
    .unwrap();
    assert_eq!(a.mcp_tools, vec!["mcp__*"]);
    // A Claude Code file without `tools` gets every tool, MCP ones included.
    let a = agent("name: a\ndescription: d", AgentFormat::Claude).unwrap();
    assert_eq!(a.mcp_tools, vec!["mcp__*"]);
    let e = agent(
        "name: a\ndescription: d\nmode: default\ntools: [read, mcp__bad name]",
        AgentFormat::Decode,
    )
    .unwrap_err();
    assert!(e.to_string().contains("mcp__bad name"), "{e}");
}

#[test]
fn the_built_in_build_agent_offers_every_mcp_tool_and_plan_none() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (state, _) =
        ActiveState::open(project.path(), home.path(), data.path(), None, None).unwrap();
    let call = Call::by_name("mcp__git__status", "{}").unwrap();
    assert_eq!(state.decide(&call).verdict, Verdict::Ask);
    state.select_agent("plan").unwrap();
    let d = state.decide(&call);
    assert_eq!(d.verdict, Verdict::Deny);
    assert!(
        d.reason.contains("not available to agent plan"),
        "{}",
        d.reason
    );
}

#[test]
fn only_the_persons_own_settings_mark_a_tool_read_only_and_changes_apply_at_once() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    TrustStore::open(data.path()).trust(project.path()).unwrap();
    // The project tries to mark its own server read-only: never read.
    fs::create_dir_all(project.path().join(".decode")).unwrap();
    fs::write(
        project.path().join(".decode/settings.json"),
        r#"{"mcp": {"git": {"readOnly": true}}}"#,
    )
    .unwrap();
    let (state, _) = ActiveState::open(
        project.path(),
        home.path(),
        data.path(),
        None,
        Some(Mode::Auto),
    )
    .unwrap();
    let status = Call::by_name("mcp__git__status", "{}").unwrap();
    let d = state.decide(&status);
    assert_eq!(d.verdict, Verdict::Ask, "{}", d.reason);
    assert!(d.reason.starts_with("unknown effects"), "{}", d.reason);

    // The person marks it in their own settings: the next call sees it.
    let config = decode_core::mcp::user_config_dir(home.path());
    fs::create_dir_all(&config).unwrap();
    let user = decode_core::mcp::user_settings_path(&config);
    fs::write(&user, r#"{"mcp": {"git": {"readOnlyTools": ["status"]}}}"#).unwrap();
    let d = state.decide(&status);
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    let commit = Call::by_name("mcp__git__commit", "{}").unwrap();
    assert_eq!(state.decide(&commit).verdict, Verdict::Ask);
    state.set_mode(Mode::Plan);
    assert_eq!(state.decide(&status).verdict, Verdict::Allow);
    assert_eq!(state.decide(&commit).verdict, Verdict::Deny);

    // A malformed file marks nothing (fail closed), and says so.
    fs::write(&user, r#"{"mcp": {"git": "#).unwrap();
    assert_eq!(state.decide(&status).verdict, Verdict::Deny);
    let diagnostics = state.reload_settings();
    assert!(
        diagnostics
            .iter()
            .any(|d| d.to_string().contains("settings.json")),
        "{diagnostics:?}"
    );
}
