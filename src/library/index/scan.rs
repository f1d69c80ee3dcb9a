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

pub use crate::library::index::entries::Section;
use crate::library::index::store::Segment;
use crate::library::picture::hash::Hash;

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

/// One index entry within `max_d` of one query hash: the segment's place in the scan's list,
/// the entry's place in the segment.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::index::entries::VideoEntries;
    use crate::library::index::fake::{flipped, flipped_first_word, random_hash};
    use crate::library::index::store::write_segment;

    /// A segment of `frames` whole-frame entries (hash `seed + k`) and 50 crop-tier ones,
    /// written to `dir`.
    fn segment(dir: &std::path::Path, id: u32, frames: u64, seed: u64) -> (Segment, Vec<Hash>) {
        let whole: Vec<(Hash, u32)> = (0..frames).map(|k| (random_hash(seed + k), k as u32 * 40)).collect();
        let crops: Vec<(Hash, u32)> = (0..50).map(|k| (random_hash(seed + 900_000 + k), k as u32 * 100)).collect();
        let path = dir.join(format!("{id}.seg"));
        write_segment(&path, id, &VideoEntries { frames: &whole, crops: &crops, ..Default::default() }).unwrap();
        (Segment::open(&path).unwrap(), whole.into_iter().chain(crops).map(|e| e.0).collect())
    }

    #[test]
    fn a_scan_finds_the_planted_entry_at_its_distance() {
        let dir = tempfile::tempdir().unwrap();
        // More entries than one work item, so the planted one lies in the second chunk.
        let (seg, hashes) = segment(dir.path(), 1, CHUNK as u64 + 500, 0);
        let planted = CHUNK + 123;
        let queries = [random_hash(7_777_777), flipped(hashes[planted], 14)];
        let hits = scan(&[&seg], Section::Frames, &queries, 70, PREFILTER, 10);
        assert_eq!(hits.len(), 1, "{hits:?}");
        let h = hits[0];
        assert_eq!((h.query, h.segment, h.entry as usize, h.dist), (1, 0, planted, 14));
        // Not within a threshold short of its distance.
        assert!(scan(&[&seg], Section::Frames, &queries, 13, PREFILTER, 10).is_empty());
    }

    #[test]
    fn a_scan_stays_in_its_section_and_counts_places_within_the_segment() {
        let dir = tempfile::tempdir().unwrap();
        let (seg, hashes) = segment(dir.path(), 1, 200, 0);
        // Crop entry 7 is entry 207 of the segment.
        let crop = hashes[207];
        assert!(scan(&[&seg], Section::Frames, &[crop], 70, PREFILTER, 10).is_empty());
        let hits = scan(&[&seg], Section::Crops, &[crop], 70, PREFILTER, 10);
        assert_eq!(hits.iter().map(|h| (h.entry, h.dist)).collect::<Vec<_>>(), vec![(207, 0)]);
    }

    #[test]
    fn a_scan_returns_the_closest_first_over_segments_and_at_most_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let (a, ha) = segment(dir.path(), 1, 300, 0);
        let (b, hb) = segment(dir.path(), 2, 300, 5_000);
        // One query near an entry of each segment, and one equal to another entry of the first.
        let queries = [flipped(hb[10], 9), flipped(ha[20], 3), ha[30]];
        let hits = scan(&[&a, &b], Section::Frames, &queries, 70, PREFILTER, 10);
        let got: Vec<(u16, u32, u32, u16)> = hits.iter().map(|h| (h.query, h.segment, h.entry, h.dist)).collect();
        assert_eq!(got, vec![(2, 0, 30, 0), (1, 0, 20, 3), (0, 1, 10, 9)]);
        let capped = scan(&[&a, &b], Section::Frames, &queries, 70, PREFILTER, 2);
        assert_eq!(capped.iter().map(|h| h.dist).collect::<Vec<_>>(), vec![0, 3]);
    }

    #[test]
    fn the_first_stage_drops_an_entry_whose_first_word_is_past_the_prefilter() {
        let dir = tempfile::tempdir().unwrap();
        let (seg, hashes) = segment(dir.path(), 1, 100, 0);
        // 21 bits off, all in the low-frequency word: within 70 in all, but the first word is
        // past PREFILTER, so the scan never looks at the rest (the price of its speed).
        let query = flipped_first_word(hashes[42], PREFILTER + 1);
        assert!(scan(&[&seg], Section::Frames, &[query], 70, PREFILTER, 10).is_empty());
        let query = flipped_first_word(hashes[42], PREFILTER);
        let hits = scan(&[&seg], Section::Frames, &[query], 70, PREFILTER, 10);
        assert_eq!(hits.iter().map(|h| (h.entry, h.dist)).collect::<Vec<_>>(), vec![(42, PREFILTER as u16)]);
        // The stricter first stage of a many-hash scan.
        assert!(scan(&[&seg], Section::Frames, &[query], 70, PREFILTER_MANY, 10).is_empty());
    }
}
