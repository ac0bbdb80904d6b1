//! The regular wrappers and runners, as a table: a name (and the sub-command
//! words that make it a runner, `uv run`), the options that take a value, those
//! known to take none, the positional words before the command it runs, and
//! whether it runs that command in another folder ([`Moves`]). The options are
//! read by the one scanner in `options.rs`. Each row carries an example that a
//! test checks. Wrappers with irregular rules
//! (`flock`, `xargs`, `find`, `sudo`, `env`, `time`, package managers…) stay as
//! code in `wrappers.rs`.

use super::runners;
use super::words::Word;
use super::wrappers::{Analysis, Derived, Workdir};
use super::Role;
use crate::options::{self, OptionSpec};

/// One wrapper or runner the gate sees through.
#[derive(Debug)]
pub(super) struct WrapperSpec {
    /// The program names this row is for.
    pub names: &'static [&'static str],
    /// Words that must follow the name (`run` in `uv run`).
    pub sub: &'static [&'static str],
    /// Short options that take a value (attached or the next word).
    pub short_value: &'static str,
    /// Long options that take a value (`--opt=v` or `--opt v`).
    pub long_value: &'static [&'static str],
    /// Options known to take no value. Any other option may take one, so the
    /// word after it is judged as a possible start of the command too (fail
    /// closed: an option the gate does not know never hides a command).
    pub flags: &'static [&'static str],
    /// Words between the options and the command (`timeout 30`, `chrt 10`).
    pub positionals: usize,
    /// Whether the command runs in another folder.
    pub moves: Moves,
    /// A command line using it, and the command it runs (checked by this
    /// module's test; the table is its documentation).
    #[cfg_attr(not(test), allow(dead_code))]
    pub example: (&'static str, &'static str),
}

/// Where a wrapper runs its command.
#[derive(Debug, Clone, Copy)]
pub(super) enum Moves {
    /// In the wrapper's own folder, unless an option the gate does not know
    /// names a folder or a root (`--private-cwd=…`, `--root …`): then where
    /// is not known.
    Here,
    /// In the value of one of these options (`uv run --directory DIR`).
    To(&'static [&'static str]),
    /// As [`Moves::To`], and somewhere the gate cannot place when one of the
    /// second options gives it a new root (`unshare -R DIR`).
    ToOrRoot(&'static [&'static str], &'static [&'static str]),
    /// Somewhere the gate cannot place: a new root or namespaces (`chroot`,
    /// `nsenter`).
    Unknown,
    /// A service manager's unit (`systemd-run`): in `/` or the user's home,
    /// unless it keeps the folder (`--same-dir`, `--scope`) or names one
    /// (`--working-directory DIR`).
    Service,
}

impl WrapperSpec {
    /// Whether this row is for `words[i..]` run as `name`.
    pub(super) fn matches(&self, name: &str, words: &[Word], i: usize) -> bool {
        self.names.contains(&name)
            && self
                .sub
                .iter()
                .enumerate()
                .all(|(k, s)| words.get(i + 1 + k).is_some_and(|w| w.text == *s))
    }

    /// How its options read.
    pub(super) fn options(&self) -> OptionSpec<'static> {
        OptionSpec {
            short_value: self.short_value,
            value: self.long_value,
            flags: self.flags,
            ..OptionSpec::default()
        }
    }

    /// Where the command it runs starts (`None`: it runs none the gate can place).
    pub(super) fn start(&self, words: &[Word], i: usize, a: &mut Analysis) -> Option<usize> {
        let from = i + 1 + self.sub.len();
        let spec = self.options();
        let at = runners::runner_start(words, from, &spec, a)?;
        let given = &words[from..at];
        let known: &[&str] = match self.moves {
            Moves::Here => &[],
            Moves::To(options) => options,
            Moves::ToOrRoot(options, roots) => {
                if !options::values(given, &spec, roots).is_empty() {
                    a.move_to(Workdir::Unknown);
                }
                options
            }
            Moves::Unknown => {
                a.move_to(Workdir::Unknown);
                &[]
            }
            Moves::Service => {
                let keeps = options::flagged(given, &spec, &["-d", "--same-dir", "--scope"]);
                let named = !options::values(given, &spec, &["--working-directory"]).is_empty();
                let properties = options::values(given, &spec, &["-p", "--property"]);
                let property = properties
                    .iter()
                    .any(|v| v.text.to_ascii_lowercase().starts_with("workingdirectory"));
                for v in &properties {
                    if !v.text.to_ascii_lowercase().starts_with("exec") {
                        continue;
                    }
                    // `-p ExecStartPre=…` runs a command of its own (its prefixes
                    // `-`, `@`, `+`, `!`, `:` say how).
                    a.dynamic = Some("`systemd-run -p Exec…=` runs a command of its own".into());
                    if let Some((_, cmd)) = v.text.split_once('=') {
                        let cmd = cmd.trim_start_matches(['-', '@', '+', '!', ':']);
                        a.derived
                            .push(Derived::Source(cmd.to_string(), Role::Checked));
                    }
                }
                if property || (!keeps && !named) {
                    a.move_to(Workdir::Unknown);
                }
                &["--working-directory"]
            }
        };
        for v in options::values(given, &spec, known) {
            a.move_to(Workdir::At(v.text));
        }
        let names_a_folder = given.iter().any(|w| {
            let name = w.text.split('=').next().unwrap_or("");
            name.starts_with("--")
                && !known.contains(&name)
                && !self.flags.contains(&name)
                && ["dir", "cwd", "wd", "root"]
                    .iter()
                    .any(|d| name.contains(d))
        });
        if names_a_folder {
            a.move_to(Workdir::Unknown);
        }
        if self.positionals == 0 {
            return Some(at);
        }
        let at = at + self.positionals;
        (at < words.len()).then_some(at)
    }
}

const UV_RUN_VALUE: &[&str] = &[
    "--with",
    "--python",
    "--package",
    "--directory",
    "--project",
    "--env-file",
    "--group",
    "--extra",
    "--index",
    "--index-url",
];
const UV_RUN_FLAGS: &[&str] = &[
    "--no-sync",
    "--frozen",
    "--locked",
    "--isolated",
    "--quiet",
    "-q",
    "--all-extras",
    "--no-project",
];
const UV_TOOL_VALUE: &[&str] = &[
    "--with",
    "--python",
    "--from",
    "--index",
    "--index-url",
    "--directory",
];
const UV_TOOL_FLAGS: &[&str] = &["--quiet", "-q", "--isolated"];
const TRACE_VALUE: &[&str] = &[
    "--output",
    "--attach",
    "--user",
    "--trace",
    "--signal",
    "--status",
    "--string-limit",
    "--env",
    "--expr",
    "--trace-path",
    "--columns",
    "--align",
    "--library",
    "--config",
    "--indent",
    "--depth",
];

/// Every regular wrapper and runner.
pub(super) const WRAPPERS: &[WrapperSpec] = &[
    // Runners of language tools.
    WrapperSpec {
        names: &["uv"],
        sub: &["run"],
        short_value: "p",
        long_value: UV_RUN_VALUE,
        flags: UV_RUN_FLAGS,
        positionals: 0,
        moves: Moves::To(&["--directory"]),
        example: ("uv run --with rich -q pytest -x", "pytest -x"),
    },
    WrapperSpec {
        names: &["uv"],
        sub: &["tool", "run"],
        short_value: "p",
        long_value: UV_TOOL_VALUE,
        flags: UV_TOOL_FLAGS,
        positionals: 0,
        moves: Moves::To(&["--directory"]),
        example: ("uv tool run --from ruff ruff check", "ruff check"),
    },
    WrapperSpec {
        names: &["uvx"],
        sub: &[],
        short_value: "p",
        long_value: UV_TOOL_VALUE,
        flags: UV_TOOL_FLAGS,
        positionals: 0,
        moves: Moves::To(&["--directory"]),
        example: ("uvx -p 3.12 black .", "black ."),
    },
    WrapperSpec {
        names: &["pipx"],
        sub: &["run"],
        short_value: "",
        long_value: &["--spec", "--python", "--pip-args", "--index-url"],
        flags: &["--no-cache", "--verbose", "--quiet"],
        positionals: 0,
        moves: Moves::Here,
        example: ("pipx run --spec black==24 black src", "black src"),
    },
    WrapperSpec {
        names: &["poetry", "pdm", "hatch", "rye", "pipenv"],
        sub: &["run"],
        short_value: "",
        long_value: &["--directory", "-C"],
        flags: &[],
        positionals: 0,
        moves: Moves::To(&["--directory", "-C"]),
        example: ("poetry run --directory app pytest", "pytest"),
    },
    WrapperSpec {
        names: &["conda", "mamba", "micromamba"],
        sub: &["run"],
        short_value: "np",
        long_value: &["--name", "--prefix", "--cwd"],
        flags: &["--no-capture-output", "--live-stream"],
        positionals: 0,
        moves: Moves::To(&["--cwd"]),
        example: ("conda run -n base --live-stream python -V", "python -V"),
    },
    // Runners of the system: sandboxes, namespaces, sessions, displays.
    WrapperSpec {
        names: &["caffeinate"],
        sub: &[],
        short_value: "tw",
        long_value: &[],
        flags: &["-d", "-i", "-m", "-s", "-u"],
        positionals: 0,
        moves: Moves::Here,
        example: ("caffeinate -i -t 60 make", "make"),
    },
    WrapperSpec {
        names: &["podman", "buildah"],
        sub: &["unshare"],
        short_value: "",
        long_value: &[],
        flags: &["--rootless-netns", "--rootless-cni"],
        positionals: 0,
        moves: Moves::Here,
        example: (
            "podman unshare cat /proc/self/uid_map",
            "cat /proc/self/uid_map",
        ),
    },
    WrapperSpec {
        names: &["setpriv"],
        sub: &[],
        short_value: "",
        long_value: &[
            "--reuid",
            "--regid",
            "--ruid",
            "--rgid",
            "--euid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
            "--ptracer",
        ],
        flags: &[
            "-d",
            "--dump",
            "--nnp",
            "--no-new-privs",
            "--init-groups",
            "--keep-groups",
            "--clear-groups",
            "--reset-env",
        ],
        positionals: 0,
        moves: Moves::Here,
        example: ("setpriv --reuid 1000 --init-groups make", "make"),
    },
    WrapperSpec {
        names: &["chroot"],
        sub: &[],
        short_value: "",
        long_value: &["--userspec", "--groups"],
        flags: &[],
        positionals: 1,
        moves: Moves::Unknown,
        example: ("chroot /srv/root ls -l", "ls -l"),
    },
    WrapperSpec {
        names: &["unshare"],
        sub: &[],
        short_value: "SGRw",
        long_value: &["--setuid", "--setgid", "--root", "--wd"],
        flags: &[
            "-m",
            "-u",
            "-i",
            "-n",
            "-p",
            "-U",
            "-C",
            "-T",
            "-f",
            "-r",
            "--fork",
            "--mount",
            "--user",
            "--pid",
            "--net",
            "--map-root-user",
        ],
        positionals: 0,
        moves: Moves::ToOrRoot(&["-w", "--wd"], &["-R", "--root"]),
        example: ("unshare -r -n --wd /tmp id -u", "id -u"),
    },
    WrapperSpec {
        names: &["nsenter"],
        sub: &[],
        // `-r`/`-w` (`--root`, `--wd`) take a value only when attached.
        short_value: "tSG",
        long_value: &["--target", "--setuid", "--setgid"],
        flags: &[
            "-a", "-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "-F", "-r", "-w", "--all",
            "--root", "--wd",
        ],
        positionals: 0,
        moves: Moves::Unknown,
        example: ("nsenter -t 1 -m ip addr", "ip addr"),
    },
    WrapperSpec {
        names: &["firejail", "valgrind"],
        sub: &[],
        short_value: "",
        long_value: &[],
        flags: &["-q", "--quiet", "-v"],
        positionals: 0,
        moves: Moves::Here,
        example: ("valgrind -q node app.js", "node app.js"),
    },
    WrapperSpec {
        names: &["systemd-run"],
        sub: &[],
        short_value: "puEM",
        long_value: &[
            "--property",
            "--unit",
            "--setenv",
            "--machine",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
        ],
        flags: &[
            "--user",
            "--scope",
            "--wait",
            "--pty",
            "-t",
            "-q",
            "--quiet",
            "-G",
            "--collect",
            "--same-dir",
            "-d",
        ],
        positionals: 0,
        moves: Moves::Service,
        example: (
            "systemd-run --user --scope -p MemoryMax=1G make -j2",
            "make -j2",
        ),
    },
    WrapperSpec {
        names: &["xvfb-run"],
        sub: &[],
        short_value: "nsfepw",
        long_value: &[
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
            "--xauth-protocol",
            "--wait",
        ],
        flags: &["-a", "--auto-servernum"],
        positionals: 0,
        moves: Moves::Here,
        example: ("xvfb-run -a -s -ac cargo test", "cargo test"),
    },
    WrapperSpec {
        names: &["dbus-run-session"],
        sub: &[],
        short_value: "",
        long_value: &["--config-file", "--dbus-daemon"],
        flags: &[],
        positionals: 0,
        moves: Moves::Here,
        example: (
            "dbus-run-session -- gnome-keyring-daemon --unlock",
            "gnome-keyring-daemon --unlock",
        ),
    },
    // Wrappers: every option is skipped; the command follows.
    WrapperSpec {
        names: &["command"],
        sub: &[],
        short_value: "",
        long_value: &[],
        flags: &["-p", "-v", "-V"],
        positionals: 0,
        moves: Moves::Here,
        example: ("command -p ls -a", "ls -a"),
    },
    WrapperSpec {
        names: &["builtin", "busybox"],
        sub: &[],
        short_value: "",
        long_value: &[],
        flags: &[],
        positionals: 0,
        moves: Moves::Here,
        example: ("busybox rm -f x", "rm -f x"),
    },
    WrapperSpec {
        names: &["exec"],
        sub: &[],
        short_value: "a",
        long_value: &[],
        flags: &["-c", "-l"],
        positionals: 0,
        moves: Moves::Here,
        example: ("exec -a name cat notes.txt", "cat notes.txt"),
    },
    WrapperSpec {
        names: &["nohup", "setsid", "unbuffer"],
        sub: &[],
        short_value: "",
        long_value: &[],
        flags: &["-c", "-f", "-w", "-p", "--ctty", "--fork", "--wait"],
        positionals: 0,
        moves: Moves::Here,
        example: ("setsid -f npm start", "npm start"),
    },
    WrapperSpec {
        names: &["nice"],
        sub: &[],
        short_value: "n",
        long_value: &["--adjustment"],
        flags: &[],
        positionals: 0,
        moves: Moves::Here,
        example: ("nice -n 5 make", "make"),
    },
    WrapperSpec {
        names: &["timeout"],
        sub: &[],
        short_value: "sk",
        long_value: &["--signal", "--kill-after"],
        flags: &[
            "-f",
            "-p",
            "-v",
            "--foreground",
            "--preserve-status",
            "--verbose",
        ],
        positionals: 1,
        moves: Moves::Here,
        example: ("timeout -s KILL 30 npm test", "npm test"),
    },
    WrapperSpec {
        names: &["stdbuf"],
        sub: &[],
        short_value: "ioe",
        long_value: &["--input", "--output", "--error"],
        flags: &[],
        positionals: 0,
        moves: Moves::Here,
        example: ("stdbuf -o L grep x log.txt", "grep x log.txt"),
    },
    WrapperSpec {
        names: &["ionice"],
        sub: &[],
        short_value: "cnPpu",
        long_value: &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        flags: &["-t", "--ignore"],
        positionals: 0,
        moves: Moves::Here,
        example: ("ionice -c 3 rsync -a a/ b/", "rsync -a a/ b/"),
    },
    WrapperSpec {
        names: &["taskset"],
        sub: &[],
        short_value: "",
        long_value: &[],
        flags: &["-a", "-c", "-p", "--all-tasks", "--cpu-list", "--pid"],
        positionals: 1,
        moves: Moves::Here,
        example: ("taskset -c 0-1 make -j2", "make -j2"),
    },
    WrapperSpec {
        names: &["chrt"],
        sub: &[],
        short_value: "TPD",
        long_value: &["--sched-runtime", "--sched-period", "--sched-deadline"],
        flags: &[
            "-a",
            "-b",
            "-d",
            "-e",
            "-f",
            "-i",
            "-o",
            "-r",
            "-R",
            "-m",
            "-p",
            "-v",
            "--all-tasks",
            "--batch",
            "--deadline",
            "--ext",
            "--fifo",
            "--idle",
            "--other",
            "--rr",
            "--reset-on-fork",
            "--max",
            "--pid",
            "--verbose",
        ],
        positionals: 1,
        moves: Moves::Here,
        example: ("chrt -f 10 make bench", "make bench"),
    },
    WrapperSpec {
        names: &["strace"],
        sub: &[],
        short_value: "abeEIoOpPsSuXU",
        long_value: TRACE_VALUE,
        flags: &[
            "-f",
            "-F",
            "-c",
            "-C",
            "-q",
            "-v",
            "-y",
            "-Y",
            "-T",
            "-t",
            "-r",
            "-x",
            "-n",
            "-k",
            "-i",
            "-w",
            "-z",
            "-Z",
            "-d",
            "-D",
            "-h",
            "-V",
            "--follow-forks",
            "--output-separately",
            "--summary-only",
            "--summary",
            "--summary-wall-clock",
            "--syscall-times",
            "--relative-timestamps",
            "--instruction-pointer",
            "--stack-trace",
            "--no-abbrev",
            "--successful-only",
            "--failed-only",
            "--daemonize",
            "--seccomp-bpf",
            "--debug",
            "--help",
            "--version",
        ],
        positionals: 0,
        moves: Moves::Here,
        example: ("strace -f -o trace.txt node app.js", "node app.js"),
    },
    WrapperSpec {
        names: &["ltrace"],
        sub: &[],
        short_value: "aADeFlnopsuwx",
        long_value: TRACE_VALUE,
        flags: &[
            "-L",
            "-f",
            "-S",
            "-C",
            "-i",
            "-c",
            "-r",
            "-t",
            "-T",
            "-b",
            "-h",
            "-V",
            "--demangle",
            "--no-signals",
            "--help",
            "--version",
        ],
        positionals: 0,
        moves: Moves::Here,
        example: ("ltrace -e malloc ls -l", "ls -l"),
    },
];

#[cfg(test)]
mod tests {
    use super::super::wrappers::analyse;
    use super::super::{Role, ShellConfig};
    use super::*;

    #[test]
    fn every_row_sees_through_to_its_example_command() {
        for spec in WRAPPERS {
            let (line, runs) = spec.example;
            let words: Vec<Word> = line.split(' ').map(Word::raw).collect();
            let a = analyse(&[], &words, &[], Role::Full, &ShellConfig::default());
            assert_eq!(a.core.join(" "), runs, "{line}");
            assert!(a.dynamic.is_none(), "{line}: {:?}", a.dynamic);
            assert!(
                spec.names.contains(&a.chain[0].as_str()),
                "{line}: the chain starts with {:?}",
                a.chain
            );
        }
    }

    #[test]
    fn names_are_not_listed_twice_for_the_same_sub_command() {
        for (k, a) in WRAPPERS.iter().enumerate() {
            for b in &WRAPPERS[k + 1..] {
                let shared = a.names.iter().any(|n| b.names.contains(n));
                assert!(
                    !(shared && a.sub == b.sub),
                    "{:?} and {:?}",
                    a.names,
                    b.names
                );
            }
        }
    }
}
