//! A temporary project folder plus an isolated home and XDG folders, so a test never
//! reads or writes the developer's real settings, trust store or logs.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

pub struct TempProject {
    _root: TempDir,
    pub project: PathBuf,
    pub home: PathBuf,
}

impl TempProject {
    /// An empty project `proj/` beside a fresh `home/`.
    pub fn new() -> std::io::Result<Self> {
        let root = tempfile::Builder::new().prefix("decode-test-").tempdir()?;
        let project = root.path().join("proj");
        let home = root.path().join("home");
        std::fs::create_dir_all(&project)?;
        std::fs::create_dir_all(home.join(".config"))?;
        std::fs::create_dir_all(home.join(".local/share"))?;
        std::fs::create_dir_all(home.join(".local/state"))?;
        std::fs::create_dir_all(home.join(".cache"))?;
        std::fs::create_dir_all(home.join("run"))?;
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

    /// Writes a file under the project, creating parent folders.
    pub fn write(&self, rel: &str, content: &str) -> std::io::Result<PathBuf> {
        let path = self.project.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
        Ok(path)
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
            // A session bus of its own (there only when a test starts one, see
            // `desktop::SessionBus`): one test's app never meets another's.
            (
                "DBUS_SESSION_BUS_ADDRESS".into(),
                format!("unix:path={}", h("run/bus")),
            ),
        ]
    }

    pub fn path(&self) -> &Path {
        &self.project
    }
}

/// The cargo target folder holding this test binary (`target/<profile>/deps/<exe>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .expect("test executable lives in target/<profile>/deps")
}

/// The `decode` binary built next to this test binary (same profile).
pub fn decode_bin() -> PathBuf {
    if let Ok(p) = std::env::var("DECODE_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join("decode"))
        .expect("test executable lives in target/<profile>/deps")
}
