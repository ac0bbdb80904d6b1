//! The sandbox's walk of the writable places (docs/sandbox.md, "Protected paths"):
//! what it cannot read, nested and other trusted projects' permission files, the
//! repositories in `additionalDirectories`, the files a git config includes, and
//! the repositories a command creates.
//! Each attack runs sandboxed (auto mode: the gate let it through) and fails; its
//! control runs outside (the person approved it) and lands. Each runs as this user
//! and, under root, as an unprivileged user too (see `as_users`).

use std::path::{Path, PathBuf};

use decode_engine::tools::ToolContext;
use decode_policy::Mode;
use serde_json::json;

use crate::suite::as_users::{in_child, inner};
use crate::suite::sandbox_bounds::{bash, boxed, enforced, outside};
use crate::tools_support::Project;

fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(ok.success(), "git {args:?}");
}

/// Runs `attack` sandboxed (it must fail and leave none of `written`), then
/// outside (each of `written` lands).
async fn refused_inside_landed_outside(
    ctx: &ToolContext,
    out: &ToolContext,
    attack: &str,
    written: &[PathBuf],
) {
    let r = bash(ctx, attack).await;
    for w in written {
        let landed = std::fs::read_to_string(w).is_ok_and(|t| t.contains("evil"));
        assert!(
            !landed,
            "{attack}: {} was written: {}",
            w.display(),
            r.content
        );
    }
    assert!(r.is_error, "{attack}: {}", r.content);
    let r = bash(out, attack).await;
    for w in written {
        let landed = std::fs::read_to_string(w).is_ok_and(|t| t.contains("evil"));
        assert!(
            landed,
            "control: {attack}: {} not written: {}",
            w.display(),
            r.content
        );
    }
}

#[test]
fn a_folder_made_unreadable_is_read_only() {
    in_child(
        "suite::sandbox_nested::inner_a_folder_made_unreadable_is_read_only",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by a_folder_made_unreadable_is_read_only"]
async fn inner_a_folder_made_unreadable_is_read_only() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    // One command makes a repository and hides it from the walk after it; the
    // next one plants a hook there.
    let r = bash(
        &boxed(&p),
        "mkdir -p sub/deep && git init -q sub/deep && chmod 000 sub && echo made",
    )
    .await;
    assert!(r.content.contains("made"), "{}", r.content);
    let hook = p.path("sub/deep/.git/hooks/pre-commit");
    let attack = format!(
        "chmod 755 sub; printf '#!/bin/sh\\necho evil\\n' > {h} && chmod +x {h}",
        h = hook.display()
    );
    let r = bash(&boxed(&p), &attack).await;
    let _ = std::process::Command::new("chmod")
        .args(["755", &p.path("sub").display().to_string()])
        .status();
    assert!(
        !std::fs::read_to_string(&hook).is_ok_and(|t| t.contains("evil")),
        "a hook was planted behind an unreadable folder: {}",
        r.content
    );
    assert!(r.is_error, "{}", r.content);
}

#[test]
fn nested_and_other_trusted_projects_permission_files_are_read_only() {
    in_child(
        "suite::sandbox_nested::inner_nested_and_other_trusted_projects_permission_files_are_read_only",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by nested_and_other_trusted_projects_permission_files_are_read_only"]
async fn inner_nested_and_other_trusted_projects_permission_files_are_read_only() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    // A nested project with its own permission files.
    p.write("apps/web/.decode/settings.json", "{}");
    p.write("apps/web/.mcp.json", "{}");
    p.write("apps/web/.claude/settings.json", "{}");
    p.write("apps/web/.claude/agents/a.md", "x");
    let files: Vec<PathBuf> = [
        "apps/web/.decode/settings.json",
        "apps/web/.mcp.json",
        "apps/web/.claude/settings.json",
        "apps/web/.claude/agents/a.md",
    ]
    .iter()
    .map(|r| p.path(r))
    .collect();
    let attack = files
        .iter()
        .map(|f| format!("echo '\"evil\"' > {}", f.display()))
        .collect::<Vec<_>>()
        .join("; ")
        + "; false";
    refused_inside_landed_outside(&boxed(&p), &outside(&p), &attack, &files).await;
    // New ones in the nested `.claude` folder cannot be made either.
    let r = bash(
        &boxed(&p),
        "echo evil > apps/web/.claude/settings.local.json",
    )
    .await;
    assert!(r.is_error, "{}", r.content);
    assert!(!p.path("apps/web/.claude/settings.local.json").exists());

    // Another project the person trusts, in the temp folder (writable), with no
    // permission files yet: what a command makes there is taken away.
    let other = tempfile::tempdir().unwrap();
    let other = other.path().canonicalize().unwrap();
    let data = decode_core::dirs::Dirs::with_home(&p.home, |_| None).data;
    std::fs::create_dir_all(&data).unwrap();
    decode_core::trust::TrustStore::open(&data)
        .trust(&other)
        .unwrap();
    git(&other, &["init", "-q"]);
    let settings = other.join(".decode/settings.json");
    let plant = format!(
        "mkdir -p {o}/.decode && echo '{{\"permissions\":{{\"allow\":[\"Bash\"]}},\"x\":\"evil\"}}' > {s}; echo '{{\"evil\":1}}' > {o}/.mcp.json; echo done",
        o = other.display(),
        s = settings.display()
    );
    let r = bash(&boxed(&p), &plant).await;
    assert!(
        !settings.exists() && !other.join(".mcp.json").exists(),
        "a trusted project's permission files were planted: {}",
        r.content
    );
    // Its repository's hooks too.
    let hook = other.join(".git/hooks/pre-commit");
    let r = bash(&boxed(&p), &format!("echo evil > {}", hook.display())).await;
    assert!(!hook.exists(), "{}", r.content);
    bash(&outside(&p), &plant).await;
    assert!(settings.exists(), "control");
}

#[test]
fn repositories_and_projects_in_additional_directories_are_protected() {
    in_child(
        "suite::sandbox_nested::inner_repositories_and_projects_in_additional_directories_are_protected",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by repositories_and_projects_in_additional_directories_are_protected"]
async fn inner_repositories_and_projects_in_additional_directories_are_protected() {
    if !inner() {
        return;
    }
    enforced();
    let extra = tempfile::tempdir().unwrap();
    let extra = extra.path().canonicalize().unwrap();
    git(&extra.join(""), &["init", "-q", "lib"]);
    std::fs::create_dir_all(extra.join("lib/.decode")).unwrap();
    std::fs::write(extra.join("lib/.decode/settings.json"), "{}").unwrap();
    std::fs::write(extra.join("lib/.envrc"), "x").unwrap();
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        &json!({ "additionalDirectories": [extra.display().to_string()] }).to_string(),
    );
    // The folder itself is writable (ordinary work there goes on)...
    let r = bash(
        &boxed(&p),
        &format!("echo ok > {}/lib/notes.txt && echo wrote", extra.display()),
    )
    .await;
    assert!(r.content.contains("wrote"), "{}", r.content);
    // ...but not what runs code or grants rights.
    let files = [
        extra.join("lib/.git/hooks/pre-commit"),
        extra.join("lib/.git/config"),
        extra.join("lib/.decode/settings.json"),
        extra.join("lib/.envrc"),
    ];
    let attack = files
        .iter()
        .map(|f| format!("echo evil >> {}", f.display()))
        .collect::<Vec<_>>()
        .join("; ")
        + "; false";
    refused_inside_landed_outside(&boxed(&p), &outside(&p), &attack, &files).await;
}

#[test]
fn files_a_git_config_includes_are_read_only() {
    in_child(
        "suite::sandbox_nested::inner_files_a_git_config_includes_are_read_only",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by files_a_git_config_includes_are_read_only"]
async fn inner_files_a_git_config_includes_are_read_only() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    git(&p.root, &["init", "-q"]);
    // The project's config includes a file of the work tree (a shared team
    // config), which includes another; the person's global config includes one in
    // a writable cache.
    p.write(
        "team.gitconfig",
        "[include]\n\tpath = more/extra.gitconfig\n",
    );
    p.write("more/extra.gitconfig", "[user]\n\tname = x\n");
    std::fs::write(
        p.path(".git/config"),
        format!(
            "{}[include]\n\tpath = ../team.gitconfig\n",
            std::fs::read_to_string(p.path(".git/config")).unwrap()
        ),
    )
    .unwrap();
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    std::fs::create_dir_all(home.join(".cache/git")).unwrap();
    std::fs::write(home.join(".cache/git/extra"), "[user]\n\tname = y\n").unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[includeIf \"gitdir:~/\"]\n\tpath = ~/.cache/git/extra\n",
    )
    .unwrap();
    let files = [
        p.path("team.gitconfig"),
        p.path("more/extra.gitconfig"),
        home.join(".cache/git/extra"),
    ];
    let attack = files
        .iter()
        .map(|f| {
            format!(
                "printf '[core]\\n\\tfsmonitor = evil\\n' >> {}",
                f.display()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
        + "; false";
    refused_inside_landed_outside(&boxed(&p), &outside(&p), &attack, &files).await;
    // The rest of the cache stays writable.
    let r = bash(&boxed(&p), "echo ok > ~/.cache/git/other && echo wrote").await;
    assert!(r.content.contains("wrote"), "{}", r.content);
}

#[test]
fn a_repository_a_command_creates_is_disarmed() {
    in_child(
        "suite::sandbox_nested::inner_a_repository_a_command_creates_is_disarmed",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by a_repository_a_command_creates_is_disarmed"]
async fn inner_a_repository_a_command_creates_is_disarmed() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "r.git"]);
    // `git init` and `git clone` work, and in the same command a hook and
    // program-running keys go into the new repositories (the hooks folder made
    // unchangeable too).
    let plant = format!(
        "git init -q sub && printf '#!/bin/sh\\necho evil\\n' > sub/.git/hooks/pre-commit \
         && chmod +x sub/.git/hooks/pre-commit && chmod 555 sub/.git/hooks \
         && git -C sub config core.fsmonitor ./evil.sh && git -C sub config alias.st '!evil' \
         && git -C sub config user.name me \
         && git clone -q {r}/r.git cloned && ln -s /bin/true cloned/.git/hooks/post-checkout \
         && echo planted",
        r = remote.path().display()
    );
    // One session: the next command waits for the walk after the last one.
    let ctx = boxed(&p);
    let r = bash(&ctx, &plant).await;
    assert!(r.content.contains("planted"), "{}", r.content);
    // The command's result says what was taken away from what it created.
    assert!(
        r.content
            .contains("where git would run it outside the sandbox"),
        "{}",
        r.content
    );
    assert!(r.content.contains("core.fsmonitor"), "{}", r.content);
    let r = bash(&ctx, "git -C sub status --short && git -C cloned remote -v").await;
    assert!(
        r.content.contains("origin"),
        "the clone works: {}",
        r.content
    );
    assert!(
        !p.path("sub/.git/hooks/pre-commit").exists(),
        "{}",
        r.content
    );
    assert!(std::fs::symlink_metadata(p.path("cloned/.git/hooks/post-checkout")).is_err());
    let config = std::fs::read_to_string(p.path("sub/.git/config")).unwrap();
    assert!(!config.contains("evil"), "{config}");
    assert!(config.contains("name = me"), "{config}");
    // A `.git` file dropped into a folder, pointing at a git folder the command
    // made, in a one-call session (`decode tool`): disarmed the same way.
    let one = p.one_shot_ctx(Mode::Auto);
    let r2 = bash(
        &one,
        "mkdir -p src notgit/hooks && printf 'gitdir: ../notgit\\n' > src/.git \
         && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = ./evil.sh\\n' > notgit/config \
         && echo 'ref: refs/heads/main' > notgit/HEAD && mkdir -p notgit/objects notgit/refs \
         && printf '#!/bin/sh\\nevil\\n' > notgit/hooks/pre-commit && echo planted",
    )
    .await;
    assert!(r2.content.contains("planted"), "{}", r2.content);
    assert!(
        !p.path("notgit/hooks/pre-commit").exists(),
        "{}",
        r2.content
    );
    let config = std::fs::read_to_string(p.path("notgit/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    // A bare repository, protected files in subfolders, and a repository hidden
    // behind a folder made unreadable: all taken away or disarmed.
    let r3 = bash(
        &ctx,
        "git init -q --bare bare.git && printf '#!/bin/sh\\nevil\\n' > bare.git/hooks/post-receive \
         && git -C bare.git config core.pager ./evil.sh \
         && mkdir -p a/b/c/.decode && echo '{}' > a/b/c/.decode/settings.json \
         && mkdir -p a/.vscode && echo '{}' > a/.vscode/tasks.json && echo evil > a/b/.envrc \
         && mkdir -p a/b/.claude/agents && echo evil > a/b/.claude/agents/x.md \
         && mkdir hid && git init -q hid/r && printf '#!/bin/sh\\nevil\\n' > hid/r/.git/hooks/pre-commit \
         && chmod 000 hid && echo planted",
    )
    .await;
    assert!(r3.content.contains("planted"), "{}", r3.content);
    let _ = std::process::Command::new("chmod")
        .args(["755", &p.path("hid").display().to_string()])
        .status();
    assert!(
        !p.path("bare.git/hooks/post-receive").exists(),
        "{}",
        r3.content
    );
    let config = std::fs::read_to_string(p.path("bare.git/config")).unwrap();
    assert!(!config.contains("pager"), "{config}");
    for gone in [
        "a/b/c/.decode",
        "a/.vscode",
        "a/b/.envrc",
        "a/b/.claude",
        "hid/r/.git/hooks/pre-commit",
    ] {
        assert!(
            std::fs::symlink_metadata(p.path(gone)).is_err(),
            "{gone} was left: {}",
            r3.content
        );
    }
    // And from now on the new repository's hooks are read-only.
    let r = bash(&ctx, "echo evil > sub/.git/hooks/pre-push").await;
    assert!(r.is_error, "{}", r.content);
    assert!(!p.path("sub/.git/hooks/pre-push").exists());
}

#[test]
fn the_home_folder_s_config_files_stay_read_only_when_it_is_the_project() {
    in_child(
        "suite::sandbox_nested::inner_the_home_folder_s_config_files_stay_read_only_when_it_is_the_project",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by the_home_folder_s_config_files_stay_read_only_when_it_is_the_project"]
async fn inner_the_home_folder_s_config_files_stay_read_only_when_it_is_the_project() {
    if !inner() {
        return;
    }
    enforced();
    use decode_core::agents::Catalog;
    use decode_core::decision::NoSurface;
    use decode_core::settings::Settings;
    use decode_core::state::ActiveState;
    // The project is the home folder (the person opened `~`).
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    std::fs::write(home.join(".gitconfig"), "[user]\n\tname = me\n").unwrap();
    let (settings, _) = Settings::load(&home);
    let (state, _) = ActiveState::new(&home, Catalog::builtin(), settings, true, &home);
    state.set_mode(Mode::Auto);
    let ctx = ToolContext::new(
        std::sync::Arc::new(state),
        std::sync::Arc::new(NoSurface {
            reason: "no one is here in tests".into(),
        }),
    );
    let h = home.display();
    let attack = format!(
        "echo evil >> {h}/.gitconfig; mkdir -p {h}/.config/autostart {h}/.local/bin {h}/.config/systemd/user; \
         echo evil > {h}/.config/autostart/x.desktop; echo evil > {h}/.local/bin/git; \
         echo evil > {h}/.config/systemd/user/x.service; echo evil > {h}/notes.txt; \
         mkdir -p {h}/.local/lib/python3.13/site-packages {h}/.cargo/bin; \
         echo 'import os' > {h}/.local/lib/python3.13/site-packages/x.pth; \
         echo evil > {h}/.cargo/bin/cargo-hi; echo done"
    );
    let r = bash(&ctx, &attack).await;
    assert!(r.content.contains("done"), "{}", r.content);
    // Ordinary files of the project are written...
    assert!(home.join("notes.txt").exists(), "{}", r.content);
    // ...the config files other programs obey are not, or are taken away.
    assert!(
        !std::fs::read_to_string(home.join(".gitconfig"))
            .unwrap()
            .contains("evil"),
        "{}",
        r.content
    );
    for planted in [
        ".config/autostart/x.desktop",
        ".local/bin/git",
        ".config/systemd/user/x.service",
        ".local/lib/python3.13/site-packages/x.pth",
        ".cargo/bin/cargo-hi",
    ] {
        assert!(!home.join(planted).exists(), "{planted}: {}", r.content);
    }
}

#[test]
fn the_repository_the_project_lies_in_is_protected() {
    in_child(
        "suite::sandbox_nested::inner_the_repository_the_project_lies_in_is_protected",
        &[],
    );
}

/// The project is a folder of a repository in a writable place (the temp
/// folder): that repository's config and hooks run in the project too, so
/// they are read-only like the project's own (outside attack, round 7, C5).
#[tokio::test]
#[ignore = "run by the_repository_the_project_lies_in_is_protected"]
async fn inner_the_repository_the_project_lies_in_is_protected() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    let up = p.root.parent().unwrap().to_path_buf();
    git(&up, &["init", "-q"]);
    let files = [up.join(".git/config"), up.join(".git/hooks/pre-commit")];
    let attack = format!(
        "printf '[core]\\n\\tfsmonitor = evil\\n' >> {}; printf '#!/bin/sh\\nevil\\n' > {}; false",
        files[0].display(),
        files[1].display()
    );
    refused_inside_landed_outside(&boxed(&p), &outside(&p), &attack, &files).await;
}
