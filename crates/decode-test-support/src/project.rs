//! A temporary project folder plus an isolated home and XDG folders, so a test never
//! reads or writes the developer's real settings, trust store or logs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

/// `proj/` beside `home/` in one temp folder, removed when dropped.
pub struct TempProject {
    _root: TempDir,
    /// The project folder (canonical).
    pub project: PathBuf,
    /// The isolated home (canonical), with `.config`, `.local/share`,
    /// `.local/state`, `.cache` and a private `run/` for `XDG_RUNTIME_DIR`.
    pub home: PathBuf,
}

impl TempProject {
    /// An empty project `proj/` beside a fresh `home/`.
    pub fn new() -> std::io::Result<Self> {
        let root = tempfile::Builder::new().prefix("decode-test-").tempdir()?;
        let project = root.path().join("proj");
        let home = root.path().join("home");
        std::fs::create_dir_all(&project)?;
        for d in [".config", ".local/share", ".local/state", ".cache", "run"] {
            std::fs::create_dir_all(home.join(d))?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(home.join("run"), std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(Self {
            _root: root,
            project: project.canonicalize()?,
            home: home.canonicalize()?,
        })
    }

    /// Where a Decode process under test reads the managed settings from (beside
    /// the project and home; absent until a test writes it).
    pub fn managed_settings(&self) -> PathBuf {
        self.project
            .parent()
            .unwrap_or(&self.project)
            .join("managed-settings.json")
    }

    /// The project folder.
    pub fn path(&self) -> &Path {
        &self.project
    }

    /// Writes a file under the project, creating parent folders.
    pub fn write(&self, rel: &str, content: &str) -> std::io::Result<PathBuf> {
        let path = self.project.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
        Ok(path)
    }

    /// A project file's text, if it exists.
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.project.join(rel)).ok()
    }

    /// The environment a Decode process under test gets: everything under the temp home.
    pub fn env(&self) -> Vec<(String, String)> {
        let h = |p: &str| self.home.join(p).display().to_string();
        vec![
            ("HOME".into(), self.home.display().to_string()),
            ("XDG_CONFIG_HOME".into(), h(".config")),
            ("XDG_DATA_HOME".into(), h(".local/share")),
            ("XDG_STATE_HOME".into(), h(".local/state")),
            ("XDG_CACHE_HOME".into(), h(".cache")),
            ("XDG_RUNTIME_DIR".into(), h("run")),
            // The managed settings of this test only (absent unless a test writes
            // it), never the machine's `/etc/decode`.
            (
                "DECODE_MANAGED_SETTINGS".into(),
                self.managed_settings().display().to_string(),
            ),
            // A session bus of its own, there only when a test starts one: one
            // test's app never meets another's, and without one there is no keyring.
            (
                "DBUS_SESSION_BUS_ADDRESS".into(),
                format!("unix:path={}", h("run/bus")),
            ),
        ]
    }

    /// `program` run in the project folder with only `PATH` and [`Self::env`]
    /// (no API-key variables, no terminal on stdin).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env())
            .stdin(Stdio::null());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_is_isolated_and_removed_with_the_project() {
        let t = TempProject::new().unwrap();
        let root = t.project.parent().unwrap().to_path_buf();
        assert_eq!(t.home.parent(), Some(root.as_path()));
        let written = t.write("a/b.txt", "x").unwrap();
        assert_eq!(t.read("a/b.txt").as_deref(), Some("x"));
        assert!(written.starts_with(&t.project));
        let out = t
            .command("sh")
            .args(["-c", "echo $HOME $XDG_CONFIG_HOME $ANTHROPIC_API_KEY; pwd"])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let home = t.home.display().to_string();
        assert_eq!(
            text,
            format!("{home} {home}/.config\n{}\n", t.project.display())
        );
        drop(t);
        assert!(!root.exists());
    }
}
