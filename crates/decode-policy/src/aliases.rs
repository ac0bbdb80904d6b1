//! Command spellings that stand for another command: npm's aliases and
//! unique abbreviations (`npm publ` is `npm publish`). Git aliases and cargo
//! aliases come from the person's configuration (see `shell::aliases`).

/// npm's commands (npm 11, `lib/utils/cmd-list.js`).
const NPM_COMMANDS: &[&str] = &[
    "access",
    "adduser",
    "approve-scripts",
    "audit",
    "bugs",
    "cache",
    "ci",
    "completion",
    "config",
    "dedupe",
    "deny-scripts",
    "deprecate",
    "diff",
    "dist-tag",
    "docs",
    "doctor",
    "edit",
    "exec",
    "explain",
    "explore",
    "find-dupes",
    "fund",
    "get",
    "help",
    "help-search",
    "init",
    "install",
    "install-ci-test",
    "install-scripts",
    "install-test",
    "link",
    "ll",
    "login",
    "logout",
    "ls",
    "org",
    "outdated",
    "owner",
    "pack",
    "ping",
    "pkg",
    "prefix",
    "profile",
    "prune",
    "publish",
    "query",
    "rebuild",
    "repo",
    "restart",
    "root",
    "run",
    "sbom",
    "search",
    "set",
    "shrinkwrap",
    "stage",
    "star",
    "stars",
    "start",
    "stop",
    "team",
    "test",
    "token",
    "trust",
    "undeprecate",
    "uninstall",
    "unpublish",
    "unstar",
    "update",
    "version",
    "view",
    "whoami",
];

/// npm's aliases (npm 11, `lib/utils/cmd-list.js`): one level deep.
const NPM_ALIASES: &[(&str, &str)] = &[
    ("add", "install"),
    ("add-user", "adduser"),
    ("author", "owner"),
    ("c", "config"),
    ("cit", "install-ci-test"),
    ("clean-install", "ci"),
    ("clean-install-test", "install-ci-test"),
    ("create", "init"),
    ("ddp", "dedupe"),
    ("dist-tags", "dist-tag"),
    ("find", "search"),
    ("hlep", "help"),
    ("home", "docs"),
    ("i", "install"),
    ("ic", "ci"),
    ("in", "install"),
    ("info", "view"),
    ("innit", "init"),
    ("ins", "install"),
    ("inst", "install"),
    ("insta", "install"),
    ("instal", "install"),
    ("install-clean", "ci"),
    ("isnt", "install"),
    ("isnta", "install"),
    ("isntal", "install"),
    ("isntall", "install"),
    ("isntall-clean", "ci"),
    ("issues", "bugs"),
    ("it", "install-test"),
    ("la", "ll"),
    ("list", "ls"),
    ("ln", "link"),
    ("ogr", "org"),
    ("r", "uninstall"),
    ("rb", "rebuild"),
    ("remove", "uninstall"),
    ("rm", "uninstall"),
    ("rum", "run"),
    ("run-script", "run"),
    ("s", "search"),
    ("se", "search"),
    ("show", "view"),
    ("sit", "install-ci-test"),
    ("t", "test"),
    ("tst", "test"),
    ("u", "update"),
    ("udpate", "update"),
    ("un", "uninstall"),
    ("unlink", "uninstall"),
    ("up", "update"),
    ("upgrade", "update"),
    ("urn", "run"),
    ("v", "view"),
    ("verison", "version"),
    ("why", "explain"),
    ("x", "exec"),
];

/// The npm command `word` stands for: itself, an alias, or the one command
/// it abbreviates. `None` when it is none of these (or ambiguous).
pub(crate) fn npm_command(word: &str) -> Option<&'static str> {
    if let Some(c) = NPM_COMMANDS.iter().find(|c| **c == word) {
        return Some(c);
    }
    if let Some((_, c)) = NPM_ALIASES.iter().find(|(a, _)| *a == word) {
        return Some(c);
    }
    if word.is_empty() {
        return None;
    }
    // A unique prefix of the commands and aliases together.
    let mut found: Option<&'static str> = None;
    for (name, target) in NPM_COMMANDS
        .iter()
        .map(|c| (*c, *c))
        .chain(NPM_ALIASES.iter().copied())
    {
        if name.starts_with(word) {
            match found {
                Some(f) if f != target => return None,
                _ => found = Some(target),
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::npm_command;

    #[test]
    fn npm_spellings() {
        assert_eq!(npm_command("publ"), Some("publish"));
        assert_eq!(npm_command("publish"), Some("publish"));
        assert_eq!(npm_command("i"), Some("install"));
        assert_eq!(npm_command("x"), Some("exec"));
        assert_eq!(npm_command("run"), Some("run"));
        assert_eq!(npm_command("pu"), Some("publish"));
        assert_eq!(npm_command("p"), None);
        assert_eq!(npm_command("rum"), Some("run"));
        assert_eq!(npm_command("zzz"), None);
    }
}
