//! Read-only commands (docs/permissions.md, "Read-only commands"): a bash
//! command the gate proves only reads runs without asking in default, edit
//! and plan mode; each option that writes or runs, each redirect, each
//! unknown expansion leaves it an ordinary command; a path a read deny rule
//! covers denies it; `readOnlyCommands: false` turns it off. The bash oracle
//! checks that bash runs nothing but the read-only fragments the gate saw.

use crate::common::{decide, run, Proj};
use crate::support::oracle::{missed, Oracle};
use decode_policy::{Call, Gate, Mode, PolicyInput, Tool, Verdict};

/// Commands the gate proves read-only (run in a project with a `.git`).
const READ_ONLY: &[&str] = &[
    "ls",
    "ls -la src",
    "cat README.md",
    "cat -n src/main.rs | sed -n '1,5p'",
    "head -n 5 src/main.rs",
    "tail -n 20 README.md",
    "wc -l src/main.rs README.md",
    "stat README.md",
    "file README.md",
    "du -sh src",
    "df -h",
    "pwd",
    "echo hi",
    "printf '%s\\n' a b",
    "which cargo || echo none",
    "grep -rn main src",
    "grep -n main src/main.rs 2>/dev/null",
    "rg -n main src",
    "fd -e rs",
    "find . -name '*.rs' -type f",
    "find src -maxdepth 1",
    "sed -n '1,5p' README.md",
    "sed -n '/fn/,$p' src/main.rs",
    "sort README.md",
    "sort -u -k1,1 README.md",
    "uniq -c README.md",
    "diff README.md src/main.rs",
    "cmp README.md src/main.rs",
    "tree src",
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat HEAD~1",
    "git log --oneline -5",
    "git log -p -- README.md",
    "git show HEAD",
    "git blame README.md",
    "git branch",
    "git branch -a -v",
    "git rev-parse HEAD",
    "git ls-files",
    "git grep -n main",
    "git --no-pager log -3",
    "ls && git status",
    "cat README.md | head -3 | wc -l",
    "ls > /dev/null 2>&1",
    "cd ./src && ls",
    "cd {root} && git status",
];

/// Their dangerous neighbours: each writes, runs something, expands what is
/// only known when it runs, or is read in a way the gate does not prove.
const NOT_READ_ONLY: &[&str] = &[
    // find
    "find . -fprint out.txt",
    "find . -fprint0 out.txt",
    "find . -fls out.txt",
    "find . -exec cat {} \\;",
    "find . -execdir cat {} +",
    "find . -ok cat {} \\;",
    "find . -name '*.o' -delete",
    // sort, uniq, tee, redirects
    "sort -o out.txt README.md",
    "sort -uo out.txt README.md",
    "sort --output=out.txt README.md",
    "sort --out=out.txt README.md",
    "sort --compress-program=gzip README.md",
    "uniq README.md out.txt",
    "tee out.txt",
    "ls | tee out.txt",
    "echo hi > out.txt",
    "ls > out.txt 2>&1",
    "cat README.md >> out.txt",
    "grep x README.md &> out.txt",
    "ls >& out.txt",
    "ls &>> out.txt",
    "ls 2> err.txt",
    "ls >| out.txt",
    "cat <> out.txt",
    "ls > /dev/fd/3",
    "ls 2>&1 > out.txt",
    "exec 3> out.txt; ls >&3",
    "f() { ls; }; f",
    "alias ls=rm; ls",
    "ls | bash",
    "echo 'ls' | xargs -I{} sh -c {}",
    "git log --format=%H | xargs git show",
    "ls $(pwd)",
    "cat ${HOME}/x",
    "cat ~/.ssh/id_rsa",
    "cat /etc/passwd",
    "ls ..",
    "grep -r x /",
    "tail -f /var/log/syslog",
    "cat < /dev/tcp/127.0.0.1/80",
    "git show HEAD:../x",
    // git
    "git diff --output=x.patch",
    "git log --output x.log",
    "git -c core.pager=evil log",
    "git -c color.ui=always log",
    "git --config-env=core.pager=EVIL log",
    "git --exec-path=/tmp/x log",
    "git -p log",
    "git --paginate log",
    "git -C src log",
    "git --git-dir=other log",
    "git --work-tree=/ status",
    "git --bare status",
    "git log --ext-diff",
    "git diff --textconv",
    "git log --show-signature",
    "git grep -Ovi main",
    "git grep --open-files-in-pager=vi main",
    "git branch new",
    "git branch -D old",
    "git branch -m a b",
    "git push",
    "git stash",
    "git checkout main",
    "GIT_PAGER=evil git log",
    "GIT_EXTERNAL_DIFF=evil git diff",
    "cd src && git log",
    "cd src && ls",
    "cd src/.. && cat README.md",
    "cd - && ls",
    "cd && ls",
    "cd ~ && ls",
    "cd /tmp && ls",
    "cd ./src && cd .. && cd ./src && git status",
    // pagers and editors
    "less README.md",
    "LESSOPEN='|rm -rf x %s' less README.md",
    "more README.md",
    // sed
    "sed -n 'w out.txt' README.md",
    "sed -n '1p;w out.txt' README.md",
    "sed -n '1W out.txt' README.md",
    "sed -n 'r /etc/passwd' README.md",
    "sed 's/a/b/w out.txt' README.md",
    "sed 's/a/b/' README.md",
    "sed -i 's/a/b/' README.md",
    "sed -n -i 1p README.md",
    "sed -n 1e README.md",
    "sed -f script.sed README.md",
    "awk '{print}' README.md",
    // rg, fd, grep
    "rg --pre ./x.sh main",
    "rg --pre=cat main",
    "rg --pre-glob '*.gz' --pre ./x main",
    "rg -z main",
    "rg -nz main",
    "rg --search-zip main",
    "rg --hostname-bin=./x main",
    "fd -x rm",
    "fd -e rs --exec cat",
    "fd -X wc -l",
    "fd -l",
    "ag --pager=./x main",
    "ack main",
    // expansions, wrappers, assignments, program paths
    "cat $(echo README.md)",
    "cat `echo README.md`",
    "cat \"$F\"",
    "cat $HOME/x",
    "$CMD README.md",
    "cat <<EOF\n$(whoami)\nEOF",
    "cat <(ls)",
    "X=1 cat README.md",
    "env cat README.md",
    "timeout 5 cat README.md",
    "sudo cat README.md",
    "xargs cat < README.md",
    "echo ls | sh",
    "bash -c 'ls'",
    "./ls",
    "/tmp/x/cat README.md",
    "printf -v PATH /tmp",
    // others that write
    "tree -o out.txt src",
    "base64 -o out.txt README.md",
    "file -C -m magic",
    "file -z x.gz",
    "diff -l README.md src/main.rs",
    // Links followed out of the folder it reads.
    "grep -R root: src",
    "grep -Rn root: src",
    "rg -L x src",
    "rg --follow x",
    "find -L src -name x",
    "find src -follow -name x",
    "diff -r src src",
    "du -L src",
    "tree -l src",
    "ls; rm -f out.txt",
    "cat README.md && make",
];

fn project() -> Proj {
    Proj::with_git("work")
}

fn gate(p: &Proj, f: impl FnOnce(&mut PolicyInput)) -> Gate {
    p.gate_with(f)
}

#[test]
fn provably_read_only_commands_run_in_default_edit_and_plan_mode() {
    let p = project();
    let g = gate(&p, |_| {});
    let mut cases = Vec::new();
    for &c in READ_ONLY {
        for mode in ["default", "edit", "plan"] {
            cases.push((mode, "bash", c, "allow:read-only command"));
        }
    }
    run(&p, &g, &cases);
    let d = decide(&g, "bash", "git log --oneline", "plan");
    assert!(
        d.trace
            .iter()
            .any(|t| t.result.contains("read-only command")),
        "{d:?}"
    );
}

#[test]
fn dangerous_neighbours_are_ordinary_commands() {
    let p = project();
    let g = gate(&p, |_| {});
    let mut failures = Vec::new();
    for &c in NOT_READ_ONLY {
        for (mode, want) in [("default", Verdict::Ask), ("plan", Verdict::Deny)] {
            let d = decide(&g, "bash", c, mode);
            if d.verdict != want {
                failures.push(format!("[{mode}] {c:?}: {} — {}", d.verdict, d.reason));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn reading_what_a_read_deny_rule_covers_is_denied() {
    let p = project();
    p.write(".env", "KEY=1\n");
    p.write("secrets/key", "k\n");
    p.write("notes/todo", "t\n");
    p.symlink(&p.root.join(".env"), "env-link");
    let g = gate(&p, |i| {
        i.project_rules.deny = vec!["read(.env)".into(), "read(secrets/**)".into()];
        i.project_rules.ask = vec!["read(notes/**)".into()];
    });
    let mut cases = Vec::new();
    for mode in ["default", "edit", "plan", "auto", "bypass"] {
        for c in [
            "cat .env",
            "cat ./.env",
            "cat src/../.env",
            "cat env-link",
            "head secrets/key",
            "rg KEY secrets/",
            "grep -r KEY secrets",
            "cat README.md .env",
            "ls && cat .env",
            "wc -l < .env",
            "git show HEAD:.env",
        ] {
            cases.push((mode, "bash", c, "deny:read(.env)"));
        }
    }
    // `secrets/**`: named in the reason.
    for row in cases.iter_mut() {
        if row.2.contains("secrets") {
            row.3 = "deny:read(secrets/**)";
        }
    }
    // What may reach a covered file is not proven: an ordinary command.
    for c in [
        "rg KEY",
        "grep -r KEY .",
        "grep -rn KEY --include='*.env'",
        "cat .e*",
        "find .",
        "git log -p",
        "cat notes/todo",
        "ls notes",
    ] {
        cases.push(("default", "bash", c, "ask"));
        cases.push(("plan", "bash", c, "deny:exit_plan_mode"));
    }
    // Elsewhere it is read-only.
    cases.push((
        "default",
        "bash",
        "cat README.md",
        "allow:read-only command",
    ));
    cases.push(("plan", "bash", "rg -n main src", "allow:read-only command"));
    run(&p, &g, &cases);
}

#[test]
fn the_path_scope_and_bash_rules_still_apply() {
    let p = project();
    std::fs::create_dir_all(p.base.join("outside")).unwrap();
    std::fs::write(p.base.join("outside/f"), "x").unwrap();
    let g = gate(&p, |i| {
        i.project_rules.ask = vec!["bash(git log*)".into()];
        i.project_rules.deny = vec!["bash(cat *secret*)".into()];
        i.project_rules.allow = vec!["bash(git status)".into()];
    });
    run(
        &p,
        &g,
        &[
            ("default", "bash", "cat {base}/outside/f", "ask"),
            ("default", "bash", "ls ~", "ask"),
            (
                "plan",
                "bash",
                "cat {base}/outside/f",
                "deny:exit_plan_mode",
            ),
            ("default", "bash", "git log", "ask:bash(git log*)"),
            ("plan", "bash", "git log", "ask:bash(git log*)"),
            (
                "default",
                "bash",
                "cat secret.txt",
                "deny:bash(cat *secret*)",
            ),
            // A partial allow does not lift a read-only command's proof.
            (
                "default",
                "bash",
                "git status && ls",
                "allow:read-only command",
            ),
        ],
    );
}

#[test]
fn git_is_read_only_only_at_the_root_of_the_projects_own_repository() {
    // No `.git` of its own: the repository git finds may be one the agent made.
    let p = Proj::new();
    let g = gate(&p, |_| {});
    run(
        &p,
        &g,
        &[
            ("default", "bash", "git status", "ask"),
            ("default", "bash", "ls", "allow:read-only command"),
        ],
    );
}

#[test]
fn read_only_commands_off_at_any_level() {
    let p = project();
    let g = gate(&p, |i| i.read_only_commands = false);
    run(
        &p,
        &g,
        &[
            ("default", "bash", "ls", "ask"),
            ("edit", "bash", "git status", "ask"),
            ("plan", "bash", "git log", "deny:exit_plan_mode"),
            ("auto", "bash", "ls", "allow"),
        ],
    );
    assert_eq!(
        g.decide(&Call::new(Tool::Bash, "cat README.md"), Mode::Default)
            .verdict,
        Verdict::Ask
    );
}

/// Real bash runs nothing but what the gate saw: every program bash tries
/// for a read-only command is one of its fragments.
#[test]
fn the_oracle_agrees_on_read_only_commands() {
    let Some(o) = Oracle::new() else {
        return;
    };
    let mut failures = Vec::new();
    // The table, and every corpus command proven read-only.
    let p = project();
    let g = gate(&p, |_| {});
    let corpus: Vec<String> = include_str!("../data/agent_commands.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["cmd"].as_str().map(String::from))
        .filter(|c| {
            let d = g.decide(&Call::new(Tool::Bash, c.as_str()), Mode::Default);
            d.reason == "read-only command"
        })
        .collect();
    for c in READ_ONLY
        .iter()
        .copied()
        .chain(corpus.iter().map(String::as_str))
    {
        let f = decode_policy::fragments(c);
        assert!(f.opaque.is_none(), "{c}");
        let miss = missed(&o.run(c), &f.patterns, &f.names);
        if !miss.is_empty() {
            failures.push(format!(
                "{c:?}: bash ran {miss:?}, gate saw {:?}",
                f.patterns
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// On the agent-command corpus: read-only commands take a good share of the
/// default-mode asks away, and none of the commands they let through is
/// labelled unsafe but reading a secret, which `read` would allow too
/// without a rule (`cat .env`; a `read(.env)` deny rule denies it).
#[test]
fn the_corpus_loses_asks_and_no_unsafe_command() {
    let text = include_str!("../data/agent_commands.jsonl");
    let p = project();
    let on = gate(&p, |_| {});
    let off = gate(&p, |i| i.read_only_commands = false);
    let denied = gate(&p, |i| i.project_rules.deny = vec!["read(.env)".into()]);
    let (mut asks, mut gone) = (0, 0);
    let mut unsafe_allowed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let cmd = v["cmd"].as_str().unwrap();
        let call = Call::new(Tool::Bash, cmd);
        if off.decide(&call, Mode::Default).verdict != Verdict::Ask {
            continue;
        }
        asks += 1;
        if on.decide(&call, Mode::Default).verdict == Verdict::Allow {
            gone += 1;
            if v["safe"].as_bool() == Some(false) {
                unsafe_allowed.push(cmd.to_string());
                assert_ne!(
                    denied.decide(&call, Mode::Default).verdict,
                    Verdict::Allow,
                    "{cmd}"
                );
            }
        }
    }
    assert!(gone * 100 >= asks * 15, "{gone} of {asks} asks gone");
    assert!(
        unsafe_allowed.iter().all(|c| c == "cat .env"),
        "{unsafe_allowed:?}"
    );
}

#[test]
fn links_and_other_names_are_no_proof_of_what_is_read() {
    let p = project();
    p.write(".env", "KEY=1\n");
    p.write("notes.txt", "n\n");
    let root = p.root.clone();
    // A link out of the project (a cloned repository can hold one), a folder
    // link, and a hard link to `.env`.
    std::os::unix::fs::symlink("/etc/hostname", root.join("shl")).unwrap();
    std::fs::create_dir_all(root.join("sub4")).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("sub4/etc")).unwrap();
    std::fs::hard_link(root.join(".env"), root.join("hard")).unwrap();
    let g = gate(&p, |i| {
        i.project_rules.deny = vec!["read(.env)".into()];
    });
    for c in [
        "head -n2 sh?",
        "cat [s]hl",
        "cat sub4/*/hostname",
        "cat hard",
        "cat har?",
        "cat .[[:alpha:]]nv",
        "wc -l [[:alpha:]]ard",
    ] {
        for mode in ["default", "plan"] {
            let d = decide(&g, "bash", c, mode);
            assert!(
                !d.trace
                    .iter()
                    .any(|t| t.result.contains("read-only command")),
                "[{mode}] {c}: {d:?}"
            );
            assert_ne!(d.verdict, Verdict::Allow, "[{mode}] {c}: {}", d.reason);
        }
    }
    // An ordinary glob over ordinary files stays read-only.
    let d = decide(&g, "bash", "cat note?.txt", "default");
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
}
