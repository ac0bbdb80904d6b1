//! Programs that run a command as another user, in another root or in new
//! namespaces (`sudo`, `su`, `chroot`, `unshare`, `systemd-run`). Each asks
//! every time when it raises privileges (docs/permissions.md, "The stages"),
//! and what it runs is seen through.

use super::schema::{Args, Ctx, Effect, Hooks, Moves, Node, Place, Program, Runs};
use super::support::{join, shell_stdin, value_word};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Workdir};
use crate::shell::words::Word;

const fn complete(
    short_value: &'static str,
    value: &'static [&'static str],
) -> OptionSpec<'static> {
    OptionSpec {
        short_value,
        glued: "",
        value,
        flags: &[],
        complete: true,
    }
}

const fn partial(
    short_value: &'static str,
    value: &'static [&'static str],
    flags: &'static [&'static str],
) -> OptionSpec<'static> {
    OptionSpec {
        short_value,
        glued: "",
        value,
        flags,
        complete: false,
    }
}

/// Runs its operands as a command (after `NAME=VALUE` words), as another user.
const fn privileged(options: OptionSpec<'static>, moves: Moves) -> Node {
    Node {
        options,
        effect: Effect::Privilege,
        runs: &[Runs::Command {
            skip: 0,
            assignments: true,
        }],
        moves,
        ..Node::NONE
    }
}

const fn entry(
    names: &'static [&'static str],
    node: Node,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node,
        subs: &[],
        args: Args::Read,
        generic_verbs: true,
        takes_command: true,
        canonical: None,
        toolchain: None,
        examples,
    }
}

/// util-linux su's options (runuser's add `-u USER`).
const SU: OptionSpec<'static> = complete(
    "csgGw",
    &[
        "--command",
        "--session-command",
        "--shell",
        "--group",
        "--supp-group",
        "--whitelist-environment",
    ],
);
const RUNUSER: OptionSpec<'static> = complete(
    "csgGwu",
    &[
        "--command",
        "--session-command",
        "--shell",
        "--group",
        "--supp-group",
        "--whitelist-environment",
        "--user",
    ],
);

const START_STOP: OptionSpec<'static> = OptionSpec {
    flags: &[
        "-S",
        "-K",
        "-T",
        "--start",
        "--stop",
        "--status",
        "-b",
        "--background",
        "-o",
        "--oknodo",
        "-q",
        "--quiet",
        "-v",
        "--verbose",
        "-t",
        "--test",
        "-m",
        "--make-pidfile",
        "-C",
        "--no-close",
        "--remove-pidfile",
    ],
    ..complete(
        "xanpudcgrNPIksRO",
        &[
            "--exec",
            "--startas",
            "--name",
            "--pidfile",
            "--user",
            "--chdir",
            "--chuid",
            "--group",
            "--chroot",
            "--nicelevel",
            "--procsched",
            "--iosched",
            "--umask",
            "--signal",
            "--retry",
            "--output",
            "--notify-timeout",
        ],
    )
};

pub(crate) const PROGRAMS: &[Program] = &[
    entry(
        &["sudo"],
        privileged(
            complete(
                "ugpCDrtTUR",
                &[
                    "--user",
                    "--group",
                    "--prompt",
                    "--close-from",
                    "--chdir",
                    "--role",
                    "--type",
                    "--command-timeout",
                    "--other-user",
                    "--chroot",
                    "--host",
                ],
            ),
            Moves {
                to: &["-D", "--chdir"],
                // A new root, or a login shell that starts in the user's home.
                lost: &["-R", "--chroot", "-i", "--login"],
                default: Place::Here,
            },
        ),
        &[
            (
                "sudo -u x rm -rf /",
                "runs `rm -rf /`; removes /; privilege",
            ),
            ("sudo -D /srv X=1 make", "runs `make`; cwd /srv; privilege"),
            ("sudo -i ls", "runs `ls`; cwd ?; privilege"),
        ],
    ),
    entry(
        &["doas"],
        privileged(complete("uC", &[]), Moves::HERE),
        &[("doas -u x make", "runs `make`; privilege")],
    ),
    entry(
        &["pkexec"],
        privileged(
            complete("", &["--user"]),
            Moves {
                to: &[],
                lost: &[],
                default: Place::LostUnless(&["--keep-cwd"]),
            },
        ),
        &[
            ("pkexec make", "runs `make`; cwd ?; privilege"),
            ("pkexec --keep-cwd make", "runs `make`; privilege"),
        ],
    ),
    entry(
        &["run0"],
        privileged(
            complete(
                "ugD",
                &[
                    "--user",
                    "--group",
                    "--chdir",
                    "--setenv",
                    "--property",
                    "--description",
                    "--slice",
                    "--unit",
                    "--machine",
                    "--nice",
                    "--background",
                ],
            ),
            Moves::to(&["-D", "--chdir"]),
        ),
        &[("run0 --chdir=/srv make", "runs `make`; cwd /srv; privilege")],
    ),
    Program {
        takes_command: false,
        ..entry(
            &["sudoedit"],
            Node {
                effect: Effect::Privilege,
                ..Node::NONE
            },
            &[("sudoedit /etc/hosts", "privilege")],
        )
    },
    entry(
        &["su"],
        Node {
            options: SU,
            effect: Effect::Privilege,
            hooks: Hooks {
                see: Some(su),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[
            ("su -c 'rm -rf /home'", "runs 'rm -rf /home'; privilege"),
            ("su - -c make", "runs 'make'; cwd ?; privilege"),
            (
                "su -s /bin/rm root -- -rf /",
                "runs `/bin/rm -rf /`; privilege",
            ),
        ],
    ),
    entry(
        &["runuser"],
        Node {
            options: RUNUSER,
            effect: Effect::Privilege,
            hooks: Hooks {
                see: Some(su),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[("runuser -u x make", "runs `make`; privilege")],
    ),
    entry(
        &["setpriv"],
        Node {
            effect: Effect::Privilege,
            ..Node::runs_command(
                partial(
                    "",
                    &[
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
                    &[
                        "-d",
                        "--dump",
                        "--nnp",
                        "--no-new-privs",
                        "--init-groups",
                        "--keep-groups",
                        "--clear-groups",
                        "--reset-env",
                    ],
                ),
                0,
            )
        },
        &[(
            "setpriv --reuid 1000 --init-groups make",
            "runs `make`; privilege",
        )],
    ),
    entry(
        &["sg"],
        Node {
            hooks: Hooks {
                see: Some(sg),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[("sg docker 'docker ps'", "runs 'docker ps'")],
    ),
    entry(
        &["chroot"],
        Node {
            runs: &[
                Runs::Command {
                    skip: 1,
                    assignments: false,
                },
                Runs::ShellWithout,
            ],
            moves: Moves {
                to: &[],
                lost: &[],
                default: Place::Lost,
            },
            ..Node {
                options: partial("", &["--userspec", "--groups"], &[]),
                ..Node::NONE
            }
        },
        &[("chroot /srv/root ls -l", "runs `ls -l`; cwd ?")],
    ),
    entry(
        &["unshare"],
        Node {
            runs: &[
                Runs::Command {
                    skip: 0,
                    assignments: false,
                },
                Runs::ShellWithout,
            ],
            moves: Moves {
                to: &["-w", "--wd"],
                lost: &["-R", "--root"],
                default: Place::Here,
            },
            ..Node {
                options: partial(
                    "SGRw",
                    &["--setuid", "--setgid", "--root", "--wd"],
                    &[
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
                ),
                ..Node::NONE
            }
        },
        &[("unshare -r -n --wd /tmp id -u", "runs `id -u`; cwd /tmp")],
    ),
    entry(
        &["nsenter"],
        Node {
            runs: &[
                Runs::Command {
                    skip: 0,
                    assignments: false,
                },
                Runs::ShellWithout,
            ],
            moves: Moves {
                to: &[],
                lost: &[],
                default: Place::Lost,
            },
            // `-r`/`-w` (`--root`, `--wd`) take a value only when attached.
            ..Node {
                options: partial(
                    "tSG",
                    &["--target", "--setuid", "--setgid"],
                    &[
                        "-a", "-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "-F", "-r", "-w",
                        "--all", "--root", "--wd",
                    ],
                ),
                ..Node::NONE
            }
        },
        &[("nsenter -t 1 -m ip addr", "runs `ip addr`; cwd ?")],
    ),
    entry(
        &["firejail"],
        Node {
            runs: &[
                Runs::Command {
                    skip: 0,
                    assignments: false,
                },
                Runs::ShellWithout,
            ],
            ..Node {
                options: partial("", &[], &["-q", "--quiet", "-v"]),
                ..Node::NONE
            }
        },
        &[
            ("firejail --quiet node app.js", "runs `node app.js`"),
            ("firejail --private-cwd=/x ls", "runs `ls`; cwd ?"),
        ],
    ),
    entry(
        &["systemd-run"],
        Node {
            options: partial(
                "puEM",
                &[
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
                &[
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
            ),
            runs: &[Runs::Command {
                skip: 0,
                assignments: false,
            }],
            // A service starts in `/` or the user's home, unless it keeps the
            // folder or names one.
            moves: Moves {
                to: &["--working-directory"],
                lost: &[],
                default: Place::LostUnless(&["-d", "--same-dir", "--scope", "--working-directory"]),
            },
            hooks: Hooks {
                see: Some(systemd_properties),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[
            (
                "systemd-run --user --scope -p MemoryMax=1G make -j2",
                "runs `make -j2`",
            ),
            ("systemd-run make", "runs `make`; cwd ?"),
        ],
    ),
    Program {
        args: Args::Unread,
        ..entry(
            &["start-stop-daemon"],
            Node {
                options: START_STOP,
                hooks: Hooks {
                    see: Some(start_stop),
                    ..Hooks::NONE
                },
                ..Node::NONE
            },
            &[(
                "start-stop-daemon --start --exec /usr/bin/rm -- -rf /home",
                "runs `/usr/bin/rm -rf /home`",
            )],
        )
    },
    Program {
        takes_command: false,
        args: Args::Unread,
        ..entry(
            &["capsh"],
            Node {
                hooks: Hooks {
                    see: Some(capsh),
                    ..Hooks::NONE
                },
                ..Node::NONE
            },
            &[(
                "capsh --shell=/bin/sh -- -c 'make'",
                "runs `/bin/sh -c make`",
            )],
        )
    },
];

/// `systemd-run -p ExecStartPre=…` runs a command of its own (its prefixes
/// `-`, `@`, `+`, `!`, `:` say how); `-p WorkingDirectory=` puts it in a
/// folder the gate does not place.
fn systemd_properties(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let spec = PROGRAMS
        .iter()
        .find(|p| p.names.contains(&"systemd-run"))
        .map_or(OptionSpec::default(), |p| p.node.options);
    let given = &c.words[c.at..start.unwrap_or(c.words.len())];
    let properties = options::values(given, &spec, &["-p", "--property"]);
    for v in &properties {
        let lower = v.text.to_ascii_lowercase();
        if lower.starts_with("workingdirectory") {
            a.move_to(Workdir::Unknown);
        }
        if !lower.starts_with("exec") {
            continue;
        }
        a.dynamic = Some("`systemd-run -p Exec…=` runs a command of its own".into());
        if let Some((_, cmd)) = v.text.split_once('=') {
            let cmd = cmd.trim_start_matches(['-', '@', '+', '!', ':']);
            a.derived
                .push(Derived::Source(cmd.to_string(), Role::Checked));
        }
    }
    start
}

/// `su [OPTIONS] [-] [USER [ARGS]]`, `-c CMD` (also `-lc CMD`, `--comm=CMD`,
/// `--session-command CMD`); `runuser -u USER CMD…` runs CMD itself.
fn su(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    let spec = if c.name == "su" { SU } else { RUNUSER };
    if options::flagged(args, &spec, &["-l", "--login"]) || args.iter().any(|w| w.text == "-") {
        // A login shell starts in the user's home.
        a.move_to(Workdir::Unknown);
    }
    let commands = options::values(args, &spec, &["-c", "--command", "--session-command"]);
    let has_command = !commands.is_empty();
    for v in commands {
        a.derived.push(Derived::Source(v.text, Role::Checked));
    }
    let operands: Vec<usize> = options::operands(args, &spec)
        .into_iter()
        .skip_while(|&k| args[k].text == "-")
        .collect();
    if c.name == "runuser" && !options::values(args, &spec, &["-u", "--user"]).is_empty() {
        return operands.first().map(|k| c.at + k);
    }
    // The words after the user go to the shell (`su root -- -c CMD`), and
    // `-s PROGRAM` is the shell (`su -s /bin/rm root -- -rf /`).
    let shell = options::values(args, &spec, &["-s", "--shell"]).pop();
    let shell_args = operands.get(1..).unwrap_or(&[]);
    // `-p`/`-m` keep the environment, whose SHELL is then the shell.
    let env_shell = options::flagged(args, &spec, &["-p", "-m", "--preserve-environment"]);
    if !has_command && shell.is_none() && shell_args.is_empty() {
        // `su <<< 'CMD'`: the user's shell reads its script from input.
        shell_stdin(c.name, c.redirs, Role::Checked, false, a);
    }
    if shell.is_some() || env_shell || !shell_args.is_empty() {
        let program = match shell {
            Some(v) => value_word(args, &v),
            None if env_shell => Word {
                text: "$SHELL".into(),
                dynamic: true,
                ..Word::default()
            },
            None => Word::raw("sh"),
        };
        let mut ws = vec![program];
        ws.extend(shell_args.iter().map(|&k| args[k].clone()));
        a.derived.push(Derived::Words(ws, Role::Checked));
    }
    None
}

/// `sg [-] GROUP [-c] COMMAND`: the command is a string `/bin/sh -c` runs,
/// with or without `-c`.
fn sg(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let mut j = c.at;
    if words.get(j).is_some_and(|w| w.text == "-") {
        j += 1;
    }
    j += 1;
    if words.get(j).is_some_and(|w| w.text == "-c") {
        j += 1;
    }
    if j < words.len() {
        a.derived
            .push(Derived::Source(join(&words[j..], ""), Role::Checked));
    }
    None
}

/// `start-stop-daemon --exec PROGRAM` (or `--startas`), its arguments after `--`.
fn start_stop(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    let end = args
        .iter()
        .position(|w| w.text == "--")
        .unwrap_or(args.len());
    let opts = &args[..end];
    for v in options::values(opts, &START_STOP, &["-d", "--chdir"]) {
        a.move_to(Workdir::At(v.text));
    }
    if !options::values(opts, &START_STOP, &["-r", "--chroot"]).is_empty() {
        a.move_to(Workdir::Unknown);
    }
    let program = options::values(opts, &START_STOP, &["-a", "--startas"])
        .pop()
        .or_else(|| options::values(opts, &START_STOP, &["-x", "--exec"]).pop());
    if let Some(v) = program {
        let mut ws = vec![value_word(opts, &v)];
        ws.extend_from_slice(args.get(end + 1..).unwrap_or(&[]));
        a.derived.push(Derived::Words(ws, Role::Checked));
    }
    None
}

/// `capsh [--shell=PROG] -- ARGS` runs PROG (bash) with ARGS.
fn capsh(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    if let Some(d) = words[c.at..].iter().position(|w| w.text == "--") {
        let shell = words[c.at..c.at + d]
            .iter()
            .find_map(|w| w.text.strip_prefix("--shell=").map(Word::raw))
            .unwrap_or_else(|| Word::raw("bash"));
        let mut ws = vec![shell];
        ws.extend_from_slice(&words[c.at + 1 + d..]);
        if ws.len() == 1 {
            shell_stdin(c.name, c.redirs, Role::Checked, false, a);
        } else {
            a.derived.push(Derived::Words(ws, Role::Checked));
        }
    }
    None
}
