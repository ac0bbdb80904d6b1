//! TypeScript for the gate's own types (`decode-policy`), which cross the boundary
//! inside loop events and decision requests.
//!
//! The gate crate stays free of UI concerns, so its types do not derive `TS`. The
//! protocol types name them with `#[ts(as = "…")]` pointing here:
//!
//! - the enums (`Mode`, `Tool`, `Verdict`, `Origin`) get hand-written `TS` impls whose
//!   string unions are built *from the gate's own lists* (`Mode::ALL`, `Tool::ALL`, …),
//!   so a mode or tool added to the gate reaches the UI's types by regenerating;
//! - the structs (`Decision`, `FragmentReport`, `TraceStep`) get TS-only mirrors whose
//!   serde shape a test compares with the real type's JSON (`deny_unknown_fields` one
//!   way, a round trip the other), so a field added to the gate fails that test until
//!   the mirror has it too.

use decode_policy::{CapKind, Mode, Origin, RuleList, Stage, Tool, Verdict};
use serde::{Deserialize, Serialize};
use ts_rs::{Config, TS};

fn union(names: impl IntoIterator<Item = &'static str>) -> String {
    names
        .into_iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Implements `TS` for a marker type standing for a string enum of the gate.
macro_rules! string_union {
    ($marker:ident, $ts_name:literal, $doc:literal, $names:expr) => {
        #[doc = $doc]
        pub struct $marker;

        impl TS for $marker {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;

            fn docs() -> Option<String> {
                Some($doc.to_string())
            }

            fn name(_: &Config) -> String {
                $ts_name.to_string()
            }

            fn inline(_: &Config) -> String {
                union($names)
            }

            fn decl(cfg: &Config) -> String {
                format!("type {} = {};", $ts_name, Self::inline(cfg))
            }

            fn decl_concrete(cfg: &Config) -> String {
                Self::decl(cfg)
            }

            fn output_path() -> Option<std::path::PathBuf> {
                Some(std::path::PathBuf::from(concat!($ts_name, ".ts")))
            }
        }
    };
}

string_union!(
    ModeTs,
    "Mode",
    "A permission mode, in Shift+Tab order (from the gate's `Mode::ALL`).",
    Mode::ALL.map(Mode::name)
);

string_union!(
    ToolTs,
    "Tool",
    "A tool's canonical name (from the gate's `Tool::ALL`, and `mcp` for an MCP tool).",
    Tool::ALL
        .iter()
        .copied()
        .chain(std::iter::once(Tool::Mcp))
        .map(Tool::name)
);

string_union!(
    RuleListTs,
    "RuleList",
    "Which of the three lists a rule is in.",
    RuleList::ALL.map(RuleList::name)
);

/// Every verdict; the match makes a new variant a compile error here.
pub const VERDICTS: [Verdict; 3] = {
    const fn check(v: Verdict) {
        match v {
            Verdict::Allow | Verdict::Ask | Verdict::Deny => {}
        }
    }
    check(Verdict::Allow);
    [Verdict::Allow, Verdict::Ask, Verdict::Deny]
};

/// Every origin of an allow candidate; the match makes a new variant a compile error.
pub const ORIGINS: [Origin; 4] = {
    const fn check(o: Origin) {
        match o {
            Origin::Rule | Origin::Mode | Origin::Wildcard | Origin::Bypass => {}
        }
    }
    check(Origin::Rule);
    [Origin::Rule, Origin::Mode, Origin::Wildcard, Origin::Bypass]
};

string_union!(
    VerdictTs,
    "Verdict",
    "The gate's answer for one call.",
    VERDICTS.map(Verdict::name)
);

string_union!(
    OriginTs,
    "Origin",
    "Where an allow candidate came from.",
    ORIGINS.map(Origin::name)
);

string_union!(
    StageTs,
    "Stage",
    "A stage of the decision, in the order the gate visits them.",
    Stage::ALL.map(Stage::name)
);

string_union!(
    CapKindTs,
    "CapKind",
    "Which cap turned an allow candidate into an ask.",
    CapKind::ALL.map(CapKind::name)
);

/// One stage the decision went through (mirror of `decode_policy::TraceStep`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "TraceStep")]
pub struct TraceStepTs {
    #[ts(as = "StageTs")]
    pub stage: Stage,
    pub result: String,
}

/// What happened to one fragment of a bash command, or to a file tool's path
/// (mirror of `decode_policy::FragmentReport`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "FragmentReport")]
pub struct FragmentReportTs {
    pub text: String,
    #[ts(as = "VerdictTs")]
    pub verdict: Verdict,
    /// The rule that touched it (deny, ask or allow).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[ts(optional)]
    pub rule: Option<String>,
    /// The cap that applied to it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[ts(optional, as = "Option<CapKindTs>")]
    pub cap: Option<CapKind>,
}

/// The gate's full answer for one call (mirror of `decode_policy::Decision`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "Decision")]
pub struct DecisionTs {
    #[ts(as = "VerdictTs")]
    pub verdict: Verdict,
    /// One line a person understands.
    pub reason: String,
    pub trace: Vec<TraceStepTs>,
    pub fragments: Vec<FragmentReportTs>,
    /// When true only "allow once" may be offered.
    pub capped: bool,
    #[ts(as = "Option<OriginTs>")]
    pub origin: Option<Origin>,
    /// Exactly the rules "always allow" would append.
    pub always_allow_rules: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use decode_policy::{Call, Gate, PolicyInput};

    /// Real decisions of the gate, of every verdict, with fragments and an origin.
    fn decisions() -> Vec<decode_policy::Decision> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut input = PolicyInput::new(&root, &root);
        input.project_rules.allow = vec!["bash(git *)".into()];
        input.project_rules.deny = vec!["bash(rm *)".into()];
        let (gate, _) = Gate::new(input);
        vec![
            gate.decide(
                &Call::new(Tool::Bash, "git status && npm test"),
                Mode::Default,
            ),
            gate.decide(&Call::new(Tool::Bash, "git log"), Mode::Default),
            gate.decide(&Call::new(Tool::Bash, "rm -rf x"), Mode::Default),
            gate.decide(&Call::new(Tool::Bash, "git push"), Mode::Auto),
            gate.decide(&Call::new(Tool::Read, "src/main.rs"), Mode::Default),
        ]
    }

    #[test]
    fn the_decision_mirror_has_exactly_the_gates_fields() {
        for d in decisions() {
            let real = serde_json::to_value(&d).unwrap();
            let mirror: DecisionTs = serde_json::from_value(real.clone()).unwrap_or_else(|e| {
                panic!("the gate's Decision has a field the mirror lacks: {e}\n{real}")
            });
            assert_eq!(serde_json::to_value(&mirror).unwrap(), real);
        }
    }

    #[test]
    fn unions_come_from_the_gates_lists() {
        let cfg = Config::new();
        assert_eq!(
            ModeTs::decl(&cfg),
            "type Mode = \"default\" | \"edit\" | \"plan\" | \"auto\" | \"bypass\";"
        );
        assert!(ToolTs::inline(&cfg).contains("\"web_fetch\""));
        for v in VERDICTS {
            assert_eq!(serde_json::to_value(v).unwrap(), v.name());
        }
        for o in ORIGINS {
            assert_eq!(serde_json::to_value(o).unwrap(), o.name());
        }
    }
}
