//! What a request offers the person: the answers it accepts and, when an answer its
//! kind usually offers is withheld, why.
//!
//! Derived once, from the request alone ([`DecisionRequest::offered`]), and carried on
//! the channel's events, so the terminal, the native dialog and the window show the
//! same answers and the channel refuses every other one
//! ([`DecisionRequest::misfit`] is built on it: the two cannot drift).

use decode_policy::{Mode, Tool};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::decision::{DecisionAnswer, DecisionRequest};
use crate::policy_ts::ModeTs;

/// The kind of an answer, as [`DecisionAnswer`] names it (`kind` on the wire).
/// `unavailable` is not among them: it is what is given when nobody can answer,
/// and it fits every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    AllowOnce,
    AllowForSession,
    AlwaysAllow,
    EditCommand,
    Deny,
    Answer,
    PlanApproved,
    PlanRejected,
}

/// Why a request withholds "for this session" and "always allow", which a
/// permission or network ask otherwise offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Withheld {
    /// The call is capped: no rule may allow it, only "allow once".
    CappedCall,
    /// The connection is capped by the host policy: only "allow once".
    CappedConnection,
    /// The gate has no rule to offer for this ask (nothing "always allow" could save).
    NoRule,
}

impl Withheld {
    /// One sentence saying why.
    pub fn sentence(self) -> &'static str {
        match self {
            Withheld::CappedCall => "this call is capped: only \"allow once\" is offered",
            Withheld::CappedConnection => {
                "this connection is capped: only \"allow once\" is offered"
            }
            Withheld::NoRule => {
                "the gate has no rule to offer for this ask: only \"allow once\" is offered"
            }
        }
    }
}

/// The answers a request offers (docs/window.md, "Every answer is bound to its
/// request").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Offered {
    /// The kinds of answer it accepts, in the order the surfaces offer them.
    pub answers: Vec<AnswerKind>,
    /// A plan approval: the modes it may be approved into, the default first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ModeTs>>", optional)]
    pub modes: Vec<Mode>,
    /// Why "for this session" and "always allow" are withheld, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub withheld: Option<Withheld>,
}

impl Offered {
    /// Whether it offers answers of `kind`.
    pub fn offers(&self, kind: AnswerKind) -> bool {
        self.answers.contains(&kind)
    }

    /// Whether `answer` is one it offers (a plan approval: into a mode it offers).
    pub fn accepts(&self, answer: &DecisionAnswer) -> bool {
        match answer {
            DecisionAnswer::Unavailable { .. } => true,
            DecisionAnswer::PlanApproved { mode } => {
                self.offers(AnswerKind::PlanApproved) && self.modes.contains(mode)
            }
            other => other.kind().is_some_and(|k| self.offers(k)),
        }
    }
}

impl DecisionAnswer {
    /// Its kind; `None` for [`DecisionAnswer::Unavailable`] (no person answered).
    pub fn kind(&self) -> Option<AnswerKind> {
        Some(match self {
            DecisionAnswer::AllowOnce => AnswerKind::AllowOnce,
            DecisionAnswer::AllowForSession { .. } => AnswerKind::AllowForSession,
            DecisionAnswer::AlwaysAllow { .. } => AnswerKind::AlwaysAllow,
            DecisionAnswer::EditCommand { .. } => AnswerKind::EditCommand,
            DecisionAnswer::Deny { .. } => AnswerKind::Deny,
            DecisionAnswer::Answer { .. } => AnswerKind::Answer,
            DecisionAnswer::PlanApproved { .. } => AnswerKind::PlanApproved,
            DecisionAnswer::PlanRejected { .. } => AnswerKind::PlanRejected,
            DecisionAnswer::Unavailable { .. } => return None,
        })
    }
}

/// "Allow once", then "for this session" and "always allow" unless `withheld`.
fn allow(withheld: Option<Withheld>) -> Vec<AnswerKind> {
    let mut answers = vec![AnswerKind::AllowOnce];
    if withheld.is_none() {
        answers.extend([AnswerKind::AllowForSession, AnswerKind::AlwaysAllow]);
    }
    answers
}

/// Why a permission or network ask withholds keeping a rule, if it does.
fn keeping_withheld(decision: &decode_policy::Decision, capped: Withheld) -> Option<Withheld> {
    if decision.capped {
        Some(capped)
    } else if decision.always_allow_rules.is_empty() {
        Some(Withheld::NoRule)
    } else {
        None
    }
}

impl DecisionRequest {
    /// The answers this request offers, and why any is withheld: a capped call offers
    /// only "allow once" (and deny); only a command (bash) can be edited; a plan
    /// offers its `modes`; running outside the sandbox is once or not at all; a
    /// question takes an answer. An edited command offers what any other does: the
    /// window withholds keeping a rule only while the person is still editing (the
    /// answer then is the edit).
    pub fn offered(&self) -> Offered {
        use AnswerKind as K;
        let (answers, modes, withheld) = match self {
            DecisionRequest::Permission { tool, decision, .. } => {
                let withheld = keeping_withheld(decision, Withheld::CappedCall);
                let mut answers = allow(withheld);
                if *tool == Tool::Bash {
                    answers.push(K::EditCommand);
                }
                answers.push(K::Deny);
                (answers, Vec::new(), withheld)
            }
            DecisionRequest::Network { decision, .. } => {
                let withheld = keeping_withheld(decision, Withheld::CappedConnection);
                let mut answers = allow(withheld);
                answers.push(K::Deny);
                (answers, Vec::new(), withheld)
            }
            DecisionRequest::RunOutside { .. } => (vec![K::AllowOnce, K::Deny], Vec::new(), None),
            DecisionRequest::Question { .. } => (vec![K::Answer, K::Deny], Vec::new(), None),
            DecisionRequest::PlanApproval { modes, .. } => (
                vec![K::PlanApproved, K::PlanRejected, K::Deny],
                modes.clone(),
                None,
            ),
        };
        Offered {
            answers,
            modes,
            withheld,
        }
    }

    /// Why `answer` cannot answer this request, if it cannot: it fits exactly when
    /// [`offered`](Self::offered) accepts it.
    pub fn misfit(&self, answer: &DecisionAnswer) -> Option<String> {
        let offered = self.offered();
        if offered.accepts(answer) {
            return None;
        }
        Some(match (self, answer, offered.withheld) {
            (
                DecisionRequest::Permission { .. } | DecisionRequest::Network { .. },
                DecisionAnswer::AllowForSession { .. } | DecisionAnswer::AlwaysAllow { .. },
                Some(withheld),
            ) => withheld.sentence().to_string(),
            (DecisionRequest::Permission { tool, .. }, DecisionAnswer::EditCommand { .. }, _) => {
                format!("only a command can be edited, not a {tool} call")
            }
            (DecisionRequest::PlanApproval { .. }, DecisionAnswer::PlanApproved { mode }, _) => {
                format!("the plan approval does not offer {mode} mode")
            }
            _ => "this answer does not fit the request it was given for".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{BoundKind, ChannelEvent, SandboxBound};
    use decode_policy::{Decision, Verdict};
    use AnswerKind as K;

    fn decision(capped: bool, rules: &[&str]) -> Decision {
        Decision {
            verdict: Verdict::Ask,
            reason: "default mode asks".into(),
            trace: Vec::new(),
            fragments: Vec::new(),
            capped,
            origin: None,
            always_allow_rules: rules.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn permission(tool: Tool, d: Decision, edited: bool) -> DecisionRequest {
        DecisionRequest::Permission {
            tool,
            subject: "x".into(),
            intent: None,
            input: serde_json::json!({}),
            decision: d,
            cwd: None,
            diff: None,
            suggested_rules: Vec::new(),
            edited,
            mcp: None,
        }
    }

    fn network(d: Decision) -> DecisionRequest {
        DecisionRequest::Network {
            host: "example.org".into(),
            port: 443,
            command: "curl https://example.org".into(),
            cwd: "/p".into(),
            decision: d,
        }
    }

    fn run_outside() -> DecisionRequest {
        DecisionRequest::RunOutside {
            command: "touch ~/x".into(),
            cwd: "/p".into(),
            bound: SandboxBound {
                kind: BoundKind::Write,
                path: Some("/h/x".into()),
                host: None,
                message: "a write outside".into(),
                may_run_outside: true,
            },
            output: String::new(),
        }
    }

    fn question() -> DecisionRequest {
        DecisionRequest::Question {
            question: "Which?".into(),
            options: vec!["a".into()],
        }
    }

    fn every_request() -> Vec<DecisionRequest> {
        let mut all = Vec::new();
        for tool in [
            Tool::Bash,
            Tool::Write,
            Tool::Read,
            Tool::WebFetch,
            Tool::Mcp,
        ] {
            for d in [
                decision(false, &["r(x)"]),
                decision(true, &[]),
                decision(false, &[]),
            ] {
                for edited in [false, true] {
                    all.push(permission(tool, d.clone(), edited));
                }
            }
        }
        for d in [
            decision(false, &["net(domain:example.org)"]),
            decision(true, &[]),
            decision(false, &[]),
        ] {
            all.push(network(d));
        }
        all.push(run_outside());
        all.push(question());
        all.push(DecisionRequest::plan("p"));
        all.push(DecisionRequest::PlanApproval {
            plan: "p".into(),
            modes: vec![Mode::Default],
        });
        all
    }

    fn every_answer() -> Vec<DecisionAnswer> {
        let mut all = vec![
            DecisionAnswer::AllowOnce,
            DecisionAnswer::AllowForSession {
                rules: vec!["r(x)".into()],
            },
            DecisionAnswer::AlwaysAllow {
                rules: vec!["r(x)".into()],
                target: None,
            },
            DecisionAnswer::EditCommand {
                command: "ls".into(),
            },
            DecisionAnswer::Deny { feedback: None },
            DecisionAnswer::Answer { text: "a".into() },
            DecisionAnswer::PlanRejected { feedback: None },
            DecisionAnswer::Unavailable {
                reason: "gone".into(),
            },
        ];
        for mode in [
            Mode::Default,
            Mode::Edit,
            Mode::Auto,
            Mode::Plan,
            Mode::Bypass,
        ] {
            all.push(DecisionAnswer::PlanApproved { mode });
        }
        all
    }

    #[test]
    fn a_bash_ask_offers_every_answer_and_an_edit() {
        let o = permission(Tool::Bash, decision(false, &["bash(npm test)"]), false).offered();
        assert_eq!(
            o.answers,
            [
                K::AllowOnce,
                K::AllowForSession,
                K::AlwaysAllow,
                K::EditCommand,
                K::Deny
            ]
        );
        assert_eq!(o.withheld, None);
        assert!(o.modes.is_empty());
    }

    #[test]
    fn a_capped_call_offers_only_allow_once_and_says_why() {
        let o = permission(Tool::Bash, decision(true, &[]), false).offered();
        assert_eq!(o.answers, [K::AllowOnce, K::EditCommand, K::Deny]);
        assert_eq!(o.withheld, Some(Withheld::CappedCall));
        let o = permission(Tool::Write, decision(true, &[]), false).offered();
        assert_eq!(o.answers, [K::AllowOnce, K::Deny]);
        assert_eq!(
            Withheld::CappedCall.sentence(),
            "this call is capped: only \"allow once\" is offered"
        );
    }

    #[test]
    fn an_ask_without_a_rule_to_keep_offers_only_allow_once() {
        let o = permission(Tool::Read, decision(false, &[]), false).offered();
        assert_eq!(o.answers, [K::AllowOnce, K::Deny]);
        assert_eq!(o.withheld, Some(Withheld::NoRule));
    }

    #[test]
    fn only_a_command_can_be_edited() {
        for tool in [
            Tool::Write,
            Tool::Edit,
            Tool::Read,
            Tool::WebFetch,
            Tool::Mcp,
        ] {
            let o = permission(tool, decision(false, &["r(x)"]), false).offered();
            assert!(!o.offers(K::EditCommand), "{tool}");
            assert!(o.offers(K::AlwaysAllow), "{tool}");
        }
    }

    /// A command the person edited is judged again and offers what any other does:
    /// keeping a rule for it is the point of judging it again.
    #[test]
    fn an_edited_command_offers_what_any_command_offers() {
        for d in [decision(false, &["bash(ls)"]), decision(true, &[])] {
            assert_eq!(
                permission(Tool::Bash, d.clone(), true).offered(),
                permission(Tool::Bash, d, false).offered()
            );
        }
    }

    #[test]
    fn a_plan_offers_its_modes() {
        let o = DecisionRequest::plan("p").offered();
        assert_eq!(o.answers, [K::PlanApproved, K::PlanRejected, K::Deny]);
        assert_eq!(o.modes, [Mode::Edit, Mode::Auto, Mode::Default]);
        let narrow = DecisionRequest::PlanApproval {
            plan: "p".into(),
            modes: vec![Mode::Default],
        };
        assert!(narrow.offered().accepts(&DecisionAnswer::PlanApproved {
            mode: Mode::Default
        }));
        assert!(!narrow
            .offered()
            .accepts(&DecisionAnswer::PlanApproved { mode: Mode::Edit }));
        assert_eq!(
            narrow.misfit(&DecisionAnswer::PlanApproved { mode: Mode::Edit }),
            Some("the plan approval does not offer edit mode".into())
        );
    }

    #[test]
    fn a_network_ask_offers_session_and_always_unless_capped() {
        let o = network(decision(false, &["net(domain:example.org)"])).offered();
        assert_eq!(
            o.answers,
            [K::AllowOnce, K::AllowForSession, K::AlwaysAllow, K::Deny]
        );
        assert_eq!(o.withheld, None);
        let o = network(decision(true, &[])).offered();
        assert_eq!(o.answers, [K::AllowOnce, K::Deny]);
        assert_eq!(o.withheld, Some(Withheld::CappedConnection));
    }

    #[test]
    fn running_outside_is_once_or_not_at_all_and_a_question_takes_an_answer() {
        let o = run_outside().offered();
        assert_eq!(o.answers, [K::AllowOnce, K::Deny]);
        assert_eq!(o.withheld, None);
        let o = question().offered();
        assert_eq!(o.answers, [K::Answer, K::Deny]);
    }

    /// `misfit` refuses exactly what `offered` does not accept, for every request and
    /// every answer; an answer is accepted only when its kind is offered.
    #[test]
    fn misfit_agrees_with_offered_everywhere() {
        for request in every_request() {
            let offered = request.offered();
            for answer in every_answer() {
                let fits = request.misfit(&answer).is_none();
                assert_eq!(fits, offered.accepts(&answer), "{request:?} {answer:?}");
                match answer.kind() {
                    None => assert!(fits, "unavailable fits {request:?}"),
                    Some(kind) if !offered.offers(kind) => {
                        assert!(!fits, "{request:?} {answer:?}")
                    }
                    Some(_) => {}
                }
            }
        }
    }

    #[test]
    fn a_refusal_says_why() {
        let capped = permission(Tool::Bash, decision(true, &[]), false);
        let always = DecisionAnswer::AlwaysAllow {
            rules: vec!["bash(git push)".into()],
            target: None,
        };
        assert_eq!(
            capped.misfit(&always).as_deref(),
            Some(Withheld::CappedCall.sentence())
        );
        assert_eq!(
            network(decision(true, &[])).misfit(&always).as_deref(),
            Some(Withheld::CappedConnection.sentence())
        );
        assert_eq!(
            permission(Tool::Write, decision(false, &["write(x)"]), false).misfit(
                &DecisionAnswer::EditCommand {
                    command: "ls".into()
                }
            ),
            Some("only a command can be edited, not a write call".into())
        );
        assert_eq!(
            question().misfit(&DecisionAnswer::AllowOnce),
            Some("this answer does not fit the request it was given for".into())
        );
    }

    /// On the wire the kinds are snake_case, as the answers' own `kind`, and a
    /// request's event carries what it offers.
    #[test]
    fn the_event_carries_what_the_request_offers() {
        let request = permission(Tool::Bash, decision(true, &[]), false);
        let event = ChannelEvent::Pending {
            id: 1,
            offered: request.offered(),
            request,
            agent: None,
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json["offered"],
            serde_json::json!({
                "answers": ["allow_once", "edit_command", "deny"],
                "withheld": "capped_call"
            })
        );
        for answer in every_answer() {
            let Some(kind) = answer.kind() else { continue };
            let wire = serde_json::to_value(&answer).unwrap();
            assert_eq!(wire["kind"], serde_json::to_value(kind).unwrap());
        }
        assert_eq!(
            serde_json::to_value(DecisionRequest::plan("p").offered()).unwrap()["modes"],
            serde_json::json!(["edit", "auto", "default"])
        );
    }
}
