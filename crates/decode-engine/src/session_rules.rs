//! "Allow for this session" (see `docs/window.md`): the same exact rules "always allow" would save,
//! kept in memory for one chat session and never written.
//!
//! When the gate asks about a call (and the ask is not capped), the session's rules are
//! tried before the person is asked: the call is judged again by a gate compiled from
//! the active gate's own input plus these rules as allow rules; if that gate allows it,
//! it runs without a dialog. Capped calls, deny rules, ask rules and plan mode are
//! never lifted, because the real gate's verdict is consulted first.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use decode_policy::{Call, Decision, Gate, Verdict};

use crate::state::ActiveState;

struct Compiled {
    /// The active gate this one was built beside (recompiled when it changes).
    base: Arc<Gate>,
    /// Exactly the rules it was compiled with (a dropped rule never lingers in a
    /// gate found by a count).
    rules: Vec<String>,
    gate: Arc<Gate>,
}

/// The session's rules (see the module docs). Share it as `Arc<SessionRules>`.
#[derive(Default)]
pub struct SessionRules {
    rules: Mutex<Vec<String>>,
    compiled: Mutex<Option<Compiled>>,
}

impl std::fmt::Debug for SessionRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.list()).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionRules {
    pub fn new() -> SessionRules {
        SessionRules::default()
    }

    /// The rules, in the order they were allowed.
    pub fn list(&self) -> Vec<String> {
        lock(&self.rules).clone()
    }

    /// Adds rules (duplicates ignored); returns the ones that were new.
    pub fn add(&self, rules: &[String]) -> Vec<String> {
        let mut list = lock(&self.rules);
        let mut added = Vec::new();
        for r in rules {
            let r = r.trim();
            if !r.is_empty() && !list.iter().any(|x| x == r) {
                list.push(r.to_string());
                added.push(r.to_string());
            }
        }
        added
    }

    /// Drops a rule; returns whether it was there. Calls it covered ask again.
    pub fn remove(&self, rule: &str) -> bool {
        let mut list = lock(&self.rules);
        let before = list.len();
        list.retain(|r| r != rule);
        list.len() != before
    }

    fn gate_for(&self, active: &ActiveState, rules: &[String]) -> Arc<Gate> {
        let base = active.gate();
        let mut compiled = lock(&self.compiled);
        if let Some(c) = compiled.as_ref() {
            if Arc::ptr_eq(&c.base, &base) && c.rules == rules {
                return Arc::clone(&c.gate);
            }
        }
        // The active gate's input (the project, the folders around it, the saved
        // rules, the agent) plus the session's answers.
        let mut input = active.policy_input();
        let agent = &mut input.agent;
        if agent.from_project && !input.trusted {
            // The agent's own allow rules do not count in an untrusted project; the
            // person's answers do.
            agent.rules.allow.clear();
            agent.from_project = false;
        }
        agent.rules.allow.extend(rules.iter().cloned());
        let gate = Arc::new(Gate::new(input).0);
        *compiled = Some(Compiled {
            base,
            rules: rules.to_vec(),
            gate: Arc::clone(&gate),
        });
        gate
    }

    /// Whether the session's rules allow `call`, which the active gate answered with
    /// `decision` (only an uncapped ask can be lifted).
    pub fn allows(
        &self,
        active: &ActiveState,
        call: &Call,
        cwd: &Path,
        decision: &Decision,
    ) -> bool {
        if decision.verdict != Verdict::Ask || decision.capped {
            return false;
        }
        let rules = self.list();
        if rules.is_empty() {
            return false;
        }
        let gate = self.gate_for(active, &rules);
        gate.decide_in(call, active.mode(), Some(cwd)).verdict == Verdict::Allow
    }
}
