//! What a write or edit *would* change, as a unified diff, for the approval dialog
//! (the diff of a call that ran comes from the tool itself).
//!
//! The file is read only if it is a regular file of at most 1 MiB (never a FIFO or a
//! device, which could block); anything else previews as no diff.

use std::path::{Path, PathBuf};

use decode_policy::Tool;
use serde_json::Value;
use similar::TextDiff;

const MAX_PREVIEW_BYTES: u64 = 1 << 20;

fn target(project_root: &Path, home: &Path, path: &str) -> PathBuf {
    let p = decode_policy::paths::expand_home(path, home);
    decode_policy::paths::lexical(project_root, &p)
}

fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_PREVIEW_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn unified(shown: &str, old: Option<&str>, new: &str) -> Option<String> {
    if old == Some(new) {
        return None;
    }
    let from = if old.is_some() {
        format!("a/{shown}")
    } else {
        "/dev/null".to_string()
    };
    let text = TextDiff::from_lines(old.unwrap_or(""), new)
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{shown}"))
        .to_string();
    (!text.is_empty()).then_some(text)
}

/// The diff a `write` or `edit` call with `input` would make; `None` for other tools,
/// an unreadable file, or an edit whose `old_string` is not in the file.
pub fn preview_diff(tool: Tool, input: &Value, project_root: &Path, home: &Path) -> Option<String> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let path = s("path").or_else(|| s("file_path"))?;
    let abs = target(project_root, home, path);
    let shown = abs
        .strip_prefix(project_root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| abs.display().to_string());
    match tool {
        Tool::Write => {
            let new = s("content")?;
            let old = if abs.exists() {
                Some(read_small(&abs)?)
            } else {
                None
            };
            unified(&shown, old.as_deref(), new)
        }
        Tool::Edit => {
            let old = read_small(&abs)?;
            let from = s("old_string")?;
            let to = s("new_string").unwrap_or("");
            if from.is_empty() || !old.contains(from) {
                return None;
            }
            let all = input.get("replace_all").and_then(Value::as_bool) == Some(true);
            let new = if all {
                old.replace(from, to)
            } else {
                old.replacen(from, to, 1)
            };
            unified(&shown, Some(&old), &new)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn write_and_edit_previews() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        let d = preview_diff(
            Tool::Edit,
            &json!({"path": "a.txt", "old_string": "two", "new_string": "deux"}),
            &root,
            &root,
        )
        .unwrap();
        assert!(d.contains("-two") && d.contains("+deux"), "{d}");
        let d = preview_diff(
            Tool::Write,
            &json!({"path": "new.txt", "content": "hi\n"}),
            &root,
            &root,
        )
        .unwrap();
        assert!(d.starts_with("--- /dev/null") && d.contains("+hi"), "{d}");
        assert!(preview_diff(
            Tool::Edit,
            &json!({"path": "a.txt", "old_string": "zzz", "new_string": "y"}),
            &root,
            &root
        )
        .is_none());
        assert!(preview_diff(Tool::Bash, &json!({"command": "ls"}), &root, &root).is_none());
    }
}
