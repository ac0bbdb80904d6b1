//! What a command's environment must not carry (docs/sandbox.md, "Secrets are not
//! there"): the keys and tokens of the person, and the addresses of the host's
//! services.
//!
//! [`is_secret_var`] is the one list of secret variable names: the sandboxed path
//! removes them (less the ones the person names in `sandbox.env.pass`), and any other
//! path that runs a command for the agent asks the same function.

use std::ffi::{OsStr, OsString};

/// The provider key variables Decode itself reads (docs/providers.md).
const PROVIDER_KEYS: &[&str] = &[
    "DECODE_API_KEY",
    "GEMINI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
];

/// Name endings that mark a secret (`GH_TOKEN`, `AWS_SECRET_ACCESS_KEY`, …).
const SECRET_SUFFIXES: &[&str] = &["_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS"];

/// Further secrets by name that the endings miss (Decode's own choice, beyond the
/// endings above): passwords and personal access tokens spelled otherwise.
const SECRET_ENDINGS_ALSO: &[&str] = &[
    "PASSWORD",
    "PASSWD",
    "_PWD",
    "_PAT",
    "_PASSPHRASE",
    "_APIKEY",
];

/// Variables that hold a secret whatever their spelling.
const SECRET_NAMES: &[&str] = &[
    "PGPASSFILE",
    "VAULT_TOKEN",
    "SOPS_AGE_KEY",
    "NPM_TOKEN",
    "HF_TOKEN",
];

/// Whether a variable is one of the provider keys Decode itself reads: no command
/// inherits one, not even a command the person approved to run outside.
pub fn is_provider_key(name: &str) -> bool {
    PROVIDER_KEYS.contains(&name.to_ascii_uppercase().as_str())
}

/// Whether an environment variable holds a secret by its name: a provider key
/// variable, or a name ending in `_KEY`, `_TOKEN`, `_SECRET`, `_PASSWORD` or
/// `_CREDENTIALS` (or one of those words alone). Case does not matter
/// (`github_token` is one too).
pub fn is_secret_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    PROVIDER_KEYS.contains(&upper.as_str())
        || SECRET_NAMES.contains(&upper.as_str())
        || SECRET_SUFFIXES
            .iter()
            .any(|s| upper.ends_with(s) || upper == s[1..])
        || SECRET_ENDINGS_ALSO.iter().any(|s| upper.ends_with(s))
}

/// Variables that name a service of the host (a display, a bus, an agent, a
/// container engine, a multiplexer, an editor server): they are not passed into the
/// sandbox, where those services are out of reach anyway.
pub(crate) const SERVICE_VARS: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DBUS_STARTER_ADDRESS",
    "AT_SPI_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "CONTAINERD_ADDRESS",
    "TMUX",
    "TMUX_PANE",
    "TMUX_TMPDIR",
    "STY",
    "SCREENDIR",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "SWAYSOCK",
    "I3SOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
];

/// Why a variable is not passed into the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removed {
    /// A key or a token ([`is_secret_var`]).
    Secret,
    /// The address of a host service.
    Service,
}

/// Whether `name` is kept out of the sandbox, and why; `pass` are the names the
/// person keeps (`sandbox.env.pass`: secrets only — a service stays out of reach
/// whatever its variable says).
pub fn removed(name: &OsStr, pass: &[String]) -> Option<Removed> {
    let name = name.to_str()?;
    if SERVICE_VARS.contains(&name) {
        return Some(Removed::Service);
    }
    (is_secret_var(name) && !pass.iter().any(|p| p == name)).then_some(Removed::Secret)
}

/// The variables of `vars` (a process's environment) kept out of the sandbox, in
/// order, with why.
pub fn removed_from<'a>(
    vars: impl IntoIterator<Item = &'a OsString>,
    pass: &[String],
) -> Vec<(OsString, Removed)> {
    vars.into_iter()
        .filter_map(|k| removed(k, pass).map(|why| (k.clone(), why)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_tokens_are_secrets_by_name() {
        for n in [
            "DECODE_API_KEY",
            "GEMINI_API_KEY",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GH_TOKEN",
            "github_token",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "STRIPE_SECRET",
            "TOKEN",
            "PASSWORD",
            "PGPASSWORD",
            "MYSQL_PWD",
            "GITHUB_PAT",
            "GPG_PASSPHRASE",
        ] {
            assert!(is_secret_var(n), "{n}");
        }
        for n in [
            "PATH",
            "HOME",
            "KEYMAP",
            "TOKENIZERS_PARALLELISM",
            "SECRETS_DIR_HINT",
            "CARGO_TARGET_DIR",
            "MONKEY",
            "PASSWORD_STORE_DIR",
        ] {
            assert!(!is_secret_var(n), "{n}");
        }
    }

    #[test]
    fn the_person_keeps_a_secret_by_name_but_never_a_service() {
        let pass = vec!["GH_TOKEN".to_string(), "DOCKER_HOST".to_string()];
        assert_eq!(removed(OsStr::new("GH_TOKEN"), &pass), None);
        assert_eq!(
            removed(OsStr::new("NPM_TOKEN"), &pass),
            Some(Removed::Secret)
        );
        assert_eq!(
            removed(OsStr::new("DOCKER_HOST"), &pass),
            Some(Removed::Service)
        );
        assert_eq!(removed(OsStr::new("LANG"), &pass), None);
        let vars: Vec<OsString> = ["PATH", "DISPLAY", "A_KEY"].map(OsString::from).to_vec();
        assert_eq!(
            removed_from(&vars, &[]),
            vec![
                (OsString::from("DISPLAY"), Removed::Service),
                (OsString::from("A_KEY"), Removed::Secret)
            ]
        );
    }
}
