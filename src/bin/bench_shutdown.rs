//! How long stopping takes: the durations `tests/shutdown.rs` and the ffmpeg tests used to
//! assert, measured here instead (the tests assert the events: the answer is 503, the
//! process ended cleanly, the children are gone). Not a test: it reports, it does not assert.
//!
//! Run: `cargo build --release && cargo run --release --bin bench_shutdown [-- --runs 5]`
//! (`--bin PATH` picks another server binary).
//!
//! Scenarios, each run `--runs` times, printed as min / median / max in milliseconds:
//! - **SIGTERM mid-identification**: a 40 s clip analysed with ffmpeg reading at native
//!   speed; from the signal to the 503 answer, to the process's exit, to its ffmpeg children
//!   gone.
//! - **SIGTERM / SIGINT during the demo indexing** (a 40 s demo clip read at native speed):
//!   from the signal to the exit and to the indexing's ffmpeg children gone.
//! - **A cancelled ffmpeg group** (`reelfind::ffmpeg::run` of `sh` with a grandchild): from
//!   the cancel to `run` returning and to the grandchild gone.
//!
//! Targets (issue 38, formerly test assertions): exit within 1.5 s of a signal during the
//! indexing, within 5 s mid-identification; a cancelled group gone within 200 ms.
#[path = "bench_load/hostile.rs"]
mod hostile;
#[path = "common/proc.rs"]
mod proc;

use proc::{arg, loadavg};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// Command lines (NUL-separated arguments) of every process.
fn command_lines() -> Vec<String> {
    let Ok(rd) = std::fs::read_dir("/proc") else { return vec![] };
    rd.flatten().filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok()).collect()
}

/// ffmpeg and ffprobe processes working on something under `dir`.
fn ffmpeg_under(dir: &Path) -> usize {
    let dir = dir.to_string_lossy().into_owned();
    command_lines().iter().filter(|c| (c.contains("ffmpeg") || c.contains("ffprobe")) && c.contains(&dir)).count()
}

/// ffmpeg processes (decoders, not probes) working on something under `dir`.
fn decoders_under(dir: &Path) -> usize {
    let dir = dir.to_string_lossy().into_owned();
    command_lines().iter().filter(|c| c.contains("ffmpeg") && !c.contains("ffprobe") && c.contains(&dir)).count()
}

/// Polls until `ok` holds; the time it took, or `None` after a minute.
fn until(mut ok: impl FnMut() -> bool) -> Option<Duration> {
    let t = Instant::now();
    while !ok() {
        if t.elapsed() > Duration::from_secs(60) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Some(t.elapsed())
}

/// A folder on PATH whose `ffmpeg` reads its input at native speed (`-re`).
fn slow_ffmpeg_dir(root: &Path) -> PathBuf {
    let dir = root.join("slow-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let real = String::from_utf8(Command::new("sh").args(["-c", "command -v ffmpeg"]).output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_owned();
    let script = dir.join("ffmpeg");
    std::fs::write(&script, format!("#!/bin/sh\nexec {real} -re \"$@\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
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
    fn start(bin: &Path, root: &Path, data: &Path, demo: Option<&Path>) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let path = format!("{}:{}", slow_ffmpeg_dir(root).display(), std::env::var("PATH").unwrap_or_default());
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("PATH", path)
            .env("REELFIND_ADDR", format!("127.0.0.1:{port}"))
            .env("REELFIND_DATA_DIR", data)
            .env("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
            .env("REELFIND_LIBRARY_DEMO", if demo.is_some() { "true" } else { "false" })
            .env("OPENAI_API_KEY", "k")
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .env("REELFIND_TRUST_PROXY", "true")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(demo) = demo {
            cmd.env("REELFIND_LIBRARY_DEMO_FILE", demo);
        }
        let child = cmd.spawn().expect("the server binary starts");
        let s = Self { child, port };
        until(|| TcpStream::connect(("127.0.0.1", port)).is_ok()).expect("the server listens");
        s
    }

    fn signal(&self, sig: i32) {
        // Safety: plain system call on our own child.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }

    fn exited(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }

    /// Starts `POST /api/identify` with `clip` and returns the open connection.
    fn post(&self, clip: &[u8]) -> TcpStream {
        let boundary = "reelfind-bench-shutdown";
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"mode\"\r\n\r\nopenai\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(clip);
        body.extend(format!("\r\n--{boundary}--\r\n").bytes());
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "POST /api/identify HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 198.51.100.7\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        s.write_all(&body).unwrap();
        s
    }
}

/// min / median / max of `ms` (a run that hung counts as a minute).
fn summary(ms: &mut [f64]) -> String {
    if ms.is_empty() {
        return "no runs".into();
    }
    ms.sort_by(f64::total_cmp);
    format!("{:.0} / {:.0} / {:.0} ms", ms[0], ms[ms.len() / 2], ms[ms.len() - 1])
}

fn ms(d: Option<Duration>) -> f64 {
    d.map_or(60_000.0, |d| d.as_secs_f64() * 1000.0)
}

fn mid_identification(bin: &Path, runs: usize) {
    let (mut answer, mut exit, mut gone) = (Vec::new(), Vec::new(), Vec::new());
    let mut not_503 = 0;
    for _ in 0..runs {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let clip = hostile::clip_mp4(root.path(), 40, 320, 240, true);
        let mut server = Server::start(bin, root.path(), &data, None);
        let mut conn = server.post(&clip);
        until(|| ffmpeg_under(&data) > 0).expect("an ffmpeg child at work");
        let t = Instant::now();
        server.signal(libc::SIGTERM);
        let mut text = String::new();
        conn.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let _ = conn.read_to_string(&mut text);
        answer.push(t.elapsed().as_secs_f64() * 1000.0);
        not_503 += usize::from(!text.starts_with("HTTP/1.1 503"));
        exit.push(ms(until(|| server.exited()).map(|_| t.elapsed())));
        gone.push(ms(until(|| ffmpeg_under(&data) == 0).map(|_| t.elapsed())));
    }
    println!("SIGTERM mid-identification ({runs} runs, {not_503} without a 503)");
    println!("  answer {}  exit {}  ffmpeg gone {}", summary(&mut answer), summary(&mut exit), summary(&mut gone));
}

fn during_indexing(bin: &Path, runs: usize, sig: i32, name: &str) {
    let (mut exit, mut gone) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        hostile::clip_mp4(&data, 40, 320, 240, true);
        let demo = data.join("clip-40-320x240-true.mp4");
        let mut server = Server::start(bin, root.path(), &data, Some(&demo));
        // The picture and the soundtrack are each decoded by an ffmpeg of their own.
        until(|| decoders_under(&data) >= 2).expect("the indexing's ffmpeg children");
        let t = Instant::now();
        server.signal(sig);
        exit.push(ms(until(|| server.exited()).map(|_| t.elapsed())));
        gone.push(ms(until(|| ffmpeg_under(&data) == 0).map(|_| t.elapsed())));
    }
    println!("{name} during the demo indexing ({runs} runs)");
    println!("  exit {}  ffmpeg gone {}", summary(&mut exit), summary(&mut gone));
}

async fn cancelled_group(runs: usize) {
    use reelfind::ffmpeg::{Limits, command, run};
    let (mut returned, mut gone) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let grandchild = format!("sleep\u{0}3600.{:02}", 40 + i % 50);
        let token = CancellationToken::new();
        let mut cmd = command("sh", Limits::UPLOAD);
        cmd.args(["-c", &format!("{} & wait", grandchild.replace('\u{0}', " "))]);
        let t2 = token.clone();
        let task = tokio::spawn(async move { run(cmd, "sh", 1024, &t2).await });
        let running = |cl: &str| command_lines().iter().filter(|c| c.trim_end_matches('\u{0}') == cl).count();
        while running(&grandchild) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let t = Instant::now();
        token.cancel();
        let _ = task.await;
        returned.push(t.elapsed().as_secs_f64() * 1000.0);
        gone.push(ms(until(|| running(&grandchild) == 0).map(|_| t.elapsed())));
    }
    println!("a cancelled ffmpeg group ({runs} runs)");
    println!("  run returned {}  grandchild gone {}", summary(&mut returned), summary(&mut gone));
}

#[tokio::main]
async fn main() {
    let bin = PathBuf::from(
        arg("--bin").unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/reelfind").to_owned()),
    );
    let runs: usize = arg("--runs").and_then(|v| v.parse().ok()).unwrap_or(5);
    println!("bench_shutdown: {} ({runs} runs each), load average before {}", bin.display(), loadavg());
    cancelled_group(runs).await;
    during_indexing(&bin, runs, libc::SIGTERM, "SIGTERM");
    during_indexing(&bin, runs, libc::SIGINT, "SIGINT");
    mid_identification(&bin, runs);
    println!("load average after {}", loadavg());
}
