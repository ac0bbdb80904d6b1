//! The second outside review (an attacker with the built binary and the
//! contract, not the tests): every class it found, with variants, and the
//! guards that keep ordinary commands allowed (docs/permissions.md, "Fail
//! closed").

use crate::common;

use std::path::Path;

use common::{decide, run, verdict, Proj};
use decode_policy::Verdict;

const CRIT: &str = "ask:asks every time";
const NA: &str = "ask:never automatic";

#[test]
fn r01_dynamic_command_words_are_judged_as_what_they_may_run() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "c=rm; $c -rf ~", CRIT),
            ("bypass", "bash", "x=(rm -rf ~); \"${x[@]}\"", CRIT),
            ("bypass", "bash", "a=rm; b=-rf; $a $b /", CRIT),
            ("bypass", "bash", "c='rm -rf'; $c ~", CRIT),
            ("bypass", "bash", "$c -rf /", CRIT),
            ("bypass", "bash", "\"$c\" -rf /", CRIT),
            ("bypass", "bash", "${c} -rf /", CRIT),
            ("bypass", "bash", "$(echo rm) -rf /", CRIT),
            ("bypass", "bash", "`echo rm` -rf /", CRIT),
            ("bypass", "bash", "r$x -rf /", CRIT),
            ("bypass", "bash", "\"$@\" -rf /", CRIT),
            ("bypass", "bash", "$1 -rf /", CRIT),
            ("bypass", "bash", "command $c -rf /", CRIT),
            ("bypass", "bash", "env $c -rf /", CRIT),
            ("bypass", "bash", "find / -exec $c {} +", CRIT),
            ("bypass", "bash", "c=rm; find / -exec $c {} +", CRIT),
            ("bypass", "bash", "$(cat cmd.txt)", CRIT),
            ("bypass", "bash", "read c < f; $c", CRIT),
            ("bypass", "bash", "ls | xargs $c", CRIT),
            // Guards: a dynamic program with harmless, static arguments.
            ("bypass", "bash", "\"$EDITOR\" notes.txt", "allow"),
            ("bypass", "bash", "$PYTHON -m pytest", "allow"),
            ("bypass", "bash", "c=ls; $c -la", "allow"),
            ("auto", "bash", "c=ls; $c -la", "ask:opaque"),
        ],
    );
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "CMD=curl; $CMD x", "deny"),
            ("default", "bash", "CMD=curl; \"$CMD\" x", "deny"),
            ("bypass", "bash", "c$(echo u)rl x", "deny"),
            ("bypass", "bash", "cu${x}rl x", "deny"),
            ("bypass", "bash", "x=(curl x); \"${x[@]}\"", "deny"),
            // A program only known when it runs, not spelled in the command.
            ("default", "bash", "$CMD x", "ask:opaque"),
        ],
    );
}

#[test]
fn r02_static_scripts_fed_to_a_shell_through_stdin_files() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "bash /dev/stdin <<< 'rm -rf ~'", CRIT),
            ("bypass", "bash", "source /dev/stdin <<< 'rm -rf ~'", CRIT),
            ("bypass", "bash", ". /dev/stdin <<'E'\nrm -rf ~\nE", CRIT),
            ("bypass", "bash", "bash /dev/fd/0 <<'E'\nrm -rf ~\nE", CRIT),
            (
                "bypass",
                "bash",
                "bash /proc/self/fd/0 <<< 'rm -rf ~'",
                CRIT,
            ),
            ("bypass", "bash", "bash - <<< 'rm -rf ~'", CRIT),
            ("bypass", "bash", "bash -c 'bash' <<< 'rm -rf ~'", CRIT),
            ("bypass", "bash", "sh -c sh <<< 'rm -rf ~'", CRIT),
            ("bypass", "bash", "sh -c 'exec sh' <<< 'rm -rf ~'", CRIT),
            ("bypass", "bash", "bash /dev/fd/3 3<<< 'rm -rf ~'", "ask"),
            // `>&-` glued to a word: bash reads the word apart.
            ("auto", "bash", "git 2>&-push", "ask"),
            // and after blanks (bash oracle fuzz): `<& -push` runs `git push`.
            ("auto", "bash", "git <& -push", "ask"),
            ("bypass", "bash", "git<& -push", "ask"),
            ("auto", "bash", "git 3>&\t-push", "ask"),
            ("auto", "bash", "git status 2>&-", "allow"),
            ("auto", "bash", "bash /dev/stdin <<< 'echo hi'", "allow"),
        ],
    );
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "bash /dev/stdin <<< 'curl x'", "deny"),
            ("default", "bash", "sh -c sh <<< 'curl x'", "deny"),
        ],
    );
}

#[test]
fn r03_find_options_before_the_starting_points() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "find -O0 / -delete", CRIT),
            ("bypass", "bash", "find -O3 / -delete", CRIT),
            ("bypass", "bash", "find -O1 / -exec rm {} +", CRIT),
            ("bypass", "bash", "find -D exec / -delete", CRIT),
            ("bypass", "bash", "find -D opt,exec / -delete", CRIT),
            ("bypass", "bash", "find -- / -delete", CRIT),
            ("bypass", "bash", "find -files0-from f -delete", CRIT),
            ("bypass", "bash", "find -f / -delete", CRIT),
            ("bypass", "bash", "find -O3 . -name '*.o' -delete", "allow"),
        ],
    );
}

#[test]
fn r04_the_working_folder_is_followed_or_unknown() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "cd - && rm -rf *", CRIT),
            ("bypass", "bash", "cd /; cd {root}; cd -; rm -rf usr", CRIT),
            ("bypass", "bash", "cd /usr; cd -; rm -rf bin", CRIT),
            (
                "bypass",
                "bash",
                "pushd /; pushd {root}; pushd +1; rm -rf usr",
                CRIT,
            ),
            (
                "bypass",
                "bash",
                "pushd /tmp; pushd /; pushd; rm -rf x",
                CRIT,
            ),
            ("bypass", "bash", "f() { cd /; }; f; rm -rf usr", CRIT),
            (
                "bypass",
                "bash",
                "function f { cd /; }; f && rm -rf usr",
                CRIT,
            ),
            ("bypass", "bash", "trap 'cd /' DEBUG; rm -rf usr", CRIT),
            ("bypass", "bash", "trap 'cd /' ERR; false; rm -rf usr", CRIT),
            ("bypass", "bash", "eval 'cd /'; rm -rf usr", CRIT),
            ("bypass", "bash", "source <(echo cd /); rm -rf usr", CRIT),
            ("bypass", "bash", ". ./env.sh; rm -rf usr", CRIT),
            (
                "bypass",
                "bash",
                "exec 3</; cd /proc/self/fd/3; rm -rf usr",
                CRIT,
            ),
            ("bypass", "bash", "CDPATH=/ cd tmp; rm -rf x", CRIT),
            ("bypass", "bash", "export CDPATH=/; cd usr; rm -rf *", CRIT),
            ("bypass", "bash", "HOME=/; cd; rm -rf usr", CRIT),
            ("bypass", "bash", "HOME=/ cd && rm -rf usr", CRIT),
            ("bypass", "bash", "HOME=/; rm -rf ~/usr", "ask"),
            ("bypass", "bash", "OLDPWD=/ cd -; rm -rf usr", CRIT),
            (
                "bypass",
                "bash",
                "shopt -s cdable_vars; R=/; cd R; rm -rf usr",
                CRIT,
            ),
            ("auto", "bash", "f() { cd ~; }; f; echo x > .bashrc", NA),
            (
                "auto",
                "bash",
                "CDPATH=~ cd .ssh && echo k > authorized_keys",
                "ask",
            ),
            // Guards.
            ("bypass", "bash", "cd src && rm -rf target", "allow"),
            ("bypass", "bash", "cd -P src && rm -rf target", "allow"),
            (
                "bypass",
                "bash",
                "f() { echo hi; }; f; rm -rf build",
                "allow",
            ),
            ("auto", "bash", "cd src && cargo build", "allow"),
        ],
    );
}

#[test]
fn r05_removals_through_links_and_globs_before_dotdot() {
    let p = Proj::new();
    std::fs::create_dir_all(p.root.join("d0/e0/f")).unwrap();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "ln -s / l && rm -rf l/*", CRIT),
            ("bypass", "bash", "ln -s / l; rm -rf l/", CRIT),
            ("auto", "bash", "ln -s / l && rm -rf l/*", CRIT),
            ("bypass", "bash", "ln -s / l && find l/ -delete", CRIT),
            ("bypass", "bash", "rm -rf .gi?/../../proj", CRIT),
            ("bypass", "bash", "rm -rf d*/../../proj", CRIT),
            ("bypass", "bash", "rm -rf d?/../../proj", CRIT),
            ("bypass", "bash", "rm -rf d[0]/../../proj", CRIT),
            ("bypass", "bash", "rm -rf */*/f/../../../../../../usr", CRIT),
            ("bypass", "bash", "rm -rf d0/*/../../../../../usr", CRIT),
            ("bypass", "bash", "find .g*/../../proj -delete", CRIT),
            // Guards.
            ("bypass", "bash", "rm -rf d0/*.o", "allow"),
            (
                "bypass",
                "bash",
                "ln -s ../README.md docs/r.md && rm -rf build",
                "allow",
            ),
        ],
    );
}

#[test]
fn r06_every_never_automatic_file() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("auto", "write", ".envrc", NA),
            ("auto", "write", "sub/.envrc", NA),
            ("auto", "write", ".vscode/settings.json", NA),
            ("auto", "write", ".idea/workspace.xml", NA),
            ("auto", "write", "sub/.git/config", NA),
            ("auto", "write", "sub/.git/hooks/pre-commit", NA),
            ("auto", "write", "{home}/.config/decode/config.toml", NA),
            ("auto", "write", "{home}/.local/share/decode/trust.json", NA),
            ("auto", "edit", ".envrc", NA),
            ("auto", "bash", "echo x > .envrc", NA),
            ("auto", "bash", "touch .envrc", NA),
            ("auto", "bash", "echo x > .vscode/tasks.json", NA),
            ("auto", "bash", "tee .vscode/settings.json < x", NA),
            ("auto", "bash", "echo x > .idea/x.xml", NA),
            ("auto", "bash", "echo x > sub/.git/config", NA),
            ("auto", "bash", "echo x > ~/.config/decode/config.toml", NA),
            (
                "auto",
                "bash",
                "echo x > ~/.local/share/decode/trust.json",
                NA,
            ),
            ("auto", "bash", "echo x > .e?vrc", NA),
            // Guards.
            ("auto", "write", "src/lib.rs", "allow"),
            ("auto", "write", ".env.example", "allow"),
            ("auto", "bash", "echo x > notes.md", "allow"),
        ],
    );
    // Decode's folders as the environment places them.
    let xdg = p.base.join("xdg-data");
    let g = p.gate_with(|i| i.app_dirs = vec![xdg.join("decode")]);
    run(
        &p,
        &g,
        &[
            ("auto", "write", "{base}/xdg-data/decode/trust.json", NA),
            (
                "auto",
                "bash",
                "echo x > {base}/xdg-data/decode/trust.json",
                NA,
            ),
        ],
    );
}

#[test]
fn r07_copies_whose_contents_land_on_protected_files() {
    let p = Proj::new();
    p.write("x/.decode/settings.json", "{}");
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("auto", "bash", "cp -r x/. .", NA),
            ("auto", "bash", "cp -rT x .", NA),
            ("auto", "bash", "rsync -a x/ ./", NA),
            ("auto", "bash", "rsync -a x/ .", NA),
            ("auto", "bash", "cp -r x/.d* .", NA),
            ("auto", "bash", "cp -a x/.[!.]* .", NA),
            ("auto", "bash", "cp -r x/.* .", NA),
            ("auto", "bash", "shopt -s dotglob; cp -r x/* .", NA),
            ("auto", "bash", "GLOBIGNORE=z; cp -r x/* .", NA),
            (
                "auto",
                "bash",
                "shopt -s dotglob; echo x > */settings.json",
                NA,
            ),
            ("auto", "bash", "GLOBIGNORE=z; echo x > */settings.json", NA),
            (
                "auto",
                "bash",
                "shopt -s extglob; echo x > .@(decode)/settings.json",
                "ask",
            ),
            // Guards.
            ("auto", "bash", "cp -r src/. /tmp/backup/", "allow"),
            ("auto", "bash", "cp -r x/* build/", "allow"),
            ("auto", "bash", "tar -xzf a.tgz -C /tmp/out", "allow"),
        ],
    );
}

#[test]
fn r08_sed_w_files_and_git_configuration_writes() {
    let p = Proj::with_git("feature");
    let g = p.gate(&["bash(git *)", "bash(sed *)"], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("auto", "bash", "sed -n 'w .git/config' x", NA),
            ("auto", "bash", "sed 's/a/b/w .git/config' x", NA),
            ("auto", "bash", "sed 's/a/b/gw .envrc' x", NA),
            ("auto", "bash", "sed -e 'w .git/config' x", NA),
            ("auto", "bash", "sed -n '1w .envrc' x", NA),
            (
                "auto",
                "bash",
                "sed -f script.sed x",
                "ask:sed script is read from a file",
            ),
            ("auto", "bash", "git config --global alias.p push", NA),
            (
                "auto",
                "bash",
                "git config --global core.pager 'sh -c x'",
                NA,
            ),
            ("auto", "bash", "git config --system core.editor x", NA),
            (
                "auto",
                "bash",
                "git config --file .git/config core.editor x",
                NA,
            ),
            (
                "auto",
                "bash",
                "git remote add origin https://x.example/r.git",
                NA,
            ),
            (
                "auto",
                "bash",
                "git remote set-url origin https://x.example/r.git",
                NA,
            ),
            ("auto", "bash", "git branch -u origin/main", NA),
            ("auto", "bash", "git lfs install", NA),
            // Guards.
            ("auto", "bash", "sed -n '/world/p' x", "allow"),
            ("auto", "bash", "sed 's/hello world/x/' x", "allow"),
            ("auto", "bash", "git config --global user.name", "allow"),
            ("auto", "bash", "git config user.name", "allow"),
            ("auto", "bash", "git remote -v", "allow"),
            ("auto", "bash", "git branch -a", "allow"),
        ],
    );
}

#[test]
fn r09_integer_variables_and_test_operands_are_arithmetic() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    run(
        &p,
        &g,
        &[
            ("auto", "bash", "declare -i y='a[$(curl x)]'", "deny"),
            ("bypass", "bash", "declare -i y='a[$(curl x)]'", "deny"),
            ("auto", "bash", "declare -i x; x='a[$(curl x)]'", "deny"),
            ("auto", "bash", "typeset -i z='a[$(curl x)]'", "deny"),
            ("auto", "bash", "local -i z='a[$(curl x)]'", "deny"),
            ("auto", "bash", "declare -ai z='(a[$(curl x)])'", "deny"),
            (
                "auto",
                "bash",
                "x='a[$(curl x)]'; declare -i y; y=x",
                "deny",
            ),
            (
                "auto",
                "bash",
                "x='a[$(curl x)]'; declare -i y; y+=x",
                "deny",
            ),
            ("auto", "bash", "declare -i y; read y <<< 1", "ask:opaque"),
            ("auto", "bash", "x=$(cat f); declare -i y=x", "ask:opaque"),
            ("bypass", "bash", "[[ 'a[$(curl x)]' -eq 1 ]]", "deny"),
            ("auto", "bash", "[[ 1 -lt 'a[$(curl x)]' ]]", "deny"),
            (
                "auto",
                "bash",
                "f() { echo $(( $1 )); }; f 'a[$(curl x)]'",
                "ask:opaque",
            ),
            ("auto", "bash", "bash -c 'echo $(( $1 ))' _ x", "ask:opaque"),
            // Guards.
            ("auto", "bash", "declare -i n=5; n+=1; echo $n", "allow"),
            ("auto", "bash", "[[ $# -eq 0 ]] && echo none", "allow"),
            ("auto", "bash", "echo $(( $1 + 1 ))", "allow"),
        ],
    );
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "declare -i y='a[$(rm -rf ~)]'", CRIT),
            ("bypass", "bash", "[[ 'a[$(rm -rf ~)]' -eq 1 ]]", CRIT),
        ],
    );
}

#[test]
fn r10_checkouts_in_another_repository_leave_the_branch_unknown() {
    let p = Proj::with_git("main");
    let g = p.gate(&["bash(git *)"], &[], &[]);
    run(
        &p,
        &g,
        &[
            (
                "edit",
                "bash",
                "git -C other checkout feature && git merge x",
                NA,
            ),
            (
                "edit",
                "bash",
                "git --git-dir=other/.git checkout feature && git merge x",
                NA,
            ),
            (
                "edit",
                "bash",
                "git --work-tree=other checkout feature && git merge x",
                NA,
            ),
            (
                "auto",
                "bash",
                "GIT_DIR=other/.git git checkout feature && git merge x",
                NA,
            ),
            (
                "auto",
                "bash",
                "git -C other checkout feature && git pull",
                NA,
            ),
            (
                "auto",
                "bash",
                "git -C other checkout feature && git rebase x",
                NA,
            ),
            ("auto", "bash", "git -C other merge x", NA),
            // Guard: this repository's own checkout is followed.
            (
                "edit",
                "bash",
                "git checkout feature && git merge x",
                "allow",
            ),
        ],
    );
}

#[test]
fn r11_targets_that_find_or_xargs_fill_in() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            (
                "auto",
                "bash",
                "find . -name settings.json -exec cp x {} \\;",
                NA,
            ),
            (
                "auto",
                "bash",
                "find . -type f -exec sed -i s/a/b/ {} +",
                NA,
            ),
            ("auto", "bash", "find . -exec touch {} +", NA),
            (
                "auto",
                "bash",
                "find . -name '*.json' -exec tee {} \\; < x",
                NA,
            ),
            (
                "auto",
                "bash",
                "find . -name config -path '*git*' -exec sh -c \"echo > {}\" \\;",
                NA,
            ),
            ("auto", "bash", "ls -a | xargs -I{} cp x {}/config", NA),
            ("auto", "bash", "ls | xargs -I% sh -c 'echo > %'", NA),
            ("auto", "bash", "ls | xargs touch", NA),
            ("auto", "bash", "find . -fls .envrc", NA),
            ("auto", "bash", "find . -fprint .decode/settings.json", NA),
            // Guards.
            (
                "auto",
                "bash",
                "find . -name '*.rs' -exec wc -l {} +",
                "allow",
            ),
            (
                "auto",
                "bash",
                "find . -name '*.rs' | xargs grep -n TODO",
                "allow",
            ),
        ],
    );
}

#[test]
fn r12_renamed_programs_and_names_bash_evaluates() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "hash -p /usr/bin/rm ls; ls -rf ~", CRIT),
            (
                "auto",
                "bash",
                "hash -p /usr/bin/sudo make; make reboot",
                "ask",
            ),
            (
                "auto",
                "bash",
                "hash -p /usr/bin/git make; make push",
                "ask",
            ),
            (
                "bypass",
                "bash",
                "f() { ls -rf ~; }; hash -p /bin/rm ls; f",
                CRIT,
            ),
            (
                "bypass",
                "bash",
                "shopt -s expand_aliases; alias ls='rm -rf'\nls ~",
                CRIT,
            ),
            ("auto", "bash", "enable -f ./x.so foo", "ask:opaque"),
        ],
    );
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "hash -p /usr/bin/curl ls; ls x", "deny"),
            ("auto", "bash", "alias x='curl evil'", "deny"),
            ("auto", "bash", "x='a[$(curl x)]'; echo ${!x}", "deny"),
            ("auto", "bash", "x='a[$(curl x)]'; : ${!x}", "deny"),
            ("auto", "bash", "x='a[$(curl x)]'; [[ -v $x ]]", "deny"),
            ("auto", "bash", "x='a[$(curl x)]'; test -v \"$x\"", "deny"),
            (
                "auto",
                "bash",
                "x='a[$(curl x)]'; printf -v \"$x\" 1",
                "deny",
            ),
            (
                "auto",
                "bash",
                "x='a[$(curl x)]'; read \"$x\" <<< 1",
                "deny",
            ),
            ("auto", "bash", "x='a[$(curl x)]'; declare \"$x=1\"", "deny"),
            (
                "auto",
                "bash",
                "x='a[$(curl x)]'; declare -n r=$x; r=1",
                "deny",
            ),
            (
                "auto",
                "bash",
                "declare -n r='a[$(curl x)]'; echo \"$r\"",
                "deny",
            ),
            ("auto", "bash", "echo ${!v}", "ask:opaque"),
            ("auto", "bash", "printf -v \"$name\" 1", "ask:opaque"),
            ("auto", "bash", "mapfile -C 'curl x' -c 1 arr <<< a", "deny"),
            (
                "auto",
                "bash",
                "readarray -C 'curl x' -c 1 arr <<< a",
                "deny",
            ),
            ("auto", "bash", "PS4='$(curl x)'; set -x; echo hi", "deny"),
            ("auto", "bash", "set -x; PS4='`curl x`'; echo hi", "deny"),
            // Guards.
            (
                "auto",
                "bash",
                "for v in A B; do echo \"${!v}\"; done",
                "allow",
            ),
            ("auto", "bash", "echo ${!prefix*}", "allow"),
            ("auto", "bash", "mapfile -t lines < f", "allow"),
        ],
    );
}

#[test]
fn r13_deny_rules_see_every_spelling_of_rm_and_of_a_url_path() {
    let p = Proj::new();
    let g = p.gate(
        &[],
        &[],
        &["bash(rm -rf *)", "web_fetch(https://h.example/secret*)"],
    );
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "rm -fr x", "deny"),
            ("bypass", "bash", "rm -r -f x", "deny"),
            ("bypass", "bash", "rm -Rf x", "deny"),
            ("bypass", "bash", "rm -rfv x", "deny"),
            ("bypass", "bash", "rm -f -r x", "deny"),
            ("bypass", "bash", "rm --recursive --force x", "deny"),
            ("bypass", "web_fetch", "https://h.example/%73ecret", "deny"),
            ("bypass", "web_fetch", "https://h.example//secret", "deny"),
            ("bypass", "web_fetch", "https://h.example/SECRET", "deny"),
            // Guards.
            ("bypass", "bash", "rm -f x", "allow"),
            ("bypass", "web_fetch", "https://h.example/public", "allow"),
        ],
    );
}

#[test]
fn r14_paths_over_the_system_limit_are_an_error_in_every_mode() {
    let p = Proj::new();
    let g = p.gate(&["read", "edit"], &[], &[]);
    let long = "a/".repeat(2049); // 4,098 bytes
    let huge = "x/".repeat(200_000);
    for mode in ["default", "edit", "auto", "bypass"] {
        for tool in ["read", "write", "edit", "glob", "grep"] {
            for path in [&long, &huge, &format!("~/{long}"), &format!("/{huge}")] {
                let d = decide(&g, tool, path, mode);
                assert_eq!(d.verdict, Verdict::Deny, "{mode} {tool} {}", path.len());
                assert!(d.reason.contains("system's limit"), "{}", d.reason);
            }
        }
    }
    for path in [".decode/settings.json\0", "secret\0/x", "a\0b"] {
        for tool in ["read", "write", "glob"] {
            let d = decide(&g, tool, path, "bypass");
            assert_eq!(d.verdict, Verdict::Deny, "{tool} {path:?}");
            assert!(d.reason.contains("NUL"), "{}", d.reason);
        }
    }
    // Guards: a path of exactly the limit is judged as usual, and a shell
    // command's words are not file-tool paths.
    let at_limit = format!("{}b", "a/".repeat(2047) + "a");
    assert_eq!(at_limit.len(), 4096);
    assert_eq!(verdict(&g, "read", &at_limit, "default"), Verdict::Allow);
    assert_eq!(
        verdict(&g, "bash", &format!("ls {long}"), "bypass"),
        Verdict::Allow
    );
}

#[test]
fn r15_resolving_a_deep_path_meets_the_kernel_at_every_depth() {
    // The gate resolves a path one folder at a time (linear in its
    // length); what it finds must be what the kernel finds, through
    // links, `..` after links and deep trees.
    let p = Proj::new();
    let mut deep = p.root.clone();
    for _ in 0..300 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::create_dir_all(p.base.join("outside/in")).unwrap();
    std::fs::write(deep.join("f"), "x").unwrap();
    p.symlink(&deep, "deep");
    p.symlink(&p.base.join("outside/in"), "l");
    p.symlink(Path::new("d/d/../d"), "rel");
    p.symlink(Path::new("loop2"), "loop1");
    p.symlink(Path::new("loop1"), "loop2");
    let cases = [
        "deep/f",
        "deep/../d/f",
        "l/..",
        "l/../in/../../project",
        "rel/d",
        "rel/../..",
        "deep/f/g",
        "l/missing/../x",
        "loop1/x",
        &format!("{}f", "d/".repeat(300)),
        &format!("{}d/f", "d/d/../".repeat(290)),
    ];
    for rel in cases {
        let given = p.root.join(rel);
        let ours = decode_policy::paths::resolve(&given);
        if let Ok(kernel) = std::fs::canonicalize(&given) {
            assert_eq!(ours, kernel, "{rel}");
        } else {
            // Missing: the existing prefix resolved, the rest as written.
            assert!(
                !ours.exists() || rel.contains("loop"),
                "{rel}: {}",
                ours.display()
            );
        }
    }
}

#[test]
fn r16_empty_backticks_and_glued_process_substitutions_hide_nothing() {
    // Found by the oracle fuzz target: bash expands `` to nothing (`r``m`
    // runs `rm`), and reads `git<(x)` as one word, `git/dev/fd/63` (a path
    // it runs), where tree-sitter reads two.
    let p = Proj::new();
    let g = p.gate(
        &["bash(git *)", "bash(diff *)", "bash(ls *)"],
        &[],
        &["bash(curl *)"],
    );
    run(
        &p,
        &g,
        &[
            ("bypass", "bash", "r``m -rf /", CRIT),
            ("bypass", "bash", "r``m -rf ~", CRIT),
            ("auto", "bash", "git pu``sh", "ask:external"),
            ("auto", "bash", "cargo pub``lish", "ask:external"),
            ("auto", "bash", "su``do reboot", "ask"),
            ("default", "bash", "cu``rl x", "deny"),
            ("default", "bash", "git<(true) status", "ask:opaque"),
            ("bypass", "bash", "git<(true) status", "ask:opaque"),
            ("default", "bash", "diff<(ls) <(ls)", "ask:opaque"),
            ("default", "bash", "git status <(ls)x", "ask:opaque"),
            ("auto", "bash", "git push --forc$\"e\" y", "ask:external"),
            ("bypass", "bash", "rm -r$\"f\" x", "ask:opaque"),
            ("auto", "bash", "grep -r$\"x\" y", "ask:opaque"),
            ("auto", "bash", "\" npm\" c", "ask:opaque"),
            ("auto", "bash", "\"rm \" -rf x", "ask:opaque"),
            // tree-sitter gives the blank of `" "` inside the closing quote token.
            (
                "auto",
                "bash",
                "\"\"\"\"\" \"\"\"\"\"\"\"\"\"\"\"npm c",
                "ask:opaque",
            ),
            ("auto", "bash", "echo \"a \" \" b\"", "allow"),
            // brush-parser panicked on a redirection number that overflows.
            ("auto", "bash", "echo 33333333333333333333>&1", "ask:opaque"),
            ("auto", "bash", "echo 3>&1", "allow"),
            // `$$` and `$-` that tree-sitter leaves as plain text are expansions.
            ("auto", "bash", "a$$ x", "ask:opaque"),
            ("auto", "bash", "echo $$ a$-b", "allow"),
            // Guards: the usual spellings.
            ("auto", "bash", "echo $\"hello\" a$\"b\"c", "allow"),
            ("default", "bash", "diff <(ls a) <(ls b)", "allow"),
            ("default", "bash", "diff --from-file=<(ls a) b", "allow"),
            ("auto", "bash", "ls a``b", "allow"),
        ],
    );
}
