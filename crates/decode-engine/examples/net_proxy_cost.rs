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
/// A fast link (8 Gbit/s), slower than the loopback of a small machine.
const PACE: f64 = 1000.0;
const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A server that writes `size` bytes to every connection, after reading one line;
/// no faster than `pace` MB/s when one is given (a link of that speed).
async fn server(size: usize, pace: Option<f64>) -> u16 {
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
                let start = tokio::time::Instant::now();
                let mut left = size;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if s.write_all(&chunk[..n]).await.is_err() {
                        return;
                    }
                    left -= n;
                    if let Some(mb_s) = pace {
                        let sent = (size - left) as f64 / (1024.0 * 1024.0);
                        let due = start + std::time::Duration::from_secs_f64(sent / mb_s);
                        tokio::time::sleep_until(due).await;
                    }
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

/// The machine's busy CPU time so far, in clock ticks (every core, every kind of
/// work but idle and waiting: interrupts and the kernel's network work count).
fn busy_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu = stat.lines().next().unwrap_or_default();
    cpu.split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse::<u64>().ok())
        .enumerate()
        // user nice system idle iowait irq softirq steal
        .filter(|(i, _)| !matches!(i, 3 | 4) && *i < 8)
        .map(|(_, t)| t)
        .sum()
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
    let port = server(size, None).await;

    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    let (mut direct_cpu, mut proxied_cpu) = (0u64, 0u64);
    download(port, None, size).await;
    download(port, Some(proxy_port), size).await;
    for _ in 0..ROUNDS {
        let t = busy_ticks();
        direct.push(mb as f64 / download(port, None, size).await);
        let u = busy_ticks();
        proxied.push(mb as f64 / download(port, Some(proxy_port), size).await);
        direct_cpu += u - t;
        proxied_cpu += busy_ticks() - u;
    }
    let (d, p) = (median(direct), median(proxied));
    let tick_ms = 1000.0 / 100.0; // USER_HZ
    let per_mb = |ticks: u64| ticks as f64 * tick_ms / (ROUNDS * mb) as f64;
    println!("download of {mb} MB from 127.0.0.1, median of {ROUNDS}:");
    println!(
        "  direct        {d:>9.0} MB/s   {:.3} ms of CPU per MB",
        per_mb(direct_cpu)
    );
    println!(
        "  through proxy {p:>9.0} MB/s   {:.3} ms of CPU per MB",
        per_mb(proxied_cpu)
    );
    println!("  ratio         {:>9.1} %", 100.0 * p / d);
    println!(
        "  CPU per MB through the proxy: {:.2}x direct",
        proxied_cpu as f64 / direct_cpu.max(1) as f64
    );

    // A link slower than the machine's loopback: the proxy should keep up with it.
    let paced = server(size, Some(PACE)).await;
    let (mut pd, mut pp) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        pd.push(mb as f64 / download(paced, None, size).await);
        pp.push(mb as f64 / download(paced, Some(proxy_port), size).await);
    }
    let (pd, pp) = (median(pd), median(pp));
    println!("the same from a server paced at {PACE} MB/s, median of 3:");
    println!("  direct        {pd:>9.0} MB/s");
    println!("  through proxy {pp:>9.0} MB/s");
    println!("  ratio         {:>9.1} %", 100.0 * pp / pd);

    let small = server(1, None).await;
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
