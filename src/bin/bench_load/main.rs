//! Load benchmark of the real server: many uploads at once, hostile ones among them, against
//! the release binary as an operator runs it (defaults, the demo clip indexed, mode `auto`,
//! no cloud key). Not a test: it reports, it does not assert.
//!
//! Run: `cargo build --release && cargo run --release --bin bench_load [-- --clients 50 --rounds 2]`
//! (`--bin PATH` picks another server binary).
//!
//! Per round and scenario it prints how many requests were answered (2xx or 4xx), refused
//! with 429 or 503, and failed otherwise (any other 5xx, a reset connection); latency
//! p50/p95; the server's peak RSS (sampled every 20 ms, and its VmHWM) and the peak of its
//! children together; the RSS a few seconds after the burst; whether any child process or
//! upload folder was left; and how long the server took to exit after SIGTERM.
//! Targets (issue 10): peak RSS < 600 MB, no 5xx but 503, every process gone.
#[path = "hostile.rs"]
mod hostile;
#[path = "../common/proc.rs"]
mod proc;

use proc::{arg, loadavg, status_kb};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Pids of the processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else { return vec![] };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_owned)))
                .flatten()
                .is_some_and(|pp| pp == pid.to_string())
        })
        .collect()
}

/// Processes anywhere whose command line names `needle` (ffmpeg children, even orphaned).
fn processes_naming(needle: &str) -> usize {
    let Ok(rd) = std::fs::read_dir("/proc") else { return 0 };
    rd.flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(needle))
        .count()
}

struct Server {
    child: Child,
    port: u16,
    data: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(bin: &Path, data: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(bin)
            .env("REELFIND_ADDR", format!("127.0.0.1:{port}"))
            .env("REELFIND_DATA_DIR", data)
            .env("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
            .env("REELFIND_TRUST_PROXY", "true")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server binary starts");
        let s = Self { child, port, data: data.to_path_buf() };
        let until = Instant::now() + Duration::from_secs(120);
        // Listening, and the demo clip indexed (the Library engine answers `auto`).
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
            || !std::fs::read_to_string(data.join("library/catalog.json")).is_ok_and(|c| c.contains("big-buck-bunny"))
        {
            assert!(Instant::now() < until, "the server did not get ready");
            std::thread::sleep(Duration::from_millis(200));
        }
        s
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn tmp_entries(&self) -> usize {
        std::fs::read_dir(self.data.join("tmp")).map_or(0, |rd| rd.count())
    }

    /// SIGTERM; seconds until the process is gone.
    fn stop(&mut self) -> f64 {
        let t = Instant::now();
        // Safety: plain system call on our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        loop {
            if self.child.try_wait().ok().flatten().is_some() {
                return t.elapsed().as_secs_f64();
            }
            if t.elapsed() > Duration::from_secs(60) {
                let _ = self.child.kill();
                return f64::INFINITY;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Samples the server's and its children's resident memory until stopped.
struct Sampler {
    stop: Arc<AtomicBool>,
    server_peak: Arc<AtomicU64>,
    total_peak: Arc<AtomicU64>,
    children_peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (server_peak, total_peak, children_peak) =
            (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (s, sp, tp, cp) = (stop.clone(), server_peak.clone(), total_peak.clone(), children_peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let own = status_kb(pid, "VmRSS:");
                let kids: Vec<u32> = children(pid);
                let kids_kb: u64 = kids.iter().map(|k| status_kb(*k, "VmRSS:")).sum();
                sp.fetch_max(own, Ordering::Relaxed);
                tp.fetch_max(own + kids_kb, Ordering::Relaxed);
                cp.fetch_max(kids.len() as u64, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Self { stop, server_peak, total_peak, children_peak, thread: Some(thread) }
    }

    /// (server peak MB, server + children peak MB, most children at once).
    fn finish(mut self) -> (f64, f64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        (
            self.server_peak.load(Ordering::Relaxed) as f64 / 1024.0,
            self.total_peak.load(Ordering::Relaxed) as f64 / 1024.0,
            self.children_peak.load(Ordering::Relaxed),
        )
    }
}

#[derive(Clone)]
struct Media {
    name: &'static str,
    filename: &'static str,
    mime: &'static str,
    bytes: Arc<Vec<u8>>,
}

/// One upload from its own client address (so per-address limits do not hide admission).
async fn upload(http: &reqwest::Client, port: u16, m: &Media, client: u32) -> (u16, Duration) {
    let form = reqwest::multipart::Form::new()
        .text("mode", "auto")
        .text("useAudioAnalysis", "true")
        .text("useEnhancedAnalysis", "true")
        .part(
            "file",
            reqwest::multipart::Part::bytes(m.bytes.as_ref().clone())
                .file_name(m.filename)
                .mime_str(m.mime)
                .expect("mime"),
        );
    let addr = format!("10.{}.{}.{}", (client >> 16) & 255, (client >> 8) & 255, client & 255);
    let t = Instant::now();
    let res = http
        .post(format!("http://127.0.0.1:{port}/api/identify"))
        .header("x-forwarded-for", addr)
        .multipart(form)
        .timeout(Duration::from_secs(300))
        .send()
        .await;
    let status = match res {
        Ok(r) => {
            let s = r.status().as_u16();
            let _ = r.bytes().await;
            s
        }
        Err(_) => 0,
    };
    (status, t.elapsed())
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

async fn scenario(server: &Server, name: &str, batch: Vec<Media>, next_client: &mut u32) {
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    let load_before = loadavg();
    let sampler = Sampler::start(server.pid());
    let started = Instant::now();
    let mut tasks = Vec::new();
    for m in batch.iter().cloned() {
        *next_client += 1;
        let (http, port, client) = (http.clone(), server.port, *next_client);
        tasks.push(tokio::spawn(async move { (m.name, upload(&http, port, &m, client).await) }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.expect("task"));
    }
    let wall = started.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (server_peak, total_peak, most_children) = sampler.finish();
    let hwm = status_kb(server.pid(), "VmHWM:") as f64 / 1024.0;
    let after = status_kb(server.pid(), "VmRSS:") as f64 / 1024.0;
    let count = |f: &dyn Fn(u16) -> bool| results.iter().filter(|(_, (s, _))| f(*s)).count();
    let answered = count(&|s| (200..500).contains(&s) && s != 429);
    let (r429, r503) = (count(&|s| s == 429), count(&|s| s == 503));
    let other = count(&|s| !(200..500).contains(&s) && s != 503 || s == 0);
    let mut times: Vec<Duration> = results.iter().map(|(_, (_, d))| *d).collect();
    times.sort();
    let mut by_kind: std::collections::BTreeMap<&str, Vec<u16>> = Default::default();
    for (n, (s, _)) in &results {
        by_kind.entry(n).or_default().push(*s);
    }
    println!(
        "| {name} | {} | {answered} | {r429} | {r503} | {other} | {:.0} | {:.0} | {:.1} | {server_peak:.0} (HWM {hwm:.0}) | {total_peak:.0} | {most_children} | {after:.0} | {} | {} | {load_before} |",
        results.len(),
        pct(&times, 0.5),
        pct(&times, 0.95),
        wall.as_secs_f64(),
        processes_naming(&server.data.display().to_string()),
        server.tmp_entries(),
    );
    for (k, v) in by_kind {
        let mut counts: std::collections::BTreeMap<u16, usize> = Default::default();
        for s in v {
            *counts.entry(s).or_default() += 1;
        }
        eprintln!("    {name} / {k}: {counts:?}");
    }
}

fn demo_still(dir: &Path, at: f64) -> Vec<u8> {
    let out = dir.join(format!("still-{at}.jpg"));
    let ok = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-ss", &at.to_string(), "-i"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/big-buck-bunny.mp4"))
        .args(["-frames:v", "1", "-q:v", "3"])
        .arg(&out)
        .status()
        .expect("ffmpeg")
        .success();
    assert!(ok);
    std::fs::read(out).expect("still")
}

fn demo_excerpt(dir: &Path) -> Vec<u8> {
    let out = dir.join("excerpt.mp4");
    let ok = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-ss", "1", "-t", "3", "-i"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/big-buck-bunny.mp4"))
        .args(["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"])
        .arg(&out)
        .status()
        .expect("ffmpeg")
        .success();
    assert!(ok);
    std::fs::read(out).expect("excerpt")
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bin = PathBuf::from(
        arg("--bin").unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/reelfind").to_owned()),
    );
    let clients: usize = arg("--clients").and_then(|v| v.parse().ok()).unwrap_or(50);
    let rounds: usize = arg("--rounds").and_then(|v| v.parse().ok()).unwrap_or(1);
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path();
    eprintln!("making media in {}", dir.display());
    let m = |name, filename, mime, bytes: Vec<u8>| Media { name, filename, mime, bytes: Arc::new(bytes) };
    let stills: Vec<Media> = [0.5, 1.5, 2.5, 3.5, 4.5]
        .iter()
        .map(|at| m("demo still (JPEG)", "still.jpg", "image/jpeg", demo_still(dir, *at)))
        .collect();
    let excerpt = m("demo excerpt 3 s (MP4)", "clip.mp4", "video/mp4", demo_excerpt(dir));
    let clip720 = m("720p 20 s clip + sound", "clip.mp4", "video/mp4", hostile::clip_mp4(dir, 20, 1280, 720, true));
    let big_png = m("7000x5000 PNG", "big.png", "image/png", hostile::picture(7000, 5000, image::ImageFormat::Png));
    let lying = m(
        "lying length (1 s declared, 10 h)",
        "lying.mp4",
        "video/mp4",
        hostile::lying_picture_mp4(dir, 36_000, false),
    );
    let lying_sound =
        m("lying sound (30 min gap)", "lying-sound.mp4", "video/mp4", hostile::lying_sound_mp4(dir, 1800));
    let mut truncated = stills[0].bytes.as_ref().clone();
    truncated.truncate(1200);
    let truncated = m("truncated JPEG", "cut.jpg", "image/jpeg", truncated);

    // The mix: mostly stills, then clips, then the heavy and hostile ones.
    let pattern: Vec<&Media> = vec![
        &stills[0],
        &excerpt,
        &stills[1],
        &big_png,
        &stills[2],
        &lying,
        &stills[3],
        &clip720,
        &stills[4],
        &truncated,
        &excerpt,
        &lying_sound,
    ];
    let mixed: Vec<Media> = (0..clients).map(|i| pattern[i % pattern.len()].clone()).collect();

    println!("server: {}", bin.display());
    println!(
        "| scenario | requests | answered | 429 | 503 | other | p50 ms | p95 ms | wall s | server peak RSS MB | server + children peak MB | children at once | RSS 3 s after MB | processes left | temp entries left | load avg (1/5/15) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut next_client = 0u32;
    for round in 0..rounds {
        let data = dir.join(format!("data-{round}"));
        let mut server = Server::start(&bin, &data);
        let idle = status_kb(server.pid(), "VmRSS:") as f64 / 1024.0;
        eprintln!("round {round}: server idle RSS {idle:.0} MB");
        scenario(&server, &format!("{clients} mixed at once"), mixed.clone(), &mut next_client).await;
        scenario(&server, "lying length alone", vec![lying.clone()], &mut next_client).await;
        scenario(&server, "lying sound alone", vec![lying_sound.clone()], &mut next_client).await;
        let exit = server.stop();
        let left = processes_naming(&data.display().to_string());
        println!(
            "round {round}: idle RSS {idle:.0} MB; exit {exit:.2} s after SIGTERM; processes left after exit: {left}"
        );
    }
}
