//! Whether `decode hook` is installed in Claude Code's and Gemini CLI's user settings,
//! and where it points (`decode doctor`, docs/hooks.md): a hook whose program is not
//! found is skipped silently by Claude Code, so the doctor says so.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::cli::HookAgent;

/// One agent's user settings file and the `decode hook` commands in it.
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    /// `claude-code` or `gemini-cli`.
    pub agent: &'static str,
    /// The settings file looked at.
    pub settings: PathBuf,
    /// The `decode hook` commands found in its pre-tool-use hooks.
    pub hooks: Vec<HookEntry>,
    /// Why the file could not be read (missing files are not a problem).
    pub problem: Option<String>,
}

/// One hook command that runs `decode hook`.
#[derive(Debug, Clone, Serialize)]
pub struct HookEntry {
    /// The command as configured.
    pub command: String,
    /// The hook's matcher (`*` or empty: every tool).
    pub matcher: String,
    /// The program the command starts.
    pub program: String,
    /// The program found: absolute as written, or where `PATH` finds it now (the
    /// agent's own `PATH` may differ).
    pub resolved: Option<PathBuf>,
    /// The program is this very `decode`.
    pub this_decode: bool,
    /// What is wrong with the entry, if anything.
    pub warnings: Vec<String>,
}

/// Claude Code's and Gemini CLI's user settings, as they stand.
pub fn installed(home: &Path) -> Vec<Installed> {
    let claude_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".claude"));
    vec![
        look(HookAgent::ClaudeCode, &claude_dir.join("settings.json")),
        look(HookAgent::GeminiCli, &home.join(".gemini/settings.json")),
    ]
}

fn look(agent: HookAgent, settings: &Path) -> Installed {
    let (name, event) = match agent {
        HookAgent::ClaudeCode => ("claude-code", "PreToolUse"),
        HookAgent::GeminiCli => ("gemini-cli", "BeforeTool"),
    };
    let mut out = Installed {
        agent: name,
        settings: settings.to_path_buf(),
        hooks: Vec::new(),
        problem: None,
    };
    let text = match decode_policy::paths::read_small_file(settings, 1 << 20) {
        Ok(t) => t,
        Err(e) if e.is_missing() => return out,
        Err(e) => {
            out.problem = Some(format!("cannot read it: {e}"));
            return out;
        }
    };
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            out.problem = Some(format!("not valid JSON: {e}"));
            return out;
        }
    };
    let this = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    for group in v["hooks"][event].as_array().into_iter().flatten() {
        let matcher = group["matcher"].as_str().unwrap_or("").to_string();
        for h in group["hooks"].as_array().into_iter().flatten() {
            let Some(command) = h["command"].as_str() else {
                continue;
            };
            let words = shell_words(command);
            let Some(at) = words
                .windows(2)
                .position(|w| w[0] == "hook" && (w[1] == "claude-code" || w[1] == "gemini-cli"))
            else {
                continue;
            };
            let program = words.first().cloned().unwrap_or_default();
            let resolved = resolve(&program);
            let mut warnings = Vec::new();
            if words[at + 1] != name {
                warnings.push(format!(
                    "it answers as {} in {name}'s settings: use `hook {name}`",
                    words[at + 1]
                ));
            }
            if !Path::new(&program).is_absolute() {
                warnings.push(format!(
                    "`{program}` is found through PATH: if the agent's PATH lacks it, the hook is skipped{}; write its absolute path",
                    if agent == HookAgent::ClaudeCode {
                        " silently"
                    } else {
                        " (Gemini CLI then blocks every call)"
                    }
                ));
            }
            match &resolved {
                None => warnings.push(format!("`{program}` is not found")),
                Some(p) if !is_executable(p) => {
                    warnings.push(format!("{} is not executable", p.display()))
                }
                Some(_) => {}
            }
            if !matcher.is_empty() && matcher != "*" && matcher != ".*" {
                warnings.push(format!(
                    "its matcher `{matcher}` sends only some tools to Decode (use \"*\")"
                ));
            }
            let this_decode = match (&resolved, &this) {
                (Some(r), Some(t)) => r.canonicalize().is_ok_and(|r| &r == t),
                _ => false,
            };
            out.hooks.push(HookEntry {
                command: command.to_string(),
                matcher: matcher.clone(),
                program,
                resolved,
                this_decode,
                warnings,
            });
        }
    }
    out
}

/// The words of a hook command, quotes removed (enough to find its program).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    any = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn resolve(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    let p = Path::new(program);
    if program.contains('/') {
        return p.exists().then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(program))
            .find(|c| c.is_file())
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_a_command() {
        assert_eq!(
            shell_words("/usr/bin/decode hook claude-code"),
            ["/usr/bin/decode", "hook", "claude-code"]
        );
        assert_eq!(
            shell_words("'/opt/my tools/decode' hook  gemini-cli --mode default"),
            [
                "/opt/my tools/decode",
                "hook",
                "gemini-cli",
                "--mode",
                "default"
            ]
        );
        assert_eq!(shell_words(r#""/a\"b" x\ y"#), [r#"/a"b"#, "x y"]);
    }
}
