//! Where a sandboxed command may write, what it must not see, and which host
//! services it must not reach (docs/sandbox.md, "What it enforces"), as entries of
//! the mount table.

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use decode_core::dirs::Dirs;
use decode_core::state::ActiveState;
use decode_core::user_settings::UserSandbox;

use super::mounts::{Kind, Mounts};

/// The toolchain caches that stay writable (relative to a home folder), with the
/// programs that use them: a cache that does not exist yet is made when one of its
/// programs is installed (else the first `npm ci` would find its cache read-only).
pub const TOOLCHAIN_CACHES: &[(&str, &[&str])] = &[
    (".cache", &[]),
    (".cargo/registry", &["cargo"]),
    (".cargo/git", &["cargo"]),
    (".rustup/toolchains", &[]),
    (".rustup/downloads", &[]),
    (".rustup/tmp", &[]),
    (".rustup/update-hashes", &[]),
    (".npm", &["npm", "npx"]),
    (".pnpm-store", &["pnpm"]),
    (".local/share/pnpm", &["pnpm"]),
    (".yarn", &["yarn"]),
    (".bun", &["bun"]),
    ("go/pkg", &["go"]),
    (".m2", &["mvn"]),
    (".gradle", &["gradle"]),
    (".nuget", &["dotnet"]),
    (".local/share/virtualenvs", &["pipenv"]),
    (".local/share/uv", &["uv"]),
];

/// Files cargo keeps beside its caches and writes on every build (its package
/// lock, its record of what the caches hold): writable where they exist.
const CARGO_FILES: &[&str] = &[
    ".cargo/.package-cache",
    ".cargo/.package-cache-mutate",
    ".cargo/.global-cache",
];

/// The credential stores that are hidden (relative to a home folder).
pub const CREDENTIAL_STORES: &[&str] = &[
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".password-store",
    ".local/share/keyrings",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".nuget/NuGet/NuGet.Config",
    ".terraform.d/credentials.tfrc.json",
    ".Xauthority",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".config/sops/age",
    ".config/rclone/rclone.conf",
    ".s3cfg",
    ".boto",
    ".config/op",
    ".local/share/gopass",
];

/// Names in `~/.ssh` that hold no secret (everything else there is hidden).
const SSH_PUBLIC: &[&str] = &[
    "known_hosts",
    "known_hosts.old",
    "known_hosts2",
    "config",
    "authorized_keys",
    "authorized_keys2",
];

/// What one sandbox is made from besides the gate: the person's folders and
/// settings, read when the command starts.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The project (resolved).
    pub project: PathBuf,
    /// The home folders: the gate's and the process's, when they differ (resolved).
    pub homes: Vec<PathBuf>,
    /// The settings' `additionalDirectories` (a trusted project's only; resolved).
    pub additional: Vec<PathBuf>,
    /// The person's own `sandbox` settings.
    pub user: UserSandbox,
    /// Problems with the person's settings file (file:line:column: what).
    pub user_problems: Vec<String>,
    /// The temp folders: `/tmp` and `$TMPDIR` (resolved).
    pub temp: Vec<PathBuf>,
    /// The runtime folder (`$XDG_RUNTIME_DIR`, else `/run/user/UID`).
    pub runtime: PathBuf,
    /// Decode's data folder (the hidden placeholders are made there).
    pub data: PathBuf,
    /// Decode's state folders (logs, history): hidden.
    pub state: Vec<PathBuf>,
    /// Decode's config and data folders of every home folder: hidden (the gate's
    /// protected set names those of its own home).
    pub app: Vec<PathBuf>,
    /// This user.
    pub uid: u32,
    /// Commands get a network of their own.
    pub own_network: bool,
    /// The projects the person trusts (resolved; see `Plan`'s other projects).
    pub trusted: Vec<PathBuf>,
}

impl Inputs {
    /// The inputs of a command in `active`'s project, now.
    pub fn for_state(active: &ActiveState) -> Inputs {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let gate_home = active.home().to_path_buf();
        let dirs = Dirs::with_home(&gate_home, env);
        let mut homes = vec![gate_home.clone()];
        if let Ok(d) = Dirs::from_env() {
            homes.push(d.home);
        }
        let homes = resolved_unique(homes);
        let project = resolve(active.project_root());
        let additional = if active.trusted() {
            resolved_unique(
                active
                    .settings()
                    .additional_directories
                    .iter()
                    .filter(|d| !d.trim().is_empty())
                    .map(|d| decode_policy::paths::extra_dir(&project, &gate_home, d))
                    .collect(),
            )
        } else {
            Vec::new()
        };
        let (user, warnings) = UserSandbox::load(&dirs.config);
        let mut temp = vec![PathBuf::from("/tmp")];
        if let Some(t) = env("TMPDIR").map(PathBuf::from).filter(|t| t.is_absolute()) {
            temp.push(t);
        }
        let uid = nix::unistd::geteuid().as_raw();
        let runtime = env("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| PathBuf::from(format!("/run/user/{uid}")));
        let mut state = vec![dirs.state.clone()];
        let mut app = vec![dirs.config.clone(), dirs.data.clone()];
        for h in &homes {
            let d = Dirs::with_home(h, env);
            let own = Dirs::for_home(h);
            state.extend([d.state, own.state]);
            app.extend([d.config, d.data, own.config, own.data]);
        }
        let trusted = decode_core::trust::TrustStore::open(&dirs.data)
            .trusted()
            .to_vec();
        Inputs {
            project,
            homes,
            additional,
            user,
            user_problems: warnings.iter().map(|w| w.to_string()).collect(),
            temp: resolved_unique(temp),
            runtime,
            data: dirs.data,
            state,
            app,
            uid,
            own_network: super::own_network(),
            trusted,
        }
    }

    /// The writable folders besides the project, the temp folders and the caches:
    /// the `additionalDirectories`, the person's `sandbox.writable` (those that are
    /// folders) and the trusted projects in a temp folder. The sandbox walks them for protected names as it walks the
    /// project.
    pub fn extra_writable(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let person = self.user.writable.iter().flat_map(|w| self.person_paths(w));
        for d in self.additional.iter().cloned().chain(person) {
            if d.is_dir() && !out.contains(&d) {
                out.push(d);
            }
        }
        // The other projects the person trusts in a temp folder (writable there):
        // their repositories' hooks and config too.
        for t in &self.trusted {
            let in_temp = self.temp.iter().any(|d| t.starts_with(d));
            if in_temp && *t != self.project && t.is_dir() && !out.contains(t) {
                out.push(t.clone());
            }
        }
        out
    }

    /// A path the person wrote in their settings, for each home folder (`~` means
    /// each; an absolute path is itself); relative paths mean nothing (there is no
    /// project at that level).
    fn person_paths(&self, entry: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for home in &self.homes {
            let p = decode_policy::paths::expand_home(entry.trim(), home);
            if p.is_absolute() {
                let r = resolve(&decode_policy::paths::lexical(Path::new("/"), &p));
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }
}

fn resolve(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn resolved_unique(v: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in v {
        let r = resolve(&p);
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Whether `program` is on `$PATH`.
fn installed(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path).any(|d| d.join(program).is_file())
}

/// Makes, once per process and home, the caches of installed toolchains that do
/// not exist yet (their programs would make them on first use).
fn make_missing_caches(home: &Path) {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static DONE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    {
        let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
        if !done
            .get_or_insert_with(HashSet::new)
            .insert(home.to_path_buf())
        {
            return;
        }
    }
    for (rel, programs) in TOOLCHAIN_CACHES {
        let p = home.join(rel);
        let wanted = if programs.is_empty() {
            *rel == ".cache"
        } else {
            programs.iter().any(|p| installed(p))
        };
        if wanted && !exists(&p) {
            if let Err(e) = std::fs::DirBuilder::new().recursive(true).create(&p) {
                tracing::debug!(path = %p.display(), error = %e, "cannot make a toolchain cache");
            }
        }
    }
}

/// The writable places: the project (pinned: it cannot be renamed), the
/// `additionalDirectories`, the temp folders, the toolchain caches and the person's
/// `sandbox.writable`; each home folder is read-only again where it lies inside one
/// of them (a home in `/tmp`).
pub(crate) fn writable(inputs: &Inputs, m: &mut Mounts) {
    for h in &inputs.homes {
        m.add(h, Kind::BaseReadOnly, "the home folder");
    }
    for t in &inputs.temp {
        if t.is_dir() {
            m.add(t, Kind::Writable, "the temp folder");
        }
    }
    for h in &inputs.homes {
        make_missing_caches(h);
        for (rel, _) in TOOLCHAIN_CACHES {
            let p = h.join(rel);
            if p.is_dir() {
                m.add(&resolve(&p), Kind::Writable, "a toolchain cache");
            }
        }
        for rel in CARGO_FILES {
            let p = h.join(rel);
            if p.is_file() {
                m.add(&resolve(&p), Kind::Writable, "a toolchain cache");
            }
        }
    }
    for d in &inputs.additional {
        if d.is_dir() {
            m.add(d, Kind::Writable, "additionalDirectories");
        }
    }
    for w in &inputs.user.writable {
        for p in inputs.person_paths(w).into_iter().filter(|p| p.is_dir()) {
            m.add(&p, Kind::Writable, "your sandbox.writable");
        }
    }
    m.add(&inputs.project, Kind::Writable, "the project");
    m.add(&inputs.project, Kind::Pin, "the project");
}

/// What is hidden: the credential stores, the private keys of `~/.ssh` (and the
/// keys its config names), Decode's state folder and the person's
/// `sandbox.hidden`. (Decode's config and data folders come with the gate's
/// protected set; files a `read` deny rule covers with the project's walk.)
pub(crate) fn hidden(inputs: &Inputs, m: &mut Mounts) {
    for h in &inputs.homes {
        for rel in CREDENTIAL_STORES {
            hide_if_there(m, &h.join(rel), "a credential store");
        }
        ssh_keys(&h.join(".ssh"), h, m);
    }
    if let Some(x) = std::env::var_os("XAUTHORITY").map(PathBuf::from) {
        if x.is_absolute() {
            hide_if_there(m, &x, "the display's key");
        }
    }
    for s in &inputs.state {
        hide_if_there(m, s, "Decode's own logs and history");
    }
    for d in &inputs.app {
        // Decode's own folders: made (empty, private) when missing, as the gate's
        // protected set has them made, so that one appearing later (Decode records
        // a running command there) changes nothing in the sandbox's plan.
        if !exists(d) {
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d);
        }
        hide_if_there(m, d, "Decode's own settings and data");
    }
    for h in &inputs.user.hidden {
        for p in inputs.person_paths(h) {
            hide_if_there(m, &p, "your sandbox.hidden");
        }
    }
}

fn hide_if_there(m: &mut Mounts, p: &Path, why: &str) {
    if let Ok(meta) = std::fs::metadata(p) {
        m.hide(&resolve(p), meta.is_dir(), why);
    }
}

/// Hides every entry of `~/.ssh` but the public ones ([`SSH_PUBLIC`], `*.pub`), and
/// every key `IdentityFile` names in `~/.ssh/config` and the files it includes.
fn ssh_keys(ssh: &Path, home: &Path, m: &mut Mounts) {
    let Ok(rd) = std::fs::read_dir(ssh) else {
        return;
    };
    for e in rd.flatten().take(1_000) {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if SSH_PUBLIC.contains(&n.as_ref()) || n.ends_with(".pub") {
            continue;
        }
        // A socket (an agent's, a control master's) is a service, not a key: out
        // of reach whatever name it was bound under (ssh binds a control master's
        // under a temporary name and renames it, so the kernel's list of listening
        // sockets names another path).
        if e.file_type().is_ok_and(|t| {
            use std::os::unix::fs::FileTypeExt;
            t.is_socket()
        }) {
            m.add(
                &e.path(),
                super::mounts::Kind::NullSocket,
                "an ssh agent's or control master's socket",
            );
            continue;
        }
        hide_if_there(m, &e.path(), "an ssh private key");
    }
    for key in ssh_config_identities(&ssh.join("config"), ssh, home) {
        hide_if_there(m, &key, "an ssh private key (`IdentityFile`)");
    }
}

/// The `IdentityFile`s of an ssh config file and the files it `Include`s (at most
/// 16 files of 64 KiB).
fn ssh_config_identities(config: &Path, ssh: &Path, home: &Path) -> Vec<PathBuf> {
    let expand = |v: &str, base: &Path| -> PathBuf {
        let v = v.trim().trim_matches('"');
        let p = decode_policy::paths::expand_home(v, home);
        if p.is_absolute() {
            p
        } else {
            base.join(p)
        }
    };
    let mut out = Vec::new();
    let mut queue = vec![config.to_path_buf()];
    let mut read = 0usize;
    while let Some(file) = queue.pop() {
        read += 1;
        if read > 16 {
            break;
        }
        let Ok(text) = decode_policy::paths::read_small_file(&file, 64 * 1024) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim();
            let (key, value) = match line.split_once(|c: char| c.is_whitespace() || c == '=') {
                Some((k, v)) => (k, v.trim_start_matches([' ', '\t', '='])),
                None => continue,
            };
            if key.eq_ignore_ascii_case("IdentityFile") {
                out.push(expand(value, home));
            } else if key.eq_ignore_ascii_case("Include") {
                for inc in value.split_whitespace() {
                    let p = expand(inc, ssh);
                    queue.extend(glob_files(&p));
                }
            }
        }
    }
    out
}

/// The files a path with `*` or `?` in its last component names (ssh's `Include`).
fn glob_files(p: &Path) -> Vec<PathBuf> {
    let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    if !name.contains(['*', '?']) {
        return vec![p.to_path_buf()];
    }
    let Some(dir) = p.parent() else {
        return Vec::new();
    };
    let Ok(glob) = globset::Glob::new(&name) else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .take(256)
        .filter(|e| matcher.is_match(e.file_name()))
        .map(|e| e.path())
        .collect()
}

/// The host's services: an empty folder over the folders where their sockets are
/// made, the null device over every other socket that listens.
pub(crate) fn services(inputs: &Inputs, m: &mut Mounts) {
    for d in super::servers::service_dirs(&inputs.homes, inputs.uid, &inputs.runtime) {
        m.add(&d, Kind::Tmpfs, "host services' sockets");
    }
    for s in super::servers::host_sockets() {
        m.add(&s, Kind::NullSocket, "a host service's socket");
    }
}

/// The empty folder and file a hidden one shows instead, in Decode's data folder
/// (itself hidden inside the sandbox): made once, mode 000.
pub(crate) fn empty_placeholders(inputs: &Inputs) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = inputs.data.join("sandbox");
    let (d, f) = (dir.join("hidden-folder"), dir.join("hidden-file"));
    if !(d.is_dir() && f.is_file()) {
        let made = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .and_then(|()| {
                let _ = std::fs::create_dir(&d);
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&f)
                    .map(|_| ())
            });
        if let Err(e) = made {
            tracing::warn!(folder = %dir.display(), error = %e, "cannot make the sandbox's hidden placeholders");
        }
    }
    for p in [&d, &f] {
        let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o000));
    }
    (d, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_config_names_keys_anywhere_and_includes_are_followed() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        let ssh = home.join(".ssh");
        std::fs::create_dir_all(ssh.join("config.d")).unwrap();
        std::fs::write(
            ssh.join("config"),
            "Host a\n  IdentityFile ~/keys/work\nInclude config.d/*\n",
        )
        .unwrap();
        std::fs::write(ssh.join("config.d/x"), "Host b\n IdentityFile=/opt/k/b\n").unwrap();
        let mut keys = ssh_config_identities(&ssh.join("config"), &ssh, &home);
        keys.sort();
        assert_eq!(keys, [PathBuf::from("/opt/k/b"), home.join("keys/work")]);
    }

    #[test]
    fn a_socket_in_ssh_s_folder_is_refused_whatever_name_it_was_bound_under() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        let ssh = home.join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        // Bound under one name, renamed as ssh does with a control master.
        let _l = std::os::unix::net::UnixListener::bind(ssh.join("cm-tmp")).unwrap();
        std::fs::rename(ssh.join("cm-tmp"), ssh.join("cm-git@host:22")).unwrap();
        let mut m = Mounts::default();
        ssh_keys(&ssh, &home, &mut m);
        assert!(m.has(&ssh.join("cm-git@host:22"), Kind::NullSocket));
    }

    #[test]
    fn private_keys_are_hidden_and_public_files_stay() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        let ssh = home.join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        for f in [
            "id_ed25519",
            "id_ed25519.pub",
            "known_hosts",
            "config",
            "work_key",
        ] {
            std::fs::write(ssh.join(f), "x").unwrap();
        }
        let mut m = Mounts::default();
        ssh_keys(&ssh, &home, &mut m);
        let hidden: Vec<String> = m
            .ordered()
            .iter()
            .map(|m| m.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(hidden, ["id_ed25519", "work_key"]);
    }
}
