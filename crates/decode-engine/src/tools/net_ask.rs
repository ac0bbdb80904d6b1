//! The host policy for one sandboxed command's connections (docs/network.md): the
//! proxy serving the command's own network asks this judge about each destination.
//! A host the policy asks about is put to the person through the decision channel
//! (a `network` request naming the host and the command), once per host for the
//! command: "allow once" lets that host through for the rest of this command, "for
//! this session" keeps `net(domain:HOST)` in the session's rules, "always allow"
//! saves it like any other always-allow, deny refuses it for the rest of this
//! command. The answer is bound to this call: the listeners it serves exist in
//! this command's network namespace only.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;

use async_trait::async_trait;
use decode_policy::{Call, Tool, Verdict};
use decode_protocol::{DecisionAnswer, DecisionRequest, SaveTarget};

use crate::net::proxy::format_host_port;
use crate::net::{Judge, NetEvent, NetVerdict};

use super::ToolContext;

/// An "always allow" answered while the command ran, saved once it has ended: the call,
/// the gate's decision, the rules the person kept and where they are saved.
type AlwaysAnswer = (Call, decode_policy::Decision, Vec<String>, SaveTarget);

/// A host, and the kind of non-public address an ask about it was about (none: its
/// public addresses).
type AnswerKey = (String, Option<&'static str>);

/// Judges the connections of one command.
pub(crate) struct CallJudge {
    ctx: ToolContext,
    command: String,
    cwd: PathBuf,
    /// Hosts the person answered for this command: allowed or refused (with why), by
    /// host and the kind of non-public address the ask was about, if any (an answer
    /// for a host's public addresses does not cover the loopback it may later resolve
    /// to, nor one for its loopback the metadata address).
    answered: tokio::sync::Mutex<HashMap<AnswerKey, Result<String, String>>>,
    events: std::sync::Mutex<Vec<NetEvent>>,
    /// What the person answered, one note each, for the call's result.
    notes: std::sync::Mutex<Vec<String>>,
    /// "Always allow" answers, saved when the command has ended ([`CallJudge::save`]):
    /// a settings file written while it runs would be taken for one the command
    /// planted in a protected place.
    always: std::sync::Mutex<Vec<AlwaysAnswer>>,
    /// Cancelled when the command has ended: an ask still open then is withdrawn
    /// (a connection left by the command cannot keep a dialog up).
    ended: tokio_util::sync::CancellationToken,
}

impl CallJudge {
    pub(crate) fn new(ctx: &ToolContext, command: &str, cwd: PathBuf) -> CallJudge {
        CallJudge {
            ctx: ctx.clone(),
            command: command.to_string(),
            cwd,
            answered: Default::default(),
            events: Default::default(),
            notes: Default::default(),
            always: Default::default(),
            ended: ctx.cancel.child_token(),
        }
    }

    /// The command has ended: asks still open are withdrawn (and refused), and
    /// recorded before this returns (at most a second).
    pub(crate) async fn end(&self) {
        self.ended.cancel();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), self.answered.lock()).await;
    }

    /// Records a verdict; a provisional allowance of a name (its addresses are
    /// judged next) is not a connection and is not recorded.
    fn record(&self, host: &str, port: u16, verdict: &NetVerdict, provisional: bool) {
        if provisional && *verdict == NetVerdict::Allow {
            return;
        }
        if let Ok(mut e) = self.events.lock() {
            e.push(NetEvent {
                target: format_host_port(host, port),
                verdict: verdict.clone(),
            });
        }
    }

    /// Saves the rules of the "always allow" answers given while the command ran
    /// (it has ended and been cleaned up); one note each for the call's result.
    pub(crate) fn save(&self) -> Vec<String> {
        let always = self
            .always
            .lock()
            .map(|mut a| std::mem::take(&mut *a))
            .unwrap_or_default();
        always
            .into_iter()
            .map(|(call, d, rules, target)| {
                let note =
                    super::call::always_allow(&self.ctx, &call, &self.cwd, &d, rules, target);
                tracing::info!(subject = %call.subject, "{note}");
                format!("network: {}: {note}", call.subject)
            })
            .collect()
    }

    /// What was refused or asked, one line each, for the call's result (the
    /// allowed destinations only when the person was asked about them).
    pub(crate) fn report(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.notes.lock().map(|n| n.clone()).unwrap_or_default();
        let events = self.events.lock().map(|e| e.clone()).unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        for e in events {
            if let NetVerdict::Refuse(reason) = &e.verdict {
                if seen.insert((e.target.clone(), reason.clone())) {
                    lines.push(format!(
                        "network: the connection to {} was refused: {reason}",
                        e.target
                    ));
                }
            }
        }
        lines
    }

    /// Whether the host policy refused a connection of this command.
    pub(crate) fn refused_any(&self) -> bool {
        self.events
            .lock()
            .is_ok_and(|e| e.iter().any(|e| matches!(e.verdict, NetVerdict::Refuse(_))))
    }

    fn note(&self, text: String) {
        tracing::info!(command = %self.command, "{text}");
        if let Ok(mut n) = self.notes.lock() {
            n.push(text);
        }
    }

    async fn verdict(
        &self,
        host: &str,
        port: u16,
        addrs: &[IpAddr],
        provisional: bool,
    ) -> NetVerdict {
        let target = format_host_port(host, port);
        let call = Call::new(Tool::Net, target.as_str()).with_addrs(addrs.to_vec());
        let d = self.ctx.active.decide(&call);
        let kind = crate::net::private_kind_of(host, addrs);
        let private = kind.is_some();
        let early = match d.verdict {
            Verdict::Allow => Some(NetVerdict::Allow),
            Verdict::Deny => Some(NetVerdict::Refuse(d.reason.clone())),
            // "For this session" was answered for a host's name and public addresses:
            // a private address it resolves to later is asked about again.
            Verdict::Ask if private => None,
            Verdict::Ask => self
                .ctx
                .session_rules
                .allows(&self.ctx.active, &call, &self.cwd, &d)
                .then_some(NetVerdict::Allow),
        };
        if let Some(v) = early {
            self.record(host, port, &v, provisional);
            return v;
        }
        // One ask per host for this command; other connections to it wait.
        let mut answered = self.answered.lock().await;
        let key = (host.to_string(), kind);
        if let Some(a) = answered.get(&key) {
            let v = match a {
                Ok(_) => NetVerdict::Allow,
                Err(why) => NetVerdict::Refuse(why.clone()),
            };
            self.record(host, port, &v, provisional);
            return v;
        }
        let request = DecisionRequest::Network {
            host: host.to_string(),
            port,
            command: self.command.clone(),
            cwd: self.cwd.display().to_string(),
            decision: d.clone(),
        };
        let answer = tokio::select! {
            a = self.ctx.decisions.ask(request) => a,
            _ = self.ended.cancelled() => DecisionAnswer::Unavailable {
                reason: if self.ctx.cancel.is_cancelled() {
                    "the run was stopped".to_string()
                } else {
                    "the command ended before the answer".to_string()
                },
            },
        };
        tracing::info!(target = %target, ?answer, "network ask answered");
        let rule = format!("net(domain:{host})");
        let outcome = match answer {
            DecisionAnswer::AllowOnce => Ok(format!(
                "network: the person allowed {target} for this command ({})",
                d.reason
            )),
            DecisionAnswer::AllowForSession { rules } => {
                let note = super::call::allow_for_session(&self.ctx, &call, &self.cwd, &d, rules);
                Ok(format!("network: {target}: {note}"))
            }
            DecisionAnswer::AlwaysAllow {
                rules,
                target: save_to,
            } => {
                if let Ok(mut a) = self.always.lock() {
                    a.push((call.clone(), d.clone(), rules, save_to.unwrap_or_default()));
                }
                Ok(format!(
                    "network: the person allowed {target} always (the rule is saved when the command ends)"
                ))
            }
            DecisionAnswer::Deny { feedback } => {
                let mut why = format!("the person refused it ({})", d.reason);
                if let Some(f) = feedback.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
                    why.push_str(&format!("; their feedback: {f}"));
                }
                Err(why)
            }
            DecisionAnswer::Unavailable { reason } => Err(format!(
                "{}, and nobody can answer the ask ({reason}); the rule {rule} would allow it",
                d.reason
            )),
            other => Err(format!(
                "{}; the ask got an answer of the wrong kind ({other:?})",
                d.reason
            )),
        };
        if let Ok(note) = &outcome {
            self.note(note.clone());
        }
        let verdict = match &outcome {
            Ok(_) => NetVerdict::Allow,
            Err(why) => NetVerdict::Refuse(why.clone()),
        };
        answered.insert(key, outcome);
        // Recorded while the lock is held: `end` sees it.
        self.record(host, port, &verdict, provisional);
        verdict
    }
}

#[async_trait]
impl Judge for CallJudge {
    async fn judge(&self, host: &str, port: u16, addrs: &[IpAddr]) -> NetVerdict {
        self.verdict(host, port, addrs, false).await
    }

    async fn judge_name(&self, host: &str, port: u16) -> NetVerdict {
        self.verdict(host, port, &[], true).await
    }
}
