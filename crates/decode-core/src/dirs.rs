//! Where Decode keeps its files (XDG base directories):
//!
//! - config: `$XDG_CONFIG_HOME/decode`, else `~/.config/decode` (provider, model, base URL);
//! - data: `$XDG_DATA_HOME/decode`, else `~/.local/share/decode` (trust store, sessions);
//! - state: `$XDG_STATE_HOME/decode`, else `~/.local/state/decode` (logs, history).
//!
//! Following the XDG spec, a variable that is unset, empty or not an absolute path is
//! ignored. Everything that reads or writes these folders takes the folder explicitly,
//! so tests can point it at a temporary directory; [`Dirs::from_env`] is the one place
//! that looks at the process environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The application's folder name inside each XDG base directory.
pub const APP_DIR_NAME: &str = "decode";

/// The resolved home, config, data and state folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// The user's home folder (`$HOME`).
    pub home: PathBuf,
    /// Decode's config folder.
    pub config: PathBuf,
    /// Decode's data folder (holds `trust.json`).
    pub data: PathBuf,
    /// Decode's state folder.
    pub state: PathBuf,
}

/// The home folder could not be determined.
#[derive(Debug, thiserror::Error)]
#[error("could not determine the home folder: set HOME to an absolute path")]
pub struct NoHomeError;

impl Dirs {
    /// Resolves the folders from the process environment (`HOME`, `XDG_*_HOME`).
    pub fn from_env() -> Result<Dirs, NoHomeError> {
        Dirs::resolve(|key| std::env::var_os(key))
    }

    /// Resolves the folders from the given environment lookup; `HOME` falls back to
    /// the platform's notion of the home folder when the lookup has none.
    pub fn resolve(env: impl Fn(&str) -> Option<OsString>) -> Result<Dirs, NoHomeError> {
        let home = absolute_var(&env, "HOME")
            .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()))
            .ok_or(NoHomeError)?;
        Ok(Dirs::with_home(&home, env))
    }

    /// Resolves the folders for an explicit home folder, honouring the `XDG_*_HOME`
    /// entries of `env`.
    pub fn with_home(home: &Path, env: impl Fn(&str) -> Option<OsString>) -> Dirs {
        let base = |var: &str, default: &[&str]| {
            absolute_var(&env, var)
                .unwrap_or_else(|| default.iter().fold(home.to_path_buf(), |p, c| p.join(c)))
        };
        Dirs {
            home: home.to_path_buf(),
            config: base("XDG_CONFIG_HOME", &[".config"]).join(APP_DIR_NAME),
            data: base("XDG_DATA_HOME", &[".local", "share"]).join(APP_DIR_NAME),
            state: base("XDG_STATE_HOME", &[".local", "state"]).join(APP_DIR_NAME),
        }
    }

    /// The folders for `home` ignoring any XDG variables.
    pub fn for_home(home: &Path) -> Dirs {
        Dirs::with_home(home, |_| None)
    }
}

fn absolute_var(env: &impl Fn(&str) -> Option<OsString>, key: &str) -> Option<PathBuf> {
    let value = env(key)?;
    let path = PathBuf::from(value);
    (path.is_absolute()).then_some(path)
}

/// Decode's config folder from the process environment.
pub fn config_dir() -> Result<PathBuf, NoHomeError> {
    Dirs::from_env().map(|d| d.config)
}

/// Decode's data folder from the process environment.
pub fn data_dir() -> Result<PathBuf, NoHomeError> {
    Dirs::from_env().map(|d| d.data)
}

/// Decode's state folder from the process environment.
pub fn state_dir() -> Result<PathBuf, NoHomeError> {
    Dirs::from_env().map(|d| d.state)
}

/// The user's home folder from the process environment.
pub fn home_dir() -> Result<PathBuf, NoHomeError> {
    Dirs::from_env().map(|d| d.home)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_under_home() {
        let d = Dirs::resolve(env_of(&[("HOME", "/home/u")])).unwrap();
        assert_eq!(d.home, PathBuf::from("/home/u"));
        assert_eq!(d.config, PathBuf::from("/home/u/.config/decode"));
        assert_eq!(d.data, PathBuf::from("/home/u/.local/share/decode"));
        assert_eq!(d.state, PathBuf::from("/home/u/.local/state/decode"));
    }

    #[test]
    fn xdg_variables_win() {
        let d = Dirs::resolve(env_of(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/c"),
            ("XDG_DATA_HOME", "/d"),
            ("XDG_STATE_HOME", "/s"),
        ]))
        .unwrap();
        assert_eq!(d.config, PathBuf::from("/c/decode"));
        assert_eq!(d.data, PathBuf::from("/d/decode"));
        assert_eq!(d.state, PathBuf::from("/s/decode"));
    }

    #[test]
    fn empty_or_relative_xdg_variables_are_ignored() {
        let d = Dirs::resolve(env_of(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", ""),
            ("XDG_DATA_HOME", "rel/dir"),
        ]))
        .unwrap();
        assert_eq!(d.config, PathBuf::from("/home/u/.config/decode"));
        assert_eq!(d.data, PathBuf::from("/home/u/.local/share/decode"));
    }

    #[test]
    fn for_home_ignores_environment() {
        let d = Dirs::for_home(Path::new("/h"));
        assert_eq!(d.data, PathBuf::from("/h/.local/share/decode"));
    }
}
