//! Path normalisation (docs/permissions.md, "Tools and kinds"): `~`/`$HOME` expanded, relative paths joined,
//! `.`/`..` folded, symlinks resolved for the part that exists.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The longest path a file tool takes, in bytes (the system's `PATH_MAX`):
/// a longer one is an error, judged before any work that grows with it.
pub const MAX_PATH_BYTES: usize = 4096;

/// Expands a leading `~`, `$HOME` or `${HOME}`.
pub fn expand_home(s: &str, home: &Path) -> PathBuf {
    let rest = if s == "~" || s == "$HOME" || s == "${HOME}" {
        Some("")
    } else {
        s.strip_prefix("~/")
            .or_else(|| s.strip_prefix("$HOME/"))
            .or_else(|| s.strip_prefix("${HOME}/"))
    };
    // `~//.bashrc` is `~/.bashrc`: the rest never replaces the home.
    match rest.map(|r| r.trim_start_matches('/')) {
        Some("") => home.to_path_buf(),
        Some(r) => home.join(r),
        None => PathBuf::from(s),
    }
}

/// `~user` / `~user/rest` expanded through `/etc/passwd`; `None` for any
/// other text or an unknown user.
pub(crate) fn expand_user(s: &str) -> Option<PathBuf> {
    let rest = s.strip_prefix('~')?;
    let (name, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let home = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 6 && f[0] == name).then(|| f[5].to_string())
    })?;
    if !home.starts_with('/') {
        return None;
    }
    let h = PathBuf::from(home);
    Some(if tail.is_empty() { h } else { h.join(tail) })
}

/// A path whose value is only known when the shell runs (after `~`,
/// `$HOME` and `~user` expansion): `$VAR`, `${…}`, `$(…)`, backticks,
/// `~+`, `~-`, an unknown `~user`.
pub(crate) fn is_dynamic_path(expanded: &str) -> bool {
    expanded.starts_with('~')
        || (expanded.starts_with('$') && !expanded.starts_with("$("))
        || ((expanded.contains("$(") || expanded.contains('`')) && expanded.contains('/'))
        || (expanded.contains("${") && expanded.contains("PWD"))
}

/// Any part of the path is only known when the shell runs (removal targets).
pub(crate) fn has_expansion(expanded: &str) -> bool {
    expanded.starts_with('~') || expanded.contains('$') || expanded.contains('`')
}
/// Names of protected files and folders: a dynamic path holding one of them
/// may name the protected one (the names are data in the gate's protected
/// set, docs/permissions.md "Protected files").
pub(crate) fn mentions_protected_name(s: &str) -> bool {
    s.split('/')
        .any(crate::protected_names::mentions_protected_name)
}

/// Why a file from a project (or a configuration file) was not read.
#[derive(Debug)]
pub enum ReadError {
    /// It could not be opened or read (missing, no permission…).
    Io(std::io::Error),
    /// A FIFO, a device, a socket or a folder (after links).
    NotRegular,
    /// Larger than the limit.
    TooLarge(u64),
    /// Not UTF-8.
    NotText,
    /// The file has other hard links (a permission file must have one name: an
    /// edit through another name would change it unseen).
    HardLinked,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotRegular => {
                f.write_str("not a regular file (a FIFO, a device or a folder)")
            }
            ReadError::TooLarge(max) => write!(f, "larger than {max} bytes"),
            ReadError::NotText => f.write_str("not UTF-8 text"),
            ReadError::HardLinked => f.write_str(
                "it has other hard links (another name could change it unseen), so Decode does not read it",
            ),
        }
    }
}

impl ReadError {
    /// The file does not exist.
    pub fn is_missing(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Reads a file the person did not write (a cloned repository's settings,
/// agents, instructions; configuration files) without ever blocking: it must
/// be a regular file after links and at most `max` bytes. A FIFO, a device
/// such as `/dev/zero`, or a link to one is refused at once.
pub fn read_small_file(path: &Path, max: u64) -> Result<String, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadError::Io)?;
    read_opened(file, max)
}

/// Like [`read_small_file`], for the project's permission and agent files: a
/// file with more than one hard link is refused too.
pub fn read_permission_file(path: &Path, max: u64) -> Result<String, ReadError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadError::Io)?;
    let md = file.metadata().map_err(ReadError::Io)?;
    if md.is_file() && md.nlink() > 1 {
        return Err(ReadError::HardLinked);
    }
    read_opened(file, max)
}

/// Like [`read_small_file`] for `path`, an absolute path with its links
/// already resolved that lies inside the folder `root`: the file is opened
/// one folder at a time from `root` and no link is followed on the way, so
/// a link swapped in after the path was judged cannot lead anywhere else
/// (it is an error instead).
pub fn read_small_file_beneath(root: &Path, path: &Path, max: u64) -> Result<String, ReadError> {
    read_beneath(root, path, max, false)
}

/// Like [`read_small_file_beneath`], for a project file Decode acts on (its
/// instructions): a file with more than one hard link is refused too (another
/// name, perhaps outside the project, could hold anything).
pub fn read_permission_file_beneath(
    root: &Path,
    path: &Path,
    max: u64,
) -> Result<String, ReadError> {
    read_beneath(root, path, max, true)
}

fn read_beneath(root: &Path, path: &Path, max: u64, one_link: bool) -> Result<String, ReadError> {
    use nix::fcntl::{open, openat, OFlag};
    use nix::sys::stat::Mode;
    use std::os::unix::fs::MetadataExt;
    let io = |e: nix::Error| ReadError::Io(std::io::Error::from_raw_os_error(e as i32));
    let rest = strip_within(path, root).ok_or_else(|| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the file lies outside the project",
        ))
    })?;
    let names: Vec<&std::ffi::OsStr> = rest
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(ReadError::Io(std::io::Error::from_raw_os_error(
                libc::ELOOP,
            ))),
        })
        .collect::<Result<_, _>>()?;
    let Some((file, folders)) = names.split_last() else {
        return Err(ReadError::NotRegular);
    };
    let mut dir = open(root, PATH_FLAGS, Mode::empty()).map_err(io)?;
    for name in folders {
        dir = openat(&dir, *name, PATH_FLAGS, Mode::empty()).map_err(io)?;
    }
    let fd = openat(
        &dir,
        *file,
        OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY
            | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io)?;
    let file = std::fs::File::from(fd);
    if one_link {
        let md = file.metadata().map_err(ReadError::Io)?;
        if md.is_file() && md.nlink() > 1 {
            return Err(ReadError::HardLinked);
        }
    }
    read_opened(file, max)
}

fn read_opened(file: std::fs::File, max: u64) -> Result<String, ReadError> {
    use std::io::Read;
    let md = file.metadata().map_err(ReadError::Io)?;
    if !md.is_file() {
        return Err(ReadError::NotRegular);
    }
    if md.len() > max {
        return Err(ReadError::TooLarge(max));
    }
    let mut bytes = Vec::with_capacity(md.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge(max));
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText)
}

/// How deeply `[` and `{` nest in JSON or TOML text, outside strings: a
/// hostile file nested thousands of levels deep is refused before a parser
/// (which recurses) sees it.
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if b == b'\\' && q == b'"' {
                escaped = true;
            } else if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'"' | b'\'' => quote = Some(b),
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// How deeply YAML text nests: flow collections (`[`, `{`) outside quotes,
/// plus block nesting (each deeper indentation, and each `- ` item marker,
/// opens a level). An upper estimate, so a hostile frontmatter nested
/// thousands of levels deep is refused before a parser sees it.
pub fn yaml_depth(text: &str) -> usize {
    let mut max = nesting_depth(text);
    let mut indents: Vec<usize> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        while indents.last().is_some_and(|&i| i > indent) {
            indents.pop();
        }
        if indents.last() != Some(&indent) {
            indents.push(indent);
        }
        // `- - - x`: each marker is a nested sequence.
        let mut rest = trimmed;
        let mut items = 0;
        while let Some(r) = rest
            .strip_prefix("- ")
            .or_else(|| (rest == "-").then_some(""))
        {
            items += 1;
            rest = r.trim_start_matches(' ');
        }
        max = max.max(indents.len() + items + nesting_depth(rest));
    }
    max
}

/// Joins `p` to `base` when relative and folds `.` and `..` lexically.
pub fn lexical(base: &Path, p: &Path) -> PathBuf {
    let joined;
    let p = if p.is_absolute() {
        p
    } else {
        joined = base.join(p);
        &joined
    };
    // Never longer than `p` (and its root): one allocation.
    let mut out = PathBuf::with_capacity(p.as_os_str().len() + 1);
    out.push("/");
    for c in p.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// Where an `additionalDirectories` entry reaches, as the gate uses it: `~`
/// expanded, relative to the project root, folded, and its links resolved.
pub fn extra_dir(root: &Path, home: &Path, entry: &str) -> PathBuf {
    resolve(&lexical(root, &expand_home(entry.trim(), home)))
}

/// Resolves symlinks along an absolute, lexically folded path, for as long as
/// its components exist; the rest is appended as is. Dangling links are
/// followed too (a write through one lands on its target).
pub fn resolve(p: &Path) -> PathBuf {
    resolve_from(Path::new("/"), p)
}

/// How a path resolves: where it lands, every link met on the way (the links
/// themselves), and the first component that does not exist, if any (from there
/// the path is lexical: creating that component decides where it really lands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub resolved: PathBuf,
    pub links: Vec<PathBuf>,
    pub first_missing: Option<PathBuf>,
}

/// [`resolve`], telling what the resolution went through (see [`Chain`]).
pub fn resolve_chain(p: &Path) -> Chain {
    let mut links = Vec::new();
    let mut first_missing = None;
    let resolved = resolve_traced(Path::new("/"), p, &mut |event| match event {
        Traced::Link(at) => links.push(at),
        Traced::Missing(at) => {
            if first_missing.is_none() {
                first_missing = Some(at);
            }
        }
    });
    Chain {
        resolved,
        links,
        first_missing,
    }
}

/// Like [`resolve`], but `known` is an already resolved, existing ancestor of
/// `p` (the canonical project root), so only the components after it are examined.
pub(crate) fn resolve_under(known: &Path, p: &Path) -> PathBuf {
    match strip_within(p, known) {
        Some(rest) if !rest.as_os_str().is_empty() => resolve_from(known, rest),
        Some(_) => known.to_path_buf(),
        None => resolve(p),
    }
}

enum Traced {
    /// A link at this path was followed.
    Link(PathBuf),
    /// This path does not exist (the rest is lexical).
    Missing(PathBuf),
}

fn resolve_from(start: &Path, rest: &Path) -> PathBuf {
    resolve_traced(start, rest, &mut |_| {})
}

fn resolve_traced(start: &Path, rest: &Path, trace: &mut dyn FnMut(Traced)) -> PathBuf {
    let mut queue: Vec<OsString> = rest
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    let mut walk = Walk::open(start);
    let mut links = 0;
    while let Some(name) = queue.pop() {
        if name == ".." {
            // Leaving a real folder by `..`: were it swapped for a link, `..`
            // would lead elsewhere. It counts as a link on the way.
            if walk.dir.is_some() && walk.path != start {
                trace(Traced::Link(walk.path.clone()));
            }
            walk.up();
            continue;
        }
        // The lexical path of this component is built only when it is reported (a
        // link, at most 41 times, or the first missing component): building it for
        // every component copies the whole path each time, quadratic in its length.
        let known = walk.dir.is_some();
        match walk.step(&name) {
            Step::Link(target) => {
                trace(Traced::Link(walk.path.join(&name)));
                links += 1;
                if links > 40 {
                    // A loop: stop resolving, keep the rest lexical.
                    walk.push_missing(&name);
                    continue;
                }
                if target.is_absolute() {
                    walk = Walk::open(Path::new("/"));
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(n) => queue.push(n.to_os_string()),
                        Component::ParentDir => queue.push(OsString::from("..")),
                        _ => {}
                    }
                }
            }
            Step::Missing => {
                if known {
                    // `step` appended the missing component: the path is its own.
                    trace(Traced::Missing(walk.path.clone()));
                }
            }
            Step::Entered => {}
        }
    }
    walk.path
}

/// A path being resolved: the folders met so far, all real (no links), and
/// a descriptor of the last one, so that each component costs one lookup
/// in that folder rather than a walk of the whole path again — judging a
/// path is linear in its length.
struct Walk {
    path: PathBuf,
    /// The folder `path` names; `None` once a component does not exist (or
    /// is not a folder): from there on the path is lexical.
    dir: Option<std::os::fd::OwnedFd>,
}

enum Step {
    /// The component exists and is not a link; it was appended.
    Entered,
    /// The component does not exist (or cannot be examined); it was appended.
    Missing,
    /// The component is a link with this target; nothing was appended.
    Link(PathBuf),
}

const PATH_FLAGS: nix::fcntl::OFlag = nix::fcntl::OFlag::O_PATH
    .union(nix::fcntl::OFlag::O_DIRECTORY)
    .union(nix::fcntl::OFlag::O_NOFOLLOW)
    .union(nix::fcntl::OFlag::O_CLOEXEC);

impl Walk {
    fn open(start: &Path) -> Walk {
        let dir = nix::fcntl::open(start, PATH_FLAGS, nix::sys::stat::Mode::empty()).ok();
        Walk {
            path: start.to_path_buf(),
            dir,
        }
    }

    fn push_missing(&mut self, name: &OsString) {
        self.path.push(name);
        self.dir = None;
    }

    /// `..`: the parent of a real folder is its lexical parent.
    fn up(&mut self) {
        self.path.pop();
        if let Some(fd) = &self.dir {
            self.dir = nix::fcntl::openat(fd, "..", PATH_FLAGS, nix::sys::stat::Mode::empty()).ok();
        }
    }

    fn step(&mut self, name: &OsString) -> Step {
        let Some(fd) = &self.dir else {
            self.path.push(name);
            return Step::Missing;
        };
        use nix::fcntl::AtFlags;
        let st = match nix::sys::stat::fstatat(fd, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(_) => {
                self.push_missing(name);
                return Step::Missing;
            }
        };
        match st.st_mode & libc::S_IFMT {
            libc::S_IFLNK => match nix::fcntl::readlinkat(fd, name.as_os_str()) {
                Ok(target) => Step::Link(PathBuf::from(target)),
                Err(_) => {
                    // Dangling or unreadable: the rest stays lexical.
                    self.push_missing(name);
                    Step::Missing
                }
            },
            libc::S_IFDIR => {
                self.dir = nix::fcntl::openat(
                    fd,
                    name.as_os_str(),
                    PATH_FLAGS,
                    nix::sys::stat::Mode::empty(),
                )
                .ok();
                self.path.push(name);
                Step::Entered
            }
            _ => {
                // A file: nothing can lie beneath it.
                self.path.push(name);
                self.dir = None;
                Step::Entered
            }
        }
    }
}

/// `child` is `dir` or inside it, component by component. Both paths are
/// normalised (absolute, no `.`/`..`, no doubled or trailing `/`), so this is
/// a byte comparison at a component boundary: `/work/proj_evil` is not inside
/// `/work/proj`.
pub(crate) fn within(child: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = child.as_os_str().as_bytes();
    let d = dir.as_os_str().as_bytes();
    if d == b"/" {
        return c.first() == Some(&b'/');
    }
    c.len() >= d.len() && &c[..d.len()] == d && (c.len() == d.len() || c[d.len()] == b'/')
}

/// `child` relative to `dir` when [`within`] it (`""` for `dir` itself).
pub(crate) fn strip_within<'a>(child: &'a Path, dir: &Path) -> Option<&'a Path> {
    use std::os::unix::ffi::OsStrExt;
    if !within(child, dir) {
        return None;
    }
    let c = child.as_os_str().as_bytes();
    let d = dir.as_os_str().as_bytes();
    let rest = if d == b"/" { &c[1..] } else { &c[d.len()..] };
    let rest = rest.strip_prefix(b"/").unwrap_or(rest);
    Some(Path::new(std::ffi::OsStr::from_bytes(rest)))
}

/// Devices that are never "outside" the project.
pub(crate) fn is_harmless_device(p: &Path) -> bool {
    matches!(
        p.to_str(),
        Some("/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_folding() {
        let base = Path::new("/work/proj");
        assert_eq!(
            lexical(base, Path::new("a/./b/../c")),
            Path::new("/work/proj/a/c")
        );
        assert_eq!(lexical(base, Path::new("../../..")), Path::new("/"));
        assert_eq!(lexical(base, Path::new("/etc/../tmp")), Path::new("/tmp"));
        assert!(!within(Path::new("/work/proj_evil"), base));
        assert!(within(Path::new("/work/proj/x"), base));
        assert!(within(Path::new("/work/proj"), base));
        assert!(!within(Path::new("/work"), base));
        assert!(within(Path::new("/x"), Path::new("/")));
        assert_eq!(
            strip_within(Path::new("/work/proj/a/b"), base),
            Some(Path::new("a/b"))
        );
        assert_eq!(
            strip_within(Path::new("/work/proj"), base),
            Some(Path::new(""))
        );
        assert_eq!(
            strip_within(Path::new("/a"), Path::new("/")),
            Some(Path::new("a"))
        );
        assert_eq!(strip_within(Path::new("/work/proj_evil"), base), None);
    }

    #[test]
    fn home_expansion() {
        let h = Path::new("/home/u");
        assert_eq!(expand_home("~", h), h);
        assert_eq!(expand_home("~/x", h), Path::new("/home/u/x"));
        assert_eq!(expand_home("${HOME}/.ssh", h), Path::new("/home/u/.ssh"));
        assert_eq!(expand_home("a~", h), Path::new("a~"));
        assert_eq!(expand_home("~//.bashrc", h), Path::new("/home/u/.bashrc"));
        assert_eq!(expand_home("$HOME//x", h), Path::new("/home/u/x"));
    }

    #[test]
    fn symlinks() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let canon = std::fs::canonicalize(&real).unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", t.path().join("dangling")).unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        assert_eq!(resolve(&base.join("link/new.txt")), canon.join("new.txt"));
        assert_eq!(
            resolve(&base.join("dangling")),
            Path::new("/nonexistent/target")
        );
        assert_eq!(resolve_under(&base, &base.join("link")), canon);
    }
}
