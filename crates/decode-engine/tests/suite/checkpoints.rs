//! Checkpoints (docs/checkpoints.md): a turn's changes through `write`, `edit` and
//! `bash` are recorded and undone exactly — contents, modes, links, binary files,
//! created and deleted paths, renames — a file changed since is a conflict the person
//! decides, projects without git and with a huge ignored `target/` work, two sessions
//! keep their changes apart, old turns are pruned, and the project's own `.git` is
//! byte-identical before and after.

use crate::tools_support::Project;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use decode_engine::checkpoints::{Checkpoints, TurnRecorder, KEEP_FOR};
use decode_engine::tools::{self, ToolContext};
use decode_policy::{Mode, Tool};
use decode_protocol::{ConflictReason, FileChange, UndoScope};
use serde_json::{json, Value};

/// Every file, link and folder under `dir` with its type, mode and contents (or
/// link target): two equal maps are byte-identical trees.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            if m.is_dir() {
                out.insert(rel, (m.mode(), Vec::new()));
                stack.push(p);
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, (m.mode(), t.into_os_string().into_encoded_bytes()));
            } else {
                out.insert(rel, (m.mode(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn git(root: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

struct Setup {
    project: Project,
    _data: tempfile::TempDir,
    data: PathBuf,
    store: Arc<Checkpoints>,
}

fn setup() -> Setup {
    let project = Project::new();
    let data = tempfile::tempdir().unwrap();
    let data_path = data.path().join("decode");
    let store = Arc::new(Checkpoints::open(&data_path, &project.root).unwrap());
    Setup {
        project,
        _data: data,
        data: data_path,
        store,
    }
}

impl Setup {
    fn ctx(&self, session: &str, turn: u32) -> ToolContext {
        let rec = Arc::new(TurnRecorder::new(
            Arc::clone(&self.store),
            session,
            turn,
            "do the work",
        ));
        self.project.ctx(Mode::Auto).with_checkpoint(Some(rec))
    }
}

async fn call(ctx: &ToolContext, tool: Tool, input: Value) -> String {
    let out = tools::call_tool(&*tools::handler(tool), input, ctx).await;
    assert!(out.ran, "{tool:?} did not run: {:?}", out.result);
    assert!(!out.result.is_error, "{tool:?}: {}", out.result.content);
    out.result.content
}

fn scope(session: &str, turn: u32) -> UndoScope {
    UndoScope {
        session: session.into(),
        turn,
        later_turns: false,
    }
}

fn mode_of(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[tokio::test]
async fn a_turn_that_wrote_edited_created_deleted_and_renamed_is_undone_exactly() {
    let s = setup();
    let p = &s.project;
    p.write("edit.txt", "one\ntwo\nthree\n");
    p.write("write.txt", "old contents\n");
    p.write("gone.txt", "will be deleted\n");
    p.write("old-name.txt", "renamed by mv\n");
    p.write("script.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(p.path("script.sh"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::write(p.path("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::fs::create_dir(p.path("dir")).unwrap();
    p.write("dir/inside.txt", "in a folder the turn removes\n");
    std::os::unix::fs::symlink("edit.txt", p.path("link")).unwrap();
    p.write(".gitignore", "build/\n");
    git(&p.root, &["init", "-q"]);
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-q", "-m", "start"]);
    let git_before = tree(&p.path(".git"));
    let before = tree(&p.root);

    let ctx = s.ctx("20260101-000000-000-aaaa", 1);
    call(&ctx, Tool::Read, json!({"path": "edit.txt"})).await;
    call(
        &ctx,
        Tool::Edit,
        json!({"path": "edit.txt", "old_string": "two", "new_string": "TWO"}),
    )
    .await;
    call(
        &ctx,
        Tool::Write,
        json!({"path": "write.txt", "content": "new contents\n"}),
    )
    .await;
    call(
        &ctx,
        Tool::Write,
        json!({"path": "new/deeper/created.txt", "content": "created by the turn\n"}),
    )
    .await;
    call(
        &ctx,
        Tool::Bash,
        json!({"command": "rm gone.txt && mv old-name.txt new-name.txt && chmod 755 script.sh \
                && printf '\\x00\\xff\\x00binary' > blob.bin && printf '\\x00\\x01' > made.bin \
                && rm -r dir && ln -sfn write.txt link && ln -s nowhere dangling \
                && mkdir -p build && echo ignored > build/out.o"}),
    )
    .await;
    assert_eq!(mode_of(&p.path("script.sh")), 0o755);

    let plan = s
        .store
        .plan_undo(&scope("20260101-000000-000-aaaa", 1))
        .unwrap();
    let by_path: BTreeMap<&str, &decode_protocol::UndoFile> =
        plan.files.iter().map(|f| (f.path.as_str(), f)).collect();
    assert_eq!(plan.conflicts, 0, "{plan:#?}");
    assert_eq!(by_path["edit.txt"].change, FileChange::Modified);
    let d = by_path["edit.txt"].diff.as_deref().unwrap();
    assert!(d.contains("-two") && d.contains("+TWO"), "{d}");
    assert_eq!(
        by_path["new/deeper/created.txt"].change,
        FileChange::Created
    );
    assert_eq!(by_path["new"].change, FileChange::Created);
    assert_eq!(by_path["gone.txt"].change, FileChange::Deleted);
    assert_eq!(by_path["old-name.txt"].change, FileChange::Deleted);
    assert_eq!(by_path["new-name.txt"].change, FileChange::Created);
    assert_eq!(by_path["script.sh"].change, FileChange::ModeChanged);
    assert!(by_path["blob.bin"].binary && by_path["blob.bin"].diff.is_none());
    assert_eq!(by_path["dir"].change, FileChange::Deleted);
    assert_eq!(by_path["link"].change, FileChange::Modified);
    assert_eq!(by_path["dangling"].change, FileChange::Created);
    assert!(
        !by_path.keys().any(|k| k.starts_with("build")),
        "an ignored folder is not recorded: {:?}",
        by_path.keys()
    );

    let report = s
        .store
        .undo(&scope("20260101-000000-000-aaaa", 1), &[])
        .unwrap();
    assert!(
        report.failed.is_empty() && report.kept.is_empty(),
        "{report:#?}"
    );
    // Everything the turn changed is back; the ignored build output it made stays.
    let mut after = tree(&p.root);
    after.retain(|k, _| !k.starts_with("build"));
    let mut expected = before.clone();
    expected.retain(|k, _| !k.starts_with(".git/") && k != Path::new(".git"));
    after.retain(|k, _| !k.starts_with(".git/") && k != Path::new(".git"));
    assert_eq!(after, expected);
    assert_eq!(mode_of(&p.path("script.sh")), 0o640);
    assert_eq!(
        std::fs::read_link(p.path("link")).unwrap(),
        Path::new("edit.txt")
    );
    assert_eq!(
        tree(&p.path(".git")),
        git_before,
        "the project's .git is untouched"
    );

    // Undone once: a second undo of the same turn is refused.
    assert!(s
        .store
        .plan_undo(&scope("20260101-000000-000-aaaa", 1))
        .is_err());
    let turns = s.store.turns(None).unwrap();
    assert!(turns[0].undone.is_some());
}

#[tokio::test]
async fn a_file_changed_after_the_turn_is_a_conflict_kept_unless_the_person_chooses() {
    let s = setup();
    let p = &s.project;
    p.write("a.txt", "a\n");
    p.write("b.txt", "b\n");
    p.write("c.txt", "c\n");
    let session = "20260101-000000-000-bbbb";
    let ctx = s.ctx(session, 1);
    call(
        &ctx,
        Tool::Bash,
        json!({"command": "echo turn >> a.txt; echo turn >> b.txt; echo turn >> c.txt"}),
    )
    .await;
    // The person edits two of them afterwards.
    std::fs::write(p.path("a.txt"), "a\nturn\nmine\n").unwrap();
    std::fs::remove_file(p.path("b.txt")).unwrap();

    let plan = s.store.plan_undo(&scope(session, 1)).unwrap();
    assert_eq!(plan.conflicts, 2);
    let a = plan.files.iter().find(|f| f.path == "a.txt").unwrap();
    let conflict = a.conflict.as_ref().unwrap();
    assert_eq!(conflict.reason, ConflictReason::ChangedSince);
    assert!(
        conflict.diff.as_deref().unwrap().contains("+mine"),
        "{conflict:?}"
    );

    // Only b.txt is chosen: a.txt keeps the person's version.
    let report = s.store.undo(&scope(session, 1), &["b.txt".into()]).unwrap();
    assert_eq!(report.kept, ["a.txt"]);
    assert_eq!(p.read("a.txt"), "a\nturn\nmine\n");
    assert_eq!(p.read("b.txt"), "b\n");
    assert_eq!(p.read("c.txt"), "c\n");
    // The turn is not marked undone while a conflict is kept: the person can still
    // choose to restore it, and what is back shows as such.
    let plan = s.store.plan_undo(&scope(session, 1)).unwrap();
    assert_eq!(plan.conflicts, 1);
    assert!(plan
        .files
        .iter()
        .filter(|f| f.path != "a.txt")
        .all(|f| f.already_restored));
    let again = s.store.undo(&scope(session, 1), &["a.txt".into()]).unwrap();
    assert_eq!(again.restored, ["a.txt"]);
    assert_eq!(p.read("a.txt"), "a\n");
    assert!(s.store.plan_undo(&scope(session, 1)).is_err(), "undone now");
}

#[tokio::test]
async fn a_project_without_git_is_recorded_and_its_gitignore_honoured() {
    let s = setup();
    let p = &s.project;
    assert!(!p.path(".git").exists());
    p.write(".gitignore", "*.log\n");
    p.write("src/lib.rs", "pub fn a() {}\n");
    let session = "20260101-000000-000-cccc";
    let ctx = s.ctx(session, 3);
    call(
        &ctx,
        Tool::Bash,
        json!({"command": "echo 'pub fn b() {}' >> src/lib.rs; echo noise > run.log; touch src/new.rs"}),
    )
    .await;
    let plan = s.store.plan_undo(&scope(session, 3)).unwrap();
    let paths: Vec<&str> = plan.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/lib.rs", "src/new.rs"]);
    s.store.undo(&scope(session, 3), &[]).unwrap();
    assert_eq!(p.read("src/lib.rs"), "pub fn a() {}\n");
    assert!(!p.path("src/new.rs").exists());
    assert!(p.path("run.log").exists(), "ignored files are not touched");
}

#[tokio::test]
async fn a_huge_ignored_target_is_neither_read_nor_recorded() {
    let s = setup();
    let p = &s.project;
    p.write(".gitignore", "/target\n");
    p.write("src/main.rs", "fn main() {}\n");
    for d in 0..40 {
        let dir = p.path(&format!("target/debug/deps/{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..250 {
            std::fs::write(dir.join(format!("{f}.rlib")), b"x").unwrap();
        }
    }
    // Files written within a second of a checkpoint are read again at the next one
    // (the "racy" rule): let the clock move past them first.
    std::thread::sleep(Duration::from_millis(1100));
    let first = s.store.record_now().unwrap();
    assert_eq!(first.entries, 3, "{first:?}"); // .gitignore, src, src/main.rs
    let again = s.store.record_now().unwrap();
    assert_eq!(
        (again.read, again.changed),
        (0, 0),
        "nothing changed: nothing read"
    );

    let session = "20260101-000000-000-dddd";
    let ctx = s.ctx(session, 1);
    call(
        &ctx,
        Tool::Bash,
        json!({"command": "rm -r target/debug/deps/1 && echo 'fn x() {}' >> src/main.rs"}),
    )
    .await;
    let plan = s.store.plan_undo(&scope(session, 1)).unwrap();
    let paths: Vec<&str> = plan.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/main.rs"]);
}

#[tokio::test]
async fn two_sessions_on_one_project_keep_their_turns_apart() {
    let s = setup();
    let p = &s.project;
    p.write("shared.txt", "start\n");
    let a = s.ctx("20260101-000000-000-aaaa", 1);
    let b = s.ctx("20260101-000000-000-bbbb", 1);
    // A's command runs while B writes: B waits for A's command to end, so A's
    // "after" snapshot cannot take in B's file.
    let slow = call(
        &a,
        Tool::Bash,
        json!({"command": "sleep 0.6; echo from-a > a.txt"}),
    );
    let quick = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        call(
            &b,
            Tool::Write,
            json!({"path": "b.txt", "content": "from b\n"}),
        )
        .await
    };
    tokio::join!(slow, quick);
    let b2 = s.ctx("20260101-000000-000-bbbb", 2);
    call(&b2, Tool::Bash, json!({"command": "echo b >> a.txt"})).await;

    let plan_a = s
        .store
        .plan_undo(&scope("20260101-000000-000-aaaa", 1))
        .unwrap();
    let paths: Vec<&str> = plan_a.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    let plan_b = s
        .store
        .plan_undo(&scope("20260101-000000-000-bbbb", 1))
        .unwrap();
    let paths: Vec<&str> = plan_b.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["b.txt"]);
    // B's later turn changed A's file: undoing A's turn keeps it (a conflict).
    assert_eq!(plan_a.conflicts, 1);
    let report = s
        .store
        .undo(&scope("20260101-000000-000-aaaa", 1), &[])
        .unwrap();
    assert_eq!(report.kept, ["a.txt"]);
    assert_eq!(p.read("a.txt"), "from-a\nb\n");
    // Undoing B's first turn removes only its file.
    s.store
        .undo(&scope("20260101-000000-000-bbbb", 1), &[])
        .unwrap();
    assert!(!p.path("b.txt").exists());
    assert_eq!(p.read("a.txt"), "from-a\nb\n");
}

#[tokio::test]
async fn restore_to_here_undoes_every_later_turn_and_marks_a_change_between_turns() {
    let s = setup();
    let p = &s.project;
    p.write("a.txt", "v0\n");
    let session = "20260101-000000-000-eeee";
    call(
        &s.ctx(session, 1),
        Tool::Bash,
        json!({"command": "echo v1 > a.txt"}),
    )
    .await;
    call(
        &s.ctx(session, 2),
        Tool::Bash,
        json!({"command": "echo v2 > a.txt; echo x > b.txt"}),
    )
    .await;
    call(
        &s.ctx(session, 3),
        Tool::Bash,
        json!({"command": "echo y > c.txt"}),
    )
    .await;
    let all = UndoScope {
        session: session.into(),
        turn: 2,
        later_turns: true,
    };
    let plan = s.store.plan_undo(&all).unwrap();
    assert_eq!(plan.turns, [2, 3]);
    s.store.undo(&all, &[]).unwrap();
    assert_eq!(p.read("a.txt"), "v1\n");
    assert!(!p.path("b.txt").exists() && !p.path("c.txt").exists());

    // Someone edits between turns 4 and 5: restoring to turn 4 would drop it.
    call(
        &s.ctx(session, 4),
        Tool::Bash,
        json!({"command": "echo v4 > a.txt"}),
    )
    .await;
    std::fs::write(p.path("a.txt"), "theirs\n").unwrap();
    call(
        &s.ctx(session, 5),
        Tool::Bash,
        json!({"command": "echo v5 > a.txt"}),
    )
    .await;
    let plan = s
        .store
        .plan_undo(&UndoScope {
            session: session.into(),
            turn: 4,
            later_turns: true,
        })
        .unwrap();
    let a = &plan.files[0];
    assert_eq!(
        a.conflict.as_ref().map(|c| c.reason),
        Some(ConflictReason::ChangedBetweenTurns)
    );
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_is_restored_without_writing_through_the_link() {
    let s = setup();
    let p = &s.project;
    p.write("src/a.rs", "a\n");
    let outside = tempfile::tempdir().unwrap();
    let session = "20260101-000000-000-ffff";
    let ctx = s.ctx(session, 1);
    let out = outside.path().display().to_string();
    call(
        &ctx,
        Tool::Bash,
        json!({"command": format!("rm -r src && ln -s {out} src")}),
    )
    .await;
    s.store.undo(&scope(session, 1), &[]).unwrap();
    assert!(std::fs::symlink_metadata(p.path("src")).unwrap().is_dir());
    assert_eq!(p.read("src/a.rs"), "a\n");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn turns_older_than_30_days_are_pruned_with_the_contents_only_they_held() {
    let s = setup();
    let p = &s.project;
    p.write("a.txt", "kept in the index\n");
    p.write("y.txt", "y0\n");
    let old = "20250101-000000-000-aaaa";
    let new = "20260101-000000-000-bbbb";
    call(
        &s.ctx(old, 1),
        Tool::Bash,
        json!({"command": "echo y1 > y.txt; echo old-version > b.txt"}),
    )
    .await;
    // Someone else changes y.txt since: y0 and y1 are held by the old turn only.
    std::fs::write(p.path("y.txt"), "y2\n").unwrap();
    s.store.record_now().unwrap();
    call(
        &s.ctx(new, 1),
        Tool::Bash,
        json!({"command": "echo new > b.txt"}),
    )
    .await;
    // The old session's turn was last changed 31 days ago.
    let log_path = s.store.dir().join("turns").join(format!("{old}.json"));
    let mut log: Value = serde_json::from_slice(&std::fs::read(&log_path).unwrap()).unwrap();
    let long_ago = decode_engine_now() - 31 * 24 * 3600 * 1000;
    log["turns"][0]["updated"] = json!(long_ago);
    std::fs::write(&log_path, serde_json::to_vec(&log).unwrap()).unwrap();
    let objects_before = count_objects(s.store.dir());

    let report = s.store.prune(KEEP_FOR).unwrap();
    assert_eq!(report.turns, 1);
    assert!(!log_path.exists());
    assert_eq!(report.objects, 2, "y0 and y1: {report:?}");
    assert_eq!(
        count_objects(s.store.dir()),
        objects_before - report.objects
    );
    // The newer turn can still be undone: its contents were kept.
    s.store.undo(&scope(new, 1), &[]).unwrap();
    assert_eq!(p.read("b.txt"), "old-version\n");
    assert!(s.store.plan_undo(&scope(old, 1)).is_err());

    // A store of a project unused for 30 days goes whole.
    let other = tempfile::tempdir().unwrap();
    let unused = Checkpoints::open(&s.data, other.path()).unwrap();
    unused.record_now().unwrap();
    let dir = unused.dir().to_path_buf();
    drop(unused);
    let month_ago = std::time::SystemTime::now() - Duration::from_secs(31 * 24 * 3600);
    for f in ["index", "turns", "project"] {
        if let Ok(file) = std::fs::File::options().write(true).open(dir.join(f)) {
            file.set_modified(month_ago).unwrap();
        }
    }
    let removed = decode_engine::checkpoints::prune::prune_unused_stores(
        &s.data,
        KEEP_FOR,
        Some(s.store.dir()),
    );
    assert_eq!(removed, 1);
    assert!(!dir.exists() && s.store.dir().exists());
}

fn decode_engine_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn count_objects(store: &Path) -> usize {
    tree(&store.join("objects"))
        .iter()
        .filter(|(_, (mode, _))| mode & 0o170000 == 0o100000)
        .count()
}

#[tokio::test]
async fn the_store_is_a_git_object_database_git_can_read() {
    let s = setup();
    let p = &s.project;
    p.write("hello.txt", "hello\n");
    s.store.record_now().unwrap();
    let out = Command::new("git")
        .args(["cat-file", "-p", "ce013625030ba8dba906f756967f9e9ca394464a"])
        .env("GIT_DIR", s.store.dir())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"hello\n");
    assert!(s.store.dir().starts_with(&s.data));
}

#[tokio::test]
async fn a_sandboxed_command_and_its_run_again_outside_are_both_recorded() {
    use decode_core::decision::{DecisionAnswer, DecisionRequest};
    use decode_engine::sandbox::{self, Support};
    assert!(
        matches!(sandbox::support(), Support::Enforced { .. }),
        "this test needs bubblewrap: {:?}",
        sandbox::support()
    );
    let s = setup();
    let p = &s.project;
    p.write("log.txt", "start\n");
    let session = "20260101-000000-000-5a5a";
    // The command appends in the project (allowed in the sandbox), then writes in the
    // home folder (a bound of the sandbox); the person lets it run again outside.
    let surface = crate::tools_support::Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let rec = Arc::new(TurnRecorder::new(
        Arc::clone(&s.store),
        session,
        1,
        "log it",
    ));
    let ctx = p
        .ctx_with(Mode::Auto, surface.clone())
        .with_checkpoint(Some(rec));
    let home = p.home.join("notes.txt");
    let command = format!("echo run >> log.txt; echo hi > {}", home.display());
    let out = tools::call_tool(
        &*tools::handler(Tool::Bash),
        json!({ "command": command }),
        &ctx,
    )
    .await;
    let asked = surface.asked();
    assert!(
        matches!(asked.as_slice(), [DecisionRequest::RunOutside { .. }]),
        "{asked:?}"
    );
    assert_eq!(out.result.sandboxed, Some(false), "{}", out.result.content);
    assert_eq!(p.read("log.txt"), "start\nrun\nrun\n", "it ran twice");

    let plan = s.store.plan_undo(&scope(session, 1)).unwrap();
    let paths: Vec<&str> = plan.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["log.txt"], "outside the project is not recorded");
    assert_eq!(plan.conflicts, 0, "both runs are the turn's: {plan:?}");
    let report = s.store.undo(&scope(session, 1), &[]).unwrap();
    assert_eq!(report.restored, ["log.txt"]);
    assert_eq!(p.read("log.txt"), "start\n");
}

#[tokio::test]
async fn restore_to_here_on_a_turn_that_changed_nothing_undoes_the_later_ones() {
    let s = setup();
    let p = &s.project;
    p.write("a.txt", "v0\n");
    let session = "20260101-000000-000-abab";
    // Turn 1 only read; turn 2 wrote.
    call(&s.ctx(session, 1), Tool::Read, json!({"path": "a.txt"})).await;
    call(
        &s.ctx(session, 2),
        Tool::Write,
        json!({"path": "a.txt", "content": "v2\n"}),
    )
    .await;
    let here = |turn| UndoScope {
        session: session.into(),
        turn,
        later_turns: true,
    };
    // "Undo this turn" on turn 1 has nothing to undo; "Restore to here" does.
    assert!(s.store.plan_undo(&scope(session, 1)).is_err());
    assert_eq!(s.store.plan_undo(&here(1)).unwrap().turns, [2]);
    assert!(
        s.store.plan_undo(&here(3)).is_err(),
        "nothing from turn 3 on"
    );
    s.store.undo(&here(1), &[]).unwrap();
    assert_eq!(p.read("a.txt"), "v0\n");
    assert!(s.store.plan_undo(&here(1)).is_err(), "everything is undone");
}
