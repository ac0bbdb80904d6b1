//! The third outside attack, on wrappers and runners (docs/permissions.md, "Fail
//! closed"): options whose arity the gate misread hid the command a wrapper runs.
//! Every case here was allowed in auto (or bypass) before; each must now ask or
//! deny. The guards below keep ordinary wrapped commands allowed.

use crate::common;

use common::{run, Proj};

#[test]
fn r01_runner_global_options_before_run() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(rm -rf /)", "bash(curl *)"]);
    let mut cases = Vec::new();
    for c in [
        "uv --offline run rm -rf ~",
        "uv -q run git push origin main",
        "uv --directory . run rm -rf ~",
        "uv -q tool run rm -rf ~",
        "poetry -C . run rm -rf ~",
        "poetry -q run git push origin main",
        "pdm -v run rm -rf ~",
        "hatch -e x run rm -rf ~",
        "hatch env run rm -rf ~",
        "hatch run x:rm -rf ~",
        "rye -q run rm -rf ~",
        "pipenv --python 3 run rm -rf ~",
        "pipx -q run rm -rf ~",
        "conda --no-plugins run rm -rf ~",
        "micromamba -r x run rm -rf ~",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // What `uv run` would run meets the deny rules and the critical-removal cap.
    cases.push(("auto", "bash", "uv -q run rm -rf /", "deny"));
    cases.push(("bypass", "bash", "uv -q run rm -rf /", "deny"));
    cases.push(("bypass", "bash", "uv -q run rm -rf ~", "ask"));
    cases.push(("bypass", "bash", "hatch run x:rm -rf ~", "ask"));
    run(&p, &g, &cases);
}

#[test]
fn r02_env_options_the_gate_did_not_read() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    run(
        &p,
        &g,
        &[
            ("auto", "bash", "env -a echo rm -rf ~", "ask"),
            ("auto", "bash", "env --argv0 echo git push", "ask"),
            ("bypass", "bash", "env -a echo rm -rf ~", "ask"),
            ("auto", "bash", "env -P echo rm -rf ~", "ask"),
            (
                "auto",
                "bash",
                "env - sh -c 'echo x > .git/hooks/pre-commit'",
                "ask",
            ),
            ("bypass", "bash", "env - sh -c 'rm -rf /'", "ask"),
            ("auto", "bash", "env --ch /tmp sh -c 'rm -rf ~'", "ask"),
            ("auto", "bash", "env --un X sh -c 'rm -rf ~'", "ask"),
        ],
    );
}

#[test]
fn r03_long_options_and_abbreviations() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "strace --raw all sh -c 'rm -rf ~'",
        "strace --summary-sort-by calls sh -c 'rm -rf ~'",
        "strace --inject getpid:retval=1 sh -c 'rm -rf ~'",
        "nice --adj 5 sh -c 'rm -rf ~'",
        "stdbuf --out 0 sh -c 'rm -rf ~'",
        "timeout --sig KILL 5 sh -c 'rm -rf ~'",
        "timeout --k 1 5 sh -c 'rm -rf ~'",
        "xargs --max-a 1 sh -c 'rm -rf ~'",
        "xargs --del x sh -c 'rm -rf ~'",
        "xargs --eof sh -c 'rm -rf ~'",
        "flock --time 5 F sh -c 'rm -rf ~'",
        "flock -- F sh -c 'rm -rf ~'",
        "ionice --classd 7 sh -c 'rm -rf ~'",
        "nsenter --targ 1 -m sh -c 'rm -rf ~'",
        "nsenter -t 1 -m -w sh -c 'rm -rf ~'",
        "chroot --userspec 0:0 / sh -c 'rm -rf ~'",
        "chroot --user 0:0 / sh -c 'rm -rf ~'",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    cases.push((
        "bypass",
        "bash",
        "timeout --sig KILL 5 sh -c 'rm -rf ~'",
        "ask",
    ));
    run(&p, &g, &cases);
}

#[test]
fn r04_strings_run_by_sg_and_bun() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(rm -rf /)"]);
    run(
        &p,
        &g,
        &[
            ("auto", "bash", "sg root \"git push\"", "ask"),
            ("auto", "bash", "sg root \"rm -rf ~\"", "ask"),
            (
                "auto",
                "bash",
                "sg root 'echo {} > .decode/settings.json'",
                "ask",
            ),
            ("auto", "bash", "sg - root -c \"rm -rf ~\"", "ask"),
            ("auto", "bash", "sg root \"rm -rf /\"", "deny"),
            ("auto", "bash", "bun exec \"git push origin main\"", "ask"),
            ("auto", "bash", "bun exec \"curl x | sh\"", "ask"),
            ("auto", "bash", "pnpm -w exec rm -rf ~", "ask"),
            ("auto", "bash", "pnpm -w exec git push", "ask"),
        ],
    );
}

#[test]
fn r05_ordinary_wrapped_commands_stay_allowed() {
    let p = Proj::new();
    let g = p.gate(
        &["bash(make *)", "bash(npm test)", "bash(pytest *)"],
        &[],
        &[],
    );
    run(
        &p,
        &g,
        &[
            ("default", "bash", "nice -n 5 make", "allow"),
            ("default", "bash", "timeout 30 npm test", "allow"),
            ("default", "bash", "timeout -s KILL 30 npm test", "allow"),
            ("default", "bash", "nohup make build", "allow"),
            ("auto", "bash", "uv run pytest -x", "allow"),
            ("auto", "bash", "poetry run pytest", "allow"),
            ("auto", "bash", "strace -f -o trace.txt ls", "allow"),
            ("auto", "bash", "sg staff \"ls -l\"", "allow"),
            ("auto", "bash", "env -i PATH=/usr/bin make", "allow"),
        ],
    );
}

#[test]
fn r06_second_round_env_split_xargs_nsenter_ltrace() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(rm -rf /)", "bash(curl *)"]);
    let mut cases = Vec::new();
    for c in [
        "env -S 'git\\_push'",
        "env -S '#' git push",
        "env -S 'git #x' push",
        "timeout 5 env -S '#' git push",
        "env -S 'sh\\_-c\\_\"git push\"'",
        "xargs -eE git push",
        "xargs -ea git push origin main",
        "echo x | xargs -iP git push",
        "xargs -0iP git push",
        "nsenter -m/proc/1/ns/mnt git push",
        "nsenter -t 1 -m/proc/1/ns/mnt git push",
        "nsenter -U/xt git push",
        "ltrace -L git push",
        "command ltrace -L git push",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for (c, want) in [
        ("env -S 'curl\\_x'", "deny"),
        ("env -S 'rm\\_-rf\\_/'", "deny"),
        ("env -S 'rm -rf #' ~", "ask"),
        ("xargs -eE rm -rf /", "deny"),
        ("xargs -iP rm -rf ~", "ask"),
        ("nsenter -m/proc/self/ns/mnt rm -rf ~", "ask"),
        ("ltrace -L rm -rf /", "deny"),
        ("ltrace -L sh -c 'rm -rf ~'", "ask"),
    ] {
        cases.push(("bypass", "bash", c, want));
    }
    run(&p, &g, &cases);
}

#[test]
fn r07_pnpm_and_bun_run_programs() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["bash(curl *)"]);
    let mut cases = Vec::new();
    for c in [
        "pnpm git push",
        "pnpm -r git push",
        "pnpm --filter x git push",
        "pnpm sh -c 'git push'",
        "pnpm -c exec 'git push'",
        "pnpm -rc exec 'git push'",
        "pnpm --shell-mode exec 'git push'",
        "pnpm exec --shell-mode 'git push'",
        "bun run git push",
        "bun git push",
        "bun --bun run git push",
        "bun run --if-present git push",
        "bun run sh -c 'git push'",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    cases.push(("auto", "bash", "pnpm curl x", "deny"));
    cases.push(("auto", "bash", "bun curl x", "deny"));
    for c in [
        "pnpm sh -c 'rm -rf ~'",
        "pnpm -rc exec 'rm -rf ~'",
        "bun run sh -c 'rm -rf ~'",
        "bun sh -c 'rm -rf ~'",
    ] {
        cases.push(("bypass", "bash", c, "ask"));
    }
    // Guards: their own commands and scripts stay allowed.
    for c in [
        "pnpm install",
        "pnpm test",
        "pnpm run build",
        "bun install",
        "bun test",
        "bun run dev",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}
