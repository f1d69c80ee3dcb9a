//! Media preparation: turning the upload into a [`Sample`] every engine can use.
//!
//! Nothing a file says about itself is trusted: its type is sniffed from the bytes, its
//! dimensions are checked before any pixel is decoded, its length is measured from its
//! packets, and every decode is bounded by what was measured.
//!
//! - Image: the file must be complete ([`check_complete`]: a JPEG reaches its end-of-image
//!   marker, a PNG its `IEND`, a WebP fills its RIFF size, a GIF ends with its trailer), so a
//!   truncated picture is refused instead of decoding as a half-grey one. Dimensions are
//!   read from the header first and a picture over [`MAX_PIXELS`] (or [`MAX_SIDE`] on a
//!   side) is refused before decoding (decompression bombs); decoding runs under
//!   `image::Limits` as a second fence. The EXIF orientation is applied, then the picture is
//!   scaled in its own pixel format (no full-size copy) and re-encoded as JPEG with its long
//!   side at most [`PROVIDER_MAX_SIDE`].
//! - Video: `ffprobe` gives the streams, then a scan of every packet's timestamps gives the
//!   **real** length (a container can declare 1 s over frames ten hours apart): a clip
//!   longer than the configured limit, or larger than [`MAX_VIDEO_SIDE`], is refused. Every
//!   ffmpeg run after that reads at most the measured length (`-t`), with a frame cap, the
//!   demuxer of the sniffed type and only local files (see [`crate::ffmpeg`]). One fast pass
//!   decodes only the key frames and scores scene changes between them; the frames at the
//!   strongest cuts (topped up with evenly spaced ones) are cut at full quality; with audio
//!   analysis the sound track becomes 16 kHz mono WAV, at most the clip's length.
//!
//! Every child runs under [`crate::ffmpeg`]'s OS limits in its own process group, and dies
//! when the request's cancel token fires (deadline, client gone, shutdown).
use std::io::Cursor;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use image::{DynamicImage, ImageDecoder, ImageReader, Limits};
use tokio_util::sync::CancellationToken;

use super::engine::{Frame, MediaKind, Sample};
use super::upload::{Upload, WorkDir};
use crate::ffmpeg::{self, Input, RunError};

/// The long side of every frame sent to an engine.
pub const PROVIDER_MAX_SIDE: u32 = 1568;
/// Largest picture we decode: 80 megapixels (a 10000 × 8000 photo).
pub const MAX_PIXELS: u64 = 80_000_000;
pub const MAX_SIDE: u32 = 20_000;
/// Largest video picture we decode: 4K (4096 on the long side, 4096 × 2304 pixels).
pub const MAX_VIDEO_SIDE: u32 = 4096;
pub const MAX_VIDEO_PIXELS: u64 = 4096 * 2304;
/// Frames taken from a clip.
pub const CLIP_FRAMES: usize = 5;
/// Key frames scored at most by the scene pass (the rest of a longer clip is sampled evenly).
const MAX_SCENE_FRAMES: usize = 600;
/// Packets a clip may hold per second of its allowed length (240 fps video plus sound).
const MAX_PACKETS_PER_SECOND: u64 = 400;
const JPEG_QUALITY: u8 = 85;

#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The file is not what it claims, or is damaged: 422.
    #[error("{0}")]
    Invalid(String),
    /// Acceptable file, but over a limit (duration, pixels): 422 with the reason.
    #[error("{0}")]
    Limit(String),
    /// The request was cancelled (deadline, client gone, shutdown); nobody waits for an answer.
    #[error("cancelled")]
    Cancelled,
    /// ffmpeg missing or another server-side failure: 500.
    #[error("{0}")]
    Internal(String),
}

impl From<RunError> for MediaError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Cancelled => Self::Cancelled,
            other => Self::Internal(other.to_string()),
        }
    }
}

/// What the pipeline asks of media preparation.
pub struct PrepOptions {
    pub use_audio: bool,
    pub enhanced: bool,
    pub max_video_seconds: u64,
    /// The decode-memory budget, MB: how many frame cuts of a clip may run at once.
    pub budget_mb: u32,
    /// Fires when nobody waits for the answer any more; every child and loop stops.
    pub cancel: CancellationToken,
}

/// Prepares the upload. Derived files go into `work` and die with it. `permit` (its share of
/// the decode-memory budget) is held by the work itself: a still's blocking decode keeps it
/// until the decode ends, even when the request that asked for it is gone.
pub async fn prepare<P: Send + 'static>(
    upload: &Upload,
    work: &WorkDir,
    opts: &PrepOptions,
    permit: P,
) -> Result<Sample, MediaError> {
    match upload.kind {
        MediaKind::Image => {
            let path = upload.path.clone();
            let cancel = opts.cancel.clone();
            let frame = tokio::task::spawn_blocking(move || {
                let _held = permit;
                prepare_image_file(&path, &cancel)
            })
            .await
            .map_err(|e| MediaError::Internal(format!("image task failed: {e}")))??;
            Ok(Sample {
                kind: MediaKind::Image,
                frames: vec![frame],
                original: upload.path.clone(),
                mime: upload.mime.clone(),
                ext: upload.ext.clone(),
                duration: None,
                has_audio: false,
                audio: None,
                transcript: None,
                enhanced: opts.enhanced,
                cancel: opts.cancel.clone(),
            })
        }
        // A clip's decoders are child processes, killed (and so their memory freed) the
        // moment this future is dropped: the permit lives exactly as long as they do.
        MediaKind::Video => {
            let _held = permit;
            prepare_video(upload, work, opts).await
        }
    }
}

/// What a clip's decoders may take, from its probed size. A frame cut decodes at full size
/// and holds the decoder's reference frames: H.264 allows 16 of them, and the container's
/// `refs` is not to be trusted (ffprobe said 1 for a 16-reference 4K file that took 333 MB
/// to cut one frame from, above the 62 MB any ffmpeg run takes). So a cut is counted at 24
/// frames of 1.5 bytes a pixel (8-bit 4:2:0) plus 24 MB: 1080p 96 MB, 4K 348 MB. The sound
/// track's child runs beside the cuts (32 MB); the key-frame scene pass runs before them on
/// a 192-px copy (under one cut). Two cuts run at once when they fit the budget, else one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClipPlan {
    /// Frame cuts at once (1 or 2).
    pub cuts_at_once: usize,
    /// MB of the decode-memory budget the clip is counted at (at most the whole budget: a
    /// clip larger than that runs alone).
    pub weight_mb: u32,
}

impl ClipPlan {
    const AUDIO_MB: u64 = 32;
    pub fn new(width: u32, height: u32, budget_mb: u32) -> Self {
        let pixels = u64::from(width) * u64::from(height);
        let cut_mb = (pixels * 36).div_ceil(1 << 20) + 24;
        let two = 2 * cut_mb + Self::AUDIO_MB;
        let (cuts_at_once, mb) = if two <= u64::from(budget_mb) { (2, two) } else { (1, cut_mb + Self::AUDIO_MB) };
        Self { cuts_at_once, weight_mb: mb.min(u64::from(budget_mb)) as u32 }
    }
}

/// How many MB of the decode-memory budget preparing this upload takes: a still its decoded
/// pixels (read from the header, nothing decoded), a clip what its decoders may take at its
/// probed size ([`ClipPlan`]). A still that would not fit the whole budget is
/// refused.
pub async fn weight_mb(
    upload: &Upload,
    budget_mb: u32,
    max_video_seconds: u64,
    cancel: &CancellationToken,
) -> Result<u32, MediaError> {
    if upload.kind == MediaKind::Video {
        let input = Input::upload(&upload.path, &upload.ext);
        if input.format.is_none() {
            return Err(corrupt_video());
        }
        let p = probe(&input, max_video_seconds, cancel).await?;
        return Ok(ClipPlan::new(p.width, p.height, budget_mb).weight_mb);
    }
    let path = upload.path.clone();
    tokio::task::spawn_blocking(move || {
        let decoder = ImageReader::open(&path)
            .map_err(|e| MediaError::Internal(e.to_string()))?
            .with_guessed_format()
            .map_err(|_| corrupt_image())?
            .into_decoder()
            .map_err(|_| corrupt_image())?;
        let (w, h) = decoder.dimensions();
        check_pixels(w, h)?;
        let bytes = decoder.total_bytes();
        let mb = u32::try_from(bytes.div_ceil(1 << 20)).unwrap_or(u32::MAX).saturating_add(8);
        if mb > budget_mb {
            return Err(MediaError::Limit(format!(
                "Image too large: {w}×{h} pixels take {} MB to decode. Please upload a smaller picture.",
                bytes >> 20
            )));
        }
        Ok(mb)
    })
    .await
    .map_err(|e| MediaError::Internal(format!("image task failed: {e}")))?
}

fn corrupt_image() -> MediaError {
    MediaError::Invalid(
        "Invalid file format: the image could not be decoded. The file may be corrupt or truncated.".into(),
    )
}

fn truncated_image(kind: &str) -> MediaError {
    MediaError::Invalid(format!(
        "Invalid file format: the {kind} image is incomplete (the file is truncated or damaged). Please upload the whole file."
    ))
}

/// Decodes, orients, bounds and re-encodes one image file.
pub fn prepare_image_file(path: &Path, cancel: &CancellationToken) -> Result<Frame, MediaError> {
    let bytes = std::fs::read(path).map_err(|e| MediaError::Internal(e.to_string()))?;
    prepare_image_bytes(&bytes, cancel)
}

pub fn prepare_image_bytes(bytes: &[u8], cancel: &CancellationToken) -> Result<Frame, MediaError> {
    let reader = || ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|_| corrupt_image());
    let format = reader()?.format().ok_or_else(corrupt_image)?;
    check_complete(bytes, format)?;
    let (w, h) = reader()?.into_dimensions().map_err(|_| corrupt_image())?;
    check_pixels(w, h)?;
    let mut r = reader()?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_PIXELS * 4 + (64 << 20));
    r.limits(limits);
    let mut decoder = r.into_decoder().map_err(|_| corrupt_image())?;
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    if cancel.is_cancelled() {
        return Err(MediaError::Cancelled);
    }
    let img = DynamicImage::from_decoder(decoder).map_err(|_| corrupt_image())?;
    if cancel.is_cancelled() {
        return Err(MediaError::Cancelled);
    }
    // Scale first (in the decoded pixel format), then orient the small picture.
    let mut small = shrink(img)?;
    small.apply_orientation(orientation);
    encode_frame(small, None)
}

/// Whether an image file is complete: the structure its format promises is all there.
/// Decoders fill a truncated picture with grey; we refuse it instead.
pub fn check_complete(bytes: &[u8], format: image::ImageFormat) -> Result<(), MediaError> {
    use image::ImageFormat as F;
    let (ok, name) = match format {
        F::Jpeg => (jpeg_complete(bytes), "JPEG"),
        F::Png => (png_complete(bytes), "PNG"),
        F::WebP => (webp_complete(bytes), "WebP"),
        F::Gif => (gif_complete(bytes), "GIF"),
        _ => (true, ""),
    };
    if ok { Ok(()) } else { Err(truncated_image(name)) }
}

/// Walks a JPEG's segments and entropy-coded scans up to the end-of-image marker.
fn jpeg_complete(b: &[u8]) -> bool {
    if b.len() < 4 || b[0] != 0xFF || b[1] != 0xD8 {
        return false;
    }
    let mut i = 2;
    loop {
        // Segments start with 0xFF (any number of fill bytes), then the marker.
        if i >= b.len() || b[i] != 0xFF {
            return false;
        }
        while i < b.len() && b[i] == 0xFF {
            i += 1;
        }
        let Some(&marker) = b.get(i) else { return false };
        i += 1;
        match marker {
            0xD9 => return true,
            0x01 | 0xD0..=0xD7 => continue,
            _ => {
                let Some(len) = b.get(i..i + 2).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else {
                    return false;
                };
                if len < 2 || i + len > b.len() {
                    return false;
                }
                i += len;
                if marker == 0xDA {
                    // Entropy-coded data: 0xFF is followed by 0x00 (a stuffed byte), a
                    // restart marker or fill; anything else starts the next segment.
                    loop {
                        let (Some(&x), Some(&next)) = (b.get(i), b.get(i + 1)) else { return false };
                        if x != 0xFF {
                            i += 1;
                        } else if next == 0x00 || (0xD0..=0xD7).contains(&next) {
                            i += 2;
                        } else if next == 0xFF {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// Walks a PNG's chunks up to `IEND`.
fn png_complete(b: &[u8]) -> bool {
    let mut i = 8;
    while let Some(head) = b.get(i..i + 8) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let end = i.saturating_add(12).saturating_add(len);
        if end > b.len() {
            return false;
        }
        if &head[4..8] == b"IEND" {
            return true;
        }
        i = end;
    }
    false
}

/// A WebP is a RIFF file: its header says how long it is.
fn webp_complete(b: &[u8]) -> bool {
    b.len() >= 12
        && &b[..4] == b"RIFF"
        && &b[8..12] == b"WEBP"
        && (u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize).saturating_add(8) <= b.len()
}

/// A GIF ends with its trailer byte `;` (0x3B); some writers pad after it with zeros.
fn gif_complete(b: &[u8]) -> bool {
    let end = b.iter().rposition(|&x| x != 0).unwrap_or(0);
    b.len() > 13 && b[end] == 0x3B
}

fn check_pixels(w: u32, h: u32) -> Result<(), MediaError> {
    if w == 0 || h == 0 {
        return Err(corrupt_image());
    }
    if w > MAX_SIDE || h > MAX_SIDE || u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(MediaError::Limit(format!(
            "Image too large: {w}×{h} pixels. Please upload a picture of at most {} megapixels.",
            MAX_PIXELS / 1_000_000
        )));
    }
    Ok(())
}

/// Scales to the provider bound (never up) in the picture's own pixel format, so a large
/// picture is never copied at full size (an 80-megapixel RGBA PNG is 320 MB already).
fn shrink(img: DynamicImage) -> Result<DynamicImage, MediaError> {
    let (w, h) = (img.width(), img.height());
    let long = w.max(h);
    if long <= PROVIDER_MAX_SIDE {
        return Ok(img);
    }
    let scale = f64::from(PROVIDER_MAX_SIDE) / f64::from(long);
    let nw = ((f64::from(w) * scale).round() as u32).max(1);
    let nh = ((f64::from(h) * scale).round() as u32).max(1);
    let mut dst = DynamicImage::new(nw, nh, img.color());
    let opts = fast_image_resize::ResizeOptions::new()
        .resize_alg(fast_image_resize::ResizeAlg::Convolution(fast_image_resize::FilterType::Bilinear));
    match fast_image_resize::Resizer::new().resize(&img, &mut dst, &opts) {
        Ok(()) => Ok(dst),
        // A pixel format the resizer does not take (none of `image`'s today): go through RGB.
        Err(_) => {
            let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
            drop(img);
            let mut dst = DynamicImage::new_rgb8(nw, nh);
            fast_image_resize::Resizer::new()
                .resize(&rgb, &mut dst, &opts)
                .map_err(|e| MediaError::Internal(format!("resize failed: {e}")))?;
            Ok(dst)
        }
    }
}

/// Scales to the provider bound (never up) and encodes as JPEG.
///
/// The encoder is `jpeg-encoder` (AVX2 colour conversion and DCT when the CPU has them):
/// on a 1568 × 882 frame it does a third of the work of `image`'s own JPEG encoder, which
/// was most of the cost of preparing a still.
pub fn encode_frame(img: DynamicImage, at: Option<f64>) -> Result<Frame, MediaError> {
    let rgb = match shrink(img)? {
        DynamicImage::ImageRgb8(rgb) => DynamicImage::ImageRgb8(rgb),
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    };
    let (w, h) = (rgb.width(), rgb.height());
    // A side of more than 65535 px cannot be a JPEG; only a picture already within the
    // provider bound reaches here unscaled, so this is a safeguard, not a path.
    let (w16, h16) = match (u16::try_from(w), u16::try_from(h)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Err(MediaError::Limit(format!("Image too large: {w}×{h} pixels."))),
    };
    let mut out = Vec::with_capacity(256 * 1024);
    jpeg_encoder::Encoder::new(&mut out, JPEG_QUALITY)
        .encode(rgb.as_bytes(), w16, h16, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| MediaError::Internal(format!("JPEG encoding failed: {e}")))?;
    Ok(Frame { jpeg: Bytes::from(out), width: w, height: h, at })
}

/// What a clip really is: its streams from `ffprobe`, its length from its packets.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The length the container declares (a claim; shown in messages only).
    pub declared: f64,
    /// Seconds from the first to the end of the last picture packet: what a decoder will
    /// really produce.
    pub duration: f64,
    /// Seconds the sound packets span.
    pub audio_duration: f64,
    pub has_video: bool,
    pub has_audio: bool,
    pub width: u32,
    pub height: u32,
}

fn corrupt_video() -> MediaError {
    MediaError::Invalid(
        "Invalid file format: the video could not be read. The file may be corrupt or truncated.".into(),
    )
}

fn ffprobe(input: &Input<'_>) -> std::process::Command {
    let mut cmd = ffmpeg::command("ffprobe", ffmpeg::Limits::UPLOAD);
    cmd.args(["-v", "error", "-hide_banner"]).args(input.args());
    cmd
}

/// Streams, declared length and the real length (from a scan of every packet's timestamps,
/// which reads the file without decoding it). Refuses clips over the limits.
pub async fn probe(input: &Input<'_>, max_seconds: u64, cancel: &CancellationToken) -> Result<Probe, MediaError> {
    let mut cmd = ffprobe(input);
    cmd.args(["-print_format", "json", "-show_format", "-show_streams"]);
    let out = ffmpeg::run(cmd, "ffprobe", 1 << 20, cancel).await?;
    if !out.success {
        return Err(corrupt_video());
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| corrupt_video())?;
    let streams = v["streams"].as_array().cloned().unwrap_or_default();
    let video = streams.iter().find(|s| s["codec_type"] == "video" && s["disposition"]["attached_pic"] != 1);
    let has_audio = streams.iter().any(|s| s["codec_type"] == "audio");
    let num = |x: &serde_json::Value| x.as_str().and_then(|s| s.parse::<f64>().ok()).or_else(|| x.as_f64());
    let declared = num(&v["format"]["duration"])
        .or_else(|| video.and_then(|s| num(&s["duration"])))
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0);
    let Some(video) = video else { return Err(corrupt_video()) };
    let (width, height) = (video["width"].as_u64().unwrap_or(0) as u32, video["height"].as_u64().unwrap_or(0) as u32);
    if width == 0 || height == 0 {
        return Err(corrupt_video());
    }
    if width.max(height) > MAX_VIDEO_SIDE || u64::from(width) * u64::from(height) > MAX_VIDEO_PIXELS {
        return Err(MediaError::Limit(format!(
            "Video resolution too large: {width}×{height} pixels. Please upload a clip of at most {MAX_VIDEO_SIDE} \
             pixels on its long side (4K)."
        )));
    }
    let video_index = video["index"].as_u64().unwrap_or(0);
    let audio_index = streams.iter().find(|s| s["codec_type"] == "audio").and_then(|s| s["index"].as_u64());
    let (duration, audio_duration) = packet_span(input, video_index, audio_index, max_seconds, cancel).await?;
    if duration <= 0.0 {
        return Err(corrupt_video());
    }
    let minutes = (max_seconds as f64 / 60.0).ceil();
    let longest = duration.max(audio_duration);
    if longest > max_seconds as f64 {
        let what = if audio_duration > duration { "its sound runs" } else { "its pictures run" };
        let claim = if (longest - declared).abs() > 1.0 && declared > 0.0 {
            format!(" (the file claims {declared:.0} s)")
        } else {
            String::new()
        };
        return Err(MediaError::Limit(format!(
            "Video too long: {what} {longest:.0} seconds{claim}. Please upload a clip of at most {minutes} minutes."
        )));
    }
    Ok(Probe { declared, duration, audio_duration, has_video: true, has_audio, width, height })
}

/// Seconds spanned by the packets of the video stream and of the first audio stream.
async fn packet_span(
    input: &Input<'_>,
    video: u64,
    audio: Option<u64>,
    max_seconds: u64,
    cancel: &CancellationToken,
) -> Result<(f64, f64), MediaError> {
    let max_packets = (max_seconds.max(1) * MAX_PACKETS_PER_SECOND) as usize;
    let mut cmd = ffprobe(input);
    cmd.args(["-show_entries", "packet=stream_index,pts_time,duration_time", "-of", "csv=p=0"]);
    // About 32 bytes a line.
    let out = match ffmpeg::run(cmd, "ffprobe", max_packets * 40, cancel).await {
        Err(RunError::TooMuchOutput(..)) => {
            return Err(MediaError::Limit(format!(
                "Video has too many frames for a clip of at most {} minutes. Please upload a shorter clip.",
                (max_seconds as f64 / 60.0).ceil()
            )));
        }
        other => other?,
    };
    if !out.success {
        return Err(corrupt_video());
    }
    Ok(parse_packet_span(&String::from_utf8_lossy(&out.stdout), video, audio))
}

/// Parses `stream_index,pts_time,duration_time` lines into (video span, audio span).
pub fn parse_packet_span(text: &str, video: u64, audio: Option<u64>) -> (f64, f64) {
    let mut spans = [(f64::INFINITY, f64::NEG_INFINITY); 2];
    for line in text.lines() {
        let mut f = line.split(',');
        let (Some(Ok(index)), Some(Ok(pts))) =
            (f.next().map(|s| s.trim().parse::<u64>()), f.next().map(|s| s.trim().parse::<f64>()))
        else {
            continue;
        };
        if !pts.is_finite() {
            continue;
        }
        let dur = f.next().and_then(|s| s.trim().parse::<f64>().ok()).filter(|d| d.is_finite() && *d >= 0.0);
        let slot = if index == video {
            0
        } else if Some(index) == audio {
            1
        } else {
            continue;
        };
        spans[slot].0 = spans[slot].0.min(pts);
        spans[slot].1 = spans[slot].1.max(pts + dur.unwrap_or(0.0));
    }
    let len = |(a, b): (f64, f64)| {
        if b > a {
            b - a
        } else if b == a {
            0.04
        } else {
            0.0
        }
    };
    (len(spans[0]), len(spans[1]))
}

/// Seconds every decoding run may read: the measured length and a little slack.
fn read_limit(p: &Probe) -> String {
    format!("{:.3}", p.duration.max(p.audio_duration) + 1.0)
}

fn ffmpeg_cmd() -> std::process::Command {
    let mut cmd = ffmpeg::command("ffmpeg", ffmpeg::Limits::UPLOAD);
    cmd.args(["-hide_banner", "-nostdin", "-v", "error"]);
    cmd
}

async fn prepare_video(upload: &Upload, work: &WorkDir, opts: &PrepOptions) -> Result<Sample, MediaError> {
    let input = Input::upload(&upload.path, &upload.ext);
    if input.format.is_none() {
        return Err(corrupt_video());
    }
    let cancel = &opts.cancel;
    let p = probe(&input, opts.max_video_seconds, cancel).await?;
    let want_audio = opts.use_audio && p.has_audio;
    let audio_path = work.file("audio.wav");
    let plan = ClipPlan::new(p.width, p.height, opts.budget_mb);
    let (frames, audio) = tokio::join!(extract_frames(&input, work, &p, plan.cuts_at_once, cancel), async {
        if want_audio { extract_audio(&input, &p, &audio_path, cancel).await.map(Some) } else { Ok(None) }
    });
    let frames = frames?;
    let audio = match audio {
        Ok(a) => a,
        Err(MediaError::Cancelled) => return Err(MediaError::Cancelled),
        Err(e) => {
            // A damaged sound track must not sink the pictures.
            tracing::warn!(error = %e, "sound track extraction failed; continuing without audio");
            None
        }
    };
    Ok(Sample {
        kind: MediaKind::Video,
        frames,
        original: upload.path.clone(),
        mime: upload.mime.clone(),
        ext: upload.ext.clone(),
        duration: Some(p.duration),
        has_audio: p.has_audio,
        audio,
        transcript: None,
        enhanced: opts.enhanced,
        cancel: opts.cancel.clone(),
    })
}

/// Scene-change scores of a clip's key frames: (seconds, score 0..1) per key frame.
///
/// Only key frames are decoded (and scored on a 192-px copy), which makes this pass cost a
/// few dozen decodes instead of every frame: encoders put key frames at cuts (x264's
/// scenecut) or every second or two (phones), so the key frames are where scenes change
/// or a regular sample of the clip. A frame cut at a key frame also costs one decode.
async fn scene_scores(input: &Input<'_>, p: &Probe, cancel: &CancellationToken) -> Result<Vec<(f64, f64)>, MediaError> {
    let mut cmd = ffmpeg_cmd();
    cmd.args(["-threads", "2", "-skip_frame", "nokey", "-t", &read_limit(p)]).args(input.args()).args([
        "-an",
        "-sn",
        "-dn",
        "-vf",
        "scale=192:-2:flags=fast_bilinear,select='gte(scene\\,0)',metadata=print:key=lavfi.scene_score:file=-",
        "-frames:v",
        &MAX_SCENE_FRAMES.to_string(),
        "-f",
        "null",
        "-",
    ]);
    // About 100 bytes of text a key frame.
    let out = ffmpeg::run(cmd, "ffmpeg", MAX_SCENE_FRAMES * 200 + 4096, cancel).await?;
    if !out.success {
        return Err(corrupt_video());
    }
    Ok(parse_scene_scores(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `metadata=print` output: `frame:N pts:P pts_time:T` lines followed by
/// `lavfi.scene_score=S`.
pub fn parse_scene_scores(text: &str) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut t = None;
    for line in text.lines() {
        if let Some(pos) = line.find("pts_time:") {
            t = line[pos + 9..].split_whitespace().next().and_then(|s| s.parse::<f64>().ok());
        } else if let Some(v) = line.trim().strip_prefix("lavfi.scene_score=")
            && let (Some(time), Ok(score)) = (t.take(), v.parse::<f64>())
        {
            out.push((time, score));
        }
    }
    out
}

/// Picks `n` moments from the key frames' scene scores: first the strongest cuts (score ≥
/// 0.3), kept apart; then evenly spaced moments, each moved to a nearby unused key frame
/// when there is one (cheap to cut). Returned in time order.
pub fn pick_moments(scores: &[(f64, f64)], duration: f64, n: usize) -> Vec<f64> {
    let min_gap = (duration / (n as f64 * 2.0)).max(0.5);
    let last = (duration - 0.1).max(0.0);
    let mut cuts: Vec<(f64, f64)> = scores.iter().copied().filter(|(_, s)| *s >= 0.3).collect();
    cuts.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut picked: Vec<f64> = Vec::new();
    for (t, _) in cuts {
        let at = t.min(last);
        if picked.len() < n && picked.iter().all(|p| (p - at).abs() >= min_gap) {
            picked.push(at);
        }
    }
    // Evenly spaced moments (centres of n equal parts), skipping ones too close to a pick.
    let mut k = 0;
    while picked.len() < n && k < n * 4 {
        let parts = n + k / n;
        let even = duration * ((k % parts) as f64 + 0.5) / parts as f64;
        let snapped = scores
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| (t - even).abs() <= min_gap && picked.iter().all(|p| (p - t).abs() >= min_gap / 2.0))
            .min_by(|a, b| (a - even).abs().total_cmp(&(b - even).abs()));
        let at = snapped.unwrap_or(even).min(last);
        if picked.iter().all(|p| (p - at).abs() >= min_gap / 2.0) {
            picked.push(at);
        }
        k += 1;
    }
    picked.sort_by(f64::total_cmp);
    picked
}

async fn extract_frames(
    input: &Input<'_>,
    work: &WorkDir,
    p: &Probe,
    cuts_at_once: usize,
    cancel: &CancellationToken,
) -> Result<Vec<Frame>, MediaError> {
    let scores = scene_scores(input, p, cancel).await?;
    let n = if p.duration < 2.0 { 2 } else { CLIP_FRAMES };
    let moments = pick_moments(&scores, p.duration, n);
    // A cut or two at a time ([`ClipPlan`]): each is one ffmpeg decoding a full-size frame.
    let step = cuts_at_once.clamp(1, 2);
    let mut results: Vec<Result<Option<Vec<u8>>, MediaError>> = Vec::with_capacity(moments.len());
    for (group_index, group) in moments.chunks(step).enumerate() {
        let cuts = group.iter().enumerate().map(|(j, at)| {
            extract_frame(input, *at, work.file(&format!("frame{}.jpg", group_index * step + j)), cancel)
        });
        results.extend(futures::future::join_all(cuts).await);
    }
    let mut frames = Vec::new();
    for (at, r) in moments.iter().zip(results) {
        if let Some(bytes) = r? {
            let (w, h) = image::ImageReader::new(Cursor::new(&bytes))
                .with_guessed_format()
                .ok()
                .and_then(|r| r.into_dimensions().ok())
                .unwrap_or((0, 0));
            if w > 0 {
                frames.push(Frame { jpeg: Bytes::from(bytes), width: w, height: h, at: Some(*at) });
            }
        }
    }
    if frames.is_empty() {
        return Err(corrupt_video());
    }
    Ok(frames)
}

/// One full-quality frame at `at` seconds, scaled to the provider bound.
async fn extract_frame(
    input: &Input<'_>,
    at: f64,
    out: PathBuf,
    cancel: &CancellationToken,
) -> Result<Option<Vec<u8>>, MediaError> {
    let scale =
        format!("scale='min({m},iw)':'min({m},ih)':force_original_aspect_ratio=decrease", m = PROVIDER_MAX_SIDE);
    let mut cmd = ffmpeg_cmd();
    cmd.args(["-threads", "1", "-ss", &format!("{:.3}", at + 0.001), "-t", "5"])
        .args(input.args())
        .args(["-an", "-sn", "-frames:v", "1", "-vf", &scale, "-q:v", "3", "-fs", "8M", "-y"])
        .arg(&out);
    let o = ffmpeg::run(cmd, "ffmpeg", 0, cancel).await?;
    if !o.success {
        return Ok(None);
    }
    match tokio::fs::read(&out).await {
        Ok(b) if !b.is_empty() => Ok(Some(b)),
        _ => Ok(None),
    }
}

/// The sound track as 16 kHz mono 16-bit WAV (what speech-to-text wants), at most the
/// measured length of the clip (32 KB a second, 19 MB for 10 minutes).
async fn extract_audio(
    input: &Input<'_>,
    p: &Probe,
    out: &Path,
    cancel: &CancellationToken,
) -> Result<PathBuf, MediaError> {
    let mut cmd = ffmpeg_cmd();
    let seconds = p.duration.max(p.audio_duration) + 1.0;
    cmd.args(["-t", &read_limit(p)])
        .args(input.args())
        .args(["-vn", "-sn", "-dn", "-map", "0:a:0", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le"])
        .args(["-fs", &((seconds * 32_000.0) as u64 + 4096).to_string(), "-y"])
        .arg(out);
    let o = ffmpeg::run(cmd, "ffmpeg", 0, cancel).await?;
    if !o.success {
        return Err(MediaError::Internal(format!("audio extraction failed: {}", o.first_complaint())));
    }
    Ok(out.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clip_is_counted_at_what_its_cuts_may_hold() {
        // 1080p: two cuts at once fit the default budget, counted at 2 × 96 + 32 MB.
        assert_eq!(ClipPlan::new(1920, 1080, 320), ClipPlan { cuts_at_once: 2, weight_mb: 224 });
        // 4K: one cut at a time, and the clip takes the whole budget (it runs alone).
        assert_eq!(ClipPlan::new(4096, 2304, 320), ClipPlan { cuts_at_once: 1, weight_mb: 320 });
        // With room for it, 4K is counted at one cut and the sound.
        assert_eq!(ClipPlan::new(4096, 2304, 1024).weight_mb, 2 * 348 + 32);
        // A small clip weighs little.
        assert!(ClipPlan::new(640, 360, 320).weight_mb < 100);
    }

    #[test]
    fn packet_timestamps_give_the_real_length() {
        // Two pictures ten hours apart, whatever the container declares.
        let text =
            "0,0.000000,0.040000\n1,0.000000,0.021333\n0,36000.000000,0.040000\n1,N/A,N/A\n1,0.021333,0.021333\n";
        let (v, a) = parse_packet_span(text, 0, Some(1));
        assert!((v - 36000.04).abs() < 1e-6, "{v}");
        assert!((a - 0.042666).abs() < 1e-6, "{a}");
        assert_eq!(parse_packet_span("", 0, None), (0.0, 0.0));
    }

    #[test]
    fn scene_output_parses() {
        let text = "frame:0    pts:0       pts_time:0\nlavfi.scene_score=0.000000\nframe:1    pts:512     pts_time:2.5\nlavfi.scene_score=0.812000\n";
        assert_eq!(parse_scene_scores(text), vec![(0.0, 0.0), (2.5, 0.812)]);
    }

    #[test]
    fn moments_prefer_cuts_and_fill_evenly() {
        let scores = vec![(0.0, 0.0), (3.0, 0.9), (3.1, 0.5), (7.0, 0.6), (9.0, 0.1)];
        let m = pick_moments(&scores, 10.0, 5);
        assert_eq!(m.len(), 5);
        assert!(m.iter().any(|t| (t - 3.0).abs() < 0.01), "{m:?}");
        assert!(m.iter().any(|t| (t - 7.0).abs() < 0.01), "{m:?}");
        // Evenly spaced moments move to nearby key frames (0.0 and 9.0 here).
        assert!(m.contains(&0.0) && m.contains(&9.0), "{m:?}");
        assert!(m.windows(2).all(|w| w[0] < w[1]));
        assert!(m.iter().all(|t| *t >= 0.0 && *t < 10.0));
        // No cuts at all: evenly spaced.
        let m = pick_moments(&[], 10.0, 5);
        assert_eq!(m, vec![1.0, 3.0, 5.0, 7.0, 9.0]);
    }

    #[test]
    fn bomb_is_refused_before_decoding() {
        assert!(matches!(check_pixels(30_000, 30_000), Err(MediaError::Limit(_))));
        assert!(check_pixels(1920, 1080).is_ok());
    }

    fn gradient(w: u32, h: u32) -> DynamicImage {
        DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x * 255 / w) as u8, (y * 255 / h) as u8, ((x + y) % 256) as u8])
        }))
    }

    #[test]
    fn frames_are_scaled_to_the_provider_bound_and_decode_back() {
        let f = encode_frame(gradient(1920, 1080), Some(2.0)).unwrap();
        assert_eq!((f.width, f.height, f.at), (1568, 882, Some(2.0)));
        let back = image::load_from_memory_with_format(&f.jpeg, image::ImageFormat::Jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (1568, 882));
        // Colours survive: red grows from the left edge to the right.
        let rgb = back.to_rgb8();
        assert!(rgb.get_pixel(4, 4).0[0] < 24 && rgb.get_pixel(1563, 877).0[0] > 230, "{:?}", rgb.get_pixel(4, 4));

        // Portrait, grey and small pictures: long side bounded, never scaled up.
        let f = encode_frame(DynamicImage::ImageLuma8(gradient(1000, 3000).to_luma8()), None).unwrap();
        assert_eq!((f.width, f.height), (523, 1568));
        let f = encode_frame(gradient(640, 360), None).unwrap();
        assert_eq!((f.width, f.height), (640, 360));
        assert_eq!(image::load_from_memory(&f.jpeg).unwrap().width(), 640);
    }
}
