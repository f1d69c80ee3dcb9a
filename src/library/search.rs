//! The scan: every indexed hash against a handful of query hashes, on every core.
//!
//! Hashes are stored split: the first 64-bit word of every entry contiguously, then the other
//! three words. The scan reads the first words (8 bytes an entry, so 10^7 frames is 80 MB of
//! memory traffic instead of 320 MB) and looks at the rest only when the first quarter is
//! already close. The low vertical frequencies live in that first word, and they are the bits
//! a real match keeps best, so the prefilter loses almost nothing (the benchmark measures it).
use rayon::prelude::*;

use super::hash::Hash;
use super::store::Segment;

/// A query word-0 distance above this cannot belong to a match we would accept.
pub const PREFILTER: u32 = 24;
const CHUNK: usize = 1 << 16;

/// One index entry within `max_d` of one query hash.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    pub query: u16,
    pub segment: u32,
    pub entry: u32,
    pub dist: u16,
}

/// All hits within `max_d` of any of `queries`, best first, at most `cap` of them.
pub fn scan(segments: &[&Segment], queries: &[Hash], max_d: u32, cap: usize) -> Vec<Hit> {
    let mut work = Vec::new();
    for (s, seg) in segments.iter().enumerate() {
        let mut start = 0;
        while start < seg.len() {
            let end = (start + CHUNK).min(seg.len());
            work.push((s, start, end));
            start = end;
        }
    }
    let mut hits: Vec<Hit> = work
        .par_iter()
        .fold(Vec::new, |mut acc, &(s, start, end)| {
            scan_range(segments[s], s as u32, start, end, queries, max_d, &mut acc);
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

/// Like [`scan`] without the prefilter and with no distance limit (slow; calibration only).
pub fn scan_exhaustive(segments: &[&Segment], queries: &[Hash], cap: usize) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (s, seg) in segments.iter().enumerate() {
        for i in 0..seg.len() {
            let h = seg.hash(i);
            for (q, query) in queries.iter().enumerate() {
                let d = super::hash::hamming(&h, query);
                hits.push(Hit { query: q as u16, segment: s as u32, entry: i as u32, dist: d as u16 });
            }
        }
        hits.sort_unstable_by_key(|h| h.dist);
        hits.truncate(cap);
    }
    hits
}

fn scan_range(seg: &Segment, s: u32, start: usize, end: usize, queries: &[Hash], max_d: u32, out: &mut Vec<Hit>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("popcnt") {
            // Safety: the CPU supports popcnt, checked just above.
            unsafe { scan_range_popcnt(seg, s, start, end, queries, max_d, out) };
            return;
        }
    }
    scan_range_generic(seg, s, start, end, queries, max_d, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn scan_range_popcnt(
    seg: &Segment,
    s: u32,
    start: usize,
    end: usize,
    queries: &[Hash],
    max_d: u32,
    out: &mut Vec<Hit>,
) {
    scan_range_generic(seg, s, start, end, queries, max_d, out)
}

#[inline(always)]
fn scan_range_generic(
    seg: &Segment,
    s: u32,
    start: usize,
    end: usize,
    queries: &[Hash],
    max_d: u32,
    out: &mut Vec<Hit>,
) {
    let first = &seg.first_words()[start..end];
    let rest = seg.rest_words();
    let pre = PREFILTER.min(max_d);
    for (i, &w) in first.iter().enumerate() {
        for (q, query) in queries.iter().enumerate() {
            let d0 = (w ^ query[0]).count_ones();
            if d0 <= pre {
                let r = &rest[start + i];
                let d = d0
                    + (r[0] ^ query[1]).count_ones()
                    + (r[1] ^ query[2]).count_ones()
                    + (r[2] ^ query[3]).count_ones();
                if d <= max_d {
                    out.push(Hit { query: q as u16, segment: s, entry: (start + i) as u32, dist: d as u16 });
                }
            }
        }
    }
}
