//! Media preparation: turning the upload into a [`Sample`] every engine can use.
//!
//! - Image: dimensions are read from the header first and a picture over
//!   [`MAX_PIXELS`] (or [`MAX_SIDE`] on a side) is refused before any pixel is decoded
//!   (decompression bombs); decoding runs under `image::Limits` as a second fence. The
//!   EXIF orientation is applied, then the picture is re-encoded as JPEG with its long side
//!   at most [`PROVIDER_MAX_SIDE`] (1568 px keeps every provider from downscaling again).
//! - Video: `ffprobe` gives duration and streams (a clip longer than the configured limit
//!   is refused); one fast `ffmpeg` pass decodes only the key frames and scores scene
//!   changes between them; the frames at the strongest cuts (topped up with evenly spaced
//!   ones, moved to nearby key frames) are cut at full quality; with audio analysis the sound track becomes 16 kHz mono WAV.
//!
//! Child processes are `kill_on_drop`, so a request that is abandoned stops its ffmpeg.
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use bytes::Bytes;
use image::{DynamicImage, ImageDecoder, ImageReader, Limits};
use tokio::process::Command;

use super::engine::{Frame, MediaKind, Sample};
use super::upload::{Upload, WorkDir};

/// The long side of every frame sent to an engine.
pub const PROVIDER_MAX_SIDE: u32 = 1568;
/// Largest picture we decode: 80 megapixels (a 10000 × 8000 photo).
pub const MAX_PIXELS: u64 = 80_000_000;
pub const MAX_SIDE: u32 = 20_000;
/// Frames taken from a clip.
pub const CLIP_FRAMES: usize = 5;
const JPEG_QUALITY: u8 = 85;

#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The file is not what it claims, or is damaged: 422.
    #[error("{0}")]
    Invalid(String),
    /// Acceptable file, but over a limit (duration, pixels): 422 with the reason.
    #[error("{0}")]
    Limit(String),
    /// ffmpeg missing or another server-side failure: 500.
    #[error("{0}")]
    Internal(String),
}

/// What the pipeline asks of media preparation.
pub struct PrepOptions {
    pub use_audio: bool,
    pub enhanced: bool,
    pub max_video_seconds: u64,
}

/// Prepares the upload. Derived files go into `work` and die with it.
pub async fn prepare(upload: &Upload, work: &WorkDir, opts: &PrepOptions) -> Result<Sample, MediaError> {
    match upload.kind {
        MediaKind::Image => {
            let path = upload.path.clone();
            let frame = tokio::task::spawn_blocking(move || prepare_image_file(&path))
                .await
                .map_err(|e| MediaError::Internal(format!("image task failed: {e}")))??;
            Ok(Sample {
                kind: MediaKind::Image,
                frames: vec![frame],
                original: upload.path.clone(),
                mime: upload.mime.clone(),
                duration: None,
                has_audio: false,
                audio: None,
                transcript: None,
                enhanced: opts.enhanced,
            })
        }
        MediaKind::Video => prepare_video(upload, work, opts).await,
    }
}

fn corrupt_image() -> MediaError {
    MediaError::Invalid(
        "Invalid file format: the image could not be decoded. The file may be corrupt or truncated.".into(),
    )
}

/// Decodes, orients, bounds and re-encodes one image file.
pub fn prepare_image_file(path: &Path) -> Result<Frame, MediaError> {
    let bytes = std::fs::read(path).map_err(|e| MediaError::Internal(e.to_string()))?;
    prepare_image_bytes(&bytes)
}

pub fn prepare_image_bytes(bytes: &[u8]) -> Result<Frame, MediaError> {
    let reader = || ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|_| corrupt_image());
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
    let mut img = DynamicImage::from_decoder(decoder).map_err(|_| corrupt_image())?;
    img.apply_orientation(orientation);
    encode_frame(img, None)
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

/// Scales to the provider bound (never up) and encodes as JPEG.
///
/// The encoder is `jpeg-encoder` (AVX2 colour conversion and DCT when the CPU has them):
/// on a 1568 × 882 frame it does a third of the work of `image`'s own JPEG encoder, which
/// was most of the cost of preparing a still.
pub fn encode_frame(img: DynamicImage, at: Option<f64>) -> Result<Frame, MediaError> {
    let rgb = match img {
        DynamicImage::ImageRgb8(_) => img,
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    };
    let (w, h) = (rgb.width(), rgb.height());
    let long = w.max(h);
    let rgb = if long > PROVIDER_MAX_SIDE {
        let scale = f64::from(PROVIDER_MAX_SIDE) / f64::from(long);
        let nw = ((f64::from(w) * scale).round() as u32).max(1);
        let nh = ((f64::from(h) * scale).round() as u32).max(1);
        let mut dst = DynamicImage::new_rgb8(nw, nh);
        let opts = fast_image_resize::ResizeOptions::new()
            .resize_alg(fast_image_resize::ResizeAlg::Convolution(fast_image_resize::FilterType::Bilinear));
        fast_image_resize::Resizer::new()
            .resize(&rgb, &mut dst, &opts)
            .map_err(|e| MediaError::Internal(format!("resize failed: {e}")))?;
        dst
    } else {
        rgb
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

/// What ffprobe says about a clip.
#[derive(Debug, Clone)]
pub struct Probe {
    pub duration: f64,
    pub has_video: bool,
    pub has_audio: bool,
    pub width: u32,
    pub height: u32,
}

async fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output, MediaError> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    cmd.output().await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            MediaError::Internal(format!("{what} is not installed on the server (install ffmpeg)"))
        } else {
            MediaError::Internal(format!("{what} could not start: {e}"))
        }
    })
}

fn corrupt_video() -> MediaError {
    MediaError::Invalid(
        "Invalid file format: the video could not be read. The file may be corrupt or truncated.".into(),
    )
}

pub async fn probe(path: &Path) -> Result<Probe, MediaError> {
    let out = run(
        Command::new("ffprobe")
            .args(["-v", "error", "-print_format", "json", "-show_format", "-show_streams"])
            .arg(path),
        "ffprobe",
    )
    .await?;
    if !out.status.success() {
        return Err(corrupt_video());
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| corrupt_video())?;
    let streams = v["streams"].as_array().cloned().unwrap_or_default();
    let video = streams.iter().find(|s| s["codec_type"] == "video" && s["disposition"]["attached_pic"] != 1);
    let has_audio = streams.iter().any(|s| s["codec_type"] == "audio");
    let num = |x: &serde_json::Value| x.as_str().and_then(|s| s.parse::<f64>().ok()).or_else(|| x.as_f64());
    let duration = num(&v["format"]["duration"])
        .or_else(|| video.and_then(|s| num(&s["duration"])))
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0);
    Ok(Probe {
        duration,
        has_video: video.is_some(),
        has_audio,
        width: video.and_then(|s| s["width"].as_u64()).unwrap_or(0) as u32,
        height: video.and_then(|s| s["height"].as_u64()).unwrap_or(0) as u32,
    })
}

async fn prepare_video(upload: &Upload, work: &WorkDir, opts: &PrepOptions) -> Result<Sample, MediaError> {
    let p = probe(&upload.path).await?;
    if !p.has_video || p.duration <= 0.0 {
        return Err(corrupt_video());
    }
    if p.duration > opts.max_video_seconds as f64 {
        return Err(MediaError::Limit(format!(
            "Video too long: {:.0} seconds. Please upload a clip of at most {} minutes.",
            p.duration,
            (opts.max_video_seconds as f64 / 60.0).ceil()
        )));
    }
    let want_audio = opts.use_audio && p.has_audio;
    let audio_path = work.file("audio.wav");
    let (frames, audio) = tokio::join!(extract_frames(&upload.path, work, &p), async {
        if want_audio { extract_audio(&upload.path, &audio_path).await.map(Some) } else { Ok(None) }
    });
    let frames = frames?;
    let audio = match audio {
        Ok(a) => a,
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
        duration: Some(p.duration),
        has_audio: p.has_audio,
        audio,
        transcript: None,
        enhanced: opts.enhanced,
    })
}

/// Scene-change scores of a clip's key frames: (seconds, score 0..1) per key frame.
///
/// Only key frames are decoded (and scored on a 192-px copy), which makes this pass cost a
/// few dozen decodes instead of every frame: encoders put key frames at cuts (x264's
/// scenecut) or every second or two (phones), so the key frames are where scenes change
/// or a regular sample of the clip. A frame cut at a key frame also costs one decode.
async fn scene_scores(path: &Path) -> Result<Vec<(f64, f64)>, MediaError> {
    let out = run(
        Command::new("ffmpeg")
            .args(["-hide_banner", "-nostdin", "-v", "error", "-threads", "2", "-skip_frame", "nokey", "-i"])
            .arg(path)
            .args([
                "-an",
                "-sn",
                "-dn",
                "-vf",
                "scale=192:-2:flags=fast_bilinear,select='gte(scene\\,0)',metadata=print:key=lavfi.scene_score:file=-",
                "-f",
                "null",
                "-",
            ]),
        "ffmpeg",
    )
    .await?;
    if !out.status.success() {
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
        } else if let Some(v) = line.trim().strip_prefix("lavfi.scene_score=") {
            if let (Some(time), Ok(score)) = (t.take(), v.parse::<f64>()) {
                out.push((time, score));
            }
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

async fn extract_frames(path: &Path, work: &WorkDir, p: &Probe) -> Result<Vec<Frame>, MediaError> {
    let scores = scene_scores(path).await?;
    let n = if p.duration < 2.0 { 2 } else { CLIP_FRAMES };
    let moments = pick_moments(&scores, p.duration, n);
    let mut tasks = Vec::new();
    for (i, at) in moments.iter().enumerate() {
        let out = work.file(&format!("frame{i}.jpg"));
        tasks.push(extract_frame(path, *at, out));
    }
    let results = futures::future::join_all(tasks).await;
    let mut frames = Vec::new();
    for (at, r) in moments.iter().zip(results) {
        match r {
            Ok(Some(bytes)) => {
                let (w, h) = image::ImageReader::new(Cursor::new(&bytes))
                    .with_guessed_format()
                    .ok()
                    .and_then(|r| r.into_dimensions().ok())
                    .unwrap_or((0, 0));
                if w > 0 {
                    frames.push(Frame { jpeg: Bytes::from(bytes), width: w, height: h, at: Some(*at) });
                }
            }
            Ok(None) => {}
            Err(e) => return Err(e),
        }
    }
    if frames.is_empty() {
        return Err(corrupt_video());
    }
    Ok(frames)
}

/// One full-quality frame at `at` seconds, scaled to the provider bound.
async fn extract_frame(path: &Path, at: f64, out: PathBuf) -> Result<Option<Vec<u8>>, MediaError> {
    let scale =
        format!("scale='min({m},iw)':'min({m},ih)':force_original_aspect_ratio=decrease", m = PROVIDER_MAX_SIDE);
    let o = run(
        Command::new("ffmpeg")
            .args([
                "-hide_banner",
                "-nostdin",
                "-v",
                "error",
                "-threads",
                "1",
                "-ss",
                &format!("{:.3}", at + 0.001),
                "-i",
            ])
            .arg(path)
            .args(["-an", "-sn", "-frames:v", "1", "-vf", &scale, "-q:v", "3", "-y"])
            .arg(&out),
        "ffmpeg",
    )
    .await?;
    if !o.status.success() {
        return Ok(None);
    }
    match tokio::fs::read(&out).await {
        Ok(b) if !b.is_empty() => Ok(Some(b)),
        _ => Ok(None),
    }
}

/// The sound track as 16 kHz mono 16-bit WAV (what speech-to-text wants).
async fn extract_audio(path: &Path, out: &Path) -> Result<PathBuf, MediaError> {
    let o = run(
        Command::new("ffmpeg")
            .args(["-hide_banner", "-nostdin", "-v", "error", "-i"])
            .arg(path)
            .args(["-vn", "-sn", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", "-y"])
            .arg(out),
        "ffmpeg",
    )
    .await?;
    if !o.status.success() {
        return Err(MediaError::Internal(format!(
            "audio extraction failed: {}",
            String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("")
        )));
    }
    Ok(out.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(m.iter().any(|t| *t == 0.0) && m.iter().any(|t| *t == 9.0), "{m:?}");
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
