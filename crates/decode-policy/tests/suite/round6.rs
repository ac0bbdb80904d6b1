//! The gate's round-3 re-test (issue 28): the classes an outside attack still
//! found after the program-knowledge rewrite (docs/permissions.md, "Fail
//! closed"). Each test holds the attack's spellings and others of the same
//! class; the guards keep ordinary commands allowed.

use crate::common;

use common::{run, Proj};

/// B: the user's git configuration (~/.gitconfig, ~/.config/git/**) written
/// by git or gh itself is never automatic, whatever the key.
#[test]
fn b_user_git_config_written_by_git_is_never_automatic() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "git config --global safe.directory '*'",
        "git config --global url.https://evil.example/.insteadOf https://github.com/",
        "git config --global http.sslVerify false",
        "git config --global user.name x",
        "git config --global --add safe.directory /tmp",
        "git config --add --global hook.x.event pre-commit",
        "git config --global --unset user.name",
        "git config --global --unset-all user.name",
        "git config --global --rename-section user person",
        "git config --global --remove-section user",
        "git config --global --replace-all user.name x",
        "git config set --global user.name x",
        "git config unset --global user.name",
        "git config --system core.attributesFile /tmp/a",
        "git -C sub config --global submodule.recurse true",
        "git --no-pager config --global fetch.fsckObjects false",
        "gh auth setup-git",
        "gh auth setup-git --hostname github.com",
        "git maintenance register",
        "git maintenance start",
        "git maintenance unregister",
        "git maintenance stop",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // Guards: reading the user's configuration, and the repository's own
    // reads, stay automatic.
    for c in [
        "git config --global user.name",
        "git config --global --get user.email",
        "git config --global --list",
        "git config get --global user.name",
        "git config user.name",
        "git maintenance run --task=gc",
        "gh auth status",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// C: a redirect on a function definition (any body, any spelling, nested)
/// is a write of the command: bash opens the file each time the function runs.
#[test]
fn c_redirect_on_a_function_definition_is_a_write() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "f() { echo '{}'; } > .decode/settings.json; f",
        "f() { cat; } >> ~/.bashrc; f <<< x",
        "f() { :; } 2> ~/.profile; f",
        "f() ( echo x ) > .git/hooks/pre-commit; f",
        "function f() { echo x; } >~/.config/autostart/x.desktop; f",
        "function f { echo x; } &> ~/.zshrc; f",
        "g() { f() { echo x; } > ~/.bashrc; }; g; f",
        "f() { echo x; } > .decode/settings.json",
        "f() if true; then echo x; fi > ~/.bashrc; f",
        "f() while :; do break; done >> ~/.profile; f",
        "f() [[ -n x ]] > ~/.bashrc; f",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // Guards: functions whose output goes to the project's own files.
    for c in [
        "f() { echo x; } > notes.txt; f",
        "f() { echo x; }; f > out.log",
        "f() { cargo test; }; f",
        "function build { cargo build 2>&1; } > /dev/null; build",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// N: `find … -delete` / `-exec rm {} +` whose tests may match protected
/// files under the project removes them: never automatic.
#[test]
fn n_find_removal_that_may_match_protected_files() {
    let p = Proj::new();
    std::fs::create_dir_all(p.root.join(".decode")).unwrap();
    std::fs::write(p.root.join(".decode/settings.json"), "{}").unwrap();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "find . -path '*/.decode/*' -exec rm {} +",
        "find . -name settings.json -delete",
        "find . -iname 'SETTINGS.JSON' -delete",
        "find . -path './.decode*' -delete",
        "find . -name '*.json' -exec rm -f {} \\;",
        "find . -type f -delete",
        "find . -name '*.o' -o -name 'settings*' -delete",
        "find . \\( -name x \\) -delete",
        "find . -ipath '*/.DECODE/*' -execdir rm {} +",
        "find . -name 'config' -path '*.git*' -delete",
        "find . -regex '.*settings.*' -delete",
        "find . -name '.mcp.json' -exec unlink {} \\;",
        "find . -name '*.md' -path '*agents*' -delete",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // Guards: removals whose tests rule protected files out, and finds that
    // remove nothing.
    for c in [
        "find . -name '*.o' -delete",
        "find . -name '*.pyc' -delete",
        "find . -type d -name __pycache__ -exec rm -rf {} +",
        "find . -name node_modules -prune -o -name '*.ts' -print",
        "find target -name '*.rlib' -delete",
        "find . -path ./target -prune -o -name '*.rs' -print",
        "find . -name '*.json' -print",
        "find src -name '*.tmp' -exec rm {} \\;",
        "find . -not -name settings.json -name '*.log' -delete",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// G: the string of a shell the gate does not read (`-c`, `-C`, `--command`,
/// `--init-command`, whatever comes between: `--`) is judged for the caps in
/// every mode, bypass included.
#[test]
fn g_unknown_shells_strings_whatever_comes_between() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "nu -c -- 'rm -rf ~'",
        "pwsh -c -- 'rm -rf ~'",
        "pwsh -NoProfile -Command -- 'rm -rf ~'",
        "elvish -c -- 'rm -rf ~'",
        "xonsh -c -- 'rm -rf ~'",
        "rbash -c -- 'rm -rf ~'",
        "busybox hush -c -- 'rm -rf ~'",
        "osh -c -- 'rm -rf ~'",
        "ysh -c -- 'rm -rf ~'",
        "lksh -c -- 'rm -rf ~'",
        "oksh -c -- 'rm -rf ~'",
        "murex -c -- 'rm -rf ~'",
        "fish -C 'rm -rf ~'",
        "fish --init-command='rm -rf ~'",
        "fish --init-command 'rm -rf ~'",
        "fish --command='rm -rf ~'",
        "fish -iC 'rm -rf ~'",
        "nu --commands -- 'rm -rf ~'",
        "xonsh --init-command='rm -rf ~'",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "fish -C 'sudo id'",
        "nu -c -- 'sudo id'",
        "fish --init-command='sudo id'",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // Guards.
    for c in [
        "fish -c 'echo hi'",
        "fish --version",
        "bash -c 'cargo test'",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// K: arithmetic inside a `${…:-…}` default and the offsets of a `$@` or
/// `$*` slice evaluate names only known when it runs.
#[test]
fn k_arithmetic_in_defaults_and_positional_slices() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "x='a[$(sudo id)]'; echo ${v:-$((x))}",
        "x='a[$(sudo id)]'; echo \"${v:-$((x))}\"",
        "x='a[$(sudo id)]'; echo ${v:=$((x+1))}",
        "x='a[$(sudo id)]'; echo ${v:+$[x]}",
        "x='a[$(sudo id)]'; echo ${@:x}",
        "x='a[$(sudo id)]'; set -- 1 2; echo ${@:x:1}",
        "x='a[$(sudo id)]'; set -- 1 2; echo ${@:0:x}",
        "x='a[$(sudo id)]'; echo \"${*:x}\"",
        "echo ${@:$1}",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "echo ${v:-$((1+2))}",
        "set -- a b c; echo ${@:2}",
        "set -- a b c; echo \"${@:1:2}\"",
        "n=2; echo ${v:-$((n*3))}",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// J: programs that run a string — perl code that runs programs, tmux
/// formats, `hyperfine -N`, `parallel :::` with no command, `expect -c`,
/// make's `.SHELLFLAGS`, a shell reading its script from a file on stdin.
#[test]
fn j_programs_that_run_a_string() {
    let p = Proj::new();
    std::fs::write(p.root.join("x.sh"), "echo hi\n").unwrap();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "perl -e 'system(\"sudo id\")'",
        "perl -e 'system q(sudo id)'",
        "perl -ne 'system(\"sudo id\")'",
        "perl -le 'qx(sudo id)'",
        "perl -we '`sudo id`'",
        "perl -E 'exec \"sudo\", \"id\"'",
        "perl -e 'open(my $f, \"|-\", \"sudo id\")'",
        "perl -lne 'print readpipe(\"sudo id\")'",
        "tmux display -p '#(sudo id)'",
        "tmux display-message '#(sudo id)'",
        "tmux set -g status-right '#(sudo id)'",
        "tmux set-option -g status-left 'x #(sudo id) y'",
        "hyperfine -N 'sudo id'",
        "hyperfine -N -w 2 'sudo id'",
        "parallel ::: 'sudo id'",
        "parallel -j2 ::: 'sudo id' 'ls'",
        "parallel :::: cmds.txt",
        "expect -c 'spawn sudo id'",
        "expect <<< 'spawn sudo id'",
        "expect -",
        "make .SHELLFLAGS='-c sudo id'",
        "make .SHELLFLAGS:='-ec sudo id' all",
        "make SHELL:='sudo id' test",
        "make SHELL::='sudo id'",
        "sh < /dev/stdin",
        "bash < x.sh",
        "sh -s < x.sh",
        "zsh < x.sh",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // In bypass the caps read the strings.
    for c in [
        "perl -e 'system(\"rm -rf ~\")'",
        "tmux display -p '#(rm -rf ~)'",
        "hyperfine -N 'rm -rf ~'",
        "parallel ::: 'rm -rf ~'",
        "make .SHELLFLAGS='-c rm -rf ~'",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    // Guards.
    for c in [
        "perl -pe 's/a/b/' file.txt",
        "perl -ne 'print if /x/' file.txt",
        "perl -e 'print 1'",
        "perl -MList::Util=sum -le 'print sum(1,2)'",
        "tmux ls",
        "tmux display -p '#{pane_id}'",
        "hyperfine -N 'cargo build'",
        "parallel gzip ::: a b",
        "make -j4 test",
        "make CFLAGS=-O2",
        "bash x.sh",
        "bash < /dev/null",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// D: protected branches moved, renamed or aliased by other spellings.
#[test]
fn d_protected_branches_other_spellings() {
    let p = Proj::with_git("main");
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "git reset feature",
        "git reset HEAD~1",
        "git reset @~1",
        "git reset -q feature",
        "git fetch . feature:heads/main",
        "git fetch origin +feature:heads/main",
        "git fetch --refmap=+refs/heads/x:refs/heads/main origin x",
        "git symbolic-ref refs/heads/main refs/heads/feature",
        "git branch -m main old",
        "git branch --move main old",
        "git branch -M master x",
    ] {
        cases.push(("auto", "bash", c, "ask:protected branch"));
    }
    // Refspecs only known when it runs (a wildcard, configuration): they
    // may name a protected branch.
    for c in [
        "git fetch --refmap='+refs/heads/*:refs/heads/*' origin main",
        "git fetch --refmap '+refs/heads/*:refs/heads/*' origin main",
        "git -c remote.origin.fetch='+refs/heads/*:refs/heads/*' fetch origin",
        "git --config-env=remote.origin.fetch=X fetch origin",
        "git -c remote.origin.fetch=+refs/heads/*:refs/heads/* pull",
    ] {
        cases.push(("auto", "bash", c, "ask:may be protected"));
    }
    for c in [
        "git reset",
        "git reset HEAD",
        "git reset HEAD file.txt",
        "git reset -- file.txt",
        "git reset -p",
        "git fetch origin",
        "git fetch origin feature:feature",
        "git branch -m feature topic",
        "git branch -c main copy",
        "git symbolic-ref HEAD",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// I and F: variables that name the program cargo, less or man run, and
/// 7-Zip's own binary removing what it archived (bypass: critical removal).
#[test]
fn i_f_programs_named_by_variables_and_7zz() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "RUSTC=sudo cargo build",
        "RUSTDOC=sudo cargo doc",
        "CARGO_BUILD_RUSTC=sudo cargo build",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=sudo cargo build",
        "CARGO_REGISTRY_CREDENTIAL_PROVIDER='sudo id' cargo login",
        "RUSTC_WORKSPACE_WRAPPER=sudo cargo check",
        "LESS='+!sudo id' less README",
        "LESS='+!git push origin main' git log",
        "MANOPT='-Psudo' man ls",
        "MANOPT='--pager=sudo id' man ls",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    cases.push(("bypass", "bash", "7zz a -sdel x ~", "ask"));
    for c in [
        "LESS=-R git log",
        "RUSTFLAGS='-C target-cpu=native' cargo build",
        "cargo build --release",
        "7zz a out.7z src",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// E: a work tree moved away from the repository, emptied in bypass
/// (`--git-dir` with the current folder as the work tree, `stash -u` over
/// another work tree): critical removal asks.
#[test]
fn e_work_tree_moved_then_emptied_in_bypass() {
    let p = Proj::with_git("work");
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "cd ~; git --git-dir={root}/.git clean -fdx",
        "cd ~ && git --git-dir {root}/.git clean -ffdx",
        "pushd ~; git --git-dir={root}/.git clean -fdx",
        "git --work-tree=~ stash -u",
        "git --work-tree=~ stash --include-untracked",
        "git --work-tree ~ stash push -a",
        "git --work-tree=/ stash save -u",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "git stash -u",
        "git stash push --include-untracked -m wip",
        "git clean -fdx",
    ] {
        cases.push(("bypass", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// M: `systemctl --user` verbs that write the user's units
/// (~/.config/systemd/user) are never automatic.
#[test]
fn m_systemctl_user_writes_units() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "systemctl --user link ./x.service",
        "systemctl --user enable ./x.service",
        "systemctl --user edit --force x",
        "systemctl --user enable --now x",
        "systemctl --user add-wants default.target x.service",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in ["systemctl --user status x", "systemctl --user list-units"] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F: `tar --remove-files` with members relative to `-C DIR` removes under
/// DIR: critical when DIR is, bypass too.
#[test]
fn f_tar_remove_files_under_another_folder() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "tar -cvf /tmp/x.tar --remove-files -C / home",
        "tar -C {home} -cf /tmp/x --remove-files .",
        "tar --directory=/ -cf /tmp/x --remove-files usr",
        "tar --remove-files -C ~ -cf /tmp/x .",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "tar --remove-files -czf out.tgz -C build dist",
        "tar -xzf a.tgz -C out",
    ] {
        cases.push(("bypass", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// Follow-ups of the re-test: `--config-env` for the hooks path, `stash -u`
/// over a work tree the environment names, `git reset REV --`, expect
/// reading a here-string.
#[test]
fn followups_config_env_hooks_stash_reset_expect() {
    let p = Proj::with_git("main");
    let g = p.gate(&[], &[], &[]);
    let cases = [
        (
            "auto",
            "bash",
            "git --config-env=core.hooksPath=PAYLOAD commit -m x",
            "ask",
        ),
        (
            "auto",
            "bash",
            "git --config-env core.hooksPath=PAYLOAD commit -m x",
            "ask",
        ),
        ("bypass", "bash", "GIT_WORK_TREE=~ git stash -u", "ask"),
        ("bypass", "bash", "GIT_WORK_TREE=/ git stash --all", "ask"),
        (
            "auto",
            "bash",
            "git reset feature --",
            "ask:protected branch",
        ),
        ("bypass", "bash", "expect <<< 'spawn rm -rf ~'", "ask"),
        ("auto", "bash", "git commit -m x", "allow"),
        ("auto", "bash", "git reset HEAD -- file.txt", "allow"),
    ];
    run(&p, &g, &cases);
}

/// A: commands over the length limit are opaque in every mode, whatever
/// they are made of (slash- and glob-heavy words, `case` words, escapes);
/// the cost of judging them is in benches/decide.rs, never timed here.
#[test]
fn a_over_the_length_limit_is_opaque_whatever_it_holds() {
    let p = Proj::new();
    let g = p.gate(&["bash(ls *)"], &[], &[]);
    let subjects: Vec<String> = [
        ("a/", 20_000),
        ("*/", 20_000),
        ("case x in ", 4_000),
        ("echo \\x01", 4_000),
    ]
    .iter()
    .map(|(unit, n)| format!("ls {}", unit.repeat(*n)))
    .collect();
    let mut cases = Vec::new();
    for s in &subjects {
        for mode in ["default", "auto", "bypass"] {
            cases.push((mode, "bash", s.as_str(), "ask:longer than 10000 characters"));
        }
    }
    run(&p, &g, &cases);
    // Deny rules still see every command of a flat reading, however many
    // words come before.
    let g = p.gate(&[], &[], &["bash(wget *)"]);
    let long = format!("ls {} ; wget http://x", "case x in ".repeat(4_000));
    run(&p, &g, &[("auto", "bash", long.as_str(), "deny")]);
}

/// F: fd's `-x`/`-X` run a command on what it finds under its paths, like
/// `find -exec`: removing under a critical folder asks in bypass.
#[test]
fn f_fd_exec_removal_under_critical_folders() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "fd . ~ -X rm -rf",
        "fd -H . ~ --exec rm -rf",
        "fdfind . ~ -x rm -rf",
        "fd -t d . / -X rm -rf",
        "fd -e rs . /home --exec-batch rm",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in ["fd -e o . target -X rm", "fd -e rs -x wc -l"] {
        cases.push(("bypass", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}
