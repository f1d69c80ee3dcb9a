//! The scan: every indexed hash against a handful of query hashes, on every core.
//!
//! Hashes are stored split: the first 64-bit word of every entry contiguously, then the other
//! three words. Word 0 holds the 8x8 lowest frequencies (see `hash::bit_order`), the bits a
//! real match keeps best. The scan reads only the first words (8 bytes an entry: 10^7 entries
//! is 80 MB of memory traffic, read once for all query hashes) and looks at the other 192 bits
//! only when the first 64 are within [`PREFILTER`]. A random 64-bit word is that close with
//! probability ~0.2%, so the second stage's scattered reads stay rare; the benchmark measures
//! what the prefilter costs in recall.
use rayon::prelude::*;

use super::hash::Hash;
use super::store::Segment;

/// A query word-0 distance above this cannot belong to a match we would accept.
pub const PREFILTER: u32 = 20;
/// The same for scans with dozens of query hashes (crop hypotheses, clips): every query hash
/// multiplies the random entries that pass, so the first stage is stricter.
pub const PREFILTER_MANY: u32 = 16;
/// Entries per parallel work item (512 KB of first words: stays in L2 while every query
/// hash is compared).
const CHUNK: usize = 1 << 16;
/// Entries compared against all queries before moving on (one L1-resident block).
const BLOCK: usize = 64;

/// Which entries of a segment a scan looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// Whole-picture hashes of sampled frames.
    Frames,
    /// The crop tier (centre windows of key frames).
    Crops,
    /// The upper tier (the part of key frames above where subtitles and controls sit).
    Upper,
}

/// One index entry within `max_d` of one query hash.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    pub query: u16,
    pub segment: u32,
    pub entry: u32,
    pub dist: u16,
}

/// All hits within `max_d` of any of `queries` in `section`, best first, at most `cap`.
pub fn scan(
    segments: &[&Segment],
    section: Section,
    queries: &[Hash],
    max_d: u32,
    prefilter: u32,
    cap: usize,
) -> Vec<Hit> {
    let mut work = Vec::new();
    for (s, seg) in segments.iter().enumerate() {
        let std::ops::Range { mut start, end: stop } = seg.range(section);
        while start < stop {
            let end = (start + CHUNK).min(stop);
            work.push((s, start, end));
            start = end;
        }
    }
    let mut hits: Vec<Hit> = work
        .par_iter()
        .fold(Vec::new, |mut acc, &(s, start, end)| {
            scan_range(segments[s], s as u32, start, end, queries, max_d.min(prefilter), max_d, &mut acc);
            if acc.len() > cap * 4 {
                acc.sort_unstable_by_key(|h| h.dist);
                acc.truncate(cap);
            }
            acc
        })
        .reduce(Vec::new, |mut a, mut b| {
            a.append(&mut b);
            a
        });
    hits.sort_unstable_by_key(|h| (h.dist, h.segment, h.entry));
    hits.truncate(cap);
    hits
}

/// Like [`scan`] over every entry, without the prefilter and with no distance limit (slow;
/// calibration only). Also reports each hit's word-0 distance.
pub fn scan_exhaustive(segments: &[&Segment], queries: &[Hash], cap: usize) -> Vec<(Hit, u32)> {
    let mut hits = Vec::new();
    for (s, seg) in segments.iter().enumerate() {
        for i in 0..seg.len() {
            let h = seg.hash(i);
            for (q, query) in queries.iter().enumerate() {
                let d = super::hash::hamming(&h, query);
                let d0 = (h[0] ^ query[0]).count_ones();
                hits.push((Hit { query: q as u16, segment: s as u32, entry: i as u32, dist: d as u16 }, d0));
            }
        }
        hits.sort_unstable_by_key(|h| h.0.dist);
        hits.truncate(cap);
    }
    hits
}

#[allow(clippy::too_many_arguments)]
fn scan_range(
    seg: &Segment,
    s: u32,
    start: usize,
    end: usize,
    queries: &[Hash],
    pre: u32,
    max_d: u32,
    out: &mut Vec<Hit>,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt") {
            // Safety: the CPU supports popcnt, checked just above.
            unsafe { scan_range_popcnt(seg, s, start, end, queries, pre, max_d, out) };
            return;
        }
    }
    scan_range_generic(seg, s, start, end, queries, pre, max_d, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
#[allow(clippy::too_many_arguments)]
unsafe fn scan_range_popcnt(
    seg: &Segment,
    s: u32,
    start: usize,
    end: usize,
    queries: &[Hash],
    pre: u32,
    max_d: u32,
    out: &mut Vec<Hit>,
) {
    scan_range_generic(seg, s, start, end, queries, pre, max_d, out)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn scan_range_generic(
    seg: &Segment,
    s: u32,
    start: usize,
    end: usize,
    queries: &[Hash],
    pre: u32,
    max_d: u32,
    out: &mut Vec<Hit>,
) {
    let first = &seg.first_words()[start..end];
    let rest = seg.rest_words();
    for (b, block) in first.chunks(BLOCK).enumerate() {
        let base = start + b * BLOCK;
        for (q, query) in queries.iter().enumerate() {
            // Branch-free first stage: one bit per entry of the block that passes.
            let mut pass = 0u64;
            for (j, &w) in block.iter().enumerate() {
                pass |= (((w ^ query[0]).count_ones() <= pre) as u64) << j;
            }
            while pass != 0 {
                let j = pass.trailing_zeros() as usize;
                pass &= pass - 1;
                let i = base + j;
                let r = &rest[i];
                let d = (block[j] ^ query[0]).count_ones()
                    + (r[0] ^ query[1]).count_ones()
                    + (r[1] ^ query[2]).count_ones()
                    + (r[2] ^ query[3]).count_ones();
                if d <= max_d {
                    out.push(Hit { query: q as u16, segment: s, entry: i as u32, dist: d as u16 });
                }
            }
        }
    }
}
