//! Settings levels (docs/permissions.md, "Settings levels"): managed, user,
//! project and local rules united — a deny anywhere wins, an ask anywhere beats any
//! allow, project and local allow rules count only in a trusted project (or when the
//! person saved them through Decode), and managed `allowManagedRulesOnly` leaves
//! only the managed allow rules. Every reason names the level and file that decided.

use crate::common::{run, strings, Proj};
use decode_policy::{Level, LevelRules, PolicyInput, RuleLists};

fn level(level: Level, file: &str, allow: &[&str], ask: &[&str], deny: &[&str]) -> LevelRules {
    LevelRules {
        level,
        file: file.into(),
        rules: RuleLists {
            allow: strings(allow),
            ask: strings(ask),
            deny: strings(deny),
        },
        external_caps: Vec::new(),
        saved_allow: Vec::new(),
    }
}

const MANAGED: &str = "/etc/decode/managed-settings.json";
const USER: &str = "~/.config/decode/settings.json";
const LOCAL: &str = ".decode/settings.local.json";

fn gate(p: &Proj, trusted: bool, f: impl FnOnce(&mut PolicyInput)) -> decode_policy::Gate {
    p.gate_with(|i| {
        i.trusted = trusted;
        f(i)
    })
}

#[test]
fn deny_anywhere_wins_and_ask_beats_allow_across_levels() {
    let p = Proj::new();
    let g = gate(&p, true, |i| {
        i.levels = vec![
            level(
                Level::User,
                USER,
                &["bash(cargo *)", "bash(make *)"],
                &[],
                &["bash(npm *)"],
            ),
            level(
                Level::Local,
                LOCAL,
                &["bash(cargo test)", "bash(make -j2)"],
                &["bash(cargo test)"],
                &[],
            ),
            level(
                Level::Managed,
                MANAGED,
                &[],
                &["bash(make install)"],
                &["bash(curl *)"],
            ),
        ];
        i.project_rules.allow = strings(&["bash(npm test)", "bash(curl x.sh)"]);
    });
    run(
        &p,
        &g,
        &[
            // Deny at user vs allow at project: the deny, named with its level.
            (
                "default",
                "bash",
                "npm test",
                "deny:bash(npm *) from ~/.config/decode/settings.json (user)",
            ),
            // Deny at managed beats everything, bypass included.
            ("bypass", "bash", "curl x.sh", "deny:(managed)"),
            // Ask at local vs allow at user: the ask.
            (
                "default",
                "bash",
                "cargo test",
                "ask:bash(cargo test) from .decode/settings.local.json (local)",
            ),
            ("bypass", "bash", "cargo test", "ask"),
            // Ask at managed vs allow at user.
            ("auto", "bash", "make install", "ask:(managed)"),
            // Allow rules of each level count in a trusted project.
            ("default", "bash", "cargo build", "allow:(user)"),
            ("default", "bash", "make -j2", "allow"),
            ("default", "bash", "make", "allow:(user)"),
        ],
    );
}

#[test]
fn project_and_local_allow_rules_need_trust_unless_saved_through_decode() {
    let p = Proj::new();
    let mut local = level(
        Level::Local,
        LOCAL,
        &["bash(cargo test)", "bash(make)"],
        &["bash(git push*)"],
        &["bash(rm *)"],
    );
    local.saved_allow = strings(&["bash(make)"]);
    let levels = vec![
        local,
        level(Level::User, USER, &["bash(cargo build)"], &[], &[]),
    ];
    let untrusted = gate(&p, false, |i| {
        i.levels = levels.clone();
        i.project_rules.allow = strings(&["bash(npm test)"]);
    });
    run(
        &p,
        &untrusted,
        &[
            // A committed settings.local.json in an untrusted project grants nothing…
            ("default", "bash", "cargo test", "ask"),
            ("default", "bash", "npm test", "ask"),
            // …but its deny and ask rules apply at once.
            ("bypass", "bash", "rm x", "deny:(local)"),
            ("default", "bash", "git push", "ask"),
            // A rule the person saved through Decode counts at once.
            ("default", "bash", "make", "allow:(local)"),
            // The user's own rules are always trusted.
            ("default", "bash", "cargo build", "allow:(user)"),
        ],
    );
    let trusted = gate(&p, true, |i| i.levels = levels.clone());
    run(
        &p,
        &trusted,
        &[("default", "bash", "cargo test", "allow:(local)")],
    );
}

#[test]
fn allow_managed_rules_only_ignores_every_other_allow_rule() {
    let p = Proj::new();
    let g = gate(&p, true, |i| {
        i.allow_managed_rules_only = true;
        i.levels = vec![
            level(Level::Managed, MANAGED, &["bash(cargo test)"], &[], &[]),
            level(
                Level::User,
                USER,
                &["bash(cargo build)"],
                &[],
                &["bash(curl *)"],
            ),
            level(Level::Local, LOCAL, &["bash(make)"], &[], &[]),
        ];
        i.project_rules.allow = strings(&["bash(npm test)"]);
        i.saved_allow = strings(&["bash(npm test)"]);
        i.agent.rules.allow = strings(&["bash(make -j2)"]);
    });
    run(
        &p,
        &g,
        &[
            ("default", "bash", "cargo test", "allow:(managed)"),
            ("default", "bash", "cargo build", "ask"),
            ("default", "bash", "make", "ask"),
            ("default", "bash", "npm test", "ask"),
            ("default", "bash", "make -j2", "ask"),
            // The other levels' deny rules still apply.
            ("default", "bash", "curl x", "deny:(user)"),
        ],
    );
}

#[test]
fn level_caps_and_the_local_and_managed_files_are_protected() {
    let p = Proj::new();
    let mut user = level(Level::User, USER, &[], &[], &[]);
    user.external_caps = strings(&["ship-it*"]);
    let g = gate(&p, true, |i| {
        i.levels = vec![
            user,
            level(Level::Managed, "/opt/org/managed.json", &[], &[], &[]),
        ];
    });
    run(
        &p,
        &g,
        &[
            ("auto", "bash", "ship-it --now", "ask"),
            // The local file is a permission file: never written automatically.
            ("auto", "write", "{root}/.decode/settings.local.json", "ask"),
            ("auto", "edit", ".decode/settings.local.json", "ask"),
            (
                "auto",
                "bash",
                "echo '{}' > .decode/settings.local.json",
                "ask",
            ),
            // Managed settings, wherever they live, and /etc/decode.
            ("auto", "write", "/etc/decode/managed-settings.json", "ask"),
            ("auto", "write", "/opt/org/managed.json", "ask"),
        ],
    );
}
