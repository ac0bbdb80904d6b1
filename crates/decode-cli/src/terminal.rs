//! A [`DecisionSurface`] on a terminal, for the window-less commands (`decode tool`,
//! `decode run`): asks are printed to stderr and answered on stdin, one at a time.
//!
//! [`TerminalSurface::for_cli`] gives this surface when stdin and stderr are both
//! terminals, and otherwise a [`NoSurface`] that denies every ask with a clear reason.
//!
//! The keys shown are those of the answers the request offers
//! ([`DecisionRequest::offered`]), and only those are taken.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use decode_policy::{Decision, Mode};

use decode_core::decision::{DecisionAnswer, DecisionRequest, DecisionSurface, NoSurface};
use decode_core::display::{one_line, sanitize};
use decode_protocol::{AnswerKind, Offered, Withheld};

/// Why nobody can answer when there is no terminal.
pub const NO_TERMINAL_REASON: &str =
    "there is no terminal to ask on (stdin and stderr are not both terminals)";

struct TerminalIo {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
}

/// Asks on a terminal (or any reader/writer pair, for tests).
pub struct TerminalSurface {
    io: Arc<Mutex<TerminalIo>>,
}

impl TerminalSurface {
    /// A surface reading answers from `input` and writing prompts to `output`.
    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> TerminalSurface {
        TerminalSurface {
            io: Arc::new(Mutex::new(TerminalIo { input, output })),
        }
    }

    /// The process's own terminal: prompts on stderr, answers from stdin — `None`
    /// unless both are terminals.
    pub fn stdio() -> Option<TerminalSurface> {
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Some(TerminalSurface::new(
                Box::new(std::io::BufReader::new(std::io::stdin())),
                Box::new(std::io::stderr()),
            ))
        } else {
            None
        }
    }

    /// The terminal when there is one, else a surface that answers every ask
    /// `Unavailable` with [`NO_TERMINAL_REASON`].
    pub fn for_cli() -> Arc<dyn DecisionSurface> {
        match TerminalSurface::stdio() {
            Some(t) => Arc::new(t),
            None => Arc::new(NoSurface {
                reason: NO_TERMINAL_REASON.to_string(),
            }),
        }
    }
}

/// Makes `surface` a surface of `channel`: each request that becomes current is asked
/// there (on the runtime of `handle`) and answered as `terminal`.
pub fn answer_channel(
    channel: &Arc<decode_engine::channel::DecisionChannel>,
    surface: Arc<dyn DecisionSurface>,
    handle: tokio::runtime::Handle,
) -> decode_engine::channel::ChannelSubscription {
    let weak = Arc::downgrade(channel);
    channel.subscribe(Box::new(move |event| {
        let decode_engine::channel::ChannelEvent::Pending {
            id, request, agent, ..
        } = event
        else {
            return;
        };
        let (id, request, agent, surface, weak) = (
            *id,
            request.clone(),
            agent.clone(),
            Arc::clone(&surface),
            weak.clone(),
        );
        handle.spawn(async move {
            let answer = surface.ask_as(agent.as_deref(), request).await;
            if let Some(channel) = weak.upgrade() {
                if let Err(e) = channel.answer_by(id, answer, "terminal") {
                    tracing::debug!("terminal answer not taken: {e}");
                }
            }
        });
    }))
}

#[async_trait]
impl DecisionSurface for TerminalSurface {
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer {
        self.ask_as(None, request).await
    }

    async fn ask_as(&self, agent: Option<&str>, request: DecisionRequest) -> DecisionAnswer {
        let io = Arc::clone(&self.io);
        let agent = agent.map(str::to_string);
        let work = tokio::task::spawn_blocking(move || {
            let mut io = io.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(agent) = &agent {
                writeln!(io.output, "[subagent {agent}]")?;
            }
            prompt(&mut io, &request)
        });
        match work.await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => DecisionAnswer::Unavailable {
                reason: format!("the terminal could not be used: {e}"),
            },
            Err(e) => DecisionAnswer::Unavailable {
                reason: format!("the terminal prompt failed: {e}"),
            },
        }
    }
}

const END_OF_INPUT: &str = "the terminal closed (end of input)";

fn read_line(io: &mut TerminalIo) -> std::io::Result<Option<String>> {
    io.output.flush()?;
    let mut line = String::new();
    if io.input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_string()))
}

fn unavailable_eof() -> DecisionAnswer {
    DecisionAnswer::Unavailable {
        reason: END_OF_INPUT.to_string(),
    }
}

fn feedback(io: &mut TerminalIo) -> std::io::Result<Option<String>> {
    write!(
        io.output,
        "Feedback for the agent (optional, Enter to skip): "
    )?;
    Ok(read_line(io)?.filter(|s| !s.is_empty()))
}

fn prompt(io: &mut TerminalIo, request: &DecisionRequest) -> std::io::Result<DecisionAnswer> {
    let offered = request.offered();
    match request {
        DecisionRequest::Permission {
            tool,
            subject,
            intent,
            decision,
            ..
        } => ask_permission(
            io,
            tool.name(),
            subject,
            intent.as_deref(),
            decision,
            &offered,
        ),
        DecisionRequest::RunOutside {
            command,
            cwd,
            bound,
            output,
        } => ask_run_outside(io, command, cwd, &bound.message, output, &offered),
        DecisionRequest::Network {
            host,
            port,
            command,
            cwd,
            decision,
        } => ask_network(io, host, *port, command, cwd, decision, &offered),
        DecisionRequest::Question { question, options } => ask_question(io, question, options),
        DecisionRequest::PlanApproval { plan, .. } => ask_plan_approval(io, plan, &offered),
    }
}

/// Writes every line of `text`, escaped, behind `gutter`.
fn write_behind_gutter(io: &mut TerminalIo, text: &str, gutter: &str) -> std::io::Result<()> {
    for line in sanitize(text).split('\n') {
        writeln!(io.output, "  {gutter} {line}")?;
    }
    Ok(())
}

/// Writes why the policy asks, and what "always allow" would save or why it is not
/// offered.
fn write_decision(
    io: &mut TerminalIo,
    decision: &Decision,
    offered: &Offered,
) -> std::io::Result<()> {
    writeln!(io.output, "  why: {}", one_line(&decision.reason))?;
    match offered.withheld {
        Some(Withheld::CappedCall | Withheld::CappedConnection) => {
            writeln!(io.output, "  capped: only \"allow once\" is offered")?;
        }
        // Nothing "always allow" could save: nothing to say.
        Some(Withheld::NoRule) => {}
        None if offered.offers(AnswerKind::AlwaysAllow) => writeln!(
            io.output,
            "  always allow would save: {}",
            one_line(&decision.always_allow_rules.join(", "))
        )?,
        None => {}
    }
    Ok(())
}

/// The keys of the answers `offered` offers, among `keys`, as the prompt lists them.
fn choices(offered: &Offered, keys: &[(AnswerKind, &str)]) -> String {
    keys.iter()
        .filter(|(kind, _)| offered.offers(*kind))
        .map(|(_, key)| *key)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The kind of answer a typed word names, among the allow prompts' keys.
fn allow_kind(word: &str) -> Option<AnswerKind> {
    Some(match word {
        "y" | "yes" | "o" | "once" => AnswerKind::AllowOnce,
        "s" | "session" => AnswerKind::AllowForSession,
        "a" | "always" => AnswerKind::AlwaysAllow,
        "n" | "no" | "d" | "deny" => AnswerKind::Deny,
        _ => return None,
    })
}

/// Asks `question` until one of `keys` that `offered` offers is typed (at most five
/// times); "for this session" and "always allow" keep `rules`.
fn ask_allow(
    io: &mut TerminalIo,
    question: &str,
    keys: &[(AnswerKind, &str)],
    offered: &Offered,
    rules: &[String],
) -> std::io::Result<DecisionAnswer> {
    let choices = choices(offered, keys);
    for _ in 0..5 {
        write!(io.output, "{question} {choices}: ")?;
        let Some(answer) = read_line(io)? else {
            return Ok(unavailable_eof());
        };
        let kind = allow_kind(&answer.to_ascii_lowercase())
            .filter(|k| offered.offers(*k) && keys.iter().any(|(key, _)| key == k));
        match kind {
            Some(AnswerKind::AllowOnce) => return Ok(DecisionAnswer::AllowOnce),
            Some(AnswerKind::AllowForSession) => {
                return Ok(DecisionAnswer::AllowForSession {
                    rules: rules.to_vec(),
                })
            }
            Some(AnswerKind::AlwaysAllow) => {
                return Ok(DecisionAnswer::AlwaysAllow {
                    target: None,
                    rules: rules.to_vec(),
                })
            }
            Some(AnswerKind::Deny) => {
                return Ok(DecisionAnswer::Deny {
                    feedback: feedback(io)?,
                })
            }
            _ => writeln!(io.output, "  please answer {choices}")?,
        }
    }
    Ok(DecisionAnswer::Deny {
        feedback: no_valid_answer(),
    })
}

/// What the person answers when five answers in a row were not understood.
fn no_valid_answer() -> Option<String> {
    Some("no valid answer was given".to_string())
}

fn ask_permission(
    io: &mut TerminalIo,
    tool: &str,
    subject: &str,
    intent: Option<&str>,
    decision: &Decision,
    offered: &Offered,
) -> std::io::Result<DecisionAnswer> {
    // The subject comes from the model: escaped, and every line of it
    // behind a gutter, so it can never redraw this prompt.
    writeln!(io.output, "\ndecode: permission needed for {tool}:")?;
    if let Some(intent) = intent {
        writeln!(io.output, "  the agent: {}", one_line(intent))?;
    }
    write_behind_gutter(io, subject, "│")?;
    write_decision(io, decision, offered)?;
    let keys = [
        (AnswerKind::AllowOnce, "[y] allow once"),
        (AnswerKind::AlwaysAllow, "[a] always allow"),
        (AnswerKind::Deny, "[n] deny"),
    ];
    ask_allow(io, "Allow?", &keys, offered, &decision.always_allow_rules)
}

fn ask_run_outside(
    io: &mut TerminalIo,
    command: &str,
    cwd: &str,
    bound: &str,
    output: &str,
    offered: &Offered,
) -> std::io::Result<DecisionAnswer> {
    writeln!(io.output, "\ndecode: a command hit a bound of the sandbox:")?;
    write_behind_gutter(io, command, "│")?;
    writeln!(io.output, "  in: {}", one_line(cwd))?;
    writeln!(io.output, "  bound: {}", one_line(bound))?;
    if !output.trim().is_empty() {
        writeln!(io.output, "  it printed (the end):")?;
        write_behind_gutter(io, output, "┆")?;
    }
    let keys = [
        (
            AnswerKind::AllowOnce,
            "[y] run it again outside the sandbox, once",
        ),
        (AnswerKind::Deny, "[n] no"),
    ];
    ask_allow(io, "Run it outside the sandbox?", &keys, offered, &[])
}

fn ask_network(
    io: &mut TerminalIo,
    host: &str,
    port: u16,
    command: &str,
    cwd: &str,
    decision: &Decision,
    offered: &Offered,
) -> std::io::Result<DecisionAnswer> {
    // The host and the command come from the command: escaped, behind a
    // gutter.
    writeln!(
        io.output,
        "\ndecode: a command wants to reach {}:{port}",
        one_line(host)
    )?;
    write_behind_gutter(io, command, "│")?;
    writeln!(io.output, "  in: {}", one_line(cwd))?;
    write_decision(io, decision, offered)?;
    let keys = [
        (AnswerKind::AllowOnce, "[y] allow once"),
        (AnswerKind::AllowForSession, "[s] for this session"),
        (AnswerKind::AlwaysAllow, "[a] always allow"),
        (AnswerKind::Deny, "[n] deny"),
    ];
    ask_allow(
        io,
        "Let it connect?",
        &keys,
        offered,
        &decision.always_allow_rules,
    )
}

fn ask_question(
    io: &mut TerminalIo,
    question: &str,
    options: &[String],
) -> std::io::Result<DecisionAnswer> {
    writeln!(io.output, "\ndecode: the agent asks:")?;
    write_behind_gutter(io, question, "│")?;
    for (i, o) in options.iter().enumerate() {
        writeln!(io.output, "  {}. {}", i + 1, one_line(o))?;
    }
    loop {
        if options.is_empty() {
            write!(io.output, "Your answer: ")?;
        } else {
            write!(io.output, "Your answer (a number or your own words): ")?;
        }
        let Some(answer) = read_line(io)? else {
            return Ok(unavailable_eof());
        };
        if answer.is_empty() {
            continue;
        }
        let text = match answer.parse::<usize>() {
            Ok(n) if n >= 1 && n <= options.len() => options[n - 1].clone(),
            _ => answer,
        };
        return Ok(DecisionAnswer::Answer { text });
    }
}

/// The plan prompt's keys for the modes a plan may be approved into.
const PLAN_KEYS: [(Mode, &str); 3] = [
    (Mode::Edit, "[y] approve (edit mode)"),
    (Mode::Auto, "[a] approve in auto mode"),
    (Mode::Default, "[d] approve in default mode"),
];

fn ask_plan_approval(
    io: &mut TerminalIo,
    plan: &str,
    offered: &Offered,
) -> std::io::Result<DecisionAnswer> {
    writeln!(io.output, "\ndecode: the agent presents a plan:\n")?;
    write_behind_gutter(io, plan, "│")?;
    let choices = PLAN_KEYS
        .iter()
        .filter(|(mode, _)| offered.modes.contains(mode))
        .map(|(_, key)| *key)
        .chain(["[n] reject"])
        .collect::<Vec<_>>()
        .join(", ");
    for _ in 0..5 {
        write!(io.output, "\nApprove the plan? {choices}: ")?;
        let Some(answer) = read_line(io)? else {
            return Ok(unavailable_eof());
        };
        let mode = match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "e" | "edit" => Mode::Edit,
            "a" | "auto" => Mode::Auto,
            "d" | "default" => Mode::Default,
            "n" | "no" | "r" | "reject" => {
                return Ok(DecisionAnswer::PlanRejected {
                    feedback: feedback(io)?,
                })
            }
            _ => {
                writeln!(io.output, "  please answer {choices}")?;
                continue;
            }
        };
        let answer = DecisionAnswer::PlanApproved { mode };
        if !offered.accepts(&answer) {
            writeln!(io.output, "  {mode} mode is not offered here; {choices}")?;
            continue;
        }
        return Ok(answer);
    }
    Ok(DecisionAnswer::PlanRejected {
        feedback: no_valid_answer(),
    })
}
