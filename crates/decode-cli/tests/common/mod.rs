//! The `decode` binary run as a user runs it, for the CLI test files: a temp project
//! beside an isolated home, XDG folders inside it, a cleared environment (no API-key
//! variables, no D-Bus session, so no keyring), and no terminal on stdin.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use decode_test_support::TempProject;

pub(crate) struct Env {
    tmp: TempProject,
    pub(crate) home: PathBuf,
    pub(crate) project: PathBuf,
}

impl Env {
    pub(crate) fn new() -> Env {
        let tmp = TempProject::new().expect("temp project");
        Env {
            home: tmp.home.clone(),
            project: tmp.project.clone(),
            tmp,
        }
    }

    /// Writes a project file, creating its folders; returns its path.
    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        self.tmp.write(rel, text).expect("write")
    }

    /// Writes a file under the isolated home, creating its folders.
    #[allow(dead_code)]
    pub(crate) fn write_home(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.home.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        p
    }

    /// Writes the managed settings file this test's Decode reads.
    #[allow(dead_code)]
    pub(crate) fn write_managed(&self, text: &str) -> PathBuf {
        let p = self.tmp.managed_settings();
        std::fs::write(&p, text).expect("write");
        p
    }

    /// A project file's text, if it exists.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        self.tmp.read(rel)
    }

    /// `decode ARGS` in the project folder with the isolated environment.
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.tmp.command(env!("CARGO_BIN_EXE_decode"));
        c.args(args);
        c
    }

    /// Another program run like `decode` is: in the project folder, with the
    /// isolated home and environment.
    #[allow(dead_code)]
    pub(crate) fn program(&self, program: &std::path::Path) -> Command {
        self.tmp.command(program)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run decode")
    }

    /// Runs with `stdin` piped in.
    pub(crate) fn run_stdin(&self, args: &[&str], stdin: &str) -> Output {
        self.run_bytes(args, stdin.as_bytes())
    }

    /// Runs with `stdin` written from another thread (the output is read
    /// meanwhile, so a large exchange never fills both pipes).
    pub(crate) fn run_bytes(&self, args: &[&str], stdin: &[u8]) -> Output {
        use std::io::Write;
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn decode");
        let mut input = child.stdin.take().expect("stdin");
        let bytes = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&bytes);
        });
        let out = child.wait_with_output().expect("wait");
        let _ = writer.join();
        out
    }
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The non-empty stderr lines.
pub(crate) fn stderr_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Stdout parsed as one JSON value.
pub(crate) fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(stdout(o).trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}
