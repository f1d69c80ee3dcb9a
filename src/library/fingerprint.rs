//! Fingerprinting: which decoded frames of a video are kept (by motion, not the clock) and
//! how a query picture is hashed the same way.
use std::path::Path;

use anyhow::bail;
use image::DynamicImage;

use super::hash::{self, FrameHash, GrayView, Hash, MIN_QUALITY, hamming};
use super::{Progress, frames};

/// A decoded frame is kept when its hash is more than this many bits from the last kept
/// frame: every decoded frame is then this close to an indexed one, however fast the camera
/// moves, and a static shot costs one entry a [`MAX_GAP`].
const KEEP_BITS: u32 = 16;
/// However static the picture, a frame is kept at least this often (seconds), so any moment
/// is within half of it of an indexed frame.
pub(super) const MAX_GAP: f64 = 1.0;
/// The cropped-screenshot tier keeps the centre window ([`hash::CROP_SCALE`]) of decoded
/// frames by the same rule with this many bits (coarser: the tier is a fallback). With the
/// upper tier below, 24 and 24 bits made 1,953 KB of index per video hour on the benchmark
/// footage, over the 1.5 MB budget; 40 and 48 make 1,467 KB and lost no case in total
/// (README, "Fourth round").
const CROP_KEEP_BITS: u32 = 40;
/// The upper tier ([`hash::UPPER_SHARE`]) keeps frames by the same rule, coarser still: the top
/// of a picture moves less than the whole, and the tier answers only when no other does.
const UPPER_KEEP_BITS: u32 = 48;

/// Hashes a picture the way indexed frames are hashed: luminance squeezed to the frame
/// square, borders removed, active picture hashed.
pub fn hash_image(image: &DynamicImage) -> FrameHash {
    hash_image_hypotheses(image)[0]
}

/// The query hypotheses of a picture against whole frames (see
/// [`StillQuery::frame_cuts`](super::query::StillQuery::frame_cuts)); the first is the active
/// picture with borders removed.
pub fn hash_image_hypotheses(image: &DynamicImage) -> Vec<FrameHash> {
    super::query::StillQuery::new(image).frame_cuts().iter().map(super::query::Cut::hash).collect()
}

/// Sides (pixels) a still's bars are looked for at: a blur that is one pixel wide in the
/// 128 square is three here, and the sharp picture's finest detail survives.
const FINE_SIDE: u32 = 384;

/// [`detail_area`](super::borders::detail_area) of a picture judged at up to [`FINE_SIDE`]
/// pixels a side, mapped onto the `side`² square the hashes are cut from.
pub(super) fn fine_detail_area(gray: &image::GrayImage, side: usize) -> hash::Rect {
    let (w, h) = (gray.width().min(FINE_SIDE), gray.height().min(FINE_SIDE));
    let fine = if (w, h) == gray.dimensions() { gray.clone() } else { image::imageops::thumbnail(gray, w, h) };
    let (w, h) = (w as usize, h as usize);
    let r = super::borders::detail_area(GrayView { width: w, height: h, pixels: fine.as_raw() });
    super::borders::rescale(r, (w, h), (side, side))
}

/// The rectangles of a decoded frame the index hashes, one per section (whole frames, crop
/// tier, upper tier): the active picture (flat borders cut), its centre window
/// ([`hash::CROP_SCALE`]) and its top ([`hash::UPPER_SHARE`]).
pub(super) fn indexed_rects(view: GrayView<'_>) -> [hash::Rect; 3] {
    let area = hash::active_area(view);
    [area, area.centre(hash::CROP_SCALE), area.upper(hash::UPPER_SHARE)]
}

/// The rectangle of [`indexed_rects`] that `section` holds.
pub(super) fn indexed_rect(view: GrayView<'_>, section: super::scan::Section) -> hash::Rect {
    let [frame, crop, upper] = indexed_rects(view);
    match section {
        super::scan::Section::Frames => frame,
        super::scan::Section::Crops => crop,
        super::scan::Section::Upper => upper,
    }
}

/// Fingerprints of one video: kept frames, crop-tier and upper-tier entries, each with its
/// time in ms, and the static stretches (see [`super::shot::StillFinder`]).
pub struct Fingerprints {
    pub frames: Vec<(Hash, u32)>,
    pub crops: Vec<(Hash, u32)>,
    pub uppers: Vec<(Hash, u32)>,
    pub stills: Vec<[u32; 2]>,
}

/// Decodes a video at [`frames::INDEX_FPS`] and hashes every frame; a frame is kept when it
/// moved more than [`KEEP_BITS`] from the last kept one (or [`MAX_GAP`] passed), flat frames
/// are skipped, and the centre windows for the crop tier and the upper parts for the upper
/// tier are kept by the same rule; the static stretches are found on every decoded frame.
pub fn fingerprint_video(
    path: &Path,
    probe: &frames::Probe,
    progress: &mut dyn Progress,
) -> anyhow::Result<Fingerprints> {
    use rayon::prelude::*;
    /// Frames hashed together on all cores before the keep rule runs over them in order.
    const BATCH: usize = 48;
    let mut out = Fingerprints { frames: Vec::new(), crops: Vec::new(), uppers: Vec::new(), stills: Vec::new() };
    let mut stills = super::shot::StillFinder::default();
    let mut last: Option<(Hash, f64)> = None;
    let mut last_crop: Option<(Hash, f64)> = None;
    let mut last_upper: Option<(Hash, f64)> = None;
    let mut batch: Vec<(f64, Vec<u8>)> = Vec::with_capacity(BATCH);
    let step = 1.0 / frames::INDEX_FPS as f64;
    let mut flush = |batch: &mut Vec<(f64, Vec<u8>)>, out: &mut Fingerprints| {
        let hashed: Vec<(f64, [FrameHash; 3])> = batch
            .par_iter()
            .map(|(t, px)| {
                let view = frames::frame_view(px);
                (*t, indexed_rects(view).map(|r| hash::hash_rect(view, r)))
            })
            .collect();
        batch.clear();
        let moved = |last: Option<(Hash, f64)>, h: &Hash, t: f64, bits: u32| {
            last.is_none_or(|(lh, lt)| hamming(&lh, h) > bits || t - lt >= MAX_GAP - 1e-6)
        };
        for (t, [fh, crop, upper]) in hashed {
            if fh.quality < MIN_QUALITY {
                continue;
            }
            let ms = (t * 1000.0).round() as u32;
            if moved(last, &fh.hash, t, KEEP_BITS) {
                out.frames.push((fh.hash, ms));
                last = Some((fh.hash, t));
            }
            if crop.quality >= MIN_QUALITY && moved(last_crop, &crop.hash, t, CROP_KEEP_BITS) {
                out.crops.push((crop.hash, ms));
                last_crop = Some((crop.hash, t));
            }
            if upper.quality >= MIN_QUALITY && moved(last_upper, &upper.hash, t, UPPER_KEEP_BITS) {
                out.uppers.push((upper.hash, ms));
                last_upper = Some((upper.hash, t));
            }
        }
    };
    // The operator's file: read what it declares (and a little), never more.
    let budget = frames::Budget { cancel: progress.cancel().cloned(), ..Default::default() };
    let seconds = probe.duration + 2.0;
    let (decoded, complaints) = frames::decode_frames(path, frames::INDEX_FPS, seconds, &budget, |t, px| {
        progress.advance(step);
        stills.push(t, frames::frame_view(px));
        batch.push((t, px.to_vec()));
        if batch.len() == BATCH {
            flush(&mut batch, &mut out);
        }
    })?;
    flush(&mut batch, &mut out);
    out.stills = stills.finish();
    let expected = probe.duration * frames::INDEX_FPS as f64;
    if (decoded as f64) < expected * 0.9 - 2.0 {
        let got = decoded as f64 / frames::INDEX_FPS as f64;
        let why = complaints.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("the stream ends early");
        bail!("the video is truncated or damaged: decoded {got:.1} s of {:.1} s ({why})", probe.duration);
    }
    if out.frames.is_empty() {
        bail!("no usable picture in the video (all frames are flat or black)");
    }
    Ok(out)
}
