//! The Workbench, without a window: it opens a folder or a saved session, moves to
//! another folder, a session, a new model setup or a new conversation, refuses to move
//! while a turn runs unless asked to stop it first (and then waits for its end), and
//! its subscribers get the events of whatever project is open now — never those of a
//! project it left.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use decode_core::dirs::Dirs;
use decode_engine::agent_loop::{LoopEvent, Outcome};
use decode_engine::config::Overrides;
use decode_engine::providers::ProviderKind;
use decode_engine::workbench::{Target, Workbench, WorkbenchEvent};
use decode_policy::Mode;
use decode_protocol::ErrorKind;
use serde_json::json;

struct Bench {
    _tmp: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
    dirs: Dirs,
    script: PathBuf,
}

/// Two project folders, Decode's folders and a script whose first turn waits
/// `delay_ms` before answering.
fn bench(delay_ms: u64) -> Bench {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (a, b) = (root.join("a"), root.join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
    }
    let dirs = Dirs {
        home: root.join("home"),
        config: root.join("config"),
        data: root.join("data"),
        state: root.join("state"),
    };
    let script = root.join("script.json");
    std::fs::write(
        &script,
        json!({"model": "m", "turns": [
            {"text": "first answer", "delay_ms": delay_ms},
            {"text": "second answer"},
            {"text": "third answer"}
        ]})
        .to_string(),
    )
    .unwrap();
    Bench {
        _tmp: tmp,
        a,
        b,
        dirs,
        script,
    }
}

fn open(b: &Bench, target: Target) -> Workbench {
    let overrides = Overrides {
        provider: Some(ProviderKind::Script),
        script: Some(b.script.clone()),
        ..Overrides::default()
    };
    Workbench::open(b.dirs.clone(), overrides, &target)
        .unwrap()
        .0
}

fn on(b: &Bench, dir: &Path) -> Workbench {
    open(
        b,
        Target {
            project: Some(dir.to_path_buf()),
            ..Target::default()
        },
    )
}

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn listen(&self, bench: &Workbench) {
        let seen = self.0.clone();
        bench.subscribe(Arc::new(move |e: &WorkbenchEvent| {
            let line = match e {
                WorkbenchEvent::Status(s) => format!("status {} {}", s.project, s.mode),
                WorkbenchEvent::Chat(c) => format!("chat running={}", c.running),
                WorkbenchEvent::Decision(_) => "decision".to_string(),
                WorkbenchEvent::Opened(o) => format!("opened {o:?}"),
            };
            seen.lock().unwrap().push(line);
        }));
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

async fn prompt(bench: &Workbench, text: &str) -> Outcome {
    let run = bench
        .project()
        .chat
        .start(text, Arc::new(|_: &LoopEvent| {}))
        .unwrap();
    run.await
}

#[tokio::test]
async fn opens_folders_and_sessions_and_moves_between_them() {
    let b = bench(0);
    let bench = on(&b, &b.a);
    let seen = Seen::default();
    seen.listen(&bench);
    assert_eq!(bench.project().active.project_root(), b.a);
    assert_eq!(prompt(&bench, "hello").await, Outcome::Completed);
    let session = bench.project().chat.session_id().expect("a transcript");

    bench.open_folder(&b.b).unwrap();
    assert_eq!(bench.project().active.project_root(), b.b);
    assert!(bench.project().chat.history().is_empty());
    assert!(seen.take().contains(&"opened Folder".to_string()));

    // The same folder again: nothing moves.
    bench.open_folder(&b.b).unwrap();
    assert!(seen.take().is_empty());

    // A saved session brings its folder and its conversation.
    bench.resume(&session).unwrap();
    assert_eq!(bench.project().active.project_root(), b.a);
    assert_eq!(
        bench.project().chat.session_id().as_deref(),
        Some(session.as_str())
    );
    assert!(bench
        .project()
        .chat
        .history()
        .iter()
        .any(|e| matches!(e, LoopEvent::UserPrompt { text } if text == "hello")));
    assert!(seen.take().contains(&"opened Session".to_string()));

    // A session opened at start-up: its folder is the session's (once the workbench
    // holding it let it go: one Decode at a time continues a session).
    drop(bench);
    let again = open(
        &b,
        Target {
            resume: Some(session.clone()),
            ..Target::default()
        },
    );
    assert_eq!(again.project().active.project_root(), b.a);
}

#[tokio::test]
async fn subscribers_follow_the_project_open_now_and_never_the_one_left() {
    let b = bench(0);
    let bench = on(&b, &b.a);
    let seen = Seen::default();
    seen.listen(&bench);
    let old = Arc::clone(&bench.project().active);
    bench.open_folder(&b.b).unwrap();
    seen.take();
    old.set_mode(Mode::Auto);
    assert!(seen.take().is_empty(), "an event of the folder left");
    bench.project().active.set_mode(Mode::Edit);
    assert_eq!(seen.take(), vec![format!("status {} edit", b.b.display())]);
}

#[tokio::test]
async fn a_move_waits_for_the_running_turn_only_when_asked_to_stop_it() {
    let b = bench(20_000);
    let bench = Arc::new(on(&b, &b.a));
    let run = bench
        .project()
        .chat
        .start("slow", Arc::new(|_: &LoopEvent| {}))
        .unwrap();
    let turn = tokio::spawn(run);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(bench.project().chat.running());
    let refused = bench.open_folder(&b.b).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Busy, "{refused}");
    assert_eq!(bench.new_chat().unwrap_err().kind, ErrorKind::Busy);

    let moved = tokio::time::timeout(
        Duration::from_secs(10),
        bench.stop_then(|w| w.open_folder(&b.b)),
    )
    .await
    .expect("stop_then waits for the turn's end, not for the slow model");
    moved.unwrap();
    assert_eq!(bench.project().active.project_root(), b.b);
    assert_eq!(turn.await.unwrap(), Outcome::Cancelled);
}

#[tokio::test]
async fn a_new_setup_keeps_the_session_and_a_new_chat_starts_over() {
    let b = bench(0);
    let bench = on(&b, &b.a);
    assert_eq!(prompt(&bench, "hello").await, Outcome::Completed);
    let session = bench.project().chat.session_id().unwrap();
    bench
        .project()
        .chat
        .session_rules()
        .add(&["bash(make test)".to_string()]);
    let state = Arc::clone(&bench.project().active);

    bench.reconnect().unwrap();
    let after = bench.project();
    assert!(
        Arc::ptr_eq(&after.active, &state),
        "the folder's state stays"
    );
    assert_eq!(after.chat.session_id().as_deref(), Some(session.as_str()));
    assert_eq!(after.chat.session_rules().list(), vec!["bash(make test)"]);
    assert_eq!(prompt(&bench, "again").await, Outcome::Completed);

    bench.new_chat().unwrap();
    let fresh = bench.project();
    assert!(Arc::ptr_eq(&fresh.active, &state));
    assert_eq!(
        fresh.chat.session_id(),
        None,
        "a new transcript at the first prompt"
    );
    assert!(fresh.chat.history().is_empty());
    assert!(fresh.chat.session_rules().list().is_empty());
    assert_eq!(prompt(&bench, "fresh start").await, Outcome::Completed);
    assert_ne!(fresh.chat.session_id().as_deref(), Some(session.as_str()));
    // The old conversation stays in the sessions list.
    let listed: Vec<String> = decode_engine::session::SessionStore::new(&b.dirs.data)
        .list()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert!(listed.contains(&session), "{listed:?}");
}

#[tokio::test]
async fn failures_have_kinds() {
    let b = bench(0);
    let bench = on(&b, &b.a);
    assert_eq!(
        bench.open_folder(&b.a.join("missing")).unwrap_err().kind,
        ErrorKind::Project
    );
    assert_eq!(
        bench.resume("20260101-000000-000-nope").unwrap_err().kind,
        ErrorKind::Session
    );
    let err = Workbench::open(
        b.dirs.clone(),
        Overrides::default(),
        &Target {
            project: Some(b.a.clone()),
            agent: Some("nobody".into()),
            ..Target::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(err.kind, ErrorKind::UnknownAgent);
}
