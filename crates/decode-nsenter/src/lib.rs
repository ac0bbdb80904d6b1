//! Entering a sandbox's kept namespaces between `fork` and `exec` — the one place
//! Decode needs `unsafe` code (the workspace forbids it everywhere else).
//!
//! Decode's bash sandbox (docs/sandbox.md, "Cost") has bubblewrap build a sandbox's
//! namespaces once and keeps them open; each command then enters them. What runs
//! between `fork` and `exec` must be async-signal-safe: plain system calls on
//! descriptors and strings prepared before the fork, no allocation, no lock. That is
//! all this crate does, behind a safe API:
//!
//! - [`Target::apply`]: the command leaves Decode's session, enters the kept user,
//!   mount, IPC and network namespaces, makes its own mount and process namespaces,
//!   forks once more (the first process waits outside and ends as the command ends),
//!   and — as process 1 of its process namespace, so that everything it starts ends
//!   with it — mounts its own `/proc` with `/proc/sys` read-only, goes to its folder,
//!   sets no-new-privileges and drops every capability before `exec`;
//! - [`pass_fd_as_3`]: gives a spawned program a descriptor as its fd 3 (bubblewrap's
//!   `--info-fd 3`);
//! - [`pass_socket_filter_as_3`]: gives bubblewrap the system-call filter of
//!   [`filter`] as its fd 3 (`--seccomp 3`), the filter [`Target::apply`] sets itself.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;

pub mod filter;

/// The kept namespaces of a sandbox, and where a command starts in it.
#[derive(Debug)]
pub struct Target {
    /// The user namespace that owns the sandbox's other namespaces.
    user: OwnedFd,
    /// The one the sandbox's processes run in, when it is another (bubblewrap run
    /// by an unprivileged user sets the sandbox up in one user namespace, then runs
    /// the command in a nested one that maps the person's own user id).
    user_inner: Option<OwnedFd>,
    mnt: OwnedFd,
    ipc: OwnedFd,
    net: Option<OwnedFd>,
    cwd: CString,
    last_cap: libc::c_ulong,
    /// The lowest descriptor that does not pass into the command (3, or 4 when the
    /// command is given one as its fd 3).
    first_closed: u32,
    /// A network namespace of the command's own, with sockets listening on these
    /// loopback ports handed back to Decode (see [`Target::with_own_network`]).
    listen: Option<OwnNetwork>,
    /// The system-call filter set last, before `exec` ([`filter`]).
    filter: Option<Vec<libc::sock_filter>>,
}

/// The most loopback ports [`Target::with_own_network`] listens on.
pub const MAX_LISTEN: usize = 4;

#[derive(Debug)]
struct OwnNetwork {
    ports: [u16; MAX_LISTEN],
    count: usize,
    /// Where the command's side sends the listening sockets.
    send: OwnedFd,
}

/// Where the sockets of a command's own network come back (see
/// [`Target::with_own_network`]).
#[derive(Debug)]
pub struct Listeners {
    recv: OwnedFd,
    count: usize,
}

impl Target {
    /// The namespaces `user`, `mnt`, `ipc` and (when the sandbox has its own
    /// network) `net` (descriptors of `/proc/PID/ns/…` of a process in the sandbox),
    /// for a command starting in `cwd` (a path inside the sandbox). `user` may be a
    /// user namespace nested in the one that owns the others (see [`owner_of`]).
    pub fn new(
        user: OwnedFd,
        mnt: OwnedFd,
        ipc: OwnedFd,
        net: Option<OwnedFd>,
        cwd: &Path,
    ) -> io::Result<Target> {
        let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(63);
        let (user, user_inner) = match owner_of(&user)? {
            Some(outer) => (outer, Some(user)),
            None => (user, None),
        };
        Ok(Target {
            user,
            user_inner,
            mnt,
            ipc,
            net,
            cwd: CString::new(cwd.as_os_str().as_bytes())?,
            last_cap,
            first_closed: 3,
            listen: None,
            filter: filter::program(),
        })
    }

    /// The command gets a network namespace of its own (made in the kept one's user
    /// namespace, loopback up) instead of sharing the kept sandbox's, and sockets
    /// listening on `127.0.0.1:PORT` there for each of `ports`, made before the
    /// command starts and handed back to Decode ([`Listeners::take`]): the proxy's
    /// way in (docs/network.md). Without a kept network namespace (the sandbox
    /// shares the host's) nothing changes and nothing comes back.
    pub fn with_own_network(mut self, ports: &[u16]) -> io::Result<(Target, Listeners)> {
        if ports.len() > MAX_LISTEN || ports.is_empty() {
            return Err(io::Error::other("between 1 and 4 ports"));
        }
        let (ours, theirs) = dgram_pair()?;
        let mut p = [0u16; MAX_LISTEN];
        p[..ports.len()].copy_from_slice(ports);
        if self.net.is_some() {
            self.listen = Some(OwnNetwork {
                ports: p,
                count: ports.len(),
                send: theirs,
            });
        }
        Ok((
            self,
            Listeners {
                recv: ours,
                count: ports.len(),
            },
        ))
    }

    /// The command keeps its fd 3 (given with [`pass_fd_as_3`]); every other
    /// descriptor beyond stdin, stdout and stderr is closed at `exec`.
    pub fn keeping_fd_3(mut self) -> Target {
        self.first_closed = 4;
        self
    }

    /// Makes `cmd` run in this sandbox (see the crate's documentation). `cmd` must
    /// not be given a process group: the command leaves Decode's session and leads
    /// a new one (its process id is the group to kill).
    pub fn apply(self: Arc<Self>, cmd: &mut std::process::Command) {
        let t = self;
        // SAFETY: `enter` makes only async-signal-safe system calls on descriptors
        // and strings prepared before the fork, and `t` outlives the fork (the
        // closure owns an `Arc` of it).
        unsafe {
            cmd.pre_exec(move || enter(&t));
        }
    }
}

/// The user namespace `ns` is nested in, when that one is not this process's own:
/// the namespace that owns what bubblewrap set up before it made `ns` for the
/// command.
pub fn owner_of(ns: &OwnedFd) -> io::Result<Option<OwnedFd>> {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::MetadataExt;
    const NS_GET_PARENT: libc::c_ulong = 0xb702;
    // SAFETY: `ioctl(NS_GET_PARENT)` on a namespace descriptor returns a new
    // descriptor (or -1); nothing else is touched.
    let parent = unsafe { libc::ioctl(ns.as_raw_fd(), NS_GET_PARENT as _) };
    if parent < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `parent` is a new descriptor that nothing else owns.
    let parent = unsafe { OwnedFd::from_raw_fd(parent) };
    let own = std::fs::metadata("/proc/self/ns/user")?;
    let parent_meta = std::fs::File::from(parent.try_clone()?).metadata()?;
    if parent_meta.ino() == own.ino() && parent_meta.dev() == own.dev() {
        Ok(None)
    } else {
        Ok(Some(parent))
    }
}

/// Marks every descriptor from `first` up close-on-exec.
fn close_inherited(first: u32) -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: a system call on descriptor numbers only.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the program `cmd` runs (bubblewrap, when it builds a sandbox for one
/// command) get no descriptor of Decode's beyond stdin, stdout and stderr.
pub fn close_inherited_on_exec(cmd: &mut std::process::Command) {
    // SAFETY: `close_range` is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| close_inherited(3));
    }
}

/// Gives the program `cmd` runs the descriptor `fd` as its fd 3.
pub fn pass_fd_as_3(cmd: &mut std::process::Command, fd: &OwnedFd) {
    let raw: RawFd = fd.as_raw_fd();
    // SAFETY: `dup2` is async-signal-safe; `fd` is open in the parent when it forks
    // (the caller keeps it until the spawn returns).
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(raw, 3) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn errno() -> libc::c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// In the forked child, before `exec` (see [`Target::apply`]).
fn enter(t: &Target) -> io::Result<()> {
    // SAFETY: plain system calls on descriptors and NUL-terminated strings owned
    // by `t`, or on constants.
    unsafe {
        // No controlling terminal to push keystrokes into; a process group that
        // Decode kills whole.
        check(libc::setsid())?;
        check(libc::setns(t.user.as_raw_fd(), libc::CLONE_NEWUSER))?;
        check(libc::setns(t.mnt.as_raw_fd(), libc::CLONE_NEWNS))?;
        check(libc::setns(t.ipc.as_raw_fd(), libc::CLONE_NEWIPC))?;
        if let Some(net) = &t.net {
            check(libc::setns(net.as_raw_fd(), libc::CLONE_NEWNET))?;
        }
        if let Some(own) = &t.listen {
            own_network(own)?;
        }
        check(libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID))?;
        let pid = libc::fork();
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            wait_and_mirror(pid);
        }
        // Process 1 of its own process namespace: when it ends, the kernel ends
        // everything it started. It goes too if the waiting process is killed (and
        // Decode kills the whole process group anyway).
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        // Its own `/proc` (of its process namespace); nothing mounted here reaches
        // the kept sandbox.
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        check(libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ))?;
        // The kernel's switches stay read-only (`core_pattern` runs a program as
        // root).
        for p in [c"/proc/sys", c"/proc/sysrq-trigger"] {
            // A kernel without the file has nothing to protect there.
            if libc::mount(
                p.as_ptr(),
                p.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) < 0
            {
                if errno() == libc::ENOENT {
                    continue;
                }
                return Err(io::Error::last_os_error());
            }
            check(libc::mount(
                std::ptr::null(),
                p.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND
                    | libc::MS_REMOUNT
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV
                    | libc::MS_NOEXEC,
                std::ptr::null(),
            ))?;
        }
        // Then into the user namespace the sandbox's processes run in (the mounts
        // above needed the one that owns them).
        if let Some(inner) = &t.user_inner {
            check(libc::setns(inner.as_raw_fd(), libc::CLONE_NEWUSER))?;
        }
        check(libc::chdir(t.cwd.as_ptr()))?;
        // Nothing of Decode's passes in: a descriptor some library opened without
        // close-on-exec (a connection to the display or the bus) would reach what
        // the mounts keep out.
        close_inherited(t.first_closed)?;
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        // Every capability gone: the bounding set first (so that even a command
        // run as the namespace's root gains none at `exec`), the ambient set, then
        // the effective, permitted and inheritable ones.
        for cap in 0..=t.last_cap {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno() != libc::EINVAL {
                return Err(io::Error::last_os_error());
            }
        }
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ))?;
        let mut header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData::default(); 2];
        check(libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        ) as libc::c_int)?;
        // Last: no local socket of its own, no ring (see `filter`).
        if let Some(f) = &t.filter {
            set_filter(f)?;
        }
    }
    Ok(())
}

/// Sets the filter `program` on this process (no-new-privileges must be set).
/// Async-signal-safe: one system call on memory the caller owns.
fn set_filter(program: &[libc::sock_filter]) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points at `program`, alive for the call; the kernel copies it.
    check(unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
        )
    })
}

/// Gives bubblewrap the filter of [`filter`] as its fd 3, for `--seccomp 3`
/// (register after [`close_inherited_on_exec`]). `false` when this architecture
/// has no filter (then pass no `--seccomp`).
pub fn pass_socket_filter_as_3(cmd: &mut std::process::Command) -> bool {
    let Some(bytes) = filter::program_bytes() else {
        return false;
    };
    // SAFETY: `pipe2`, `write`, `close` and `dup2` are async-signal-safe; `bytes`
    // is owned by the closure (a few hundred bytes: the pipe holds them whole).
    unsafe {
        cmd.pre_exec(move || {
            let mut fds = [0 as libc::c_int; 2];
            check(libc::pipe2(fds.as_mut_ptr(), 0))?;
            let [r, w] = fds;
            let n = libc::write(w, bytes.as_ptr().cast(), bytes.len());
            if n < 0 || n as usize != bytes.len() {
                return Err(io::Error::other("cannot hand the filter over"));
            }
            check(libc::close(w))?;
            if r != 3 {
                check(libc::dup2(r, 3))?;
                check(libc::close(r))?;
            }
            Ok(())
        });
    }
    true
}

/// The proxy's way into a sandbox bubblewrap builds for one program (docs/network.md):
/// bubblewrap is told to write where its sandbox is (`--info-fd 4`) and to wait
/// (`--block-fd 5`) before it runs the program; meanwhile Decode makes sockets
/// listening on the sandbox's own loopback ([`BwrapNetwork::listen`]), then lets it
/// go. The program finds the listeners there when it starts.
#[derive(Debug)]
pub struct BwrapNetwork {
    info_r: OwnedFd,
    info_w: OwnedFd,
    block_r: OwnedFd,
    block_w: OwnedFd,
}

/// The options that go with [`BwrapNetwork::pass`] (before bubblewrap's `--`).
pub const BWRAP_NETWORK_ARGS: [&str; 4] = ["--info-fd", "4", "--block-fd", "5"];

impl BwrapNetwork {
    pub fn new() -> io::Result<BwrapNetwork> {
        let (info_r, info_w) = pipe_high()?;
        let (block_r, block_w) = pipe_high()?;
        Ok(BwrapNetwork {
            info_r,
            info_w,
            block_r,
            block_w,
        })
    }

    /// Gives the bubblewrap `cmd` runs the two pipes as its fds 4 and 5 (register
    /// after [`close_inherited_on_exec`]; add [`BWRAP_NETWORK_ARGS`]).
    pub fn pass(&self, cmd: &mut std::process::Command) {
        let (info, block) = (self.info_w.as_raw_fd(), self.block_r.as_raw_fd());
        // SAFETY: `dup2` is async-signal-safe; both descriptors are open in the
        // parent when it forks (`self` is kept until the spawn returns), and both
        // are numbered above 5 (`pipe_high`), so neither is overwritten first.
        unsafe {
            cmd.pre_exec(move || {
                check(libc::dup2(info, 4))?;
                check(libc::dup2(block, 5))?;
                Ok(())
            });
        }
    }

    /// Once bubblewrap is spawned: reads where its sandbox is, makes a socket
    /// listening on `127.0.0.1:PORT` of the sandbox's network for each of `ports`,
    /// and lets bubblewrap run the program. Blocking (a few milliseconds). On an
    /// error the program is let go too, with no listener: it has no network.
    pub fn listen(self, ports: &[u16]) -> io::Result<Vec<std::net::TcpListener>> {
        use std::io::{Read, Write};
        let BwrapNetwork {
            info_r,
            info_w,
            block_r,
            block_w,
        } = self;
        drop(info_w);
        drop(block_r);
        let mut block = std::fs::File::from(block_w);
        let made = (|| {
            let mut info = String::new();
            let mut f = std::fs::File::from(info_r);
            let mut buf = [0u8; 1024];
            while !info.contains('}') && info.len() < 64 * 1024 {
                match f.read(&mut buf)? {
                    0 => break,
                    n => info.push_str(&String::from_utf8_lossy(&buf[..n])),
                }
            }
            let pid = info
                .split("\"child-pid\"")
                .nth(1)
                .and_then(|rest| {
                    rest.trim_start_matches([':', ' ', '\n'])
                        .split(|c: char| !c.is_ascii_digit())
                        .next()
                        .and_then(|n| n.parse::<u32>().ok())
                })
                .ok_or_else(|| io::Error::other("bubblewrap did not say where its sandbox is"))?;
            let open = |ns: &str| -> io::Result<OwnedFd> {
                Ok(std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))?.into())
            };
            let t = Target::new(
                open("user")?,
                open("mnt")?,
                open("ipc")?,
                Some(open("net")?),
                Path::new("/"),
            )?;
            let mut out = Vec::new();
            for &port in ports {
                // bubblewrap brings the loopback up in the sandbox while Decode
                // reads where it is: until then 127.0.0.1 cannot be bound.
                let mut tries = 0;
                let l = loop {
                    match t.listen_tcp(port) {
                        Ok(l) => break l,
                        Err(e) if tries < 200 => {
                            tries += 1;
                            let _ = e;
                            std::thread::sleep(std::time::Duration::from_millis(2));
                        }
                        Err(e) => return Err(e),
                    }
                };
                out.push(l);
            }
            Ok(out)
        })();
        // The program runs now, with its listeners or (on an error) without.
        let _ = block.write_all(b"1");
        made
    }
}

/// A pipe whose two ends are numbered above 5 (close-on-exec).
fn pipe_high() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `pipe2` fills `fds`.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: two new descriptors nothing else owns.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let high = |fd: OwnedFd| -> io::Result<OwnedFd> {
        // SAFETY: duplicates a descriptor this function owns.
        let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 16) };
        check(n)?;
        // SAFETY: the new descriptor nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(n) })
    };
    Ok((high(r)?, high(w)?))
}

/// `struct ifreq` with the flags member (40 bytes on Linux).
#[repr(C)]
struct IfReqFlags {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// In the forked child: a network namespace of its own, loopback up, and sockets
/// listening on `own.ports` of 127.0.0.1 sent to Decode. Async-signal-safe: system
/// calls on memory of this stack frame.
fn own_network(own: &OwnNetwork) -> io::Result<()> {
    const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
    const SIOCSIFFLAGS: libc::c_ulong = 0x8914;
    // SAFETY: system calls on descriptors and on structures of this frame.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWNET))?;
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut req = IfReqFlags {
            name: [0; 16],
            flags: 0,
            _pad: [0; 22],
        };
        req.name[..2].copy_from_slice(b"lo");
        let up = if libc::ioctl(s, SIOCGIFFLAGS as _, &mut req as *mut IfReqFlags) < 0 {
            -1
        } else {
            req.flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(s, SIOCSIFFLAGS as _, &mut req as *mut IfReqFlags)
        };
        libc::close(s);
        if up < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut fds = [-1 as libc::c_int; MAX_LISTEN];
        let one: libc::c_int = 1;
        for (slot, port) in fds.iter_mut().zip(own.ports.iter()).take(own.count) {
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_port = port.to_be();
            addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            let l = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if l < 0 {
                return Err(io::Error::last_os_error());
            }
            *slot = l;
            libc::setsockopt(
                l,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
            check(libc::bind(
                l,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ))?;
            check(libc::listen(l, 1024))?;
        }
        let mut byte = [0u8; 1];
        let mut cbuf = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        let size = (own.count * std::mem::size_of::<libc::c_int>()) as u32;
        msg.msg_controllen = libc::CMSG_SPACE(size) as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(size) as _;
        let data = libc::CMSG_DATA(c).cast::<libc::c_int>();
        for (i, fd) in fds.iter().enumerate().take(own.count) {
            *data.add(i) = *fd;
        }
        let sent = libc::sendmsg(own.send.as_raw_fd(), &msg, libc::MSG_DONTWAIT);
        // The command keeps none of them: Decode serves them.
        for fd in fds.iter().take(own.count) {
            libc::close(*fd);
        }
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A pair of connected datagram sockets (close-on-exec).
fn dgram_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut pair = [0 as libc::c_int; 2];
    // SAFETY: `socketpair` fills the two descriptors of `pair`.
    check(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    })?;
    // SAFETY: both are new descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) })
}

/// Receives the descriptors of one `SCM_RIGHTS` message on `fd` without waiting.
fn recv_fds(fd: &OwnedFd, max: usize) -> io::Result<Vec<OwnedFd>> {
    use std::os::fd::FromRawFd;
    let mut rbyte = [0u8; 1];
    let mut rbuf = [0u64; 16];
    let mut riov = libc::iovec {
        iov_base: rbyte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: an all-zero `msghdr` is valid; the fields are set below.
    let mut rmsg: libc::msghdr = unsafe { std::mem::zeroed() };
    rmsg.msg_iov = &mut riov;
    rmsg.msg_iovlen = 1;
    rmsg.msg_control = rbuf.as_mut_ptr().cast();
    rmsg.msg_controllen = std::mem::size_of_val(&rbuf) as _;
    // SAFETY: receives into the buffers `rmsg` points at.
    let n = unsafe {
        libc::recvmsg(
            fd.as_raw_fd(),
            &mut rmsg,
            libc::MSG_CMSG_CLOEXEC | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    // SAFETY: walks the headers the kernel wrote into `rbuf`; each descriptor in
    // them is new and owned by this process from now on.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&rmsg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let len = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let data = libc::CMSG_DATA(c).cast::<libc::c_int>();
                for i in 0..len / std::mem::size_of::<libc::c_int>() {
                    out.push(OwnedFd::from_raw_fd(*data.add(i)));
                }
            }
            c = libc::CMSG_NXTHDR(&rmsg, c);
        }
    }
    if out.len() > max {
        out.truncate(max);
    }
    Ok(out)
}

impl Listeners {
    /// The listening sockets the command's side made, in the order of the ports
    /// given, once the command was spawned (its `pre_exec` has run by then); an
    /// error when none came (the sandbox shares the host's network, or its own
    /// network could not be made: the command then has no way out).
    pub fn take(&self) -> io::Result<Vec<std::net::TcpListener>> {
        let fds = recv_fds(&self.recv, self.count).map_err(|e| {
            if e.kind() == io::ErrorKind::WouldBlock {
                io::Error::other("the command has no network of its own to listen in")
            } else {
                e
            }
        })?;
        if fds.len() != self.count {
            return Err(io::Error::other(format!(
                "{} of {} listening sockets came back",
                fds.len(),
                self.count
            )));
        }
        Ok(fds.into_iter().map(std::net::TcpListener::from).collect())
    }
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The process left outside: closes what it does not need (among it the pipe its
/// parent reads to learn that `exec` happened), waits for the command and ends as it
/// ended (the same exit code, or the same signal). Never returns.
fn wait_and_mirror(pid: libc::pid_t) -> ! {
    // SAFETY: system calls only; this process never returns to Rust code.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        for fd in 0..3 {
            libc::close(fd);
        }
        // It dies with Decode, as bubblewrap's `--die-with-parent` does.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        let mut status: libc::c_int = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r < 0 && errno() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
        }
        libc::_exit(libc::WEXITSTATUS(status));
    }
}

/// Why [`Target::listen_tcp`] failed in the child, by its exit code.
fn listen_stage(code: i32) -> &'static str {
    match code {
        10 => "entering the sandbox's user namespace",
        11 => "entering the sandbox's network namespace",
        12 => "making a socket",
        13 => "binding 127.0.0.1",
        14 => "listening",
        15 => "handing the socket back",
        _ => "an unknown step",
    }
}

impl Target {
    /// A TCP socket listening on `127.0.0.1:port` (0: any free port) **inside the
    /// sandbox's network namespace**, owned by this process: a command in the
    /// sandbox reaches it on its own loopback, nothing outside does, and Decode
    /// accepts its connections like any other (docs/network.md: the proxy's way into
    /// a sandbox needs no forwarder process there). A child process enters the
    /// namespaces, makes the socket and hands it back over a socket pair; an error
    /// names the step that failed. Needs the sandbox's own network namespace.
    pub fn listen_tcp(&self, port: u16) -> io::Result<std::net::TcpListener> {
        use std::os::fd::FromRawFd;
        let Some(net) = &self.net else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the sandbox shares the host's network: nothing to listen in",
            ));
        };
        let user = self.user.as_raw_fd();
        let net = net.as_raw_fd();
        let mut pair = [0 as libc::c_int; 2];
        // SAFETY: `socketpair` fills the two descriptors of `pair`.
        check(unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        })?;
        // SAFETY: both are new descriptors that nothing else owns.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        // Everything the child uses is made before the fork: it allocates nothing.
        // SAFETY: an all-zero `sockaddr_in` is valid; the fields are set below.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let one: libc::c_int = 1;
        let mut byte = [0u8; 1];
        let mut cbuf = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // SAFETY: an all-zero `msghdr` is valid; the fields are set below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE is a size computation.
        msg.msg_controllen =
            unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) } as _;
        // SAFETY: `msg` points at `cbuf`, large enough for one descriptor's header.
        let data = unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
            libc::CMSG_DATA(c).cast::<libc::c_int>()
        };
        let theirs_raw = theirs.as_raw_fd();
        // SAFETY: after `fork` the child makes only async-signal-safe system calls
        // on the descriptors and memory prepared above, then `_exit`s: it never
        // returns into Rust code of the parent's threads.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: see above.
            unsafe {
                if libc::setns(user, libc::CLONE_NEWUSER) < 0 {
                    libc::_exit(10);
                }
                if libc::setns(net, libc::CLONE_NEWNET) < 0 {
                    libc::_exit(11);
                }
                let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
                if s < 0 {
                    libc::_exit(12);
                }
                libc::setsockopt(
                    s,
                    libc::SOL_SOCKET,
                    libc::SO_REUSEADDR,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
                if libc::bind(
                    s,
                    (&addr as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                ) < 0
                {
                    libc::_exit(13);
                }
                if libc::listen(s, 128) < 0 {
                    libc::_exit(14);
                }
                *data = s;
                if libc::sendmsg(theirs_raw, &msg, 0) < 0 {
                    libc::_exit(15);
                }
                libc::_exit(0);
            }
        }
        drop(theirs);
        let mut status = 0;
        // SAFETY: waits for the child made above.
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
            return Err(io::Error::other(format!(
                "cannot listen in the sandbox's network: {} failed",
                listen_stage(code)
            )));
        }
        // SAFETY: all-zero `msghdr` valid; it points at our own buffers.
        let mut rbyte = [0u8; 1];
        let mut rbuf = [0u64; 8];
        let mut riov = libc::iovec {
            iov_base: rbyte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // SAFETY: an all-zero `msghdr` is valid; the fields are set below.
        let mut rmsg: libc::msghdr = unsafe { std::mem::zeroed() };
        rmsg.msg_iov = &mut riov;
        rmsg.msg_iovlen = 1;
        rmsg.msg_control = rbuf.as_mut_ptr().cast();
        rmsg.msg_controllen = std::mem::size_of_val(&rbuf) as _;
        // SAFETY: receives into the buffers `rmsg` points at; the child has sent
        // its message (it exited 0 after `sendmsg`).
        let n = unsafe { libc::recvmsg(ours.as_raw_fd(), &mut rmsg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: reads the header the kernel wrote into `rbuf`, if any.
        let fd = unsafe {
            let c = libc::CMSG_FIRSTHDR(&rmsg);
            if c.is_null() || (*c).cmsg_type != libc::SCM_RIGHTS {
                return Err(io::Error::other(
                    "cannot listen in the sandbox's network: no socket came back",
                ));
            }
            *libc::CMSG_DATA(c).cast::<libc::c_int>()
        };
        // SAFETY: the descriptor the kernel just gave this process.
        Ok(unsafe { std::net::TcpListener::from_raw_fd(fd) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::{Command, Stdio};

    /// A socket made with [`Target::listen_tcp`] is on the sandbox's loopback: a
    /// process inside reaches it, the host's loopback does not.
    #[test]
    fn a_listener_inside_the_sandbox_network() {
        let mut holder = match Command::new("unshare")
            // bubblewrap brings the sandbox's loopback up; so does this stand-in.
            .args(["-Urn", "sh", "-c", "ip link set lo up && exec sleep 30"])
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => panic!("unshare: {e}"),
        };
        let pid = holder.id();
        // Wait until the stand-in sleeps in its namespaces with loopback up.
        for _ in 0..300 {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "sleep" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let open = |ns: &str| -> OwnedFd {
            std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))
                .unwrap()
                .into()
        };
        let t = Target::new(
            open("user"),
            open("mnt"),
            open("ipc"),
            Some(open("net")),
            Path::new("/"),
        )
        .unwrap();
        let listener = t.listen_tcp(0).expect("listen in the sandbox's network");
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        // From the host's loopback: it never reaches this listener.
        let _ = std::net::TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            std::time::Duration::from_millis(200),
        );
        assert_eq!(
            listener.accept().map(|_| ()).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        // From inside the namespace: it does.
        let status = Command::new("nsenter")
            .args([
                "-t",
                &pid.to_string(),
                "-U",
                "-n",
                "--preserve-credentials",
                "bash",
                "-c",
            ])
            .arg(format!("echo inside > /dev/tcp/127.0.0.1/{port}"))
            .status()
            .unwrap();
        assert!(status.success());
        listener.set_nonblocking(false).unwrap();
        let (mut s, _) = listener.accept().unwrap();
        let mut got = String::new();
        s.read_to_string(&mut got).unwrap();
        assert_eq!(got, "inside\n");
        let _ = holder.kill();
        let _ = holder.wait();
    }

    /// A command given a network of its own reaches the sockets Decode got back on
    /// its loopback, and its network is neither the kept one nor the host's.
    #[test]
    fn a_command_with_a_network_of_its_own_reaches_the_listeners() {
        let mut holder = Command::new("unshare")
            .args([
                "-Urnmi",
                "--propagation",
                "private",
                "sh",
                "-c",
                "exec sleep 30",
            ])
            .stdin(Stdio::null())
            .spawn()
            .expect("unshare");
        let pid = holder.id();
        for _ in 0..300 {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "sleep" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let open = |ns: &str| -> OwnedFd {
            std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))
                .unwrap()
                .into()
        };
        let kept_net = std::fs::read_link(format!("/proc/{pid}/ns/net")).unwrap();
        let host_net = std::fs::read_link("/proc/self/ns/net").unwrap();
        let t = Target::new(
            open("user"),
            open("mnt"),
            open("ipc"),
            Some(open("net")),
            Path::new("/"),
        )
        .unwrap();
        let (t, listeners) = t.with_own_network(&[3128, 1080]).unwrap();
        let mut cmd = Command::new("bash");
        cmd.args([
            "-c",
            "readlink /proc/self/ns/net; echo one >/dev/tcp/127.0.0.1/3128 && echo two >/dev/tcp/127.0.0.1/1080",
        ])
        .stdout(Stdio::piped());
        Arc::new(t).apply(&mut cmd);
        let mut child = cmd.spawn().expect("spawn in the sandbox");
        let got = listeners.take().expect("the listeners came back");
        assert_eq!(got.len(), 2);
        for (l, want) in got.iter().zip(["one\n", "two\n"]) {
            let (mut s, _) = l.accept().unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).unwrap();
            assert_eq!(text, want);
        }
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert!(child.wait().unwrap().success());
        let own = out.trim();
        assert!(own.starts_with("net:["), "{own}");
        assert_ne!(own, kept_net.to_string_lossy());
        assert_ne!(own, host_net.to_string_lossy());
        let _ = holder.kill();
        let _ = holder.wait();
    }
}
