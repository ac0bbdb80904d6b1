//! Relaying a tunnel between two TCP connections without copying its bytes through
//! Decode (docs/network.md, "Cost"): `splice(2)` moves them from one socket into a
//! pipe and from the pipe into the other socket inside the kernel. A copy through a
//! buffer costs two more passes over every byte; on a small machine the proxy then
//! halves what a download reaches.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::fcntl::{splice, SpliceFFlags};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// How much one `splice` moves at most (and the pipe's size).
const CHUNK: usize = 1 << 20;

/// Relays both ways between `a` and `b` until both directions ended: when one side
/// stops sending, the other side's sending half is shut (as `copy_bidirectional`
/// does). Returns the bytes moved each way (`a` to `b`, `b` to `a`).
pub(crate) async fn both(a: &TcpStream, b: &TcpStream) -> io::Result<(u64, u64)> {
    tokio::try_join!(one_way(a, b), one_way(b, a))
}

async fn one_way(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let (pipe_r, pipe_w) = pipe()?;
    let mut moved = 0u64;
    loop {
        from.readable().await?;
        let n = match from.try_io(Interest::READABLE, || {
            splice(from, None, &pipe_w, None, CHUNK, flags()).map_err(io::Error::from)
        }) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        let mut left = n;
        while left > 0 {
            to.writable().await?;
            match to.try_io(Interest::WRITABLE, || {
                splice(&pipe_r, None, to, None, left, flags()).map_err(io::Error::from)
            }) {
                Ok(m) => left -= m,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        moved += n as u64;
    }
    // The sender is done: so is the receiver's side of this direction.
    let _ = nix::sys::socket::shutdown(to.as_fd().as_raw_fd(), nix::sys::socket::Shutdown::Write);
    Ok(moved)
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
        .map_err(io::Error::from)?;
    // A bigger pipe moves more per call (the default is 64 KiB); refused, the
    // default does.
    let _ = nix::fcntl::fcntl(&w, nix::fcntl::FcntlArg::F_SETPIPE_SZ(CHUNK as i32));
    Ok((r, w))
}

fn flags() -> SpliceFFlags {
    SpliceFFlags::SPLICE_F_MOVE | SpliceFFlags::SPLICE_F_NONBLOCK
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair() -> (TcpStream, TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let (c, s) = tokio::join!(TcpStream::connect(addr), l.accept());
        (c.unwrap(), s.unwrap().0)
    }

    #[tokio::test]
    async fn bytes_go_both_ways_whole_and_an_end_is_passed_on() {
        // client <-> (a | relay | b) <-> server
        let (mut client, a) = pair().await;
        let (b, mut server) = pair().await;
        let relay = tokio::spawn(async move { both(&a, &b).await });
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = big.clone();
        let up = tokio::spawn(async move {
            client.write_all(&sent).await.unwrap();
            client.shutdown().await.unwrap();
            let mut back = Vec::new();
            client.read_to_end(&mut back).await.unwrap();
            back
        });
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert_eq!(got.len(), big.len());
        assert!(got == big);
        server.write_all(b"answer").await.unwrap();
        server.shutdown().await.unwrap();
        assert_eq!(up.await.unwrap(), b"answer");
        let (ab, ba) = relay.await.unwrap().unwrap();
        assert_eq!((ab, ba), (big.len() as u64, 6));
    }
}
