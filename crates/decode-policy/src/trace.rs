//! What a decision reports: verdict, reason, trace, per-fragment reports.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The name serde gives a unit variant of an enum, so that a name written in a
/// `#[serde(rename…)]` attribute is the only spelling of it.
///
/// # Panics
/// When `value` is not a unit variant (a programming error: only fieldless enums
/// call this, and each has a test naming every variant).
pub fn serde_name<T: Serialize>(value: &T) -> &'static str {
    match serde_variant::to_variant_name(value) {
        Ok(name) => name,
        Err(e) => panic!("serde_name called on a value that is not a unit variant: {e}"),
    }
}

/// The gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    /// The name it is serialised under.
    pub fn name(self) -> &'static str {
        serde_name(&self)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an allow candidate came from (docs/permissions.md, "The stages").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Every fragment matched an allow rule.
    Rule,
    /// The mode table allowed it.
    Mode,
    /// Auto mode: every allow candidate is a wildcard (no path scope).
    Wildcard,
    /// Bypass mode: only the critical-removal cap applies.
    Bypass,
}

impl Origin {
    /// The name it is serialised under.
    pub fn name(self) -> &'static str {
        serde_name(&self)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A stage of the decision, in the order the gate visits them
/// (docs/permissions.md, "The stages").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The tool is outside the agent's list (or is offered).
    NotOffered,
    /// A control tool: never gated.
    Control,
    /// A path past the length or depth a tool can judge.
    PathLimit,
    DenyRules,
    /// Plan mode stops every edit and command.
    Plan,
    /// A command the gate cannot see through.
    Opaque,
    AskRules,
    Bypass,
    AllowRules,
    /// The mode table decided.
    Mode,
    Caps,
    /// Command hooks of the settings, after the gate (docs/permissions.md, "Hooks").
    Hooks,
}

impl Stage {
    /// Every stage, in the order the gate visits them.
    pub const ALL: [Stage; 12] = [
        Stage::NotOffered,
        Stage::Control,
        Stage::PathLimit,
        Stage::DenyRules,
        Stage::Plan,
        Stage::Opaque,
        Stage::AskRules,
        Stage::Bypass,
        Stage::AllowRules,
        Stage::Mode,
        Stage::Caps,
        Stage::Hooks,
    ];

    /// The name it is serialised under (`not_offered`, `deny_rules`, …).
    pub fn name(self) -> &'static str {
        serde_name(&self)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Which cap turned an allow candidate into an ask (docs/permissions.md, "Caps").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CapKind {
    /// Removing `/`, a child of `/`, the home folder or the project (or a parent).
    #[serde(rename = "critical removal")]
    Critical,
    /// Writing the project's permission files, Decode's folders, `.git` internals…
    #[serde(rename = "never automatic")]
    NeverAuto,
    /// Pushing, publishing, deploying: effects outside the machine.
    #[serde(rename = "external effects")]
    External,
    /// A path outside the project and the granted folders.
    #[serde(rename = "path scope")]
    Scope,
    /// A connection to a host no rule allows, or to a private, loopback,
    /// link-local or metadata address (docs/network.md).
    #[serde(rename = "network")]
    Network,
}

impl CapKind {
    /// Every cap, most serious first.
    pub const ALL: [CapKind; 5] = [
        CapKind::Critical,
        CapKind::NeverAuto,
        CapKind::External,
        CapKind::Scope,
        CapKind::Network,
    ];

    /// The name it is serialised under (`critical removal`, …).
    pub fn name(self) -> &'static str {
        serde_name(&self)
    }
}

impl fmt::Display for CapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// One stage the decision went through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStep {
    pub stage: Stage,
    /// A short text: what the stage found.
    pub result: String,
}

/// What happened to one fragment of a bash command (or the path of a file tool).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FragmentReport {
    pub text: String,
    pub verdict: Verdict,
    /// The rule that touched it (deny, ask or allow), as canonical text.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rule: Option<String>,
    /// The cap that applied to it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cap: Option<CapKind>,
}

/// The gate's full answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub verdict: Verdict,
    /// One line a person understands.
    pub reason: String,
    /// Every stage visited, in order.
    pub trace: Vec<TraceStep>,
    pub fragments: Vec<FragmentReport>,
    /// When true only "allow once" may be offered.
    pub capped: bool,
    /// Origin of the allow candidate, when there was one.
    pub origin: Option<Origin>,
    /// Exactly the rules "always allow" would append; empty when capped or not ask.
    pub always_allow_rules: Vec<String>,
}

impl Decision {
    pub fn is_allow(&self) -> bool {
        self.verdict == Verdict::Allow
    }
    pub fn is_ask(&self) -> bool {
        self.verdict == Verdict::Ask
    }
    pub fn is_deny(&self) -> bool {
        self.verdict == Verdict::Deny
    }
}

/// A rule that did not parse (it is skipped), or another compile-time problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyWarning {
    /// The rule text as written (empty for warnings that are not about a rule).
    pub rule: String,
    /// Where it came from: `.decode/settings.json` or `agent NAME`.
    pub source: String,
    pub message: String,
}

impl fmt::Display for PolicyWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rule.is_empty() {
            write!(f, "{}: {}", self.source, self.message)
        } else {
            write!(
                f,
                "{}: rule `{}` skipped: {}",
                self.source, self.rule, self.message
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialised_names() {
        let stages: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(
            stages,
            [
                "not_offered",
                "control",
                "path_limit",
                "deny_rules",
                "plan",
                "opaque",
                "ask_rules",
                "bypass",
                "allow_rules",
                "mode",
                "caps",
                "hooks"
            ]
        );
        for s in Stage::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(format!("{s:12}|"), format!("{:12}|", s.name()));
        }
        let caps: Vec<&str> = CapKind::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            caps,
            [
                "critical removal",
                "never automatic",
                "external effects",
                "path scope",
                "network"
            ]
        );
        for c in CapKind::ALL {
            let back: CapKind = serde_json::from_value(serde_json::json!(c.name())).unwrap();
            assert_eq!(back, c);
        }
        assert_eq!(Verdict::Ask.name(), "ask");
        assert_eq!(Origin::Wildcard.name(), "wildcard");
    }

    #[test]
    #[should_panic(expected = "not a unit variant")]
    fn serde_name_refuses_a_value_with_fields() {
        serde_name(&TraceStep {
            stage: Stage::Caps,
            result: String::new(),
        });
    }
}
