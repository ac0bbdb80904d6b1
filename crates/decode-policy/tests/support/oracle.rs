//! The bash oracle: runs a command with the real `bash` where nothing else can
//! run, and records every program bash tried to start, with its arguments.
//!
//! The sandbox (bubblewrap) holds only bash and its libraries, `PATH` names a
//! folder that does not exist, and HOME and the working folder are empty
//! throwaway folders, so no command the input names can do anything. Three
//! recorders write to one log per process (so a pipeline never interleaves):
//! - `command_not_found_handle` sees every command bash looked up on `PATH`
//!   (all of them: nothing is found), with its expanded arguments; for
//!   `sh|bash… -c STRING` it runs STRING with the real bash too;
//! - a tiny `LD_PRELOAD` shim sees every `execve` (commands named by a path);
//! - a `DEBUG` trap sees the builtins that run code (`eval`, `source`, `.`,
//!   `trap`, `alias`, `exec`, `command`, `builtin`).
//!
//! Used by the oracle tests and the `oracle` fuzz target: every command bash
//! tried must be among the gate's fragments, or the gate must call the
//! command opaque.

#![allow(dead_code, clippy::print_stderr)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One thing bash tried to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record {
    /// A command looked up on `PATH`: its words.
    Lookup(Vec<String>),
    /// An `execve`: the path and the words.
    Exec(String, Vec<String>),
    /// A builtin that runs code, as bash's `BASH_COMMAND` shows it (unexpanded).
    Builtin(String),
}

impl Record {
    /// The words to compare with the gate's fragments (the program by its
    /// base name), or `None` for a builtin.
    pub(crate) fn words(&self) -> Option<Vec<String>> {
        match self {
            Record::Lookup(w) => Some(w.clone()),
            Record::Exec(path, w) => {
                let mut w = w.clone();
                // The gate's base name: the text after the last `/`, unless
                // that is empty (`dir/` stays as written).
                let name = match path.rfind('/') {
                    Some(i) if i + 1 < path.len() => path[i + 1..].to_string(),
                    _ => path.clone(),
                };
                if w.is_empty() {
                    w.push(name);
                } else {
                    w[0] = name;
                }
                Some(w)
            }
            Record::Builtin(_) => None,
        }
    }
}

/// What one run recorded.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    pub records: Vec<Record>,
    pub timed_out: bool,
}

const PRELUDE: &str = r#"
command_not_found_handle() {
  local __oracle_in=1
  printf '%s\0' "X$#" "$@" >> "/log/rec.$BASHPID"
  case "$1" in
    sh|bash|dash|ksh|zsh|mksh|ash)
      if [ "$2" = -c ] && [ $# -ge 3 ]; then (exec -a __oracle_sh /usr/bin/bash -c "$3"); fi ;;
  esac
  return 127
}
__oracle_dbg() {
  [ -n "${__oracle_in:-}" ] && return 0
  case "$BASH_COMMAND" in
    eval|eval\ *|source\ *|.\ *|trap\ *|alias\ *|exec\ *|command\ *|builtin\ *)
      printf '%s\0' B1 "$BASH_COMMAND" >> "/log/rec.$BASHPID" ;;
  esac
}
set -T
trap __oracle_dbg DEBUG
"#;

const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void put(int fd, const char *s) { if (write(fd, s, strlen(s) + 1) < 0) {} }
int execve(const char *path, char *const argv[], char *const envp[]) {
  static int (*real)(const char *, char *const[], char *const[]);
  if (!real) real = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
  /* One log per process: writes of processes running side by side
     (a pipeline) never interleave. */
  char name[64];
  snprintf(name, sizeof name, "/log/rec.%d", (int)getpid());
  int fd = open(name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) {
    int n = 0;
    while (argv && argv[n]) n++;
    char head[32];
    snprintf(head, sizeof head, "E%d", n + 1);
    put(fd, head);
    put(fd, path);
    for (int i = 0; i < n; i++) put(fd, argv[i]);
    close(fd);
  }
  return real(path, argv, envp);
}
"#;

/// A prepared sandbox; cheap to run many commands in.
pub(crate) struct Oracle {
    dir: tempfile::TempDir,
    bash: PathBuf,
    libs: Vec<PathBuf>,
    shim: bool,
}

impl Oracle {
    /// `None` when this machine lacks bubblewrap, bash or user namespaces
    /// (the reason is printed).
    pub(crate) fn new() -> Option<Oracle> {
        let required = std::env::var_os("DECODE_REQUIRE_ORACLE").is_some();
        let bash = std::fs::canonicalize("/bin/bash").ok();
        assert!(bash.is_some() || !required, "oracle: no /bin/bash");
        let bash = bash?;
        let ldd = Command::new("ldd").arg(&bash).output().ok()?;
        let libs: Vec<PathBuf> = String::from_utf8_lossy(&ldd.stdout)
            .split_whitespace()
            .filter(|w| w.starts_with('/'))
            .map(PathBuf::from)
            .collect();
        let dir = tempfile::tempdir().ok()?;
        std::fs::create_dir_all(dir.path().join("o")).ok()?;
        std::fs::write(dir.path().join("o/prelude.sh"), PRELUDE).ok()?;
        std::fs::write(dir.path().join("shim.c"), SHIM).ok()?;
        let shim = Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(dir.path().join("o/shim.so"))
            .arg(dir.path().join("shim.c"))
            .arg("-ldl")
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !shim {
            eprintln!("oracle: no C compiler: commands named by a path are not recorded");
        }
        let o = Oracle {
            dir,
            bash,
            libs,
            shim,
        };
        let probe = o.run("oracle_probe x");
        if probe.records != [Record::Lookup(vec!["oracle_probe".into(), "x".into()])] {
            // The project's test command sets DECODE_REQUIRE_ORACLE: there a
            // missing sandbox is a failure, not a skip.
            assert!(
                std::env::var_os("DECODE_REQUIRE_ORACLE").is_none(),
                "oracle: bubblewrap cannot run bash here ({probe:?})"
            );
            eprintln!("oracle: bubblewrap cannot run bash here ({probe:?}); skipped");
            return None;
        }
        Some(o)
    }

    /// Runs `command` with the real bash in the sandbox (at most 3 s).
    pub(crate) fn run(&self, command: &str) -> Run {
        let log = tempfile::tempdir_in(self.dir.path()).expect("log dir");
        let mut cmd = Command::new("bwrap");
        cmd.args([
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv",
            "PATH",
            "/nonexistent",
            "--setenv",
            "HOME",
            "/h",
            "--setenv",
            "BASH_ENV",
            "/o/prelude.sh",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--dir",
            "/h",
            // The working folder is read-only: a command that creates a file
            // there (`>&sh`) would make its own globs expand differently from one
            // run to the next, which says nothing about the gate.
            "--tmpfs",
            "/w",
            "--remount-ro",
            "/w",
            "--chdir",
            "/w",
        ]);
        if self.shim {
            cmd.args(["--setenv", "LD_PRELOAD", "/o/shim.so"]);
        }
        cmd.arg("--ro-bind").arg(&self.bash).arg("/usr/bin/bash");
        cmd.arg("--ro-bind")
            .arg(self.dir.path().join("o"))
            .arg("/o");
        cmd.arg("--bind").arg(log.path()).arg("/log");
        for l in &self.libs {
            cmd.arg("--ro-bind").arg(l).arg(l);
        }
        cmd.args(["/usr/bin/bash", "-c", command])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut timed_out = false;
        if let Ok(mut child) = cmd.spawn() {
            let start = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if start.elapsed() > Duration::from_secs(3) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        timed_out = true;
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                    Err(_) => break,
                }
            }
        }
        let mut logs: Vec<PathBuf> = std::fs::read_dir(log.path())
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        logs.sort();
        let mut records = Vec::new();
        for l in logs {
            records.extend(parse_log(&std::fs::read(&l).unwrap_or_default()));
        }
        Run { records, timed_out }
    }
}

fn parse_log(bytes: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut fields = bytes
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    while let Some(head) = fields.next() {
        let Some(kind) = head.chars().next() else {
            continue;
        };
        let Ok(n) = head[1..].parse::<usize>() else {
            break;
        };
        let words: Vec<String> = fields.by_ref().take(n).collect();
        if words.len() < n {
            break;
        }
        match kind {
            'X' => out.push(Record::Lookup(words)),
            'E' if n >= 1 => {
                if words.get(1).map(String::as_str) == Some("__oracle_sh") {
                    continue;
                }
                out.push(Record::Exec(words[0].clone(), words[1..].to_vec()));
            }
            'B' if n == 1 => out.push(Record::Builtin(words[0].clone())),
            _ => {}
        }
    }
    out
}

/// Whether `pattern` (a glob over the words joined by spaces, `*` matching
/// anything) matches `text`.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let (mut star, mut mark) = (None, 0usize);
    while ti < t.len() {
        if pi < p.len() && p[pi] == '\\' && pi + 1 < p.len() && p[pi + 1] == t[ti] {
            pi += 2;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if pi < p.len() && p[pi] != '\\' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// What the gate missed: records of `run` that no fragment pattern matches
/// (`patterns` from `decode_policy::fragments`), and builtins named by no
/// fragment's command chain.
pub(crate) fn missed(run: &Run, patterns: &[String], names: &[String]) -> Vec<Record> {
    let mut out = Vec::new();
    for r in &run.records {
        match r.words() {
            Some(w) => {
                let text = w.join(" ");
                if !patterns.iter().any(|p| glob_match(p, &text)) {
                    out.push(r.clone());
                }
            }
            None => {
                let Record::Builtin(text) = r else { continue };
                // The oracle's own recorder (its prelude sets this trap; a bare
                // `time` lets the DEBUG trap see it).
                if text.contains("__oracle") {
                    continue;
                }
                let first = text.split_whitespace().next().unwrap_or("");
                if !names.iter().any(|n| n == first) {
                    out.push(r.clone());
                }
            }
        }
    }
    out
}

/// Writes a failing input where the fuzz target or a test can find it again.
pub(crate) fn save_case(dir: &Path, command: &str) {
    let _ = std::fs::create_dir_all(dir);
    let name = format!("case-{:016x}", fxhash(command));
    if let Ok(mut f) = std::fs::File::create(dir.join(name)) {
        let _ = f.write_all(command.as_bytes());
    }
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
