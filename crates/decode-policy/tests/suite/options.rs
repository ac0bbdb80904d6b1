//! Options read by the one scanner (docs/permissions.md, "Fail closed"): a
//! short-option cluster (`-vt DIR`, `-sSLo FILE`) or an option the gate reads
//! as taking a value when it takes none (`touch -m`) no longer hides where a
//! command writes, and an unknown option before a sub-command no longer hides
//! it. Every case that must ask was allowed in auto before.

use crate::common;

use common::{run, Proj};

#[test]
fn writes_named_in_option_clusters_are_placed() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "touch -m $D/x",
        "touch -am $D",
        "truncate -s0 -o $D",
        "tee --output-error $D",
        "cp -vt $D src",
        "cp -vt$D src",
        "mv -ft $D src",
        "install -vt $D src",
        "install -vd $D",
        "rsync -t src $D",
        "curl -sSLo $D https://example.com/x",
        "curl -sS --out=$D https://example.com/x",
        "sort -uo $D f",
        "wget -qO $D https://example.com/x",
        "wget -nv -O$D https://example.com/x",
        "tar -xzC $D -f a.tgz",
        "tar xzCf $D a.tgz",
        "unzip -od $D a.zip",
        "7z x a.7z -o$D",
        "sed -nf script.sed f",
        "cp -vT src $D",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    // What the options say stays understood: these are placed in the project.
    for c in [
        "touch -m src/x",
        "cp -vt out src",
        "curl -sSLo out.json https://example.com/x",
        "sort -uo out.txt in.txt",
        "tar -xzC out -f a.tgz",
        "mkdir -pm 700 out",
        "sed -i -e s/a/b/ src/f",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

#[test]
fn writes_to_protected_files_through_clusters_ask() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "curl -sSo .git/hooks/pre-commit https://example.com/x",
        "cp -vt .git/hooks hook",
        "wget -qO.decode/settings.json https://example.com/x",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

#[test]
fn sub_commands_after_unknown_global_options_are_capped() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "docker --unknown x rm c1",
        "docker --tlsverify container rm c1",
        "docker -D system prune",
        "podman --log-level debug volume rm v",
        "git --bogus x push",
        "git -C . --no-pager push",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "docker --tlsverify ps",
        "git --no-pager log",
        "git -C . status",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

#[test]
fn wrappers_that_move_the_command_are_followed() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    // A critical removal is one in auto and bypass alike, wherever a wrapper
    // moved the command.
    for c in [
        "uv run --directory / rm -rf home",
        "uv tool run --directory / rm -rf home",
        "poetry run -C / rm -rf home",
        "poetry run --directory / rm -rf home",
        "conda run --cwd / rm -rf home",
        "systemd-run --working-directory=/ rm -rf home",
        "unshare -w / rm -rf home",
        "unshare --root=/mnt rm -rf home",
        "chroot /mnt rm -rf home",
        "nsenter -t 1 -m rm -rf home",
        "firejail --private-cwd=/ rm -rf home",
        "sudo -D / rm -rf home",
        "npm --prefix / exec rm -rf home",
        "pnpm -C / exec rm -rf home",
        "yarn --cwd / exec rm -rf home",
        "env -C / env -C . rm -rf home",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "ask"));
    }
    // Moved into the project, nothing critical is removed.
    for c in [
        "uv run --directory sub rm -rf build",
        "poetry run -C sub rm -rf build",
        "env -C sub rm -rf build",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}
