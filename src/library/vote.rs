//! The clip vote: each frame's hits vote for an offset between clip time and video time, and
//! the leading offsets are aligned precisely against the entries that cover each moment.
use std::collections::HashMap;

use super::hash::{FrameHash, Hash, hamming};
use super::store::Segment;
use super::{frames, scan};

/// The offset a clip's frames agree on.
pub(super) struct ClipVote {
    pub segment: usize,
    pub mirrored: bool,
    /// Video time minus clip time, in sample periods.
    pub offset: i64,
    /// Frames voting for the offset or its neighbours within 0.5 s.
    pub support: usize,
    /// Their mean best distance.
    pub mean: f64,
    /// The clip frame closest to its indexed twin.
    pub best_frame: usize,
    /// Other videos the clip's frames agree on about as well (a series' opening, a recap, a
    /// trailer cut from the film): `(segment, offset, mean distance)`, best first.
    pub also: Vec<(usize, i64, f64)>,
}

/// Another video holds the clip too when its best offset has at least this share of the
/// winner's support and a mean distance at most [`SHARED_SLACK`] bits above the winner's.
const SHARED_SUPPORT: f64 = 0.8;
/// See [`SHARED_SUPPORT`]; as for stills (`shot::SHARED_SLACK`).
const SHARED_SLACK: f64 = 10.0;

/// Scans `section` for every hypothesis of every clip frame (as given and mirrored), lets
/// each frame's hits within `candidate` bits vote for (segment, mirrored, offset), and returns
/// the offset with the most support if at least 30% of the frames (and 2) back it and their
/// mean distance is at most `accept`.
pub(super) fn clip_vote(
    refs: &[&Segment],
    section: scan::Section,
    per_frame: &[Vec<FrameHash>],
    times: &[f64],
    candidate: u32,
    accept: u32,
) -> Option<ClipVote> {
    // Every hypothesis of every frame, as given (even index) and mirrored (odd index).
    let mut hashes: Vec<Hash> = Vec::new();
    let mut frame_of: Vec<usize> = Vec::new();
    for (k, hypotheses) in per_frame.iter().enumerate() {
        for f in hypotheses {
            hashes.extend([f.hash, f.mirror]);
            frame_of.extend([k, k]);
        }
    }
    let prefilter = if hashes.len() > 16 { scan::PREFILTER_MANY } else { scan::PREFILTER };
    let hits = scan::scan(refs, section, &hashes, candidate, prefilter, 64 * hashes.len());
    // Vote: (segment, mirrored, offset in clip frame periods) -> best distance per query frame.
    /// A vote bin: (segment, mirrored, offset in clip frame periods).
    type Bin = (u32, bool, i64);
    let mut votes: HashMap<Bin, HashMap<usize, u32>> = HashMap::new();
    for h in &hits {
        let seg = refs[h.segment as usize];
        let q = frame_of[h.query as usize];
        let t_ref = seg.times()[h.entry as usize] as f64 / 1000.0;
        let offset = ((t_ref - times[q]) * frames::CLIP_FPS as f64).round() as i64;
        let slot = votes.entry((h.segment, h.query % 2 == 1, offset)).or_default();
        let d = slot.entry(q).or_insert(u32::MAX);
        *d = (*d).min(h.dist as u32);
    }
    // A bin's support: frames voting for it or its neighbours within 0.5 s (static shots
    // blur offsets).
    let spread = (frames::CLIP_FPS / 2) as i64;
    let mut ranked: Vec<(Bin, usize, usize, f64)> = Vec::new();
    for &(s, mirrored, off) in votes.keys() {
        let mut frames_near: HashMap<usize, u32> = HashMap::new();
        for o in off - spread..=off + spread {
            if let Some(v) = votes.get(&(s, mirrored, o)) {
                for (&q, &d) in v {
                    let e = frames_near.entry(q).or_insert(u32::MAX);
                    *e = (*e).min(d);
                }
            }
        }
        let support = frames_near.len();
        let mean = frames_near.values().map(|&d| d as f64).sum::<f64>() / support.max(1) as f64;
        let own = votes[&(s, mirrored, off)].len();
        ranked.push(((s, mirrored, off), support, own, mean));
    }
    // Most support first, then most votes of its own, then the smaller mean distance.
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.3.total_cmp(&b.3)).then(a.0.cmp(&b.0)));
    let needed = ((times.len() as f64) * 0.3).ceil().max(2.0).min(times.len() as f64) as usize;
    // The bins are coarse where entries are sparse (a static shot keeps one frame a second,
    // which every clip frame in that second hits): align the leading candidates precisely by
    // comparing every clip frame with the entry that covers its moment under each offset
    // within 0.5 s, and keep the alignment with the smallest mean distance.
    let mut chosen: Option<(usize, i64, f64)> = None;
    for (rank, &((s, mirrored, off), support, _, mean)) in ranked.iter().take(5).enumerate() {
        if support < needed || mean > accept as f64 {
            continue;
        }
        for o in off - spread..=off + spread {
            let fit = alignment_distance(refs[s as usize], section, per_frame, times, mirrored, o);
            if chosen.is_none_or(|(_, _, best)| fit < best) {
                chosen = Some((rank, o, fit));
            }
        }
    }
    let (rank, offset, _) = chosen?;
    let ((s, mirrored, _), support, _, mean) = ranked[rank];
    // The best bin of every other video that agrees about as well, aligned the same way.
    let video_of = |seg: u32| refs[seg as usize].video_id;
    let mut also: Vec<(usize, i64, f64)> = Vec::new();
    for &((o, o_mirrored, off), o_support, _, o_mean) in &ranked {
        if video_of(o) == video_of(s)
            || also.iter().any(|&(seg, _, _)| video_of(seg as u32) == video_of(o))
            || (o_support as f64) < SHARED_SUPPORT * support as f64
            || o_mean > mean + SHARED_SLACK
        {
            continue;
        }
        let fit = |x: i64| alignment_distance(refs[o as usize], section, per_frame, times, o_mirrored, x);
        let best = (off - spread..=off + spread).min_by(|a, b| fit(*a).total_cmp(&fit(*b))).unwrap_or(off);
        also.push((o as usize, best, o_mean));
    }
    let best_frame = (0..times.len())
        .min_by_key(|&k| {
            let t = times[k] + offset as f64 / frames::CLIP_FPS as f64;
            covering_distance(refs[s as usize], section, &per_frame[k], mirrored, t)
        })
        .unwrap_or(0);
    Some(ClipVote { segment: s as usize, mirrored, offset, support, mean, best_frame, also })
}

/// The distance of a clip frame's best hypothesis to the entry of `section` that stands for
/// moment `t` of the video (the last kept entry at or before it, or the next when it is
/// closer in time than a frame); 128 when there is none.
fn covering_distance(seg: &Segment, section: scan::Section, hypotheses: &[FrameHash], mirrored: bool, t: f64) -> u32 {
    let std::ops::Range { start: lo, end: hi } = seg.range(section);
    let times = &seg.times()[lo..hi];
    let ms = t * 1000.0;
    let next = times.partition_point(|&x| x as f64 <= ms + 1.0);
    let mut candidates = Vec::with_capacity(2);
    if next > 0 {
        candidates.push(next - 1);
    }
    if next < times.len() && (times[next] as f64 - ms) <= 1000.0 / frames::INDEX_FPS as f64 {
        candidates.push(next);
    }
    candidates
        .into_iter()
        .flat_map(|e| {
            let h = seg.hash(lo + e);
            hypotheses.iter().map(move |f| hamming(&h, if mirrored { &f.mirror } else { &f.hash }))
        })
        .min()
        .unwrap_or(128)
}

/// Mean [`covering_distance`] of the clip's frames under `offset` (clip frame periods).
fn alignment_distance(
    seg: &Segment,
    section: scan::Section,
    per_frame: &[Vec<FrameHash>],
    times: &[f64],
    mirrored: bool,
    offset: i64,
) -> f64 {
    let shift = offset as f64 / frames::CLIP_FPS as f64;
    let total: u32 =
        per_frame.iter().zip(times).map(|(h, &t)| covering_distance(seg, section, h, mirrored, t + shift)).sum();
    total as f64 / times.len().max(1) as f64
}
