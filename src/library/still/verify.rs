//! Looking again at the source. A 256-bit hash of the lowest frequencies finds candidates
//! fast, but two things it cannot do alone:
//!
//! - **Tell near-equal moments apart.** An animation loop, a scene that returns, a shot where
//!   little moves: several runs of entries are about as close to the query, and the first is
//!   often not the one.
//! - **Be sure of a distant hit.** A match 40 to 70 bits away may be the picture under a
//!   heavy change (subtitles, a phone photo, a crop) or an unrelated picture whose coarse
//!   light and dark happen to agree (a flat title card, a gradient, a face in the middle).
//!
//! So the frames around each candidate are decoded from the operator's file and compared
//! with the query picture itself: the 64x64 picture its hash was computed from, pooled to
//! 32x32 and correlated (zero mean, unit norm: brightness and contrast do not count), as a
//! whole and as the median of its 4x4 blocks' own correlations (a cover over a few blocks,
//! such as subtitles, a logo or a caption, does not move the median). The candidate most
//! alike wins and its best frame becomes the answer's `at`; a distant hit that is not alike
//! enough ([`LOOK_ACCEPT`]) is no match.
//!
//! It re-ranks and gates what the hash found: a hit past a tier's threshold (in [`BAND`], or
//! in [`PAINTED_BAND`] past it for the picture with its subtitles painted out) stands only
//! when it looks alike, and nothing else is ever added. When the file cannot be read (moved,
//! unmounted), the hash's answer stands within the threshold.
use std::path::Path;

use tokio_util::sync::CancellationToken;

use crate::library::fingerprint::indexed_rect;
use crate::library::frames::{self, Budget};
use crate::library::index::entries::Section;
use crate::library::picture::hash;
use crate::library::policy::{BAND, LOOK_ACCEPT, PAINTED_BAND, PAINTED_LOOK};

/// Side of the pooled picture the correlations run on.
const POOLED: usize = 32;
/// Blocks per side for [`Pooled::block_correlation`].
const BLOCKS: usize = 4;
/// Frames a candidate's span is looked at (at most [`frames::INDEX_FPS`] a second).
const FRAMES_PER_LOOK: f64 = 36.0;
/// Longest stretch of a candidate's span decoded (seconds), around its best entry: a long
/// run is a static shot, which looks the same throughout, and every second decoded costs
/// CPU.
const MAX_LOOK: f64 = 1.0;
/// Seconds looked at before and after a span: a kept entry stands for the frames after it,
/// and the frame the query shows may be the one before.
const MARGIN: f64 = 0.1;

/// Two frames whose correlations with a query differ by less than this look the same to it:
/// grain and compression between frames of one static picture stay under it.
pub(in crate::library) const SAME_LOOK: f32 = 0.004;
/// Another video holds the same scene when its frame correlates with the query at most this
/// much less than the winner's: a recap or a trailer re-encodes (and may re-grade) the picture.
pub(in crate::library) const SHARED_LOOK: f32 = 0.03;

/// Side of the cells whose mean [`detail`] takes away from the 64x64 picture.
const DETAIL_CELL: usize = 8;
/// Among candidates that look the same as a whole (within [`SAME_LOOK`]), another wins over
/// the hash's own choice when its detail correlates with the query's by this much more: two
/// moments on one grey backdrop (a title card, then a hand over the same backdrop) correlate
/// alike as a whole and apart in their detail.
pub(in crate::library) const DETAIL_MARGIN: f32 = 0.1;

/// A picture ready to be correlated: pooled, zero mean, unit norm; and its detail (the 64x64
/// picture less its [`DETAIL_CELL`]² cell means, zero mean, unit norm; `None` when there is
/// none to speak of).
pub(in crate::library) struct Pooled(Vec<f32>, Option<Vec<f32>>);

/// `v` less its mean, divided by its norm; `None` when its norm is under `floor`.
fn normalised(mut v: Vec<f32>, floor: f32) -> Option<Vec<f32>> {
    let mean = v.iter().sum::<f32>() / v.len() as f32;
    v.iter_mut().for_each(|x| *x -= mean);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm < floor {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

/// A 64x64 hash buffer less the mean of its [`DETAIL_CELL`]² cells, normalised; `None` under
/// half a grey level of detail per pixel.
fn detail(buf: &[f32]) -> Option<Vec<f32>> {
    let n = hash::HASH_SIDE;
    let means = hash::cell_means(buf, n, DETAIL_CELL);
    let cells = n / DETAIL_CELL;
    let cell = |i: usize| (i / n / DETAIL_CELL) * cells + (i % n) / DETAIL_CELL;
    let high: Vec<f32> = buf.iter().enumerate().map(|(i, v)| v - means[cell(i)]).collect();
    normalised(high, 0.5 * n as f32)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Pooled {
    /// Pools a 64x64 hash buffer ([`hash::downsample`]); `None` for a flat picture.
    pub fn of(buf: &[f32]) -> Option<Pooled> {
        let means = hash::cell_means(buf, hash::HASH_SIDE, hash::HASH_SIDE / POOLED);
        // Under a tenth of a gray level of spread per pooled cell: nothing to compare.
        let pooled = normalised(means, 0.1 * POOLED as f32)?;
        Some(Pooled(pooled, detail(buf)))
    }

    /// Correlation of the two pictures' detail (see [`Pooled`]); 0 when either has none.
    pub fn detail_correlation(&self, other: &Pooled) -> f32 {
        match (&self.1, &other.1) {
            (Some(a), Some(b)) => dot(a, b),
            _ => 0.0,
        }
    }

    /// Correlation, -1..=1 (1: the same picture up to brightness and contrast).
    pub fn correlation(&self, other: &Pooled) -> f32 {
        dot(&self.0, &other.0)
    }

    /// The median of the blocks' own correlations ([`BLOCKS`]² blocks; blocks flat in either
    /// picture are left out); [`Self::correlation`] when fewer than a quarter of the blocks
    /// count.
    pub fn block_correlation(&self, other: &Pooled) -> f32 {
        const B: usize = POOLED / BLOCKS;
        // A block whose cells spread under a twentieth of the picture's (per cell) is flat.
        let floor = 0.05 * B as f32 / POOLED as f32;
        let block = |v: &[f32], bx: usize, by: usize| -> Vec<f32> {
            (0..B * B).map(|i| v[(by * B + i / B) * POOLED + bx * B + i % B]).collect()
        };
        let mut scores: Vec<f32> = (0..BLOCKS * BLOCKS)
            .filter_map(|k| {
                let (bx, by) = (k % BLOCKS, k / BLOCKS);
                let a = normalised(block(&self.0, bx, by), floor)?;
                let b = normalised(block(&other.0, bx, by), floor)?;
                Some(dot(&a, &b))
            })
            .collect();
        if scores.len() < BLOCKS * BLOCKS / 4 {
            return self.correlation(other);
        }
        let mid = scores.len() / 2;
        *scores.select_nth_unstable_by(mid, f32::total_cmp).1
    }
}

/// One candidate moment of a video to look at again.
pub(in crate::library) struct Candidate<'a> {
    pub path: &'a Path,
    /// Which part of each decoded frame the index hashed for this candidate's hit: the
    /// section, and the hit's entry in it (the column tier's window).
    pub section: Section,
    pub entry: u32,
    /// The span of the candidate's run (seconds) and its best entry's time.
    pub from: f64,
    pub to: f64,
    pub best: f64,
    /// The query picture the candidate's hit came from.
    pub query: &'a Pooled,
    /// Stops the decoding (the request is gone).
    pub cancel: Option<&'a CancellationToken>,
}

/// What looking again found: the best frame's correlation with the query (as a whole, by
/// blocks and of its detail) and time, and the span of the frames as alike as it (a static
/// shot: all of it).
#[derive(Clone, Copy, Debug)]
pub(in crate::library) struct Look {
    pub score: f32,
    pub blocks: f32,
    pub detail: f32,
    pub at: f64,
    pub from: f64,
    pub to: f64,
}

impl Look {
    /// Whether the frame looks enough like the query to stand for a distant hit.
    pub fn alike(&self) -> bool {
        self.score.max(self.blocks) >= LOOK_ACCEPT
    }

    /// Whether the frame looks like the query both as a whole and by blocks.
    pub fn alike_both_ways(&self) -> bool {
        self.both_at_least(LOOK_ACCEPT)
    }

    /// Whether both correlations reach `floor`.
    fn both_at_least(&self, floor: f32) -> bool {
        self.score.min(self.blocks) >= floor
    }

    /// Whether the frame looks enough like the query to stand for a hit `dist` bits from it
    /// in a tier that accepts `accept` bits: within the threshold, [`Self::alike`]; in the
    /// [`BAND`] beyond it, alike as a whole and by blocks; further out, never.
    pub fn stands_for(&self, dist: u32, accept: u32) -> bool {
        if dist <= accept { self.alike() } else { dist <= accept + BAND && self.alike_both_ways() }
    }

    /// [`Self::stands_for`] for a hit of a painted-out picture: also in [`PAINTED_BAND`]
    /// beyond the band, alike at [`PAINTED_LOOK`] as a whole and by blocks.
    pub fn stands_for_painted(&self, dist: u32, accept: u32) -> bool {
        self.stands_for(dist, accept) || (dist <= accept + BAND + PAINTED_BAND && self.both_at_least(PAINTED_LOOK))
    }
}

/// Decodes the candidate's span and correlates each frame with the query; `None` when the
/// file cannot be decoded there.
pub(in crate::library) fn look(c: &Candidate<'_>) -> Option<Look> {
    let (mut start, mut end) = ((c.from - MARGIN).max(0.0), c.to + MARGIN);
    if end - start > MAX_LOOK {
        start = (c.best - MAX_LOOK / 2.0).clamp(start, end - MAX_LOOK);
        end = start + MAX_LOOK;
    }
    let fps = ((FRAMES_PER_LOOK / (end - start)).ceil() as u32).clamp(1, frames::INDEX_FPS);
    let mut scored: Vec<(f64, f32, f32, f32)> = Vec::new();
    let budget = Budget { cancel: c.cancel.cloned(), ..Budget::default() };
    frames::decode_frames_from(c.path, start, fps, end - start, &budget, true, |t, px| {
        let view = frames::frame_view(px);
        let rect = indexed_rect(view, c.section, c.entry as usize);
        if let Some(p) = Pooled::of(&hash::downsample(view, rect)) {
            let scores = (c.query.correlation(&p), c.query.block_correlation(&p), c.query.detail_correlation(&p));
            scored.push((start + t, scores.0, scores.1, scores.2));
        }
    })
    .ok()?;
    let &(at, score, blocks, detail) = scored.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    // Frames as alike as the best within what grain and compression change (a static shot):
    // their span, and `at` in its middle when the best is one of many equals.
    let alike: Vec<f64> = scored.iter().filter(|(_, s, ..)| *s >= score - SAME_LOOK).map(|(t, ..)| *t).collect();
    let (from, to) = (alike[0], alike[alike.len() - 1]);
    let at = if alike.len() >= 3 { alike[alike.len() / 2] } else { at };
    Some(Look { score, blocks, detail, at, from, to })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        let n = hash::HASH_SIDE;
        (0..n * n).map(|i| f(i % n, i / n)).collect()
    }

    fn base(x: usize, y: usize) -> f32 {
        ((x as f32 * 0.3).sin() + (y as f32 * 0.2).cos() + (x as f32 * 0.11 + y as f32 * 0.37).sin()) * 30.0 + 100.0
    }

    #[test]
    fn correlation_ignores_brightness_and_contrast_but_sees_detail() {
        let a = Pooled::of(&buf(base)).unwrap();
        let brighter = Pooled::of(&buf(|x, y| base(x, y) * 0.6 + 70.0)).unwrap();
        assert!(a.correlation(&brighter) > 0.999);
        // The same picture with a bright spot (a light that moved).
        let spot =
            |x: usize, y: usize| base(x, y) + if (40..50).contains(&x) && (10..20).contains(&y) { 120.0 } else { 0.0 };
        let other = Pooled::of(&buf(spot)).unwrap();
        assert!(a.correlation(&other) < a.correlation(&brighter) - 0.02, "{}", a.correlation(&other));
        assert!(Pooled::of(&buf(|_, _| 80.0)).is_none());
    }

    #[test]
    fn a_cover_over_a_few_blocks_leaves_the_block_median_alone() {
        let a = Pooled::of(&buf(base)).unwrap();
        // Two lines of big subtitles: bright and dark stripes over the lower fifth.
        let subtitled = |x: usize, y: usize| {
            if (48..60).contains(&y) && (8..56).contains(&x) {
                if (x / 3 + y / 2).is_multiple_of(2) { 250.0 } else { 0.0 }
            } else {
                base(x, y)
            }
        };
        let b = Pooled::of(&buf(subtitled)).unwrap();
        assert!(a.block_correlation(&b) > 0.95, "{}", a.block_correlation(&b));
        assert!(
            a.correlation(&b) < a.block_correlation(&b) - 0.1,
            "{} vs {}",
            a.correlation(&b),
            a.block_correlation(&b)
        );
        // An unrelated picture is unlike either way.
        let c = Pooled::of(&buf(|x, y| ((x * 7 + y * 13) % 17) as f32 * 9.0 + (y as f32 * 0.5).sin() * 40.0)).unwrap();
        assert!(a.correlation(&c).max(a.block_correlation(&c)) < LOOK_ACCEPT);
    }

    #[test]
    fn two_moments_on_one_backdrop_are_alike_as_a_whole_and_apart_in_detail() {
        // A bright vignette over the whole frame, with a small logo in one moment and a small
        // hand shape in the other.
        let backdrop = |x: usize, y: usize| 200.0 - ((x as f32 - 32.0).powi(2) + (y as f32 - 32.0).powi(2)) * 0.08;
        let logo = |x: usize, y: usize| {
            backdrop(x, y)
                + if (10..22).contains(&x) && (28..34).contains(&y) && (x + y).is_multiple_of(3) { -90.0 } else { 0.0 }
        };
        let hand = |x: usize, y: usize| {
            backdrop(x, y)
                + if (44..54).contains(&x) && (40..60).contains(&y) && x.is_multiple_of(2) { -90.0 } else { 0.0 }
        };
        let (a, b) = (Pooled::of(&buf(logo)).unwrap(), Pooled::of(&buf(hand)).unwrap());
        let a_again = Pooled::of(&buf(|x, y| logo(x, y) * 0.9 + 12.0)).unwrap();
        assert!(a.correlation(&b) > 0.9, "{}", a.correlation(&b));
        assert!(a.detail_correlation(&a_again) > 0.95, "{}", a.detail_correlation(&a_again));
        assert!(
            a.detail_correlation(&a_again) > a.detail_correlation(&b) + DETAIL_MARGIN,
            "{} vs {}",
            a.detail_correlation(&a_again),
            a.detail_correlation(&b)
        );
    }

    #[test]
    fn a_hit_beyond_the_threshold_needs_both_correlations_and_stays_inside_the_band() {
        let look = |score, blocks| Look { score, blocks, detail: 0.0, at: 0.0, from: 0.0, to: 0.0 };
        // Smooth pictures alike as a whole only (the diver taken for a flat cartoon frame).
        let smooth = look(0.82, 0.45);
        assert!(smooth.stands_for(70, 70));
        assert!(!smooth.stands_for(71, 70));
        // Detail alike, the whole not (a cover over part of the picture).
        assert!(look(0.50, 0.80).stands_for(62, 62));
        assert!(!look(0.50, 0.80).stands_for(66, 62));
        let both = look(0.70, 0.68);
        assert!(both.stands_for(70 + BAND, 70));
        assert!(!both.stands_for(70 + BAND + 1, 70));
        assert!(!look(0.60, 0.60).stands_for(40, 70));
    }

    #[test]
    fn a_painted_out_hit_may_lie_further_out_only_when_it_looks_more_alike() {
        let look = |score, blocks| Look { score, blocks, detail: 0.0, at: 0.0, from: 0.0, to: 0.0 };
        let far = 70 + BAND + PAINTED_BAND;
        // Alike as well as a hit in the band needs: not enough past it, for any hit.
        let both = look(0.70, 0.68);
        assert!(both.stands_for_painted(70 + BAND, 70));
        assert!(!both.stands_for_painted(far, 70));
        // Alike at PAINTED_LOOK both ways: the painted-out picture's hit stands past the band,
        // not further, and an ordinary hit never does.
        let alike = look(0.86, 0.79);
        assert!(alike.stands_for_painted(far, 70));
        assert!(!alike.stands_for_painted(far + 1, 70));
        assert!(!alike.stands_for(70 + BAND + 1, 70));
        // Alike as a whole only (a smooth unrelated picture): never past the band.
        assert!(!look(0.95, 0.60).stands_for_painted(70 + BAND + 1, 70));
    }
}
