//! `decode agents` (docs/agents.md; README): list the catalog and validate its files.
//! Each agent is shown with the mode it gets here: in an untrusted project, a project
//! agent that declares another mode than default or plan gets default, and its allow
//! rules do not count.

use std::process::ExitCode;

use decode_core::agents::{Agent, Catalog};
use decode_core::dirs::Dirs;
use decode_core::TrustStore;
use serde_json::json;

use super::project_dir;
use crate::cli::AgentsArgs;
use crate::output;

pub fn run(args: AgentsArgs, dirs: &Dirs) -> ExitCode {
    let project = match project_dir(args.project.as_deref()) {
        Ok(p) => p,
        Err(line) => return output::usage_error(&line),
    };
    let catalog = Catalog::load(&project);
    let trusted = TrustStore::open(&dirs.data).is_trusted(&project);
    if args.json {
        let agents: Vec<_> = catalog
            .agents()
            .iter()
            .map(|a| agent_json(a, trusted))
            .collect();
        let errors: Vec<_> = catalog
            .errors()
            .iter()
            .map(|e| {
                json!({
                    "file": e.file.display().to_string(),
                    "line": e.line,
                    "key": e.key,
                    "message": e.to_string(),
                })
            })
            .collect();
        output::json(&json!({ "agents": agents, "errors": errors }).to_string());
    } else {
        output::out(&table(catalog.agents(), trusted));
    }
    for e in catalog.errors() {
        output::err(&format!("decode: invalid agent file {e}"));
    }
    if catalog.errors().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Whether the agent's own allow rules count here.
fn allow_counts(a: &Agent, trusted: bool) -> bool {
    trusted || !a.from_project()
}

fn agent_json(a: &Agent, trusted: bool) -> serde_json::Value {
    json!({
        "name": a.name,
        "description": a.description,
        "source": a.source.to_string(),
        "overrides": a.overrides,
        "tools": a.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
        "mode": a.effective_default_mode(trusted).to_string(),
        "declared_mode": a.mode.to_string(),
        "allow_ignored": !allow_counts(a, trusted),
        "allow": a.rules.allow,
        "ask": a.rules.ask,
        "deny": a.rules.deny,
        "model": a.model,
    })
}

fn table(agents: &[Agent], trusted: bool) -> String {
    use decode_core::display::one_line;
    let mut s = String::new();
    for a in agents {
        // Names and descriptions come from the project: one line each, escaped.
        let mode = a.effective_default_mode(trusted);
        if mode == a.mode {
            s.push_str(&format!("{}  (mode {mode})\n", one_line(&a.name)));
        } else {
            s.push_str(&format!(
                "{}  (mode {mode}: it declares {}, which an untrusted project's agent does not get)\n",
                one_line(&a.name),
                a.mode
            ));
        }
        s.push_str(&format!("    {}\n", one_line(&a.description)));
        s.push_str(&format!(
            "    tools: {}\n",
            a.tools
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for (list, rules) in [
            ("allow", &a.rules.allow),
            ("ask", &a.rules.ask),
            ("deny", &a.rules.deny),
        ] {
            if !rules.is_empty() {
                let note = if list == "allow" && !allow_counts(a, trusted) {
                    "   (ignored: the project is not trusted)"
                } else {
                    ""
                };
                s.push_str(&format!(
                    "    {list}: {}{note}\n",
                    one_line(&rules.join(", "))
                ));
            }
        }
        match &a.overrides {
            Some(o) => s.push_str(&format!(
                "    source: {} (overrides {})\n",
                one_line(&a.source.to_string()),
                one_line(o)
            )),
            None => s.push_str(&format!(
                "    source: {}\n",
                one_line(&a.source.to_string())
            )),
        }
    }
    s.trim_end().to_string()
}
