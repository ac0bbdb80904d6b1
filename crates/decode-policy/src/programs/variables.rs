//! Variables programs read as a command, or as code or options from
//! somewhere the gate cannot see (docs/permissions.md, "Fail closed"):
//! `NAME=VALUE` before a command, after `env`, or in `export`.

use crate::shell::model::{Analysis, Derived, Role, Target};
use crate::shell::words::Word;

/// Variables whose value is a command some program runs.
const COMMAND_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "RSYNC_RSH",
    "RSYNC_CONNECT_PROG",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "PROMPT_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_SEQUENCE_EDITOR",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "LESSOPEN",
    "LESSCLOSE",
    // cargo runs the compiler (and its documenter) these name.
    "RUSTC",
    "RUSTDOC",
    "CARGO_BUILD_RUSTC",
    "CARGO_BUILD_RUSTDOC",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
];

/// The shapes of names of variables that hold a command, whatever program
/// reads them (`GH_EDITOR`, `KUBE_EDITOR`, `SVN_EDITOR`, `HGEDITOR`,
/// `GH_BROWSER`, `GIT_PROXY_COMMAND`, `CVS_RSH`, `KUBECTL_EXTERNAL_DIFF`,
/// `GIT_SSH`…): an open list, so a program's own variable need not be
/// known by name.
const COMMAND_SUFFIXES: &[&str] = &[
    "EDITOR",
    "PAGER",
    "BROWSER",
    "_COMMAND",
    "_CMD",
    "_SSH",
    "_RSH",
    "_ASKPASS",
    "_SHELL",
    "_PROG",
    "_PROGRAM",
    "_DIFF",
    "_HOOK",
    "_VIEWER",
    "_EXEC",
    "_LINKER",
    "_PROVIDER",
    "_WRAPPER",
];

/// Whether a variable holds a command some program runs: one of
/// [`COMMAND_VARS`], `SHELL`, or a name of a shape in [`COMMAND_SUFFIXES`]
/// (in any case).
pub(crate) fn holds_command(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    COMMAND_VARS.contains(&upper.as_str())
        || upper == "SHELL"
        || COMMAND_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// Variables that make a program load code, or define aliases, from
/// somewhere the gate cannot read: the command is opaque.
fn opaque_var(name: &str) -> Option<&'static str> {
    match name {
        "LD_PRELOAD" | "LD_AUDIT" | "LD_LIBRARY_PATH" => Some("loads code from a library"),
        "GIT_CONFIG_COUNT"
        | "GIT_CONFIG_PARAMETERS"
        | "GIT_CONFIG"
        | "GIT_CONFIG_GLOBAL"
        | "GIT_CONFIG_SYSTEM"
        | "GIT_EXEC_PATH"
        | "GIT_TEMPLATE_DIR" => {
            Some("changes git's configuration (aliases, hooks, programs it runs)")
        }
        n if n.starts_with("GIT_CONFIG_KEY_") || n.starts_with("GIT_CONFIG_VALUE_") => {
            Some("changes git's configuration (aliases, hooks, programs it runs)")
        }
        n if n.starts_with("CARGO_ALIAS_") => Some("defines a cargo alias"),
        "CARGO_BUILD_RUSTC_WRAPPER" | "RUSTC_WRAPPER" | "CARGO_TARGET_RUNNER" => {
            Some("makes cargo run another program")
        }
        n if n.starts_with("CARGO_TARGET_") && n.ends_with("_RUNNER") => {
            Some("makes cargo run another program")
        }
        // A shell reads this file before anything else.
        "BASH_ENV" | "ENV" => Some("makes the shell run a script file first"),
        // Where programs read their configuration (aliases, hooks, the
        // programs they run) or their installed tools from: somewhere the
        // gate does not read.
        "CARGO_HOME"
        | "RUSTUP_HOME"
        | "GH_CONFIG_DIR"
        | "XDG_CONFIG_HOME"
        | "XDG_CONFIG_DIRS"
        | "XDG_DATA_HOME"
        | "ZDOTDIR"
        | "HOME"
        | "GIT_DIR"
        | "GIT_COMMON_DIR"
        | "NPM_CONFIG_PREFIX"
        | "GNUPGHOME"
        | "INPUTRC"
        | "KUBECONFIG"
        | "DOCKER_CONFIG"
        | "PIP_CONFIG_FILE"
        | "NPM_CONFIG_USERCONFIG"
        | "NPM_CONFIG_GLOBALCONFIG"
        | "YARN_RC_FILENAME"
        | "APT_CONFIG" => Some(
            "moves where programs read their configuration (aliases, hooks, programs they run)",
        ),
        n if n.ends_with("SCRIPT_SHELL") || n.ends_with("SCRIPT-SHELL") => {
            Some("names the shell that runs every script")
        }
        "LESSKEY" | "LESSKEYIN" | "LESSKEY_CONTENT" | "LESSKEYIN_SYSTEM" | "LESSKEY_SYSTEM"
        | "LESSEDIT" => Some("gives less key bindings or commands"),
        // man's options (`-P PAGER`, `--pager=…`).
        "MANOPT" => Some("gives man options that may name a pager to run"),
        "NODE_OPTIONS" | "PYTHONSTARTUP" | "PERL5OPT" | "RUBYOPT" => {
            Some("makes an interpreter load code")
        }
        // Options a program reads from the environment (`TAR_OPTIONS=--to-command=…`).
        "TAR_OPTIONS" | "MAKEFLAGS" | "MFLAGS" | "GNUMAKEFLAGS" | "ZIPOPT" | "UNZIP" | "GZIP"
        | "XZ_OPT" | "GREP_OPTIONS" => Some("gives a program options the gate does not read"),
        _ => None,
    }
}

/// npm's configuration keys (as `npm_config_KEY`, upper case) that name a
/// program it runs or a configuration file it obeys.
fn npm_opaque(key: &str) -> Option<&'static str> {
    matches!(
        key,
        "SCRIPT_SHELL"
            | "SHELL"
            | "USERCONFIG"
            | "GLOBALCONFIG"
            | "NODE_OPTIONS"
            | "ONLOAD_SCRIPT"
            | "INIT_MODULE"
            | "EDITOR"
            | "BROWSER"
            | "VIEWER"
            | "GIT"
            | "PREFIX"
    )
    .then_some("names a program npm runs or a configuration it obeys")
}

/// Variables naming where a program installs files whose names it chooses
/// (`CARGO_INSTALL_ROOT=~/.local cargo install x`, `make install
/// DESTDIR=~`): the folder is written.
pub(crate) fn install_folder(name: &str) -> bool {
    matches!(
        name,
        "CARGO_INSTALL_ROOT"
            | "GOBIN"
            | "GOPATH"
            | "PIP_TARGET"
            | "PIP_PREFIX"
            | "PYTHONUSERBASE"
            | "PREFIX"
            | "DESTDIR"
            | "BINDIR"
            | "EXEC_PREFIX"
            | "INSTALL_PREFIX"
            | "CMAKE_INSTALL_PREFIX"
            | "INSTALL_ROOT"
    )
}

/// The folder an install variable names, as a write target, when it may lie
/// outside the project (inside it, the project's own install rule writes
/// into it like any of its scripts).
pub(crate) fn install_target(value: &str, dynamic: bool) -> Option<Target> {
    let outside = dynamic || value.starts_with(['/', '~']) || value.split('/').any(|p| p == "..");
    outside.then(|| {
        let mut t = Target::new(value, dynamic);
        t.contents = true;
        t
    })
}

/// Judges `NAME=VALUE` words (prefix assignments, `env` arguments,
/// `export` arguments): a command held in a variable is a fragment.
pub(crate) fn assignments<'w>(ws: impl Iterator<Item = &'w Word>, role: Role, a: &mut Analysis) {
    for w in ws {
        let Some((name, value)) = w.text.split_once('=') else {
            continue;
        };
        let name = name.trim_end_matches('+');
        // npm reads every `npm_config_KEY` (any case) as its option `--KEY`.
        let npm_key = name
            .get(..11)
            .filter(|p| p.eq_ignore_ascii_case("npm_config_"))
            .map(|_| name[11..].to_ascii_uppercase());
        if let Some(why) = npm_key.as_deref().and_then(npm_opaque) {
            a.dynamic = Some(format!("`{name}` {why}"));
            continue;
        }
        // A repository in a `.git` folder is one the gate protects.
        let dot_git = value.trim_end_matches('/').rsplit('/').next() == Some(".git");
        if name == "GIT_DIR" && dot_git && !w.dynamic {
            continue;
        }
        if install_folder(name) && !value.is_empty() {
            a.own_writes.extend(install_target(value, w.dynamic));
            continue;
        }
        if let Some(why) = opaque_var(name) {
            a.dynamic = Some(format!("`{name}` {why}"));
            continue;
        }
        if matches!(name, "LESS" | "MORE") && value.contains('+') {
            // less's `+CMD` start-up commands: `+!CMD` runs CMD.
            a.dynamic = Some(format!("`{name}` gives the pager a start-up command"));
            continue;
        }
        if name.starts_with("BASH_FUNC_") {
            // `BASH_FUNC_ls%%=() { …; }`: bash imports a function that a later
            // `ls` runs. Its body meets the deny rules and caps.
            a.dynamic = Some(format!("`{name}` defines a shell function"));
            let body = value.trim_start().trim_start_matches("()");
            if !body.trim().is_empty() {
                a.derived
                    .push(Derived::Source(body.to_string(), Role::Checked));
            }
            continue;
        }
        if matches!(name, "PS0" | "PS1" | "PS2" | "PS3" | "PS4") {
            // Prompt strings are expanded (PS4 under `set -x`): their
            // substitutions run.
            if w.dynamic {
                a.dynamic = Some(format!(
                    "`{name}` holds a prompt only known when it runs (its substitutions run)"
                ));
            } else {
                for inner in crate::shell::parse::find_substitutions(value, &[]) {
                    a.derived.push(Derived::Source(inner, Role::Checked));
                }
            }
            continue;
        }
        if holds_command(name) {
            if w.dynamic {
                a.dynamic = Some(format!(
                    "`{name}` holds a command that is only known when it runs"
                ));
                // What can be seen of it still meets the deny rules and caps.
                if !value.trim().is_empty() {
                    a.derived
                        .push(Derived::Source(value.to_string(), Role::Checked));
                }
            } else if !value.trim().is_empty() {
                a.derived.push(Derived::Source(value.to_string(), role));
            }
        }
    }
}
