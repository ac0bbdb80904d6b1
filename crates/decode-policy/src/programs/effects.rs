//! The external-effects and privilege cap (docs/permissions.md, "The
//! stages"): commands that push, publish, deploy, upload, change shared
//! infrastructure, or raise privileges ask every time.
//!
//! A sub-command is found wherever it could stand: after options whose arity
//! the gate does not know (both readings count), and a word only known when
//! the command runs counts as every sub-command.

use super::registry;
use super::schema::{spelled_as, Args, Argv, Effect, Program, Sub, PUBLISH_WORDS};
use super::support::global_options;
use crate::options::{self, OptionSpec};

/// Groups after which a publish word still counts for a program the caps do
/// not name (`jj git push`, `dotnet nuget push`, `git lfs push`).
const GROUPS: &[&str] = &["git", "nuget", "lfs", "release", "annex", "state", "hex"];

/// Whether a cap could apply to a command starting with these words (a
/// quick test before the caps run on a later word of an unknown program).
pub(crate) fn might_cap(words: &[String]) -> bool {
    let Some(name) = words.first() else {
        return false;
    };
    knows_program(name)
        || matches!(name.as_str(), "rm" | "rmdir" | "find" | "docker" | "podman")
        || words.iter().any(|w| spelled_as(w, PUBLISH_WORDS))
}

/// Programs whose arguments the gate reads: wrappers, runners, privilege
/// wrappers, the programs the caps name, and those that take their
/// arguments as data. For any other program, a later unquoted word that a
/// deny rule or cap names asks (`foo run curl x`).
pub(crate) fn knows_program(name: &str) -> bool {
    registry::find(name).is_some_and(|p| p.args == Args::Read)
}

/// Whether the program raises privileges (`sudo`, `su`, `pkexec`…).
pub(crate) fn is_privilege(name: &str) -> bool {
    registry::find(name).is_some_and(|p| p.node.effect == Effect::Privilege)
}

/// External effects and privilege: the reason, when capped. `dynamic[k]`:
/// `core[k]` is only known when the command runs.
pub(crate) fn external_effect(
    core: &[String],
    dynamic: &[bool],
    chain: &[String],
) -> Option<String> {
    if let Some(p) = chain.iter().chain(core.first()).find(|n| is_privilege(n)) {
        return Some(format!(
            "`{p}` runs with elevated privileges: asks every time"
        ));
    }
    external_core(core, dynamic, 0)
}

fn hit(what: &str) -> Option<String> {
    Some(format!("{what} has external effects: asks every time"))
}

fn external_core(core: &[String], dynamic: &[bool], depth: usize) -> Option<String> {
    let name = core.first()?.as_str();
    if depth < 4 {
        if let Some(inner) = super::packages::runner_target(core) {
            let inner_dyn = vec![false; inner.len()];
            if let Some(r) = external_core(&inner, &inner_dyn, depth + 1) {
                return Some(r);
            }
        }
    }
    let v = Argv {
        words: core,
        dynamic,
    };
    let Some(p) = registry::find(name) else {
        return generic(&v).and_then(|w| hit(&w));
    };
    if let Effect::External(_) = p.node.effect {
        return hit(name);
    }
    if let Some(what) = sub_effect(p, &v) {
        return hit(&what);
    }
    if let Some(what) = p.node.hooks.effect.and_then(|h| h(&v)) {
        return hit(&what);
    }
    if p.generic_verbs {
        return generic(&v).and_then(|w| hit(&w));
    }
    None
}

/// A sub-command with an external effect, at any reading of the options
/// (two levels deep: `gh pr create`, `docker image push`).
fn sub_effect(p: &Program, v: &Argv<'_>) -> Option<String> {
    let skip = usize::from(
        p.toolchain
            .is_some_and(|c| v.args().first().is_some_and(|a| a.starts_with(c))),
    );
    let args = &v.args()[skip..];
    let dynamic = |k: usize| v.dyn_arg(k + skip);
    let spell = |w: &str| -> String {
        match p.canonical.and_then(|c| c(w)) {
            Some(c) => c.to_string(),
            None => w.to_string(),
        }
    };
    for k in options::candidates(args, &p.node.options) {
        let word = spell(&args[k]);
        for sub in matching(p.subs, &word, dynamic(k)) {
            let shown = if dynamic(k) && !sub.names.contains(&word.as_str()) {
                args[k].clone()
            } else {
                word.clone()
            };
            if let Effect::External(_) = sub.node.effect {
                return Some(format!("{} {shown}", v.name()));
            }
            let rest = &args[k + 1..];
            for j in options::candidates(rest, &sub.node.options) {
                let w2 = &rest[j];
                if matching(sub.subs, w2, dynamic(k + 1 + j))
                    .any(|s| matches!(s.node.effect, Effect::External(_)))
                {
                    return Some(format!("{} {shown} {w2}", v.name()));
                }
            }
        }
    }
    None
}

/// The sub-commands a word names (every one, when the word is only known
/// when the command runs). A sub-command with an external effect is named
/// in any spelling of [`spelled_as`] (`hosting:channel:deploy`,
/// `container:push`, `deploy:prod`); a group only by its own name.
fn matching<'s>(subs: &'s [Sub], word: &'s str, dynamic: bool) -> impl Iterator<Item = &'s Sub> {
    subs.iter().filter(move |s| {
        dynamic
            || s.names.contains(&word)
            || (matches!(s.node.effect, Effect::External(_)) && spelled_as(word, s.names))
    })
}

/// Any program the caps do not name: `push`, `publish`, `deploy`, `upload`
/// as its first sub-command word, in any spelling of [`spelled_as`]
/// (`gh-deploy`, `hex.publish`, `container:push`), or after a known group
/// (`jj git push`, `dotnet nuget push`, `rebar3 hex publish`).
fn generic(v: &Argv<'_>) -> Option<String> {
    let (name, args) = (v.name(), v.args());
    let spec: OptionSpec<'_> = global_options(&[]);
    for k in options::candidates(args, &spec) {
        if v.dyn_arg(k) {
            continue;
        }
        let w = args[k].as_str();
        if spelled_as(w, PUBLISH_WORDS) {
            return Some(format!("{name} {w}"));
        }
        if GROUPS.contains(&w) {
            let rest = &args[k + 1..];
            for j in options::candidates(rest, &spec) {
                if spelled_as(&rest[j], PUBLISH_WORDS) {
                    return Some(format!("{name} {w} {}", rest[j]));
                }
            }
        }
    }
    None
}
