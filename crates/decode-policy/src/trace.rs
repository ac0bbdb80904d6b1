//! What a decision reports: verdict, reason, trace, per-fragment reports.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
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
    pub fn name(self) -> &'static str {
        match self {
            Origin::Rule => "rule",
            Origin::Mode => "mode",
            Origin::Wildcard => "wildcard",
            Origin::Bypass => "bypass",
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One stage the decision went through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStep {
    /// `not_offered`, `control`, `deny_rules`, `plan`, `opaque`, `ask_rules`,
    /// `bypass`, `allow_rules`, `mode`, `caps`, `result`.
    pub stage: String,
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
    pub cap: Option<String>,
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
