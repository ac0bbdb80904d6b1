//! `decode settings` (docs/permissions.md, "Settings levels"): the rules that apply
//! in a project, merged from every level, each with its level and file and whether
//! it counts now; and the modes the managed settings turned off.

use std::process::ExitCode;

use decode_core::dirs::Dirs;
use serde_json::json;

use super::open_state;
use crate::cli::SettingsArgs;
use crate::output;

pub fn run(args: SettingsArgs, dirs: &Dirs) -> ExitCode {
    let state = match open_state(args.project.as_deref(), &args.select, dirs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let rules = state.leveled_rules();
    let levels = state.levels();
    let disabled: Vec<String> = levels
        .disabled_modes()
        .iter()
        .map(|m| m.to_string())
        .collect();
    let problems: Vec<String> = state
        .settings_problems()
        .iter()
        .map(|w| w.to_string())
        .collect();
    if args.json {
        let v = json!({
            "project": state.project_root().display().to_string(),
            "trusted": state.trusted(),
            "rules": rules,
            "disabled_modes": disabled,
            "allow_managed_rules_only": levels.managed.allow_managed_rules_only,
            "problems": problems,
        });
        output::json(&v.to_string());
        return ExitCode::SUCCESS;
    }
    let mut s = format!(
        "project: {} ({})\n",
        state.project_root().display(),
        if state.trusted() {
            "trusted"
        } else {
            "not trusted"
        }
    );
    if !disabled.is_empty() {
        s.push_str(&format!(
            "turned off by the managed settings: {} mode\n",
            disabled.join(", ")
        ));
    }
    if levels.managed.allow_managed_rules_only {
        s.push_str("the managed settings allow only their own allow rules\n");
    }
    for p in &problems {
        s.push_str(&format!("problem: {p}\n"));
    }
    if rules.is_empty() {
        s.push_str("no rules at any level\n");
    } else {
        let width = rules
            .iter()
            .map(|r| r.rule.chars().count())
            .max()
            .unwrap_or(0);
        for r in &rules {
            let mut line = format!("{:5}  {:width$}  {:9}  {}", r.list, r.rule, r.level, r.file);
            if let Some(why) = &r.ignored {
                line.push_str(&format!("   (ignored: {why})"));
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
    output::out(s.trim_end());
    ExitCode::SUCCESS
}
