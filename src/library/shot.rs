//! Whole shots and shared scenes: from one indexed entry a still matched, the full run of
//! entries around it that match the picture as well (a static shot keeps one entry a second,
//! and every one of them is the picture), and the other videos the same picture is in (a
//! series' opening, a recap, a trailer cut from the film).
use std::collections::HashMap;

use super::fingerprint::MAX_GAP;
use super::frames;
use super::hash::{Hash, hamming};
use super::scan::{Hit, Section};
use super::store::Segment;

/// An entry belongs to the run of a match while it is at most this many bits further from the
/// query than the best entry: the keep rule makes neighbouring entries of a changing picture
/// more than 16 bits apart, so a moving camera ends the run within an entry or two, while the
/// entries of a static shot differ only by grain and compression.
const RUN_SLACK: u32 = 14;
/// Entries at most this many bits further than the best are as good a guess for the moment
/// (noise between near-identical frames); `at` is the middle of the time they cover.
const AT_SLACK: u32 = 3;
/// Another video holds the same scene when its best entry is at most this many bits further
/// from the query than the winner's: closer than that, the picture cannot tell them apart.
const SHARED_SLACK: u32 = 10;

/// The span of a video a still matches: `from..=to` covers the run of matching entries, `at`
/// is the best single moment inside it. Seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shot {
    pub from: f64,
    pub at: f64,
    pub to: f64,
    /// The first and last entry of the run (indexes into the segment).
    pub entries: (usize, usize),
}

impl Shot {
    /// Whether entry `i` of the segment belongs to this run.
    pub fn holds(&self, i: usize) -> bool {
        (self.entries.0..=self.entries.1).contains(&i)
    }
}

/// The run of entries around `entry` that match `query` about as well as it does (within
/// [`RUN_SLACK`] bits of its distance, and within `accept`), as a span of the video.
pub fn shot_around(seg: &Segment, section: Section, query: &Hash, entry: usize, accept: u32, duration: f64) -> Shot {
    let std::ops::Range { start: lo, end: hi } = seg.range(section);
    let times = seg.times();
    let dist = |i: usize| hamming(&seg.hash(i), query);
    let best = dist(entry);
    let limit = (best + RUN_SLACK).min(accept.max(best));
    let (mut first, mut last) = (entry, entry);
    while first > lo && dist(first - 1) <= limit {
        first -= 1;
    }
    while last + 1 < hi && dist(last + 1) <= limit {
        last += 1;
    }
    let start = |i: usize| times[i] as f64 / 1000.0;
    // A kept entry stands for the frames up to the next kept one; at least one is kept every
    // MAX_GAP, so a longer gap is flat frames that were skipped, not more of the shot.
    let end = |i: usize| {
        let next = if i + 1 < hi { start(i + 1) } else { duration };
        (next.min(start(i) + MAX_GAP) - 1.0 / frames::INDEX_FPS as f64).max(start(i))
    };
    let near: Vec<usize> = (first..=last).filter(|&i| dist(i) <= best + AT_SLACK).collect();
    let (a, b) = (near.first().copied().unwrap_or(entry), near.last().copied().unwrap_or(entry));
    let at = (start(a) + end(b)) / 2.0;
    Shot {
        from: start(first),
        at: at.clamp(start(first), end(last)),
        to: end(last).min(duration),
        entries: (first, last),
    }
}

/// The best hit of every video other than the winner's that is within [`SHARED_SLACK`] bits of
/// the winner's distance (and within `accept`), best first. `hits` are one scan's hits.
pub fn shared_with(refs: &[&Segment], hits: &[Hit], winner: &Hit, accept: u32) -> Vec<Hit> {
    let winner_video = refs[winner.segment as usize].video_id;
    let limit = (winner.dist as u32 + SHARED_SLACK).min(accept);
    let mut best: HashMap<u32, Hit> = HashMap::new();
    for h in hits {
        let video = refs[h.segment as usize].video_id;
        if video == winner_video || h.dist as u32 > limit {
            continue;
        }
        let slot = best.entry(video).or_insert(*h);
        if h.dist < slot.dist {
            *slot = *h;
        }
    }
    let mut out: Vec<Hit> = best.into_values().collect();
    out.sort_unstable_by_key(|h| (h.dist, refs[h.segment as usize].video_id));
    out
}
