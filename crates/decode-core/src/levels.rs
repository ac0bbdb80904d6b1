//! The settings levels around a project's own file (docs/permissions.md, "Settings
//! levels"): managed `/etc/decode/managed-settings.json` (the organisation's), the
//! person's `~/.config/decode/settings.json`, and the project's local
//! `.decode/settings.local.json` (the person's own rules for this project, kept out
//! of version control). Every file is read as the project's is (a regular file of at
//! most 1 MiB, never blocking, JSON nested at most 64 deep).
//!
//! The managed file may also turn modes off (`disableBypassMode`,
//! `disableAutoMode`) and leave only its own allow rules (`allowManagedRulesOnly`).
//! A managed file that exists but cannot be read as settings fails closed: every
//! tool that changes something asks, and bypass and auto mode are off, until it is
//! fixed.
//!
//! The managed file's place can be moved with the `DECODE_MANAGED_SETTINGS`
//! environment variable (an absolute path), read when a project's state is loaded:
//! for tests and for packagers that keep `/etc` elsewhere.

use std::path::{Path, PathBuf};

use decode_policy::{Level, LevelRules, Mode};

use crate::settings::{local_settings_path, Settings, SettingsWarning};

/// Where the managed settings are read from unless [`MANAGED_SETTINGS_ENV`] says.
pub const MANAGED_SETTINGS_PATH: &str = "/etc/decode/managed-settings.json";
/// The environment variable that moves the managed settings file (absolute path).
pub const MANAGED_SETTINGS_ENV: &str = "DECODE_MANAGED_SETTINGS";

/// The managed settings file: `$DECODE_MANAGED_SETTINGS` when it is an absolute
/// path, else `/etc/decode/managed-settings.json`.
pub fn managed_settings_path() -> PathBuf {
    std::env::var_os(MANAGED_SETTINGS_ENV)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from(MANAGED_SETTINGS_PATH))
}

/// Decode's config folder for `home` (`$XDG_CONFIG_HOME/decode`, else
/// `~/.config/decode`), which holds the person's settings file.
pub fn config_dir_for(home: &Path) -> PathBuf {
    crate::dirs::Dirs::with_home(home, |k| std::env::var_os(k)).config
}

/// The managed, user and local settings of one project.
#[derive(Debug, Clone)]
pub struct Levels {
    /// The managed file (empty when there is none).
    pub managed: Settings,
    /// The person's own file.
    pub user: Settings,
    /// The project's local file.
    pub local: Settings,
    /// The home folder (to name the user file `~/…`).
    home: PathBuf,
}

impl Levels {
    /// No settings at any level (a state built in memory).
    pub fn empty(project_root: &Path, home: &Path) -> Levels {
        Levels {
            managed: Settings::empty_at(managed_settings_path()),
            user: Settings::empty_at(crate::user_settings::user_settings_path(&config_dir_for(
                home,
            ))),
            local: Settings::empty_at(local_settings_path(project_root)),
            home: home.to_path_buf(),
        }
    }

    /// Reads the three files. Never fails: a missing file is empty; a malformed or
    /// unreadable one is reported and treated as empty — except the managed file,
    /// which then fails closed (see the module docs).
    pub fn load(project_root: &Path, home: &Path) -> (Levels, Vec<SettingsWarning>) {
        Levels::load_from(
            project_root,
            home,
            &managed_settings_path(),
            &config_dir_for(home),
        )
    }

    /// [`Levels::load`] with the managed file and the config folder given.
    pub fn load_from(
        project_root: &Path,
        home: &Path,
        managed_path: &Path,
        config_dir: &Path,
    ) -> (Levels, Vec<SettingsWarning>) {
        let mut warnings = Vec::new();
        let (mut managed, w) = Settings::load_file(managed_path);
        if !w.is_empty() {
            tracing::warn!(file = %managed_path.display(), "managed settings unreadable: failing closed");
            managed = Settings::held_back_at(managed_path.to_path_buf());
            managed.disable_bypass_mode = true;
            managed.disable_auto_mode = true;
        }
        warnings.extend(w);
        let (user, w) = Settings::load_file(&crate::user_settings::user_settings_path(config_dir));
        warnings.extend(w);
        let (local, w) = Settings::load_file(&local_settings_path(project_root));
        warnings.extend(w);
        (
            Levels {
                managed,
                user,
                local,
                home: home.to_path_buf(),
            },
            warnings,
        )
    }

    /// The files followed for changes.
    pub fn paths(project_root: &Path, home: &Path) -> Vec<PathBuf> {
        vec![
            managed_settings_path(),
            crate::user_settings::user_settings_path(&config_dir_for(home)),
            local_settings_path(project_root),
        ]
    }

    /// The settings of a level (`None` for the project's own file, which the state
    /// keeps apart).
    pub fn get(&self, level: Level) -> Option<&Settings> {
        match level {
            Level::Managed => Some(&self.managed),
            Level::User => Some(&self.user),
            Level::Local => Some(&self.local),
            Level::Project => None,
        }
    }

    /// How reasons name a level's file: the local file relative to the project,
    /// the user file under `~`, the managed file as it is.
    pub fn display_path(&self, level: Level) -> PathBuf {
        match level {
            Level::Local => PathBuf::from(".decode/settings.local.json"),
            Level::Project => PathBuf::from(".decode/settings.json"),
            Level::User => match self.user.path.strip_prefix(&self.home) {
                Ok(rel) => Path::new("~").join(rel),
                Err(_) => self.user.path.clone(),
            },
            Level::Managed => self.managed.path.clone(),
        }
    }

    /// The gate's view of the levels; `saved_local` are the local file's allow
    /// rules the person saved through Decode.
    pub fn policy(&self, saved_local: &[String]) -> Vec<LevelRules> {
        [Level::Managed, Level::User, Level::Local]
            .into_iter()
            .map(|level| {
                let s = self.get(level).expect("not the project level");
                LevelRules {
                    level,
                    file: self.display_path(level),
                    rules: s.permissions.clone(),
                    external_caps: s.caps_external.clone(),
                    saved_allow: if level == Level::Local {
                        saved_local.to_vec()
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect()
    }

    /// Why `mode` may not be chosen here, if it may not (managed
    /// `disableBypassMode` / `disableAutoMode`).
    pub fn mode_refusal(&self, mode: Mode) -> Option<String> {
        let off = match mode {
            Mode::Bypass => self.managed.disable_bypass_mode,
            Mode::Auto => self.managed.disable_auto_mode,
            _ => false,
        };
        off.then(|| {
            format!(
                "{mode} mode is turned off by the managed settings {}",
                self.managed.path.display()
            )
        })
    }

    /// The modes that may not be chosen here.
    pub fn disabled_modes(&self) -> Vec<Mode> {
        Mode::ALL
            .into_iter()
            .filter(|m| self.mode_refusal(*m).is_some())
            .collect()
    }
}

/// One rule of the merged view (`decode settings`, the settings window): which
/// list, which level and file it comes from, and whether it counts here now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LeveledRule {
    /// `allow`, `ask` or `deny`.
    pub list: &'static str,
    /// The rule as written.
    pub rule: String,
    /// `managed`, `user`, `project`, `local`, `agent` or `enclosing`.
    pub level: String,
    /// The file (or `agent NAME`) it comes from.
    pub file: String,
    /// Whether it takes part in decisions now.
    pub counts: bool,
    /// Why it does not count, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let root = base.join("proj");
        let home = base.join("home");
        let config = home.join(".config/decode");
        std::fs::create_dir_all(root.join(".decode")).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        let managed = base.join("managed.json");
        (d, root, home, config, managed)
    }

    #[test]
    fn reads_every_level_and_names_each_file() {
        let (_d, root, home, config, managed) = dirs();
        std::fs::write(
            &managed,
            r#"{"permissions":{"deny":["bash(curl *)"]},"disableBypassMode":true}"#,
        )
        .unwrap();
        std::fs::write(
            config.join("settings.json"),
            r#"{"permissions":{"allow":["bash(cargo test)"]},"sandbox":{"writable":["~/x"]}}"#,
        )
        .unwrap();
        std::fs::write(
            root.join(".decode/settings.local.json"),
            r#"{"permissions":{"ask":["bash(make)"]}}"#,
        )
        .unwrap();
        let (l, w) = Levels::load_from(&root, &home, &managed, &config);
        assert!(w.is_empty(), "{w:?}");
        let p = l.policy(&[]);
        assert_eq!(p[0].level, Level::Managed);
        assert_eq!(p[0].rules.deny, ["bash(curl *)"]);
        assert_eq!(p[1].file, PathBuf::from("~/.config/decode/settings.json"));
        assert_eq!(p[1].rules.allow, ["bash(cargo test)"]);
        assert_eq!(p[2].file, PathBuf::from(".decode/settings.local.json"));
        assert_eq!(p[2].rules.ask, ["bash(make)"]);
        assert_eq!(l.disabled_modes(), [Mode::Bypass]);
        let why = l.mode_refusal(Mode::Bypass).unwrap();
        assert!(
            why.contains("bypass mode is turned off") && why.contains("managed.json"),
            "{why}"
        );
        assert!(l.mode_refusal(Mode::Auto).is_none());
    }

    #[test]
    fn disable_flags_count_only_from_the_managed_file() {
        let (_d, root, home, config, managed) = dirs();
        std::fs::write(config.join("settings.json"), r#"{"disableAutoMode":true}"#).unwrap();
        let (l, _) = Levels::load_from(&root, &home, &managed, &config);
        assert!(l.disabled_modes().is_empty());
    }

    #[test]
    fn a_malformed_managed_file_fails_closed() {
        let (_d, root, home, config, managed) = dirs();
        std::fs::write(&managed, r#"{"permissions": {"deny": "oops"}}"#).unwrap();
        let (l, w) = Levels::load_from(&root, &home, &managed, &config);
        assert_eq!(w.len(), 1);
        assert_eq!(l.disabled_modes(), [Mode::Auto, Mode::Bypass]);
        assert!(
            l.managed.permissions.ask.iter().any(|r| r == "bash"),
            "{:?}",
            l.managed.permissions
        );
        // A wrong type of a flag is malformed too.
        std::fs::write(&managed, r#"{"disableBypassMode": "yes"}"#).unwrap();
        let (l, w) = Levels::load_from(&root, &home, &managed, &config);
        assert!(w[0].to_string().contains("disableBypassMode"), "{w:?}");
        assert_eq!(l.disabled_modes(), [Mode::Auto, Mode::Bypass]);
    }
}
