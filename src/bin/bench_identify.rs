//! The server's own cost per identification, with an instant fake engine standing in for
//! the cloud: upload streaming, type sniffing, media preparation (decode, orient, scale,
//! JPEG; or ffprobe + scene scoring + frame cuts + sound track), the pipeline, storing the
//! result and the JSON answer. No network, no catalog.
//!
//! Run in release: `cargo run --release --bin bench_identify [-- --image-runs 40 --clip-runs 5]`
//! (a count of 0 skips that scenario).
//! Reports p50/p95 latency per scenario and the process's peak memory (VmHWM). The ffmpeg
//! child processes are not part of VmHWM; their peak is reported separately from
//! `getrusage(RUSAGE_CHILDREN)` via /proc (ru_maxrss of the largest child).
//! Targets (issue 4): image overhead p50 < 50 ms, 30 s clip < 2 s.
use std::io::Cursor;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{Request, header};
use reelfind::config::{Config, Env};
use reelfind::entities::user::Role;
use reelfind::identify::{Candidate, Engine, EngineAnswer, EngineError, EngineId, Sample, TitleKind};
use reelfind::services::users::CurrentUser;
use reelfind::state::AppState;
use sea_orm::ConnectionTrait;
use tower::ServiceExt;

/// Answers at once, so what is measured is the server alone.
struct InstantEngine;

#[async_trait]
impl Engine for InstantEngine {
    fn id(&self) -> EngineId {
        EngineId::Openai
    }
    fn available(&self) -> bool {
        true
    }
    async fn identify(&self, sample: &Sample, _deadline: tokio::time::Instant) -> Result<EngineAnswer, EngineError> {
        assert!(!sample.frames.is_empty());
        Ok(EngineAnswer {
            candidates: vec![Candidate {
                title: "Benchmark".into(),
                year: Some(2024),
                kind: TitleKind::Movie,
                confidence: 0.9,
                ..Default::default()
            }],
            model: "instant".into(),
        })
    }
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A 1080p photo-like JPEG (smooth gradients plus noise, so it compresses like a frame).
fn jpeg_1080p() -> Vec<u8> {
    let mut seed = 0x2545F4914F6CDD1Du64;
    let img = image::RgbImage::from_fn(1920, 1080, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (seed % 24) as u32;
        image::Rgb([((x / 8 + n) % 256) as u8, ((y / 5 + n) % 256) as u8, (((x + y) / 12 + n) % 256) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, image::ImageFormat::Jpeg).expect("encode");
    out.into_inner()
}

/// A 30 s 1080p30 H.264 clip from ffmpeg's test source, with a sine sound track when `audio`.
fn clip_1080p(dir: &std::path::Path, audio: bool) -> Vec<u8> {
    let out = dir.join(format!("bench-{audio}.mp4"));
    let mut cmd = std::process::Command::new("ffmpeg");
    cmd.args(["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=duration=30:size=1920x1080:rate=30"]);
    if audio {
        cmd.args(["-f", "lavfi", "-i", "sine=frequency=300:duration=30"]);
    }
    cmd.args(["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart"]);
    if audio {
        cmd.args(["-c:a", "aac", "-shortest"]);
    }
    assert!(cmd.arg(&out).status().expect("ffmpeg").success(), "ffmpeg failed to make the clip");
    std::fs::read(out).expect("clip")
}

fn multipart(bytes: &[u8], filename: &str, mime: &str, audio: bool) -> (String, Vec<u8>) {
    let boundary = "----reelfind-bench";
    let mut body = Vec::with_capacity(bytes.len() + 512);
    for (k, v) in [
        ("mode", "openai"),
        ("useAudioAnalysis", if audio { "true" } else { "false" }),
        ("useEnhancedAnalysis", "true"),
    ] {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n")
            .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// One file as the form sends it.
struct Upload<'a> {
    bytes: &'a [u8],
    filename: &'a str,
    mime: &'a str,
    /// The form's "analyse the soundtrack" choice.
    audio: bool,
}

async fn scenario(app: &axum::Router, state: &AppState, name: &str, upload: Upload<'_>, runs: usize) {
    let user = CurrentUser { id: 1, username: "bench".into(), email: "bench@example.com".into(), role: Role::User };
    let (ct, body) = multipart(upload.bytes, upload.filename, upload.mime, upload.audio);
    let mut times = Vec::with_capacity(runs);
    let mut last_timings = serde_json::Value::Null;
    for i in 0..=runs {
        // A fresh answer every time: forget earlier results of the same bytes.
        state.db.execute_unprepared("DELETE FROM identifications").await.expect("clear");
        let mut req = Request::post("/api/identify")
            .header(header::CONTENT_TYPE, &ct)
            .header(header::ORIGIN, "http://localhost:3000")
            .body(Body::from(body.clone()))
            .expect("request");
        req.extensions_mut().insert(user.clone());
        let t = Instant::now();
        let res = app.clone().oneshot(req).await.expect("infallible");
        let status = res.status();
        let out = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
        let took = t.elapsed();
        assert!(status.is_success(), "{name}: HTTP {status}: {}", String::from_utf8_lossy(&out));
        last_timings =
            serde_json::from_slice::<serde_json::Value>(&out).map(|v| v["timings"].clone()).unwrap_or_default();
        if i > 0 {
            // The first run warms caches (page cache, ffmpeg binary, SQLite) and is not counted.
            times.push(took);
        }
    }
    times.sort();
    println!(
        "{name:<34} runs {runs:>3}  p50 {:>8.1} ms  p95 {:>8.1} ms  max {:>8.1} ms  VmHWM {:>6.1} MB",
        pct(&times, 0.5).as_secs_f64() * 1000.0,
        pct(&times, 0.95).as_secs_f64() * 1000.0,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
        status_kb("VmHWM:") as f64 / 1024.0,
    );
    println!("{:<34} last run's own step timings (ms): {last_timings}", "");
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let image_runs = arg("--image-runs", 40);
    let clip_runs = arg("--clip-runs", 5);
    let dir = tempfile::tempdir()?;
    let data_dir = dir.path().join("data");
    let config = Config::from_env(&Env::from_pairs([
        ("REELFIND_DATA_DIR", data_dir.display().to_string()),
        ("REELFIND_PUBLIC_URL", "http://localhost:3000".into()),
        ("REELFIND_IDENTIFY_PER_MINUTE", "100000".into()),
        ("DATABASE_URL", format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display())),
    ]))?;
    let db = reelfind::db::connect(config.database_url.expose()).await?;
    reelfind::db::migrate(&db).await?;
    reelfind::services::users::create(
        &db,
        reelfind::services::users::NewUser {
            username: "bench",
            email: "bench@example.com",
            password: None,
            role: Role::User,
            email_verified: true,
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let state = AppState::new(db, config)?;
    state.engines.register(Arc::new(InstantEngine));
    let app = reelfind::app::build_router(state.clone());

    // The still runs before the clips are made, so its VmHWM is the still's own (the two
    // clips held in memory for the upload add about 110 MB).
    state.settings.set(&state.db, "max_file_size", "100").await?;
    let jpeg = jpeg_1080p();
    println!(
        "JPEG {:.1} KB; baseline VmHWM {:.1} MB\n",
        jpeg.len() as f64 / 1024.0,
        status_kb("VmHWM:") as f64 / 1024.0
    );
    if image_runs > 0 {
        let upload = Upload { bytes: &jpeg, filename: "still.jpg", mime: "image/jpeg", audio: false };
        scenario(&app, &state, "image 1920x1080 JPEG", upload, image_runs).await;
    }
    if clip_runs > 0 {
        println!("\npreparing two 30 s 1080p clips...");
        let silent = clip_1080p(dir.path(), false);
        let with_audio = clip_1080p(dir.path(), true);
        println!(
            "clip {:.1} MB, clip with audio {:.1} MB\n",
            silent.len() as f64 / 1048576.0,
            with_audio.len() as f64 / 1048576.0
        );
        let upload = Upload { bytes: &silent, filename: "clip.mp4", mime: "video/mp4", audio: false };
        scenario(&app, &state, "clip 30 s 1080p, no audio", upload, clip_runs).await;
        let upload = Upload { bytes: &with_audio, filename: "clip.mp4", mime: "video/mp4", audio: true };
        scenario(&app, &state, "clip 30 s 1080p + audio analysis", upload, clip_runs).await;
    }
    let left = std::fs::read_dir(data_dir.join("tmp")).map(|d| d.count()).unwrap_or(0);
    println!("\ntemporary files left behind: {left}");
    Ok(())
}
