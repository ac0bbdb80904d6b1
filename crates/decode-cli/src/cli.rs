//! The one command-line parser of the `decode` binary (docs/window.md; README).
//!
//! Every entry point goes through [`parse`]: the window start-up and every subcommand.
//! Usage errors never print clap's multi-line usage block: they become one line on
//! stderr and exit code 2, which scripts and people can both read.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Decode: a desktop coding agent whose every tool call passes a permission gate.
#[derive(Debug, Parser)]
#[command(
    name = "decode",
    version,
    about = "Decode: a desktop coding agent with a permission gate you can trust.",
    long_about = None
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub open: OpenArgs,
}

/// `decode [PROJECT_DIR] [--agent NAME] [--mode MODE] [provider flags] [--resume ID]`:
/// open the window on a project.
#[derive(Debug, Args, Default)]
pub struct OpenArgs {
    /// The project folder to open (default: the current directory, or the resumed
    /// session's).
    pub project_dir: Option<PathBuf>,

    #[command(flatten)]
    pub select: SelectArgs,

    #[command(flatten)]
    pub provider: ProviderArgs,

    /// Continue a saved session in the window (see `decode sessions`).
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,

    /// The most model turns per prompt (default: maxTurns in config.json, else 50).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
}

/// The agent and mode to start with; shared by the window and every subcommand.
#[derive(Debug, Args, Default, Clone)]
pub struct SelectArgs {
    /// The agent to start with (default: build). `decode agents` lists them.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,

    /// The permission mode: default, edit, plan, auto or bypass (default: the agent's).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the gate's verdict, reason and trace for one tool call, without running it.
    Check(CheckArgs),
    /// Mark a project folder trusted (or, with --revoke, untrusted again).
    Trust(TrustArgs),
    /// List the agents catalog of a project and validate its files.
    Agents(AgentsArgs),
    /// Run one tool call through the gate, exactly as the agent would, and print its result.
    Tool(ToolArgs),
    /// Run the agent headless on a prompt with the configured model, streaming to stdout.
    Run(Box<RunArgs>),
    /// Store or delete a provider's API key in the system keyring.
    Key(KeyArgs),
    /// List the saved sessions (for `decode run --resume`).
    Sessions(SessionsArgs),
    /// Print the rules that apply in a project, merged from every level (managed,
    /// user, project, local, the folders around it, the agent), each with its level
    /// and file and whether it counts.
    Settings(SettingsArgs),
    /// Judge one pre-tool-use event of another agent (Claude Code, Gemini CLI) read on
    /// stdin, and print that agent's decision JSON.
    Hook(HookArgs),
    /// Print what this machine can enforce (the bash sandbox) and what a project's
    /// sandbox keeps read-only. Exits 1 when commands would run unsandboxed.
    Doctor(DoctorArgs),
    /// MCP servers: list, add, remove, approve a project's, list their tools.
    Mcp(McpArgs),
    /// Undo what a turn of a session changed in the project (files changed since are
    /// kept unless named with --overwrite).
    Undo(UndoArgs),
    /// Internal: shows one native dialog described on stdin (the window's
    /// approval dialogs run in a child process so they can be closed).
    #[command(hide = true)]
    NativeDialog,
}

/// `--provider`, `--model`, `--base-url`, `--script`: override the config for one run.
#[derive(Debug, Args, Default, Clone)]
pub struct ProviderArgs {
    /// The model provider: gemini, anthropic, openai (any OpenAI-compatible server) or script.
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,

    /// The model name (e.g. gemini-2.5-flash, claude-sonnet-4-5, gpt-4.1, qwen2.5-coder:7b).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,

    /// The API base URL, version included (e.g. http://localhost:11434/v1 for Ollama).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// The script file the script provider replays.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

impl ProviderArgs {
    /// The flags as the overrides of the config they are (the one place they become
    /// them), with `--max-turns`; an unknown provider is the one-line usage error.
    pub fn overrides(
        &self,
        max_turns: Option<u32>,
    ) -> Result<decode_engine::config::Overrides, String> {
        let provider = self
            .provider
            .as_deref()
            .map(str::parse::<decode_engine::providers::ProviderKind>)
            .transpose()
            .map_err(|e| format!("decode: {e}"))?;
        Ok(decode_engine::config::Overrides {
            provider,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            script: self.script.clone(),
            max_turns,
        })
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The project folder (default: the current directory, or the resumed session's).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    #[command(flatten)]
    pub select: SelectArgs,

    #[command(flatten)]
    pub provider: ProviderArgs,

    /// Print every loop event as one JSON line instead of text.
    #[arg(long)]
    pub json: bool,

    /// The prompt (optional with --resume: then the session goes on where it stopped).
    #[arg(
        short = 'p',
        long = "prompt",
        value_name = "PROMPT",
        allow_hyphen_values = true,
        required_unless_present = "resume"
    )]
    pub prompt: Option<String>,

    /// Continue a saved session (see `decode sessions`).
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,

    /// The most model turns for this prompt (default: maxTurns in config.json, else 50).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
}

#[derive(Debug, Args)]
pub struct KeyArgs {
    #[command(subcommand)]
    pub action: KeyAction,
}

#[derive(Debug, Subcommand)]
pub enum KeyAction {
    /// Read a key from stdin (hidden when typed on a terminal) and store it.
    Set {
        /// gemini, anthropic or openai (`decode mcp key`: the NAME of `keyring:NAME`).
        provider: String,
    },
    /// Delete a stored key.
    Delete {
        /// gemini, anthropic or openai (`decode mcp key`: the NAME of `keyring:NAME`).
        provider: String,
    },
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,

    /// Print one line: the verdict, the rule, cap or stage that decided, and the reason
    /// (for a hook's reason string).
    #[arg(long, conflicts_with = "json")]
    pub explain: bool,

    /// Read JSON lines {"tool","subject","mode"?,"agent"?} from stdin; write one verdict a line.
    #[arg(long, conflicts_with_all = ["tool", "subject"])]
    pub batch: bool,

    /// The tool, e.g. bash, read, edit, web_fetch (Claude Code names work too), or
    /// `net` to judge a network destination (`decode check net example.com:443`).
    #[arg(required_unless_present = "batch")]
    pub tool: Option<String>,

    /// What the gate matches: a command, a path or a URL ('' for tools without one).
    #[arg(required_unless_present = "batch", allow_hyphen_values = true)]
    pub subject: Option<String>,
}

#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Print {"verdict","result","is_error"} (and "answer" when asked) as JSON.
    #[arg(long)]
    pub json: bool,

    /// The tool, e.g. read, write, edit, bash, grep (Claude Code names work too).
    pub tool: String,

    /// The tool's input as a JSON object, e.g. '{"path":"README.md"}'.
    #[arg(allow_hyphen_values = true, value_name = "JSON-INPUT")]
    pub input: String,
}

/// The agents whose pre-tool-use hook `decode hook` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    /// Claude Code's `PreToolUse` hook.
    ClaudeCode,
    /// Gemini CLI's `BeforeTool` hook.
    GeminiCli,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// Whose event is on stdin: claude-code or gemini-cli.
    #[arg(value_enum, value_name = "AGENT")]
    pub from: HookAgent,

    /// The project folder (default: the nearest folder at or above the event's working
    /// folder that holds `.decode/` or `.git`, else that folder).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    #[command(flatten)]
    pub select: SelectArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// The session (default: the one that changed this project's files last).
    #[arg(long, value_name = "SESSION_ID")]
    pub session: Option<String>,

    /// The turn: the number of the prompt in the session, from 1 (default: the last
    /// turn that changed files and is not undone).
    #[arg(long, value_name = "N")]
    pub turn: Option<u32>,

    /// Also undo every later turn of the session: the files go back to how they were
    /// when turn N's prompt was sent ("restore to here").
    #[arg(long)]
    pub later: bool,

    /// Show what would be undone (files, diffs, conflicts) and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Restore this file even though it changed after the turn (a conflict); repeatable.
    #[arg(long, value_name = "PATH")]
    pub overwrite: Vec<String>,

    /// List the session's turns that changed files (all sessions without --session).
    #[arg(long, conflicts_with_all = ["turn", "later", "dry_run", "overwrite"])]
    pub list: bool,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Undo an earlier trust.
    #[arg(long)]
    pub revoke: bool,

    /// The project folder.
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// The project folder (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub action: McpAction,
}

/// Where `decode mcp add` writes a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum McpScope {
    /// Your own ~/.config/decode/mcp.json: in every project.
    User,
    /// The project's .mcp.json (Claude Code's file), shared with the team.
    Project,
}

/// How Decode talks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum McpTransport {
    /// A program speaking MCP on stdin and stdout.
    Stdio,
    /// A streamable HTTP server.
    Http,
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// List the configured servers and whether each may start (nothing is started).
    List {
        /// The project folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Start the servers (or one) and list their tools, with what each server claims
    /// and whether you marked it read-only.
    Tools {
        /// The project folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Only this server.
        server: Option<String>,
    },
    /// Add a server: `decode mcp add NAME -- COMMAND [ARGS…]` or
    /// `decode mcp add --transport http NAME URL`.
    Add {
        /// The project folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Where it is written (default: user).
        #[arg(long, short = 's', value_enum, default_value = "user")]
        scope: McpScope,
        /// stdio (a program) or http (a URL).
        #[arg(long, short = 't', value_enum, default_value = "stdio")]
        transport: McpTransport,
        /// An environment variable the server gets (KEY=VALUE); repeatable.
        #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// An HTTP header ('Name: value'; a value `keyring:NAME` is read from the
        /// keyring); repeatable.
        #[arg(long = "header", short = 'H', value_name = "HEADER")]
        header: Vec<String>,
        /// How long one tool call may take, in milliseconds (default 120000).
        #[arg(long, value_name = "MS")]
        timeout: Option<u64>,
        /// The server's name (letters, digits, `-`, `_`).
        name: String,
        /// The program (stdio) or the URL (http).
        command_or_url: String,
        /// The program's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove a server from the file that defines it.
    Remove {
        /// The project folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Only from this file's scope (default: wherever it is defined).
        #[arg(long, short = 's', value_enum)]
        scope: Option<McpScope>,
        name: String,
    },
    /// Approve a project's server (its exact command line) so it starts in this
    /// project; a changed command line asks again.
    Approve {
        /// The project folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        name: String,
    },
    /// Refuse a project's server: it stays off until its command line changes.
    Refuse {
        /// The project folder (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        name: String,
    },
    /// Store (`set`, read from stdin) or delete a header value for `keyring:NAME`.
    Key {
        #[command(subcommand)]
        action: KeyAction,
    },
}

/// What parsing produced: a command to run, or text clap wants printed with an exit code.
pub enum Parsed {
    Run(Box<Cli>),
    /// `--help` / `--version`: print to stdout, exit 0.
    Info(String),
    /// A usage error, already reduced to one line.
    UsageError(String),
}

/// Parses the arguments; usage errors are reduced to their first line.
pub fn parse<I, T>(args: I) -> Parsed
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => Parsed::Run(Box::new(cli)),
        Err(err) => match err.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                Parsed::Info(err.render().to_string())
            }
            _ => Parsed::UsageError(one_line(&err.render().to_string())),
        },
    }
}

/// Clap's first line (`error: …`), with a pointer to `--help` instead of the usage block.
fn one_line(rendered: &str) -> String {
    let first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("error: invalid arguments")
        .trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    format!("decode: {first} (see `decode --help`)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Cli {
        match parse(std::iter::once("decode").chain(args.iter().copied())) {
            Parsed::Run(cli) => *cli,
            Parsed::Info(s) => panic!("unexpected info: {s}"),
            Parsed::UsageError(e) => panic!("unexpected error: {e}"),
        }
    }

    #[test]
    fn bare_invocation_opens_the_current_directory() {
        let cli = run(&[]);
        assert!(cli.command.is_none());
        assert!(cli.open.project_dir.is_none());
        assert!(cli.open.select.agent.is_none());
    }

    #[test]
    fn project_agent_and_mode_are_read() {
        let cli = run(&["/tmp/p", "--agent", "plan", "--mode", "edit"]);
        assert_eq!(cli.open.project_dir, Some(PathBuf::from("/tmp/p")));
        assert_eq!(cli.open.select.agent.as_deref(), Some("plan"));
        assert_eq!(cli.open.select.mode.as_deref(), Some("edit"));
    }

    #[test]
    fn the_window_takes_provider_flags_and_a_session_to_resume() {
        let cli = run(&[
            "/tmp/p",
            "--provider",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--resume",
            "20250101-120000-000-ab12",
        ]);
        assert!(cli.command.is_none());
        assert_eq!(cli.open.provider.provider.as_deref(), Some("openai"));
        assert_eq!(
            cli.open.provider.base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        assert_eq!(cli.open.provider.model.as_deref(), Some("m"));
        assert_eq!(cli.open.resume.as_deref(), Some("20250101-120000-000-ab12"));
    }

    #[test]
    fn check_takes_tool_and_subject_even_when_the_subject_looks_like_a_flag() {
        let cli = run(&["check", "--json", "bash", "-rf"]);
        let Some(Command::Check(c)) = cli.command else {
            panic!("not check")
        };
        assert!(c.json);
        assert_eq!(c.tool.as_deref(), Some("bash"));
        assert_eq!(c.subject.as_deref(), Some("-rf"));
    }

    #[test]
    fn check_batch_needs_no_positional_arguments() {
        let cli = run(&["check", "--batch"]);
        assert!(matches!(
            cli.command,
            Some(Command::Check(CheckArgs { batch: true, .. }))
        ));
    }

    #[test]
    fn usage_errors_are_one_line() {
        let Parsed::UsageError(line) = parse(["decode", "--frobnicate"]) else {
            panic!("expected a usage error")
        };
        assert!(!line.contains('\n'));
        assert!(line.contains("--frobnicate"), "{line}");
    }

    #[test]
    fn check_without_subject_is_a_usage_error() {
        assert!(matches!(
            parse(["decode", "check", "bash"]),
            Parsed::UsageError(_)
        ));
    }

    #[test]
    fn tool_takes_name_and_json_input() {
        let cli = run(&[
            "tool",
            "--mode",
            "edit",
            "--json",
            "write",
            r#"{"path":"a"}"#,
        ]);
        let Some(Command::Tool(t)) = cli.command else {
            panic!("not tool")
        };
        assert!(t.json);
        assert_eq!(t.tool, "write");
        assert_eq!(t.input, r#"{"path":"a"}"#);
        assert_eq!(t.select.mode.as_deref(), Some("edit"));
        assert!(matches!(
            parse(["decode", "tool", "read"]),
            Parsed::UsageError(_)
        ));
    }

    #[test]
    fn mcp_add_takes_the_command_and_its_arguments_verbatim() {
        let cli = run(&[
            "mcp",
            "add",
            "-e",
            "A=1",
            "git",
            "uvx",
            "mcp-server-git",
            "--repository",
            ".",
        ]);
        let Some(Command::Mcp(McpArgs {
            action:
                McpAction::Add {
                    name,
                    command_or_url,
                    args,
                    env,
                    scope,
                    ..
                },
        })) = cli.command
        else {
            panic!("not mcp add")
        };
        assert_eq!(name, "git");
        assert_eq!(command_or_url, "uvx");
        assert_eq!(args, ["mcp-server-git", "--repository", "."]);
        assert_eq!(env, ["A=1"]);
        assert_eq!(scope, McpScope::User);
    }

    #[test]
    fn trust_parses_revoke() {
        let cli = run(&["trust", "--revoke", "/x"]);
        let Some(Command::Trust(t)) = cli.command else {
            panic!("not trust")
        };
        assert!(t.revoke);
        assert_eq!(t.dir, PathBuf::from("/x"));
    }
}
