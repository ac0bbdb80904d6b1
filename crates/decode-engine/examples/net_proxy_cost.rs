//! What the network proxy costs (bench/network.sh runs it in release): a download of
//! SIZE MB (default 200) from a server on 127.0.0.1, read directly and through the
//! proxy (an HTTP `CONNECT` tunnel, the host a public name at 127.0.0.1 allowed by a
//! rule), interleaved, N rounds; prints the median throughput of each and their
//! ratio, then the median time to open a connection directly and through the proxy
//! (connect, `CONNECT`, first byte back).
#![allow(clippy::print_stdout)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Instant;

use decode_core::agents::Catalog;
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_engine::net::{GateJudge, Proxy, Resolver};
use decode_policy::Mode;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

const ROUNDS: usize = 7;
const OPENS: usize = 200;
const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A server that writes `size` bytes to every connection, after reading one line.
async fn server(size: usize) -> u16 {
    let l = TcpListener::bind((LOCAL, 0)).await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        let chunk = vec![7u8; 256 * 1024];
        loop {
            let Ok((s, _)) = l.accept().await else { return };
            let chunk = chunk.clone();
            tokio::spawn(async move {
                let _ = s.set_nodelay(true);
                let mut r = BufReader::new(s);
                let mut line = String::new();
                if r.read_line(&mut line).await.is_err() {
                    return;
                }
                let mut s = r.into_inner();
                let mut left = size;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if s.write_all(&chunk[..n]).await.is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    port
}

/// Opens a stream to the server, directly or through the proxy's tunnel.
async fn open(server: u16, proxy: Option<u16>) -> TcpStream {
    match proxy {
        None => {
            let s = TcpStream::connect((LOCAL, server)).await.unwrap();
            s.set_nodelay(true).unwrap();
            s
        }
        Some(p) => {
            let mut s = TcpStream::connect((LOCAL, p)).await.unwrap();
            s.set_nodelay(true).unwrap();
            s.write_all(format!("CONNECT bench.test:{server} HTTP/1.1\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut b).await.unwrap();
                head.push(b[0]);
            }
            assert!(
                head.starts_with(b"HTTP/1.1 200"),
                "{}",
                String::from_utf8_lossy(&head)
            );
            s
        }
    }
}

/// Seconds to read `size` bytes.
async fn download(server: u16, proxy: Option<u16>, size: usize) -> f64 {
    let start = Instant::now();
    let mut s = open(server, proxy).await;
    s.write_all(b"go\n").await.unwrap();
    let mut buf = vec![0u8; 256 * 1024];
    let mut got = 0;
    while got < size {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream ended early");
        got += n;
    }
    start.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let size = mb * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    let home = dir.path().join("home");
    std::fs::create_dir_all(root.join(".decode")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        root.join(".decode/settings.json"),
        r#"{"permissions": {"allow": ["net(domain:bench.test)"]}}"#,
    )
    .unwrap();
    let (settings, _) = Settings::load(&root);
    let (state, _) = ActiveState::new(&root, Catalog::builtin(), settings, true, &home);
    state.set_mode(Mode::Auto);
    let judge = Arc::new(GateJudge::new(Arc::new(state)));
    let resolver = Resolver::default().with_public("bench.test", LOCAL);
    let proxy = Arc::new(Proxy::new(Arc::new(resolver), judge));
    let l = TcpListener::bind((LOCAL, 0)).await.unwrap();
    let proxy_port = l.local_addr().unwrap().port();
    tokio::spawn(proxy.serve_tcp(l));
    let port = server(size).await;

    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    download(port, None, size).await;
    download(port, Some(proxy_port), size).await;
    for _ in 0..ROUNDS {
        direct.push(mb as f64 / download(port, None, size).await);
        proxied.push(mb as f64 / download(port, Some(proxy_port), size).await);
    }
    let (d, p) = (median(direct), median(proxied));
    println!("download of {mb} MB from 127.0.0.1, median of {ROUNDS}:");
    println!("  direct        {d:>9.0} MB/s");
    println!("  through proxy {p:>9.0} MB/s");
    println!("  ratio         {:>9.1} %", 100.0 * p / d);

    let small = server(1).await;
    let (mut od, mut op) = (Vec::new(), Vec::new());
    for _ in 0..OPENS {
        for (proxy, out) in [(None, &mut od), (Some(proxy_port), &mut op)] {
            let t = Instant::now();
            let mut s = open(small, proxy).await;
            s.write_all(b"go\n").await.unwrap();
            let mut b = [0u8; 1];
            s.read_exact(&mut b).await.unwrap();
            out.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let (od, op) = (median(od), median(op));
    println!("opening a connection (to the first byte back), median of {OPENS}:");
    println!("  direct        {od:>9.3} ms");
    println!("  through proxy {op:>9.3} ms  (+{:.3} ms)", op - od);
}
