//! Decoding with ffmpeg: probe a file, stream small grayscale frames at a fixed rate, cut a
//! preview picture, and read the soundtrack as mono samples.
use std::io::Read;
use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;

/// Videos are decoded for indexing at this rate (about every frame of film and TV): in a fast
/// pan even a quarter or an eighth of a second is a different picture. Which decoded frames
/// are kept is decided by how much the picture changed, not by the clock (see
/// `fingerprint_video`).
pub const INDEX_FPS: u32 = 24;
/// Query clips are decoded at this rate; their frames vote together, so fewer suffice.
pub const CLIP_FPS: u32 = 8;
/// Decoded frames are squeezed to this square; borders are found and hashes cut from it.
pub const FRAME_SIDE: usize = 128;

/// A decoded frame (or a query squeezed like one): `FRAME_SIDE`² gray pixels.
pub fn frame_view(pixels: &[u8]) -> crate::library::picture::hash::GrayView<'_> {
    crate::library::picture::hash::GrayView { width: FRAME_SIDE, height: FRAME_SIDE, pixels }
}

/// What ffprobe says about a file.
#[derive(Clone, Debug)]
pub struct Probe {
    pub duration: f64,
    /// Width and height as shown (a rotation the file asks for applied).
    pub width: u32,
    pub height: u32,
    pub has_audio: bool,
}

pub fn probe(path: &Path) -> anyhow::Result<Probe> {
    probe_as(path, None)
}

/// [`probe`] with the demuxer forced (an upload's sniffed type) or, with `None`, allow-listed.
pub fn probe_as(path: &Path, format: Option<&'static str>) -> anyhow::Result<Probe> {
    let out = crate::ffmpeg::command("ffprobe", crate::ffmpeg::Limits::PREVIEW)
        .args(["-v", "error", "-print_format", "json", "-show_format", "-show_streams"])
        .args(crate::ffmpeg::Input { path, format }.args())
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
    let (width, height) = (video["width"].as_u64().unwrap_or(0) as u32, video["height"].as_u64().unwrap_or(0) as u32);
    // A phone's video is stored sideways with a rotation to show it by (a display matrix, or
    // an older `rotate` tag); ffmpeg turns the decoded frames, so the shown sides count.
    let rotation = video["side_data_list"]
        .as_array()
        .and_then(|l| l.iter().find_map(|d| d["rotation"].as_f64()))
        .or_else(|| num(&video["tags"]["rotate"]))
        .unwrap_or(0.0);
    let sideways = (rotation.abs().round() as i64) % 180 == 90;
    let (width, height) = if sideways { (height, width) } else { (width, height) };
    Ok(Probe { duration, width, height, has_audio: streams.iter().any(|s| s["codec_type"] == "audio") })
}

pub(super) fn first_line(s: &str) -> String {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error").chars().take(200).collect()
}

/// What one decode may spend (see `crate::ffmpeg`): how much of the input it reads, what
/// demuxer reads it, and a token that stops it.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    /// Seconds of input to read at most (`-t`); the frame and sample loops stop there too.
    /// `None`: the length the file declares, plus a second (a query clip is never longer
    /// than [`MAX_QUERY_SECONDS`]).
    pub max_seconds: Option<f64>,
    /// The demuxer of an upload's sniffed type; `None` for the operator's files (an
    /// allow-list of demuxers then applies).
    pub format: Option<&'static str>,
    /// Stops the child and the loop at once.
    pub cancel: Option<CancellationToken>,
}

/// The longest query clip decoded when nothing else bounds it.
pub const MAX_QUERY_SECONDS: f64 = 600.0;

impl Budget {
    /// An upload: the measured length, the sniffed type, the request's token.
    pub fn upload(max_seconds: f64, ext: &str, cancel: CancellationToken) -> Self {
        Self { max_seconds: Some(max_seconds), format: crate::ffmpeg::demuxer_for(ext), cancel: Some(cancel) }
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancellationToken::is_cancelled)
    }

    /// Input options: where to start (seconds; exact, ffmpeg decodes from the key frame
    /// before it), the read limit, local files only, the demuxer, `-i file:PATH`.
    fn input_args(&self, path: &Path, start: f64, seconds: f64) -> Vec<std::ffi::OsString> {
        let mut a: Vec<std::ffi::OsString> = Vec::new();
        if start > 0.0 {
            a.extend(["-ss".into(), format!("{start:.3}").into()]);
        }
        a.extend(["-t".into(), format!("{seconds:.3}").into()]);
        a.extend(crate::ffmpeg::Input { path, format: self.format }.args());
        a
    }

    /// Seconds to read of a file that declares `declared` seconds.
    pub fn seconds(&self, declared: f64) -> f64 {
        self.max_seconds.unwrap_or((declared + 1.0).min(MAX_QUERY_SECONDS)).max(0.5)
    }
}

/// Streams frames sampled at `fps` (`FRAME_SIDE`² gray bytes) with their time in seconds to
/// `each`, for at most `seconds` of input and `seconds × fps` frames (a timestamp gap cannot
/// make the fps filter repeat a frame for hours). Returns how many frames were decoded and
/// ffmpeg's complaints, if it reported any.
pub fn decode_frames(
    path: &Path,
    fps: u32,
    seconds: f64,
    budget: &Budget,
    each: impl FnMut(f64, &[u8]),
) -> anyhow::Result<(u32, String)> {
    decode_frames_from(path, 0.0, fps, seconds, budget, false, each)
}

/// [`decode_frames`] from `start` seconds into the file; the times given to `each` count from
/// `start`. With `draft`, the decoder skips its loop filter (H.264, HEVC, VC-1: about a fifth
/// faster; the blocking it leaves is gone once a frame is squeezed to the frame square): for
/// a quick look, never for indexing.
pub fn decode_frames_from(
    path: &Path,
    start: f64,
    fps: u32,
    seconds: f64,
    budget: &Budget,
    draft: bool,
    each: impl FnMut(f64, &[u8]),
) -> anyhow::Result<(u32, String)> {
    let picture = Picture { width: FRAME_SIDE, height: FRAME_SIDE, rgb: false };
    decode_raw(path, start, fps, seconds, budget, draft, picture, each)
}

/// Streams frames sampled at `fps` as `width` x `height` RGB pixels (3 bytes each, rows top
/// down) with their time in seconds, within the same bounds as [`decode_frames`]: for a
/// fallback that needs the picture larger than the frame square (a phone video's screen, a
/// picture inside a picture).
pub fn decode_pictures(
    path: &Path,
    fps: u32,
    seconds: f64,
    budget: &Budget,
    (width, height): (u32, u32),
    each: impl FnMut(f64, &[u8]),
) -> anyhow::Result<(u32, String)> {
    let picture = Picture { width: width as usize, height: height as usize, rgb: true };
    decode_raw(path, 0.0, fps, seconds, budget, false, picture, each)
}

/// How decoded frames are handed over: squeezed (area average) to `width` x `height`, in
/// gray or RGB.
#[derive(Clone, Copy)]
struct Picture {
    width: usize,
    height: usize,
    rgb: bool,
}

impl Picture {
    fn pix_fmt(self) -> &'static str {
        if self.rgb { "rgb24" } else { "gray" }
    }

    fn bytes(self) -> usize {
        self.width * self.height * if self.rgb { 3 } else { 1 }
    }
}

#[allow(clippy::too_many_arguments)]
fn decode_raw(
    path: &Path,
    start: f64,
    fps: u32,
    seconds: f64,
    budget: &Budget,
    draft: bool,
    picture: Picture,
    mut each: impl FnMut(f64, &[u8]),
) -> anyhow::Result<(u32, String)> {
    let (w, h, pix_fmt) = (picture.width, picture.height, picture.pix_fmt());
    let filter = format!("fps={fps},scale={w}:{h}:flags=area,format={pix_fmt}");
    let max_frames = (seconds * f64::from(fps)).ceil() as u32 + fps;
    let limits = if budget.format.is_some() { crate::ffmpeg::Limits::UPLOAD } else { crate::ffmpeg::Limits::INDEX };
    let mut cmd = crate::ffmpeg::command("ffmpeg", limits);
    cmd.args(["-nostdin", "-v", "error", "-threads", "2"]);
    if draft {
        cmd.args(["-skip_loop_filter", "all"]);
    }
    cmd.args(budget.input_args(path, start, seconds)).args([
        "-an",
        "-sn",
        "-dn",
        "-vf",
        &filter,
        "-frames:v",
        &max_frames.to_string(),
        "-f",
        "rawvideo",
        "-pix_fmt",
        pix_fmt,
        "pipe:1",
    ]);
    let mut pipe = FfmpegPipe::spawn(&mut cmd, budget.cancel.as_ref())?;
    let mut buf = vec![0u8; picture.bytes()];
    let mut n = 0u32;
    loop {
        if budget.cancelled() {
            bail!("stopped: the work was cancelled");
        }
        if n >= max_frames {
            // Dropping the pipe kills ffmpeg.
            return Ok((n, "stopped at the frame budget".into()));
        }
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

/// ffmpeg streaming raw pixels or samples to a pipe we read (see `crate::ffmpeg::Pipe`).
pub(super) use crate::ffmpeg::Pipe as FfmpegPipe;

/// One JPEG picture of the source at `at` seconds, `width` pixels wide.
pub fn cut_preview(path: &Path, at: f64, width: u32) -> anyhow::Result<Vec<u8>> {
    let out = crate::ffmpeg::command("ffmpeg", crate::ffmpeg::Limits::PREVIEW)
        .args(["-nostdin", "-v", "error", "-threads", "1", "-ss", &format!("{at:.3}"), "-t", "10"])
        .args(crate::ffmpeg::Input::library(path).args())
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
    let out = crate::ffmpeg::command("ffmpeg", crate::ffmpeg::Limits::INDEX)
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
