//! Native dialogs: a pending decision shown outside the webview while the
//! window is hidden, minimised or unfocused (docs/window.md, "Native dialogs").
//!
//! A native message box has at most three buttons, so a permission ask offers
//! Allow once, Always allow and Deny, each where the request offers it (what the
//! channel's event carries: `DecisionRequest::offered`); a question or a plan shows
//! its text with "Open Decode" and "Later". Each dialog runs in a
//! child process (`decode-window native-dialog`, the same binary) so that it can be
//! closed from outside: when another surface answers first, the child is
//! killed and its dialog disappears. The decision channel takes the first
//! answer and refuses the rest, so an answer is never given twice or lost.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use decode_core::display::{one_line, sanitize};
use decode_engine::channel::DecisionChannel;
use decode_policy::{Decision, Tool};
use decode_protocol::{AnswerKind, DecisionAnswer, DecisionId, DecisionRequest, Offered, Withheld};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

/// The longest text a dialog shows of a subject, question or plan.
const MAX_BODY_CHARS: usize = 1200;

/// What one native dialog shows, and what each button means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NativeDialog {
    pub title: String,
    pub body: String,
    pub buttons: Vec<Button>,
}

/// One button of a native dialog.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Button {
    pub label: &'static str,
    pub choice: Choice,
}

/// What pressing a button does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Choice {
    /// Answers the decision.
    Answer(DecisionAnswer),
    /// Shows the window (where the question or plan is answered).
    OpenWindow,
    /// Leaves the decision pending in the window.
    Later,
}

/// What the child process is given on stdin.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DialogSpec {
    pub title: String,
    pub body: String,
    pub buttons: Vec<String>,
    /// A folder picker instead of a message box, starting in this folder: the
    /// child prints the folder chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick_folder: Option<PathBuf>,
}

/// The most lines of a subject, question or plan a dialog shows, and the most
/// characters of one line: a dialog always fits on the screen with its buttons.
const MAX_BODY_LINES: usize = 24;
const MAX_LINE_CHARS: usize = 240;

/// `text` cut to fit a dialog: at most [`MAX_BODY_LINES`] lines of at most
/// [`MAX_LINE_CHARS`] characters, saying how much was left out.
fn fit(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_BODY_LINES)
        .map(|l| cut(l, MAX_LINE_CHARS))
        .collect();
    if lines.len() > MAX_BODY_LINES {
        out.push(format!(
            "… {} more lines (open Decode to see them all)",
            lines.len() - MAX_BODY_LINES
        ));
    }
    out.join("\n")
}

/// The first line of a dialog whose text holds invisible or reordering characters.
const HIDDEN_NOTE: &str =
    "⚠ This request holds invisible or reordering characters, shown below as escapes (\\u{…}).\n\n";

fn cut(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

impl DialogSpec {
    fn message_box(&self) -> crate::message_box::MessageBox<'_> {
        crate::message_box::MessageBox {
            title: &self.title,
            body: &self.body,
            buttons: &self.buttons,
        }
    }
}

/// The dialog for a pending request in the project `project` (what it offers derived
/// from it).
#[cfg(test)]
pub(crate) fn dialog_for(request: &DecisionRequest, project: &str) -> NativeDialog {
    dialog_offering(request, &request.offered(), project)
}

/// The dialog for a pending request that offers `offered`, in the project `project`:
/// a button for each answer it offers that a dialog can give. Every piece of text
/// from the model or the project is shown with controls escaped.
pub(crate) fn dialog_offering(
    request: &DecisionRequest,
    offered: &Offered,
    project: &str,
) -> NativeDialog {
    let project = one_line(project);
    match request {
        DecisionRequest::Permission {
            tool,
            subject,
            intent,
            decision,
            cwd,
            ..
        } => permission_dialog(
            &project,
            *tool,
            subject,
            intent.as_deref(),
            decision,
            cwd.as_deref(),
            offered,
        ),
        DecisionRequest::Question { question, options } => {
            question_dialog(&project, question, options)
        }
        DecisionRequest::PlanApproval { plan, .. } => plan_dialog(&project, plan),
        DecisionRequest::RunOutside {
            command,
            cwd,
            bound,
            ..
        } => run_outside_dialog(&project, command, cwd, &bound.message, offered),
        DecisionRequest::Network {
            host,
            port,
            command,
            cwd,
            decision,
        } => network_dialog(&project, host, *port, command, cwd, decision, offered),
    }
}

/// "Allow once", "Always allow" where the request offers it (the body then says
/// what it saves) and "Deny".
fn allow_buttons(decision: &Decision, offered: &Offered, body: &mut String) -> Vec<Button> {
    allow_once_or_deny("Allow once", offered, |buttons| {
        if offered.offers(AnswerKind::AlwaysAllow) {
            buttons.push(Button {
                label: "Always allow",
                choice: Choice::Answer(DecisionAnswer::AlwaysAllow {
                    target: None,
                    rules: decision.always_allow_rules.clone(),
                }),
            });
            body.push_str(&format!(
                "\n\nAlways allow saves: {}",
                cut(
                    &one_line(&decision.always_allow_rules.join(", ")),
                    MAX_LINE_CHARS
                )
            ));
        }
    })
}

/// `once` (allow once) and "Deny" where `offered` offers them, with the buttons
/// `between` adds in the middle.
fn allow_once_or_deny(
    once: &'static str,
    offered: &Offered,
    between: impl FnOnce(&mut Vec<Button>),
) -> Vec<Button> {
    let mut buttons = Vec::new();
    if offered.offers(AnswerKind::AllowOnce) {
        buttons.push(Button {
            label: once,
            choice: Choice::Answer(DecisionAnswer::AllowOnce),
        });
    }
    between(&mut buttons);
    if offered.offers(AnswerKind::Deny) {
        buttons.push(Button {
            label: "Deny",
            choice: Choice::Answer(DecisionAnswer::Deny { feedback: None }),
        });
    }
    buttons
}

fn permission_dialog(
    project: &str,
    tool: Tool,
    subject: &str,
    intent: Option<&str>,
    decision: &Decision,
    cwd: Option<&str>,
    offered: &Offered,
) -> NativeDialog {
    let mut body = String::new();
    if decode_core::display::has_hidden(subject)
        || intent.is_some_and(decode_core::display::has_hidden)
    {
        body.push_str(HIDDEN_NOTE);
    }
    if let Some(intent) = intent {
        body.push_str(&format!(
            "The agent: {}\n\n",
            cut(&one_line(intent), MAX_LINE_CHARS)
        ));
    }
    body.push_str(&format!(
        "{tool}: {}\n\n{}",
        fit(&sanitize(&cut(subject, MAX_BODY_CHARS))),
        one_line(&decision.reason)
    ));
    if let Some(cwd) = cwd {
        body.push_str(&format!("\n\nin {}", one_line(cwd)));
    }
    let buttons = allow_buttons(decision, offered, &mut body);
    if offered.withheld == Some(Withheld::CappedCall) {
        body.push_str("\n\nOnly \"Allow once\" is offered for this call.");
    }
    NativeDialog {
        title: format!("Decode — {project}: allow {tool}?"),
        body,
        buttons,
    }
}

fn question_dialog(project: &str, question: &str, options: &[String]) -> NativeDialog {
    let hidden = std::iter::once(question)
        .chain(options.iter().map(String::as_str))
        .any(decode_core::display::has_hidden);
    let mut body = if hidden {
        HIDDEN_NOTE.to_string()
    } else {
        String::new()
    };
    body.push_str(&fit(&sanitize(&cut(question, MAX_BODY_CHARS))));
    if !options.is_empty() {
        body.push_str("\n\nOptions:");
        for o in options.iter().take(8) {
            body.push_str(&format!("\n • {}", one_line(&cut(o, 200))));
        }
    }
    NativeDialog {
        title: format!("Decode — {project}: the agent asks"),
        body,
        buttons: open_or_later(),
    }
}

fn plan_dialog(project: &str, plan: &str) -> NativeDialog {
    NativeDialog {
        title: format!("Decode — {project}: approve the plan?"),
        body: format!(
            "{}{}",
            if decode_core::display::has_hidden(plan) {
                HIDDEN_NOTE
            } else {
                ""
            },
            fit(&sanitize(&cut(plan, MAX_BODY_CHARS)))
        ),
        buttons: open_or_later(),
    }
}

fn run_outside_dialog(
    project: &str,
    command: &str,
    cwd: &str,
    bound: &str,
    offered: &Offered,
) -> NativeDialog {
    NativeDialog {
        title: format!("Decode — {project}: run outside the sandbox?"),
        body: format!(
            "bash: {}\n\nIn the sandbox: {}\n\nin {}\n\nRun it again outside the sandbox, once?",
            sanitize(&cut(command, MAX_BODY_CHARS)),
            one_line(bound),
            one_line(cwd)
        ),
        buttons: allow_once_or_deny("Run outside once", offered, |_| {}),
    }
}

fn network_dialog(
    project: &str,
    host: &str,
    port: u16,
    command: &str,
    cwd: &str,
    decision: &Decision,
    offered: &Offered,
) -> NativeDialog {
    let mut body = format!(
        "A command wants to reach {}:{port}\n\nbash: {}\n\n{}\n\nin {}",
        cut(&one_line(host), MAX_LINE_CHARS),
        fit(&sanitize(&cut(command, MAX_BODY_CHARS))),
        one_line(&decision.reason),
        one_line(cwd)
    );
    let buttons = allow_buttons(decision, offered, &mut body);
    NativeDialog {
        title: format!(
            "Decode — {project}: let a command reach {}?",
            cut(&one_line(host), 80)
        ),
        body,
        buttons,
    }
}

fn open_or_later() -> Vec<Button> {
    vec![
        Button {
            label: "Open Decode",
            choice: Choice::OpenWindow,
        },
        Button {
            label: "Later",
            choice: Choice::Later,
        },
    ]
}

impl NativeDialog {
    pub(crate) fn spec(&self) -> DialogSpec {
        DialogSpec {
            title: self.title.clone(),
            body: self.body.clone(),
            buttons: self.buttons.iter().map(|b| b.label.to_string()).collect(),
            pick_folder: None,
        }
    }

    /// The choice of the button the child printed (its index), if any.
    pub(crate) fn choice(&self, printed: &str) -> Option<&Choice> {
        let i: usize = printed.trim().parse().ok()?;
        self.buttons.get(i).map(|b| &b.choice)
    }
}

/// With this variable set to `1`, the child reads one dialog spec per line and
/// prints, per line, what GTK would show for it (JSON), without showing anything: the
/// exact-text check of tests/native_dialog.rs.
pub(crate) const CHECK_ENV: &str = "DECODE_DIALOG_CHECK";

/// The child process: shows the dialog read from stdin and prints the index
/// of the button pressed (nothing when the dialog was closed).
pub(crate) fn run_child() -> std::process::ExitCode {
    use std::io::Read;
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        return std::process::ExitCode::from(2);
    }
    if std::env::var_os(CHECK_ENV).is_some_and(|v| v == "1") {
        return check_child(&input);
    }
    let Ok(spec) = serde_json::from_str::<DialogSpec>(&input) else {
        return std::process::ExitCode::from(2);
    };
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        return std::process::ExitCode::from(3);
    }
    if let Some(start) = &spec.pick_folder {
        let mut dialog = rfd::FileDialog::new().set_title(&spec.title);
        if start.is_dir() {
            dialog = dialog.set_directory(start);
        }
        if let Some(folder) = dialog.pick_folder() {
            decode_cli::output::out(&folder.display().to_string());
        }
        return std::process::ExitCode::SUCCESS;
    }
    if spec.buttons.is_empty() || spec.buttons.len() > 3 {
        return std::process::ExitCode::from(2);
    }
    match crate::message_box::show(&spec.message_box()) {
        Ok(Some(i)) => {
            decode_cli::output::out(&i.to_string());
            std::process::ExitCode::SUCCESS
        }
        Ok(None) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            std::process::ExitCode::from(3)
        }
    }
}

fn check_child(input: &str) -> std::process::ExitCode {
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        return std::process::ExitCode::from(3);
    }
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(spec) = serde_json::from_str::<DialogSpec>(line) else {
            return std::process::ExitCode::from(2);
        };
        match crate::message_box::shown(&spec.message_box()) {
            Ok(shown) => {
                decode_cli::output::json(&serde_json::to_string(&shown).unwrap_or_default())
            }
            Err(e) => {
                tracing::error!("{e}");
                return std::process::ExitCode::from(3);
            }
        }
    }
    std::process::ExitCode::SUCCESS
}

/// Why a dialog could not be shown (then a desktop notification is sent).
#[derive(Debug)]
pub(crate) struct NotShown(pub String);

/// The native dialogs open now, one per decision, and the decisions a person
/// put off with "Later" (not shown again).
pub(crate) struct NativeSurface {
    exe: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    open: HashMap<DecisionId, tokio::sync::oneshot::Sender<()>>,
    put_off: HashSet<DecisionId>,
}

impl NativeSurface {
    pub(crate) fn new(exe: PathBuf) -> NativeSurface {
        NativeSurface {
            exe,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Shows `dialog` for decision `id` unless one is open already or the
    /// person put it off; `open_window` runs for "Open Decode", `not_shown`
    /// when no dialog could be shown. Returns at once; the dialog lives on.
    pub(crate) fn show(
        self: &Arc<Self>,
        id: DecisionId,
        dialog: NativeDialog,
        channel: Arc<DecisionChannel>,
        open_window: impl FnOnce() + Send + 'static,
        not_shown: impl FnOnce(NotShown) + Send + 'static,
    ) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        {
            let mut inner = self.lock();
            if inner.open.contains_key(&id) || inner.put_off.contains(&id) {
                return;
            }
            inner.open.insert(id, tx);
        }
        let this = Arc::clone(self);
        tauri::async_runtime::spawn(async move {
            let outcome = this.run_dialog(&dialog, rx).await;
            this.lock().open.remove(&id);
            match outcome {
                Ok(Some(printed)) => match dialog.choice(&printed) {
                    Some(Choice::Answer(answer))
                        if channel.answer_by(id, answer.clone(), "native").is_err() =>
                    {
                        tracing::info!(%id, "native dialog answered after another surface");
                    }
                    Some(Choice::Answer(_)) => {}
                    Some(Choice::OpenWindow) => open_window(),
                    Some(Choice::Later) => {
                        this.lock().put_off.insert(id);
                    }
                    None => {}
                },
                // Closed without a button, or closed because another surface answered.
                Ok(None) => {}
                Err(e) => not_shown(e),
            }
        });
    }

    /// Closes the dialog of `id`, if one is open (another surface answered).
    pub(crate) fn close(&self, id: DecisionId) {
        let sender = {
            let mut inner = self.lock();
            inner.put_off.remove(&id);
            inner.open.remove(&id)
        };
        if let Some(tx) = sender {
            let _ = tx.send(());
        }
    }

    async fn run_dialog(
        &self,
        dialog: &NativeDialog,
        closed: tokio::sync::oneshot::Receiver<()>,
    ) -> Result<Option<String>, NotShown> {
        run_spec(&self.exe, &dialog.spec(), Some(closed)).await
    }
}

/// Shows one dialog and waits for it: the index of the button pressed, or
/// `None` when it was closed without one.
pub(crate) async fn ask(exe: &Path, spec: &DialogSpec) -> Result<Option<usize>, NotShown> {
    Ok(run_spec(exe, spec, None)
        .await?
        .and_then(|out| out.trim().parse().ok()))
}

/// Shows the native folder picker (in a child process, like every native
/// dialog: GTK runs on the window's main thread); the folder chosen, if any.
pub(crate) async fn pick_folder(exe: &Path, start: &Path) -> Result<Option<PathBuf>, NotShown> {
    let spec = DialogSpec {
        title: "Open a project folder".into(),
        body: String::new(),
        buttons: Vec::new(),
        pick_folder: Some(start.to_path_buf()),
    };
    // GTK's file chooser has been seen to crash (SIGSEGV) while opening under
    // Xvfb, rarely; it is shown again once before giving up.
    let out = match run_spec(exe, &spec, None).await {
        Ok(out) => out,
        Err(first) => {
            tracing::warn!("the folder picker failed ({}); showing it again", first.0);
            run_spec(exe, &spec, None).await?
        }
    };
    Ok(out.map(|out| PathBuf::from(out.trim_end_matches('\n'))))
}

/// Runs `decode-window native-dialog` with `spec` until a button is pressed, the
/// dialog is closed, or `closed` fires (then the child is killed, which
/// closes its dialog).
async fn run_spec(
    exe: &Path,
    spec: &DialogSpec,
    closed: Option<tokio::sync::oneshot::Receiver<()>>,
) -> Result<Option<String>, NotShown> {
    let spec = serde_json::to_vec(spec).map_err(|e| NotShown(e.to_string()))?;
    let mut child = tokio::process::Command::new(exe)
        .arg("native-dialog")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| NotShown(format!("could not start the dialog: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&spec)
            .await
            .map_err(|e| NotShown(format!("could not start the dialog: {e}")))?;
    }
    let mut stdout = child.stdout.take();
    let closed = async move {
        match closed {
            Some(rx) => {
                let _ = rx.await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        status = child.wait() => {
            let status = status.map_err(|e| NotShown(e.to_string()))?;
            if !status.success() {
                return Err(NotShown(format!("the dialog could not be shown ({status})")));
            }
            let mut out = String::new();
            if let Some(s) = stdout.as_mut() {
                use tokio::io::AsyncReadExt;
                let _ = s.read_to_string(&mut out).await;
            }
            Ok((!out.trim().is_empty()).then_some(out))
        }
        _ = closed => {
            let _ = child.kill().await;
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decode_policy::{Decision, Tool, Verdict};

    fn decision(capped: bool, rules: &[&str]) -> Decision {
        Decision {
            verdict: Verdict::Ask,
            reason: "default mode asks before running shell commands".into(),
            trace: Vec::new(),
            fragments: Vec::new(),
            capped,
            origin: None,
            always_allow_rules: rules.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn permission(subject: &str, d: Decision) -> DecisionRequest {
        DecisionRequest::Permission {
            tool: Tool::Bash,
            subject: subject.into(),
            intent: None,
            input: serde_json::json!({ "command": subject }),
            decision: d,
            cwd: Some("/work/p".into()),
            diff: None,
            suggested_rules: Vec::new(),
            edited: false,
            mcp: None,
        }
    }

    fn labels(d: &NativeDialog) -> Vec<&str> {
        d.buttons.iter().map(|b| b.label).collect()
    }

    #[test]
    fn a_network_ask_names_the_host_and_the_command_and_saves_a_net_rule() {
        let d = dialog_for(
            &DecisionRequest::Network {
                host: "example.org".into(),
                port: 443,
                command: "curl https://example.org".into(),
                cwd: "/work/p".into(),
                decision: decision(false, &["net(domain:example.org)"]),
            },
            "p",
        );
        assert_eq!(labels(&d), ["Allow once", "Always allow", "Deny"]);
        assert!(d.title.contains("example.org"), "{}", d.title);
        assert!(d.body.contains("curl https://example.org"), "{}", d.body);
        assert!(d.body.contains("net(domain:example.org)"), "{}", d.body);
        assert!(matches!(
            &d.buttons[1].choice,
            Choice::Answer(DecisionAnswer::AlwaysAllow { rules, .. }) if rules == &["net(domain:example.org)"]
        ));
    }

    #[test]
    fn a_sandbox_ask_offers_running_outside_once_or_deny() {
        let d = dialog_for(
            &DecisionRequest::RunOutside {
                command: "cat ~/.aws/credentials %s".into(),
                cwd: "/work/p".into(),
                bound: decode_protocol::SandboxBound {
                    kind: decode_protocol::BoundKind::Hidden,
                    path: Some("/h/.aws".into()),
                    host: None,
                    message: "/h/.aws is hidden from commands in the sandbox".into(),
                    may_run_outside: true,
                },
                output: "Permission denied".into(),
            },
            "p",
        );
        assert_eq!(labels(&d), ["Run outside once", "Deny"]);
        assert!(d.body.contains("cat ~/.aws/credentials %s"), "{}", d.body);
        assert!(d.body.contains("/h/.aws is hidden"), "{}", d.body);
        assert!(matches!(
            d.buttons[0].choice,
            Choice::Answer(DecisionAnswer::AllowOnce)
        ));
    }

    #[test]
    fn an_ask_offers_allow_once_always_allow_and_deny() {
        let d = dialog_for(
            &permission("npm test", decision(false, &["bash(npm test)"])),
            "p",
        );
        assert_eq!(labels(&d), ["Allow once", "Always allow", "Deny"]);
        assert!(d.title.contains("allow bash"), "{}", d.title);
        assert!(
            d.body.starts_with("bash: npm test\n\ndefault mode asks"),
            "{}",
            d.body
        );
        assert!(d.body.contains("Always allow saves: bash(npm test)"));
        assert!(d.body.contains("in /work/p"));
        assert_eq!(
            d.choice("1\n"),
            Some(&Choice::Answer(DecisionAnswer::AlwaysAllow {
                target: None,
                rules: vec!["bash(npm test)".into()]
            }))
        );
        assert_eq!(
            d.choice("2"),
            Some(&Choice::Answer(DecisionAnswer::Deny { feedback: None }))
        );
        assert_eq!(d.choice(""), None);
        assert_eq!(d.choice("7"), None);
    }

    #[test]
    fn a_capped_ask_offers_only_allow_once_and_deny() {
        let d = dialog_for(&permission("git push", decision(true, &[])), "p");
        assert_eq!(labels(&d), ["Allow once", "Deny"]);
        assert!(d.body.contains("Only \"Allow once\""));
        assert_eq!(
            d.choice("0"),
            Some(&Choice::Answer(DecisionAnswer::AllowOnce))
        );
        assert_eq!(
            d.choice("1"),
            Some(&Choice::Answer(DecisionAnswer::Deny { feedback: None }))
        );
    }

    /// The buttons are those of the answers the request offers, as the channel's event
    /// carries them: the dialog does not judge again what is offered.
    #[test]
    fn the_buttons_follow_what_the_request_offers() {
        let request = permission("npm test", decision(false, &["bash(npm test)"]));
        let once_or_deny = Offered {
            answers: vec![AnswerKind::AllowOnce, AnswerKind::Deny],
            modes: Vec::new(),
            withheld: Some(Withheld::NoRule),
        };
        let d = dialog_offering(&request, &once_or_deny, "p");
        assert_eq!(labels(&d), ["Allow once", "Deny"]);
        assert!(!d.body.contains("Always allow saves"), "{}", d.body);
        assert!(!d.body.contains("Only \"Allow once\""), "{}", d.body);
        assert_eq!(
            dialog_offering(&request, &request.offered(), "p"),
            dialog_for(&request, "p")
        );
    }

    #[test]
    fn an_ask_without_a_rule_to_keep_offers_allow_once_and_deny() {
        let d = dialog_for(&permission("echo", decision(false, &[])), "p");
        assert_eq!(labels(&d), ["Allow once", "Deny"]);
        assert!(!d.body.contains("Only"), "{}", d.body);
    }

    #[test]
    fn a_capped_network_ask_offers_only_allow_once_and_deny() {
        let d = dialog_for(
            &DecisionRequest::Network {
                host: "example.org".into(),
                port: 443,
                command: "curl https://example.org".into(),
                cwd: "/work/p".into(),
                decision: decision(true, &[]),
            },
            "p",
        );
        assert_eq!(labels(&d), ["Allow once", "Deny"]);
        assert!(!d.body.contains("Always allow saves"), "{}", d.body);
    }

    /// Every button that answers gives an answer its request takes.
    #[test]
    fn every_button_answer_fits_its_request() {
        let requests = [
            permission("npm test", decision(false, &["bash(npm test)"])),
            permission("git push", decision(true, &[])),
            permission("echo", decision(false, &[])),
            DecisionRequest::Network {
                host: "example.org".into(),
                port: 443,
                command: "curl https://example.org".into(),
                cwd: "/work/p".into(),
                decision: decision(false, &["net(domain:example.org)"]),
            },
            DecisionRequest::RunOutside {
                command: "touch ~/x".into(),
                cwd: "/work/p".into(),
                bound: decode_protocol::SandboxBound {
                    kind: decode_protocol::BoundKind::Write,
                    path: None,
                    host: None,
                    message: "a write outside".into(),
                    may_run_outside: true,
                },
                output: String::new(),
            },
        ];
        for request in requests {
            let d = dialog_for(&request, "p");
            assert!(d.buttons.len() <= 3, "{:?}", labels(&d));
            for b in &d.buttons {
                if let Choice::Answer(answer) = &b.choice {
                    assert_eq!(request.misfit(answer), None, "{}", b.label);
                }
            }
        }
    }

    #[test]
    fn questions_and_plans_open_the_window_or_wait() {
        let q = DecisionRequest::Question {
            question: "Which database?".into(),
            options: vec!["Postgres".into(), "SQLite".into()],
        };
        let d = dialog_for(&q, "p");
        assert_eq!(labels(&d), ["Open Decode", "Later"]);
        assert!(d.body.contains("Which database?") && d.body.contains("• SQLite"));
        assert_eq!(d.choice("0"), Some(&Choice::OpenWindow));
        assert_eq!(d.choice("1"), Some(&Choice::Later));
        let p = dialog_for(&DecisionRequest::plan("1. x"), "p");
        assert_eq!(labels(&p), ["Open Decode", "Later"]);
        assert!(p.title.contains("plan"));
    }

    #[test]
    fn text_from_the_model_or_the_project_is_escaped_and_cut() {
        let evil = "ls\u{1b}]0;owned\u{7}\r\u{1b}[2Jrm -rf ~";
        let d = dialog_for(
            &permission(evil, decision(false, &["bash(x\u{1b}[31m)"])),
            "proj\u{1b}]52;c;aGk=\u{7}",
        );
        for text in [&d.title, &d.body] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{text:?}"
            );
            assert!(!text.contains('\r'), "{text:?}");
        }
        assert!(d.body.contains("\\x1b]0;owned"), "{}", d.body);
        let long = "x".repeat(5000);
        let d = dialog_for(&DecisionRequest::plan(long), "p");
        assert!(d.body.chars().count() <= MAX_BODY_CHARS + 1);
        assert!(d.body.ends_with('…'));
        assert!(d
            .body
            .lines()
            .all(|l| l.chars().count() <= MAX_LINE_CHARS + 1));
    }

    /// A command of many lines, or one very long line, still gives a dialog whose
    /// text fits the screen with its buttons: its end is said to be cut.
    #[test]
    fn a_dialog_never_grows_past_its_lines() {
        let many: String =
            (0..151).map(|i| format!("echo {i}\n")).collect::<String>() + "git push --force";
        let d = dialog_for(&permission(&many, decision(false, &[])), "p");
        assert!(d.body.lines().count() <= MAX_BODY_LINES + 8, "{}", d.body);
        assert!(d.body.contains("more lines (open Decode"), "{}", d.body);
        let wide = format!("echo {}", "y".repeat(6000));
        let d = dialog_for(
            &permission(&wide, decision(false, &[&format!("bash({wide})")])),
            "p",
        );
        assert!(
            d.body
                .lines()
                .all(|l| l.chars().count() <= MAX_LINE_CHARS + 30),
            "{}",
            d.body
        );
    }

    #[test]
    fn a_request_with_hidden_characters_says_so_first() {
        let d = dialog_for(
            &permission("echo 'ok \u{202e}txt.exe'", decision(false, &[])),
            "p",
        );
        assert!(
            d.body.starts_with("⚠ This request holds invisible"),
            "{}",
            d.body
        );
        assert!(d.body.contains("\\u{202e}"), "{}", d.body);
        let d = dialog_for(&permission("echo ok", decision(false, &[])), "p");
        assert!(!d.body.starts_with('⚠'));
        let q = dialog_for(
            &DecisionRequest::Question {
                question: "Which?".into(),
                options: vec!["a\u{200b}b".into()],
            },
            "p",
        );
        assert!(q.body.starts_with('⚠'), "{}", q.body);
    }
}
