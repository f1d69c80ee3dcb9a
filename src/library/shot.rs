//! Whole shots and shared scenes: from one indexed entry a still matched, the full run of
//! entries around it that match the picture as well (a static shot keeps one entry a second,
//! and every one of them is the picture), and the other videos the same picture is in (a
//! series' opening, a recap, a trailer cut from the film).
//!
//! The run of entries alone cannot always give a static shot: in a dark, soft picture under
//! heavy grain the grain moves the hash more than the picture does, the keep rule keeps an
//! entry every few frames, and their distances to the query scatter past [`RUN_SLACK`]. So
//! indexing also follows the picture itself
//! ([`StillFinder`](crate::library::index::stretches::StillFinder)): stretches of decoded
//! frames whose coarse thumbnails stay close to the stretch's mean are stored with the
//! segment, and a match whose best entry lies in one spans exactly it.
use std::collections::HashMap;

use crate::library::fingerprint::MAX_GAP;
use crate::library::frames;
use crate::library::index::entries::{Hit, Timeline};
use crate::library::picture::hash::{Hash, hamming};

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
    /// The first and last entry of the run (places in its timeline).
    pub entries: (usize, usize),
}

impl Shot {
    /// Whether entry `i` of the timeline belongs to this run.
    pub fn holds(&self, i: usize) -> bool {
        (self.entries.0..=self.entries.1).contains(&i)
    }
}

/// The run of entries around `entry` that match `query` about as well as it does (within
/// [`RUN_SLACK`] bits of its distance, and within `accept`), as a span of the video.
pub fn shot_around(timeline: &Timeline, query: &Hash, entry: usize, accept: u32, duration: f64) -> Shot {
    shot_within(timeline, query, entry, accept, duration, f64::INFINITY)
}

/// [`shot_around`], the run kept to `reach` seconds either side of its moment unless the best
/// entry lies in a static stretch (the whole picture held still: the stretch is the shot). A
/// window of a third of the frame may hold still while the rest moves, so its run says less
/// about the shot than a whole frame's.
pub fn shot_within(timeline: &Timeline, query: &Hash, entry: usize, accept: u32, duration: f64, reach: f64) -> Shot {
    let (lo, hi) = (0, timeline.len());
    let times = timeline.times();
    let dist = |i: usize| hamming(&timeline.hash(i), query);
    let best = dist(entry);
    let limit = (best + RUN_SLACK).min(accept.max(best));
    let (mut first, mut last) = (entry, entry);
    while first > lo && dist(first - 1) <= limit {
        first -= 1;
    }
    while last + 1 < hi && dist(last + 1) <= limit {
        last += 1;
    }
    let near: Vec<usize> = (first..=last).filter(|&i| dist(i) <= best + AT_SLACK).collect();
    let start = |i: usize| times[i] as f64 / 1000.0;
    // A kept entry stands for the frames up to the next kept one; at least one is kept every
    // MAX_GAP, so a longer gap is flat frames that were skipped, not more of the shot.
    let end = |i: usize| {
        let next = if i + 1 < hi { start(i + 1) } else { duration };
        (next.min(start(i) + MAX_GAP) - 1.0 / frames::INDEX_FPS as f64).max(start(i))
    };
    // The best entry's frames in a static stretch: every frame of the stretch is their picture.
    // (The keep rule often keeps the frame a shot settles from, just before the stretch.)
    let still = still_overlapping(timeline.stills(), times[entry], ms(end(entry)));
    if let Some([a, b]) = still {
        first = first.min(times.partition_point(|&t| t < a));
        last = last.max(times.partition_point(|&t| t <= b).saturating_sub(1).max(entry));
    }
    let (a, b) = (near.first().copied().unwrap_or(entry), near.last().copied().unwrap_or(entry));
    let at = (start(a) + end(b)) / 2.0;
    // A stretch is the span of the picture itself; the run's entries at its ends may reach into
    // the frames around it, which the hash cannot tell from it but the pixels can. The entries
    // stay the run's and the stretch's, so that neither is taken for another candidate.
    let (from, to) = match still {
        Some([a, b]) => ((a as f64 / 1000.0).min(start(entry)), b as f64 / 1000.0),
        None => (start(first).max(at - reach), end(last).min(at + reach)),
    };
    Shot { from, at: at.clamp(from, to), to: to.min(duration), entries: (first, last) }
}

/// The first stored static stretch (`[from, to]` ms, sorted, disjoint) that overlaps
/// `from..=to` ms, if any.
fn still_overlapping(stills: &[[u32; 2]], from: u32, to: u32) -> Option<[u32; 2]> {
    let i = stills.partition_point(|s| s[1] < from);
    stills.get(i).copied().filter(|s| s[0] <= to)
}

/// Seconds to the index's milliseconds.
fn ms(t: f64) -> u32 {
    (t * 1000.0).round() as u32
}

/// The best hit of every video other than the winner's that is within [`SHARED_SLACK`] bits of
/// the winner's distance (and within `accept`), best first. `hits` are one scan's hits.
pub fn shared_with(hits: &[Hit], winner: &Hit, accept: u32) -> Vec<Hit> {
    let limit = (winner.dist + SHARED_SLACK).min(accept);
    let mut best: HashMap<u32, Hit> = HashMap::new();
    for h in hits {
        if h.video == winner.video || h.dist > limit {
            continue;
        }
        let slot = best.entry(h.video).or_insert(*h);
        if h.dist < slot.dist {
            *slot = *h;
        }
    }
    let mut out: Vec<Hit> = best.into_values().collect();
    out.sort_unstable_by_key(|h| (h.dist, h.video));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::index::stretches::StillFinder;

    /// A 128-square frame: a soft pattern shifted `dx` pixels, brightened by `lift`, with
    /// `grain` levels of per-pixel noise from `seed`.
    fn frame(dx: f32, lift: f32, grain: f32, seed: u64) -> Vec<u8> {
        let n = frames::FRAME_SIDE;
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32 + dx, (i / n) as f32);
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let noise = ((state >> 33) as f32 / (1u64 << 31) as f32 - 0.5) * 2.0 * grain;
                (40.0 + lift + 20.0 * (x * 0.07).sin() * (y * 0.05).cos() + noise).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    fn stretches(frames: &[Vec<u8>], fps: f64) -> Vec<[u32; 2]> {
        let mut finder = StillFinder::default();
        for (k, f) in frames.iter().enumerate() {
            finder.push(k as f64 / fps, super::frames::frame_view(f));
        }
        finder.finish()
    }

    #[test]
    fn a_held_picture_under_heavy_grain_is_one_stretch_and_motion_ends_it() {
        // 1 s of a pan, 3 s held under grain of +-10 levels in the decoded 128 square (a grainy
        // 1080p film squeezed to it averages its grain far below that), 1 s of a pan (24 fps).
        let mut video: Vec<Vec<u8>> = (0..24).map(|k| frame(k as f32 * 2.0, 0.0, 3.0, k)).collect();
        video.extend((24..96).map(|k| frame(48.0, 0.0, 10.0, k)));
        video.extend((96..120).map(|k| frame(48.0 + (k - 95) as f32 * 2.0, 0.0, 3.0, k)));
        let found = stretches(&video, 24.0);
        assert_eq!(found.len(), 1, "{found:?}");
        let [from, to] = found[0];
        assert!((900..=1000).contains(&from) && (3958..=4100).contains(&to), "{found:?}");
    }

    #[test]
    fn a_slow_fade_and_a_short_pause_are_not_stretches() {
        // 4 s fading up by 40 levels: never one picture for a second.
        let fade: Vec<Vec<u8>> = (0..96).map(|k| frame(0.0, k as f32 * 40.0 / 96.0, 1.0, k)).collect();
        assert!(stretches(&fade, 24.0).is_empty(), "{:?}", stretches(&fade, 24.0));
        // Half a second held between pans.
        let mut pause: Vec<Vec<u8>> = (0..24).map(|k| frame(k as f32 * 2.0, 0.0, 1.0, k)).collect();
        pause.extend((24..36).map(|k| frame(48.0, 0.0, 1.0, k)));
        pause.extend((36..60).map(|k| frame(48.0 + (k - 35) as f32 * 2.0, 0.0, 1.0, k)));
        assert!(stretches(&pause, 24.0).is_empty());
    }

    #[test]
    fn a_window_of_a_timeline_walks_its_own_entries_and_a_reach_bounds_its_run_but_not_a_stretch() {
        use crate::library::index::fake::{flipped, random_hash};
        // Two windows a moment, one every 0.5 s for 10 s: window 0 holds one picture all along
        // (a wall beside the action), window 1 changes at every moment.
        let wall = random_hash(7);
        let (mut hashes, mut times) = (Vec::new(), Vec::new());
        for m in 0..20u32 {
            hashes.extend([flipped(wall, m % 3), random_hash(100 + m as u64)]);
            times.extend([m * 500, m * 500]);
        }
        let both = Timeline::new(hashes, times, vec![]);
        let own = both.window(0, 2);
        assert_eq!((own.len(), own.times()[3], own.hash(3)), (20, 1500, both.hash(6)));
        let whole = shot_around(&own, &wall, 10, 70, 10.0);
        assert!(whole.from == 0.0 && whole.to > 9.9, "{whole:?}");
        let near = shot_within(&own, &wall, 10, 70, 10.0, 2.0);
        assert!(near.from >= near.at - 2.0 && near.to <= near.at + 2.0 && near.from < near.to, "{near:?}");
        // In a static stretch the stretch is the shot, however far it reaches.
        let still = Timeline::new((0..20).map(|m| own.hash(m)).collect(), own.times().to_vec(), vec![[0, 9_500]]);
        assert_eq!(shot_within(&still, &wall, 10, 70, 10.0, 2.0).to, 9.5);
    }

    #[test]
    fn the_stretch_a_span_of_frames_reaches_into_is_found_by_its_ends() {
        let stills = [[1000, 3000], [5000, 9000]];
        let at = |ms| still_overlapping(&stills, ms, ms);
        assert_eq!(at(1000), Some([1000, 3000]));
        assert_eq!(at(3000), Some([1000, 3000]));
        assert_eq!(at(4000), None);
        assert_eq!(at(7000), Some([5000, 9000]));
        assert_eq!(at(9001), None);
        assert_eq!(at(0), None);
        assert_eq!(still_overlapping(&[], 10, 10), None);
        // An entry kept just before a shot settles stands for frames inside it.
        assert_eq!(still_overlapping(&stills, 4600, 5400), Some([5000, 9000]));
        assert_eq!(still_overlapping(&stills, 3500, 4999), None);
    }
}
