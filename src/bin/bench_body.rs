//! What a request body that never ends costs the server: streams boundary-less multipart
//! (and a part whose headers never end, and the same at a request refused before its body
//! is read) at the release binary, and prints how far its memory grew. Not a test: it
//! reports, it does not assert. Target (issue 37): peak RSS growth under 64 MB for 1 GiB sent.
//!
//! Run: `cargo build --release && cargo run --release --bin bench_body [-- --gib 1]`
//! (`--bin PATH` picks another server binary).
#[path = "common/proc.rs"]
mod proc;
use proc::{arg, loadavg, status_kb};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// CPU seconds the process used so far (user + system).
fn cpu_secs(pid: u32) -> f64 {
    let ticks = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_owned();
            let f: Vec<u64> = rest.split_whitespace().filter_map(|v| v.parse().ok()).collect();
            // After the state field: utime is the 12th number, stime the 13th.
            Some(f.get(10)? + f.get(11)?)
        })
        .unwrap_or(0);
    ticks as f64 / 100.0
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(bin: &Path, data: &Path, per_minute: u32) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(bin)
            .env("REELFIND_ADDR", format!("127.0.0.1:{port}"))
            .env("REELFIND_DATA_DIR", data)
            .env("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
            .env("REELFIND_LIBRARY_DEMO", "false")
            .env("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", per_minute.to_string())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server binary starts");
        let until = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "the server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        Self { child, port }
    }
}

/// Streams `head`, then filler without a boundary, as one chunked `POST /api/identify`,
/// until `total` bytes went out or the server stops reading. Returns (bytes sent, status).
async fn stream(port: u16, head: &[u8], total: u64) -> (u64, Option<u16>) {
    let s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut rd, mut wr) = s.into_split();
    let reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = rd.read_to_end(&mut buf).await;
        String::from_utf8_lossy(&buf).split(' ').nth(1).and_then(|s| s.parse().ok())
    });
    let mut sent = 0u64;
    let filler = vec![b'a'; 256 * 1024];
    let write = async {
        wr.write_all(
            b"POST /api/identify HTTP/1.1\r\nHost: bench\r\nContent-Type: multipart/form-data; boundary=nowhere\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )
        .await?;
        if !head.is_empty() {
            wr.write_all(format!("{:x}\r\n", head.len()).as_bytes()).await?;
            wr.write_all(head).await?;
            wr.write_all(b"\r\n").await?;
        }
        while sent < total {
            wr.write_all(format!("{:x}\r\n", filler.len()).as_bytes()).await?;
            wr.write_all(&filler).await?;
            wr.write_all(b"\r\n").await?;
            sent += filler.len() as u64;
        }
        wr.write_all(b"0\r\n\r\n").await
    };
    let _ = write.await;
    drop(wr);
    let status = tokio::time::timeout(Duration::from_secs(30), reader).await.ok().and_then(|r| r.ok()).flatten();
    (sent, status)
}

#[tokio::main]
async fn main() {
    let bin = PathBuf::from(
        arg("--bin").unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/reelfind").to_owned()),
    );
    let gib: f64 = arg("--gib").and_then(|v| v.parse().ok()).unwrap_or(1.0);
    let total = (gib * (1u64 << 30) as f64) as u64;
    let root = tempfile::tempdir().expect("temp dir");
    println!("server: {}; {gib} GiB offered per request; load avg {}", bin.display(), loadavg());
    println!("| body | sent MB | answer | seconds | server CPU s | peak RSS growth MB |");
    println!("|---|---|---|---|---|---|");
    let header_head: &[u8] =
        b"--nowhere\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nX-Pad: ";
    let cases: [(&str, &[u8], bool); 3] = [
        ("no boundary ever", b"", false),
        ("part headers that never end", header_head, false),
        ("no boundary, refused (429) before reading", b"", true),
    ];
    for (i, (name, head, refused)) in cases.into_iter().enumerate() {
        let data = root.path().join(format!("data-{i}"));
        let server = Server::start(&bin, &data, if refused { 1 } else { 1000 });
        let pid = server.child.id();
        if refused {
            // Spend the address's one identification of the minute.
            let _ = stream(server.port, b"", 1024).await;
        }
        let before = status_kb(pid, "VmHWM:");
        let cpu = cpu_secs(pid);
        let t = Instant::now();
        let (sent, status) = stream(server.port, head, total).await;
        let secs = t.elapsed().as_secs_f64();
        let grown = status_kb(pid, "VmHWM:").saturating_sub(before) as f64 / 1024.0;
        println!(
            "| {name} | {:.1} | {} | {secs:.2} | {:.2} | {grown:.1} |",
            sent as f64 / (1u64 << 20) as f64,
            status.map_or("connection closed".to_owned(), |s| s.to_string()),
            cpu_secs(pid) - cpu,
        );
    }
    println!("load avg after: {}", loadavg());
}
