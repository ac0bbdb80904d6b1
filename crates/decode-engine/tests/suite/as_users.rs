//! Running a test again in a child process of this test binary, with an
//! environment of its own — as this user, and, when this user is root, as an
//! unprivileged one too (several bounds behave differently for root: it owns `/etc`
//! and every folder, and the sandbox must hold for both).
//!
//! A test `foo` that needs this is written as `inner_foo` (ignored, so a plain run
//! skips it: it only means something in the environment the outer test gives it)
//! and `foo`, which calls [`in_child`]. The child process is Decode: the servers a
//! test starts there (a display, a bus, an agent) are the person's, outside the
//! sandbox.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the environment of a child run by [`in_child`].
pub(crate) const INNER: &str = "DECODE_SANDBOX_TEST_INNER";

/// The unprivileged user a root run also tests as (`nobody`).
const UNPRIVILEGED: u32 = 65534;

/// Whether this process is a child run by [`in_child`] (an inner test run any
/// other way does nothing: it only means something in its outer test's
/// environment).
pub(crate) fn inner() -> bool {
    std::env::var_os(INNER).is_some()
}

/// A folder a child running as `uid` owns (mode 0700).
fn private_dir(uid: u32, keep: &mut Vec<tempfile::TempDir>) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::Builder::new()
        .prefix("decode-child-")
        .tempdir()
        .unwrap();
    let p = d.path().canonicalize().unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
    if uid != nix::unistd::geteuid().as_raw() {
        nix::unistd::chown(&p, Some(uid.into()), Some(uid.into())).unwrap();
    }
    keep.push(d);
    p
}

/// This test binary as a user `uid` can run it: the binary itself when that user
/// can reach it, else a copy in a temp folder.
fn binary_for(uid: u32, keep: &mut Vec<tempfile::TempDir>) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    if uid == nix::unistd::geteuid().as_raw() {
        return exe;
    }
    let reachable = Command::new("setpriv")
        .args(ids(uid))
        .arg("--")
        .arg("/usr/bin/test")
        .arg("-x")
        .arg(&exe)
        .status()
        .is_ok_and(|s| s.success());
    if reachable {
        return exe;
    }
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::Builder::new()
        .prefix("decode-child-bin-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = d.path().join("tests");
    std::fs::copy(&exe, &copy).unwrap();
    keep.push(d);
    copy
}

fn ids(uid: u32) -> Vec<String> {
    vec![
        format!("--reuid={uid}"),
        format!("--regid={uid}"),
        "--clear-groups".into(),
    ]
}

/// Runs the ignored test `name` (a path such as `suite::sandbox_bounds::inner_x`) in
/// a child process of this binary, as this user and, when this user is root, as an
/// unprivileged one: each with a home and a runtime folder of its own, `PATH`, and
/// `env`. Fails when a run fails, with its output.
pub(crate) fn in_child(name: &str, env: &[(&str, &str)]) {
    let me = nix::unistd::geteuid().as_raw();
    let mut users = vec![me];
    if me == 0 {
        users.push(UNPRIVILEGED);
        if Command::new("setpriv").arg("--help").output().is_err() {
            panic!("running as root, this test needs `setpriv` (util-linux) to test as an unprivileged user too");
        }
    }
    for uid in users {
        let mut keep = Vec::new();
        let home = private_dir(uid, &mut keep);
        let runtime = private_dir(uid, &mut keep);
        let exe = binary_for(uid, &mut keep);
        let path = if uid == me {
            std::env::var("PATH").unwrap_or_default()
        } else {
            "/usr/local/bin:/usr/bin:/bin".to_string()
        };
        let mut cmd = if uid == me {
            Command::new(&exe)
        } else {
            let mut c = Command::new("setpriv");
            c.args(ids(uid)).arg("--").arg(&exe);
            c
        };
        cmd.args([
            "--exact",
            name,
            "--include-ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env_clear()
        .env(INNER, "1")
        .env("PATH", path)
        // A login shell for programs that start one (tmux): `nobody`'s is
        // `nologin`.
        .env("SHELL", "/bin/sh")
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RUST_BACKTRACE", "1")
        .current_dir(std::env::temp_dir());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{name} as uid {uid} failed:\n{text}"
        );
    }
}

/// A path under `dir` that does not exist yet.
pub(crate) fn fresh(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}
