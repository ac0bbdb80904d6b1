//! What the never-automatic set holds, as data (docs/permissions.md,
//! "Protected files"): the names protected at any depth in any folder, the
//! home folder's files other programs run or obey, Decode's system folder.
//! The gate (`decide`) and the path helpers read these tables; a new
//! protected file is one line here.

/// What a protected path is; [`ProtectedKind::label`] says it in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtectedKind {
    /// `.decode/**` (settings, local settings, MCP servers), `.claude/settings*.json`,
    /// `.mcp.json`: any project's.
    PermissionFile,
    /// `.decode/agents`, `.claude/agents`.
    AgentDefinitions,
    /// `.claude/settings*.json`: another agent's permission files.
    AgentSettings,
    /// `.decode` and `.claude` themselves: not protected as a whole, but
    /// swapping one (a rename, a link) would swap the files read from it.
    PermissionFolder,
    /// A `.git` folder (or the project's git folder found upwards).
    GitInternals,
    /// `~/.bashrc`, `~/.profile`, …
    ShellStartup,
    /// `~/.ssh`.
    Ssh,
    /// Decode's config and data folders.
    AppDirs,
    /// `.vscode`, `.idea`, `.envrc`: files other tools run on their own.
    RunByOtherTools,
    /// Files in the home folder that other programs run or obey (`~/.gitconfig`,
    /// `~/.config/git`, `~/.gnupg`, autostart entries, systemd units,
    /// `~/.local/bin`).
    HomeConfig,
}

impl ProtectedKind {
    /// What it is, for messages ("a permission file").
    pub fn label(self) -> &'static str {
        match self {
            ProtectedKind::PermissionFile => "a permission file",
            ProtectedKind::AgentDefinitions => "agent definitions",
            ProtectedKind::AgentSettings => "agent settings (a permission file)",
            ProtectedKind::PermissionFolder => "a folder of permission files",
            ProtectedKind::GitInternals => "git internals",
            ProtectedKind::ShellStartup => "a shell start-up file",
            ProtectedKind::Ssh => "~/.ssh",
            ProtectedKind::AppDirs => "Decode's own settings and trust store",
            ProtectedKind::RunByOtherTools => "a file other tools run on their own",
            ProtectedKind::HomeConfig => "a home-folder file other programs run or obey",
        }
    }
}

/// Names protected wherever they stand, in any folder at any depth: a path
/// is protected when some of its components, in a row, are `names` (a name
/// may hold one `*`), the last of them the path's last component — or, for
/// a folder entry (`beneath`), anywhere before it.
pub(crate) struct AnyDepth {
    pub names: &'static [&'static str],
    pub beneath: bool,
    pub kind: ProtectedKind,
}

const fn any_depth(names: &'static [&'static str], beneath: bool, kind: ProtectedKind) -> AnyDepth {
    AnyDepth {
        names,
        beneath,
        kind,
    }
}

/// The never-automatic names at any depth (docs/permissions.md, "Protected
/// files"): every project's permission files — its own, a nested one's,
/// another one's reached through `additionalDirectories` —, `.git`
/// internals of any repository (a `.git` pointer file too), and files other
/// tools run on their own.
pub(crate) const ANY_DEPTH: &[AnyDepth] = &[
    any_depth(&[".decode"], true, ProtectedKind::PermissionFile),
    any_depth(
        &[".claude", "agents"],
        true,
        ProtectedKind::AgentDefinitions,
    ),
    any_depth(
        &[".claude", "settings*.json"],
        false,
        ProtectedKind::AgentSettings,
    ),
    any_depth(&[".mcp.json"], false, ProtectedKind::PermissionFile),
    any_depth(&[".git"], true, ProtectedKind::GitInternals),
    any_depth(&[".vscode"], true, ProtectedKind::RunByOtherTools),
    any_depth(&[".idea"], true, ProtectedKind::RunByOtherTools),
    any_depth(&[".envrc"], false, ProtectedKind::RunByOtherTools),
];

/// The home folder's files other programs run or obey: relative to the home
/// folder, whether a folder (everything beneath it too), and what it is.
pub(crate) const IN_HOME: &[(&str, bool, ProtectedKind)] = &[
    (".bashrc", false, ProtectedKind::ShellStartup),
    (".bash_profile", false, ProtectedKind::ShellStartup),
    (".bash_login", false, ProtectedKind::ShellStartup),
    (".bash_logout", false, ProtectedKind::ShellStartup),
    (".profile", false, ProtectedKind::ShellStartup),
    (".zshrc", false, ProtectedKind::ShellStartup),
    (".zshenv", false, ProtectedKind::ShellStartup),
    (".zprofile", false, ProtectedKind::ShellStartup),
    (".zlogin", false, ProtectedKind::ShellStartup),
    (".zlogout", false, ProtectedKind::ShellStartup),
    (".kshrc", false, ProtectedKind::ShellStartup),
    (".config/fish", true, ProtectedKind::ShellStartup),
    (".ssh", true, ProtectedKind::Ssh),
    (".gitconfig", false, ProtectedKind::HomeConfig),
    (".config/git", true, ProtectedKind::HomeConfig),
    (".gnupg", true, ProtectedKind::HomeConfig),
    (".config/autostart", true, ProtectedKind::HomeConfig),
    (".config/systemd", true, ProtectedKind::HomeConfig),
    (".local/share/applications", true, ProtectedKind::HomeConfig),
    (".local/bin", true, ProtectedKind::HomeConfig),
    // Decode's own additions: more files other programs run at log-in or start.
    (".bash_aliases", false, ProtectedKind::ShellStartup),
    (".xprofile", false, ProtectedKind::ShellStartup),
    (".xsession", false, ProtectedKind::ShellStartup),
    (".xinitrc", false, ProtectedKind::ShellStartup),
    (".pam_environment", false, ProtectedKind::HomeConfig),
    (".config/environment.d", true, ProtectedKind::HomeConfig),
    (".vimrc", false, ProtectedKind::HomeConfig),
    (".config/nvim", true, ProtectedKind::HomeConfig),
    (".emacs", false, ProtectedKind::HomeConfig),
    (".emacs.d/init.el", false, ProtectedKind::HomeConfig),
    // Python's user site (a `.pth` file there runs at every interpreter start)
    // and cargo's installed programs (`cargo NAME` runs `cargo-NAME`).
    (".local/lib", true, ProtectedKind::HomeConfig),
    (".cargo/bin", true, ProtectedKind::HomeConfig),
    // Package managers' own settings, which can name programs they run, indexes
    // they fetch from and scripts they run (outside attack, round 6).
    (".cargo/config.toml", false, ProtectedKind::HomeConfig),
    (".cargo/config", false, ProtectedKind::HomeConfig),
    (".npmrc", false, ProtectedKind::HomeConfig),
    (".yarnrc", false, ProtectedKind::HomeConfig),
    (".yarnrc.yml", false, ProtectedKind::HomeConfig),
    (".config/pip", true, ProtectedKind::HomeConfig),
    (".pip", true, ProtectedKind::HomeConfig),
    (".pydistutils.cfg", false, ProtectedKind::HomeConfig),
    // Folders of start-up files many `.bashrc`s read one by one.
    (".bashrc.d", true, ProtectedKind::ShellStartup),
];

/// Decode's system-wide folder (managed settings), never automatic.
pub(crate) const SYSTEM_DIRS: &[&str] = &["/etc/decode"];

/// Further names a path only known when it runs may end in and name a
/// protected file (`$D/hooks/pre-commit`, `$D/authorized_keys`).
const ALSO_MENTIONED: &[&str] = &["hooks", "authorized_keys", "settings.json", "trust.json"];

/// Whether one component of a name in [`ANY_DEPTH`] (`*` matches any run
/// of characters) is `name`.
pub(crate) fn name_is(pattern: &str, name: &str) -> bool {
    // Most names part at their first character (every name here has a literal one).
    if let (Some(&p), Some(&n)) = (pattern.as_bytes().first(), name.as_bytes().first()) {
        if p != b'*' && p != n {
            return false;
        }
    }
    match pattern.split_once('*') {
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
        None => pattern == name,
    }
}

/// Whether a component of a path only known when it runs is one of the
/// protected names (so the path may name a protected file): the names of
/// [`ANY_DEPTH`], the home folder's entries, and [`ALSO_MENTIONED`].
pub(crate) fn mentions_protected_name(component: &str) -> bool {
    ANY_DEPTH
        .iter()
        .flat_map(|e| e.names.iter())
        .any(|n| name_is(n, component))
        || IN_HOME.iter().any(|(rel, _, _)| {
            let first = rel.split('/').next().unwrap_or(rel);
            let last = rel.rsplit('/').next().unwrap_or(rel);
            component == first || (component == last && last != "bin")
        })
        || ALSO_MENTIONED.contains(&component)
}
