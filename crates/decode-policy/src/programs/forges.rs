//! Code forges' command-line programs: `gh`, `glab`, `tea`. What they change
//! on the forge — a pull request merged, an issue created, a release
//! deleted, a workflow run, a secret set, an API call with a method other
//! than GET — is an external effect and asks every time
//! (docs/permissions.md, "The stages").
//!
//! Their command trees are `PROGRAM GROUP COMMAND`: the command is looked
//! up in [`FORGE_VERBS`] in any spelling ([`spelled_as`]: `item-add`,
//! `deploy-key`), under any group but those that only change the person's
//! own machine ([`LOCAL_GROUPS`]). `api` is read by its method.

use super::schema::{spelled_as, Args, Argv, Ctx, Hooks, Node, Program, SeeHook};
use super::support::global_options;
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived};

/// Commands that change something on the forge (`gh pr merge`, `gh issue
/// comment`, `glab ci retry`, `gh project item-add`).
const FORGE_VERBS: &[&str] = &[
    "create",
    "new",
    "merge",
    "accept",
    "delete",
    "close",
    "reopen",
    "edit",
    "comment",
    "note",
    "review",
    "approve",
    "revoke",
    "upload",
    "set",
    "add",
    "remove",
    "rm",
    "rename",
    "archive",
    "unarchive",
    "transfer",
    "fork",
    "run",
    "rerun",
    "retry",
    "cancel",
    "enable",
    "disable",
    "sync",
    "lock",
    "unlock",
    "pin",
    "unpin",
    "ready",
    "develop",
    "deploy",
    "publish",
    "push",
    "trigger",
    "update",
    "import",
    "mirror",
    "protect",
    "unprotect",
    "subscribe",
    "unsubscribe",
];

/// Groups whose commands change only this machine (sign-in, aliases,
/// settings, extensions, shell completion) or only read.
const LOCAL_GROUPS: &[&str] = &[
    "auth",
    "alias",
    "config",
    "extension",
    "extensions",
    "ext",
    "completion",
    "help",
    "browse",
    "status",
    "search",
    "version",
    "check-update",
    "attestation",
    "login",
    "logout",
    "whoami",
];

/// Groups with groups inside (`gh repo deploy-key add`, `gh repo autolink
/// create`): the word after them names the group the command is in.
const NESTED: &[&str] = &["deploy-key", "autolink", "note", "item", "schedule"];

/// Options before the group (`gh -R o/r pr merge`).
const FORGE: OptionSpec<'static> = global_options(&["-R", "--repo", "--hostname"]);

/// `gh api` / `glab api` options.
const API: OptionSpec<'static> = OptionSpec {
    short_value: "XfFHqtp",
    glued: "",
    value: &[
        "--method",
        "--raw-field",
        "--field",
        "--header",
        "--jq",
        "--template",
        "--preview",
        "--hostname",
        "--cache",
        "--input",
    ],
    flags: &[
        "-i",
        "--include",
        "--paginate",
        "--slurp",
        "--silent",
        "--verbose",
    ],
    complete: false,
};

const fn forge(see: Option<SeeHook>) -> Node {
    Node {
        options: FORGE,
        hooks: Hooks {
            see,
            effect: Some(forge_effect),
            ..Hooks::NONE
        },
        ..Node::NONE
    }
}

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["gh"],
        node: forge(Some(gh_alias)),
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("gh -R o/r pr create", "external gh pr create"),
            ("gh pr new", "external gh pr new"),
            ("gh pr merge 3 --squash", "external gh pr merge"),
            ("gh issue comment 4 -b hi", "external gh issue comment"),
            ("gh workflow run deploy.yml", "external gh workflow run"),
            (
                "gh repo deploy-key add k.pub",
                "external gh repo deploy-key add",
            ),
            (
                "gh project item-add 1 --url u",
                "external gh project item-add",
            ),
            (
                "gh api -X POST repos/o/r/pulls/1/merge",
                "external gh api (POST)",
            ),
            (
                "gh api --method=delete repos/o/r",
                "external gh api (DELETE)",
            ),
            (
                "gh api repos/o/r/issues -f title=x",
                "external gh api (POST)",
            ),
            (
                "gh api graphql -f query='mutation { x }'",
                "external gh api (a GraphQL mutation)",
            ),
            (
                "gh api graphql -f query='query { viewer { login } }'",
                "plain",
            ),
            ("gh api repos/o/r/pulls --paginate", "plain"),
            ("gh api -X GET search/issues -f q=x", "plain"),
            ("gh pr view 3", "plain"),
            ("gh pr list --state merged", "plain"),
            ("gh run list", "plain"),
            ("gh repo clone o/r", "plain"),
            ("gh auth login", "plain"),
            ("gh config set editor vim", "opaque; runs 'vim'"),
            ("gh config set pager 'rm -rf x'", "opaque; runs 'rm -rf x'"),
            ("gh config set git_protocol ssh", "plain"),
            ("gh config get pager", "plain"),
            ("gh alias set co 'pr checkout'", "opaque"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["glab", "tea"],
        node: forge(None),
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("glab mr merge 4", "external glab mr merge"),
            ("glab mr accept 4", "external glab mr accept"),
            ("glab ci retry 9", "external glab ci retry"),
            ("glab api -X PUT projects/1", "external glab api (PUT)"),
            ("tea pulls merge 3", "external tea pulls merge"),
            ("glab mr list", "plain"),
            ("glab ci view", "plain"),
        ],
        ..Program::BASE
    },
];

/// What a forge command changes on the forge, if anything.
fn forge_effect(v: &Argv<'_>) -> Option<String> {
    let (name, args) = (v.name(), v.args());
    for k in options::candidates(args, &FORGE) {
        let group = args[k].as_str();
        if v.dyn_arg(k) {
            return Some(format!("{name} {group}"));
        }
        if group == "api" {
            if let Some(what) = api_writes(&args[k + 1..], |j| v.dyn_arg(k + 1 + j)) {
                return Some(format!("{name} api ({what})"));
            }
            continue;
        }
        if LOCAL_GROUPS.contains(&group) {
            continue;
        }
        let mut from = k + 1;
        let mut path = group.to_string();
        // A group inside the group: its command is one word further.
        for _ in 0..2 {
            let rest = &args[from.min(args.len())..];
            let Some(&j) = options::candidates(rest, &FORGE).first() else {
                break;
            };
            let cmd = rest[j].as_str();
            path = format!("{path} {cmd}");
            if v.dyn_arg(from + j) {
                return Some(format!("{name} {path}"));
            }
            if NESTED.contains(&cmd) {
                from += j + 1;
                continue;
            }
            if spelled_as(cmd, FORGE_VERBS) {
                return Some(format!("{name} {path}"));
            }
            break;
        }
    }
    None
}

/// The request a `gh api` / `glab api` call makes, when it may change
/// something: a method other than GET or HEAD (`-X`, `--method`; a field or
/// `--input` makes the default POST), except a GraphQL query that is no
/// mutation (a `query` field the gate can read).
fn api_writes(args: &[String], dynamic: impl Fn(usize) -> bool) -> Option<String> {
    let methods = options::values(args, &API, &["-X", "--method"]);
    if let Some(m) = methods.last() {
        if dynamic(m.at) {
            return Some("a method only known when it runs".into());
        }
        let m = m.text.to_ascii_uppercase();
        return (!matches!(m.as_str(), "GET" | "HEAD")).then_some(m);
    }
    let fields = options::values(args, &API, &["-f", "--raw-field", "-F", "--field"]);
    let input = !options::values(args, &API, &["--input"]).is_empty();
    if fields.is_empty() && !input {
        return None;
    }
    let graphql = options::operands(args, &API)
        .first()
        .is_some_and(|&j| args[j] == "graphql");
    if !graphql {
        return Some("POST".into());
    }
    // A GraphQL call: a mutation changes something; a query from a file or
    // only known when it runs may be one.
    let unknown = input
        || fields.iter().any(|f| {
            let value = f.text.split_once('=').map_or("", |(_, v)| v);
            dynamic(f.at)
                || value.starts_with('@')
                || value.to_ascii_lowercase().contains("mutation")
        });
    unknown.then(|| "a GraphQL mutation".into())
}

/// `gh alias set NAME 'EXPANSION'`: later `gh NAME` runs the expansion;
/// `gh config set editor|pager|browser CMD`: later `gh` commands run CMD,
/// judged here.
fn gh_alias(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args: Vec<&str> = c.words[c.at..].iter().map(|w| w.text.as_str()).collect();
    if let Some(k) = args.iter().position(|w| *w == "alias") {
        if matches!(args.get(k + 1), Some(&"set" | &"import")) {
            a.dynamic = Some("`gh alias set` defines what a later `gh` command runs".into());
        }
    }
    let set = args.iter().position(|w| *w == "config").and_then(|k| {
        let s = args[k + 1..].iter().position(|w| *w == "set")?;
        Some(k + 1 + s + 1)
    });
    // Any word after `set` (`--host h` may stand first) naming the key: the
    // value is a command later `gh` commands run, judged like `GH_PAGER`.
    if let Some(j) = set {
        let key = args[j..]
            .iter()
            .position(|w| matches!(*w, "editor" | "pager" | "browser"));
        // Whatever the value: it runs in later `gh` commands, not in this one,
        // where the gate never sees it — it asks; what it names is judged too
        // (deny rules, the critical-removal cap in bypass).
        if let Some(value) = key.and_then(|k| c.words.get(c.at + j + k + 1)) {
            if !value.dynamic && !value.text.trim().is_empty() {
                a.derived.push(Derived::Source(value.text.clone(), c.role));
            }
            a.dynamic = Some("`gh config set` names a program later `gh` commands run".into());
        }
    }
    None
}
