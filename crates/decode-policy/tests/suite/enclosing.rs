//! Trust boundaries, round 3: the folders around a project keep their deny and ask
//! rules (a subfolder, a submodule or a vendored repository never sheds them), and
//! allow rules the person saved through Decode count in an untrusted project.

use crate::common::{run, strings, Proj};
use decode_policy::{EnclosingRules, RuleLists};

/// `proj/` nested in the folder that holds it (`{base}`), whose settings deny and ask.
fn nested(p: &Proj, trusted: bool) -> decode_policy::Gate {
    p.gate_with(|i| {
        i.trusted = trusted;
        i.enclosing = vec![EnclosingRules {
            root: p.base.clone(),
            rules: RuleLists {
                allow: strings(&["bash(npm test)", "read(/etc/**)"]),
                ask: strings(&["bash(make *)", "edit(docs/**)"]),
                deny: strings(&["bash(curl *)", "read(secrets/**)", "read(.env)"]),
            },
            external_caps: strings(&["deploy-it*"]),
        }];
    })
}

#[test]
fn the_rules_of_a_folder_around_the_project_still_deny_and_ask() {
    let p = Proj::new();
    for trusted in [false, true] {
        let g = nested(&p, trusted);
        run(
            &p,
            &g,
            &[
                // Deny rules: in every mode, bypass included, named with their file.
                (
                    "bypass",
                    "bash",
                    "curl https://x.sh",
                    "deny:{base}/.decode/settings.json",
                ),
                ("auto", "bash", "env X=1 curl x", "deny"),
                ("bypass", "read", "{base}/secrets/key", "deny"),
                ("default", "read", "{base}/.env", "deny"),
                ("bypass", "grep", "{base}/secrets", "deny"),
                // Relative patterns are that folder's, not the nested project's.
                ("default", "read", "{root}/secrets/key", "allow"),
                ("default", "read", ".env", "allow"),
                // Ask rules beat the modes.
                ("bypass", "bash", "make release", "ask"),
                ("auto", "write", "{base}/docs/x.md", "ask"),
                ("auto", "write", "{root}/docs/x.md", "allow"),
                // Its caps.external.
                ("auto", "bash", "deploy-it --now", "ask"),
                // Its allow rules never count here.
                ("default", "bash", "npm test", "ask"),
                ("default", "read", "/etc/hosts", "ask"),
            ],
        );
    }
}

#[test]
fn rules_the_person_saved_count_in_an_untrusted_project() {
    let p = Proj::new();
    let g = p.gate_with(|i| {
        i.trusted = false;
        i.project_rules.allow = strings(&["bash(npm test)", "bash(make)"]);
        i.saved_allow = strings(&["bash(npm test)"]);
    });
    run(
        &p,
        &g,
        &[
            ("default", "bash", "npm test", "allow:.decode/settings.json"),
            ("default", "bash", "make", "ask"),
        ],
    );
    // Still never past a deny rule or a cap.
    let g = p.gate_with(|i| {
        i.trusted = false;
        i.project_rules.deny = strings(&["bash(npm test)"]);
        i.saved_allow = strings(&["bash(npm test)", "bash(git push)"]);
    });
    run(
        &p,
        &g,
        &[
            ("default", "bash", "npm test", "deny"),
            ("default", "bash", "git push", "ask"),
        ],
    );
}

#[test]
fn a_search_that_could_reach_a_denied_file_is_told() {
    use decode_policy::Verdict;
    let p = Proj::new();
    std::fs::create_dir_all(p.root.join("secrets")).unwrap();
    std::fs::write(p.root.join("secrets/k"), "k").unwrap();
    std::fs::create_dir_all(p.base.join("private")).unwrap();
    let g = p.gate_with(|i| {
        i.project_rules.deny = strings(&["read(secrets/**)"]);
        i.project_rules.ask = strings(&["read(*.pem)"]);
        i.enclosing = vec![EnclosingRules {
            root: p.base.clone(),
            rules: RuleLists {
                allow: Vec::new(),
                ask: Vec::new(),
                deny: strings(&["read(private/**)"]),
            },
            external_caps: Vec::new(),
        }];
    });
    let reach = |dir: &std::path::Path, pattern: &str| g.search_could_reach(dir, pattern);
    let (v, rule) = reach(&p.root, "*").unwrap();
    assert_eq!(v, Verdict::Deny);
    assert!(rule.contains("read(secrets/**)"), "{rule}");
    assert_eq!(
        reach(&p.root.join("src"), "*").map(|r| r.0),
        Some(Verdict::Ask)
    );
    assert_eq!(reach(&p.root.join("src"), "**/*.rs"), None);
    assert_eq!(reach(&p.root, "src/**/*.rs"), None);
    // The folder around the project: its relative rule, anchored there.
    let (v, rule) = reach(&p.base, "**/*.txt").unwrap();
    assert_eq!(v, Verdict::Deny);
    assert!(
        rule.contains("read(") && rule.contains("/.decode/settings.json"),
        "{rule}"
    );
    // A rule whose folder is not there reaches nothing yet.
    std::fs::remove_dir_all(p.root.join("secrets")).unwrap();
    assert_eq!(reach(&p.root, "**/*.rs"), None);
}
