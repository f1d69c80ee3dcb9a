//! Decoding with ffmpeg: probe a file, stream small grayscale frames at a fixed rate, cut a
//! preview picture, and read the soundtrack as mono samples.
use std::io::Read;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;

use anyhow::{Context, bail};

/// Videos are decoded for indexing at this rate (about every frame of film and TV): in a fast
/// pan even a quarter or an eighth of a second is a different picture. Which decoded frames
/// are kept is decided by how much the picture changed, not by the clock (see
/// `fingerprint_video`).
pub const INDEX_FPS: u32 = 24;
/// Query clips are decoded at this rate; their frames vote together, so fewer suffice.
pub const CLIP_FPS: u32 = 8;
/// Decoded frames are squeezed to this square; borders are found and hashes cut from it.
pub const FRAME_SIDE: usize = 128;

/// What ffprobe says about a file.
#[derive(Clone, Debug)]
pub struct Probe {
    pub duration: f64,
    pub width: u32,
    pub height: u32,
    pub has_audio: bool,
}

pub fn probe(path: &Path) -> anyhow::Result<Probe> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-print_format", "json", "-show_format", "-show_streams"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .context("cannot run ffprobe (is ffmpeg installed?)")?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        bail!("not a readable video: {}", first_line(&msg));
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).context("ffprobe printed no JSON")?;
    let streams = json["streams"].as_array().cloned().unwrap_or_default();
    let video = streams
        .iter()
        .find(|s| s["codec_type"] == "video" && s["disposition"]["attached_pic"] != 1)
        .context("the file has no video stream")?;
    let num = |v: &serde_json::Value| v.as_str().and_then(|s| s.parse::<f64>().ok()).or_else(|| v.as_f64());
    let duration = num(&json["format"]["duration"]).or_else(|| num(&video["duration"])).unwrap_or(0.0);
    if duration.is_nan() || duration <= 0.0 {
        bail!("the video has no duration");
    }
    Ok(Probe {
        duration,
        width: video["width"].as_u64().unwrap_or(0) as u32,
        height: video["height"].as_u64().unwrap_or(0) as u32,
        has_audio: streams.iter().any(|s| s["codec_type"] == "audio"),
    })
}

pub(super) fn first_line(s: &str) -> String {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error").chars().take(200).collect()
}

/// Streams frames sampled at `fps` (`FRAME_SIDE`² gray bytes) with their time in seconds to
/// `each`. Returns how many frames were decoded and ffmpeg's complaints, if it reported any.
pub fn decode_frames(path: &Path, fps: u32, mut each: impl FnMut(f64, &[u8])) -> anyhow::Result<(u32, String)> {
    let filter = format!("fps={fps},scale={FRAME_SIDE}:{FRAME_SIDE}:flags=area,format=gray");
    let mut pipe = FfmpegPipe::spawn(
        Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-threads", "0", "-i"])
            .arg(path)
            .args(["-an", "-sn", "-dn", "-vf", &filter, "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1"]),
    )?;
    let mut buf = vec![0u8; FRAME_SIDE * FRAME_SIDE];
    let mut n = 0u32;
    loop {
        match pipe.stdout.read_exact(&mut buf) {
            Ok(()) => {
                each(n as f64 / fps as f64, &buf);
                n += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e.into()),
        }
    }
    let complaints = pipe.finish("ffmpeg could not decode the video")?;
    Ok((n, complaints))
}

/// ffmpeg streaming raw pixels or samples to a pipe we read, its complaints collected on a
/// thread of their own so that a full stderr pipe never stalls it.
pub(super) struct FfmpegPipe {
    child: Child,
    pub stdout: ChildStdout,
    stderr: JoinHandle<String>,
}

impl FfmpegPipe {
    /// Starts `cmd` (an `ffmpeg` command writing to `pipe:1`) with piped output.
    pub fn spawn(cmd: &mut Command) -> anyhow::Result<Self> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run ffmpeg (is it installed?)")?;
        let mut err = child.stderr.take().context("no stderr")?;
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let stdout = child.stdout.take().context("no stdout")?;
        Ok(Self { child, stdout, stderr })
    }

    /// Waits for ffmpeg to exit. A failure is `what` with ffmpeg's first complaint; on
    /// success the complaints (warnings about a damaged stream, say) are returned.
    pub fn finish(mut self, what: &str) -> anyhow::Result<String> {
        let status = self.child.wait()?;
        let complaints = self.stderr.join().unwrap_or_default();
        if !status.success() {
            bail!("{what}: {}", first_line(&complaints));
        }
        Ok(complaints)
    }
}

/// One JPEG picture of the source at `at` seconds, `width` pixels wide.
pub fn cut_preview(path: &Path, at: f64, width: u32) -> anyhow::Result<Vec<u8>> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-ss", &format!("{at:.3}"), "-i"])
        .arg(path)
        .args(["-frames:v", "1", "-an", "-vf", &format!("scale={width}:-2"), "-f", "image2pipe", "-c:v", "mjpeg"])
        .args(["-q:v", "5", "pipe:1"])
        .stdin(Stdio::null())
        .output()
        .context("cannot run ffmpeg")?;
    if !out.status.success() || out.stdout.is_empty() {
        bail!("could not cut a preview: {}", first_line(&String::from_utf8_lossy(&out.stderr)));
    }
    Ok(out.stdout)
}

/// The soundtrack as mono 16-bit samples at `rate` Hz (empty when there is no audio).
pub fn decode_audio(path: &Path, rate: u32) -> anyhow::Result<Vec<i16>> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(path)
        .args(["-vn", "-sn", "-ac", "1", "-ar", &rate.to_string(), "-f", "s16le", "pipe:1"])
        .stdin(Stdio::null())
        .output()
        .context("cannot run ffmpeg")?;
    if !out.status.success() {
        bail!("could not decode the soundtrack: {}", first_line(&String::from_utf8_lossy(&out.stderr)));
    }
    Ok(out.stdout.chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect())
}
