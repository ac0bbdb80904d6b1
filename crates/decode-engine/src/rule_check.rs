//! Checks the allow rules a person wants to keep — edited in the approval dialog for
//! "always allow", or kept in memory by "allow for this session" — before they are
//! used (see `docs/window.md`): each rule must parse, together they must cover the call that was
//! asked about, and none may be a wildcard over an interpreter, a shell or a privilege
//! wrapper (`bash(python *)`, `bash(sh *)`, `bash(sudo *)`), which would let any code
//! run. Built on the gate's public API only: the rules are compiled into a gate of
//! their own and the asked call is judged by it, fragment by fragment.
//!
//! [`suggest_broader`] offers a safe broader form of the exact rules
//! (`bash(npm run build)` → `bash(npm run *)`), checked the same way.

use std::path::Path;

use decode_policy::{AgentPolicy, Call, Decision, Gate, Mode, PolicyInput, Rule, Tool, Verdict};
use decode_protocol::RuleCheck;

use crate::state::ActiveState;

/// Programs that run whatever code or command they are given: a rule with a wildcard
/// over one of them allows anything. Version suffixes are ignored (`python3.12`).
const RUNNERS: &[&str] = &[
    // shells
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "pwsh",
    "powershell",
    "cmd", // interpreters
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "irb",
    "perl",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "rscript",
    "julia",
    "java",
    "jshell",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "guile",
    "racket",
    "ghci",
    "runghc",
    "scala",
    "kotlin",
    "groovy",
    "swift",
    "dotnet",
    "erl",
    "elixir",
    "iex", // privilege wrappers
    "sudo",
    "sudoedit",
    "doas",
    "su",
    "pkexec",
    "run0",
    "runuser",
    "setpriv",
    "chroot",
    // wrappers and runners that run another command
    "env",
    "xargs",
    "eval",
    "exec",
    "command",
    "builtin",
    "nohup",
    "timeout",
    "nice",
    "time",
    "stdbuf",
    "setsid",
    "unshare",
    "nsenter",
    "flock",
    "watch",
    "npx",
    "bunx",
    "uvx",
    "pipx",
    "ssh",
    "script",
    "strace",
    "ltrace",
    "valgrind",
    "firejail",
    "systemd-run",
    "dbus-run-session",
    "xvfb-run",
    "caffeinate",
    "parallel",
];

fn program_name(word: &str) -> String {
    let word = word.trim_matches(|c| c == '\'' || c == '"' || c == '\\');
    let base = word.rsplit('/').next().unwrap_or(word).to_ascii_lowercase();
    base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
        .to_string()
}

fn has_glob(s: &str) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// Why a rule would let any code run, if it would: a bare `bash`, a wildcard in the
/// program name, or a wildcard over an interpreter, shell or privilege wrapper.
pub fn runner_wildcard(rule: &Rule) -> Option<String> {
    if rule.tool != Tool::Bash {
        return None;
    }
    let Some(pattern) = &rule.pattern else {
        return Some("`bash` alone allows every command".to_string());
    };
    let first = pattern.split_whitespace().next().unwrap_or("");
    if has_glob(first) {
        return Some(format!(
            "`{rule}` has a wildcard in the program name, so it allows any program"
        ));
    }
    let name = program_name(first);
    if RUNNERS.contains(&name.as_str()) && (has_glob(pattern) || pattern.contains(":*")) {
        return Some(format!(
            "`{rule}` is a wildcard over `{first}`, which runs whatever it is given: allow exact commands instead"
        ));
    }
    None
}

/// The gate's input for judging `call` with `rules` as the only allow rules (the
/// project's folders, branches and caps kept, so the path scope is the real one).
fn gate_with(active: &ActiveState, rules: &[String]) -> Gate {
    let settings = active.settings();
    let mut input = PolicyInput::new(active.project_root(), active.home());
    input.project_rules.allow = rules.to_vec();
    input.additional_directories = settings.additional_directories.clone();
    input.protected_branches = settings.protected_branches.clone();
    input.external_caps = settings.caps_external.clone();
    input.trusted = true;
    input.agent = AgentPolicy::all_tools(active.agent().name);
    Gate::new(input).0
}

/// Whether a fragment of `decision` was already covered by an allow rule.
fn covered(f: &decode_policy::FragmentReport) -> bool {
    f.verdict == Verdict::Allow && f.rule.is_some() && f.cap.is_none()
}

/// Checks `rules` for the call `call` that the gate answered with `decision` (an
/// uncapped ask). See the module docs.
pub fn check_rules(
    active: &ActiveState,
    call: &Call,
    cwd: &Path,
    decision: &Decision,
    rules: &[String],
) -> RuleCheck {
    let mut problems = Vec::new();
    if decision.capped {
        problems.push(format!(
            "this call is capped ({}): only \"allow once\" is offered",
            decision.reason
        ));
    }
    let rules: Vec<String> = rules
        .iter()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .collect();
    if rules.is_empty() {
        problems.push("there is no rule to save: write one, e.g. `bash(npm test)`".to_string());
    }
    let mut parsed_all = true;
    for text in &rules {
        match Rule::parse(text) {
            Ok(rule) => {
                if let Some(why) = runner_wildcard(&rule) {
                    problems.push(why);
                }
            }
            Err(e) => {
                parsed_all = false;
                problems.push(e.to_string());
            }
        }
    }
    if parsed_all && !rules.is_empty() && !decision.capped {
        let gate = gate_with(active, &rules);
        let test = gate.decide_in(call, Mode::Default, Some(cwd));
        let missing: Vec<&str> = if test.fragments.len() == decision.fragments.len() {
            decision
                .fragments
                .iter()
                .zip(&test.fragments)
                .filter(|(before, _)| !covered(before))
                .filter(|(_, after)| !covered(after))
                .map(|(before, _)| before.text.as_str())
                .collect()
        } else if test.verdict == Verdict::Allow {
            Vec::new()
        } else {
            vec![call.subject.as_str()]
        };
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ");
            problems.push(format!(
                "the rule{} would not cover {list}, so this very call would still ask",
                if rules.len() == 1 { "" } else { "s" }
            ));
        }
    }
    RuleCheck {
        ok: problems.is_empty(),
        problems,
    }
}

fn plain_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/' | '@' | '+' | '=')
        })
}

/// A broader form of the exact rules "always allow" would save, when one is safe: each
/// bash rule keeps its program and first subcommand (`bash(npm run build)` →
/// `bash(npm run *)`, `bash(cargo test -p x)` → `bash(cargo test *)`). Empty when
/// there is nothing broader to offer or the broader rules do not pass
/// [`check_rules`].
pub fn suggest_broader(
    active: &ActiveState,
    call: &Call,
    cwd: &Path,
    decision: &Decision,
) -> Vec<String> {
    if decision.capped || decision.always_allow_rules.is_empty() {
        return Vec::new();
    }
    let mut changed = false;
    let mut out = Vec::new();
    for text in &decision.always_allow_rules {
        let broader = Rule::parse(text).ok().and_then(|rule| {
            if rule.tool != Tool::Bash {
                return None;
            }
            let pattern = rule.pattern?;
            let words: Vec<&str> = pattern.split_whitespace().collect();
            if words.len() < 2 || !words.iter().all(|w| plain_word(w)) {
                return None;
            }
            if RUNNERS.contains(&program_name(words[0]).as_str()) {
                return None;
            }
            let keep = if words.len() >= 3 && !words[1].starts_with('-') {
                2
            } else {
                1
            };
            Some(format!("bash({} *)", words[..keep].join(" ")))
        });
        match broader {
            Some(b) if &b != text => {
                changed = true;
                if !out.contains(&b) {
                    out.push(b);
                }
            }
            _ => {
                if !out.contains(text) {
                    out.push(text.clone());
                }
            }
        }
    }
    if changed && check_rules(active, call, cwd, decision, &out).ok {
        out
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wild(r: &str) -> Option<String> {
        runner_wildcard(&Rule::parse(r).unwrap())
    }

    #[test]
    fn wildcards_over_runners_are_named() {
        for r in [
            "bash(python *)",
            "bash(sh *)",
            "bash(sudo *)",
            "Bash(python3.12 -c *)",
            "bash(/usr/bin/env *)",
            "bash(node:*)",
            "bash(*)",
            "bash(py* x)",
            "bash",
        ] {
            assert!(wild(r).is_some(), "{r}");
        }
        for r in [
            "bash(npm run *)",
            "bash(git *)",
            "bash(python scripts/gen.py)",
            "bash(shellcheck *)",
            "read(src/**)",
            "edit",
        ] {
            assert_eq!(wild(r), None, "{r}");
        }
    }
}
