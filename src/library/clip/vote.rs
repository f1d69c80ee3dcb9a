//! The clip vote: each frame's hits vote for an offset between clip time and video time, and
//! the leading offsets are aligned precisely against the entries that cover each moment.
use std::collections::HashMap;

use crate::library::frames;
use crate::library::index::entries::{IndexError, Probe, Section, Timeline, Timelines};
use crate::library::picture::hash::{FrameHash, Hash, hamming};
use crate::library::policy::CLIP_SUPPORT;

/// The offset a clip's frames agree on.
pub(in crate::library) struct ClipVote {
    pub video: u32,
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
    /// trailer cut from the film): `(video, offset, mean distance)`, best first.
    pub also: Vec<(u32, i64, f64)>,
}

/// Another video holds the clip too when its best offset has at least this share of the
/// winner's support and a mean distance at most [`SHARED_SLACK`] bits above the winner's.
const SHARED_SUPPORT: f64 = 0.8;
/// See [`SHARED_SUPPORT`]; as for stills (`shot::SHARED_SLACK`).
const SHARED_SLACK: f64 = 10.0;

/// Scans `section` for every hypothesis of every clip frame (as given and mirrored), lets
/// each frame's hits within `candidate` bits vote for (video, mirrored, offset), and returns
/// the offset with the most support if at least [`CLIP_SUPPORT`] of the frames (and 2) back it and their
/// mean distance is at most `accept`.
pub(in crate::library) fn clip_vote(
    timelines: &Timelines<'_>,
    section: Section,
    per_frame: &[Vec<FrameHash>],
    times: &[f64],
    candidate: u32,
    accept: u32,
) -> Result<Option<ClipVote>, IndexError> {
    // Every hypothesis of every frame, as given (even index) and mirrored (odd index).
    let mut hashes: Vec<Hash> = Vec::new();
    let mut frame_of: Vec<usize> = Vec::new();
    for (k, hypotheses) in per_frame.iter().enumerate() {
        for f in hypotheses {
            hashes.extend([f.hash, f.mirror]);
            frame_of.extend([k, k]);
        }
    }
    let probe =
        Probe { section, hashes: &hashes, radius: candidate, limit: 64 * hashes.len(), many: hashes.len() > 16 };
    let hits = if hashes.is_empty() { Vec::new() } else { timelines.entries().near(&probe)? };
    // Vote: (video, mirrored, offset in clip frame periods) -> best distance per query frame.
    /// A vote bin: (video, mirrored, offset in clip frame periods).
    type Bin = (u32, bool, i64);
    let mut votes: HashMap<Bin, HashMap<usize, u32>> = HashMap::new();
    for h in &hits {
        let q = frame_of[h.query];
        let t_ref = h.ms as f64 / 1000.0;
        let offset = ((t_ref - times[q]) * frames::CLIP_FPS as f64).round() as i64;
        let slot = votes.entry((h.video, h.query % 2 == 1, offset)).or_default();
        let d = slot.entry(q).or_insert(u32::MAX);
        *d = (*d).min(h.dist);
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
    let needed = ((times.len() as f64) * CLIP_SUPPORT).ceil().max(2.0).min(times.len() as f64) as usize;
    // The bins are coarse where entries are sparse (a static shot keeps one frame a second,
    // which every clip frame in that second hits): align the leading candidates precisely by
    // comparing every clip frame with the entry that covers its moment under each offset
    // within 0.5 s, and keep the alignment with the smallest mean distance.
    let mut chosen: Option<(usize, i64, f64)> = None;
    for (rank, &((v, mirrored, off), support, _, mean)) in ranked.iter().take(5).enumerate() {
        if support < needed || mean > accept as f64 {
            continue;
        }
        let Some(timeline) = timelines.get(v, section)? else { continue };
        for o in off - spread..=off + spread {
            let fit = alignment_distance(&timeline, per_frame, times, mirrored, o);
            if chosen.is_none_or(|(_, _, best)| fit < best) {
                chosen = Some((rank, o, fit));
            }
        }
    }
    let Some((rank, offset, _)) = chosen else { return Ok(None) };
    let ((v, mirrored, _), support, _, mean) = ranked[rank];
    // The best bin of every other video that agrees about as well, aligned the same way.
    let mut also: Vec<(u32, i64, f64)> = Vec::new();
    for &((o, o_mirrored, off), o_support, _, o_mean) in &ranked {
        if o == v
            || also.iter().any(|&(other, _, _)| other == o)
            || (o_support as f64) < SHARED_SUPPORT * support as f64
            || o_mean > mean + SHARED_SLACK
        {
            continue;
        }
        let Some(timeline) = timelines.get(o, section)? else { continue };
        let fit = |x: i64| alignment_distance(&timeline, per_frame, times, o_mirrored, x);
        let best = (off - spread..=off + spread).min_by(|a, b| fit(*a).total_cmp(&fit(*b))).unwrap_or(off);
        also.push((o, best, o_mean));
    }
    let Some(timeline) = timelines.get(v, section)? else { return Ok(None) };
    let best_frame = (0..times.len())
        .min_by_key(|&k| {
            let t = times[k] + offset as f64 / frames::CLIP_FPS as f64;
            covering_distance(&timeline, &per_frame[k], mirrored, t)
        })
        .unwrap_or(0);
    Ok(Some(ClipVote { video: v, mirrored, offset, support, mean, best_frame, also }))
}

/// The distance of a clip frame's best hypothesis to the entry of `section` that stands for
/// moment `t` of the video (the last kept entry at or before it, or the next when it is
/// closer in time than a frame); 128 when there is none.
fn covering_distance(timeline: &Timeline, hypotheses: &[FrameHash], mirrored: bool, t: f64) -> u32 {
    let times = timeline.times();
    let ms = t * 1000.0;
    let next = times.partition_point(|&x| x as f64 <= ms + 1.0);
    // Every entry of a moment (a section may keep several windows of one, see
    // `Section::Columns`).
    let moment = |e: usize| times.partition_point(|&x| x < times[e])..times.partition_point(|&x| x <= times[e]);
    let mut candidates = Vec::with_capacity(2);
    if next > 0 {
        candidates.extend(moment(next - 1));
    }
    if next < times.len() && (times[next] as f64 - ms) <= 1000.0 / frames::INDEX_FPS as f64 {
        candidates.extend(moment(next));
    }
    candidates
        .into_iter()
        .flat_map(|e| {
            let h = timeline.hash(e);
            hypotheses.iter().map(move |f| hamming(&h, if mirrored { &f.mirror } else { &f.hash }))
        })
        .min()
        .unwrap_or(128)
}

/// Mean [`covering_distance`] of the clip's frames under `offset` (clip frame periods).
fn alignment_distance(
    timeline: &Timeline,
    per_frame: &[Vec<FrameHash>],
    times: &[f64],
    mirrored: bool,
    offset: i64,
) -> f64 {
    let shift = offset as f64 / frames::CLIP_FPS as f64;
    let total: u32 =
        per_frame.iter().zip(times).map(|(h, &t)| covering_distance(timeline, h, mirrored, t + shift)).sum();
    total as f64 / times.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::index::fake::{FakeIndex, flipped, random_hash};
    use crate::library::policy::{CLIP_CANDIDATE, STILL_ACCEPT};

    /// One clip frame with one hypothesis: `hash` as given, a mirror that matches nothing.
    fn frame(hash: Hash) -> Vec<FrameHash> {
        vec![FrameHash { hash, mirror: random_hash(hash[0] ^ 0xA5A5), quality: 100 }]
    }

    /// A video indexed at the clip's own rate: entry `k` at `k / CLIP_FPS` s, hash `seed + k`.
    fn video(seed: u64, entries: u64) -> Vec<(Hash, u32)> {
        let period = 1000 / frames::CLIP_FPS as u64;
        (0..entries).map(|k| (random_hash(seed + k), (k * period) as u32)).collect()
    }

    fn clip_times(n: usize) -> Vec<f64> {
        (0..n).map(|k| k as f64 / frames::CLIP_FPS as f64).collect()
    }

    fn vote(index: &FakeIndex, per_frame: &[Vec<FrameHash>]) -> Option<ClipVote> {
        let timelines = Timelines::new(index);
        clip_vote(&timelines, Section::Frames, per_frame, &clip_times(per_frame.len()), CLIP_CANDIDATE, STILL_ACCEPT)
            .unwrap()
    }

    #[test]
    fn a_vote_picks_the_offset_most_frames_agree_on() {
        let (one, two) = (video(0, 80), video(10_000, 80));
        let index = FakeIndex::default().with_frames(1, &one).with_frames(2, &two);
        // 16 clip frames: 12 are video 1's entries 24.. under 12 bits of change (3 s in),
        // 4 are video 2's entries 50.. almost unchanged (closer, but fewer).
        let per_frame: Vec<Vec<FrameHash>> = (0..16)
            .map(|k| if k < 12 { frame(flipped(one[24 + k].0, 12)) } else { frame(flipped(two[50 + k].0, 2)) })
            .collect();
        let v = vote(&index, &per_frame).expect("12 of 16 frames agree");
        assert_eq!((v.video, v.offset, v.mirrored), (1, 24, false));
        assert_eq!(v.support, 12);
        assert_eq!(v.mean, 12.0);
        assert!(v.best_frame < 12, "the best frame is one of video 1's: {}", v.best_frame);
        assert!(v.also.is_empty(), "video 2 has a third of the support: {:?}", v.also);
    }

    #[test]
    fn a_vote_too_few_frames_back_is_no_match() {
        let one = video(0, 80);
        let index = FakeIndex::default().with_frames(1, &one);
        // 3 of 16 frames (under 30%) land on the video, exactly; the rest on nothing.
        let per_frame: Vec<Vec<FrameHash>> =
            (0..16).map(|k| frame(if k < 3 { one[40 + k].0 } else { random_hash(50_000 + k as u64) })).collect();
        assert!(vote(&index, &per_frame).is_none());
        // 5 of 16 do.
        let per_frame: Vec<Vec<FrameHash>> =
            (0..16).map(|k| frame(if k < 5 { one[40 + k].0 } else { random_hash(50_000 + k as u64) })).collect();
        assert_eq!(vote(&index, &per_frame).map(|v| (v.video, v.offset, v.support)), Some((1, 40, 5)));
    }

    #[test]
    fn a_vote_whose_frames_are_too_far_on_average_is_no_match() {
        let one = video(0, 80);
        let index = FakeIndex::default().with_frames(1, &one);
        // Every frame votes (within 72 bits) but their mean is past the still threshold.
        let per_frame: Vec<Vec<FrameHash>> = (0..16).map(|k| frame(flipped(one[8 + k].0, 71))).collect();
        assert!(vote(&index, &per_frame).is_none());
        let per_frame: Vec<Vec<FrameHash>> = (0..16).map(|k| frame(flipped(one[8 + k].0, 69))).collect();
        assert_eq!(vote(&index, &per_frame).map(|v| v.offset), Some(8));
    }

    #[test]
    fn another_video_that_holds_the_same_footage_is_named_beside_the_winner() {
        let one = video(0, 80);
        // Video 7 holds the same 2 s as video 1's 24..40, 5 s into it (a recap, say).
        let mut seven = video(20_000, 80);
        for k in 0..16 {
            seven[40 + k].0 = one[24 + k].0;
        }
        let index = FakeIndex::default().with_frames(1, &one).with_frames(7, &seven);
        let per_frame: Vec<Vec<FrameHash>> = (0..16).map(|k| frame(flipped(one[24 + k].0, 6))).collect();
        let v = vote(&index, &per_frame).unwrap();
        assert_eq!((v.video, v.offset), (1, 24), "equal evidence: the video added first");
        assert_eq!(v.also.iter().map(|a| (a.0, a.1)).collect::<Vec<_>>(), vec![(7, 40)]);
    }
}
