//! The sandbox's own asks through the real window, in auto mode (the gate lets every
//! command through, so what stops one is the sandbox): a command that writes outside
//! the places commands may write asks whether to run it again outside the sandbox
//! (the approval dialog with `data-kind="sandbox"`), and a command that connects to a
//! host no rule allows asks about that host (`data-kind="network"`). Each dialog is
//! checked for what it says, at 640 px and at 200 % scale, and for what each answer
//! does: on disk, at the server, and in the result the model gets.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{ensure, Context};
use decode_tests::fake_openai::{FakeOpenAi, Script, Turn};
use decode_tests::project::TempProject;
use decode_tests::window::App;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{bash, reachable_when_small, settle, tool_cards, trust, wait_assistant, LONG, SHORT};

/// The arguments that start the window on `project` in auto mode against `fake`.
fn auto_args(project: &TempProject, fake: &FakeOpenAi) -> Vec<String> {
    let mut args = fake.app_args(project.path());
    args.splice(1..1, ["--mode".to_string(), "auto".to_string()]);
    args
}

/// What `data-kind` the open approval dialog has.
async fn dialog_kind(app: &App) -> anyhow::Result<String> {
    let kind = app
        .js("const d = document.querySelector('[data-testid=\"approval-dialog\"]'); return d ? d.dataset.kind : null;")
        .await?;
    Ok(kind.as_str().unwrap_or_default().to_string())
}

/// The `data-sandboxed` of the last tool card.
async fn last_card_sandboxed(app: &App) -> anyhow::Result<String> {
    let v = app
        .js("const c = [...document.querySelectorAll('[data-testid=\"tool-card\"]')].pop(); return c ? c.dataset.sandboxed : null;")
        .await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// The file the command below tries to make, in the (temp) home folder: read-only
/// in the sandbox, even though the temp home lies in the writable `/tmp`.
const OUTSIDE_FILE: &str = "e2e-outside.txt";
const TOUCH: &str = "touch ~/e2e-outside.txt && echo touched-e2e";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_stopped_by_the_sandbox_asks_to_run_outside() -> anyhow::Result<()> {
    let started = Instant::now();
    let project = TempProject::new()?;
    trust(&project)?;
    let script = Script::new()
        .flow(
            "flow-outside-deny",
            vec![bash("c-out-1", TOUCH), Turn::text("Not run outside.")],
        )
        .flow(
            "flow-outside-once",
            vec![bash("c-out-2", TOUCH), Turn::text("Ran outside.")],
        );
    let fake = FakeOpenAi::start(script).await?;
    let app = App::start(&project, &auto_args(&project, &fake)).await?;
    let result = run_outside_flows(&app, &project, &fake).await;
    if result.is_err() {
        let _ = app.shot("sandbox-failure").await;
    }
    app.close().await;
    eprintln!("e2e: the sandbox ask flows took {:?}", started.elapsed());
    result
}

async fn run_outside_flows(
    app: &App,
    project: &TempProject,
    fake: &FakeOpenAi,
) -> anyhow::Result<()> {
    app.wait_text("status-mode", "auto", SHORT).await?;
    let target = project.home.join(OUTSIDE_FILE);

    // Auto mode lets the command through; the sandbox refuses the write in the home
    // folder, and Decode asks whether to run it again outside: which bound, which
    // path, the command, what it printed.
    app.send("flow-outside-deny go").await?;
    app.wait("run-outside", LONG).await?;
    ensure!(
        dialog_kind(app).await? == "sandbox",
        "the ask is not the sandbox's"
    );
    let path = app.texts("run-outside-path").await?.join("");
    ensure!(
        path == target.display().to_string(),
        "the dialog names the path {path:?}, not {}",
        target.display()
    );
    let reason = app.texts("approval-reason").await?.join("");
    ensure!(
        reason.contains("a write outside the places commands may write"),
        "the dialog's reason: {reason}"
    );
    let command = app.texts("approval-command").await?.join("");
    ensure!(command == TOUCH, "the dialog shows the command {command:?}");
    // Only "run outside, once" or no: no rule can lift the sandbox.
    for absent in ["approve-session", "approve-always", "approval-rule"] {
        ensure!(
            app.texts(absent).await?.is_empty(),
            "the sandbox ask offers {absent}"
        );
    }
    app.shot("15-sandbox-ask").await?;
    reachable_when_small(app, "15b-sandbox-ask").await?;
    settle().await;
    app.fill("deny-feedback", "write it in the project").await?;
    app.click("deny").await?;
    wait_assistant(app, "Not run outside.").await?;
    ensure!(
        !target.exists(),
        "a denied run outside made {}",
        target.display()
    );
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains("Read-only file system")
            && results.contains(
                "the person chose not to run it outside the sandbox; their feedback: write it in the project"
            ),
        "the model got: {results}"
    );
    ensure!(
        last_card_sandboxed(app).await? == "true",
        "the denied command's card does not say it ran sandboxed"
    );

    // The same command, allowed once: it runs again outside, the file is made, and
    // the model reads both runs' story.
    app.send("flow-outside-once go").await?;
    app.wait("run-outside", LONG).await?;
    ensure!(dialog_kind(app).await? == "sandbox");
    settle().await;
    app.click("approve-once").await?;
    wait_assistant(app, "Ran outside.").await?;
    ensure!(
        target.exists(),
        "run outside, once did not make {}",
        target.display()
    );
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains("the person allowed it to run again outside the sandbox, once")
            && results.contains("touched-e2e"),
        "the model got: {results}"
    );
    ensure!(
        last_card_sandboxed(app).await? == "false",
        "the card of the command run outside says it ran sandboxed"
    );
    let cards = tool_cards(app).await?;
    ensure!(
        cards.last().is_some_and(|(s, _)| s == "done"),
        "the card of the command run outside: {cards:?}"
    );
    app.shot("15c-sandbox-ran-outside").await?;
    Ok(())
}

/// A web server on 127.0.0.1 that the app takes for the public host `web.e2e.test`
/// (`DECODE_NET_TEST_HOSTS`, read by debug builds only): it answers every request with
/// one line, and counts the connections it got.
struct FakeWeb {
    port: u16,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeWeb {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const WEB_BODY: &str = "hello-from-web-e2e\n";

impl FakeWeb {
    async fn start() -> anyhow::Result<FakeWeb> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let mut head = Vec::new();
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{WEB_BODY}",
                        WEB_BODY.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Ok(FakeWeb {
            port,
            connections,
            task,
        })
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_reaching_an_unknown_host_asks_about_that_host() -> anyhow::Result<()> {
    let started = Instant::now();
    let project = TempProject::new()?;
    trust(&project)?;
    let web = FakeWeb::start().await?;
    let curl = format!(
        "curl -sS --max-time 20 http://web.e2e.test:{}/hello",
        web.port
    );
    let script = Script::new()
        .flow(
            "flow-net-deny",
            vec![bash("c-net-1", &curl), Turn::text("Network refused.")],
        )
        .flow(
            "flow-net-once",
            vec![bash("c-net-2", &curl), Turn::text("Network reached.")],
        );
    let fake = FakeOpenAi::start(script).await?;
    let hosts = "web.e2e.test=127.0.0.1";
    let app = App::start_with_env(
        &project,
        &auto_args(&project, &fake),
        &[("DECODE_NET_TEST_HOSTS", hosts)],
    )
    .await?;
    let result = network_flows(&app, &fake, &web, &curl).await;
    if result.is_err() {
        let _ = app.shot("network-failure").await;
    }
    app.close().await;
    eprintln!("e2e: the network ask flows took {:?}", started.elapsed());
    result
}

async fn network_flows(
    app: &App,
    fake: &FakeOpenAi,
    web: &FakeWeb,
    curl: &str,
) -> anyhow::Result<()> {
    app.wait_text("status-mode", "auto", SHORT).await?;
    let target = format!("web.e2e.test:{}", web.port);

    // Auto mode lets curl run, sandboxed; its connection goes through Decode's proxy,
    // which asks about a host no rule allows — in auto mode too — naming the host,
    // the port and the command. Nothing has reached the server yet.
    app.send("flow-net-deny go").await?;
    let host = app.wait("net-host", LONG).await?.text().await?;
    ensure!(
        dialog_kind(app).await? == "network",
        "the ask is not the network's"
    );
    ensure!(host == "web.e2e.test", "the dialog names the host {host:?}");
    let reason = app
        .js("return document.querySelector('[data-testid=\"approval-dialog\"] .reason').textContent;")
        .await?;
    ensure!(
        reason
            .as_str()
            .is_some_and(|r| r.contains(&format!(":{}", web.port))),
        "the dialog does not show the port: {reason}"
    );
    let why = app.texts("approval-reason").await?.join("");
    ensure!(
        why.contains("no rule allows this host"),
        "the dialog's reason: {why}"
    );
    let command = app.texts("approval-command").await?.join("");
    ensure!(command == curl, "the dialog shows the command {command:?}");
    ensure!(
        web.connections() == 0,
        "the server was reached before the answer"
    );
    app.shot("16-network-ask").await?;
    reachable_when_small(app, "16b-network-ask").await?;
    settle().await;
    app.fill("deny-feedback", "no network in this test").await?;
    app.click("deny").await?;
    wait_assistant(app, "Network refused.").await?;
    ensure!(web.connections() == 0, "a denied host was connected to");
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains(&format!(
            "the connection to {target} was refused: the person refused it"
        )) && results.contains("their feedback: no network in this test")
            && !results.contains(WEB_BODY.trim()),
        "the model got: {results}"
    );
    // A host the person refused is not offered outside the sandbox.
    ensure!(
        !results.contains("outside the sandbox"),
        "the refused connection was offered outside: {results}"
    );

    // The next command asks again (a deny holds for its command only); allowed once,
    // curl reaches the server through the proxy, and the model reads its answer.
    app.send("flow-net-once go").await?;
    let host = app.wait("net-host", LONG).await?.text().await?;
    ensure!(host == "web.e2e.test", "the second ask names {host:?}");
    settle().await;
    app.click("approve-once").await?;
    wait_assistant(app, "Network reached.").await?;
    ensure!(web.connections() == 1, "connections: {}", web.connections());
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains(WEB_BODY.trim())
            && results.contains(&format!("the person allowed {target} for this command")),
        "the model got: {results}"
    );
    ensure!(
        last_card_sandboxed(app).await? == "true",
        "the command let through the proxy did not run sandboxed"
    );
    app.shot("16c-network-allowed").await.context("last shot")?;
    Ok(())
}
