//! The offline demo (docs/window.md, "First run"): a scratch copy of a tiny sample
//! project (in the cache folder) and a script for the script provider that walks through the gate — an
//! ask, an always-allow, a call the saved rule lets through, a denial with feedback
//! and a plan approval — with no key and no network.

use std::io;
use std::path::{Path, PathBuf};

/// The sample project's files: `(path, contents, executable)`.
const FILES: &[(&str, &str, bool)] = &[
    (
        "README.md",
        "# greet\n\nA tiny shell project for Decode's offline demo.\n\n\
         - `greet.sh NAME` prints a greeting.\n- `./test.sh` checks it.\n",
        false,
    ),
    (
        "greet.sh",
        "#!/bin/sh\n# Prints a greeting for the name given (default: world).\necho \"Hello, ${1:-world}!\"\n",
        true,
    ),
    (
        "test.sh",
        "#!/bin/sh\nset -e\nout=$(sh greet.sh Decode)\n[ \"$out\" = \"Hello, Decode!\" ]\necho \"1 test passed\"\n",
        true,
    ),
];

/// The script the demo's model replays (the script provider's format).
fn script() -> serde_json::Value {
    serde_json::json!({
        "model": "offline-demo",
        "turns": [
            {
                "text": "This is Decode's offline demo: I am a scripted model, and every tool call I make goes through the permission gate.\n\nFirst I run the project's tests. Running a command is not a read, so in **default** mode the gate asks you. Choose **Always allow**: Decode saves a rule for exactly this command to `.decode/settings.json`.",
                "tool_calls": [{"name": "bash", "input": {"command": "./test.sh"}}]
            },
            {
                "text": "The same command again: the rule you saved covers it, so it runs without asking.",
                "tool_calls": [{"name": "bash", "input": {"command": "./test.sh"}}]
            },
            {
                "text": "Now I read the greeting and try to change it. Reads run without asking; edits ask in default mode. This time choose **Deny** and type a reason in the feedback box: it comes back to me as the tool's result.",
                "tool_calls": [{"name": "read", "input": {"path": "greet.sh"}}, {"name": "edit", "input": {
                    "path": "greet.sh",
                    "old_string": "Hello, ${1:-world}!",
                    "new_string": "Hi there, ${1:-world}!"
                }}]
            },
            {
                "text": "You said no, so nothing changed. I will plan instead: plan mode lets me read and think, never edit.",
                "tool_calls": [{"name": "enter_plan_mode", "input": {}}]
            },
            {
                "text": "Here is my plan. Approve it (and pick the mode to continue in), or keep me planning with feedback.",
                "tool_calls": [{"name": "exit_plan_mode", "input": {
                    "plan": "## Plan\n\n1. Keep `Hello, NAME!` as the greeting (you denied the change).\n2. Add a second test for the default name in `test.sh`.\n3. Run `./test.sh` (your saved rule allows it)."
                }}]
            },
            {
                "text": "That was the tour: an ask, an always-allow rule that then let the same command through, a denial whose reason reached me, and a plan you approved. The rule is listed in **Settings → Rules**, marked as saved by \"always allow\", where you can revoke it. Set up a real provider in Settings to work on your own projects."
            }
        ]
    })
}

/// Where demo projects go: `$XDG_CACHE_HOME/decode/demo` (default
/// `~/.cache/decode/demo`). Not Decode's config or data folder: the gate protects
/// those, and the demo must show the gate as it judges an ordinary project.
pub fn base_dir(home: &Path, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".cache"))
        .join("decode")
        .join("demo")
}

/// Creates a fresh scratch copy of the sample project and its script in `base`
/// (see [`base_dir`]); returns `(project folder, script file)`.
pub fn create(base: &Path) -> io::Result<(PathBuf, PathBuf)> {
    let base = base.to_path_buf();
    std::fs::create_dir_all(&base)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let project = base.join(format!("greet-{stamp}"));
    std::fs::create_dir(&project)?;
    for (name, text, exec) in FILES {
        let path = project.join(name);
        std::fs::write(&path, text)?;
        if *exec {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    let script_path = base.join(format!("greet-{stamp}.script.json"));
    let text = serde_json::to_string_pretty(&script()).map_err(io::Error::other)?;
    std::fs::write(&script_path, text)?;
    tracing::info!(project = %project.display(), "offline demo created");
    Ok((project.canonicalize()?, script_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demos_go_to_the_cache_folder_not_decodes_own() {
        let home = Path::new("/home/ada");
        assert_eq!(
            base_dir(home, |_| None),
            PathBuf::from("/home/ada/.cache/decode/demo")
        );
        assert_eq!(
            base_dir(home, |k| (k == "XDG_CACHE_HOME").then(|| "/var/c".into())),
            PathBuf::from("/var/c/decode/demo")
        );
        assert_eq!(
            base_dir(home, |k| (k == "XDG_CACHE_HOME").then(|| "rel".into())),
            PathBuf::from("/home/ada/.cache/decode/demo")
        );
        for app in decode_policy::PolicyInput::app_dirs_for(home) {
            assert!(!base_dir(home, |_| None).starts_with(app));
        }
    }

    #[test]
    fn the_script_parses_and_the_project_is_complete() {
        let data = tempfile::tempdir().unwrap();
        let (project, script) = create(&data.path().join("demo")).unwrap();
        for (name, _, _) in FILES {
            assert!(project.join(name).is_file(), "{name}");
        }
        let parsed: crate::providers::script::Script =
            serde_json::from_str(&std::fs::read_to_string(script).unwrap()).unwrap();
        assert_eq!(parsed.turns.len(), 6);
        let out = std::process::Command::new("sh")
            .arg("test.sh")
            .current_dir(&project)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1 test passed\n");
    }
}
