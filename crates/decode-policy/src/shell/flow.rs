//! Where each command of a command line runs, through its control flow
//! (docs/permissions.md, "Fail closed"): `&&` and `||`, pipelines and
//! background jobs (subshells of their own), branches and loops. A folder a
//! command may or may not have moved to is one the gate cannot place.

use std::path::PathBuf;

use tree_sitter::Node;

use super::model::Branch;
use super::walker::{Scope, Walker};

/// Whether `node` is `exit` or `return` (what follows it never runs).
fn ends_the_shell(node: Node<'_>, src: &str) -> bool {
    node.kind() == "command"
        && node
            .child_by_field_name("name")
            .and_then(|n| src.get(n.byte_range()))
            .is_some_and(|n| matches!(n, "exit" | "return"))
}

/// One place when both are the same, else a place the gate cannot know.
fn merge(a: &Option<PathBuf>, b: &Option<PathBuf>) -> Option<PathBuf> {
    if a == b {
        a.clone()
    } else {
        None
    }
}

impl Walker<'_> {
    /// Where the shell is after the last statement: if it succeeded, and
    /// whatever happened.
    fn states(&mut self) -> (Option<PathBuf>, Option<PathBuf>) {
        let ok = self.cwd.clone();
        let any = self.cwd_any.take().unwrap_or_else(|| ok.clone());
        (ok, any)
    }

    /// Leaves the shell at `ok` (`any` whatever happened).
    fn settle(&mut self, ok: Option<PathBuf>, any: Option<PathBuf>) {
        self.cwd_any = (any != ok).then_some(any);
        self.cwd = ok;
    }

    /// `A && B`, `A || B`: B runs after A succeeded (`&&`) or failed (`||`);
    /// where the shell is after the list follows from both.
    pub(super) fn list(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let Some(first) = kids.first() else {
            return;
        };
        let mut before_a = self.cwd.clone();
        self.walk(*first, src, scope);
        let mut k = 1;
        while k + 1 < kids.len() {
            let op = kids[k].kind();
            let (a_ok, a_any) = self.states();
            // `git checkout x && …`: what follows runs on x.
            if op == "&&" {
                if let Some((at, b)) = self.last_switch.take() {
                    if at + 1 == self.out.len() {
                        self.branch = Branch::OneOf(vec![b]);
                    }
                }
            }
            // B starts where A left the shell on success; on failure, where
            // it was before A if A moved it nowhere (a failed `cd` stays, a
            // command after a `cd` that worked may have failed).
            self.cwd = if op == "&&" {
                a_ok.clone()
            } else {
                merge(&before_a, &merge(&a_ok, &a_any))
            };
            let b = kids[k + 1];
            self.walk(b, src, scope);
            let (b_ok, b_any) = self.states();
            if op == "&&" {
                self.settle(b_ok, merge(&b_any, &a_any));
            } else if ends_the_shell(b, src) {
                // `cd x || exit 1`: what follows runs only where A left it.
                self.settle(a_ok.clone(), a_ok);
            } else {
                self.settle(merge(&a_ok, &b_ok), merge(&a_ok, &b_any));
            }
            before_a = self.cwd.clone();
            k += 2;
        }
    }

    /// `A | B | C`: each runs in a subshell of its own (the last in this
    /// shell under `shopt -s lastpipe`: the gate cannot tell).
    pub(super) fn pipeline(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let before = self.cwd.clone();
        let lastpipe = src.contains("lastpipe");
        let mut feed = None;
        for (k, child) in kids.iter().enumerate() {
            if !child.is_named() {
                continue;
            }
            self.pipe_feed = feed.take();
            self.walk(*child, src, scope);
            self.pipe_feed = None;
            feed = super::syntax::visible_output(*child, src);
            let (ok, any) = self.states();
            let last = k + 1 == kids.len();
            self.cwd = if last && lastpipe && (ok != before || any != before) {
                None
            } else {
                before.clone()
            };
        }
    }

    /// `if`/`elif`/`else` and `case`: each branch starts where the
    /// condition left the shell; after them, a folder one branch moved to
    /// is one the gate cannot place (it cannot tell which branch ran).
    pub(super) fn branches(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let before = self.cwd.clone();
        let mut start: Option<Option<PathBuf>> = None;
        let mut moved = false;
        for child in kids {
            let branch = matches!(child.kind(), "elif_clause" | "else_clause" | "case_item");
            if branch {
                if let Some(s) = &start {
                    moved |= self.cwd != *s;
                    self.cwd = s.clone();
                } else {
                    start = Some(self.cwd.clone());
                }
            } else if child.kind() == "then" && start.is_none() {
                start = Some(self.cwd.clone());
            }
            self.walk(child, src, scope);
            if let Some(any) = self.cwd_any.take() {
                self.cwd = any;
            }
        }
        if moved || self.cwd != before {
            self.cwd = None;
        }
    }

    /// `while`, `until`, `for`: the body runs any number of times, so a body
    /// that may move the shell runs in a folder the gate cannot place, and so
    /// does what follows.
    pub(super) fn looped(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        let text = src.get(node.byte_range()).unwrap_or("");
        if Self::moves(text) {
            self.cwd = None;
        }
        let before = self.cwd.clone();
        self.children(node, src, scope);
        if self.cwd != before {
            self.cwd = None;
        }
    }
}
