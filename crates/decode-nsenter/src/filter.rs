//! The system-call filter every sandboxed command runs under (docs/sandbox.md, "Host
//! services are out of reach"): a command makes no local socket of its own.
//!
//! A server the person starts while a command runs — `ssh-agent` in a fresh
//! `/tmp/ssh-*` folder, `tmux -S` at any path, a bus at a path of its choosing —
//! listens on a Unix socket that no mount made ahead can cover, and a client that
//! reaches it has the server act outside the sandbox. So `socket(AF_UNIX, …)` (and
//! `AF_VSOCK`, the way to a virtual machine's host) fails with `EAFNOSUPPORT`
//! ("Address family not supported by protocol"), as Anthropic's sandbox runtime does
//! on Linux. `socketpair` of stream and sequenced-packet sockets keeps working (pipes
//! between a command's own processes: such a socket is connected for good), and so
//! does the network (TCP through Decode's proxy, loopback of its own); a datagram
//! pair is refused like `socket` (a datagram socket can be pointed at any path with
//! `connect` or `sendto`).
//! `io_uring_setup` fails with `ENOSYS` (its ring can open sockets where no filter
//! looks; programs fall back to ordinary calls), and so does every call of the x32
//! ABI. A 32-bit program's `socketcall(SYS_SOCKET | SYS_SOCKETPAIR, …)` fails (its
//! arguments lie in memory a filter cannot read).

/// `struct sock_filter`: one classic-BPF instruction.
pub(crate) type Insn = libc::sock_filter;

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of the first argument (little-endian), all the kernel reads of
/// an `int` argument.
const ARG0: u32 = 16;
/// The low 32 bits of the second argument.
const ARG1: u32 = 24;

const ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
const ERRNO: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO

const AF_UNIX: u32 = 1;
const AF_VSOCK: u32 = 40;
const SYS_SOCKET: u32 = 1; // socketcall's call number for socket(2)
const SYS_SOCKETPAIR: u32 = 8; // … and for socketpair(2)
const SOCK_TYPE_MASK: u32 = 0xf;
const SOCK_DGRAM: u32 = 2;

/// What one system-call architecture calls its numbers.
struct Abi {
    arch: u32,
    socket: u32,
    socketpair: u32,
    io_uring_setup: u32,
    /// `socketcall(2)`, where the architecture has it.
    socketcall: Option<u32>,
    /// Numbers at or above this one are another ABI sharing `arch` (x32).
    other_abi_from: Option<u32>,
}

#[cfg(target_arch = "x86_64")]
const ABIS: [Abi; 2] = [
    Abi {
        arch: 0xC000_003E, // AUDIT_ARCH_X86_64
        socket: 41,
        socketpair: 53,
        io_uring_setup: 425,
        socketcall: None,
        other_abi_from: Some(0x4000_0000), // __X32_SYSCALL_BIT
    },
    Abi {
        arch: 0x4000_0003, // AUDIT_ARCH_I386
        socket: 359,
        socketpair: 360,
        io_uring_setup: 425,
        socketcall: Some(102),
        other_abi_from: None,
    },
];

#[cfg(target_arch = "aarch64")]
const ABIS: [Abi; 2] = [
    Abi {
        arch: 0xC000_00B7, // AUDIT_ARCH_AARCH64
        socket: 198,
        socketpair: 199,
        io_uring_setup: 425,
        socketcall: None,
        other_abi_from: None,
    },
    Abi {
        arch: 0x4000_0028, // AUDIT_ARCH_ARM
        socket: 281,
        socketpair: 288,
        io_uring_setup: 425,
        socketcall: None,
        other_abi_from: None,
    },
];

/// Where a jump goes: the next instruction or a label.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum To {
    Next,
    Label(usize),
}

enum Op {
    Load(u32),
    And(u32),
    Jump { code: u16, k: u32, yes: To, no: To },
    Ret(u32),
    Label(usize),
}

const REFUSE_FAMILY: usize = 0;
const NO_SUCH_CALL: usize = 1;
const CHECK_FAMILY: usize = 2;
const CHECK_SOCKETCALL: usize = 3;
const CHECK_PAIR: usize = 4;
const NEXT_ABI: usize = 10;

fn jeq(k: u32, yes: To, no: To) -> Op {
    Op::Jump {
        code: JEQ_K,
        k,
        yes,
        no,
    }
}

/// The filter's program, or `None` on an architecture Decode has no table for.
pub fn program() -> Option<Vec<Insn>> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        Some(assemble(&ops(&ABIS)))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// The program as bytes, the form bubblewrap's `--seccomp FD` reads.
pub fn program_bytes() -> Option<Vec<u8>> {
    Some(
        program()?
            .iter()
            .flat_map(|i| {
                let mut b = Vec::with_capacity(8);
                b.extend_from_slice(&i.code.to_ne_bytes());
                b.push(i.jt);
                b.push(i.jf);
                b.extend_from_slice(&i.k.to_ne_bytes());
                b
            })
            .collect(),
    )
}

#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
fn ops(abis: &[Abi]) -> Vec<Op> {
    let mut ops = vec![Op::Load(ARCH)];
    for (n, abi) in abis.iter().enumerate() {
        let next_abi = To::Label(NEXT_ABI + n);
        ops.push(jeq(abi.arch, To::Next, next_abi));
        ops.push(Op::Load(NR));
        if let Some(from) = abi.other_abi_from {
            ops.push(Op::Jump {
                code: JGE_K,
                k: from,
                yes: To::Label(NO_SUCH_CALL),
                no: To::Next,
            });
        }
        ops.push(jeq(abi.socket, To::Label(CHECK_FAMILY), To::Next));
        ops.push(jeq(abi.socketpair, To::Label(CHECK_PAIR), To::Next));
        if let Some(sc) = abi.socketcall {
            ops.push(jeq(sc, To::Label(CHECK_SOCKETCALL), To::Next));
        }
        ops.push(jeq(abi.io_uring_setup, To::Label(NO_SUCH_CALL), To::Next));
        ops.push(Op::Ret(ALLOW));
        ops.push(Op::Label(NEXT_ABI + n));
        // (the architecture is still in the accumulator here)
    }
    // An architecture none of the tables names cannot run here; refuse it whole.
    ops.push(Op::Ret(ERRNO | libc::ENOSYS as u32));
    ops.push(Op::Label(CHECK_SOCKETCALL));
    ops.push(Op::Load(ARG0));
    ops.push(jeq(SYS_SOCKET, To::Label(REFUSE_FAMILY), To::Next));
    ops.push(jeq(SYS_SOCKETPAIR, To::Label(REFUSE_FAMILY), To::Next));
    ops.push(Op::Ret(ALLOW));
    ops.push(Op::Label(CHECK_PAIR));
    ops.push(Op::Load(ARG1));
    ops.push(Op::And(SOCK_TYPE_MASK));
    ops.push(jeq(SOCK_DGRAM, To::Label(REFUSE_FAMILY), To::Next));
    ops.push(Op::Ret(ALLOW));
    ops.push(Op::Label(CHECK_FAMILY));
    ops.push(Op::Load(ARG0));
    ops.push(jeq(AF_UNIX, To::Label(REFUSE_FAMILY), To::Next));
    ops.push(jeq(AF_VSOCK, To::Label(REFUSE_FAMILY), To::Next));
    ops.push(Op::Ret(ALLOW));
    ops.push(Op::Label(REFUSE_FAMILY));
    ops.push(Op::Ret(ERRNO | libc::EAFNOSUPPORT as u32));
    ops.push(Op::Label(NO_SUCH_CALL));
    ops.push(Op::Ret(ERRNO | libc::ENOSYS as u32));
    ops
}

/// Resolves labels into the forward offsets classic BPF jumps take.
fn assemble(ops: &[Op]) -> Vec<Insn> {
    let mut at = std::collections::HashMap::new();
    let mut pc = 0usize;
    for op in ops {
        match op {
            Op::Label(l) => {
                at.insert(*l, pc);
            }
            _ => pc += 1,
        }
    }
    let mut out = Vec::with_capacity(pc);
    for op in ops {
        let here = out.len();
        let off = |to: To| -> u8 {
            match to {
                To::Next => 0,
                To::Label(l) => {
                    let target = at[&l];
                    assert!(target > here, "a BPF jump only goes forward");
                    u8::try_from(target - here - 1).expect("a short program")
                }
            }
        };
        match op {
            Op::Label(_) => {}
            Op::Load(k) => out.push(Insn {
                code: LD_W_ABS,
                jt: 0,
                jf: 0,
                k: *k,
            }),
            Op::And(k) => out.push(Insn {
                code: AND_K,
                jt: 0,
                jf: 0,
                k: *k,
            }),
            Op::Ret(k) => out.push(Insn {
                code: RET_K,
                jt: 0,
                jf: 0,
                k: *k,
            }),
            Op::Jump { code, k, yes, no } => out.push(Insn {
                code: *code,
                jt: off(*yes),
                jf: off(*no),
                k: *k,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program over one call, as the kernel would.
    fn run(p: &[Insn], nr: u32, arch: u32, arg0: u32) -> u32 {
        run2(p, nr, arch, arg0, 0)
    }

    fn run2(p: &[Insn], nr: u32, arch: u32, arg0: u32, arg1: u32) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let i = p[pc];
            match i.code {
                LD_W_ABS => {
                    acc = match i.k {
                        NR => nr,
                        ARCH => arch,
                        ARG0 => arg0,
                        ARG1 => arg1,
                        other => panic!("load of {other}"),
                    };
                    pc += 1;
                }
                AND_K => {
                    acc &= i.k;
                    pc += 1;
                }
                JEQ_K | JGE_K => {
                    let yes = if i.code == JEQ_K {
                        acc == i.k
                    } else {
                        acc >= i.k
                    };
                    pc += 1 + usize::from(if yes { i.jt } else { i.jf });
                }
                RET_K => return i.k,
                other => panic!("opcode {other:#x}"),
            }
        }
    }

    #[test]
    fn local_sockets_and_rings_are_refused_everything_else_passes() {
        let p = assemble(&ops(&ABIS));
        let refused = ERRNO | libc::EAFNOSUPPORT as u32;
        let nosys = ERRNO | libc::ENOSYS as u32;
        for abi in &ABIS {
            assert_eq!(run(&p, abi.socket, abi.arch, AF_UNIX), refused);
            assert_eq!(run(&p, abi.socket, abi.arch, AF_VSOCK), refused);
            assert_eq!(run(&p, abi.socket, abi.arch, 2), ALLOW, "AF_INET");
            assert_eq!(run(&p, abi.socket, abi.arch, 10), ALLOW, "AF_INET6");
            assert_eq!(run(&p, abi.io_uring_setup, abi.arch, 0), nosys);
            assert_eq!(run(&p, 0, abi.arch, AF_UNIX), ALLOW, "read(1, …)");
            // socketpair(AF_UNIX, type | SOCK_CLOEXEC, …)
            let pair = |ty| run2(&p, abi.socketpair, abi.arch, AF_UNIX, ty | 0o2000000);
            assert_eq!(pair(1), ALLOW, "SOCK_STREAM");
            assert_eq!(pair(5), ALLOW, "SOCK_SEQPACKET");
            assert_eq!(pair(SOCK_DGRAM), refused, "SOCK_DGRAM");
            if let Some(sc) = abi.socketcall {
                assert_eq!(run(&p, sc, abi.arch, SYS_SOCKET), refused);
                assert_eq!(run(&p, sc, abi.arch, SYS_SOCKETPAIR), refused);
                assert_eq!(run(&p, sc, abi.arch, 3), ALLOW, "socketcall(SYS_CONNECT)");
            }
            if let Some(from) = abi.other_abi_from {
                assert_eq!(run(&p, from | abi.socket, abi.arch, 2), nosys);
            }
        }
        assert_eq!(run(&p, 41, 0x1234, AF_UNIX), nosys, "an unknown ABI");
    }
}
