//! `decode check` (README, "Command line"): the gate's verdict, reason and trace for one call, or a
//! stream of calls with `--batch`. Never runs anything.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_core::state::{parse_mode, ActiveState};
use decode_policy::{Call, Decision, Mode, Stage};
use serde::Deserialize;

use super::{call_from_name, open_state};
use crate::cli::CheckArgs;
use crate::output;

pub fn run(args: CheckArgs, dirs: &Dirs) -> ExitCode {
    // Usage errors first, so they are the only line on stderr.
    let single = match (&args.tool, &args.subject) {
        _ if args.batch => None,
        (Some(tool), Some(subject)) => match call_from_name(tool, subject) {
            Ok(call) => Some(call),
            Err(line) => return output::usage_error(&line),
        },
        _ => return output::usage_error("decode: check needs a TOOL and a SUBJECT (or --batch)"),
    };
    let state = match open_state(args.project.as_deref(), &args.select, dirs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let Some(call) = single else {
        return batch(
            &state,
            args.select.agent.as_deref(),
            args.select.mode.is_some(),
        );
    };
    // A host is judged by name, then by what it resolves to (docs/network.md) when
    // that could change the verdict (not in bypass mode without a rule naming an
    // address: nothing is looked up).
    let addresses_matter = state.gate().addresses_matter(state.mode());
    let judged =
        decode_engine::net::decide_host_blocking(&|c| state.decide(c), call, addresses_matter);
    let (call, decision) = (judged.call, judged.decision);
    if args.explain {
        output::out(&explain(&decision));
    } else if args.json {
        match serde_json::to_string(&decision) {
            Ok(json) => output::json(&json),
            Err(e) => {
                output::err(&format!("decode: could not encode the verdict: {e}"));
                return ExitCode::FAILURE;
            }
        }
    } else {
        output::out(&human(&decision, call.tool_name(), &call.subject, &state));
    }
    ExitCode::SUCCESS
}

/// One line: the verdict, what decided it (a rule, a cap, a mode, a stage) and the
/// reason: `ask · cap: external effects · git push has external effects: asks every time`.
pub fn explain(decision: &Decision) -> String {
    let decisive = decision
        .trace
        .iter()
        .rev()
        .find(|t| !(t.stage == Stage::Caps && t.result.starts_with("no cap")));
    let by = match decisive.map(|t| (t.stage, t.result.as_str())) {
        Some((Stage::Caps, r)) => format!("cap: {}", r.split(':').next().unwrap_or(r)),
        Some((Stage::NotOffered, _)) => "not offered".into(),
        Some((Stage::DenyRules, _)) => "deny rule".into(),
        Some((Stage::AskRules, _)) => "ask rule".into(),
        Some((Stage::AllowRules, _)) => "allow rule".into(),
        Some((Stage::Plan, _)) => "plan mode".into(),
        Some((Stage::Control, _)) => "control tool".into(),
        Some((stage, _)) => stage.name().replace('_', " "),
        None => "gate".into(),
    };
    let line = format!("{} · {by} · {}", decision.verdict.name(), decision.reason);
    line.lines().collect::<Vec<_>>().join(" ")
}

/// The readable form: verdict and reason first, then the trace and the fragments.
pub fn human(decision: &Decision, tool: &str, subject: &str, state: &ActiveState) -> String {
    let mut s = format!("{}: {}\n", decision.verdict.name(), decision.reason);
    let agent = state.agent();
    s.push_str(&format!(
        "  call: {}({})   mode: {}   agent: {}\n",
        tool,
        subject,
        state.mode(),
        agent.name
    ));
    if !decision.trace.is_empty() {
        s.push_str("  trace:\n");
        let width = decision
            .trace
            .iter()
            .map(|t| t.stage.name().len())
            .max()
            .unwrap_or(0);
        for (i, step) in decision.trace.iter().enumerate() {
            s.push_str(&format!(
                "    {}. {:width$}  {}\n",
                i + 1,
                step.stage,
                step.result
            ));
        }
    }
    if !decision.fragments.is_empty() {
        s.push_str("  fragments:\n");
        for f in &decision.fragments {
            let mut line = format!("    {:5}  {}", f.verdict.name(), f.text);
            if let Some(rule) = &f.rule {
                line.push_str(&format!("   [rule {rule}]"));
            }
            if let Some(cap) = &f.cap {
                line.push_str(&format!("   [cap: {cap}]"));
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
    if decision.capped {
        s.push_str("  capped: only \"allow once\" is offered\n");
    } else if !decision.always_allow_rules.is_empty() {
        s.push_str(&format!(
            "  always allow would save: {}\n",
            decision.always_allow_rules.join(", ")
        ));
    }
    s.trim_end().to_string()
}

/// One line of `--batch` input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    tool: String,
    #[serde(default)]
    subject: String,
    mode: Option<String>,
    agent: Option<String>,
}

/// Lines judged together: as many as are already waiting on stdin (a
/// script piping a file gets throughput, a hook writing one line and
/// waiting gets its answer at once).
const CHUNK: usize = 1024;
/// Below this many lines a chunk is judged on one thread.
const PARALLEL_FROM: usize = 64;

/// A gate per agent, compiled once, with the agent's default mode.
struct Gates<'s> {
    state: &'s ActiveState,
    /// The settings levels (whose managed file may turn modes off).
    levels: decode_core::Levels,
    by_agent: std::collections::HashMap<String, (std::sync::Arc<decode_policy::Gate>, Mode)>,
}

impl Gates<'_> {
    fn get(&mut self, agent: &str) -> Result<(std::sync::Arc<decode_policy::Gate>, Mode), String> {
        if let Some(g) = self.by_agent.get(agent) {
            return Ok(g.clone());
        }
        self.state.select_agent(agent).map_err(|e| e.to_string())?;
        let name = self.state.agent().name;
        let mut mode = self
            .state
            .agent()
            .effective_default_mode(self.state.trusted());
        if self.levels.mode_refusal(mode).is_some() {
            mode = Mode::Default;
        }
        let entry = (self.state.gate(), mode);
        self.by_agent.insert(agent.to_string(), entry.clone());
        self.by_agent.insert(name, entry.clone());
        Ok(entry)
    }
}

/// One parsed request, ready to judge (or the error for its line).
type Job = Result<(std::sync::Arc<decode_policy::Gate>, Mode, Call), String>;

/// JSON lines in, one JSON verdict a line out, in order. A line that is not
/// UTF-8 or not a valid request gets `{"error": "line N: …"}` and the batch
/// goes on.
fn batch(state: &ActiveState, base_agent: Option<&str>, mode_given: bool) -> ExitCode {
    let base_agent = base_agent
        .map(str::to_string)
        .unwrap_or_else(|| state.agent().name);
    let base_mode = state.mode();
    let mut gates = Gates {
        state,
        levels: state.levels(),
        by_agent: std::collections::HashMap::new(),
    };
    let base = match gates.get(&base_agent) {
        Ok((g, _)) => (g, base_mode),
        Err(e) => {
            output::err(&format!("decode: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut n = 0usize;
    let mut line = Vec::new();
    let mut seen = Seen::default();
    loop {
        // Gather the lines already waiting (at least one).
        let mut jobs: Vec<Job> = Vec::new();
        let mut eof = false;
        while jobs.len() < CHUNK {
            line.clear();
            match input.read_until(b'\n', &mut line) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    output::err(&format!("decode: could not read stdin: {e}"));
                    return ExitCode::FAILURE;
                }
            }
            n += 1;
            let text = match std::str::from_utf8(&line) {
                Ok(t) => t.trim_end_matches(['\n', '\r']),
                Err(e) => {
                    jobs.push(Err(format!(
                        "line {n}: not valid UTF-8 (at byte {})",
                        e.valid_up_to()
                    )));
                    continue;
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            jobs.push(
                parse_request(text, &mut gates, &base_agent, &base, mode_given)
                    .map_err(|m| format!("line {n}: {m}")),
            );
            if input.buffer().is_empty() {
                break;
            }
        }
        let answers = judge(jobs, &mut seen);
        for a in answers {
            if writeln!(out, "{}", decode_core::display::json_line(&a)).is_err() {
                // The reader went away: stop quietly.
                return ExitCode::SUCCESS;
            }
        }
        if out.flush().is_err() || eof {
            return ExitCode::SUCCESS;
        }
    }
}

fn parse_request(
    line: &str,
    gates: &mut Gates<'_>,
    base_agent: &str,
    base: &(std::sync::Arc<decode_policy::Gate>, Mode),
    mode_given: bool,
) -> Job {
    let req: BatchLine =
        serde_json::from_str(line).map_err(|e| format!("not a valid request: {e}"))?;
    let call = call_from_name(&req.tool, &req.subject)
        .map_err(|l| l.trim_start_matches("decode: ").to_string())?;
    let (gate, agent_mode) = match req.agent.as_deref() {
        None => (base.0.clone(), None),
        Some(a) if a == base_agent => (base.0.clone(), None),
        Some(a) => {
            let (g, m) = gates.get(a)?;
            (g, Some(m))
        }
    };
    let mode = match (&req.mode, agent_mode) {
        (Some(m), _) => parse_mode(m).map_err(|e| e.to_string())?,
        // A line naming another agent gets that agent's default mode, like `--agent` alone.
        (None, Some(m)) => m,
        (None, None) if mode_given || req.agent.is_none() => base.1,
        (None, None) => gates.get(base_agent)?.1,
    };
    if let Some(reason) = gates.levels.mode_refusal(mode) {
        return Err(reason);
    }
    Ok((gate, mode, call))
}

/// Answers already given in this batch: an identical request (same agent,
/// mode, tool and subject) gets the same answer without being judged again.
/// Bounded: cleared when full.
#[derive(Default)]
struct Seen {
    answers: std::collections::HashMap<(usize, Mode, decode_policy::Tool, String), String>,
}

/// Requests remembered before [`Seen`] starts over.
const SEEN_MAX: usize = 100_000;

/// Judges a chunk, each distinct request once, on both cores when there are
/// many, keeping the order.
fn judge(jobs: Vec<Job>, seen: &mut Seen) -> Vec<String> {
    type Key = (usize, Mode, decode_policy::Tool, String);
    let key = |job: &Job| -> Option<Key> {
        job.as_ref().ok().map(|(gate, mode, call)| {
            (
                std::sync::Arc::as_ptr(gate) as usize,
                *mode,
                call.tool,
                // MCP tools share one `Tool`: their name is part of the key.
                match &call.mcp {
                    Some(n) => format!("{n}\u{0}{}", call.subject),
                    None => call.subject.clone(),
                },
            )
        })
    };
    if seen.answers.len() > SEEN_MAX {
        seen.answers.clear();
    }
    let keys: Vec<Option<Key>> = jobs.iter().map(key).collect();
    let mut fresh: Vec<usize> = Vec::new();
    let mut first: std::collections::HashMap<&Key, usize> = std::collections::HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        match k {
            Some(k) if seen.answers.contains_key(k) => {}
            Some(k) => {
                if let std::collections::hash_map::Entry::Vacant(e) = first.entry(k) {
                    e.insert(i);
                    fresh.push(i);
                }
            }
            None => fresh.push(i),
        }
    }
    let fresh_jobs: Vec<&Job> = fresh.iter().map(|&i| &jobs[i]).collect();
    let judged = judge_all(&fresh_jobs);
    let mut by_index: std::collections::HashMap<usize, String> =
        fresh.into_iter().zip(judged).collect();
    let mut out = Vec::with_capacity(jobs.len());
    for (i, k) in keys.iter().enumerate() {
        let answer = match k {
            Some(k) => match seen.answers.get(k) {
                Some(a) => a.clone(),
                None => {
                    let a = by_index.remove(&first[k]).unwrap_or_default();
                    seen.answers.insert(k.clone(), a.clone());
                    a
                }
            },
            None => by_index.remove(&i).unwrap_or_default(),
        };
        out.push(answer);
    }
    out
}

/// Judges every job, on both cores when there are many, keeping the order.
fn judge_all(jobs: &[&Job]) -> Vec<String> {
    let one = |job: &&Job| -> String {
        let answer = match *job {
            Ok((gate, mode, call)) => serde_json::to_string(
                &decode_engine::net::decide_host_blocking(
                    &|c| gate.decide(c, *mode),
                    call.clone(),
                    gate.addresses_matter(*mode),
                )
                .decision,
            ),
            Err(message) => serde_json::to_string(&serde_json::json!({ "error": message })),
        };
        answer.unwrap_or_else(|e| format!("{{\"error\":\"could not encode: {e}\"}}"))
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if jobs.len() < PARALLEL_FROM || threads < 2 {
        return jobs.iter().map(one).collect();
    }
    let per = jobs.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(per)
            .map(|part| {
                (
                    part.len(),
                    s.spawn(move || part.iter().map(one).collect::<Vec<String>>()),
                )
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(len, h)| {
                // A decision never panics; if one did, its lines still get an answer.
                h.join().unwrap_or_else(|_| {
                    vec![r#"{"error":"the gate failed on this line"}"#.to_string(); len]
                })
            })
            .collect()
    })
}
