//! The person's own settings file, `~/.config/decode/settings.json` (Decode's config
//! folder): today only its `sandbox` section is read (docs/sandbox.md, "Your own
//! bounds"):
//!
//! ```json
//! {"sandbox": {"writable": ["~/scratch"], "hidden": ["~/work/secrets"],
//!              "env": {"pass": ["GH_TOKEN"]}}}
//! ```
//!
//! Only this level may widen or narrow the sandbox: a project cannot make a folder
//! writable for itself. The file is read like every settings file (a regular file of
//! at most 1 MiB, never blocking, JSON nested at most 64 deep); a missing one is empty,
//! a malformed one is reported (file, line, column) and treated as empty. Unknown keys
//! are ignored (a later level of settings reads them).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::settings::{object_only, parse_object, SettingsWarning, MAX_SETTINGS_BYTES};

/// The file's name in Decode's config folder.
pub const USER_SETTINGS_FILE: &str = "settings.json";

/// The user settings file in Decode's config folder `config_dir`.
pub fn user_settings_path(config_dir: &Path) -> PathBuf {
    config_dir.join(USER_SETTINGS_FILE)
}

/// The `sandbox` section of the person's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserSandbox {
    /// `sandbox.writable`: more folders a sandboxed command may write (as written:
    /// `~/…`, absolute).
    pub writable: Vec<String>,
    /// `sandbox.hidden`: more files and folders kept from sandboxed commands.
    pub hidden: Vec<String>,
    /// `sandbox.env.pass`: secret variables passed in after all (by exact name).
    pub env_pass: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct UserFile {
    #[serde(deserialize_with = "object_only")]
    sandbox: Option<SandboxFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SandboxFile {
    writable: Option<Vec<String>>,
    hidden: Option<Vec<String>>,
    #[serde(deserialize_with = "object_only")]
    env: Option<EnvFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct EnvFile {
    pass: Option<Vec<String>>,
}

impl UserSandbox {
    /// Reads the `sandbox` section of `<config_dir>/settings.json`. Never fails: a
    /// missing file is empty; an unreadable or malformed one is empty with a warning
    /// naming the file (and the line and column).
    pub fn load(config_dir: &Path) -> (UserSandbox, Vec<SettingsWarning>) {
        let path = user_settings_path(config_dir);
        match decode_policy::paths::read_small_file(&path, MAX_SETTINGS_BYTES) {
            Ok(text) => match UserSandbox::parse(&path, text.as_bytes()) {
                Ok(s) => (s, Vec::new()),
                Err(w) => {
                    tracing::warn!(warning = %w, "ignoring malformed user settings file");
                    (UserSandbox::default(), vec![w])
                }
            },
            Err(e) if e.is_missing() => (UserSandbox::default(), Vec::new()),
            Err(e) => {
                let w = SettingsWarning {
                    path: path.clone(),
                    line: None,
                    column: None,
                    message: format!("could not read the settings file: {e}"),
                };
                tracing::warn!(warning = %w, "ignoring unreadable user settings file");
                (UserSandbox::default(), vec![w])
            }
        }
    }

    /// Parses the file's contents; `path` names it in a warning.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<UserSandbox, SettingsWarning> {
        let (_, file) = parse_object::<UserFile>(bytes).map_err(|e| e.into_warning(path))?;
        let s = file.sandbox.unwrap_or_default();
        let clean = |v: Option<Vec<String>>| -> Vec<String> {
            v.unwrap_or_default()
                .into_iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Ok(UserSandbox {
            writable: clean(s.writable),
            hidden: clean(s.hidden),
            env_pass: clean(s.env.and_then(|e| e.pass)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<UserSandbox, SettingsWarning> {
        UserSandbox::parse(Path::new("/c/settings.json"), text.as_bytes())
    }

    #[test]
    fn reads_the_sandbox_section_and_ignores_the_rest() {
        let s = parse(
            r#"{"permissions": {"allow": ["Bash(x)"]}, "sandbox": {"writable": ["~/scratch", " "],
                "hidden": ["~/work/secrets"], "env": {"pass": ["GH_TOKEN"]}, "later": 1}}"#,
        )
        .unwrap();
        assert_eq!(s.writable, ["~/scratch"]);
        assert_eq!(s.hidden, ["~/work/secrets"]);
        assert_eq!(s.env_pass, ["GH_TOKEN"]);
        assert_eq!(parse("  \n").unwrap(), UserSandbox::default());
        assert_eq!(
            parse(r#"{"sandbox": null}"#).unwrap(),
            UserSandbox::default()
        );
    }

    #[test]
    fn a_malformed_file_names_the_place_and_the_key() {
        let w = parse("{\"sandbox\": {\"writable\": \"~/x\"}}").unwrap_err();
        assert!(w.to_string().contains("sandbox.writable"), "{w}");
        let w = parse("{\n  \"sandbox\": [1]\n}").unwrap_err();
        assert!(w.to_string().starts_with("/c/settings.json:2:"), "{w}");
        let w = parse(&format!("{}1{}", "[".repeat(70), "]".repeat(70))).unwrap_err();
        assert!(w.to_string().contains("deeper than 64"), "{w}");
        let w = parse("{\"sandbox\": {\"env\": {\"pass\": [1]}}}").unwrap_err();
        assert!(w.to_string().contains("sandbox.env.pass"), "{w}");
    }

    #[test]
    fn a_missing_file_is_empty_and_a_bad_one_is_reported_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(
            UserSandbox::load(d.path()),
            (UserSandbox::default(), vec![])
        );
        std::fs::write(d.path().join("settings.json"), "{oops").unwrap();
        let (s, w) = UserSandbox::load(d.path());
        assert_eq!(s, UserSandbox::default());
        assert_eq!(w.len(), 1);
        // A FIFO is refused at once, not waited on.
        std::fs::remove_file(d.path().join("settings.json")).unwrap();
        nix::unistd::mkfifo(
            &d.path().join("settings.json"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let (s, w) = UserSandbox::load(d.path());
        assert_eq!(s, UserSandbox::default());
        assert_eq!(w.len(), 1, "{w:?}");
        // So is a file over 1 MiB.
        std::fs::remove_file(d.path().join("settings.json")).unwrap();
        std::fs::write(
            d.path().join("settings.json"),
            " ".repeat(MAX_SETTINGS_BYTES as usize + 1),
        )
        .unwrap();
        assert_eq!(UserSandbox::load(d.path()).1.len(), 1);
    }
}
