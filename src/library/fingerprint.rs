//! Fingerprinting: which decoded frames of a video are kept (by motion, not the clock) and
//! how a query picture is hashed the same way.
use std::path::Path;

use anyhow::bail;
use tokio_util::sync::CancellationToken;

use crate::library::frames;
use crate::library::index::entries::{COLUMNS, Section};
use crate::library::picture::column::column_rects;
use crate::library::picture::hash::{self, FrameHash, GrayView, Hash, MIN_QUALITY, hamming};

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
/// (src/library/README.md, "Upper tier").
const CROP_KEEP_BITS: u32 = 40;
/// The upper tier ([`hash::UPPER_SHARE`]) keeps frames by the same rule, coarser still: the top
/// of a picture moves less than the whole, and the tier answers only when no other does.
const UPPER_KEEP_BITS: u32 = 48;
/// The column tier keeps a moment's [`COLUMNS`] windows together when the median of them moved
/// more than this many bits from its last kept version (or [`MAX_GAP`] passed). Measured on the
/// benchmark footage (vertical reposts, title + time, calibration / held out; index per video
/// hour, all tiers): any window past 40 bits 90 / 80%, 8.7 MB; the median past 40, 90 / 80%,
/// 6.6 MB; the fourth past 40, 70 / 75%, 5.0 MB; all five past 48, 70 / 65%, 3.8 MB.
const COLUMN_KEEP_BITS: u32 = 40;
/// The deep-crop tier ([`hash::DEEP_SCALE`]) keeps frames by the crop tier's rule (its middle
/// moves sooner than the crop tier's larger window: about 1.4 times the entries).
const DEEP_KEEP_BITS: u32 = CROP_KEEP_BITS;

/// Which frames of one section are kept, in decoding order: a frame whose hash moved more than
/// `bits` from the last kept one, or [`MAX_GAP`] after it.
struct KeepRule {
    bits: u32,
    last: Option<(Hash, f64)>,
}

impl KeepRule {
    fn new(bits: u32) -> Self {
        Self { bits, last: None }
    }

    /// Whether the frame at `t` seconds hashing to `hash` is kept (and is then the one the
    /// next frames are measured from).
    fn keeps(&mut self, hash: &Hash, t: f64) -> bool {
        let moved = self.last.is_none_or(|(lh, lt)| hamming(&lh, hash) > self.bits || t - lt >= MAX_GAP - 1e-6);
        if moved {
            self.last = Some((*hash, t));
        }
        moved
    }
}

/// The rectangles of a decoded frame the index hashes, one per section (whole frames, crop
/// tier, upper tier, deep-crop tier): the active picture (flat borders cut), its centre window
/// ([`hash::CROP_SCALE`]), its top ([`hash::UPPER_SHARE`]) and its middle
/// ([`hash::DEEP_SCALE`]).
pub(super) fn indexed_rects(view: GrayView<'_>) -> [hash::Rect; 4] {
    let area = hash::active_area(view);
    [area, area.centre(hash::CROP_SCALE), area.upper(hash::UPPER_SHARE), area.centre(hash::DEEP_SCALE)]
}

/// The rectangle of a decoded frame that entry `entry` of `section` holds (see
/// [`indexed_rects`]; the column tier's windows by [`column_rects`]).
pub(super) fn indexed_rect(view: GrayView<'_>, section: Section, entry: usize) -> hash::Rect {
    let [frame, crop, upper, deep] = indexed_rects(view);
    match section {
        Section::Frames => frame,
        Section::Crops => crop,
        Section::Upper => upper,
        Section::Deep => deep,
        Section::Columns => column_rects(frame)[entry % COLUMNS],
    }
}

/// Which moments the column tier keeps: all [`COLUMNS`] windows of a frame at once, when the
/// median of them moved more than [`COLUMN_KEEP_BITS`] from its last kept version, or
/// [`MAX_GAP`] after the last kept moment.
struct ColumnKeep {
    last: Option<([Hash; COLUMNS], f64)>,
}

impl ColumnKeep {
    fn keeps(&mut self, hashes: &[Hash; COLUMNS], t: f64) -> bool {
        let moved = self.last.as_ref().is_none_or(|(last, lt)| {
            let mut moved: [u32; COLUMNS] = std::array::from_fn(|k| hamming(&last[k], &hashes[k]));
            moved.sort_unstable();
            t - lt >= MAX_GAP - 1e-6 || moved[COLUMNS / 2] > COLUMN_KEEP_BITS
        });
        if moved {
            self.last = Some((*hashes, t));
        }
        moved
    }
}

/// Fingerprints of one video: kept frames, crop-tier and upper-tier entries, each with its
/// time in ms, and the static stretches (see [`crate::library::index::stretches::StillFinder`]).
pub struct Fingerprints {
    pub frames: Vec<(Hash, u32)>,
    pub crops: Vec<(Hash, u32)>,
    pub uppers: Vec<(Hash, u32)>,
    /// [`COLUMNS`] windows a kept moment (see [`Section::Columns`]).
    pub columns: Vec<(Hash, u32)>,
    pub deeps: Vec<(Hash, u32)>,
    pub stills: Vec<[u32; 2]>,
}

/// Decodes a video at [`frames::INDEX_FPS`] and hashes every frame; a frame is kept when it
/// moved more than [`KEEP_BITS`] from the last kept one (or [`MAX_GAP`] passed), flat frames
/// are skipped, and the centre windows for the crop tier and the upper parts for the upper
/// tier are kept by the same rule; the static stretches are found on every decoded frame.
pub fn fingerprint_video(
    path: &Path,
    probe: &frames::Probe,
    advance: &mut dyn FnMut(f64),
    cancel: Option<&CancellationToken>,
) -> anyhow::Result<Fingerprints> {
    use rayon::prelude::*;
    /// Frames hashed together on all cores before the keep rule runs over them in order.
    const BATCH: usize = 48;
    let mut out = Fingerprints {
        frames: Vec::new(),
        crops: Vec::new(),
        uppers: Vec::new(),
        columns: Vec::new(),
        deeps: Vec::new(),
        stills: Vec::new(),
    };
    let mut stills = crate::library::index::stretches::StillFinder::default();
    let mut keep_frames = KeepRule::new(KEEP_BITS);
    let mut keep_crops = KeepRule::new(CROP_KEEP_BITS);
    let mut keep_uppers = KeepRule::new(UPPER_KEEP_BITS);
    let mut keep_columns = ColumnKeep { last: None };
    let mut keep_deeps = KeepRule::new(DEEP_KEEP_BITS);
    let mut batch: Vec<(f64, Vec<u8>)> = Vec::with_capacity(BATCH);
    let step = 1.0 / frames::INDEX_FPS as f64;
    let mut flush = |batch: &mut Vec<(f64, Vec<u8>)>, out: &mut Fingerprints| {
        let hashed: Vec<(f64, [FrameHash; 4], [Hash; COLUMNS])> = batch
            .par_iter()
            .map(|(t, px)| {
                let view = frames::frame_view(px);
                let rects = indexed_rects(view);
                let columns = column_rects(rects[0]).map(|r| hash::hash_rect(view, r).hash);
                (*t, rects.map(|r| hash::hash_rect(view, r)), columns)
            })
            .collect();
        batch.clear();
        for (t, [fh, crop, upper, deep], columns) in hashed {
            if fh.quality < MIN_QUALITY {
                continue;
            }
            let ms = (t * 1000.0).round() as u32;
            if keep_frames.keeps(&fh.hash, t) {
                out.frames.push((fh.hash, ms));
            }
            if crop.quality >= MIN_QUALITY && keep_crops.keeps(&crop.hash, t) {
                out.crops.push((crop.hash, ms));
            }
            if upper.quality >= MIN_QUALITY && keep_uppers.keeps(&upper.hash, t) {
                out.uppers.push((upper.hash, ms));
            }
            if keep_columns.keeps(&columns, t) {
                out.columns.extend(columns.iter().map(|h| (*h, ms)));
            }
            if deep.quality >= MIN_QUALITY && keep_deeps.keeps(&deep.hash, t) {
                out.deeps.push((deep.hash, ms));
            }
        }
    };
    // The operator's file: read what it declares (and a little), never more.
    let budget = frames::Budget { cancel: cancel.cloned(), ..Default::default() };
    let seconds = probe.duration + 2.0;
    let (decoded, complaints) = frames::decode_frames(path, frames::INDEX_FPS, seconds, &budget, |t, px| {
        advance(step);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::index::fake::{flipped, random_hash};

    /// The times (s) of the frames `rule` keeps among `hashes` decoded at the index's rate.
    fn kept(mut rule: KeepRule, hashes: &[Hash]) -> Vec<f64> {
        let step = 1.0 / frames::INDEX_FPS as f64;
        let times = (0..hashes.len()).map(|k| k as f64 * step);
        times.zip(hashes).filter(|(t, h)| rule.keeps(h, *t)).map(|(t, _)| (t * 100.0).round() / 100.0).collect()
    }

    #[test]
    fn a_static_shot_costs_one_entry_a_second() {
        // 3 s of one picture under grain: every frame within a few bits of the first.
        let picture = random_hash(1);
        let grain: Vec<Hash> = (0..3 * frames::INDEX_FPS).map(|k| flipped(picture, k % 6)).collect();
        assert_eq!(kept(KeepRule::new(KEEP_BITS), &grain), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn a_frame_that_moved_more_than_the_keep_bits_is_kept_at_once() {
        let picture = random_hash(1);
        let frames = [picture, flipped(picture, KEEP_BITS), flipped(picture, KEEP_BITS + 1), flipped(picture, 3)];
        // The third moved 17 bits from the first; the fourth is 14 from the third, not kept.
        let step = 1.0 / frames::INDEX_FPS as f64;
        assert_eq!(kept(KeepRule::new(KEEP_BITS), &frames), vec![0.0, ((2.0 * step) * 100.0_f64).round() / 100.0]);
        // The coarser crop tier keeps neither.
        assert_eq!(kept(KeepRule::new(CROP_KEEP_BITS), &frames), vec![0.0]);
    }

    #[test]
    fn the_column_tier_keeps_a_moment_when_most_of_its_windows_moved() {
        let step = 1.0 / frames::INDEX_FPS as f64;
        let first: [Hash; COLUMNS] = std::array::from_fn(|k| random_hash(k as u64));
        let mut rule = ColumnKeep { last: None };
        assert!(rule.keeps(&first, 0.0));
        // Two windows far off (a hand moving across one side): not yet.
        let mut two = first;
        two[0] = random_hash(50);
        two[1] = random_hash(51);
        assert!(!rule.keeps(&two, step));
        // Three: the median moved.
        let mut three = two;
        three[2] = random_hash(52);
        assert!(rule.keeps(&three, 2.0 * step));
        // A second later, kept however still.
        assert!(!rule.keeps(&three, 0.5) && rule.keeps(&three, 2.0 * step + MAX_GAP));
    }

    #[test]
    fn a_letterboxed_frame_is_indexed_inside_its_bars() {
        let side = frames::FRAME_SIDE;
        // Texture between black bars of 20 rows top and bottom.
        let px: Vec<u8> = (0..side * side)
            .map(|i| {
                let (x, y) = (i % side, i / side);
                if !(20..side - 20).contains(&y) { 0 } else { (60 + (x * 7 + y * 13) % 130 + (x / 16) * 8) as u8 }
            })
            .collect();
        let view = frames::frame_view(&px);
        let [frame, crop, upper, deep] = indexed_rects(view);
        assert_eq!((frame.y0, frame.y1, frame.x0, frame.x1), (20, side - 20, 0, side));
        // The crop tier's centre window lies inside the picture, 80% of each side.
        assert!(crop.x0 > frame.x0 && crop.x1 < frame.x1 && crop.y0 > frame.y0 && crop.y1 < frame.y1);
        assert_eq!(crop.width(), (frame.width() as f32 * hash::CROP_SCALE).round() as usize);
        // The upper tier's rectangle is the picture's top 55%, full width.
        assert_eq!((upper.x0, upper.x1, upper.y0), (frame.x0, frame.x1, frame.y0));
        assert_eq!(upper.height(), (frame.height() as f32 * hash::UPPER_SHARE).round() as usize);
        // The deep-crop tier's middle: half of each side, centred.
        assert_eq!((deep.width(), deep.x0 - frame.x0), (frame.width() / 2, frame.width() / 4));
        assert_eq!((deep.height(), deep.y0 - frame.y0), (frame.height() / 2, frame.height() / 4));
        for (section, rect) in
            [(Section::Frames, frame), (Section::Crops, crop), (Section::Upper, upper), (Section::Deep, deep)]
        {
            assert_eq!(indexed_rect(view, section, 0), rect);
        }
    }
}
