//! MCP tools through the gate (docs/mcp.md): asks in default and edit mode, denied in
//! plan mode, asks in auto mode unless the person marked the tool read-only or an allow
//! rule names it; rules `mcp__SERVER__TOOL`, `mcp__SERVER__*` and `mcp__*` in every list.

use decode_policy::{
    AgentPolicy, Call, CapKind, Gate, McpName, Mode, Origin, PolicyInput, Tool, Verdict,
};

use crate::common::{strings, Proj};

fn call(name: &str, args: &str) -> Call {
    Call::by_name(name, args).expect("an MCP name")
}

fn gate(p: &Proj, f: impl FnOnce(&mut PolicyInput)) -> Gate {
    p.gate_with(f)
}

#[test]
fn an_unmarked_tool_asks_in_default_and_edit_is_denied_in_plan_and_asks_in_auto() {
    let p = Proj::new();
    let g = gate(&p, |_| {});
    let c = call("mcp__git__status", r#"{"repo":"."}"#);
    for mode in [Mode::Default, Mode::Edit] {
        let d = g.decide(&c, mode);
        assert_eq!(d.verdict, Verdict::Ask, "{mode}: {}", d.reason);
        assert!(!d.capped);
        assert!(d.reason.contains("effects are unknown"), "{}", d.reason);
        assert_eq!(
            d.always_allow_rules,
            vec![r#"mcp__git__status(\{"repo":"."\})"#.to_string()]
        );
    }
    let d = g.decide(&c, Mode::Plan);
    assert_eq!(d.verdict, Verdict::Deny, "{}", d.reason);
    assert!(d.reason.contains("exit_plan_mode"), "{}", d.reason);

    let d = g.decide(&c, Mode::Auto);
    assert_eq!(d.verdict, Verdict::Ask, "{}", d.reason);
    assert!(d.capped, "the unknown-effects cap offers allow once only");
    assert_eq!(d.fragments[0].cap, Some(CapKind::External));
    assert!(d.reason.starts_with("unknown effects"), "{}", d.reason);

    let d = g.decide(&c, Mode::Bypass);
    assert_eq!(d.verdict, Verdict::Allow);
    assert_eq!(d.origin, Some(Origin::Bypass));
}

#[test]
fn the_always_allow_rule_covers_the_call_once_saved() {
    let p = Proj::new();
    let c = call("mcp__git__status", r#"{"b":[1,{"y":"*"}],"a":"x(y)"}"#);
    let d = gate(&p, |_| {}).decide(&c, Mode::Default);
    let rules = d.always_allow_rules.clone();
    assert_eq!(rules.len(), 1);
    let g = gate(&p, |i| i.project_rules.allow = rules.clone());
    assert_eq!(g.decide(&c, Mode::Default).verdict, Verdict::Allow);
    // The same arguments in another order are the same call.
    let c2 = call("mcp__git__status", r#"{"a":"x(y)","b":[1,{"y":"*"}]}"#);
    assert_eq!(g.decide(&c2, Mode::Default).verdict, Verdict::Allow);
    // Other arguments are not.
    let c3 = call("mcp__git__status", r#"{"a":"x(y)","b":[1,{"y":"z"}]}"#);
    assert_eq!(g.decide(&c3, Mode::Default).verdict, Verdict::Ask);
}

#[test]
fn marked_read_only_tools_run_in_every_mode_but_rules_still_apply() {
    let p = Proj::new();
    let g = gate(&p, |i| {
        i.mcp_read_only = strings(&["mcp__docs__*", "mcp__git__status"]);
        i.project_rules.deny = strings(&["mcp__docs__search(*secret*)"]);
        i.project_rules.ask = strings(&["mcp__docs__fetch"]);
    });
    for mode in Mode::ALL {
        for name in ["mcp__docs__search", "mcp__git__status", "mcp__DOCS__Search"] {
            let d = g.decide(&call(name, r#"{"q":"rust"}"#), mode);
            assert_eq!(d.verdict, Verdict::Allow, "{name} in {mode}: {}", d.reason);
        }
        let d = g.decide(&call("mcp__git__commit", "{}"), mode);
        let want = match mode {
            Mode::Plan => Verdict::Deny,
            Mode::Bypass => Verdict::Allow,
            _ => Verdict::Ask,
        };
        assert_eq!(d.verdict, want, "commit in {mode}: {}", d.reason);
        let d = g.decide(&call("mcp__docs__search", r#"{"q":"my secret"}"#), mode);
        assert_eq!(d.verdict, Verdict::Deny, "{mode}");
        let d = g.decide(&call("mcp__docs__fetch", "{}"), mode);
        assert_eq!(d.verdict, Verdict::Ask, "ask rules beat {mode}");
    }
}

#[test]
fn in_auto_mode_only_an_allow_rule_naming_the_server_lifts_the_cap() {
    let p = Proj::new();
    let c = call("mcp__git__status", "{}");
    for (allow, want) in [
        ("mcp__git__status", Verdict::Allow),
        ("mcp__git__*", Verdict::Allow),
        ("mcp__git", Verdict::Allow),
        ("MCP__Git__Status", Verdict::Allow),
        ("mcp__git__status(\\{\\})", Verdict::Allow),
        ("mcp__*", Verdict::Ask),
        ("mcp__g*__*", Verdict::Ask),
        ("mcp__git__commit", Verdict::Ask),
        ("mcp__other__*", Verdict::Ask),
    ] {
        let g = gate(&p, |i| i.project_rules.allow = strings(&[allow]));
        let d = g.decide(&c, Mode::Auto);
        assert_eq!(d.verdict, want, "allow {allow}: {}", d.reason);
        if want == Verdict::Allow {
            assert_eq!(d.origin, Some(Origin::Wildcard));
        }
    }
    // Beside a naming rule, a wildcard one first in the list does not hide it.
    let g = gate(&p, |i| {
        i.project_rules.allow = strings(&["mcp__*", "mcp__git__*"]);
    });
    assert_eq!(g.decide(&c, Mode::Auto).verdict, Verdict::Allow);
    // In default mode any covering allow rule allows.
    let g = gate(&p, |i| i.project_rules.allow = strings(&["mcp__*"]));
    assert_eq!(g.decide(&c, Mode::Default).verdict, Verdict::Allow);
    // Plan mode: no allow rule lifts it.
    let g = gate(&p, |i| i.project_rules.allow = strings(&["mcp__git__*"]));
    assert_eq!(g.decide(&c, Mode::Plan).verdict, Verdict::Deny);
}

#[test]
fn deny_and_ask_rules_in_every_list_and_level() {
    let p = Proj::new();
    let g = gate(&p, |i| {
        i.project_rules.deny = strings(&["mcp__*(*rm -rf*)", "mcp__evil"]);
        i.agent.rules.ask = strings(&["mcp__git__push"]);
    });
    for mode in Mode::ALL {
        let d = g.decide(&call("mcp__shell__run", r#"{"cmd":"rm -rf /"}"#), mode);
        assert_eq!(d.verdict, Verdict::Deny, "{mode}");
        let d = g.decide(&call("mcp__evil__anything", "{}"), mode);
        assert_eq!(d.verdict, Verdict::Deny, "{mode}");
        let d = g.decide(&call("mcp__git__push", "{}"), mode);
        let want = if mode == Mode::Plan {
            Verdict::Deny
        } else {
            Verdict::Ask
        };
        assert_eq!(d.verdict, want, "{mode}: {}", d.reason);
    }
}

#[test]
fn an_untrusted_projects_allow_rules_do_not_count() {
    let p = Proj::new();
    let g = gate(&p, |i| {
        i.trusted = false;
        i.project_rules.allow = strings(&["mcp__git__*"]);
        i.project_rules.deny = strings(&["mcp__git__push"]);
    });
    assert_eq!(
        g.decide(&call("mcp__git__status", "{}"), Mode::Default)
            .verdict,
        Verdict::Ask
    );
    assert_eq!(
        g.decide(&call("mcp__git__push", "{}"), Mode::Bypass)
            .verdict,
        Verdict::Deny
    );
}

#[test]
fn an_agent_offers_only_the_mcp_tools_its_list_names() {
    let p = Proj::new();
    let agent = |mcp: &[&str]| AgentPolicy {
        name: "helper".into(),
        tools: vec![Tool::Read],
        mcp_tools: strings(mcp),
        rules: Default::default(),
        from_project: false,
    };
    let g = gate(&p, |i| i.agent = agent(&[]));
    let d = g.decide(&call("mcp__git__status", "{}"), Mode::Bypass);
    assert_eq!(d.verdict, Verdict::Deny);
    assert!(
        d.reason
            .contains("`mcp__git__status` is not available to agent helper"),
        "{}",
        d.reason
    );
    let g = gate(&p, |i| i.agent = agent(&["mcp__git__*"]));
    assert_eq!(
        g.decide(&call("mcp__git__status", "{}"), Mode::Bypass)
            .verdict,
        Verdict::Allow
    );
    assert_eq!(
        g.decide(&call("mcp__docs__search", "{}"), Mode::Bypass)
            .verdict,
        Verdict::Deny
    );
    // The built-in build agent has every MCP tool.
    let g = gate(&p, |_| {});
    assert!(g.offers_mcp(&McpName::parse("mcp__any__thing").unwrap()));
}

#[test]
fn a_call_of_the_mcp_tool_without_a_name_is_denied() {
    let p = Proj::new();
    let g = gate(&p, |_| {});
    let d = g.decide_as_offered(&Call::new(Tool::Mcp, "{}"), Mode::Bypass);
    assert_eq!(d.verdict, Verdict::Deny);
    let d = g.decide(&Call::new(Tool::Mcp, "{}"), Mode::Bypass);
    assert_eq!(d.verdict, Verdict::Deny);
}

#[test]
fn names_that_are_not_mcp_names_are_unknown_tools() {
    assert!(Call::by_name("mcp__", "{}").is_none());
    assert!(Call::by_name("mcp__git", "{}").is_none());
    assert!(Call::by_name("mcp__git__a b", "{}").is_none());
    assert!(Call::by_name("mcp", "{}").is_none());
    let c = Call::by_name("Bash", "ls").unwrap();
    assert_eq!((c.tool, c.mcp), (Tool::Bash, None));
    // Arguments that are not JSON are kept as given; an empty subject is `{}`.
    assert_eq!(
        Call::by_name("mcp__a__b", "not json").unwrap().subject,
        "not json"
    );
    assert_eq!(Call::by_name("mcp__a__b", "").unwrap().subject, "{}");
}

#[test]
fn bad_mcp_patterns_are_warnings_not_silence() {
    let p = Proj::new();
    let mut input = p.input();
    input.mcp_read_only = strings(&["mcp__a b"]);
    input.project_rules.allow = strings(&["mcp__x y"]);
    let (_, warnings) = Gate::new(input);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}
