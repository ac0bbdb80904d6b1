//! The never-automatic set at any depth (docs/permissions.md, "Protected
//! files"): permission files of any project — `.decode/**`, `.claude/agents/**`,
//! `.claude/settings*.json`, `.mcp.json` — wherever they stand, the home
//! folder's files other programs obey, Decode's own folders, and `.git`
//! internals, for the file tools and for bash writes, in every spelling.

use crate::common;

use common::{run, Proj};

/// Every file of the set, relative to the project (`{root}`) or the home
/// folder (`{home}`), as the file tools and bash name them.
const PROTECTED: &[&str] = &[
    ".decode/settings.json",
    ".decode/settings.local.json",
    ".decode/mcp.json",
    ".decode/agents/x.md",
    ".decode/new-file",
    "sub/.decode/settings.json",
    "sub/.decode/settings.local.json",
    "sub/.decode/mcp.json",
    "sub/.decode/agents/evil.md",
    "a/b/c/.decode/settings.json",
    ".claude/agents/x.md",
    "sub/.claude/agents/x.md",
    ".claude/settings.json",
    ".claude/settings.local.json",
    "sub/.claude/settings.json",
    "deep/er/.claude/settings.local.json",
    ".mcp.json",
    "sub/.mcp.json",
    "a/b/.mcp.json",
    ".git/config",
    ".git/hooks/pre-commit",
    "sub/.git/config",
    "sub/.git",
    "{home}/.bashrc",
    "{home}/.bash_logout",
    "{home}/.zlogout",
    "{home}/.kshrc",
    "{home}/.config/fish/config.fish",
    "{home}/.gitconfig",
    "{home}/.config/git/config",
    "{home}/.ssh/authorized_keys",
    "{home}/.gnupg/gpg.conf",
    "{home}/.config/autostart/x.desktop",
    "{home}/.config/systemd/user/x.service",
    "{home}/.local/share/applications/x.desktop",
    "{home}/.local/bin/ls",
    "{home}/.config/decode/settings.json",
    "{home}/.local/share/decode/trust.json",
    "/etc/decode/managed-settings.json",
    "{base}/other/.decode/settings.json",
    "{base}/other/.claude/settings.json",
    "{base}/other/.mcp.json",
];

/// Files next to them that stay ordinary.
const ORDINARY: &[&str] = &[
    "src/lib.rs",
    "docs/decode.md",
    "sub/decode/settings.json",
    "sub/.claude/notes.md",
    ".claude/commands/x.md",
    "mcp.json",
    "sub/my.mcp.json.bak",
    "notes/.gitignore",
    ".github/workflows/ci.yml",
];

fn path(p: &str) -> String {
    if p.starts_with('{') || p.starts_with('/') {
        p.to_string()
    } else {
        format!("{{root}}/{p}")
    }
}

/// The file tools: a write or edit of any of them asks in edit and auto
/// mode (never automatic), whatever the depth.
#[test]
fn file_tools_never_write_permission_files_at_any_depth() {
    let p = Proj::new();
    std::fs::create_dir_all(p.base.join("other")).unwrap();
    let g = p.gate_with(|i| {
        i.additional_directories = vec![p.base.join("other").to_string_lossy().into_owned()]
    });
    let mut cases = Vec::new();
    let subjects: Vec<String> = PROTECTED.iter().map(|s| path(s)).collect();
    for s in &subjects {
        for tool in ["write", "edit"] {
            for mode in ["edit", "auto"] {
                cases.push((mode, tool, s.as_str(), "ask:never automatic"));
            }
        }
    }
    let ordinary: Vec<String> = ORDINARY.iter().map(|s| path(s)).collect();
    for s in &ordinary {
        cases.push(("edit", "write", s.as_str(), "allow"));
        cases.push(("auto", "edit", s.as_str(), "allow"));
    }
    run(&p, &g, &cases);
}

/// Bash: a redirect, `tee`, `cp`, `mv`, `sed -i`, `touch`, `ln`, `rm`
/// naming any of them asks in edit and auto mode, as does a relative
/// spelling after `cd`, doubled slashes and `./`.
#[test]
fn bash_never_writes_permission_files_at_any_depth() {
    let p = Proj::new();
    std::fs::create_dir_all(p.root.join("sub")).unwrap();
    std::fs::create_dir_all(p.base.join("other")).unwrap();
    let g = p.gate_with(|i| {
        i.additional_directories = vec![p.base.join("other").to_string_lossy().into_owned()]
    });
    let mut lines = Vec::new();
    for s in PROTECTED {
        let t = s.to_string();
        lines.push(format!("echo '{{}}' > {t}"));
        lines.push(format!("echo x | tee -a {t}"));
        lines.push(format!("cp /tmp/x {t}"));
        lines.push(format!("sed -i s/a/b/ {t}"));
        lines.push(format!("touch {t}"));
    }
    for c in [
        "cd sub && echo '{}' > .decode/settings.json",
        "cd sub/.decode && echo '{}' > settings.local.json",
        "echo '{}' > sub//.decode//mcp.json",
        "echo '{}' > ./sub/./.claude/agents/x.md",
        "echo '{}' > sub/x/../.mcp.json",
        "mkdir -p sub/.decode/agents && echo x > sub/.decode/agents/a.md",
        "mv /tmp/evil sub/.decode",
        "cp -r /tmp/evil/.decode sub/",
        "rm -rf sub/.decode",
        "ln -s /tmp/x sub/.mcp.json",
        "echo x >> sub/.claude/settings.local.json",
        "cat > sub/.mcp.json <<'EOF'\n{}\nEOF",
        "printf x > ~/.gitconfig",
        "echo x > $HOME/.config/git/config",
        "cd ~ && echo x >> .bashrc",
        "cd ~/.config && echo x > git/config",
        "cp x ~/.local/bin/",
        "install -m 755 x ~/.local/bin/ls",
        "echo x > sub/.decode/s*",
    ] {
        lines.push(c.to_string());
    }
    let mut cases = Vec::new();
    for l in &lines {
        for mode in ["edit", "auto"] {
            cases.push((mode, "bash", l.as_str(), "ask"));
        }
    }
    for c in [
        "echo x > src/notes.txt",
        "echo x > sub/decode.json",
        "echo x > sub/mcp.json",
        "echo x > sub/.mcp.json.txt",
        "echo x > sub/.claude/settings.md",
        "cp x sub/.claude/notes.md",
        "echo x > .claude/commands/x.md",
        "grep -r mcp src",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// `git config --global` is judged by its key (docs/permissions.md): one
/// whose value git runs, an alias or an include asks; `--file` naming a
/// protected home file asks whatever the key.
#[test]
fn git_config_of_the_home_files() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "git config --global alias.st '!rm -rf ~'",
        "git config --global core.pager 'sh -c x'",
        "git config --file ~/.gitconfig user.name x",
        "git config -f ~/.config/git/config user.name x",
        "git config -f $HOME/.config/git/config user.name x",
        "git config --global user.name x",
    ] {
        cases.push(("auto", "bash", c, "ask:never automatic"));
    }
    for c in [
        "git config --global --get user.name",
        "git config --global -l",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

/// An archive extracted where the home folder's files live puts files the
/// gate cannot name there (`~/.bashrc` among them): never automatic. Into
/// the project, or a folder that holds no protected file, it runs (outside
/// attack, round 6, M3).
#[test]
fn archives_extracted_into_the_home_folder_are_never_automatic() {
    let p = common::Proj::new();
    let g = p.gate(&[], &[], &[]);
    let mut cases = Vec::new();
    for c in [
        "tar -C ~ -xf x.tar",
        "tar -xzf x.tgz --directory=$HOME",
        "cd ~ && tar xf /tmp/x.tar",
        "env -C ~ tar xf /tmp/x.tar",
        "bsdtar -C ~/.config -xf x.tar",
        "unzip -o x.zip -d ~",
        "7z x x.7z -o$HOME",
        "cpio -idm -D ~ < x.cpio",
        "cd ~ && cpio -i < x.cpio",
        "cd ~ && ar x lib.a",
        "cd ~ && pax -r -f a.pax",
        "find . | cpio -pdm ~",
        "patch -d ~ -p1 < /tmp/x.patch",
        "cd ~ && patch -p1 < /tmp/x.patch",
        "dpkg-deb -x x.deb ~",
        "unsquashfs -d ~ x.sqfs",
        "cabextract -d ~ x.cab",
        "unar -o ~ x.zip",
        "unrar x x.rar ~/",
        "cd ~ && jar xf /tmp/x.jar",
    ] {
        cases.push(("auto", "bash", c, "ask:protected file"));
    }
    for c in [
        "tar xzf x.tgz",
        "tar -C build -xf x.tar",
        "unzip x.zip -d /tmp/out",
        "unzip x.zip",
        "cpio -idm < x.cpio",
        "cpio -o < list > x.cpio",
        "ar t lib.a",
        "patch -p1 < fix.patch",
        "jar tf x.jar",
        "dpkg-deb -c x.deb",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    common::run(&p, &g, &cases);
}
