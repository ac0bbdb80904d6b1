//! Shared helpers for the tools tests: a temp project with its own home folder, an
//! active state in a chosen mode, and a scripted decision surface.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use decode_core::agents::Catalog;
use decode_core::decision::{DecisionAnswer, DecisionRequest, DecisionSurface, NoSurface};
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_core::Levels;
use decode_engine::tools::{self, SessionState, ToolContext, ToolResult};
use decode_policy::{Mode, Tool};
use decode_test_support::TempProject;
use serde_json::Value;

/// A name the tests' resolver treats as a public host at 127.0.0.1.
pub(crate) const PUBLIC_TEST_HOST: &str = "web.test";

/// A fake server's base URL under [`PUBLIC_TEST_HOST`] (a "public" host).
pub(crate) fn public_uri(server: &wiremock::MockServer) -> String {
    server.uri().replace("127.0.0.1", PUBLIC_TEST_HOST)
}

pub(crate) struct Project {
    _tmp: TempProject,
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
}

impl Project {
    pub(crate) fn new() -> Project {
        let tmp = TempProject::new().unwrap();
        Project {
            root: tmp.project.clone(),
            home: tmp.home.clone(),
            _tmp: tmp,
        }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// The active state (trusted project, built-in agents, settings from disk: the
    /// project's file and the local, user and managed levels — the managed file is
    /// looked for in the temp home, never in `/etc`).
    pub(crate) fn state(&self, mode: Mode) -> Arc<ActiveState> {
        let (mut settings, _) = Settings::load(&self.root);
        // These tests ask about ordinary commands such as `echo hi`: read-only
        // commands (which run without asking) are off unless the test's
        // settings turn them on.
        settings.read_only_commands.get_or_insert(false);
        let (state, _) =
            ActiveState::new(&self.root, Catalog::builtin(), settings, true, &self.home);
        let (levels, _) = Levels::load_from(
            &self.root,
            &self.home,
            &self.home.join("managed-settings.json"),
            &self.home.join(".config/decode"),
        );
        state.set_levels(levels);
        state.set_mode(mode);
        Arc::new(state)
    }

    pub(crate) fn ctx(&self, mode: Mode) -> ToolContext {
        self.ctx_with(
            mode,
            Arc::new(NoSurface {
                reason: "no one is here in tests".into(),
            }),
        )
    }

    /// A context whose resolver treats [`PUBLIC_TEST_HOST`] as a public host at
    /// 127.0.0.1 (fake web servers).
    pub(crate) fn ctx_with(&self, mode: Mode, surface: Arc<dyn DecisionSurface>) -> ToolContext {
        ToolContext::new(self.state(mode), surface).with_resolver(Arc::new(
            decode_engine::net::Resolver::default()
                .with_public(PUBLIC_TEST_HOST, std::net::Ipv4Addr::LOCALHOST.into()),
        ))
    }

    pub(crate) fn one_shot_ctx(&self, mode: Mode) -> ToolContext {
        let ctx = self.ctx(mode);
        let session = Arc::new(SessionState::one_shot(&self.root));
        ctx.with_session(session)
    }
}

/// Runs a tool directly (no gate).
pub(crate) async fn exec(ctx: &ToolContext, tool: Tool, input: Value) -> ToolResult {
    tools::handler(tool).execute(input, ctx).await
}

/// Answers asks from a script, in order, and records every request.
#[derive(Default)]
pub(crate) struct Scripted {
    answers: Mutex<VecDeque<DecisionAnswer>>,
    pub asked: Mutex<Vec<DecisionRequest>>,
}

impl Scripted {
    pub(crate) fn new(answers: Vec<DecisionAnswer>) -> Arc<Scripted> {
        Arc::new(Scripted {
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn asked(&self) -> Vec<DecisionRequest> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl DecisionSurface for Scripted {
    async fn ask(&self, request: DecisionRequest) -> DecisionAnswer {
        self.asked.lock().unwrap().push(request);
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(DecisionAnswer::Unavailable {
                reason: "the script has no more answers".into(),
            })
    }
}
